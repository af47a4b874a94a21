"""Checkpoint IDs and what a component restores from (pure, no imports of the pod builders).

One ID names a checkpoint artifact: the checkpoint Job writes it under ``<basePath>/<id>`` and a restoring
pod finds it through ``DYN_CHECKPOINT_PATH`` + ``DYN_CHECKPOINT_HASH``. Where it comes from:

* a **graph-managed (automatic)** checkpoint: 32 hex digits of the SHA-256 of the JSON of {namespace,
  dgdName, dgdUID, componentName, workerHash} (upstream's DGD-scoped ID: the DGD's UID keeps another graph
  of the same name from reusing it; ``workerHash`` is here the component's own revision, so a change of
  what the component runs captures afresh). It is the label ``nvidia.com/snapshot-checkpoint-id`` of the
  DynamoCheckpoint the graph creates;
* a **standalone** DynamoCheckpoint: the identity hash, 16 hex digits of the SHA-256 of its normalised
  ``spec.identity`` (tensor/pipeline parallel sizes default to 1, empty fields left out, in upstream's
  field order), so the same identity always names the same artifact;
* once the DynamoCheckpoint controller recorded it, ``status.checkpointID`` (what its Job used).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from .checkpoint_stall import STALL_REASONS

LABEL_CHECKPOINT_ID = "nvidia.com/snapshot-checkpoint-id"
FAILED = "Failed"
# on a DCD its graph resolved a checkpoint for: the ID its pods restore (the graph knows it before the
# DynamoCheckpoint reaches any cache)
ANN_CHECKPOINT_ID = "nvidia.com/dynamo-checkpoint-id"
READY = "Ready"

_IDENTITY_FIELDS = (
    "model",
    "backendFramework",
    "dynamoVersion",
    "tensorParallelSize",
    "pipelineParallelSize",
    "dtype",
    "maxModelLen",
    "extraParameters",
)
_ALWAYS = frozenset({"model", "backendFramework", "tensorParallelSize", "pipelineParallelSize"})


def _go_json(doc: dict) -> bytes:
    """Compact JSON as Go's encoding/json writes a struct (keys in declaration order, no spaces)."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def identity_hash(identity: Mapping | None) -> str:
    """16 hex digits naming a DynamoCheckpointIdentity (the checkpoint ID of a standalone checkpoint)."""
    ident = dict(identity or {})
    ident["tensorParallelSize"] = int(ident.get("tensorParallelSize") or 1)
    ident["pipelineParallelSize"] = int(ident.get("pipelineParallelSize") or 1)
    ident.setdefault("model", "")
    ident.setdefault("backendFramework", "")
    doc = {k: ident[k] for k in _IDENTITY_FIELDS if k in _ALWAYS or ident.get(k)}
    if "extraParameters" in doc:
        doc["extraParameters"] = dict(sorted(doc["extraParameters"].items()))
    return hashlib.sha256(_go_json(doc)).hexdigest()[:16]


def dgd_checkpoint_id(namespace: str, dgd_name: str, dgd_uid: str, component: str, revision: str) -> str:
    """32 hex digits naming a graph-managed checkpoint of ``component`` at ``revision``."""
    doc = {"namespace": namespace, "dgdName": dgd_name, "dgdUID": dgd_uid, "componentName": component}
    doc["workerHash"] = revision
    doc = {k: v for k, v in doc.items() if v or k in ("dgdName", "componentName")}
    return hashlib.sha256(_go_json(doc)).hexdigest()[:32]


def checkpoint_id_of(ckpt: Mapping) -> str:
    """The ID of a DynamoCheckpoint: the one its controller recorded, else its label (graph-managed),
    else its identity hash."""
    recorded = (ckpt.get("status") or {}).get("checkpointID")
    if recorded:
        return str(recorded)
    label = ((ckpt.get("metadata") or {}).get("labels") or {}).get(LABEL_CHECKPOINT_ID)
    if label:
        return str(label)
    return identity_hash((ckpt.get("spec") or {}).get("identity"))


def phase_of(ckpt: Mapping | None) -> str | None:
    return ((ckpt or {}).get("status") or {}).get("phase")


def is_ready(ckpt: Mapping | None) -> bool:
    return phase_of(ckpt) == READY


def problem(ckpt: Mapping | None) -> tuple[str, str] | None:
    """(reason, message) of a checkpoint that failed or whose Job is stalled (``checkpoint_stall``), as its
    controller recorded them; None while it is fine (or unknown). What a graph waiting for it repeats."""
    st = (ckpt or {}).get("status") or {}
    cond = next((c for c in st.get("conditions") or [] if c.get("type") == READY), {})
    reason = cond.get("reason") or ""
    if st.get("phase") == FAILED:
        return reason or FAILED, str(st.get("message") or cond.get("message") or "")
    if reason in STALL_REASONS:
        return reason, str(cond.get("message") or st.get("message") or "")
    return None
