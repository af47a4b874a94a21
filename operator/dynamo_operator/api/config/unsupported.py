"""Configuration keys of upstream's OperatorConfiguration that this operator has no code for.

Why refuse rather than accept: a key that loads and then does nothing is the worst answer (the user finds
out in production). Each key here is refused at load with a message naming it, saying why nothing would
act on it and what to do instead; a value that asks for exactly what the operator does anyway (``false``,
``disabled: true``) is accepted. ``docs/api-coverage.md`` lists each as "refused (config)", and its
coverage test loads the refused sample to prove the message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import OperatorConfiguration

VOLCANO = (
    "Volcano scheduling of Grove PodCliqueSets is not supported by this operator; remove it "
    "(gang scheduling on the Grove pathway is KAI's: orchestrators.kaiScheduler, or the chart's "
    "kai-scheduler)"
)
SECCOMP = (
    "not supported: the operator injects no localhost seccomp profile into checkpoint or restore "
    "pods, so a profile would never be applied; remove checkpoint.seccomp (or set disabled: true, "
    "which is what happens) and set securityContext.seccompProfile in the DynamoCheckpoint's "
    "spec.job.podTemplateSpec or the component's podTemplate instead"
)


def unsupported_errors(cfg: OperatorConfiguration) -> list[tuple[str, str]]:
    """(path, message) for each key set that nothing would act on."""
    errors: list[tuple[str, str]] = []
    orchestrators = cfg.orchestrators
    volcano = orchestrators.volcano_scheduler if orchestrators else None
    if volcano is not None and volcano.enabled:
        errors.append(("orchestrators.volcanoScheduler.enabled", VOLCANO))
    checkpoint = cfg.checkpoint
    if checkpoint is None:
        return errors
    seccomp = checkpoint.seccomp
    if seccomp is not None and (seccomp.profile or seccomp.disabled is False):
        key = "profile" if seccomp.profile else "disabled"
        errors.append((f"checkpoint.seccomp.{key}", SECCOMP))
    return errors
