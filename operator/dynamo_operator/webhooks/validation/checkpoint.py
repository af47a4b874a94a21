"""DynamoCheckpoint (v1alpha1 only): allowed only when checkpointing is enabled; its identity and Job."""

from __future__ import annotations

from .field import FORBIDDEN, INVALID, NOT_FOUND, NOT_SUPPORTED, REQUIRED, ErrorList
from .shared import Context, canonical, d, is_int, lst

BACKENDS = ("vllm", "sglang", "trtllm")


def validate_checkpoint(c: ErrorList, obj: dict, old: dict | None, ctx: Context) -> None:
    if old is None and not ctx.checkpoint_enabled:
        c.add(
            ("spec",),
            FORBIDDEN,
            "checkpointing is disabled in the operator configuration; enable checkpoint.enabled in the "
            "OperatorConfiguration (Helm: dynamo-operator checkpoint values) first",
        )
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(("spec",), REQUIRED, "a DynamoCheckpoint needs spec.identity and spec.job")
        return
    identity = spec.get("identity")
    _check_identity(c, identity)
    _check_job(c, spec.get("job"))
    if d(spec.get("gpuMemoryService")).get("extraClientPods"):
        c.add(
            ("spec", "gpuMemoryService", "extraClientPods"),
            FORBIDDEN,
            "is reserved for future use and not supported yet; remove it",
        )
    if old is not None:
        old_identity = d(old.get("spec")).get("identity")
        if old_identity is not None and canonical(identity) != canonical(old_identity):
            c.add(
                ("spec", "identity"),
                FORBIDDEN,
                "is immutable after creation (it identifies the checkpoint); create a new DynamoCheckpoint "
                "instead",
            )


def _check_identity(c: ErrorList, identity: object) -> None:
    if not isinstance(identity, dict):
        c.add(
            ("spec", "identity"),
            REQUIRED,
            "a standalone checkpoint needs spec.identity with model and backendFramework",
        )
        return
    if not identity.get("model"):
        c.add(("spec", "identity", "model"), REQUIRED, 'give the model, e.g. "meta-llama/Llama-3-70B"')
    backend = identity.get("backendFramework")
    if backend not in BACKENDS:
        c.add(
            ("spec", "identity", "backendFramework"),
            NOT_SUPPORTED if backend else REQUIRED,
            "use one of vllm, sglang, trtllm",
            *((backend,) if backend else ()),
        )
    for key in ("tensorParallelSize", "pipelineParallelSize", "maxModelLen"):
        v = identity.get(key)
        if v is not None and (not is_int(v) or v < 1):
            c.add(("spec", "identity", key), INVALID, "must be a whole number of at least 1", v)


def _check_job(c: ErrorList, job: object) -> None:
    if not isinstance(job, dict):
        c.add(("spec", "job"), REQUIRED, "give spec.job.podTemplateSpec with the container to checkpoint")
        return
    template = job.get("podTemplateSpec")
    containers = lst(d(d(template).get("spec")).get("containers"))
    if not isinstance(template, dict):
        c.add(
            ("spec", "job", "podTemplateSpec"),
            REQUIRED,
            "give the pod template of the checkpoint Job, with the container to checkpoint",
        )
    elif not containers:
        c.add(
            ("spec", "job", "podTemplateSpec", "spec", "containers"),
            REQUIRED,
            "the checkpoint Job pod needs the container to checkpoint",
        )
    names = [d(x).get("name") for x in containers]
    target = job.get("targetContainerName")
    if target is not None and containers and target not in names:
        c.add(
            ("spec", "job", "targetContainerName"),
            NOT_FOUND,
            "must name a container in spec.job.podTemplateSpec.spec.containers "
            f"({', '.join(str(n) for n in names)}); fix the name or add the container",
            target,
        )
    for key, low in (("activeDeadlineSeconds", 1), ("backoffLimit", 0), ("ttlSecondsAfterFinished", 0)):
        v = job.get(key)
        if v is not None and (not is_int(v) or v < low):
            c.add(("spec", "job", key), INVALID, f"must be a whole number of at least {low}", v)
