"""PodSnapshot and PodSnapshotContent (v1alpha1 only): refused when created.

Upstream, a DynamoCheckpoint makes the operator prepare a pod and create a PodSnapshot; a snapshot node
agent (a DaemonSet) binds it to a cluster-scoped PodSnapshotContent and dumps the container. This platform
runs no such agent: a DynamoCheckpoint's Job writes the checkpoint itself (``docs/checkpoints.md``), so
nothing would ever bind, dump or report on a PodSnapshot, and a PodSnapshotContent would describe a dump
that never happens. Both are refused at creation, saying what to use instead; updates are let through so
objects made before (or by another installation) can still be cleaned up.
"""

from __future__ import annotations

from .field import FORBIDDEN, ErrorList
from .shared import d

_INSTEAD = (
    "checkpoint a component with a DynamoCheckpoint (or a component's checkpoint in its graph), whose Job "
    "writes the checkpoint"
)
_WHY = {
    "PodSnapshot": "pod snapshots are not captured by this operator: it runs no snapshot node agent to bind "
    "and dump them, so this one would stay pending forever; ",
    "PodSnapshotContent": "pod snapshot contents are not produced by this operator: it runs no snapshot "
    "node agent that would dump this pod; ",
}


def validate_pod_snapshot(c: ErrorList, kind: str, obj: dict, old: dict | None) -> None:
    """Refuse a new PodSnapshot / PodSnapshotContent at ``spec.source``, what asks for a capture (the CRD
    requires it, so every PodSnapshot the API server would store has one)."""
    if old is None and d(obj.get("spec")).get("source") is not None:
        c.add(("spec", "source"), FORBIDDEN, _WHY[kind] + _INSTEAD)
