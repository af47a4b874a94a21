"""DGD -> DynamoGraphDeploymentScalingAdapters (DGDSA): one per component that sets ``scalingAdapter``.

An adapter is the single writer of its component's replicas: HPA, KEDA, the planner or ``kubectl scale``
change the adapter's ``spec.replicas`` through its ``/scale`` subresource and the adapter controller copies
the value into the DGD.  The DGD controller therefore creates an adapter once (seeded with the component's
current replicas, so nothing jumps) and never rewrites its ``spec.replicas`` afterwards.
"""

from __future__ import annotations

from . import names

DGDSA_KIND = "DynamoGraphDeploymentScalingAdapter"
DEFAULT_REPLICAS = 1


def has_adapter(component: dict) -> bool:
    """v1beta1: the ``scalingAdapter`` object is present (even ``{}``)."""
    return component.get("scalingAdapter") is not None


def component_replicas(component: dict) -> int:
    r = component.get("replicas")
    return DEFAULT_REPLICAS if r is None else int(r)


def adapter_name(dgd_name: str, component_name: str) -> str:
    return names.component_resource_name(dgd_name, component_name)


def adapter_selector(dgd_name: str, component_name: str) -> str:
    """The label selector (string form, for ``/scale``) matching the component's pods."""
    return f"{names.LABEL_DGD_NAME}={dgd_name},{names.LABEL_COMPONENT}={component_name}"


def build_adapter(dgd: dict, component: dict) -> dict:
    """The v1beta1 adapter of one component of a (v1beta1) DGD; no owner reference (controllers add it)."""
    meta = dgd["metadata"]
    dgd_name = meta["name"]
    return {
        "apiVersion": names.V1BETA1,
        "kind": DGDSA_KIND,
        "metadata": {
            "name": adapter_name(dgd_name, component["name"]),
            "namespace": meta.get("namespace") or "default",
            "labels": {
                names.LABEL_DGD_NAME: dgd_name,
                names.LABEL_COMPONENT: component["name"],
                names.LABEL_MANAGED_BY: names.MANAGED_BY,
            },
        },
        "spec": {
            "replicas": component_replicas(component),
            "dgdRef": {"name": dgd_name, "componentName": component["name"]},
        },
    }


def render_adapters(dgd: dict) -> list[dict]:
    """Every adapter a (v1beta1) DGD wants, in component order."""
    return [build_adapter(dgd, c) for c in (dgd.get("spec") or {}).get("components") or [] if has_adapter(c)]


def find_component(dgd: dict, component_name: str) -> dict | None:
    for c in (dgd.get("spec") or {}).get("components") or []:
        if c.get("name") == component_name:
            return c
    return None
