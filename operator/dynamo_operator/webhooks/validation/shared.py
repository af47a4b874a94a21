"""What the per-kind validators share: the request context, tolerant accessors, and the component rules
(a DGD's ``spec.components[i]`` and a DCD's ``spec`` are the same v1beta1 component shape)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE
from dynamo_operator.api.jsontree import d, lst
from dynamo_operator.render import gms, multinode
from dynamo_operator.render.context import grove_pathway as render_grove_pathway
from dynamo_operator.render.epp import POOL_API_VERSION
from dynamo_operator.render.names import (
    ANN_KUBE_DISCOVERY_MODE,
    ANN_VLLM_EXECUTOR,
    KUBE_DISCOVERY_MODES,
    MAIN_CONTAINER,
    PLANNER_SERVICE_ACCOUNT,
)
from dynamo_operator.render.quantity import parse_quantity

from .component_checkpoint import check_checkpoint
from .field import (
    FORBIDDEN,
    INVALID,
    NO_VALUE,
    NOT_FOUND,
    NOT_SUPPORTED,
    REQUIRED,
    ErrorList,
    Path,
)
from .pod_policy import PodTemplatePolicy


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
    # a DynamoGraphDeploymentRequest's profiler when it names none (images.profiler)
    profiler_image: str = DEFAULT_PROFILER_IMAGE
    # DRA on for this operator (dra.enabled, else resource.k8s.io/v1 served): GPU memory service needs it
    dra_enabled: bool = True
    # the Gateway API Inference Extension's InferencePool API is served: an epp component needs it
    inference_pool_served: bool = True
    # security.workloads: what to say about privileged pod template settings (None: warn about all)
    pod_templates: PodTemplatePolicy | None = None
    # the configuration's ingress section (defaults a component's v1alpha1 ingress may rely on)
    ingress: dict = field(default_factory=dict)


# -----------------------------------------------------------------------------------------------------------
# tolerant accessors: wrong types read as "absent" (the rule that needs the field reports its type)


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def grove_pathway(obj: dict, ctx: Context) -> bool:
    """The renderer's pathway rule, with this admission's view of whether Grove is there."""
    return render_grove_pathway(d(obj), ctx.grove_enabled)


def privileged(obj: dict, ctx: Context) -> bool:
    """The operator's own service account, or the planner's in the object's namespace."""
    if not ctx.username:
        return False  # no userInfo: fail closed
    if ctx.username in ctx.operator_usernames:
        return True
    ns = d(obj.get("metadata")).get("namespace")
    return bool(ns) and ctx.username == f"system:serviceaccount:{ns}:{PLANNER_SERVICE_ACCOUNT}"


def annotations_of(obj: Any) -> dict:
    return d(d(d(obj).get("metadata")).get("annotations"))


def check_executor_annotation(c: ErrorList, new: dict, old: dict | None) -> None:
    """The vLLM executor and the Kubernetes discovery mode annotations, judged on create and whenever
    they change."""
    annotations = annotations_of(new)
    old_annotations = annotations_of(old) if old is not None else {}
    value = annotations.get(ANN_VLLM_EXECUTOR)
    changed = old is None or value != old_annotations.get(ANN_VLLM_EXECUTOR)
    if changed and value is not None and value not in (multinode.VLLM_MP, multinode.VLLM_RAY):
        c.add(
            ("metadata", "annotations", ("key", ANN_VLLM_EXECUTOR)),
            NOT_SUPPORTED,
            'must be "mp" or "ray" (the vLLM distributed executor of multinode tensor/pipeline parallel '
            "components); fix the value or remove the annotation",
            value,
        )
    mode = annotations.get(ANN_KUBE_DISCOVERY_MODE)
    changed = old is None or mode != old_annotations.get(ANN_KUBE_DISCOVERY_MODE)
    if changed and mode is not None and mode not in KUBE_DISCOVERY_MODES:
        c.add(
            ("metadata", "annotations", ("key", ANN_KUBE_DISCOVERY_MODE)),
            NOT_SUPPORTED,
            'must be "pod" or "container" (how workers register with Kubernetes discovery: per pod, or per '
            "container as failover needs); fix the value or remove the annotation",
            mode,
        )


# -----------------------------------------------------------------------------------------------------------
# component rules


def is_multinode(comp: dict) -> bool:
    mn = comp.get("multinode")
    if not isinstance(mn, dict):
        return False
    count = mn.get("nodeCount", 2)
    return not is_int(count) or count > 1


def effective_replicas(comp: dict) -> Any:
    r = comp.get("replicas")
    return 1 if r is None else r


@dataclass(frozen=True)
class ComponentScope:
    """Where a component is judged: in a DGD (``in_dgd``) on the Grove pathway or not, with the graph's
    backend and annotations; ``old_launch`` is the old object's (backend, annotations, component) on
    UPDATE: a multinode launch that is unchanged is not re-judged, so objects admitted before a rule
    existed stay updatable."""

    in_dgd: bool
    grove: bool
    backend: Any = None
    annotations: dict | None = None
    old_launch: tuple | None = None
    dra_enabled: bool = True
    inference_pool_served: bool = True
    checkpoint_enabled: bool = True  # the operator configuration's checkpoint.enabled
    old_component: dict | None = None  # the component as it was (UPDATE)


def check_component(c: ErrorList, comp: Any, base: Path, scope: ComponentScope) -> None:
    if not isinstance(comp, dict):
        c.add(base, INVALID, "must be an object", comp)
        return
    _check_replicas(c, comp, base)
    _check_shared_memory(c, comp, base)
    _check_min_available(c, comp, base, scope)
    if comp.get("type") == "epp":
        check_epp(c, comp, base)
        _check_epp_pool(c, base, scope)
    names = _check_containers(c, comp, base)
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
    annotations = scope.annotations or {}
    if is_multinode(comp) and scope.old_launch != (scope.backend, annotations, comp):
        _check_multinode(c, comp, base, scope.backend, annotations)
    check_checkpoint(
        c,
        comp,
        base,
        in_dgd=scope.in_dgd,
        multinode=is_multinode(comp),
        backend=scope.backend,
        checkpoint_enabled=scope.checkpoint_enabled,
        old_comp=scope.old_component,
    )
    _check_gms(c, comp, base, scope)


_PROBLEM_TYPES_GMS = {"notSupported": NOT_SUPPORTED}


def _check_gms(c: ErrorList, comp: dict, base: Path, scope: ComponentScope) -> None:
    """GPU memory service and failover: the renderer's rules (``render.gms.problems``), so ``dynamo-operator
    render`` and the controllers say the same."""
    experimental = d(comp.get("experimental"))
    if not isinstance(experimental.get("gpuMemoryService"), dict) and not isinstance(
        experimental.get("failover"), dict
    ):
        return
    if scope.old_launch == (scope.backend, scope.annotations or {}, comp):
        return  # unchanged since admitted: objects admitted before a rule existed stay updatable
    pod_ann = d(d(d(comp.get("podTemplate")).get("metadata")).get("annotations"))
    annotations = {**(scope.annotations or {}), **pod_ann}
    backend = scope.backend if isinstance(scope.backend, str) else None
    for p in gms.problems(comp, backend, annotations, scope.dra_enabled):
        kind = _PROBLEM_TYPES.get(p.kind) or _PROBLEM_TYPES_GMS[p.kind]
        c.add((*base, *p.path), kind, f"{p.detail}; {p.fix}", NO_VALUE if p.value is None else p.value)


def _check_epp_pool(c: ErrorList, base: Path, scope: ComponentScope) -> None:
    """An epp component runs against the InferencePool its arguments name: the graph creates it, which
    needs the API; a DynamoComponentDeployment on its own gets none (``render.notices`` warns)."""
    if not scope.inference_pool_served:
        c.add(
            (*base, "type"),
            FORBIDDEN,
            "an epp component needs the Gateway API Inference Extension's InferencePool API "
            f"({POOL_API_VERSION}), which the cluster does not serve, so the pool it routes for cannot "
            "exist; install the Inference Extension CRDs, or remove the epp component",
            "epp",
        )


def _check_replicas(c: ErrorList, comp: dict, base: Path) -> None:
    replicas = comp.get("replicas")
    if replicas is None:
        return
    if not is_int(replicas):
        c.add((*base, "replicas"), INVALID, "must be a whole number; set replicas to 0 or more", replicas)
    elif replicas < 0:
        c.add(
            (*base, "replicas"),
            INVALID,
            "must be 0 or more; use 0 to scale the component to zero",
            replicas,
        )


def _check_shared_memory(c: ErrorList, comp: dict, base: Path) -> None:
    shm = comp.get("sharedMemorySize")
    if shm is None:
        return
    try:
        size = parse_quantity(shm)
    except ValueError:
        c.add(
            (*base, "sharedMemorySize"),
            INVALID,
            'is not a quantity; give a size such as "8Gi", or "0" to disable /dev/shm',
            shm,
        )
        return
    if size < 0:
        c.add(
            (*base, "sharedMemorySize"),
            INVALID,
            'must be 0 or more; give a size such as "8Gi", or "0" to disable /dev/shm',
            shm,
        )


def _check_min_available(c: ErrorList, comp: dict, base: Path, scope: ComponentScope) -> None:
    min_available = comp.get("minAvailable")
    if min_available is None:
        return
    replicas = comp.get("replicas")
    if not scope.in_dgd:
        c.add(
            (*base, "minAvailable"),
            FORBIDDEN,
            "minAvailable applies only to components of a Grove-backed DynamoGraphDeployment; "
            "remove it from the DynamoComponentDeployment",
        )
    elif not scope.grove:
        c.add(
            (*base, "minAvailable"),
            FORBIDDEN,
            "minAvailable is only supported when the deployment runs on Grove (Grove is not enabled "
            'for the operator, or the annotation nvidia.com/enable-grove is "false"); remove it',
        )
    elif not is_int(min_available) or min_available < 1:
        c.add((*base, "minAvailable"), INVALID, "must be a whole number of at least 1", min_available)
    elif is_int(replicas) and 0 < replicas < min_available:
        c.add(
            (*base, "replicas"),
            INVALID,
            f"must be 0 (scale to zero) or at least minAvailable ({min_available}); "
            "raise replicas or lower minAvailable",
            replicas,
        )


def _check_containers(c: ErrorList, comp: dict, base: Path) -> list[str]:
    """Containers need names and, except ``main`` (the operator fills it in), images; the names found."""
    pod_spec = d(d(comp.get("podTemplate")).get("spec"))
    containers = pod_spec.get("containers")
    names: list[str] = []
    if containers is not None and not isinstance(containers, list):
        c.add((*base, "podTemplate", "spec", "containers"), INVALID, "must be a list of containers")
    for j, ctr in enumerate(lst(containers)):  # a container's path is built only for an error
        if not isinstance(ctr, dict):
            c.add((*base, "podTemplate", "spec", "containers", j), INVALID, "must be a container object")
            continue
        name = ctr.get("name")
        if isinstance(name, str) and name:
            names.append(name)
        else:
            c.add(
                (*base, "podTemplate", "spec", "containers", j, "name"),
                REQUIRED,
                'every container needs a name; use "main" for the main one',
            )
            continue
        if name != MAIN_CONTAINER and not ctr.get("image"):
            c.add(
                (*base, "podTemplate", "spec", "containers", j, "image"),
                REQUIRED,
                f'container "{name}" is not "main", so the operator does not fill it in; set its image',
            )
    for j, ctr in enumerate(lst(pod_spec.get("initContainers"))):
        if isinstance(ctr, dict) and not ctr.get("image"):
            c.add(
                (*base, "podTemplate", "spec", "initContainers", j, "image"),
                REQUIRED,
                f'init container "{ctr.get("name") or j}" is not filled in by the operator; set its image',
            )
    return names


_PROBLEM_TYPES = {"invalid": INVALID, "required": REQUIRED, "forbidden": FORBIDDEN}


def _check_multinode(c: ErrorList, comp: dict, base: Path, backend: Any, annotations: dict) -> None:
    """The launch of a multinode component must be one the operator can rewrite for every node; the rules
    are the renderer's (render.multinode), so ``dynamo-operator render`` says the same."""
    count = d(comp.get("multinode")).get("nodeCount")
    if not is_int(count) or count < 2 or comp.get("type") == "epp":  # the CRD / the epp rule reports these
        return
    pod_ann = d(d(d(comp.get("podTemplate")).get("metadata")).get("annotations"))
    for p in multinode.launch_problems(
        comp, count, backend if isinstance(backend, str) else None, {**annotations, **pod_ann}
    ):
        value = NO_VALUE if p.value is None else p.value
        c.add((*base, *p.path), _PROBLEM_TYPES[p.kind], f"{p.detail}; {p.fix}", value)


def check_epp(c: ErrorList, comp: dict, base: Path) -> None:
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
        elif has_ref and not d(epp.get("configMapRef")).get("name"):
            c.add(
                (*base, "eppConfig", "configMapRef", "name"),
                REQUIRED,
                "name the ConfigMap that holds the EndpointPickerConfig",
            )
    replicas = effective_replicas(comp)
    if is_int(replicas) and replicas != 1:
        c.add(
            (*base, "replicas"),
            INVALID,
            "an epp component runs exactly one replica; set replicas to 1",
            replicas,
        )
    if is_multinode(comp):
        c.add((*base, "multinode"), FORBIDDEN, "an epp component cannot be multinode; remove multinode")


@dataclass(frozen=True)
class UpdateScope:
    """Who changes a component of which object: ``kind`` names it in messages, ``privileged`` (operator or
    planner) may change replicas a scaling adapter owns; ``namespace``/``owner_name`` name the adapter."""

    kind: str
    grove: bool
    privileged: bool
    namespace: str
    owner_name: str


def check_component_update(c: ErrorList, new: dict, old: dict, base: Path, scope: UpdateScope) -> None:
    if is_multinode(new) != is_multinode(old):
        was = "multinode" if is_multinode(old) else "single-node"
        now = "multinode" if is_multinode(new) else "single-node"
        c.add(
            (*base, "multinode"),
            FORBIDDEN,
            f"a component cannot switch between single-node and multinode (was {was}, now {now}); "
            f"delete and recreate the {scope.kind} to change it",
        )
    if (
        scope.grove
        and old.get("minAvailable") is not None
        and new.get("minAvailable") != old.get("minAvailable")
    ):
        c.add(
            (*base, "minAvailable"),
            INVALID,
            f"is immutable after creation (was {old.get('minAvailable')}); "
            f"delete and recreate the {scope.kind} to change it",
            new.get("minAvailable"),
        )
    if (
        scope.kind == "DynamoGraphDeployment"
        and new.get("scalingAdapter") is not None
        and old.get("scalingAdapter") is not None
        and effective_replicas(new) != effective_replicas(old)
        and not scope.privileged
    ):
        adapter = f"{scope.owner_name}-{str(new.get('name', '')).lower()}"
        c.add(
            (*base, "replicas"),
            FORBIDDEN,
            "replicas of a component with scalingAdapter are owned by its "
            f"DynamoGraphDeploymentScalingAdapter; scale that instead (kubectl -n {scope.namespace} scale "
            f"dgdsa {adapter} --replicas={effective_replicas(new)}), or remove scalingAdapter first",
        )
