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
3. ``after``: release Dynamo finalizers left on Dynamo objects, delete the namespace-scope marker and an
   unheld leader-election Lease of this release, and the hook-made Secrets unless asked to keep them;
4. optionally (``remove_crds``) the CRDs, which deletes every Dynamo object of the cluster with them.

Every step is idempotent: a second run after a partial failure finishes the job.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dynamo_operator.labels import LABEL_MANAGED_BY
from dynamo_operator.labels import MANAGED_BY as OPERATOR_MANAGED_BY

from .cluster import CRD_API, CRDS, Cluster, ClusterError, Obj, collection_path, object_path
from .crd_delete import delete_crds, describe_left, storage_version
from .secrets import MANAGED_BY as HOOKS_MANAGED_BY
from .settings import DEFAULT_MPI_SECRET, DEFAULT_WEBHOOK_SECRET

WEBHOOK_KINDS = ("validatingwebhookconfigurations", "mutatingwebhookconfigurations")
ADMISSION = "admissionregistration.k8s.io/v1"
DYNAMO_GROUP = "nvidia.com"
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


def remove_webhooks(cluster: Cluster, info: ReleaseInfo, report: Report) -> None:
    """Delete the release's admission webhook configurations, before anything else goes."""
    sel = f"{_selector(info)},nvidia.com/dynamo-operator-namespace={info.namespace}"
    for kind in WEBHOOK_KINDS:
        for obj in cluster.list(collection_path(ADMISSION, kind), label_selector=sel):
            cluster.delete(object_path(ADMISSION, kind, obj["metadata"]["name"]))
            report.add(f"deleted {kind[:-1]} {obj['metadata']['name']} (first, so nothing blocks deletes)")


def dynamo_crds(cluster: Cluster) -> list[Obj]:
    return [
        c
        for c in cluster.list(collection_path(CRD_API, CRDS))
        if (c.get("spec") or {}).get("group") == DYNAMO_GROUP
    ]


def release_finalizers(cluster: Cluster, report: Report, namespaces: list[str] | None = None) -> None:
    """Take ``nvidia.com/`` finalizers off Dynamo objects: with the operator gone nobody else would, and
    a namespace or CRD deletion would hang on them forever."""
    for crd in dynamo_crds(cluster):
        gv = f"{DYNAMO_GROUP}/{storage_version(crd)}"
        plural = crd["spec"]["names"]["plural"]
        for ns in namespaces or [None]:
            for obj in cluster.list(collection_path(gv, plural, ns)):
                meta = obj["metadata"]
                ours = [f for f in meta.get("finalizers") or [] if f.startswith(DYNAMO_GROUP + "/")]
                if not ours:
                    continue
                meta["finalizers"] = [f for f in meta["finalizers"] if f not in ours]
                cluster.replace(object_path(gv, plural, meta["name"], meta.get("namespace")), obj)
                report.add(f"released finalizers {ours} of {plural} {meta.get('namespace')}/{meta['name']}")


def remove_leases(cluster: Cluster, info: ReleaseInfo, report: Report) -> None:
    """The namespace-scope marker of a restricted release (present when its operator died without
    SIGTERM), and the leader-election Lease when nobody holds it or this release's pod did."""
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
    if info.restricted or (holder and not ours):
        return  # shared by every cluster-wide operator: only an unheld or our own lease goes
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
    """Delete every nvidia.com CRD (and with it every Dynamo object), refusing while an operator runs."""
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
    try:
        release_finalizers(cluster, report, namespaces)
    except ClusterError as exc:
        if exc.status != 404:
            raise
    remove_leases(cluster, info, report)
    remove_secrets(cluster, info, report, keep_secrets)
    if crds:
        remove_crds(cluster, report)
