"""DynamoGraphDeployment (v1beta1 shape): its components, the restart request, and what may not change."""

from __future__ import annotations

from dynamo_operator.render import kvtransfer

from .field import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    NO_VALUE,
    NOT_FOUND,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_MANY,
    ErrorList,
    show,
)
from .shared import (
    ComponentScope,
    Context,
    UpdateScope,
    annotations_of,
    check_component,
    check_component_update,
    check_executor_annotation,
    d,
    grove_pathway,
    lst,
    privileged,
)

KIND = "DynamoGraphDeployment"
RESTART_STRATEGIES = ("Sequential", "Parallel")


def validate_dgd(c: ErrorList, obj: dict, old: dict | None, ctx: Context) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(("spec",), REQUIRED, "a DynamoGraphDeployment needs a spec with at least one component")
        return
    grove = grove_pathway(obj, ctx)
    check_executor_annotation(c, obj, old)
    comps = spec.get("components")
    if comps is not None and not isinstance(comps, list):
        c.add(("spec", "components"), INVALID, "must be a list of components")
        comps = []
    if not comps:
        c.add(
            ("spec", "components"),
            REQUIRED,
            "a DynamoGraphDeployment needs at least one component; add one (for example a frontend and "
            "a worker)",
        )
    epp_at = _check_components(c, obj, old, lst(comps), grove, ctx)
    _check_restart(c, spec, old)
    _check_kv_transfer_policy(c, spec, ctx)
    for i in epp_at[1:]:
        first = d(lst(comps)[epp_at[0]]).get("name")
        c.add(
            ("spec", "components", i, "type"),
            TOO_MANY,
            f'at most one component may have type epp (component "{first}" already has it); '
            "remove the extra epp component",
            "epp",
        )
    if old is not None:
        _check_update(c, obj, old, lst(comps), privileged(obj, ctx), grove)


def _check_components(
    c: ErrorList, obj: dict, old: dict | None, comps: list, grove: bool, ctx: Context
) -> list[int]:
    """Each component by the shared rules; names unique ignoring case. The indexes of epp components."""
    spec = obj["spec"]
    annotations = annotations_of(obj)
    old_spec = d(d(old).get("spec"))
    old_by_name = {d(x).get("name"): x for x in lst(old_spec.get("components"))}
    seen: dict[str, int] = {}
    epp_at: list[int] = []
    # on CREATE every component is judged in the same scope: made once, not once per component
    created = None if old is not None else _scope(spec, annotations, grove, ctx, None, None)
    for i, comp in enumerate(comps):
        base = ("spec", "components", i)
        if not isinstance(comp, dict):
            c.add(base, INVALID, "must be an object")
            continue
        name = comp.get("name")
        if not isinstance(name, str) or not name:
            c.add((*base, "name"), REQUIRED, "every component needs a name")
        elif name.lower() in seen:
            first = d(comps[seen[name.lower()]]).get("name")
            c.add(
                (*base, "name"),
                DUPLICATE,
                f'component names must be unique ignoring case (clashes with component "{first}"); '
                "rename one of them",
                name,
            )
        else:
            seen[name.lower()] = i
        if comp.get("type") == "epp":
            epp_at.append(i)
        if created is not None:
            scope = created
        else:
            old_launch = (old_spec.get("backendFramework"), annotations_of(old), old_by_name.get(name))
            scope = _scope(spec, annotations, grove, ctx, old_launch, d(old_by_name.get(name)))
        check_component(c, comp, base, scope)
    return epp_at


def _scope(
    spec: dict, annotations: dict, grove: bool, ctx: Context, old_launch: tuple | None, old_comp: dict | None
) -> ComponentScope:
    """Where a graph's component is judged; ``old_launch``/``old_comp`` from the old object (UPDATE)."""
    return ComponentScope(
        True,
        grove,
        spec.get("backendFramework"),
        annotations,
        old_launch,
        ctx.dra_enabled,
        ctx.inference_pool_served,
        checkpoint_enabled=ctx.checkpoint_enabled,
        old_component=old_comp,
    )


def _check_restart(c: ErrorList, spec: dict, old: dict | None) -> None:
    """``spec.restart``: a Sequential order names every component once; Parallel takes no order; the id
    cannot change while a managed rolling update runs (that restart would be superseded at once)."""
    restart = spec.get("restart")
    if restart is None:
        return
    base = ("spec", "restart")
    if not isinstance(restart, dict):
        c.add(base, INVALID, "must be an object with an id", restart)
        return
    rid = restart.get("id")
    if not isinstance(rid, str) or not rid:
        c.add((*base, "id"), REQUIRED, "set a restart id (any new value restarts the graph)")
    strategy = d(restart.get("strategy"))
    stype = strategy.get("type")
    if stype is not None and stype not in RESTART_STRATEGIES:
        c.add((*base, "strategy", "type"), NOT_SUPPORTED, "use Sequential or Parallel", stype)
    if strategy.get("order"):
        _check_restart_order(c, spec, strategy)
    if old is None:
        return
    old_id = d(d(old.get("spec")).get("restart")).get("id")
    phase = d(d(old.get("status")).get("rollingUpdate")).get("phase")
    if rid != old_id and phase in ("Pending", "InProgress"):
        c.add(
            (*base, "id"),
            FORBIDDEN,
            f"cannot change while a rolling update is {phase}; wait for status.rollingUpdate.phase "
            "Completed, then set the new restart id",
            rid,
        )


def _check_restart_order(c: ErrorList, spec: dict, strategy: dict) -> None:
    base = ("spec", "restart", "strategy", "order")
    if strategy.get("type") == "Parallel":
        c.add(
            base,
            FORBIDDEN,
            "a Parallel restart restarts every component at once; remove order or use Sequential",
        )
    names = [str(d(x).get("name")) for x in lst(spec.get("components"))]
    seen: set[str] = set()
    for i, n in enumerate(lst(strategy.get("order"))):
        if n in seen:
            c.add((*base, i), DUPLICATE, "name each component once", n)
        elif n not in names:
            c.add((*base, i), NOT_FOUND, f"no component of that name (components: {', '.join(names)})", n)
        seen.add(n)
    missing = [n for n in names if n not in seen]
    if missing:
        c.add(
            base,
            INVALID,
            f"must list every component; missing: {', '.join(missing)} (or omit order for name order)",
        )


def _check_update(c: ErrorList, obj: dict, old: dict, comps: list, is_privileged: bool, grove: bool) -> None:
    """The set of components and the backend are fixed at creation; each kept component by the shared
    update rules."""
    spec, old_spec = obj["spec"], d(old.get("spec"))
    old_comps = {d(x).get("name"): d(x) for x in lst(old_spec.get("components"))}
    new_comps = {d(x).get("name"): (i, d(x)) for i, x in enumerate(comps)}
    added = sorted(str(n) for n in new_comps if n not in old_comps)
    removed = sorted(str(n) for n in old_comps if n not in new_comps)
    if added or removed:
        parts = [
            f"added: {', '.join(added)}" if added else "",
            f"removed: {', '.join(removed)}" if removed else "",
        ]
        change = "; ".join(p for p in parts if p)
        c.add(
            ("spec", "components"),
            FORBIDDEN,
            f"the set of components cannot change after creation ({change}); delete and recreate the "
            "DynamoGraphDeployment to add or remove components",
        )
    if spec.get("backendFramework") != old_spec.get("backendFramework"):
        c.add(
            ("spec", "backendFramework"),
            INVALID,
            f"is immutable (was {show(old_spec.get('backendFramework'))}); delete and recreate the "
            "DynamoGraphDeployment to change the backend",
            spec.get("backendFramework"),
        )
        c.warn("Changing spec.backendFramework may cause unexpected behavior")
    md = d(obj.get("metadata"))
    scope = UpdateScope(KIND, grove, is_privileged, str(md.get("namespace") or ""), str(md.get("name") or ""))
    for name, (i, comp) in new_comps.items():
        if name in old_comps:
            check_component_update(c, comp, old_comps[name], ("spec", "components", i), scope)


_KINDS = {"invalid": INVALID, "required": REQUIRED, "forbidden": FORBIDDEN}


def _check_kv_transfer_policy(c: ErrorList, spec: dict, ctx: Context) -> None:
    """``experimental.kvTransferPolicy``: the renderer's rules (``render.kvtransfer.problems``)."""
    policy = d(spec.get("experimental")).get("kvTransferPolicy")
    if policy is None:
        return
    base = ("spec", "experimental", "kvTransferPolicy")
    for path, kind, detail in kvtransfer.problems(policy, ctx.grove_enabled):
        value = d(policy).get(path[-1], NO_VALUE) if path else NO_VALUE
        c.add((*base, *path), _KINDS[kind], detail, value)
