"""Removing a dynamo-platform release without stranding anything: `helm dynamo uninstall` runs these steps
around `helm uninstall`.

Why more than `helm uninstall`: Helm deletes only what it rendered. The webhook Secret (written by the
install hook and then the operator), the MPI SSH Secret (install hook), a namespace-scope Lease marker of an
operator that died without its SIGTERM, and the CRDs (Helm never deletes `crds/`) are not Helm's; and while
the release goes away its admission webhooks would keep answering for a Service with no endpoints. So:

1. ``before``: read what the release runs (mode, target namespace, Secret names) from its live
   objects, then delete its webhook configurations first, so no update or delete of a Dynamo object is
   refused by a webhook whose server is going away;
2. `helm uninstall` (the caller runs it);
3. ``after``: release the operator's finalizer left on Dynamo objects, delete the namespace-scope marker
   and an unheld leader-election Lease of this release, and the hook-made Secrets unless asked to keep them;
4. optionally (``remove_crds``) the CRDs, which deletes every Dynamo object of the cluster with them.

"Dynamo" is an explicit list, never a pattern: the kinds of ``dynamo_operator.api.registry`` (their CRDs,
and the objects whose finalizer is released) and the operator's own finalizer name. Other ``*.nvidia.com``
CRDs (the GPU Operator's ``clusterpolicies.nvidia.com``, ``nvidiadrivers.nvidia.com``) and their objects are
never read, changed or deleted.

Every step is idempotent: a second run after a partial failure finishes the job.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dynamo_operator.api.registry import KINDS, KindInfo
from dynamo_operator.controllers.lifecycle import FINALIZER
from dynamo_operator.labels import LABEL_MANAGED_BY
from dynamo_operator.labels import MANAGED_BY as OPERATOR_MANAGED_BY

from .cluster import CRD_API, CRDS, Cluster, ClusterError, Obj, collection_path, object_path
from .crd_delete import delete_crds, describe_left
from .secrets import MANAGED_BY as HOOKS_MANAGED_BY
from .settings import DEFAULT_MPI_SECRET, DEFAULT_WEBHOOK_SECRET

WEBHOOK_KINDS = ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")
ADMISSION = "admissionregistration.k8s.io/v1"
MARKER_LEASE = "dynamo-operator-namespace-scope"
ANN_MODE = "nvidia.com/dynamo-operator-mode"
ANN_TARGET = "nvidia.com/dynamo-operator-target-namespace"


class UninstallError(Exception):
    """A step that must not go ahead (the message says why and what to do)."""


@dataclass
class ReleaseInfo:
    """What `before` learned from the live release; `after` needs it once the objects are gone."""

    name: str
    namespace: str
    restricted: bool = False
    target_namespace: str = ""
    deployment: str = ""
    leader_election_id: str = "dynamo.nvidia.com"
    leader_election_namespace: str = "kube-system"
    secrets: list[str] = field(default_factory=list)
    # "<plural>/<name>" of the release's webhook configurations (the chart's hook passes them, so it may
    # delete exactly these); empty: found by the release's labels (the plugin, as the user).
    webhook_configurations: list[str] = field(default_factory=list)


@dataclass
class Report:
    """One line per object removed or kept, for the user and for tests."""

    lines: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.lines.append(text)


def _selector(info: ReleaseInfo) -> str:
    return f"app.kubernetes.io/instance={info.name}"


def read_release(cluster: Cluster, name: str, namespace: str) -> ReleaseInfo:
    """The release's operator mode, lease and Secret names, from its Deployment and OperatorConfiguration."""
    import yaml

    info = ReleaseInfo(name=name, namespace=namespace)
    sel = f"{_selector(info)},app.kubernetes.io/name=dynamo-operator"
    for dep in cluster.list(collection_path("apps/v1", "deployments", namespace), label_selector=sel):
        ann = (dep.get("metadata") or {}).get("annotations") or {}
        info.deployment = dep["metadata"]["name"]
        info.restricted = ann.get(ANN_MODE) == "namespace-restricted"
        info.target_namespace = ann.get(ANN_TARGET, "") if info.restricted else ""
    webhook_secret, mpi_secret = DEFAULT_WEBHOOK_SECRET, DEFAULT_MPI_SECRET
    for cm in cluster.list(collection_path("v1", "configmaps", namespace), label_selector=sel):
        text = (cm.get("data") or {}).get("config.yaml")
        if not text:
            continue
        doc = yaml.safe_load(text) or {}
        webhook_secret = ((doc.get("server") or {}).get("webhook") or {}).get("secretName") or webhook_secret
        mpi_secret = (doc.get("mpi") or {}).get("sshSecretName") or mpi_secret
        le = doc.get("leaderElection") or {}
        info.leader_election_id = le.get("id") or info.leader_election_id
        info.leader_election_namespace = le.get("namespace") or info.leader_election_namespace
        if (doc.get("namespace") or {}).get("restricted"):
            info.restricted, info.target_namespace = True, doc["namespace"]["restricted"]
    info.secrets = [webhook_secret, mpi_secret]
    return info


def dynamo_kinds(*, namespaced_only: bool = False) -> list[KindInfo]:
    """Dynamo's kinds, from the API registry (the one list the CRD generator uses too)."""
    return [k for k in KINDS.values() if not namespaced_only or k.scope == "Namespaced"]


def dynamo_crd_names() -> list[str]:
    return [k.crd_name for k in dynamo_kinds()]


def remove_webhooks(cluster: Cluster, info: ReleaseInfo, report: Report) -> None:
    """Delete the release's admission webhook configurations, before anything else goes."""
    if info.webhook_configurations:
        names = [tuple(ref.split("/", 1)) for ref in info.webhook_configurations]
    else:
        sel = f"{_selector(info)},nvidia.com/dynamo-operator-namespace={info.namespace}"
        names = [
            (kind, obj["metadata"]["name"])
            for kind in WEBHOOK_KINDS
            for obj in cluster.list(collection_path(ADMISSION, kind), label_selector=sel)
        ]
    for kind, name in names:
        if kind not in WEBHOOK_KINDS:
            raise UninstallError(f"webhook configuration {kind}/{name}: kind not one of {WEBHOOK_KINDS}")
        cluster.delete(object_path(ADMISSION, kind, name))
        report.add(f"deleted {kind[:-1]} {name} (first, so nothing blocks deletes)")


def dynamo_crds(cluster: Cluster) -> list[Obj]:
    """The installed CRDs of Dynamo's kinds, each read by name (no other CRD is looked at)."""
    return [c for c in (cluster.get(object_path(CRD_API, CRDS, n)) for n in dynamo_crd_names()) if c]


def release_finalizers(cluster: Cluster, report: Report, namespaces: list[str] | None = None) -> None:
    """Take the operator's finalizer off Dynamo objects: with the operator gone nobody else would, and a
    namespace or CRD deletion would hang on it forever. Only Dynamo's kinds are listed (a kind whose CRD
    is not installed answers 404 and is skipped), and only ``FINALIZER`` is removed."""
    for kind in dynamo_kinds(namespaced_only=True):
        gv = kind.api_version(kind.storage_version)
        for ns in namespaces or [None]:
            try:
                items = cluster.list(collection_path(gv, kind.plural, ns))
            except ClusterError as exc:
                if exc.status == 404:
                    continue
                raise
            for obj in items:
                meta = obj["metadata"]
                if FINALIZER not in (meta.get("finalizers") or []):
                    continue
                meta["finalizers"] = [f for f in meta["finalizers"] if f != FINALIZER]
                cluster.replace(object_path(gv, kind.plural, meta["name"], meta.get("namespace")), obj)
                report.add(
                    f"released finalizer {FINALIZER} of {kind.plural} {meta.get('namespace')}/{meta['name']}"
                )


def remove_leases(cluster: Cluster, info: ReleaseInfo, report: Report) -> None:
    """The namespace-scope marker of a restricted release (present when its operator died without
    SIGTERM), and the leader-election Lease when nobody holds it or this release's pod did (cluster-wide
    operators share theirs: another release's holder keeps it). Both read and deleted by name."""
    coord = "coordination.k8s.io/v1"
    if info.restricted and info.target_namespace:
        path = object_path(coord, "leases", MARKER_LEASE, info.target_namespace)
        lease = cluster.get(path)
        holder = ((lease or {}).get("spec") or {}).get("holderIdentity") or ""
        if lease is not None and holder.startswith("namespace-restricted-operator-"):
            cluster.delete(path)
            report.add(f"deleted Lease {info.target_namespace}/{MARKER_LEASE} (held by {holder})")
    path = object_path(coord, "leases", info.leader_election_id, info.leader_election_namespace)
    lease = cluster.get(path)
    if lease is None:
        return
    holder = (lease.get("spec") or {}).get("holderIdentity") or ""
    ours = bool(info.deployment) and holder.startswith(info.deployment + "-")
    if holder and not ours:
        return  # another operator leads: only an unheld or our own lease goes
    cluster.delete(path)
    report.add(
        f"deleted Lease {info.leader_election_namespace}/{info.leader_election_id} "
        f"({'held by ' + holder if holder else 'unheld'})"
    )


def remove_secrets(cluster: Cluster, info: ReleaseInfo, report: Report, keep: bool) -> None:
    """The webhook and MPI SSH Secrets the hooks and operator made (never one a user made: those lack the
    managed-by label of the operator or of the hooks)."""
    for name in info.secrets:
        path = object_path("v1", "secrets", name, info.namespace)
        secret = cluster.get(path)
        if secret is None:
            continue
        labels = (secret.get("metadata") or {}).get("labels") or {}
        if labels.get(LABEL_MANAGED_BY) not in (OPERATOR_MANAGED_BY, HOOKS_MANAGED_BY):
            report.add(f"kept Secret {info.namespace}/{name} (not made by the chart's hooks or operator)")
        elif keep:
            report.add(f"kept Secret {info.namespace}/{name} (--keep-secrets)")
        else:
            cluster.delete(path)
            report.add(f"deleted Secret {info.namespace}/{name}")


def remove_crds(cluster: Cluster, report: Report, timeout: float = 120.0) -> None:
    """Delete Dynamo's CRDs (and with them every Dynamo object), refusing while an operator runs. Other
    nvidia.com CRDs are not Dynamo's and stay."""
    from .conflicts import discover

    others = discover(cluster, leader_election_id="dynamo.nvidia.com").operators
    if others:
        raise UninstallError(
            "the CRDs are shared by every Dynamo release and these operators still use them: "
            + "; ".join(o.describe() for o in others)
            + ". Uninstall them first, or drop --crds to keep the CRDs."
        )
    crds = dynamo_crds(cluster)
    release_finalizers(cluster, report)
    left = delete_crds(cluster, [c["metadata"]["name"] for c in crds], timeout, log=report.add)
    if left:
        raise UninstallError(
            f"CRDs still terminating after {timeout:.0f}s: {describe_left(cluster, left)}. "
            "InstanceDeletionFailed: the API server cannot list the CRD's objects (often a conversion "
            "webhook that no longer answers: reinstall the operator, or set the CRD's "
            "spec.conversion.strategy to None); InstanceDeletionCheck: objects still carry finalizers "
            "(kubectl get NAME -A, then remove each one's metadata.finalizers). Then run this again."
        )
    for crd in crds:
        report.add(f"deleted CustomResourceDefinition {crd['metadata']['name']}")


def after_helm_uninstall(
    cluster: Cluster, info: ReleaseInfo, report: Report, *, keep_secrets: bool, crds: bool
) -> None:
    """Everything after `helm uninstall`; a ClusterError names the API call that failed."""
    namespaces = [info.target_namespace] if info.restricted and info.target_namespace else None
    release_finalizers(cluster, report, namespaces)
    remove_leases(cluster, info, report)
    remove_secrets(cluster, info, report, keep_secrets)
    if crds:
        remove_crds(cluster, report)
