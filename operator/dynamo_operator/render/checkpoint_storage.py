"""The checkpoint storage, the pure part: the claim the operator creates in a workload namespace when
``checkpoint.storage.pvc.create`` is set, and the Job that removes a deleted checkpoint's artifacts.

**The claim** (``storage_claim``): ``checkpoint.storage.pvc.pvcName`` in the namespace of a checkpoint
user (a graph or component with a checkpoint, a DynamoCheckpoint about to run its Job), created when
missing, as upstream does: ``size`` (required with ``create``), ``accessMode`` (``ReadWriteMany`` when
unset; ``ReadWriteOnce`` or ``ReadWriteMany``), ``storageClassName`` (the cluster's default when unset),
filesystem mode, the labels ``app.kubernetes.io/component: checkpoint-storage`` and the operator's
managed-by label. It has no owner and is never updated or deleted: it holds every checkpoint of the
namespace, which outlive any one graph.

**The cleanup Job** (``cleanup_job``): when an automatically created DynamoCheckpoint (the graph's,
annotation ``nvidia.com/dynamo-auto-checkpoint``) is deleted, a Job ``checkpoint-cleanup-<id>`` running
``checkpoint.cleanupImage`` (default ``busybox:1.36``, upstream's; it needs a POSIX shell and ``rm``)
mounts the claim at the base path and removes ``<basePath>/<id>``, refusing any path that is not directly
under the base path. Best effort: one attempt (``backoffLimit: 0``, ``activeDeadlineSeconds: 300``), so a
deletion is never held longer than that; the controller reports a failure and lets the checkpoint go.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dynamo_operator.api.config import CHECKPOINT_ACCESS_MODES, DEFAULT_CHECKPOINT_CLEANUP_IMAGE
from dynamo_operator.labels import LABEL_APP_COMPONENT

from . import names
from .checkpoint import DEFAULT_BASE_PATH, LABEL_CHECKPOINT
from .restore import CHECKPOINT_VOLUME as VOLUME

DEFAULT_ACCESS_MODE = CHECKPOINT_ACCESS_MODES[1]  # ReadWriteMany, upstream's when unset
COMPONENT = "checkpoint-storage"
CLEANUP_PREFIX = "checkpoint-cleanup-"
CLEANUP_DEADLINE_SECONDS = 300
CLEANUP_TTL_SECONDS = 300
LABEL_CLEANUP = "nvidia.com/dynamo-checkpoint-cleanup"
# removes exactly <base>/<id>: anything else (an ID with a slash or dots) is refused by the script too
CLEANUP_SCRIPT = """set -eu
base="${CHECKPOINT_BASE_PATH%/}"
target="${base}/${CHECKPOINT_ID}"
case "${CHECKPOINT_ID}" in
  ""|.|..|*/*) echo "refusing to remove ${target}" >&2; exit 1 ;;
esac
rm -rf -- "${target}"
echo "removed ${target}"
"""
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def claim_for(obj: dict, components: list, checkpoint: Mapping[str, Any] | None) -> dict | None:
    """The claim a checkpoint user ``obj`` (a graph with ``components``, a DCD with its spec as the one
    component, a DynamoCheckpoint with none) has the operator create, or None."""
    if components and not uses_checkpoints(components):
        return None
    return storage_claim(((obj.get("metadata") or {}).get("namespace")) or "default", checkpoint)


def uses_checkpoints(components: list) -> bool:
    """A component of these (v1beta1 components, or a DCD's spec) restores or captures a checkpoint, so its
    pods mount the namespace's checkpoint claim."""
    return any(
        isinstance(c, dict) and ((c.get("experimental") or {}).get("checkpoint") or {}).get("enabled")
        for c in components
    )


def pvc_settings(checkpoint: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``checkpoint.storage.pvc`` of the (effective) configuration's ``checkpoint`` section."""
    storage = (checkpoint or {}).get("storage") or {}
    pvc = storage.get("pvc") if isinstance(storage, Mapping) else None
    return dict(pvc) if isinstance(pvc, Mapping) else {}


def storage_claim(namespace: str, checkpoint: Mapping[str, Any] | None) -> dict | None:
    """The claim to create in ``namespace`` when it is missing, or None (checkpointing is off, or
    ``create`` is not set); ``checkpoint``: the effective configuration's ``checkpoint`` section."""
    pvc = pvc_settings(checkpoint)
    if not ((checkpoint or {}).get("enabled") and pvc.get("create")):
        return None
    spec: dict = {
        "accessModes": [pvc.get("accessMode") or DEFAULT_ACCESS_MODE],
        "volumeMode": "Filesystem",
        "resources": {"requests": {"storage": str(pvc["size"])}},
    }
    if pvc.get("storageClassName"):
        spec["storageClassName"] = pvc["storageClassName"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": pvc["pvcName"],
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/name": "dynamo",
                LABEL_APP_COMPONENT: COMPONENT,
                names.LABEL_MANAGED_BY: names.MANAGED_BY,
            },
        },
        "spec": spec,
    }


def idle_claim_settings(checkpoint: Mapping[str, Any] | None) -> list[str]:
    """The claim settings set without ``create`` (the reference: "used when Create is true"): accepted, as
    upstream does, and named in the operator's startup log as having no effect."""
    pvc = pvc_settings(checkpoint)
    if pvc.get("create"):
        return []
    return [f"checkpoint.storage.pvc.{k}" for k in ("size", "storageClassName", "accessMode") if pvc.get(k)]


def cleanup_job_name(checkpoint_id: str) -> str | None:
    """``checkpoint-cleanup-<id>``, or None when the ID cannot name both a Job and one directory."""
    name = CLEANUP_PREFIX + checkpoint_id
    return name if _DNS_LABEL.match(checkpoint_id) and len(name) <= 63 else None


def cleanup_job(ckpt: dict, checkpoint_id: str, checkpoint: Mapping[str, Any] | None) -> dict | None:
    """The Job removing ``<basePath>/<checkpoint_id>`` from the claim (None: the ID is not a plain
    directory name)."""
    name = cleanup_job_name(checkpoint_id)
    if name is None:
        return None
    pvc = pvc_settings(checkpoint)
    base = str(pvc.get("basePath") or DEFAULT_BASE_PATH)
    image = str((checkpoint or {}).get("cleanupImage") or DEFAULT_CHECKPOINT_CLEANUP_IMAGE)
    labels = {
        names.LABEL_MANAGED_BY: names.MANAGED_BY,
        LABEL_CHECKPOINT: ckpt["metadata"]["name"],
        LABEL_CLEANUP: checkpoint_id,
    }
    container = {
        "name": "cleanup",
        "image": image,
        "command": ["/bin/sh", "-c", CLEANUP_SCRIPT],
        "env": [
            {"name": "CHECKPOINT_BASE_PATH", "value": base},
            {"name": "CHECKPOINT_ID", "value": checkpoint_id},
        ],
        "volumeMounts": [{"name": VOLUME, "mountPath": base}],
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ckpt["metadata"]["namespace"], "labels": labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": CLEANUP_DEADLINE_SECONDS,
            "ttlSecondsAfterFinished": CLEANUP_TTL_SECONDS,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [container],
                    "volumes": [{"name": VOLUME, "persistentVolumeClaim": {"claimName": pvc["pvcName"]}}],
                },
            },
        },
    }


__all__ = [
    "CLEANUP_PREFIX",
    "claim_for",
    "cleanup_job",
    "cleanup_job_name",
    "idle_claim_settings",
    "pvc_settings",
    "storage_claim",
    "uses_checkpoints",
]
