"""Admission validation for every nvidia.com kind: one rule set, all errors of a request at once.

DynamoGraphDeployment, DynamoComponentDeployment, DynamoGraphDeploymentRequest and
DynamoGraphDeploymentScalingAdapter are validated in v1beta1: a v1alpha1 object (and its old object) is
converted first with :func:`dynamo_operator.api.conversion.convert`, the v1beta1 rules run, and each error's
field path is translated back into the v1alpha1 shape (``spec.components[1].sharedMemorySize`` becomes
``spec.services[Worker].sharedMemory.size``) so the user reads it in the version they wrote. DynamoModel and
DynamoCheckpoint exist only in v1alpha1.

Every error names its field path, what is wrong and what to do, in the apimachinery style
``<path>: <Type>: <value>: <detail>``. :func:`validate` never raises: input of any shape (the webhook also
receives requests the API server never sends) yields errors, not exceptions.

A terminating object (``metadata.deletionTimestamp`` set) is never blocked, so finalizers can always come
off; DELETE and CONNECT are not validated.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.api import conversion
from dynamo_operator.api.registry import GROUP
from dynamo_operator.render import multinode
from dynamo_operator.render.context import grove_pathway as render_grove_pathway
from dynamo_operator.render.names import ANN_VLLM_EXECUTOR, PLANNER_SERVICE_ACCOUNT
from dynamo_operator.render.names import MAIN_CONTAINER as MAIN
from dynamo_operator.render.quantity import parse_quantity

# DGDR phases (v1beta1) / states (v1alpha1) in which profiling has started: the spec is frozen from then on.
DGDR_FROZEN_PHASES = ("Profiling", "Deploying", "Ready", "Deployed")
DGDR_FROZEN_STATES = ("Profiling", "Deploying", "Ready", "DeploymentDeleted")
MODEL_TYPES = ("base", "lora", "adapter")
MODEL_URI_SCHEMES = ("s3://", "hf://", "file://")
BACKENDS = ("vllm", "sglang", "trtllm")
RESTART_STRATEGIES = ("Sequential", "Parallel")
CONVERTED_KINDS = conversion.CONVERTIBLE_KINDS  # validated as v1beta1 whichever version they came in

Path = tuple[Any, ...]
_NO_VALUE = object()

# apimachinery field.ErrorType strings and the Status cause types that go with them
REQUIRED = "Required value"
INVALID = "Invalid value"
FORBIDDEN = "Forbidden"
DUPLICATE = "Duplicate value"
NOT_FOUND = "Not found"
TOO_MANY = "Too many"
NOT_SUPPORTED = "Unsupported value"
CAUSE_TYPES = {
    REQUIRED: "FieldValueRequired",
    INVALID: "FieldValueInvalid",
    FORBIDDEN: "FieldValueForbidden",
    DUPLICATE: "FieldValueDuplicate",
    NOT_FOUND: "FieldValueNotFound",
    TOO_MANY: "FieldValueTooMany",
    NOT_SUPPORTED: "FieldValueNotSupported",
}


def format_path(path: Path) -> str:
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif isinstance(step, tuple):  # a map key: ("key", name)
            out += f"[{step[1]}]"
        else:
            out += ("." if out else "") + str(step)
    return out or "<object>"


@dataclass
class FieldError:
    path: Path
    type: str
    detail: str
    value: Any = _NO_VALUE

    @property
    def field(self) -> str:
        return format_path(self.path)

    def __str__(self) -> str:
        if self.value is _NO_VALUE:
            return f"{self.field}: {self.type}: {self.detail}"
        return f"{self.field}: {self.type}: {_show(self.value)}: {self.detail}"


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass
class Context:
    """What a rule may know besides the objects: who asks, and how the operator is configured."""

    operation: str = "CREATE"
    username: str | None = None
    # usernames allowed to write replicas of scaling-adapter components besides the namespace's planner SA
    operator_usernames: frozenset[str] = frozenset()
    # Grove detected/enabled for this operator (the DGD annotation nvidia.com/enable-grove may still opt out)
    grove_enabled: bool = False
    checkpoint_enabled: bool = True


@dataclass
class Result:
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return not self.errors


# -----------------------------------------------------------------------------------------------------------
# tolerant accessors: wrong types read as "absent" (the rule that needs the field reports its type)


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list:
    return value if isinstance(value, list) else []


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class _Collector:
    def __init__(self) -> None:
        self.errors: list[FieldError] = []
        self.warnings: list[str] = []

    def add(self, path: Path, type_: str, detail: str, value: Any = _NO_VALUE) -> None:
        self.errors.append(FieldError(tuple(path), type_, detail, value))

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)


# -----------------------------------------------------------------------------------------------------------
# v1beta1 component rules (DGD spec.components[i] and the DCD spec share them)


def _is_multinode(comp: dict) -> bool:
    mn = comp.get("multinode")
    if not isinstance(mn, dict):
        return False
    count = mn.get("nodeCount", 2)
    return not _is_int(count) or count > 1


def _effective_replicas(comp: dict) -> Any:
    r = comp.get("replicas")
    return 1 if r is None else r


def grove_pathway(obj: dict, ctx: Context) -> bool:
    """The renderer's pathway rule, with this admission's view of whether Grove is there."""
    return render_grove_pathway(_d(obj), ctx.grove_enabled)


_PROBLEM_TYPES = {"invalid": INVALID, "required": REQUIRED, "forbidden": FORBIDDEN}


def _check_multinode(c: _Collector, comp: dict, base: Path, backend: Any, annotations: dict) -> None:
    """The launch of a multinode component must be one the operator can rewrite for every node; the rules
    are the renderer's (render.multinode), so ``dynamo-operator render`` says the same."""
    count = _d(comp.get("multinode")).get("nodeCount")
    if not _is_int(count) or count < 2 or comp.get("type") == "epp":  # the CRD / the epp rule reports these
        return
    pod_ann = _d(_d(_d(comp.get("podTemplate")).get("metadata")).get("annotations"))
    for p in multinode.launch_problems(
        comp, count, backend if isinstance(backend, str) else None, {**annotations, **pod_ann}
    ):
        value = _NO_VALUE if p.value is None else p.value
        c.add((*base, *p.path), _PROBLEM_TYPES[p.kind], f"{p.detail}; {p.fix}", value)


def _check_executor_annotation(c: _Collector, annotations: dict) -> None:
    value = annotations.get(ANN_VLLM_EXECUTOR)
    if value is not None and value not in (multinode.VLLM_MP, multinode.VLLM_RAY):
        c.add(
            ("metadata", "annotations", ("key", ANN_VLLM_EXECUTOR)),
            NOT_SUPPORTED,
            'must be "mp" or "ray" (the vLLM distributed executor of multinode tensor/pipeline parallel '
            "components); fix the value or remove the annotation",
            value,
        )


def _check_component(
    c: _Collector,
    comp: Any,
    base: Path,
    *,
    in_dgd: bool,
    grove: bool,
    backend: Any = None,
    annotations: dict | None = None,
    old_launch: tuple | None = None,
) -> None:
    """``old_launch``: the old object's (backend, annotations, component) on UPDATE; a multinode launch
    that is unchanged is not re-judged, so objects admitted before a rule existed stay updatable."""
    if not isinstance(comp, dict):
        c.add(base, INVALID, "must be an object", comp)
        return
    replicas = comp.get("replicas")
    if replicas is not None:
        if not _is_int(replicas):
            c.add((*base, "replicas"), INVALID, "must be a whole number; set replicas to 0 or more", replicas)
        elif replicas < 0:
            c.add(
                (*base, "replicas"),
                INVALID,
                "must be 0 or more; use 0 to scale the component to zero",
                replicas,
            )

    shm = comp.get("sharedMemorySize")
    if shm is not None:
        try:
            size = parse_quantity(shm)
        except ValueError:
            c.add(
                (*base, "sharedMemorySize"),
                INVALID,
                'is not a quantity; give a size such as "8Gi", or "0" to disable /dev/shm',
                shm,
            )
        else:
            if size < 0:
                c.add(
                    (*base, "sharedMemorySize"),
                    INVALID,
                    'must be 0 or more; give a size such as "8Gi", or "0" to disable /dev/shm',
                    shm,
                )

    min_available = comp.get("minAvailable")
    if min_available is not None:
        if not in_dgd:
            c.add(
                (*base, "minAvailable"),
                FORBIDDEN,
                "minAvailable applies only to components of a Grove-backed DynamoGraphDeployment; "
                "remove it from the DynamoComponentDeployment",
            )
        elif not grove:
            c.add(
                (*base, "minAvailable"),
                FORBIDDEN,
                "minAvailable is only supported when the deployment runs on Grove (Grove is not enabled "
                'for the operator, or the annotation nvidia.com/enable-grove is "false"); remove it',
            )
        elif not _is_int(min_available) or min_available < 1:
            c.add((*base, "minAvailable"), INVALID, "must be a whole number of at least 1", min_available)
        elif _is_int(replicas) and 0 < replicas < min_available:
            c.add(
                (*base, "replicas"),
                INVALID,
                f"must be 0 (scale to zero) or at least minAvailable ({min_available}); "
                "raise replicas or lower minAvailable",
                replicas,
            )

    ctype = comp.get("type")
    if ctype == "epp":
        _check_epp(c, comp, base)
    elif comp.get("eppConfig") is not None:
        c.warn(f"{format_path((*base, 'eppConfig'))} is ignored unless type is epp")

    template = comp.get("podTemplate")
    pod_spec = _d(_d(template).get("spec"))
    containers = pod_spec.get("containers")
    names: list[str] = []
    if containers is not None and not isinstance(containers, list):
        c.add((*base, "podTemplate", "spec", "containers"), INVALID, "must be a list of containers")
    for j, ctr in enumerate(_l(containers)):
        path = (*base, "podTemplate", "spec", "containers", j)
        if not isinstance(ctr, dict):
            c.add(path, INVALID, "must be a container object")
            continue
        name = ctr.get("name")
        if isinstance(name, str) and name:
            names.append(name)
        else:
            c.add((*path, "name"), REQUIRED, 'every container needs a name; use "main" for the main one')
            continue
        if name != MAIN and not ctr.get("image"):
            c.add(
                (*path, "image"),
                REQUIRED,
                f'container "{name}" is not "main", so the operator does not fill it in; set its image',
            )
    for j, ctr in enumerate(_l(pod_spec.get("initContainers"))):
        path = (*base, "podTemplate", "spec", "initContainers", j)
        if isinstance(ctr, dict) and not ctr.get("image"):
            c.add(
                (*path, "image"),
                REQUIRED,
                f'init container "{ctr.get("name") or j}" is not filled in by the operator; set its image',
            )

    sidecar = comp.get("frontendSidecar")
    if sidecar is not None and sidecar not in names:
        have = ", ".join(f'"{n}"' for n in names) or "none"
        c.add(
            (*base, "frontendSidecar"),
            NOT_FOUND,
            f"must name a container in podTemplate.spec.containers (containers: {have}); "
            f"add that container with its image, or fix the name",
            sidecar,
        )
    if _is_multinode(comp) and old_launch != (backend, annotations or {}, comp):
        _check_multinode(c, comp, base, backend, annotations or {})


def _check_epp(c: _Collector, comp: dict, base: Path) -> None:
    epp = comp.get("eppConfig")
    hint = (
        "set exactly one of eppConfig.configMapRef (a ConfigMap holding the EndpointPickerConfig) or "
        "eppConfig.config (the EndpointPickerConfig inline)"
    )
    if epp is None:
        c.add((*base, "eppConfig"), REQUIRED, f"an epp component needs eppConfig; {hint}")
    elif not isinstance(epp, dict):
        c.add((*base, "eppConfig"), INVALID, f"must be an object; {hint}")
    else:
        has_ref, has_cfg = epp.get("configMapRef") is not None, epp.get("config") is not None
        if has_ref and has_cfg:
            c.add(
                (*base, "eppConfig"),
                INVALID,
                "configMapRef and config are mutually exclusive; keep exactly one of them",
            )
        elif not has_ref and not has_cfg:
            c.add((*base, "eppConfig"), REQUIRED, hint)
        elif has_ref and not _d(epp.get("configMapRef")).get("name"):
            c.add(
                (*base, "eppConfig", "configMapRef", "name"),
                REQUIRED,
                "name the ConfigMap that holds the EndpointPickerConfig",
            )
    replicas = _effective_replicas(comp)
    if _is_int(replicas) and replicas != 1:
        c.add(
            (*base, "replicas"),
            INVALID,
            "an epp component runs exactly one replica; set replicas to 1",
            replicas,
        )
    if _is_multinode(comp):
        c.add((*base, "multinode"), FORBIDDEN, "an epp component cannot be multinode; remove multinode")


def _check_component_update(
    c: _Collector,
    new: dict,
    old: dict,
    base: Path,
    *,
    kind: str,
    grove: bool,
    privileged: bool,
    namespace: str,
    owner_name: str,
) -> None:
    if _is_multinode(new) != _is_multinode(old):
        was = "multinode" if _is_multinode(old) else "single-node"
        now = "multinode" if _is_multinode(new) else "single-node"
        c.add(
            (*base, "multinode"),
            FORBIDDEN,
            f"a component cannot switch between single-node and multinode (was {was}, now {now}); "
            f"delete and recreate the {kind} to change it",
        )
    if grove and old.get("minAvailable") is not None and new.get("minAvailable") != old.get("minAvailable"):
        c.add(
            (*base, "minAvailable"),
            INVALID,
            f"is immutable after creation (was {old.get('minAvailable')}); "
            f"delete and recreate the {kind} to change it",
            new.get("minAvailable"),
        )
    if (
        kind == "DynamoGraphDeployment"
        and new.get("scalingAdapter") is not None
        and old.get("scalingAdapter") is not None
        and _effective_replicas(new) != _effective_replicas(old)
        and not privileged
    ):
        adapter = f"{owner_name}-{str(new.get('name', '')).lower()}"
        c.add(
            (*base, "replicas"),
            FORBIDDEN,
            "replicas of a component with scalingAdapter are owned by its "
            f"DynamoGraphDeploymentScalingAdapter; scale that instead (kubectl -n {namespace} scale dgdsa "
            f"{adapter} --replicas={_effective_replicas(new)}), or remove scalingAdapter first",
        )


def _check_restart(c: _Collector, spec: dict, old: dict | None) -> None:
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
    strategy = _d(restart.get("strategy"))
    stype = strategy.get("type")
    if stype is not None and stype not in RESTART_STRATEGIES:
        c.add((*base, "strategy", "type"), NOT_SUPPORTED, "use Sequential or Parallel", stype)
    order = strategy.get("order")
    if order:
        if stype == "Parallel":
            c.add(
                (*base, "strategy", "order"),
                FORBIDDEN,
                "a Parallel restart restarts every component at once; remove order or use Sequential",
            )
        names = [str(_d(x).get("name")) for x in _l(spec.get("components"))]
        seen: set[str] = set()
        for i, n in enumerate(_l(order)):
            if n in seen:
                c.add((*base, "strategy", "order", i), DUPLICATE, "name each component once", n)
            elif n not in names:
                c.add(
                    (*base, "strategy", "order", i),
                    NOT_FOUND,
                    f"no component of that name (components: {', '.join(names)})",
                    n,
                )
            seen.add(n)
        missing = [n for n in names if n not in seen]
        if missing:
            c.add(
                (*base, "strategy", "order"),
                INVALID,
                f"must list every component; missing: {', '.join(missing)} (or omit order for name order)",
            )
    if old is None:
        return
    old_id = _d(_d(old.get("spec")).get("restart")).get("id")
    phase = _d(_d(old.get("status")).get("rollingUpdate")).get("phase")
    if rid != old_id and phase in ("Pending", "InProgress"):
        c.add(
            (*base, "id"),
            FORBIDDEN,
            f"cannot change while a rolling update is {phase}; wait for status.rollingUpdate.phase "
            "Completed, then set the new restart id",
            rid,
        )


# -----------------------------------------------------------------------------------------------------------
# kinds (v1beta1 shapes for the converted kinds)


def _validate_dgd(c: _Collector, obj: dict, old: dict | None, ctx: Context) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(("spec",), REQUIRED, "a DynamoGraphDeployment needs a spec with at least one component")
        return
    grove = grove_pathway(obj, ctx)
    annotations = _d(_d(obj.get("metadata")).get("annotations"))
    old_annotations = _d(_d(_d(old).get("metadata")).get("annotations"))
    if old is None or annotations.get(ANN_VLLM_EXECUTOR) != old_annotations.get(ANN_VLLM_EXECUTOR):
        _check_executor_annotation(c, annotations)
    old_backend = _d(_d(old).get("spec")).get("backendFramework")
    old_by_name = {_d(x).get("name"): x for x in _l(_d(_d(old).get("spec")).get("components"))}
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
    seen: dict[str, int] = {}
    epp_at: list[int] = []
    for i, comp in enumerate(_l(comps)):
        base = ("spec", "components", i)
        if not isinstance(comp, dict):
            c.add(base, INVALID, "must be an object")
            continue
        name = comp.get("name")
        if not isinstance(name, str) or not name:
            c.add((*base, "name"), REQUIRED, "every component needs a name")
        else:
            key = name.lower()
            if key in seen:
                first = _d(comps[seen[key]]).get("name")
                c.add(
                    (*base, "name"),
                    DUPLICATE,
                    f'component names must be unique ignoring case (clashes with component "{first}"); '
                    "rename one of them",
                    name,
                )
            else:
                seen[key] = i
        if comp.get("type") == "epp":
            epp_at.append(i)
        _check_component(
            c,
            comp,
            base,
            in_dgd=True,
            grove=grove,
            backend=spec.get("backendFramework"),
            annotations=annotations,
            old_launch=(old_backend, old_annotations, old_by_name.get(name)) if old is not None else None,
        )
    _check_restart(c, spec, old)
    for i in epp_at[1:]:
        first = _d(_l(comps)[epp_at[0]]).get("name")
        c.add(
            ("spec", "components", i, "type"),
            TOO_MANY,
            f'at most one component may have type epp (component "{first}" already has it); '
            "remove the extra epp component",
            "epp",
        )
    if old is None:
        return
    old_spec = _d(old.get("spec"))
    old_comps = {_d(x).get("name"): _d(x) for x in _l(old_spec.get("components"))}
    new_comps = {_d(x).get("name"): (i, _d(x)) for i, x in enumerate(_l(comps))}
    added = sorted(str(n) for n in new_comps if n not in old_comps)
    removed = sorted(str(n) for n in old_comps if n not in new_comps)
    if added or removed:
        change = "; ".join(
            part
            for part in (
                f"added: {', '.join(added)}" if added else "",
                f"removed: {', '.join(removed)}" if removed else "",
            )
            if part
        )
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
            f"is immutable (was {_show(old_spec.get('backendFramework'))}); delete and recreate the "
            "DynamoGraphDeployment to change the backend",
            spec.get("backendFramework"),
        )
        c.warn("Changing spec.backendFramework may cause unexpected behavior")
    privileged = _privileged(obj, ctx)
    md = _d(obj.get("metadata"))
    for name, (i, comp) in new_comps.items():
        if name in old_comps:
            _check_component_update(
                c,
                comp,
                old_comps[name],
                ("spec", "components", i),
                kind="DynamoGraphDeployment",
                grove=grove,
                privileged=privileged,
                namespace=str(md.get("namespace") or ""),
                owner_name=str(md.get("name") or ""),
            )


def _validate_dcd(c: _Collector, obj: dict, old: dict | None, ctx: Context) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(("spec",), REQUIRED, "a DynamoComponentDeployment needs a spec")
        return
    annotations = _d(_d(obj.get("metadata")).get("annotations"))
    old_annotations = _d(_d(_d(old).get("metadata")).get("annotations"))
    if old is None or annotations.get(ANN_VLLM_EXECUTOR) != old_annotations.get(ANN_VLLM_EXECUTOR):
        _check_executor_annotation(c, annotations)
    old_spec = _d(_d(old).get("spec"))
    _check_component(
        c,
        spec,
        ("spec",),
        in_dgd=False,
        grove=False,
        backend=spec.get("backendFramework"),
        annotations=annotations,
        old_launch=(old_spec.get("backendFramework"), old_annotations, old_spec) if old is not None else None,
    )
    if old is None:
        return
    if spec.get("backendFramework") != old_spec.get("backendFramework"):
        c.add(
            ("spec", "backendFramework"),
            INVALID,
            f"is immutable (was {_show(old_spec.get('backendFramework'))}); delete and recreate the "
            "DynamoComponentDeployment to change the backend",
            spec.get("backendFramework"),
        )
    md = _d(obj.get("metadata"))
    _check_component_update(
        c,
        spec,
        old_spec,
        ("spec",),
        kind="DynamoComponentDeployment",
        grove=False,
        privileged=True,
        namespace=str(md.get("namespace") or ""),
        owner_name=str(md.get("name") or ""),
    )


def _dgdr_profiling_started(raw_old: dict, version: str) -> str | None:
    status = _d(raw_old.get("status"))
    if version == "v1alpha1":
        state = status.get("state")
        return state if state in DGDR_FROZEN_STATES else None
    phase = status.get("phase")
    return phase if phase in DGDR_FROZEN_PHASES else None


def _validate_dgdr(c: _Collector, obj: dict, raw: dict, raw_old: dict | None, version: str) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(("spec",), REQUIRED, "a DynamoGraphDeploymentRequest needs a spec with the model to deploy")
        return
    model = spec.get("model")
    if not isinstance(model, str) or not model.strip():
        c.add(("spec", "model"), REQUIRED, 'name the model to deploy, e.g. "Qwen/Qwen3-0.6B"')
    if raw_old is None:
        return
    started = _dgdr_profiling_started(raw_old, version)
    if started and _canonical(raw.get("spec")) != _canonical(raw_old.get("spec")):
        c.add(
            ("spec",),
            FORBIDDEN,
            f"the spec cannot change once profiling has started (now {started}); delete and recreate the "
            "DynamoGraphDeploymentRequest to change it",
        )


def _validate_dgdsa(c: _Collector, obj: dict) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(
            ("spec",), REQUIRED, "a DynamoGraphDeploymentScalingAdapter needs spec.replicas and spec.dgdRef"
        )
        return
    replicas = spec.get("replicas")
    if not _is_int(replicas) or replicas < 0:
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


def _validate_model(c: _Collector, obj: dict, old: dict | None) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(("spec",), REQUIRED, "a DynamoModel needs spec.modelName and spec.baseModelName")
        return
    if not spec.get("modelName"):
        c.add(
            ("spec", "modelName"),
            REQUIRED,
            'give the full model identifier, e.g. "meta-llama/Llama-3.3-70B-Instruct-lora"',
        )
    if not spec.get("baseModelName"):
        c.add(
            ("spec", "baseModelName"),
            REQUIRED,
            "give the base model name the serving components use in modelRef.name",
        )
    model_type = spec.get("modelType")
    if model_type is not None and model_type not in MODEL_TYPES:
        c.add(("spec", "modelType"), NOT_SUPPORTED, "use one of base, lora, adapter", model_type)
    source = spec.get("source")
    if model_type == "lora":
        hint = "use s3://bucket/path, hf://org/model@revision or file:///path"
        if not isinstance(source, dict):
            c.add(("spec", "source"), REQUIRED, f"a lora model needs spec.source.uri; {hint}")
        else:
            uri = source.get("uri")
            if not isinstance(uri, str) or not uri:
                c.add(("spec", "source", "uri"), REQUIRED, f"a lora model needs a source URI; {hint}")
            elif not uri.startswith(MODEL_URI_SCHEMES):
                c.add(("spec", "source", "uri"), INVALID, f"unsupported URI scheme; {hint}", uri)
    elif source is not None:
        c.warn("spec.source is ignored unless spec.modelType is lora")
    if old is None:
        return
    old_spec = _d(old.get("spec"))
    if (spec.get("modelType") or "base") != (old_spec.get("modelType") or "base"):
        c.add(
            ("spec", "modelType"),
            INVALID,
            f"is immutable (was {_show(old_spec.get('modelType') or 'base')}); create a new DynamoModel "
            "instead",
            spec.get("modelType"),
        )
    if spec.get("baseModelName") != old_spec.get("baseModelName"):
        c.add(
            ("spec", "baseModelName"),
            INVALID,
            f"is immutable (was {_show(old_spec.get('baseModelName'))}): endpoint discovery is keyed on it; "
            "create a new DynamoModel instead",
            spec.get("baseModelName"),
        )


def _validate_checkpoint(c: _Collector, obj: dict, old: dict | None, ctx: Context) -> None:
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
    if not isinstance(identity, dict):
        c.add(
            ("spec", "identity"),
            REQUIRED,
            "a standalone checkpoint needs spec.identity with model and backendFramework",
        )
    else:
        if not identity.get("model"):
            c.add(("spec", "identity", "model"), REQUIRED, 'give the model, e.g. "meta-llama/Llama-3-70B"')
        if identity.get("backendFramework") not in BACKENDS:
            c.add(
                ("spec", "identity", "backendFramework"),
                NOT_SUPPORTED if identity.get("backendFramework") else REQUIRED,
                "use one of vllm, sglang, trtllm",
                *((identity["backendFramework"],) if identity.get("backendFramework") else ()),
            )
        for key in ("tensorParallelSize", "pipelineParallelSize", "maxModelLen"):
            v = identity.get(key)
            if v is not None and (not _is_int(v) or v < 1):
                c.add(("spec", "identity", key), INVALID, "must be a whole number of at least 1", v)
    job = spec.get("job")
    if not isinstance(job, dict):
        c.add(("spec", "job"), REQUIRED, "give spec.job.podTemplateSpec with the container to checkpoint")
    else:
        template = job.get("podTemplateSpec")
        containers = _l(_d(_d(template).get("spec")).get("containers"))
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
        names = [_d(x).get("name") for x in containers]
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
            if v is not None and (not _is_int(v) or v < low):
                c.add(("spec", "job", key), INVALID, f"must be a whole number of at least {low}", v)
    gms = _d(spec.get("gpuMemoryService"))
    if gms.get("extraClientPods"):
        c.add(
            ("spec", "gpuMemoryService", "extraClientPods"),
            FORBIDDEN,
            "is reserved for future use and not supported yet; remove it",
        )
    if old is not None:
        old_identity = _d(old.get("spec")).get("identity")
        if old_identity is not None and _canonical(identity) != _canonical(old_identity):
            c.add(
                ("spec", "identity"),
                FORBIDDEN,
                "is immutable after creation (it identifies the checkpoint); create a new DynamoCheckpoint "
                "instead",
            )


def _privileged(obj: dict, ctx: Context) -> bool:
    """The operator's own service account, or the planner's in the object's namespace."""
    if not ctx.username:
        return False  # no userInfo: fail closed
    if ctx.username in ctx.operator_usernames:
        return True
    ns = _d(obj.get("metadata")).get("namespace")
    return bool(ns) and ctx.username == f"system:serviceaccount:{ns}:{PLANNER_SERVICE_ACCOUNT}"


# -----------------------------------------------------------------------------------------------------------
# paths back into v1alpha1


def _alpha_component_tail(tail: Path, beta_comp: dict, alpha_svc: dict) -> Path:
    if not tail:
        return ()
    head, rest = tail[0], tail[1:]
    if head == "name":
        return ()
    if head == "type":
        return ("componentType", *rest)
    if head == "sharedMemorySize":
        return ("sharedMemory", "size", *rest)
    if head == "scalingAdapter":
        return ("scalingAdapter", "enabled", *rest)
    if head == "experimental" and rest:
        return rest
    if head == "podTemplate":
        if len(rest) >= 3 and rest[0] == "spec" and rest[1] == "containers" and isinstance(rest[2], int):
            containers = _l(_d(_d(beta_comp.get("podTemplate")).get("spec")).get("containers"))
            name = _d(containers[rest[2]]).get("name") if rest[2] < len(containers) else None
            after = rest[3:]
            if name == MAIN and after[:1] == ("resources",):
                return after  # v1alpha1 keeps the main container's resources on the service
            if name == MAIN:
                return ("extraPodSpec", "mainContainer", *after)
            if name == conversion.FRONTEND_SIDECAR and isinstance(alpha_svc.get("frontendSidecar"), dict):
                return ("frontendSidecar", *after)
            alpha_containers = _l(_d(alpha_svc.get("extraPodSpec")).get("containers"))
            for k, ctr in enumerate(alpha_containers):
                if _d(ctr).get("name") == name:
                    return ("extraPodSpec", "containers", k, *after)
            return ("extraPodSpec", "containers", *after)
        if rest and rest[0] == "spec":
            return ("extraPodSpec", *rest[1:])
        return ("extraPodSpec", *rest)
    return tail


def to_alpha_path(kind: str, path: Path, beta: dict, alpha: dict) -> Path:
    """A v1beta1 field path of ``beta`` as the matching path of the v1alpha1 object ``alpha``."""
    if kind == "DynamoGraphDeployment":
        if path[:2] == ("spec", "env"):
            return ("spec", "envs", *path[2:])
        if path[:2] == ("spec", "components"):
            if len(path) == 2:
                return ("spec", "services")
            i = path[2]
            comps = _l(_d(beta.get("spec")).get("components"))
            if not isinstance(i, int) or i >= len(comps):
                return ("spec", "services")
            name = _d(comps[i]).get("name")
            svc = _d(_d(_d(alpha.get("spec")).get("services")).get(name))
            return ("spec", "services", ("key", name), *_alpha_component_tail(path[3:], _d(comps[i]), svc))
        return path
    if kind == "DynamoComponentDeployment":
        if path[:2] == ("spec", "name"):
            return ("spec", "serviceName", *path[2:])
        if path[:1] == ("spec",) and len(path) > 1:
            spec_b, spec_a = _d(beta.get("spec")), _d(alpha.get("spec"))
            return ("spec", *_alpha_component_tail(path[1:], spec_b, spec_a))
        return path
    if kind == "DynamoGraphDeploymentScalingAdapter" and path[:3] == ("spec", "dgdRef", "componentName"):
        return ("spec", "dgdRef", "serviceName", *path[3:])
    if kind == "DynamoGraphDeploymentRequest" and path == ("spec", "image"):
        return ("spec", "profilingConfig", "profilerImage")
    return path


# -----------------------------------------------------------------------------------------------------------
# entry point


def _as_v1beta1(obj: dict, version: str) -> dict:
    if version == "v1beta1":
        return obj
    return conversion.convert(obj, "v1beta1")


def validate(
    kind: str,
    version: str,
    obj: Any,
    old: Any = None,
    ctx: Context | None = None,
) -> Result:
    """Validate ``obj`` (the request's ``object``) of ``kind`` in ``version``; ``old`` is set on UPDATE."""
    ctx = ctx or Context()
    c = _Collector()
    if not isinstance(obj, dict):
        c.add((), INVALID, "the object must be a JSON object")
        return Result(c.errors, c.warnings)
    if _d(obj.get("metadata")).get("deletionTimestamp"):
        return Result()  # terminating: finalizers must always be able to come off
    if old is not None and not isinstance(old, dict):
        old = None
    for key in ("metadata", "spec"):
        if obj.get(key) is not None and not isinstance(obj[key], dict):
            c.add((key,), INVALID, "must be a JSON object", obj[key])
    if c.errors:
        return Result(c.errors, c.warnings)
    if kind in CONVERTED_KINDS:
        try:
            beta = _as_v1beta1(obj, version)
        except Exception as exc:
            c.add((), INVALID, f"cannot be read as a {kind} ({exc}); fix the object's structure")
            return Result(c.errors, c.warnings)
        try:
            beta_old = _as_v1beta1(old, version) if old is not None else None
        except Exception:
            beta_old = None
        rules: dict[str, Callable[[], None]] = {
            "DynamoGraphDeployment": lambda: _validate_dgd(c, beta, beta_old, ctx),
            "DynamoComponentDeployment": lambda: _validate_dcd(c, beta, beta_old, ctx),
            "DynamoGraphDeploymentRequest": lambda: _validate_dgdr(c, beta, obj, old, version),
            "DynamoGraphDeploymentScalingAdapter": lambda: _validate_dgdsa(c, beta),
        }
        rules[kind]()
        if version != "v1beta1":
            for err in c.errors:
                with contextlib.suppress(Exception):  # an unmappable path stays in v1beta1 terms
                    err.path = to_alpha_path(kind, err.path, beta, obj)
    elif kind == "DynamoModel":
        _validate_model(c, obj, old)
    elif kind == "DynamoCheckpoint":
        _validate_checkpoint(c, obj, old, ctx)
    else:
        c.add(("kind",), NOT_SUPPORTED, "this webhook does not validate that kind", kind)
    return Result(c.errors, c.warnings)


def denial_message(kind: str, name: str | None, errors: list[FieldError]) -> str:
    """``<Kind>.nvidia.com "<name>" is invalid: [<error>, <error>...]``, as the API server words it."""
    what = f'{kind}.{GROUP} "{name}"' if name else f"{kind}.{GROUP}"
    if len(errors) == 1:
        return f"{what} is invalid: {errors[0]}"
    return f"{what} is invalid: [{', '.join(str(e) for e in errors)}]"
