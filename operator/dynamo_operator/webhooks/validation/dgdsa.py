"""DynamoGraphDeploymentScalingAdapter (v1beta1 shape): replicas and the component it scales."""

from __future__ import annotations

from .field import INVALID, REQUIRED, ErrorList
from .shared import is_int


def validate_dgdsa(c: ErrorList, obj: dict) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(
            ("spec",), REQUIRED, "a DynamoGraphDeploymentScalingAdapter needs spec.replicas and spec.dgdRef"
        )
        return
    replicas = spec.get("replicas")
    if not is_int(replicas) or replicas < 0:
        c.add(("spec", "replicas"), INVALID, "must be a whole number, 0 or more", replicas)
    ref = spec.get("dgdRef")
    if not isinstance(ref, dict):
        c.add(("spec", "dgdRef"), REQUIRED, "name the DynamoGraphDeployment and its component to scale")
        return
    if not ref.get("name"):
        c.add(("spec", "dgdRef", "name"), REQUIRED, "give the name of the DynamoGraphDeployment to scale")
    if not ref.get("componentName"):
        c.add(
            ("spec", "dgdRef", "componentName"),
            REQUIRED,
            "give the name of the component (in the DynamoGraphDeployment's spec.components) to scale",
        )
