"""Lossless conversion between nvidia.com/v1alpha1 and nvidia.com/v1beta1.

Each kind has a pair of plain field mappings (``_alpha_to_beta`` / ``_beta_to_alpha``) that translate
what both versions can express: the ``services`` map and the ``components`` list, the v1alpha1 pod fields
and the v1beta1 ``podTemplate`` with its ``main`` container, ``sharedMemory`` and ``sharedMemorySize``,
``serviceName`` and ``componentName``...

Losslessness does not depend on those mappings being perfect. After mapping ``src`` to ``dst`` the
converter maps ``dst`` straight back and records, leaf by leaf, every place where the result differs
from ``src`` (a field the other version cannot hold, or one it holds differently). That record goes into
one annotation on ``dst`` (``nvidia.com/conversion-from-<src version>``); converting back applies it.
Each record keeps the value the mapping produced next to the value to restore, and is applied only
while the live object still has the produced value, so an edit made in the other version always wins
over stale saved data.

Functions take and return whole objects as plain dicts so the conversion webhook can call them on a
ConversionReview as is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from . import dgdr_conversion
from .jsontree import copy_keys as _copy_keys
from .jsontree import copy_tree
from .jsontree import put as _put

GROUP = "nvidia.com"
VERSIONS = ("v1alpha1", "v1beta1")
ANNOTATION_PREFIX = f"{GROUP}/conversion-from-"
MAIN_CONTAINER = "main"
FRONTEND_SIDECAR = "frontend-sidecar"
DEFAULT_GPU_RESOURCE = "nvidia.com/gpu"
BETA_COMPONENT_TYPES = ("frontend", "worker", "prefill", "decode", "planner", "epp")
# v1alpha1 componentType values v1beta1 knows by another name: upstream called the frontend "main" before
# renaming the type (its defaults factory gave "main" the frontend's defaults; the API reference still
# uses it as the example value). The conversion record restores the name for v1alpha1 readers.
ALPHA_COMPONENT_TYPE_ALIASES = {"main": "frontend"}

Obj = dict[str, Any]


class ConversionError(ValueError):
    """The object cannot be converted (unknown kind or version)."""


def annotation_for(version: str) -> str:
    """Annotation holding what an object converted *from* ``version`` could not express."""
    return ANNOTATION_PREFIX + version


def _version_of(obj: Obj) -> str:
    api_version = obj.get("apiVersion", "")
    group, _, version = api_version.rpartition("/")
    if group != GROUP or version not in VERSIONS:
        raise ConversionError(f"unsupported apiVersion {api_version!r}")
    return version


# --------------------------------------------------------------------------------------------------
# Small helpers


_MODE_TO_BETA = {"intraPod": "IntraPod", "interPod": "InterPod"}
_MODE_TO_ALPHA = {v: k for k, v in _MODE_TO_BETA.items()}


# --------------------------------------------------------------------------------------------------
# Component (service) spec: v1alpha1 DynamoComponentDeploymentSharedSpec <-> v1beta1


_SHARED_SAME = (
    "globalDynamoNamespace",
    "replicas",
    "minAvailable",
    "multinode",
    "modelRef",
    "eppConfig",
    "topologyConstraint",
)


def _resources_to_container(res: Obj) -> Obj:
    out: Obj = {}
    for side in ("requests", "limits"):
        item = res.get(side)
        if not isinstance(item, dict):
            continue
        values: Obj = {}
        _copy_keys(item, values, ("cpu", "memory"))
        if "gpu" in item:
            values[item.get("gpuType") or DEFAULT_GPU_RESOURCE] = item["gpu"]
        values.update(item.get("custom") or {})
        _put(out, side, values)
    _put(out, "claims", copy_tree(res.get("claims")))
    return out


def _resources_from_container(res: Obj) -> Obj:
    out: Obj = {}
    for side in ("requests", "limits"):
        values = res.get(side)
        if not isinstance(values, dict):
            continue
        item: Obj = {}
        custom: Obj = {}
        for key, value in values.items():
            if key in ("cpu", "memory"):
                item[key] = str(value)
            elif key == DEFAULT_GPU_RESOURCE:
                item["gpu"] = str(value)
            else:
                custom[key] = str(value)
        _put(item, "custom", custom)
        _put(out, side, item)
    _put(out, "claims", copy_tree(res.get("claims")))
    return out


def _merge_resources(service: Obj, main: Obj) -> Obj:
    """The main container's resources from both v1alpha1 places: the service-level ``resources`` (mapped
    to container form) with ``extraPodSpec.mainContainer.resources`` over them, key by key, and the claims
    of both by name. The main container is the override (upstream merges it over the container the service
    fields build); replacing it wholesale lost what only it can say, such as a DRA ``claims`` entry."""
    out = {k: copy_tree(v) for k, v in main.items() if k not in ("requests", "limits", "claims")}
    for side in ("requests", "limits"):
        _put(out, side, {**(service.get(side) or {}), **copy_tree(main.get(side) or {})})
    claims = copy_tree(main.get("claims") or [])
    named = {c.get("name") for c in claims if isinstance(c, dict)}
    claims += [c for c in service.get("claims") or [] if not (isinstance(c, dict) and c.get("name") in named)]
    _put(out, "claims", claims)
    return out


def _shared_to_beta(svc: Obj, name: str) -> Obj:
    """A v1alpha1 service (DGD ``spec.services[name]`` or a DCD spec) as a v1beta1 component."""
    comp: Obj = {"name": name}
    sub, ctype = svc.get("subComponentType"), svc.get("componentType")
    if sub in ("prefill", "decode"):
        comp["type"] = sub
    elif ctype in BETA_COMPONENT_TYPES:
        comp["type"] = ctype
    elif ctype in ALPHA_COMPONENT_TYPE_ALIASES:
        comp["type"] = ALPHA_COMPONENT_TYPE_ALIASES[ctype]
    _copy_keys(svc, comp, _SHARED_SAME)
    if (svc.get("scalingAdapter") or {}).get("enabled"):
        comp["scalingAdapter"] = {}
    shm = svc.get("sharedMemory")
    if isinstance(shm, dict):
        if shm.get("disabled"):
            comp["sharedMemorySize"] = "0"
        elif "size" in shm:
            comp["sharedMemorySize"] = shm["size"]
    _put(comp, "experimental", _experimental_to_beta(svc))
    _put(comp, "podTemplate", _pod_template_to_beta(svc, comp))
    return comp


def _experimental_to_beta(svc: Obj) -> Obj:
    """checkpoint, gpuMemoryService and single-shadow failover move under ``experimental``."""
    experimental: Obj = {}
    if "checkpoint" in svc:
        ckpt = copy_tree(svc["checkpoint"])
        ckpt.setdefault("enabled", False)
        experimental["checkpoint"] = ckpt
    gms = svc.get("gpuMemoryService")
    if isinstance(gms, dict) and gms.get("enabled"):
        g = {k: copy_tree(v) for k, v in gms.items() if k != "enabled"}
        if "mode" in g:
            g["mode"] = _MODE_TO_BETA.get(g["mode"], g["mode"])
        experimental["gpuMemoryService"] = g
    failover = svc.get("failover")
    if isinstance(failover, dict) and failover.get("enabled") and failover.get("numShadows", 1) <= 1:
        f = {k: v for k, v in failover.items() if k != "enabled"}
        if "mode" in f:
            f["mode"] = _MODE_TO_BETA.get(f["mode"], f["mode"])
        experimental["failover"] = f
    return experimental


def _pod_template_to_beta(svc: Obj, comp: Obj) -> Obj:
    """Pod-level configuration collapses into podTemplate with a container named "main"; a volume mount
    used as compilation cache and the frontend sidecar also set ``comp``'s fields for them."""
    extra_spec = copy_tree(svc.get("extraPodSpec") or {})
    main = _main_container_to_beta(svc, extra_spec.pop("mainContainer", None) or {})
    volumes: list[Obj] = []
    for vm in svc.get("volumeMounts") or []:
        if vm.get("useAsCompilationCache") and "compilationCache" not in comp:
            cache = {"pvcName": vm["name"]}
            _put(cache, "mountPath", vm.get("mountPoint"))
            comp["compilationCache"] = cache
            continue
        if not vm.get("mountPoint"):
            continue
        volumes.append({"name": vm["name"], "persistentVolumeClaim": {"claimName": vm["name"]}})
        main.setdefault("volumeMounts", []).append({"name": vm["name"], "mountPath": vm["mountPoint"]})
    containers = [main] if len(main) > 1 else []
    containers += extra_spec.pop("containers", None) or []
    sidecar = svc.get("frontendSidecar")
    if isinstance(sidecar, dict):
        sc: Obj = {"name": FRONTEND_SIDECAR, "image": sidecar.get("image")}
        _put(sc, "args", copy_tree(sidecar.get("args")))
        _put(sc, "env", copy_tree(sidecar.get("envs")))
        if "envFromSecret" in sidecar:
            sc["envFrom"] = [{"secretRef": {"name": sidecar["envFromSecret"]}}]
        containers.append(sc)
        comp["frontendSidecar"] = FRONTEND_SIDECAR
    pod_spec: Obj = extra_spec
    _put(pod_spec, "containers", containers)
    if volumes:
        pod_spec["volumes"] = volumes + pod_spec.get("volumes", [])
    metadata: Obj = {}
    for key in ("labels", "annotations"):
        merged = {**(svc.get(key) or {}), **((svc.get("extraPodMetadata") or {}).get(key) or {})}
        _put(metadata, key, merged)
    template: Obj = {}
    _put(template, "metadata", metadata)
    _put(template, "spec", pod_spec)
    return template


def _main_container_to_beta(svc: Obj, main: Obj) -> Obj:
    """``extraPodSpec.mainContainer`` named "main", with the service's envs, envFromSecret, resources
    and probes."""
    main = {"name": MAIN_CONTAINER, **{k: v for k, v in main.items() if k != "name"}}
    envs = copy_tree(svc.get("envs") or [])
    names = {e.get("name") for e in envs}
    env = envs + [e for e in main.get("env", []) if e.get("name") not in names]
    _put(main, "env", env)
    if "envFromSecret" in svc:
        main["envFrom"] = [{"secretRef": {"name": svc["envFromSecret"]}}, *main.get("envFrom", [])]
    if "resources" in svc:
        merged = _merge_resources(_resources_to_container(svc["resources"]), main.get("resources") or {})
        main.pop("resources", None)
        _put(main, "resources", merged)
    for probe in ("livenessProbe", "readinessProbe"):
        if probe in svc:
            main[probe] = copy_tree(svc[probe])
    return main


def _shared_to_alpha(comp: Obj) -> Obj:
    svc: Obj = {}
    ctype = comp.get("type")
    if ctype in ("prefill", "decode"):
        svc["componentType"] = "worker"
        svc["subComponentType"] = ctype
    elif ctype:
        svc["componentType"] = ctype
    _copy_keys(comp, svc, _SHARED_SAME)
    if "scalingAdapter" in comp:
        svc["scalingAdapter"] = {"enabled": True}
    if "sharedMemorySize" in comp:
        size = comp["sharedMemorySize"]
        svc["sharedMemory"] = {"disabled": True} if str(size) == "0" else {"size": size}
    experimental = comp.get("experimental") or {}
    if "checkpoint" in experimental:
        svc["checkpoint"] = copy_tree(experimental["checkpoint"])
    for key in ("gpuMemoryService", "failover"):
        if key in experimental:
            value = {"enabled": True, **copy_tree(experimental[key])}
            if "mode" in value:
                value["mode"] = _MODE_TO_ALPHA.get(value["mode"], value["mode"])
            svc[key] = value
    if "compilationCache" in comp:
        cache = comp["compilationCache"]
        vm: Obj = {"name": cache["pvcName"], "useAsCompilationCache": True}
        _put(vm, "mountPoint", cache.get("mountPath"))
        svc["volumeMounts"] = [vm]

    template = copy_tree(comp.get("podTemplate") or {})
    pod_spec: Obj = template.get("spec") or {}
    containers = pod_spec.pop("containers", None) or []
    main = next((c for c in containers if c.get("name") == MAIN_CONTAINER), None)
    sidecar_name = comp.get("frontendSidecar")
    sidecar = next((c for c in containers if sidecar_name and c.get("name") == sidecar_name), None)
    others = [c for c in containers if c is not main and c is not sidecar]
    if sidecar is not None:
        fs: Obj = {"image": sidecar.get("image", "")}
        _put(fs, "args", sidecar.get("args"))
        _put(fs, "envs", sidecar.get("env"))
        env_from = sidecar.get("envFrom") or []
        if env_from and "secretRef" in env_from[0]:
            fs["envFromSecret"] = env_from[0]["secretRef"].get("name")
        svc["frontendSidecar"] = fs
    pvc_volumes = {
        v["name"]: v for v in pod_spec.get("volumes", []) if set(v) == {"name", "persistentVolumeClaim"}
    }
    if main is not None:
        main = {k: v for k, v in main.items() if k != "name"}
        _put(svc, "envs", main.pop("env", None))
        env_from = main.get("envFrom") or []
        if env_from and set(env_from[0]) == {"secretRef"} and set(env_from[0]["secretRef"]) == {"name"}:
            svc["envFromSecret"] = env_from[0]["secretRef"]["name"]
            _put(main, "envFrom", env_from[1:]) if env_from[1:] else main.pop("envFrom")
        if "resources" in main:
            _put(svc, "resources", _resources_from_container(main.pop("resources")))
        for probe in ("livenessProbe", "readinessProbe"):
            if probe in main:
                svc[probe] = main.pop(probe)
        kept_mounts = []
        for mount in main.pop("volumeMounts", []):
            volume = pvc_volumes.get(mount["name"])
            if volume is not None and volume["persistentVolumeClaim"].get("claimName") == mount["name"]:
                svc.setdefault("volumeMounts", []).append(
                    {"name": mount["name"], "mountPoint": mount["mountPath"]}
                )
                pod_spec["volumes"].remove(volume)
            else:
                kept_mounts.append(mount)
        _put(main, "volumeMounts", kept_mounts)
        if not pod_spec.get("volumes"):
            pod_spec.pop("volumes", None)
        if main:
            pod_spec["mainContainer"] = main
    _put(pod_spec, "containers", others)
    _put(svc, "extraPodSpec", pod_spec)
    _put(svc, "extraPodMetadata", template.get("metadata"))
    return svc


# --------------------------------------------------------------------------------------------------
# Status pieces


def _replica_status_to_beta(status: Obj) -> Obj:
    return {k: copy_tree(v) for k, v in status.items() if k != "componentName"}


def _replica_status_to_alpha(status: Obj) -> Obj:
    out = copy_tree(status)
    names = status.get("componentNames") or []
    if names:
        out["componentName"] = names[-1]
    return out


_DGD_STATUS_SAME = ("observedGeneration", "state", "conditions", "placement")


def _dgd_status(status: Obj, to_beta: bool) -> Obj:
    out: Obj = {}
    _copy_keys(status, out, _DGD_STATUS_SAME)
    src_key, dst_key = ("services", "components") if to_beta else ("components", "services")
    conv = _replica_status_to_beta if to_beta else _replica_status_to_alpha
    if src_key in status:
        out[dst_key] = {name: conv(s) for name, s in status[src_key].items()}
    _copy_keys(status, out, ("checkpoints", "restart"))
    if "rollingUpdate" in status:
        ru = copy_tree(status["rollingUpdate"])
        a, b = (
            ("updatedServices", "updatedComponents") if to_beta else ("updatedComponents", "updatedServices")
        )
        if a in ru:
            ru[b] = ru.pop(a)
        out["rollingUpdate"] = ru
    return out


# --------------------------------------------------------------------------------------------------
# Per-kind mappings (body only: spec and status; metadata is handled by the converter)


def _dgd_to_beta(obj: Obj) -> Obj:
    spec, out = obj.get("spec") or {}, {}
    _copy_keys(spec, out, ("annotations", "labels", "priorityClassName", "backendFramework", "restart"))
    _copy_keys(spec, out, ("experimental",))
    if "topologyConstraint" in spec:
        tc = copy_tree(spec["topologyConstraint"])
        if "topologyProfile" in tc:
            tc["clusterTopologyName"] = tc.pop("topologyProfile")
        out["topologyConstraint"] = tc
    if "services" in spec:
        out["components"] = [_shared_to_beta(svc, name) for name, svc in spec["services"].items()]
    _put(out, "env", copy_tree(spec.get("envs")))
    body: Obj = {"spec": out}
    if "status" in obj:
        body["status"] = _dgd_status(obj["status"], to_beta=True)
    return body


def _dgd_to_alpha(obj: Obj) -> Obj:
    spec, out = obj.get("spec") or {}, {}
    _copy_keys(spec, out, ("annotations", "labels", "priorityClassName", "backendFramework", "restart"))
    _copy_keys(spec, out, ("experimental",))
    if "topologyConstraint" in spec:
        tc = copy_tree(spec["topologyConstraint"])
        if "clusterTopologyName" in tc:
            tc["topologyProfile"] = tc.pop("clusterTopologyName")
        out["topologyConstraint"] = tc
    if "components" in spec:
        out["services"] = {c["name"]: _shared_to_alpha(c) for c in spec["components"]}
    _put(out, "envs", copy_tree(spec.get("env")))
    body: Obj = {"spec": out}
    if "status" in obj:
        body["status"] = _dgd_status(obj["status"], to_beta=False)
    return body


def _dcd_status(status: Obj, to_beta: bool) -> Obj:
    out: Obj = {}
    _copy_keys(status, out, ("observedGeneration", "conditions", "podSelector"))
    if to_beta and "service" in status:
        out["component"] = _replica_status_to_beta(status["service"])
    if not to_beta and "component" in status:
        out["service"] = _replica_status_to_alpha(status["component"])
    return out


def _dcd_to_beta(obj: Obj) -> Obj:
    spec = obj.get("spec") or {}
    name = spec.get("serviceName") or (obj.get("metadata") or {}).get("name") or "main"
    out = _shared_to_beta(spec, name)
    _copy_keys(spec, out, ("backendFramework",))
    body: Obj = {"spec": out}
    if "status" in obj:
        body["status"] = _dcd_status(obj["status"], to_beta=True)
    return body


def _dcd_to_alpha(obj: Obj) -> Obj:
    spec = obj.get("spec") or {}
    out = _shared_to_alpha(spec)
    if "name" in spec:
        out["serviceName"] = spec["name"]
    _copy_keys(spec, out, ("backendFramework",))
    body: Obj = {"spec": out}
    if "status" in obj:
        body["status"] = _dcd_status(obj["status"], to_beta=False)
    return body


def _dgdsa(obj: Obj, to_beta: bool) -> Obj:
    spec = copy_tree(obj.get("spec") or {})
    ref = spec.get("dgdRef")
    if isinstance(ref, dict):
        a, b = ("serviceName", "componentName") if to_beta else ("componentName", "serviceName")
        if a in ref:
            ref[b] = ref.pop(a)
    body: Obj = {"spec": spec}
    if "status" in obj:
        body["status"] = copy_tree(obj["status"])
    return body


Mapper = Callable[[Obj], Obj]
_MAPPERS: dict[str, tuple[Mapper, Mapper]] = {
    "DynamoGraphDeployment": (_dgd_to_beta, _dgd_to_alpha),
    "DynamoComponentDeployment": (_dcd_to_beta, _dcd_to_alpha),
    "DynamoGraphDeploymentRequest": (dgdr_conversion.to_beta, dgdr_conversion.to_alpha),
    "DynamoGraphDeploymentScalingAdapter": (
        lambda o: _dgdsa(o, to_beta=True),
        lambda o: _dgdsa(o, to_beta=False),
    ),
}
CONVERTIBLE_KINDS = tuple(_MAPPERS)


# --------------------------------------------------------------------------------------------------
# Leaf-level difference records

# A path step is a dict key, or ("name", value) for the item of a list of named objects.
Step = str | list[str]


def _named(items: Any) -> bool:
    return (
        isinstance(items, list)
        and all(isinstance(i, dict) and isinstance(i.get("name"), str) for i in items)
        and len({i["name"] for i in items}) == len(items)
    )


def _diff(produced: Any, wanted: Any, path: list[Step], out: list[Obj]) -> None:
    """Records turning ``produced`` into ``wanted``, as fine-grained as dicts and named lists allow."""
    if produced == wanted:
        return
    if isinstance(produced, dict) and isinstance(wanted, dict):
        for key in list(wanted) + [k for k in produced if k not in wanted]:
            if key not in produced:
                out.append({"path": [*path, key], "set": wanted[key]})
            elif key not in wanted:
                out.append({"path": [*path, key], "was": produced[key]})
            else:
                _diff(produced[key], wanted[key], [*path, key], out)
        return
    if _named(produced) and _named(wanted) and [i["name"] for i in produced] == [i["name"] for i in wanted]:
        for p_item, w_item in zip(produced, wanted, strict=True):
            _diff(p_item, w_item, [*path, ["name", w_item["name"]]], out)
        return
    out.append({"path": path, "was": produced, "set": wanted})


_MISSING = object()


def _child(node: Any, step: Step) -> Any:
    if isinstance(step, list):
        if isinstance(node, list):
            return next((i for i in node if isinstance(i, dict) and i.get("name") == step[1]), _MISSING)
        return _MISSING
    return node.get(step, _MISSING) if isinstance(node, dict) else _MISSING


def _apply(target: Obj, records: list[Obj]) -> None:
    """Apply records whose ``was`` still matches the live object (otherwise the live value wins)."""
    for rec in records:
        path = rec["path"]
        if not path:
            continue
        node: Any = target
        for step in path[:-1]:
            nxt = _child(node, step)
            if nxt is _MISSING:
                if "was" in rec or not isinstance(step, str) or not isinstance(node, dict):
                    node = _MISSING
                    break
                nxt = node[step] = {}
            node = nxt
        if node is _MISSING or not isinstance(node, dict | list):
            continue
        last = path[-1]
        current = _child(node, last)
        expected = rec.get("was", _MISSING)
        if current is not _MISSING and expected is _MISSING:
            continue  # the field now exists in the live object: it wins
        if current is not _MISSING and current != expected:
            continue
        if expected is not _MISSING and current is _MISSING:
            continue
        if isinstance(last, list):
            if "set" in rec and current is not _MISSING:
                node[node.index(current)] = copy_tree(rec["set"])
            continue
        if "set" in rec:
            node[last] = copy_tree(rec["set"])
        else:
            node.pop(last, None)


# --------------------------------------------------------------------------------------------------
# The converter


def _without_annotation(obj: Obj, key: str) -> tuple[Obj, list[Obj]]:
    out = copy_tree(obj)
    annotations = (out.get("metadata") or {}).get("annotations") or {}
    raw = annotations.pop(key, None)
    if raw is not None and not annotations:
        out["metadata"].pop("annotations")
    records: list[Obj] = []
    if raw:
        try:
            loaded = json.loads(raw)
            records = loaded if isinstance(loaded, list) else []
        except ValueError:
            records = []  # a damaged annotation must not block reads; the live object still converts
    return out, records


def _map(obj: Obj, to_version: str) -> Obj:
    kind = obj.get("kind", "")
    if kind not in _MAPPERS:
        raise ConversionError(f"kind {kind!r} has no other version")
    to_beta, to_alpha = _MAPPERS[kind]
    body = (to_beta if to_version == "v1beta1" else to_alpha)(obj)
    out: Obj = {"apiVersion": f"{GROUP}/{to_version}", "kind": kind}
    if "metadata" in obj:
        out["metadata"] = copy_tree(obj["metadata"])
    out.update(body)
    if "spec" not in obj and out.get("spec") == {}:
        out.pop("spec")
    return out


def _body(obj: Obj) -> Obj:
    """What the diff compares: everything but the type, with an empty annotation map treated as absent."""
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    if (body.get("metadata") or {}).get("annotations") == {}:
        body["metadata"] = {k: v for k, v in body["metadata"].items() if k != "annotations"}
    return body


def convert(obj: Obj, to_version: str) -> Obj:
    """``obj`` (a whole nvidia.com object) in ``to_version``; ``obj`` itself is never modified."""
    if to_version not in VERSIONS:
        raise ConversionError(f"unsupported version {to_version!r}")
    from_version = _version_of(obj)
    if from_version == to_version:
        return copy_tree(obj)
    # Data an earlier conversion from to_version left on obj restores what obj's version could not hold.
    src, restore = _without_annotation(obj, annotation_for(to_version))
    dst = _map(src, to_version)
    _apply(dst, restore)
    # Whatever does not survive the way back is recorded on dst for the return trip.
    back = _map(dst, from_version)
    records: list[Obj] = []
    _diff(_body(back), _body(src), [], records)
    if (src.get("metadata") or {}).get("annotations") == {} and (
        records or (dst.get("metadata") or {}).get("annotations")
    ):
        # An annotation (ours, or one a mapping keeps a field in) lands in an empty map; removing it later
        # must leave the map, not drop it.
        records.append({"path": ["metadata", "annotations"], "set": {}})
    if records:
        records.sort(key=lambda r: json.dumps(r["path"]))  # stable text across repeated conversions
        metadata = dst.setdefault("metadata", {})
        metadata.setdefault("annotations", {})[annotation_for(from_version)] = json.dumps(
            records, separators=(",", ":"), sort_keys=True
        )
    return dst
