"""The registry of preflight checks, shared by `helm dynamo check preflight` and the chart's hook Jobs.

Each check has a stable id (CI greps for it), a declared severity (`error` blocks the install, `warning` and
`info` do not), and returns findings that say what was found and how to fix it. A check may emit several
findings (one per CRD, one per existing operator) and may lower a finding's severity below the declared one.
Checks that need the API are skipped, not failed, when it is unreachable: `cluster.api-reachable` already
reports that once, with the fix.
"""

from __future__ import annotations

import datetime as dt
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from . import conflicts
from .chart import ChartInfo, CrdInfo
from .cluster import CRD_API, CRDS, Cluster, ClusterError, Obj, collection_path, object_path
from .semver import Constraint, Version, VersionError
from .settings import DEFAULT_LEADER_ELECTION_ID, DEFAULT_LEADER_ELECTION_NAMESPACE, CertMode, InstallSettings
from .values import Values


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Status(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


@dataclass
class Finding:
    """One observation of a check. `severity` None means the check's declared severity."""

    status: Status
    found: str
    fix: str = ""
    subject: str = ""
    severity: Severity | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Result:
    """A finding stamped with its check's id and title, as reported."""

    id: str
    title: str
    severity: Severity
    status: Status
    found: str
    fix: str
    subject: str
    details: dict[str, Any]

    @property
    def blocking(self) -> bool:
        return self.status is Status.FAIL and self.severity is Severity.ERROR

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "severity": self.severity.value,
            "status": self.status.value,
            "subject": self.subject,
            "found": self.found,
            "fix": self.fix,
            "details": self.details,
        }


@dataclass
class RenderedObject:
    """An object `helm template` would create (the plugin renders the chart when helm is available)."""

    api_version: str
    kind: str
    namespace: str | None


@dataclass
class CheckContext:
    """Everything a check may look at. `cluster` is None when no kubeconfig could be loaded."""

    settings: InstallSettings
    chart: ChartInfo
    values: Values
    cluster: Cluster | None
    connect_error: ClusterError | None = None
    create_namespace: bool = False
    rendered: list[RenderedObject] | None = None
    now: dt.datetime | None = None
    # False in the chart's pre-install hook: its RBAC reads no Deployments (conflicts.discover)
    read_deployments: bool = True
    cache: dict[str, Any] = field(default_factory=dict)

    def version_info(self) -> Obj | None:
        """The API server's /version, fetched once; None when unreachable (the error is kept)."""
        if "version" not in self.cache:
            try:
                self.cache["version"] = self.cluster.server_version() if self.cluster else None
            except ClusterError as exc:
                self.connect_error = exc
                self.cache["version"] = None
        return self.cache["version"]

    @property
    def reachable(self) -> bool:
        return self.version_info() is not None

    def crd(self, name: str) -> Obj | None:
        key = f"crd/{name}"
        if key not in self.cache:
            assert self.cluster is not None
            self.cache[key] = self.cluster.get(object_path(CRD_API, CRDS, name))
        return self.cache[key]


CheckFn = Callable[[CheckContext], list[Finding]]


@dataclass(frozen=True)
class CheckSpec:
    id: str
    title: str
    severity: Severity
    needs_cluster: bool
    fn: CheckFn


REGISTRY: dict[str, CheckSpec] = {}


def check(
    check_id: str, title: str, severity: Severity, *, needs_cluster: bool = True
) -> Callable[[CheckFn], CheckFn]:
    """Register a check; registration order is report order."""

    def register(fn: CheckFn) -> CheckFn:
        if check_id in REGISTRY:
            raise ValueError(f"duplicate check id {check_id}")
        REGISTRY[check_id] = CheckSpec(check_id, title, severity, needs_cluster, fn)
        return fn

    return register


def run_checks(ctx: CheckContext, only: set[str] | None = None, skip: set[str] | None = None) -> list[Result]:
    """Run the selected checks in registry order; an exception inside a check becomes an error finding."""
    unknown = ((only or set()) | (skip or set())) - set(REGISTRY)
    if unknown:
        raise KeyError(f"unknown check id(s): {', '.join(sorted(unknown))}; see `check list`")
    results: list[Result] = []
    for spec in REGISTRY.values():
        if (only and spec.id not in only) or (skip and spec.id in skip):
            continue
        if spec.needs_cluster and not ctx.reachable:
            findings = [Finding(Status.SKIP, "skipped: the Kubernetes API is not reachable")]
        else:
            try:
                findings = spec.fn(ctx)
            except ClusterError as exc:
                findings = [
                    Finding(
                        Status.FAIL,
                        f"API call failed: {exc}",
                        "Check that the kubeconfig user may read this (kubectl auth can-i), then re-run.",
                    )
                ]
        for f in findings:
            results.append(
                Result(
                    spec.id,
                    spec.title,
                    f.severity or spec.severity,
                    f.status,
                    f.found,
                    f.fix,
                    f.subject,
                    f.details,
                )
            )
    return results


# --------------------------------------------------------------------------------------------- cluster


@check("cluster.api-reachable", "Kubernetes API reachable", Severity.ERROR, needs_cluster=False)
def _api_reachable(ctx: CheckContext) -> list[Finding]:
    info = ctx.version_info()
    if info is not None:
        assert ctx.cluster is not None
        return [
            Finding(Status.PASS, f"API server {ctx.cluster.server_url()} answered ({info.get('gitVersion')})")
        ]
    error = ctx.connect_error
    found = f"cannot reach the Kubernetes API: {error}" if error else "no cluster connection configured"
    return [
        Finding(
            Status.FAIL,
            found,
            "Point KUBECONFIG (or --kubeconfig / --kube-context) at the target cluster and check that "
            "`kubectl version` answers.",
        )
    ]


@check("cluster.kubernetes-version", "Kubernetes version within the chart's kubeVersion", Severity.ERROR)
def _kube_version(ctx: CheckContext) -> list[Finding]:
    info = ctx.version_info() or {}
    version = str(
        info.get("gitVersion") or f"v{info.get('major')}.{str(info.get('minor', '')).rstrip('+')}.0"
    )
    source = f"{ctx.chart.path}/Chart.yaml" if ctx.chart.kube_version_declared else "default constraint"
    constraint = ctx.chart.kube_version
    details = {"serverVersion": version, "kubeVersion": constraint, "constraintSource": source}
    try:
        allowed = Constraint.parse(constraint).allows(Version.parse(version))
    except VersionError as exc:
        return [
            Finding(
                Status.FAIL,
                f"cannot compare versions: {exc}",
                "Fix kubeVersion in Chart.yaml.",
                details=details,
            )
        ]
    if allowed:
        return [
            Finding(
                Status.PASS, f"Kubernetes {version} satisfies kubeVersion {constraint!r}", details=details
            )
        ]
    return [
        Finding(
            Status.FAIL,
            f"Kubernetes {version} does not satisfy the chart's kubeVersion {constraint!r} ({source}); "
            "helm install would refuse it",
            "Upgrade the cluster to a supported Kubernetes version, or install a chart release that "
            "supports it.",
            details=details,
        )
    ]


# ------------------------------------------------------------------------------------------------ rbac

# What the chart creates when it cannot be rendered here: (group, resource, scope) with scope
# "release" (release namespace), "target" (namespace-restricted target) or "cluster".
STATIC_INSTALL_RESOURCES: tuple[tuple[str, str, str], ...] = (
    ("apps", "deployments", "release"),
    ("", "services", "release"),
    ("", "serviceaccounts", "release"),
    ("", "configmaps", "release"),
    ("", "secrets", "release"),
    ("batch", "jobs", "release"),
    ("rbac.authorization.k8s.io", "roles", "release"),
    ("rbac.authorization.k8s.io", "rolebindings", "release"),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations", "cluster"),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", "cluster"),
)
CLUSTER_WIDE_RESOURCES: tuple[tuple[str, str, str], ...] = (
    ("rbac.authorization.k8s.io", "clusterroles", "cluster"),
    ("rbac.authorization.k8s.io", "clusterrolebindings", "cluster"),
)
RESTRICTED_RESOURCES: tuple[tuple[str, str, str], ...] = (
    ("rbac.authorization.k8s.io", "roles", "target"),
    ("rbac.authorization.k8s.io", "rolebindings", "target"),
)
STORE_RESOURCES: tuple[tuple[str, str, str], ...] = (
    ("apps", "statefulsets", "release"),
    ("policy", "poddisruptionbudgets", "release"),
)


def _discover_resources(cluster: Cluster, api_version: str) -> dict[str, tuple[str, bool]]:
    """kind → (plural, namespaced) for one group/version, from API discovery."""
    path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    doc = cluster.get(path) or {}
    return {
        r["kind"]: (r["name"], bool(r.get("namespaced")))
        for r in doc.get("resources") or []
        if "/" not in r.get("name", "")
    }


def _install_targets(ctx: CheckContext) -> tuple[list[tuple[str, str, str | None]], str]:
    """(group, resource, namespace) triples the caller must be allowed to create, and where they came from."""
    s = ctx.settings
    targets: set[tuple[str, str, str | None]] = set()
    if ctx.rendered is not None and ctx.cluster is not None:
        by_gv: dict[str, dict[str, tuple[str, bool]]] = {}
        for obj in ctx.rendered:
            if obj.api_version not in by_gv:
                try:
                    by_gv[obj.api_version] = _discover_resources(ctx.cluster, obj.api_version)
                except ClusterError:
                    by_gv[obj.api_version] = {}
            plural, namespaced = by_gv[obj.api_version].get(obj.kind, ("", True))
            if not plural:
                continue  # an API the cluster does not serve: the optional-API checks report that
            group = obj.api_version.rsplit("/", 1)[0] if "/" in obj.api_version else ""
            targets.add((group, plural, (obj.namespace or s.release_namespace) if namespaced else None))
        origin = "the rendered chart"
    else:
        rows = list(STATIC_INSTALL_RESOURCES)
        rows += RESTRICTED_RESOURCES if s.restricted else CLUSTER_WIDE_RESOURCES
        if s.nats_enabled or s.etcd_enabled:
            rows += STORE_RESOURCES
        for group, resource, scope in rows:
            ns = {"release": s.release_namespace, "target": s.target_namespace, "cluster": None}[scope]
            targets.add((group, resource, ns))
        origin = "the chart's resource list (chart not rendered)"
    for crd in ctx.chart.crds:
        if ctx.crd(crd.name) is None:
            targets.add((CRD_API.split("/")[0], CRDS, None))
            break
    return sorted(targets, key=lambda t: (t[2] or "", t[0], t[1])), origin


@check("rbac.install-permissions", "The caller may create what the chart installs", Severity.ERROR)
def _rbac(ctx: CheckContext) -> list[Finding]:
    assert ctx.cluster is not None
    findings: list[Finding] = []
    ns = ctx.settings.release_namespace
    if ctx.cluster.get(object_path("v1", "namespaces", ns)) is None:
        allowed, _ = ctx.cluster.access_review({"verb": "create", "resource": "namespaces"})
        if not ctx.create_namespace:
            findings.append(
                Finding(
                    Status.FAIL,
                    f"namespace {ns} does not exist",
                    f"Create it (kubectl create namespace {ns}) or pass --create-namespace to helm install.",
                    subject=f"namespace/{ns}",
                )
            )
        elif not allowed:
            findings.append(
                Finding(
                    Status.FAIL,
                    f"namespace {ns} does not exist and you may not create namespaces",
                    f"Ask a cluster admin to create namespace {ns}.",
                    subject=f"namespace/{ns}",
                )
            )
    targets, origin = _install_targets(ctx)
    denied = []
    for group, resource, namespace in targets:
        attributes = {"verb": "create", "group": group, "resource": resource}
        if namespace:
            attributes["namespace"] = namespace
        allowed, _reason = ctx.cluster.access_review(attributes)
        if not allowed:
            where = f" in namespace {namespace}" if namespace else " (cluster-scoped)"
            denied.append(f"{resource}{'.' + group if group else ''}{where}")
    details = {"checked": len(targets), "source": origin, "denied": denied}
    if denied:
        findings.append(
            Finding(
                Status.FAIL,
                f"not allowed to create: {'; '.join(denied)}",
                "Run the install as a user with these rights (for the cluster-wide mode usually "
                "cluster-admin), "
                "or install namespace-restricted: --set dynamo-operator.namespaceRestriction.enabled=true.",
                details=details,
            )
        )
    else:
        findings.append(
            Finding(
                Status.PASS,
                f"allowed to create all {len(targets)} resource types from {origin}",
                details=details,
            )
        )
    return findings


# ------------------------------------------------------------------------------------------- operators


@check("operators.conflicts", "Existing Dynamo operators and the conflict matrix", Severity.ERROR)
def _conflicts(ctx: CheckContext) -> list[Finding]:
    assert ctx.cluster is not None
    s = ctx.settings
    if not s.operator_enabled:
        return [Finding(Status.SKIP, "dynamo-operator.enabled=false: this release installs no operator")]
    found = conflicts.discover(
        ctx.cluster,
        leader_election_id=s.leader_election_id,
        # In restricted mode the settings point leader election at the target namespace; cluster-wide
        # operators, which are what this Lease reveals, keep theirs in kube-system.
        leader_election_namespace=DEFAULT_LEADER_ELECTION_NAMESPACE
        if s.restricted
        else s.leader_election_namespace,
        now=ctx.now,
        read_deployments=ctx.read_deployments,
    )
    findings = []
    for decision in conflicts.evaluate(found.operators, s):
        findings.append(
            Finding(
                Status.PASS if decision.allowed else Status.FAIL,
                decision.message,
                decision.fix,
                subject=decision.existing.object_ref if decision.existing else "",
                details=decision.to_dict(),
            )
        )
    for marker in found.stale_markers:
        findings.append(
            Finding(
                Status.PASS, f"ignored {marker}: its operator is gone", severity=Severity.INFO, subject=marker
            )
        )
    for limit in found.limitations:
        findings.append(
            Finding(
                Status.FAIL,
                f"conflict detection incomplete: {limit}",
                "Grant the installer list on deployments.apps in all namespaces, list on "
                "validatingwebhookconfigurations, list on the Leases named dynamo-operator-namespace-scope "
                "in all namespaces and get on the leader-election Lease, so other Dynamo operators can be "
                "seen (the chart's hook ServiceAccount has all but the Deployments).",
                severity=Severity.WARNING,
            )
        )
    return findings


# ------------------------------------------------------------------------------------------------ crds


def _compare_crd(chart_crd: CrdInfo, installed: CrdInfo) -> tuple[str, str]:
    """('same'|'older'|'newer'|'diverged', explanation) of the installed CRD relative to the chart's."""
    chart_versions, cluster_versions = set(chart_crd.served_versions), set(installed.served_versions)
    extra, missing = sorted(cluster_versions - chart_versions), sorted(chart_versions - cluster_versions)
    if chart_crd.platform_version and installed.platform_version:
        try:
            a, b = Version.parse(installed.platform_version), Version.parse(chart_crd.platform_version)
            if a != b:
                word = "newer" if a > b else "older"
                return word, f"installed at platform version {a}, chart ships {b}"
        except VersionError:
            pass
    if extra and missing:
        return (
            "diverged",
            f"cluster serves {', '.join(extra)} the chart lacks; chart adds {', '.join(missing)}",
        )
    if extra:
        return "newer", f"cluster serves {', '.join(extra)}, which the chart does not know"
    if missing:
        return "older", f"chart adds served version(s) {', '.join(missing)}"
    if installed.storage_version and installed.storage_version != chart_crd.storage_version:
        return (
            "diverged",
            f"storage version {installed.storage_version}, chart stores {chart_crd.storage_version}",
        )
    return "same", "same served versions" + (
        f" and platform version {installed.platform_version}" if installed.platform_version else ""
    )


@check("crds.version-skew", "Installed Dynamo CRDs match the chart's", Severity.ERROR)
def _crds(ctx: CheckContext) -> list[Finding]:
    if not ctx.chart.crds:
        return [Finding(Status.SKIP, "the chart's crds/ directory is not available here: nothing to compare")]
    findings = []
    same, absent = [], []
    for chart_crd in ctx.chart.crds_installed_with(ctx.values):
        obj = ctx.crd(chart_crd.name)
        if obj is None:
            absent.append(chart_crd.name)
            continue
        relation, why = _compare_crd(chart_crd, CrdInfo.from_object(obj))
        apply = "kubectl apply --server-side --force-conflicts -f <chart>/crds/"
        if relation == "same":
            same.append(chart_crd.name)
        elif relation == "older":
            findings.append(
                Finding(
                    Status.FAIL,
                    f"CRD {chart_crd.name} is older than the chart's: {why}. Helm never upgrades CRDs "
                    "from crds/, "
                    "so the new operator would run against the old schema",
                    f"Upgrade the CRDs first: {apply}",
                    subject=chart_crd.name,
                    severity=Severity.WARNING,
                )
            )
        else:
            findings.append(
                Finding(
                    Status.FAIL,
                    f"CRD {chart_crd.name} is {relation} relative to the chart: {why}. This chart's "
                    "operator would "
                    "drop or misread fields written by the newer version",
                    "Install the chart release that matches the installed CRDs, or (after backing up "
                    "the custom "
                    f"resources) replace the CRDs: {apply}",
                    subject=chart_crd.name,
                )
            )
    summary = f"{len(same)} CRD(s) match the chart, {len(absent)} will be installed"
    findings.insert(
        0, Finding(Status.PASS, summary, details={"matching": same, "absent": absent}, severity=Severity.INFO)
    )
    return findings


# -------------------------------------------------------------------------------------- cert-manager

CERT_MANAGER_CRDS = ("certificates.cert-manager.io", "issuers.cert-manager.io")


@check("webhook.cert-manager", "cert-manager present when the webhook certificates use it", Severity.ERROR)
def _cert_manager(ctx: CheckContext) -> list[Finding]:
    s = ctx.settings
    if s.cert_mode is not CertMode.CERT_MANAGER:
        return [Finding(Status.SKIP, f"certificate mode {s.cert_mode.value}: cert-manager not needed")]
    missing = []
    for name in CERT_MANAGER_CRDS:
        obj = ctx.crd(name)
        served = CrdInfo.from_object(obj).served_versions if obj else ()
        if "v1" not in served:
            missing.append(name)
    if missing:
        return [
            Finding(
                Status.FAIL,
                f"certificate mode cert-manager ({s.cert_mode_key}) but cert-manager's API is missing: "
                f"{', '.join(missing)} not served at v1",
                "Install cert-manager first (its CRDs and controller), or use the built-in certificates by "
                f"unsetting {s.cert_mode_key}.",
            )
        ]
    return [Finding(Status.PASS, "cert-manager API (cert-manager.io/v1 Certificate, Issuer) is served")]


# -------------------------------------------------------------------------------------------- storage

DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


@check("storage.default-class", "A StorageClass for NATS / etcd persistence", Severity.ERROR)
def _storage(ctx: CheckContext) -> list[Finding]:
    assert ctx.cluster is not None
    wanted = [p for p in ctx.settings.persistence if p.enabled]
    if not wanted:
        return [Finding(Status.SKIP, "no bundled store has persistence enabled: no PersistentVolumeClaims")]
    classes = ctx.cluster.list(collection_path("storage.k8s.io/v1", "storageclasses"))
    names = {c["metadata"]["name"] for c in classes}
    defaults = sorted(
        c["metadata"]["name"]
        for c in classes
        if any(((c["metadata"].get("annotations") or {}).get(a) == "true") for a in DEFAULT_CLASS_ANNOTATIONS)
    )
    findings = []
    for p in wanted:
        key = p.source_key or f"{p.component}.persistence.enabled"
        if p.storage_class:
            if p.storage_class in names:
                findings.append(
                    Finding(
                        Status.PASS,
                        f"{p.component}: StorageClass {p.storage_class} exists",
                        subject=p.component,
                    )
                )
            else:
                findings.append(
                    Finding(
                        Status.FAIL,
                        f"{p.component}: StorageClass {p.storage_class!r} (from values) does not exist; its "
                        "PersistentVolumeClaim would stay Pending",
                        f"Use one of: {', '.join(sorted(names)) or 'none exist'}, or set {key}=false.",
                        subject=p.component,
                    )
                )
        elif defaults:
            findings.append(
                Finding(
                    Status.PASS,
                    f"{p.component}: default StorageClass {defaults[0]} will back its volume",
                    subject=p.component,
                )
            )
        else:
            findings.append(
                Finding(
                    Status.FAIL,
                    f"{p.component}: persistence is on ({key}) but the cluster has no default "
                    "StorageClass; its "
                    "PersistentVolumeClaim would stay Pending and the pod never starts",
                    "Mark a StorageClass as default (kubectl annotate storageclass <name> "
                    "storageclass.kubernetes.io/is-default-class=true), name one in the values, "
                    f"or turn persistence off: --set {key}=false.",
                    subject=p.component,
                )
            )
    return findings


# ----------------------------------------------------------------------------------------------- gpus


@check("nodes.gpu", "Nodes with allocatable nvidia.com/gpu", Severity.WARNING)
def _gpus(ctx: CheckContext) -> list[Finding]:
    assert ctx.cluster is not None
    try:
        nodes = ctx.cluster.list(collection_path("v1", "nodes"))
    except ClusterError as exc:
        if not exc.forbidden:
            raise
        return [Finding(Status.SKIP, f"cannot list nodes ({exc.message})", severity=Severity.INFO)]
    gpu_nodes = {}
    for node in nodes:
        raw = ((node.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu", "0")
        try:
            count = int(str(raw))
        except ValueError:
            count = 0
        if count > 0:
            gpu_nodes[node["metadata"]["name"]] = count
    if gpu_nodes:
        total = sum(gpu_nodes.values())
        return [
            Finding(
                Status.PASS, f"{len(gpu_nodes)} node(s) offer {total} GPU(s)", details={"nodes": gpu_nodes}
            )
        ]
    return [
        Finding(
            Status.FAIL,
            f"none of {len(nodes)} node(s) has allocatable nvidia.com/gpu; GPU workers would stay Pending",
            "Install the NVIDIA GPU Operator or device plugin on the GPU nodes (CPU-only graphs still work).",
        )
    ]


# ----------------------------------------------------------------------------------------------- apis


@check("apis.orchestrators", "Grove / Kai scheduler / LWS APIs when enabled", Severity.ERROR)
def _orchestrators(ctx: CheckContext) -> list[Finding]:
    findings = []
    for api in ctx.settings.optional_apis:
        obj = ctx.crd(api.crd)
        present = obj is not None
        if api.installed_by_chart:
            owner = ((obj or {}).get("metadata") or {}).get("annotations", {}) or {}
            owner_release = owner.get("meta.helm.sh/release-name")
            if present and owner_release != ctx.settings.release_name:
                findings.append(
                    Finding(
                        Status.FAIL,
                        f"{api.name}: the chart would install it ({api.source_key}=true) but "
                        f"{api.crd} already exists"
                        + (f" (from Helm release {owner_release})" if owner_release else ""),
                        f"Use the existing installation: --set {api.name}.enabled=false.",
                        subject=api.name,
                        severity=Severity.WARNING,
                    )
                )
            else:
                findings.append(
                    Finding(Status.PASS, f"{api.name}: installed by this chart", subject=api.name)
                )
        elif api.required_by_operator:
            if present:
                findings.append(
                    Finding(Status.PASS, f"{api.name}: API {api.crd} is served", subject=api.name)
                )
            else:
                findings.append(
                    Finding(
                        Status.FAIL,
                        f"{api.name}: the operator is told to use it ({api.source_key}=true) but CRD "
                        f"{api.crd} "
                        "is not installed",
                        f"Install {api.name} first"
                        + (
                            f", or let the chart install it: --set {api.name}.enabled=true"
                            if api.name != "lws"
                            else ""
                        )
                        + f", or unset {api.source_key} so the operator auto-detects it.",
                        subject=api.name,
                    )
                )
        else:
            state = "detected; the operator will use it" if present else "not installed and not enabled"
            findings.append(Finding(Status.SKIP, f"{api.name}: {state}", subject=api.name))
    return findings


# --------------------------------------------------------------------------------------------- values

NATS_SCHEMES = ("nats", "tls", "ws", "wss")
ETCD_SCHEMES = ("http", "https")


def _check_urls(text: str, key: str, schemes: tuple[str, ...], example: str) -> list[Finding]:
    findings = []
    for raw in [p.strip() for p in text.split(",")]:
        if not raw:
            findings.append(
                Finding(
                    Status.FAIL,
                    f"{key} has an empty entry in {text!r}",
                    f"Remove the stray comma; e.g. {example}",
                )
            )
            continue
        parsed = urllib.parse.urlsplit(raw if "://" in raw else f"//{raw}")
        problems = []
        if parsed.scheme and parsed.scheme not in schemes:
            problems.append(f"scheme {parsed.scheme!r} is not one of {', '.join(schemes)}")
        try:
            port = parsed.port
        except ValueError:
            port = None
            problems.append("the port is not a number in 1-65535")
        if not parsed.hostname:
            problems.append("no host name")
        elif port is None and not problems:
            problems.append("no port")
        if parsed.path not in ("", "/") or parsed.query or parsed.fragment:
            problems.append("unexpected path or query")
        if problems:
            findings.append(
                Finding(
                    Status.FAIL,
                    f"{key}={raw!r}: {'; '.join(problems)}",
                    f"Use the form {example}",
                    subject=key,
                )
            )
        elif not parsed.scheme:
            findings.append(
                Finding(
                    Status.FAIL,
                    f"{key}={raw!r} has no scheme; the chart document asks for {schemes[0]}://host:port",
                    f"Write it as {example}",
                    subject=key,
                    severity=Severity.WARNING,
                )
            )
    if not findings:
        findings.append(Finding(Status.PASS, f"{key}={text!r} is well formed", subject=key))
    return findings


@check(
    "values.external-addresses",
    "External NATS / etcd addresses well formed",
    Severity.ERROR,
    needs_cluster=False,
)
def _addresses(ctx: CheckContext) -> list[Finding]:
    s = ctx.settings
    findings: list[Finding] = []
    for name, enabled, addr, schemes, example in (
        ("nats", s.nats_enabled, s.nats_addr, NATS_SCHEMES, "nats://nats.messaging.svc:4222"),
        ("etcd", s.etcd_enabled, s.etcd_addr, ETCD_SCHEMES, "http://etcd.storage.svc:2379"),
    ):
        key = f"dynamo-operator.{name}Addr"
        if addr:
            findings += _check_urls(addr, key, schemes, example)
            if enabled:
                findings.append(
                    Finding(
                        Status.FAIL,
                        f"{key} points at an external {name} while the bundled {name} is also "
                        "enabled; the bundled "
                        "one would run unused",
                        f"Set --set {name}.enabled=false, or clear {key} to use the bundled one.",
                        subject=key,
                        severity=Severity.WARNING,
                    )
                )
        elif not enabled and name == "etcd" and s.discovery_backend == "etcd":
            findings.append(
                Finding(
                    Status.FAIL,
                    "dynamo-operator.discoveryBackend=etcd needs etcd, but etcd.enabled=false and "
                    f"{key} is empty",
                    f"Set {key} (e.g. {example}), enable the bundled one (--set etcd.enabled=true) or "
                    "use Kubernetes discovery (dynamo-operator.discoveryBackend=kubernetes).",
                    subject=key,
                )
            )
        elif not enabled:
            findings.append(
                Finding(
                    Status.PASS,
                    f"{name}: none (components get no {'NATS_SERVER' if name == 'nats' else 'ETCD_ENDPOINTS'}"
                    f"; discovery backend {s.discovery_backend} does not need {name})",
                    subject=key,
                )
            )
        else:
            findings.append(Finding(Status.PASS, f"{name}: the bundled {name} is used", subject=key))
    return findings


@check(
    "values.leader-election",
    "Leader election settings safe for the operator mode",
    Severity.ERROR,
    needs_cluster=False,
)
def _leader_election(ctx: CheckContext) -> list[Finding]:
    s = ctx.settings
    if s.restricted:
        return [
            Finding(
                Status.SKIP, f"namespace-restricted: leader election stays in namespace {s.target_namespace}"
            )
        ]
    findings = []
    if s.leader_election_id != DEFAULT_LEADER_ELECTION_ID:
        findings.append(
            Finding(
                Status.FAIL,
                f"dynamo-operator.controllerManager.leaderElection.id={s.leader_election_id!r}: "
                "cluster-wide operators "
                f"with different ids can lead at the same time (split brain)",
                f"Leave it empty (defaults to {DEFAULT_LEADER_ELECTION_ID}).",
            )
        )
    if s.leader_election_namespace == s.release_namespace:
        findings.append(
            Finding(
                Status.FAIL,
                f"leader election Lease namespace equals the release namespace {s.release_namespace}: "
                "another "
                "cluster-wide release in a different namespace would not see this operator's lease",
                "Leave dynamo-operator.controllerManager.leaderElection.namespace empty (kube-system).",
                severity=Severity.WARNING,
            )
        )
    if not findings:
        findings.append(
            Finding(
                Status.PASS,
                f"Lease {s.leader_election_namespace}/{s.leader_election_id} shared by cluster-wide "
                "operators",
            )
        )
    return findings
