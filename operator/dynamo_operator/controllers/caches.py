"""What the graph family's caches keep of each object: only what their readers use.

A cached object is read three ways: by event handlers and indexes (metadata), by status (a Deployment's
replica counts, conditions and pod-template labels; a pod's node and phase), and by the child syncer
(``sync.ChildSyncer``: a child whole, to compare it with what is rendered and to write it back). At 5000
graphs every cached Deployment and pod held its whole pod template: two thirds of the operator's memory.

* **Pods** (``component_pods``: how many are scheduled): name, component, deletion, node and phase.
  Nothing reads more.
* **Deployments**, **Services**, **ServiceAccounts** and **RoleBindings**: a lean view for the handlers,
  indexes and status (metadata; a Deployment's replica counts and revision), and the whole object packed
  (``informer.packed``; a few hundred bytes) for the syncer, which unpacks it (``informer.unpack``) when it
  compares or writes a child. A lean view cannot be written back by mistake: its packed entry is bytes,
  which JSON refuses.

* **Secrets** of the pull-secret discovery: name and registry hosts, never a credential.
* **DynamoGraphDeployments** and **DynamoComponentDeployments**: metadata and status, the whole object
  packed; their controllers render from the spec in v1beta1, which ``store.to_internal`` unpacks and
  converts once per cached version.

Other kinds keep the whole object (``informer.compact``): they are few or small.
"""

from __future__ import annotations

from dynamo_operator.render import kvtransfer, names
from dynamo_operator.render.pullsecrets import lean_secret
from dynamo_operator.runtime.client import (
    DEPLOYMENTS,
    PODS,
    ROLEBINDINGS,
    SERVICEACCOUNTS,
    SERVICES,
    ResourceDescriptor,
)
from dynamo_operator.runtime.informer import Transform, compact, packed

from . import store

# what handlers, indexes and status read of a child's metadata (owner references: the owner index and
# the owners' queues; labels: the graph a child belongs to, the component type for the gauges)
_METADATA = ("name", "namespace", "uid", "resourceVersion", "generation", "labels", "ownerReferences")
_OWNED = ("name", "namespace", "uid", "resourceVersion", "ownerReferences")
_TIMESTAMPS = ("lastUpdateTime", "lastTransitionTime")
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _metadata(whole: dict, keys: tuple[str, ...] = _METADATA) -> dict:
    md = whole.get("metadata") or {}
    out = {k: md[k] for k in keys if k in md}
    if md.get("deletionTimestamp"):
        out["deletionTimestamp"] = md["deletionTimestamp"]
    return out


def _kind(whole: dict) -> dict:
    return {"apiVersion": whole.get("apiVersion"), "kind": whole.get("kind")}


def lean_pod(obj: dict) -> dict:
    """A component's pod as ``component_pods`` reads it: its component (the selector label), scheduled on a
    node, not finished, not deleted; and as the topology controller reads it: the KV-transfer source
    annotations and the topology labels already copied (``render.kvtransfer``)."""
    md, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    labels = md.get("labels") or {}
    kept = {
        k: v for k, v in labels.items() if k == names.LABEL_SELECTOR or k.startswith(kvtransfer.LABEL_PREFIX)
    }
    annotations = {
        k: v for k, v in (md.get("annotations") or {}).items() if k in kvtransfer.SOURCE_ANNOTATIONS
    }
    metadata = {**_metadata(obj, ("name", "namespace", "resourceVersion")), "labels": kept}
    if annotations:
        metadata["annotations"] = annotations
    lean = {
        **_kind(obj),
        "metadata": metadata,
        "spec": {"nodeName": spec["nodeName"]} if spec.get("nodeName") else {},
        "status": {"phase": status["phase"]} if status.get("phase") else {},
    }
    return compact(lean)


def _deployment_view(whole: dict) -> dict:
    """The replicas, the pod template's revision (worker hash label, restart annotation) and the status
    without timestamps: ``status.deployment_readiness``, ``status.revision_mismatch``, the gauges."""
    spec, status = whole.get("spec") or {}, dict(whole.get("status") or {})
    template = (spec.get("template") or {}).get("metadata") or {}
    revision = {
        k: v
        for k, v in (
            ("labels", _only(template.get("labels"), names.LABEL_WORKER_HASH)),
            ("annotations", _only(template.get("annotations"), names.ANN_RESTART_AT)),
        )
        if v
    }
    # of the conditions, an unavailable one (its message says why): ``deployment_readiness`` reads no other
    unavailable = [
        {k: v for k, v in c.items() if k not in _TIMESTAMPS}
        for c in status.pop("conditions", None) or []
        if c.get("type") == "Available" and c.get("status") == "False"
    ]
    if unavailable:
        status["conditions"] = unavailable
    view = {**_kind(whole), "metadata": _metadata(whole), "spec": {}}
    if revision:
        view["spec"]["template"] = {"metadata": revision}
    if "replicas" in spec:
        view["spec"]["replicas"] = spec["replicas"]
    view["status"] = status
    return view


def _only(values: dict | None, key: str) -> dict:
    return {key: values[key]} if values and key in values else {}


def _metadata_view(whole: dict) -> dict:
    """Metadata: nothing but the syncer reads the rest of a ServiceAccount or a RoleBinding."""
    return {**_kind(whole), "metadata": _metadata(whole)}


def _service_view(whole: dict) -> dict:
    """Its name and owners: what maps its events to its owner (the syncer unpacks the rest)."""
    return {**_kind(whole), "metadata": _metadata(whole, _OWNED)}


def _graph_view(whole: dict) -> dict:
    """A graph without its spec: its controller reads it converted to v1beta1, which ``store.to_internal``
    unpacks (and remembers, keyed by the packed entry); handlers read metadata (the worker-hash annotation
    among them), the gauges its state and a request following the graph its replica counts."""
    md = dict(whole.get("metadata") or {})
    annotations = md.get("annotations") or {}
    if LAST_APPLIED in annotations:  # kubectl's copy of the whole manifest: packed, not kept twice
        md["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
    status = whole.get("status") or {}
    view = {**_kind(whole), "metadata": md, "status": {}}
    if "state" in status:  # the gauges count graphs by state
        view["status"]["state"] = status["state"]
    if status.get("services"):  # a request following the graph sums its replicas (``dgdr.deployment_info``)
        counts = ("replicas", "readyReplicas", "availableReplicas")
        view["status"]["services"] = {
            name: {k: s[k] for k in counts if k in s} for name, s in status["services"].items()
        }
    return view


def _component_view(whole: dict) -> dict:
    """A component without its spec (read converted, as a graph's) and of its status the availability the
    gauges count; its graph's status reads the rest converted too."""
    available = [
        {k: c[k] for k in ("type", "status") if k in c}
        for c in (whole.get("status") or {}).get("conditions") or []
        if c.get("type") == "Available"
    ]
    return {**_kind(whole), "metadata": _metadata(whole), "status": {"conditions": available}}


def pull_secret(secret: dict) -> dict:
    """A dockerconfigjson Secret as the pull-secret discovery reads it: its registry hosts, no data
    (``render.pullsecrets.lean_secret``)."""
    return compact(lean_secret(secret))


TRANSFORMS: dict[ResourceDescriptor, Transform] = {
    store.DGD: packed(_graph_view),
    store.DCD: packed(_component_view),
    PODS: lean_pod,
    DEPLOYMENTS: packed(_deployment_view),
    SERVICES: packed(_service_view),
    SERVICEACCOUNTS: packed(_metadata_view),
    ROLEBINDINGS: packed(_metadata_view),
}
