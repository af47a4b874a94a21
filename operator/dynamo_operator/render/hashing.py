"""Content hash of a desired child, stamped as an annotation so controllers write only on change."""

from __future__ import annotations

import hashlib
import json

from .names import ANN_SPEC_HASH, WORKER_TYPES

_SKIP = {"apiVersion", "kind", "metadata", "status"}


def content_hash(obj: dict) -> str:
    """SHA-256 over the content (``spec``, or every top-level field but apiVersion/kind/metadata/status)
    plus the object's labels and annotations (the hash annotation itself excluded)."""
    meta = obj.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != ANN_SPEC_HASH}
    content = {"spec": obj["spec"]} if "spec" in obj else {k: v for k, v in obj.items() if k not in _SKIP}
    doc = {"content": content, "labels": meta.get("labels") or {}, "annotations": annotations}
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def stamp(obj: dict) -> dict:
    """Set ``nvidia.com/dynamo-spec-hash`` on ``obj`` (in place) and return it."""
    meta = obj.setdefault("metadata", {})
    annotations = meta.setdefault("annotations", {})
    annotations.pop(ANN_SPEC_HASH, None)
    annotations[ANN_SPEC_HASH] = content_hash(obj)
    return obj


# -- worker hash -------------------------------------------------------------------------------------------

WORKER_HASH_VERSION = "dgd-worker-rollout-v2"
# the DGD annotation holding the worker hash whose workers are the active (fully rolled out) revision
ANN_CURRENT_WORKER_HASH = "nvidia.com/current-worker-hash"
# component fields that define what a worker runs; replicas, scalingAdapter, modelRef, eppConfig and
# topologyConstraint are left out so scaling or routing changes never roll the workers
_WORKER_FIELDS = (
    "globalDynamoNamespace",
    "podTemplate",
    "multinode",
    "sharedMemorySize",
    "frontendSidecar",
    "compilationCache",
    "experimental",
)


def worker_hash(dgd: dict) -> str:
    """8 hex chars naming the revision of a (v1beta1) DGD's workers: SHA-256 over the backend, the graph
    env and each worker component's pod-defining fields, by component name.  Stable: the same worker
    specs always give the same hash, whatever the replicas or the order of the components."""
    spec = dgd.get("spec") or {}
    workers = {
        str(c.get("name")): {k: c[k] for k in _WORKER_FIELDS if c.get(k) is not None}
        for c in spec.get("components") or []
        if c.get("type") in WORKER_TYPES
    }
    doc = {
        "version": WORKER_HASH_VERSION,
        "backendFramework": spec.get("backendFramework"),
        "env": spec.get("env") or [],
        "workers": dict(sorted(workers.items())),
    }
    policy = (spec.get("experimental") or {}).get("kvTransferPolicy")
    if policy:  # it sets the workers' env and volumes (render/kvtransfer.py); absent, the hash is unchanged
        doc["kvTransferPolicy"] = policy
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:8]


# checkpoint fields that change what a checkpoint Job captures; the rest (enabled, mode, startupPolicy,
# deletionPolicy, checkpointRef, identity) is lifecycle, and changing it must not capture afresh
_CAPTURE_FIELDS = ("targetContainerName", "job")


def component_revision(dgd: dict, component: dict) -> str:
    """8 hex chars naming what one (v1beta1) component runs: the worker hash's inputs for that component
    alone (any type), with its checkpoint settings reduced to what a capture depends on."""
    spec = dgd.get("spec") or {}
    fields = {k: component[k] for k in _WORKER_FIELDS if component.get(k) is not None}
    experimental = dict(fields.get("experimental") or {})
    if isinstance(experimental.get("checkpoint"), dict):
        cp = experimental["checkpoint"]
        experimental["checkpoint"] = {k: cp[k] for k in _CAPTURE_FIELDS if cp.get(k) is not None}
    if experimental:
        fields["experimental"] = experimental
    doc = {
        "version": WORKER_HASH_VERSION,
        "backendFramework": spec.get("backendFramework"),
        "env": spec.get("env") or [],
        "component": {"name": str(component.get("name")), "type": component.get("type"), **fields},
    }
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:8]
