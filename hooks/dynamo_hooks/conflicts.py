"""Existing Dynamo operators in a cluster, and the conflict matrix that decides whether another may join.

Upstream's guard ran inside Helm templates through `lookup`, which returns nothing under `helm template`,
`--dry-run` and GitOps tools, and matched operators by ClusterRole name substrings. Here detection reads
the cluster at install time (preflight, or the chart's pre-install hook Job) and keys on markers the
operator itself maintains:

* Deployments labelled `app.kubernetes.io/name: dynamo-operator` (present even while no pod runs);
* ValidatingWebhookConfigurations with that label and a webhook for nvidia.com DynamoGraphDeployments: every
  release registers one (also while no pod runs); a namespaceSelector on `kubernetes.io/metadata.name`
  names a restricted operator's target;
* the namespace-scope Lease `dynamo-operator-namespace-scope` a namespace-restricted operator renews
  (an expired Lease means that operator is gone);
* the leader-election Lease (`dynamo.nvidia.com` in `kube-system` by default) a cluster-wide operator holds.

The chart's pre-install hook reads no Deployments (``read_deployments=False``): RBAC cannot limit a
cluster-wide list of Deployments to labelled ones, and a Deployment carries its env. Its ServiceAccount
lists webhook configurations (cluster configuration, no secrets), the marker Leases by name and gets the
leader Lease by name. What it then cannot see: an operator installed without webhook configurations
(a bare Deployment, not a Helm release of this or upstream's chart) that holds no Lease at that moment;
and the version of an installed operator whose configurations carry no version label. `helm dynamo check
preflight`, run as the user, reads the Deployments too.

The matrix is the chart document's six scenarios, plus the case the document leaves implicit: two
namespace-restricted operators for the same namespace, and the operator overview's hybrid layout
(deprecated upstream, as restricted operators are): with ``dynamo-operator.namespaceRestriction.hybrid``
(the hook's ``--hybrid``) a namespace-restricted operator may join one cluster-wide operator, or the
cluster-wide one join restricted ones. The cluster-wide operator leaves every namespace whose
``dynamo-operator-namespace-scope`` Lease is renewed (runtime/nsscope.py, its admission too), and takes
the namespace back once the Lease expires or is deleted.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import yaml
from dynamo_operator.labels import WEBHOOK_NAMESPACE_LABEL  # the release namespace, on webhook configs
from dynamo_operator.runtime.nsscope import MARKER_LEASE_NAME

from .cluster import Cluster, ClusterError, Obj, collection_path, object_path
from .settings import DEFAULT_LEADER_ELECTION_NAMESPACE, InstallSettings, OperatorMode

OPERATOR_LABEL_SELECTOR = "app.kubernetes.io/name=dynamo-operator"
NAMESPACE_SCOPE_LEASE = MARKER_LEASE_NAME  # the operator renews it (runtime/nsscope.py)
# Annotations the chart may stamp on the operator Deployment so the mode is known without reading its config.
MODE_ANNOTATION = "nvidia.com/dynamo-operator-mode"
TARGET_NAMESPACE_ANNOTATION = "nvidia.com/dynamo-operator-target-namespace"
RESTRICTED_ARG_PREFIXES = ("--restrictedNamespace=", "--restricted-namespace=", "--namespace-restriction=")


class Source(StrEnum):
    DEPLOYMENT = "deployment"
    WEBHOOK_CONFIGURATION = "webhook-configuration"
    NAMESPACE_SCOPE_LEASE = "namespace-scope-lease"
    LEADER_LEASE = "leader-election-lease"


@dataclass(frozen=True)
class ExistingOperator:
    """One Dynamo operator found in the cluster."""

    mode: OperatorMode
    namespace: str  # where it runs (Deployment namespace, or the Lease's namespace)
    target_namespace: str | None  # what it manages when namespace-restricted
    source: Source
    object_ref: str  # e.g. "Deployment dynamo-system/dynamo-platform-dynamo-operator-controller-manager"
    release_name: str | None = None
    release_namespace: str | None = None
    version: str | None = None
    holder: str | None = None

    @property
    def scope(self) -> str:
        return f"namespace {self.target_namespace}" if self.target_namespace else "all namespaces"

    def describe(self) -> str:
        release = (
            f" (Helm release {self.release_name} in {self.release_namespace})" if self.release_name else ""
        )
        version = f", version {self.version}" if self.version else ""
        return f"{self.mode.value} operator managing {self.scope}: {self.object_ref}{release}{version}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "namespace": self.namespace,
            "targetNamespace": self.target_namespace,
            "source": self.source.value,
            "object": self.object_ref,
            "releaseName": self.release_name,
            "releaseNamespace": self.release_namespace,
            "version": self.version,
            "holderIdentity": self.holder,
        }


@dataclass(frozen=True)
class Scenario:
    """A row of the chart document's conflict matrix."""

    id: str
    existing: str
    new: str
    allowed: bool
    reason: str


# The chart document's table, verbatim in its reasons; ids are stable for JSON consumers.
SCENARIOS: dict[str, Scenario] = {
    s.id: s
    for s in (
        Scenario("none/cluster-wide", "None", "Cluster-wide", True, "No conflicts"),
        Scenario("none/namespace-restricted", "None", "Namespace-restricted", True, "No conflicts"),
        Scenario(
            "cluster-wide/cluster-wide", "Cluster-wide", "Cluster-wide", False, "Multiple cluster managers"
        ),
        Scenario(
            "cluster-wide/namespace-restricted",
            "Cluster-wide",
            "Namespace-restricted",
            False,
            "Cluster-wide already manages target namespace",
        ),
        Scenario(
            "namespace-restricted/cluster-wide",
            "Namespace-restricted",
            "Cluster-wide",
            False,
            "Would conflict with existing namespace operators",
        ),
        Scenario(
            "namespace-restricted/namespace-restricted-other-namespace",
            "Namespace-restricted A",
            "Namespace-restricted B (diff ns)",
            True,
            "Different scopes",
        ),
        Scenario(
            "namespace-restricted/namespace-restricted-same-namespace",
            "Namespace-restricted A",
            "Namespace-restricted B (same ns)",
            False,
            "Target namespace already has a namespace-restricted operator",
        ),
        Scenario(
            "cluster-wide/namespace-restricted-hybrid",
            "Cluster-wide",
            "Namespace-restricted, hybrid",
            True,
            "Hybrid layout: the cluster-wide operator leaves the target namespace while its marker lives",
        ),
        Scenario(
            "namespace-restricted/cluster-wide-hybrid",
            "Namespace-restricted",
            "Cluster-wide, hybrid",
            True,
            "Hybrid layout: the cluster-wide operator leaves namespaces whose markers live",
        ),
    )
}
HYBRID_SET = "--set dynamo-operator.namespaceRestriction.hybrid=true"


@dataclass(frozen=True)
class Decision:
    """The matrix verdict for one existing operator (or for none)."""

    scenario: Scenario
    existing: ExistingOperator | None
    message: str
    fix: str

    @property
    def allowed(self) -> bool:
        return self.scenario.allowed

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario.id,
            "allowed": self.allowed,
            "reason": self.scenario.reason,
            "message": self.message,
            "fix": self.fix,
            "existing": self.existing.to_dict() if self.existing else None,
        }


@dataclass
class Discovery:
    """What `discover` found, plus what it could not look at (for a warning instead of a silent pass)."""

    operators: list[ExistingOperator] = field(default_factory=list)
    stale_markers: list[str] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)


def _parse_time(value: Any) -> dt.datetime | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def lease_expired(lease: Obj, now: dt.datetime | None = None) -> bool:
    """As the operator's watcher decides: missing renewTime or duration, or now > renewTime + duration."""
    spec = lease.get("spec") or {}
    renew = _parse_time(spec.get("renewTime") or spec.get("acquireTime"))
    duration = spec.get("leaseDurationSeconds")
    if renew is None or not duration or not spec.get("holderIdentity"):
        return True
    now = now or dt.datetime.now(dt.UTC)
    return now > renew + dt.timedelta(seconds=int(duration))


def _release_of(meta: Obj) -> tuple[str | None, str | None]:
    annotations = meta.get("annotations") or {}
    labels = meta.get("labels") or {}
    name = annotations.get("meta.helm.sh/release-name") or labels.get("app.kubernetes.io/instance")
    namespace = annotations.get("meta.helm.sh/release-namespace") or (meta.get("namespace") if name else None)
    return name, namespace


def _restricted_from_config(
    cluster: Cluster, namespace: str, pod_spec: Obj
) -> tuple[bool, str | None] | None:
    """Read `namespace.restricted` from an OperatorConfiguration mounted from a ConfigMap, if any."""
    for volume in pod_spec.get("volumes") or []:
        cm_name = (volume.get("configMap") or {}).get("name")
        if not cm_name:
            continue
        try:
            cm = cluster.get(object_path("v1", "configmaps", cm_name, namespace))
        except ClusterError:
            return None  # not allowed to read ConfigMaps: fall back to the other signals
        for text in ((cm or {}).get("data") or {}).values():
            try:
                doc = yaml.safe_load(text)
            except yaml.YAMLError:
                continue
            if isinstance(doc, dict) and doc.get("kind") == "OperatorConfiguration":
                restricted = ((doc.get("namespace") or {}).get("restricted") or "").strip()
                return (True, restricted) if restricted else (False, None)
    return None


def _mode_of_deployment(cluster: Cluster, deployment: Obj) -> tuple[OperatorMode, str | None, bool]:
    """The Deployment's mode and target namespace, and whether that came from a signal or is the default."""
    meta = deployment.get("metadata") or {}
    namespace = meta.get("namespace", "")
    annotations = meta.get("annotations") or {}
    labels = meta.get("labels") or {}
    declared = annotations.get(MODE_ANNOTATION) or labels.get(MODE_ANNOTATION)
    if declared in (OperatorMode.NAMESPACE_RESTRICTED.value, OperatorMode.CLUSTER_WIDE.value):
        mode = OperatorMode(declared)
        target = annotations.get(TARGET_NAMESPACE_ANNOTATION) or namespace
        return mode, (target if mode is OperatorMode.NAMESPACE_RESTRICTED else None), True
    pod_spec = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    for container in pod_spec.get("containers") or []:
        for arg in (container.get("args") or []) + (container.get("command") or []):
            for prefix in RESTRICTED_ARG_PREFIXES:
                if str(arg).startswith(prefix) and str(arg)[len(prefix) :]:
                    return OperatorMode.NAMESPACE_RESTRICTED, str(arg)[len(prefix) :], True
        for env in container.get("env") or []:
            if env.get("name") in ("RESTRICTED_NAMESPACE", "DYNAMO_RESTRICTED_NAMESPACE") and env.get(
                "value"
            ):
                return OperatorMode.NAMESPACE_RESTRICTED, str(env["value"]), True
    from_config = _restricted_from_config(cluster, namespace, pod_spec)
    if from_config is not None:
        restricted, target = from_config
        if restricted:
            return OperatorMode.NAMESPACE_RESTRICTED, target, True
        return OperatorMode.CLUSTER_WIDE, None, True
    # The operator's default mode is cluster-wide; a restricted one is recognised by its lease below.
    return OperatorMode.CLUSTER_WIDE, None, False


def _version_of(meta: Obj, pod_spec: Obj) -> str | None:
    version = (meta.get("labels") or {}).get("app.kubernetes.io/version")
    if version:
        return str(version)
    for container in pod_spec.get("containers") or []:
        image = str(container.get("image") or "")
        tail = image.rsplit("/", 1)[-1]
        if ":" in tail:
            return tail.split(":", 1)[1].split("@")[0]
    return None


def _from_deployments(cluster: Cluster, found: Discovery, guessed: set[int]) -> None:
    """Operator Deployments (by label) in every namespace; ``guessed`` gets the indexes of those whose mode
    is the default guess, not a signal."""
    try:
        deployments = cluster.list(
            collection_path("apps/v1", "deployments"), label_selector=OPERATOR_LABEL_SELECTOR
        )
    except ClusterError as exc:
        if not exc.forbidden:
            raise
        found.limitations.append(f"cannot list Deployments in all namespaces ({exc.message})")
        return
    for dep in deployments:
        meta = dep.get("metadata") or {}
        pod_spec = ((dep.get("spec") or {}).get("template") or {}).get("spec") or {}
        mode, target, certain = _mode_of_deployment(cluster, dep)
        release, release_ns = _release_of(meta)
        if not certain:
            guessed.add(len(found.operators))
        found.operators.append(
            ExistingOperator(
                mode=mode,
                namespace=meta.get("namespace", ""),
                target_namespace=target,
                source=Source.DEPLOYMENT,
                object_ref=f"Deployment {meta.get('namespace')}/{meta.get('name')}",
                release_name=release,
                release_namespace=release_ns,
                version=_version_of(meta, pod_spec),
            )
        )


def _guards_graphs(config: Obj) -> list[Obj]:
    """The webhooks of a configuration that admit nvidia.com DynamoGraphDeployments."""
    return [
        hook
        for hook in config.get("webhooks") or []
        if any(
            "nvidia.com" in (rule.get("apiGroups") or [])
            and "dynamographdeployments" in (rule.get("resources") or [])
            for rule in hook.get("rules") or []
        )
    ]


def _selected_namespace(hooks: list[Obj]) -> str | None:
    """The one namespace a restricted release's webhooks select (``kubernetes.io/metadata.name``), if any."""
    for hook in hooks:
        labels = (hook.get("namespaceSelector") or {}).get("matchLabels") or {}
        if labels.get("kubernetes.io/metadata.name"):
            return str(labels["kubernetes.io/metadata.name"])
    return None


def _from_webhook_configurations(cluster: Cluster, found: Discovery, guessed: set[int]) -> None:
    """Installed operators by their validating webhook configuration, for releases no Deployment showed."""
    path = collection_path("admissionregistration.k8s.io/v1", "validatingwebhookconfigurations")
    try:
        configs = cluster.list(path, label_selector=OPERATOR_LABEL_SELECTOR)
    except ClusterError as exc:
        if not exc.forbidden:
            raise
        found.limitations.append(f"cannot list ValidatingWebhookConfigurations ({exc.message})")
        return
    for config in configs:
        hooks = _guards_graphs(config)
        if not hooks:
            continue
        meta = config.get("metadata") or {}
        release, release_ns = _release_of(meta)
        service_ns = ((hooks[0].get("clientConfig") or {}).get("service") or {}).get("namespace")
        namespace = release_ns or (meta.get("labels") or {}).get(WEBHOOK_NAMESPACE_LABEL) or service_ns or ""
        if any(
            (op.release_name, op.release_namespace) == (release, release_ns)
            if release
            else op.namespace == namespace
            for op in found.operators
        ):
            continue
        target = _selected_namespace(hooks)
        if target is None:
            guessed.add(len(found.operators))
        found.operators.append(
            ExistingOperator(
                mode=OperatorMode.NAMESPACE_RESTRICTED if target else OperatorMode.CLUSTER_WIDE,
                namespace=namespace,
                target_namespace=target,
                source=Source.WEBHOOK_CONFIGURATION,
                object_ref=f"ValidatingWebhookConfiguration {meta.get('name')}",
                release_name=release,
                release_namespace=release_ns,
                version=(meta.get("labels") or {}).get("app.kubernetes.io/version"),
            )
        )


def _from_namespace_markers(
    cluster: Cluster, found: Discovery, guessed: set[int], now: dt.datetime | None
) -> None:
    """Live namespace-scope markers: each one is a running restricted operator (merged with what stands
    for it already); expired ones are reported as stale."""
    leases_path = collection_path("coordination.k8s.io/v1", "leases")
    try:
        markers = cluster.list(leases_path, field_selector=f"metadata.name={NAMESPACE_SCOPE_LEASE}")
    except ClusterError as exc:
        if not exc.forbidden:
            raise
        found.limitations.append(f"cannot list Leases in all namespaces ({exc.message})")
        return
    for lease in markers:
        meta = lease.get("metadata") or {}
        ns = meta.get("namespace", "")
        holder = (lease.get("spec") or {}).get("holderIdentity")
        if lease_expired(lease, now):
            found.stale_markers.append(
                f"Lease {ns}/{NAMESPACE_SCOPE_LEASE} (holder {holder or 'none'}) expired"
            )
            continue
        # A restricted operator found otherwise for the same namespace stands for this one: merge them.
        for i, op in enumerate(found.operators):
            if op.target_namespace == ns or (i in guessed and op.namespace == ns):
                found.operators[i] = replace(
                    op, mode=OperatorMode.NAMESPACE_RESTRICTED, target_namespace=ns, holder=holder
                )
                break
        else:
            found.operators.append(
                ExistingOperator(
                    mode=OperatorMode.NAMESPACE_RESTRICTED,
                    namespace=ns,
                    target_namespace=ns,
                    source=Source.NAMESPACE_SCOPE_LEASE,
                    object_ref=f"Lease {ns}/{NAMESPACE_SCOPE_LEASE}",
                    holder=holder,
                    version=_version_from_holder(holder),
                )
            )


def _from_leader_lease(
    cluster: Cluster, found: Discovery, lease_id: str, lease_ns: str, now: dt.datetime | None
) -> None:
    """A held leader-election Lease is a running cluster-wide operator, unless one was found already."""
    try:
        leader = cluster.get(object_path("coordination.k8s.io/v1", "leases", lease_id, lease_ns))
    except ClusterError as exc:
        if not exc.forbidden:
            raise
        found.limitations.append(f"cannot read Lease {lease_ns}/{lease_id} ({exc.message})")
        return
    if not leader or lease_expired(leader, now):
        return
    holder = str((leader.get("spec") or {}).get("holderIdentity") or "")
    # controller-runtime holders are "<pod>_<uuid>"; pods are named after their Deployment.
    owned = any(
        op.source is Source.DEPLOYMENT and holder.startswith(op.object_ref.rsplit("/", 1)[-1] + "-")
        for op in found.operators
    )
    if owned or any(op.mode is OperatorMode.CLUSTER_WIDE for op in found.operators):
        return
    found.operators.append(
        ExistingOperator(
            mode=OperatorMode.CLUSTER_WIDE,
            namespace=lease_ns,
            target_namespace=None,
            source=Source.LEADER_LEASE,
            object_ref=f"Lease {lease_ns}/{lease_id}",
            holder=holder,
        )
    )


def discover(
    cluster: Cluster,
    *,
    leader_election_id: str,
    leader_election_namespace: str = DEFAULT_LEADER_ELECTION_NAMESPACE,
    now: dt.datetime | None = None,
    read_deployments: bool = True,
) -> Discovery:
    """Find every Dynamo operator: by Deployment label (unless ``read_deployments`` is off, as in the
    install hook), webhook configuration, namespace-scope Lease and leader-election Lease."""
    found = Discovery()
    guessed: set[int] = set()  # indexes of operators whose mode is the default guess, not a signal
    if read_deployments:
        _from_deployments(cluster, found, guessed)
    _from_webhook_configurations(cluster, found, guessed)
    _from_namespace_markers(cluster, found, guessed, now)
    _from_leader_lease(cluster, found, leader_election_id, leader_election_namespace, now)
    return found


def _version_from_holder(holder: str | None) -> str | None:
    """Holder identities name the pod and the version (`...-<version>`); take the last dash-part if
    semver-like."""
    if not holder:
        return None
    tail = holder.rsplit("-", 1)[-1] if "-" in holder else ""
    tail = tail.split("_", 1)[0]
    return tail if tail[:1].isdigit() or (tail.startswith("v") and tail[1:2].isdigit()) else None


def is_same_release(op: ExistingOperator, settings: InstallSettings) -> bool:
    """An upgrade must not be blocked by the operator it is upgrading."""
    return op.release_name == settings.release_name and op.release_namespace == settings.release_namespace


def evaluate(existing: list[ExistingOperator], settings: InstallSettings) -> list[Decision]:
    """Apply the matrix to each existing operator (other than this release's own); always at least one row."""
    others = [op for op in existing if not is_same_release(op, settings)]
    new_desc = (
        f"a namespace-restricted operator for namespace {settings.target_namespace}"
        if settings.restricted
        else "a cluster-wide operator"
    )
    if not others:
        scenario = SCENARIOS[f"none/{settings.mode.value}"]
        return [Decision(scenario, None, f"No other Dynamo operator found; installing {new_desc}.", "")]
    decisions = []
    for op in others:
        scenario, fix = _verdict(op, settings)
        verdict = "allowed" if scenario.allowed else "blocked"
        message = f"Installing {new_desc} is {verdict}: {scenario.reason}. Found {op.describe()}."
        if scenario.id.endswith("-hybrid"):
            message += " " + _hybrid_note(op, settings)
        decisions.append(Decision(scenario, op, message, fix))
    return decisions


def _hybrid_note(op: ExistingOperator, settings: InstallSettings) -> str:
    """How the hybrid layout shares the namespaces, for the allowed row."""
    restricted = settings.target_namespace if settings.restricted else op.target_namespace
    return (
        f"While Lease {restricted}/{NAMESPACE_SCOPE_LEASE} is renewed (the restricted operator renews it; "
        "30s TTL by default) the cluster-wide operator neither reconciles nor admits objects in namespace "
        f"{restricted}; once the restricted operator stops, it takes the namespace back. Deprecated upstream "
        "(restricted operators are): one cluster-wide operator is recommended."
    )


def _verdict(op: ExistingOperator, settings: InstallSettings) -> tuple[Scenario, str]:
    """The matrix row for ``op`` against the new operator, and the fix of a blocked one."""
    uninstall = (
        f"helm uninstall {op.release_name} -n {op.release_namespace}"
        if op.release_name
        else f"remove the operator behind {op.object_ref}"
    )
    new_mode = settings.mode
    restricted_flag = "--set dynamo-operator.namespaceRestriction.enabled=true"
    if op.mode is OperatorMode.CLUSTER_WIDE and new_mode is OperatorMode.CLUSTER_WIDE:
        return SCENARIOS["cluster-wide/cluster-wide"], (
            f"Only one cluster-wide Dynamo operator may run per cluster. Use the existing one (skip "
            f"installing the operator: --set dynamo-operator.enabled=false), or first run: {uninstall}."
        )
    if op.mode is OperatorMode.CLUSTER_WIDE:
        if settings.hybrid:
            return SCENARIOS["cluster-wide/namespace-restricted-hybrid"], ""
        return SCENARIOS["cluster-wide/namespace-restricted"], (
            f"The cluster-wide operator already reconciles namespace {settings.target_namespace}. Deploy "
            f"your graphs there with it, or first run: {uninstall}. To run this operator there beside it "
            f"(the hybrid layout, e.g. to test another version), add {HYBRID_SET}."
        )
    if new_mode is OperatorMode.CLUSTER_WIDE:
        if settings.hybrid:
            return SCENARIOS["namespace-restricted/cluster-wide-hybrid"], ""
        return SCENARIOS["namespace-restricted/cluster-wide"], (
            f"Remove the namespace-restricted operator first ({uninstall}), or install this release "
            f"namespace-restricted too: {restricted_flag} "
            "--set dynamo-operator.namespaceRestriction.targetNamespace=<another namespace>, or let this "
            "cluster-wide operator leave the restricted operators' namespaces (the hybrid layout): "
            f"{HYBRID_SET}."
        )
    if op.target_namespace == settings.target_namespace:
        return SCENARIOS["namespace-restricted/namespace-restricted-same-namespace"], (
            f"Namespace {settings.target_namespace} already has its operator. Choose another target with "
            "--set dynamo-operator.namespaceRestriction.targetNamespace=<namespace>, or first "
            f"run: {uninstall}."
        )
    return SCENARIOS["namespace-restricted/namespace-restricted-other-namespace"], ""
