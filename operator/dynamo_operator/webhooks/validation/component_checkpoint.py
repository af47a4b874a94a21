"""A component's ``experimental.checkpoint`` (v1alpha1 ``checkpoint``) in a DGD or a DCD: what the operator
can act on, the rest refused with the field and the fix (``render/graph_checkpoint.py`` and
``render/restore.py`` act on it; their volume rule is this module's too)."""

from __future__ import annotations

from typing import Any

from dynamo_operator.render.graph import detect_backend
from dynamo_operator.render.graph_checkpoint import CHECKPOINT_BACKENDS, job_template_problem
from dynamo_operator.render.names import MAIN_CONTAINER
from dynamo_operator.render.restore import CHECKPOINT_VOLUME, volume_clashes

from .field import FORBIDDEN, INVALID, NOT_FOUND, REQUIRED, ErrorList, Path


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _containers(comp: dict) -> list[str]:
    pod = _d(_d(comp.get("podTemplate")).get("spec"))
    return [str(c.get("name")) for c in pod.get("containers") or [] if isinstance(c, dict) and c.get("name")]


def check_checkpoint(
    c: ErrorList,
    comp: dict,
    base: Path,
    *,
    in_dgd: bool,
    multinode: bool,
    backend: Any,
    checkpoint_enabled: bool,
    old_comp: dict | None,
) -> None:
    cp = _d(_d(comp.get("experimental")).get("checkpoint"))
    if cp.get("enabled") is not True:
        return
    path = (*base, "experimental", "checkpoint")
    was = _d(_d(_d(old_comp).get("experimental")).get("checkpoint")).get("enabled") is True
    if not checkpoint_enabled and not was:
        c.add(
            (*path, "enabled"),
            FORBIDDEN,
            "checkpointing is disabled in the operator configuration; set checkpoint.enabled: true in the "
            "OperatorConfiguration (Helm: dynamo-operator.checkpoint.enabled=true), or remove the checkpoint",
        )
    if multinode:
        c.add(
            path,
            FORBIDDEN,
            "a checkpoint captures and restores one pod, and this component runs across several nodes "
            "(multinode); remove the checkpoint or multinode",
        )
    ref = cp.get("checkpointRef")
    if ref and cp.get("job") is not None:
        c.add(
            (*path, "job"),
            FORBIDDEN,
            "checkpoint.job cannot be set when checkpointRef is specified (job customizes the checkpoint "
            "Job the graph runs itself; checkpointRef restores an existing checkpoint); remove one of them",
        )
    if cp.get("mode") == "Manual" and not ref:
        c.add(
            (*path, "checkpointRef"),
            REQUIRED,
            "mode Manual restores an existing checkpoint: name its DynamoCheckpoint in checkpointRef, or "
            "omit mode for a checkpoint the graph creates",
        )
    if not in_dgd and not ref and not cp.get("identity"):
        c.add(
            (*path, "checkpointRef"),
            REQUIRED,
            "a DynamoComponentDeployment does not create checkpoints; set checkpointRef to an existing "
            "DynamoCheckpoint, or enable the checkpoint on the DynamoGraphDeployment component",
        )
    if in_dgd and not ref and (backend or detect_backend(comp)) not in CHECKPOINT_BACKENDS:
        c.add(
            path,
            REQUIRED,
            "a checkpoint the graph creates needs the backend (vllm, sglang or trtllm); set "
            "spec.backendFramework, or run python3 -m dynamo.<backend> in the main container",
        )
    _check_target_and_job(c, cp, comp, path)
    for clash in volume_clashes(comp):
        c.add((*base, *clash.path), INVALID, f"{clash.detail}; {clash.fix}", CHECKPOINT_VOLUME)
    if ref and cp.get("deletionPolicy"):
        c.warn(
            "checkpoint.deletionPolicy applies only to a checkpoint the graph creates; with checkpointRef "
            "the referenced DynamoCheckpoint is never owned or deleted by the graph"
        )


def _check_target_and_job(c: ErrorList, cp: dict, comp: dict, path: Path) -> None:
    target = cp.get("targetContainerName")
    names = _containers(comp)
    if isinstance(target, str) and target not in names and target != MAIN_CONTAINER:
        have = ", ".join(names) or "none"
        c.add(
            (*path, "targetContainerName"),
            NOT_FOUND,
            f"must name a container of podTemplate.spec.containers (containers: {have}); fix the name, "
            "or omit it for main",
            target,
        )
    problem = job_template_problem(_d(cp.get("job")).get("podTemplate"))
    if problem is not None:
        sub = tuple(p for p in problem[0].split(".") if p)
        c.add(
            (*path, "job", "podTemplate", *sub),
            INVALID,
            f"{problem[1]}; give a pod template (metadata, spec.containers with names) to merge over the "
            "checkpoint Job's pod",
        )
    if _d(cp.get("job")).get("gmsClientContainers"):
        c.add(
            (*path, "job", "gmsClientContainers"),
            FORBIDDEN,
            "is not supported by this operator: the checkpoint Job gets no GPU Memory Service client "
            "wiring; remove it",
        )
