"""A checkpoint-enabled component's restore: the checkpoint it restores from and the WaitForCheckpoint gate.

Every pod of a component with ``checkpoint.enabled`` is restore-shaped (``env.checkpoint_env``, the
checkpoint PVC in ``pod._operator_volumes``) with ``SKIP_WAIT_FOR_CHECKPOINT``: it looks once for the
artifact ``DYN_CHECKPOINT_HASH`` names and starts cold when it is not there yet, so the pod template
never changes when the checkpoint becomes Ready (``startupPolicy: Immediate``: later pods restore).
``startupPolicy: WaitForCheckpoint`` instead holds the component at zero replicas until the checkpoint's
``status.phase`` is Ready (``desired_replicas`` in ``component.py``, the DGD's DCDs and Grove cliques).
"""

from __future__ import annotations

from dataclasses import dataclass

from .checkpoint_ids import ANN_CHECKPOINT_ID, checkpoint_id_of, identity_hash, is_ready, phase_of, problem
from .context import RenderContext
from .errors import RenderError
from .info import ComponentInfo

WAIT_FOR_CHECKPOINT = "WaitForCheckpoint"
CHECKPOINT_VOLUME = "checkpoint-storage"  # the operator's checkpoint PVC volume in a checkpoint-enabled pod


def require_enabled(ctx: RenderContext, obj: dict, path: str) -> None:
    """Checkpoint/restore acts only while the operator configuration enables it (admission refuses a new
    checkpoint-enabled component otherwise; one admitted before the switch went off lands here)."""
    if not ctx.config("checkpoint", "enabled"):
        raise RenderError(
            obj,
            path,
            "checkpointing is disabled in the operator configuration",
            "set checkpoint.enabled: true in the OperatorConfiguration (Helm: "
            "dynamo-operator.checkpoint.enabled=true), or remove the checkpoint",
        )


def _find(info: ComponentInfo, ctx: RenderContext) -> tuple[str | None, dict | None]:
    """(name, live object) of the DynamoCheckpoint the component uses: its ``checkpointRef``, or (a DCD
    written by hand with only an identity) the one whose ID is that identity's hash."""
    cp = info.checkpoint or {}
    ref = cp.get("checkpointRef")
    if ref:
        return str(ref), ctx.checkpoints.get(str(ref))
    if cp.get("identity"):
        want = identity_hash(cp["identity"])
        for name, obj in sorted(ctx.checkpoints.items()):
            if checkpoint_id_of(obj) == want:
                return name, obj
    return None, None


def restore_id(info: ComponentInfo, ctx: RenderContext) -> str | None:
    """The checkpoint ID the component's pods restore (``DYN_CHECKPOINT_HASH``): the one its graph
    resolved (DCD annotation), the referenced DynamoCheckpoint's, or the identity hash; None while a
    referenced checkpoint is not known yet. A component with neither a reference nor an identity cannot
    say which checkpoint it restores: a RenderError (admission refuses it too)."""
    cp = info.checkpoint
    if not cp:
        return None
    require_enabled(ctx, info.dcd, "spec.experimental.checkpoint.enabled")
    resolved = ((info.dcd.get("metadata") or {}).get("annotations") or {}).get(ANN_CHECKPOINT_ID)
    if resolved:
        return str(resolved)
    if cp.get("identity") and not cp.get("checkpointRef"):
        return identity_hash(cp["identity"])
    name, obj = _find(info, ctx)
    if name is None:
        raise RenderError(
            info.dcd,
            "spec.experimental.checkpoint",
            "checkpointing is enabled but names no checkpoint: a DynamoComponentDeployment does not create "
            "checkpoints",
            "set checkpointRef to an existing DynamoCheckpoint, or enable checkpoint on the "
            "DynamoGraphDeployment component (the graph creates and manages the checkpoint)",
        )
    return checkpoint_id_of(obj) if obj is not None else None


def gate(info: ComponentInfo, ctx: RenderContext) -> str | None:
    """Why the component's replicas are held at zero (``startupPolicy: WaitForCheckpoint`` and its
    checkpoint is not Ready), or None."""
    cp = info.checkpoint
    if not cp or cp.get("startupPolicy") != WAIT_FOR_CHECKPOINT:
        return None
    name, obj = _find(info, ctx)
    if is_ready(obj):
        return None
    where = f"DynamoCheckpoint {info.namespace}/{name}" if name else "its checkpoint"
    state = f"phase {phase_of(obj) or 'Pending'}" if obj is not None else "not created yet"
    cause = problem(obj)
    if cause is not None:  # the checkpoint's own reason: why the wait will not end by itself
        state += f", {cause[0]}: {cause[1]}"
    return f"waiting for {where} to be Ready ({state}; startupPolicy WaitForCheckpoint)"


@dataclass(frozen=True)
class Clash:
    """A name of a checkpoint-enabled component that collides with the operator's checkpoint volume."""

    path: tuple  # relative to the component spec
    detail: str
    fix: str


def volume_clashes(spec: dict) -> list[Clash]:
    """A pod volume, or a ``main`` mount, named ``checkpoint-storage`` in a checkpoint-enabled component
    would be silently replaced by the operator's checkpoint PVC (sidecars may mount the operator's volume
    by that name: a helper such as a GMS saver reads the checkpoints)."""
    cp = (spec.get("experimental") or {}).get("checkpoint")
    if not isinstance(cp, dict) or not cp.get("enabled"):
        return []
    pod = ((spec.get("podTemplate") or {}).get("spec")) or {}
    out: list[Clash] = []
    for i, v in enumerate(pod.get("volumes") or []):
        if isinstance(v, dict) and v.get("name") == CHECKPOINT_VOLUME:
            out.append(
                Clash(
                    ("podTemplate", "spec", "volumes", i, "name"),
                    f"{CHECKPOINT_VOLUME!r} is the name of the operator's checkpoint volume (the checkpoint "
                    "PVC it adds because checkpoint.enabled is true), which would replace this volume",
                    "rename this volume (and the mounts that use it)",
                )
            )
    for j, c in enumerate(pod.get("containers") or []):
        if not isinstance(c, dict) or c.get("name") != "main":
            continue
        for k, m in enumerate(c.get("volumeMounts") or []):
            if isinstance(m, dict) and m.get("name") == CHECKPOINT_VOLUME:
                out.append(
                    Clash(
                        ("podTemplate", "spec", "containers", j, "volumeMounts", k, "name"),
                        f"{CHECKPOINT_VOLUME!r} is the operator's checkpoint volume, which it mounts in main "
                        "at checkpoint.storage.pvc.basePath itself, replacing this mount",
                        "remove this mount, or rename your volume and mount that",
                    )
                )
    return out
