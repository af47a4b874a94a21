"""Fields only v1alpha1 has: a component's ``ingress``, the graph's ``pvcs`` and a graph service's
``serviceName``. The v1beta1 rules cannot see them, so they are judged on the v1alpha1 form
(``api.alpha``: the object as written, or a v1beta1 object's conversion record) with the rules the renderer
applies (``render.ingress`` through ``ingress.check_ingress``, ``render.pvc``), and reported at their
v1alpha1 paths."""

from __future__ import annotations

from dynamo_operator.api.alpha import alpha_spec
from dynamo_operator.render.pvc import pvc_problems

from .field import DUPLICATE, FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED, ErrorList
from .ingress import check_ingress
from .shared import Context, d, lst

_TYPES = {
    "Invalid": INVALID,
    "Duplicate": DUPLICATE,
    "Required": REQUIRED,
    "NotSupported": NOT_SUPPORTED,
    "Forbidden": FORBIDDEN,
}


def _service_name(c: ErrorList, key: str, value: object) -> None:
    """A graph's service is named by its ``services`` key (the component's name, as upstream's graph
    controller sets it on the component it creates); a ``serviceName`` that says otherwise would be
    silently overridden, so it is refused (the key's own name is accepted: it changes nothing)."""
    if value is not None and value != key:
        c.add(
            ("spec", "services", ("key", key), "serviceName"),
            FORBIDDEN,
            f"the key of spec.services names this component ({key!r}); serviceName cannot rename it: "
            f"remove serviceName or rename the key",
        )


def validate_alpha_only(
    c: ErrorList, kind: str, obj: dict, old: dict | None, beta: dict, ctx: Context
) -> None:
    """``obj`` / ``old`` as the request has them; ``beta``: ``obj`` in v1beta1 (the component types)."""
    spec = alpha_spec(obj)
    if not spec:
        return
    old_spec = alpha_spec(old) if old is not None else {}
    namespace = d(obj.get("metadata")).get("namespace")
    if kind == "DynamoComponentDeployment":
        ctype = d(beta.get("spec")).get("type") or spec.get("componentType")
        ingress, old_ingress = spec.get("ingress"), old_spec.get("ingress")
        check_ingress(c, ("spec", "ingress"), ingress, old_ingress, (ctype, namespace), ctx)
        return
    types = {d(x).get("name"): d(x).get("type") for x in lst(d(beta.get("spec")).get("components"))}
    old_services = d(old_spec.get("services"))
    for name, svc in d(spec.get("services")).items():
        ctype = types.get(name) or d(svc).get("componentType")
        old_ingress = d(old_services.get(name)).get("ingress")
        base = ("spec", "services", ("key", name), "ingress")
        check_ingress(c, base, d(svc).get("ingress"), old_ingress, (ctype, namespace), ctx)
        _service_name(c, name, d(svc).get("serviceName"))
    pvcs = spec.get("pvcs")
    if pvcs is None:
        return
    if not isinstance(pvcs, list):
        c.add(("spec", "pvcs"), INVALID, "must be a list of claims", pvcs)
        return
    old_pvcs = lst(alpha_spec(old).get("pvcs")) if old is not None else None
    for path, type_, message in pvc_problems(pvcs, old_pvcs):
        c.add(("spec", "pvcs", *path), _TYPES[type_], message)
