"""A component's v1alpha1 ``ingress`` at admission: the renderer's rules (``render.ingress``: host, one
kind's settings not given to the other, a Service to route to) and the configuration's ingress policy
(``render.ingress_policy``: annotations that inject configuration into the shared ingress controller,
host suffixes, Istio gateways).

A policy violation the request adds is refused; one the old object already had (admitted before the
policy, or before the configuration changed) is only warned about, so updates of the object that do not
touch it (replicas through a scaling adapter, a restart) are not blocked. The operator's own writes (the
DCDs of a graph, whose admission judged the same ingress) are not judged again. The renderer withholds a
refused exposure either way, and the warning says so.
"""

from __future__ import annotations

from dynamo_operator.render.ingress import full_host, ingress_problems
from dynamo_operator.render.ingress_policy import IngressPolicy

from .field import FORBIDDEN, INVALID, REQUIRED, ErrorList, Path, format_path
from .shared import Context, d


def check_ingress(
    c: ErrorList,
    base: Path,
    ingress: object,
    old: object,
    component: tuple[str | None, str | None],
    ctx: Context,
) -> None:
    """Errors (and warnings) for the ``ingress`` at ``base`` of a component (its type, the object's
    namespace); ``old``: the same component's ``ingress`` in the old object (UPDATE), else None."""
    component_type, namespace = component
    if not isinstance(ingress, dict):
        return
    gateway = ctx.ingress.get("virtualServiceGateway") or None
    suffix = ctx.ingress.get("hostSuffix") or None
    problems = ingress_problems(ingress, component_type, gateway, suffix)
    for path, message in problems:
        value = ingress
        for step in path:
            value = d(value).get(step)
        c.add(
            (*base, *path),
            REQUIRED if value is None else INVALID,
            message,
            *([] if value is None else [value]),
        )
    if problems or not ingress.get("enabled") or ctx.username in ctx.operator_usernames:
        return  # the operator's own writes (a graph's DCDs) carry what the graph's admission judged
    policy = IngressPolicy.from_config(ctx.ingress)
    for p in policy.problems(ingress, full_host(ingress, suffix), namespace):
        path = (*base, *(("annotations", ("key", p.path[1])) if p.path[0] == "annotations" else p.path))
        if _already_there(old, p.path, p.value):
            c.warn(
                f"{format_path(path)}: {p.message} (the operator does not expose the component until then)"
            )
        else:
            c.add(path, FORBIDDEN, p.message)


def _already_there(old: object, path: tuple[str, ...], value: object) -> bool:
    """The old object's ingress was enabled with the same value at ``path``."""
    if not isinstance(old, dict) or not old.get("enabled"):
        return False
    cur: object = old
    for step in path:
        cur = d(cur).get(step)
    return cur == value
