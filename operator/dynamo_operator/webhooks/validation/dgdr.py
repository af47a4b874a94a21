"""DynamoGraphDeploymentRequest: a model to profile, and a spec frozen once profiling has started."""

from __future__ import annotations

from .field import FORBIDDEN, REQUIRED, ErrorList
from .shared import canonical, d

# DGDR phases (v1beta1) / states (v1alpha1) in which profiling has started: the spec is frozen from then on.
DGDR_FROZEN_PHASES = ("Profiling", "Deploying", "Ready", "Deployed")
DGDR_FROZEN_STATES = ("Profiling", "Deploying", "Ready", "DeploymentDeleted")


def profiling_started(raw_old: dict, version: str) -> str | None:
    """The old object's state (v1alpha1) or phase (v1beta1) when profiling has started, else None."""
    status = d(raw_old.get("status"))
    if version == "v1alpha1":
        state = status.get("state")
        return state if state in DGDR_FROZEN_STATES else None
    phase = status.get("phase")
    return phase if phase in DGDR_FROZEN_PHASES else None


def validate_dgdr(c: ErrorList, obj: dict, raw: dict, raw_old: dict | None, version: str) -> None:
    """``obj`` in v1beta1; ``raw``/``raw_old`` as the request carried them (in ``version``)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(("spec",), REQUIRED, "a DynamoGraphDeploymentRequest needs a spec with the model to deploy")
        return
    model = spec.get("model")
    if not isinstance(model, str) or not model.strip():
        c.add(("spec", "model"), REQUIRED, 'name the model to deploy, e.g. "Qwen/Qwen3-0.6B"')
    if raw_old is None:
        return
    started = profiling_started(raw_old, version)
    if started and canonical(raw.get("spec")) != canonical(raw_old.get("spec")):
        c.add(
            ("spec",),
            FORBIDDEN,
            f"the spec cannot change once profiling has started (now {started}); delete and recreate the "
            "DynamoGraphDeploymentRequest to change it",
        )
