"""DynamoComponentDeployment (v1beta1 shape): one component, by the shared component rules."""

from __future__ import annotations

from .field import INVALID, REQUIRED, ErrorList, show
from .shared import (
    ComponentScope,
    Context,
    UpdateScope,
    annotations_of,
    check_component,
    check_component_update,
    check_executor_annotation,
    d,
)

KIND = "DynamoComponentDeployment"


def validate_dcd(c: ErrorList, obj: dict, old: dict | None, ctx: Context) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(("spec",), REQUIRED, "a DynamoComponentDeployment needs a spec")
        return
    check_executor_annotation(c, obj, old)
    old_spec = d(d(old).get("spec"))
    old_launch = (
        (old_spec.get("backendFramework"), annotations_of(old), old_spec) if old is not None else None
    )
    scope = ComponentScope(
        False,
        False,
        spec.get("backendFramework"),
        annotations_of(obj),
        old_launch,
        ctx.dra_enabled,
        ctx.inference_pool_served,
        checkpoint_enabled=ctx.checkpoint_enabled,
        old_component=old_spec if old is not None else None,
    )
    check_component(c, spec, ("spec",), scope)
    if old is None:
        return
    if spec.get("backendFramework") != old_spec.get("backendFramework"):
        c.add(
            ("spec", "backendFramework"),
            INVALID,
            f"is immutable (was {show(old_spec.get('backendFramework'))}); delete and recreate the "
            "DynamoComponentDeployment to change the backend",
            spec.get("backendFramework"),
        )
    md = d(obj.get("metadata"))
    update = UpdateScope(KIND, False, True, str(md.get("namespace") or ""), str(md.get("name") or ""))
    check_component_update(c, spec, old_spec, ("spec",), update)
