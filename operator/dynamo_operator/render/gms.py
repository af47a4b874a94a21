"""GPU Memory Service (GMS) and intra-pod failover of a worker component (v1beta1 ``experimental``).

What the seed describes, laid out as upstream Dynamo renders it (its container, volume, claim and env
names, so a runtime image written for upstream finds what it expects):

* ``gpuMemoryService`` (mode IntraPod, the default): the GMS server runs as a restartable init container
  ``gms-server`` (the main image, ``python3 -m gpu_memory_service.cli.server``) beside the engine in the
  same pod. The main container's ``nvidia.com/gpu`` request is replaced by the pod's DRA claim
  ``intrapod-shared-gpu``, which comes from the component's ResourceClaimTemplate (``<dcd>-gpu``,
  ``deviceClassName`` or ``gpu.nvidia.com``, exactly as many GPUs as the main container asked for), and
  every client (main, the server, the containers named in ``extraClientContainers``) references that one
  claim, so they share the same GPUs. The UDS sockets live in the emptyDir ``gms-intrapod-control``
  (``GMS_SOCKET_DIR``). DRA bypasses the device plugin that adds the ``nvidia.com/gpu`` toleration, so
  the pod gets it here.
* ``failover`` (IntraPod): the main container is cloned into ``engine-0`` (active) and ``engine-1``
  (standby), each with its own system port (9090 + i, port name ``system-<i>``, probes retargeted),
  ``ENGINE_ID``, ``CONTAINER_NAME``, the flock path both compete for; the server runs one kv-cache server
  per engine (``GMS_FAILOVER_ENGINE_COUNT``). Failover runs on the GPU memory service, so a failover
  without ``gpuMemoryService`` gets it (IntraPod, in failover's mode), and per-container Kubernetes
  discovery when the discovery-mode annotation is absent (``info.kube_discovery_mode``), as upstream sets
  both for failover itself. Each backend's engines are kept apart where they would collide in one pod
  network namespace (``_backend_engine``): vLLM, SGLang and TensorRT-LLM, on one node or several.

Inter-pod GMS and failover are refused (``problems``): they need a per-rank weight-server pod sharing one
ResourceClaim with the engine pods of the same scaling-group replica, which the Grove release this
platform ships cannot express. Admission reports ``problems``; rendering raises the first one.
"""

from __future__ import annotations

import copy

from . import names
from .errors import RenderError
from .info import failover_spec, gpus_per_node
from .multinode import (
    BACKEND_INVOCATION,
    VLLM_RAY,
    Problem,
    add_launch_flag,
    add_launch_switch,
    bump_launch_flag,
    launch_mode,
)
from .ports import TRTLLM_SSH_PORT

API_VERSION = "resource.k8s.io/v1"
KIND = "ResourceClaimTemplate"
GPU_RESOURCE = "nvidia.com/gpu"
DEFAULT_DEVICE_CLASS = "gpu.nvidia.com"
DEVICE_REQUEST = "gpus"
CLAIM_NAME = "intrapod-shared-gpu"
SERVER_CONTAINER = "gms-server"
SERVER_MODULE = "gpu_memory_service.cli.server"
SHARED_VOLUME = "gms-intrapod-control"
SHARED_PATH = "/gms-intrapod-control"
READY_FILE = "gms-ready"
ENV_SOCKET_DIR = "GMS_SOCKET_DIR"
ENV_ENGINE_COUNT = "GMS_FAILOVER_ENGINE_COUNT"
SERVER_STARTUP_PERIOD = 1
SERVER_STARTUP_FAILURES = 300  # 5 minutes to open the sockets
INTRA_POD, INTER_POD = "IntraPod", "InterPod"
ENGINE_COUNT = 2  # one active engine, one standby: upstream's fixed intra-pod layout
FAILOVER_LOCK = f"{SHARED_PATH}/failover.lock"
ENGINE_BASE_SYSTEM_PORT = 9090
NIXL_SIDE_CHANNEL_BASE_PORT = 5600
MASTER_PORT_FLAG = "--master-port"
MASTER_PORT = 29500
MASTER_PORT_STRIDE = 100
GPU_TOLERATION = {"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}
# worker env the engines replace with their own values (or drop: the endpoint-health list would keep a
# standby engine unready forever)
_ENGINE_REPLACED_ENV = frozenset(
    {
        "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS",
        "DYN_SYSTEM_PORT",
        "DYN_SYSTEM_ENABLED",
        "DYN_HEALTH_CHECK_ENABLED",
        "CONTAINER_NAME",
    }
)
_INTER_POD_REASON = (
    "inter-pod GMS (a GMS weight-server pod plus engine pods per rank, sharing the rank's GPUs through one "
    "DRA claim and a hostPath socket directory) is not supported: the Grove release this platform ships has "
    "no way to share one ResourceClaim between the pods of a rank in each scaling-group replica "
    "(PodCliqueSet resourceClaimTemplates / PodCliqueScalingGroup resourceSharing)"
)


def _inter_pod(path: tuple) -> Problem:
    return Problem(path, "notSupported", _INTER_POD_REASON, "use mode IntraPod (or omit mode)", INTER_POD)


def explicit_gms(spec: dict) -> dict | None:
    """``experimental.gpuMemoryService`` as written (present means enabled)."""
    value = (spec.get("experimental") or {}).get("gpuMemoryService")
    return value if isinstance(value, dict) else None


def gms_spec(spec: dict) -> dict | None:
    """The GPU memory service a (v1beta1) component runs: ``experimental.gpuMemoryService``, or the one its
    failover runs on when that is absent (in failover's mode; upstream enables it for failover itself)."""
    gms = explicit_gms(spec)
    if gms is not None:
        return gms
    failover = failover_spec(spec)
    if failover is None:
        return None
    return {"mode": failover["mode"]} if failover.get("mode") else {}


def mode_of(section: dict) -> str:
    """The effective mode (IntraPod when unset, as upstream defaults it)."""
    return str(section.get("mode") or INTRA_POD)


def device_class(gms: dict) -> str:
    return str(gms.get("deviceClassName") or DEFAULT_DEVICE_CLASS)


def _main(spec: dict) -> tuple[int, dict] | None:
    containers = ((spec.get("podTemplate") or {}).get("spec") or {}).get("containers") or []
    for i, c in enumerate(containers):
        if isinstance(c, dict) and c.get("name") == names.MAIN_CONTAINER:
            return i, c
    return None


def gpu_count(spec: dict) -> int:
    """GPUs the main container asks for (``nvidia.com/gpu`` limits, else requests); 0 when none."""
    found = _main(spec)
    return gpus_per_node(found[1]) if found else 0


def backend_of(spec: dict, backend: str | None) -> str | None:
    """The component's backend: the given one (the graph's, or ``spec.backendFramework``), else the one the
    main container runs (``python3 -m dynamo.<backend>``)."""
    if backend:
        return backend
    found = _main(spec)
    if not found:
        return None
    words = " ".join(str(w) for w in (found[1].get("command") or []) + (found[1].get("args") or []))
    seen = set(BACKEND_INVOCATION.findall(words))
    return seen.pop() if len(seen) == 1 else None


# ---------------------------------------------------------------------------------------------------------
# what admission refuses (and rendering raises)


GMS_PATH = ("experimental", "gpuMemoryService")
FAILOVER_PATH = ("experimental", "failover")
FAILOVER_BACKENDS = ("vllm", "sglang", "trtllm")


def problems(spec: dict, backend: str | None, annotations: dict, dra_enabled: bool) -> list[Problem]:
    """Everything inconsistent in a component's GMS / failover settings; [] when it renders. Paths are
    relative to the component spec; the problems of a GPU memory service failover implies name the
    failover."""
    gms, failover = gms_spec(spec), failover_spec(spec)
    explicit = explicit_gms(spec) is not None
    out: list[Problem] = []
    if gms is not None:
        out += _gms_problems(spec, gms, dra_enabled, GMS_PATH if explicit else FAILOVER_PATH, explicit)
    if failover is not None:
        out += _failover_problems(spec, explicit_gms(spec), failover, backend_of(spec, backend), annotations)
    return out


def _gms_problems(spec: dict, gms: dict, dra_enabled: bool, base: tuple, explicit: bool) -> list[Problem]:
    out: list[Problem] = []
    if spec.get("type") not in names.WORKER_TYPES:
        out.append(
            Problem(
                base,
                "forbidden",
                f"GPU memory service (and failover, which runs on it) serves worker components only (type "
                f"is {spec.get('type') or 'unset'})",
                f"remove {'.'.join(base)}, or set type to worker, prefill or decode",
            )
        )
    if explicit and mode_of(gms) == INTER_POD:  # an implied one has failover's mode: judged there
        out.append(_inter_pod((*base, "mode")))
    if gms.get("extraClientPods"):
        out.append(
            Problem(
                (*base, "extraClientPods"),
                "forbidden",
                "is reserved for inter-pod GMS client pods, which are not wired yet",
                "remove extraClientPods; put helper containers in podTemplate and list them in "
                "extraClientContainers",
            )
        )
    if not dra_enabled:
        out.append(
            Problem(
                base,
                "forbidden",
                "GMS shares the GPUs through a DRA ResourceClaim, and DRA is off for this operator "
                "(dra.enabled is false in the OperatorConfiguration, or the cluster does not serve "
                "resource.k8s.io/v1)",
                f"use Kubernetes 1.34+ with a GPU DRA driver and leave dra.enabled unset or true, or remove "
                f"{'.'.join(base)}",
            )
        )
    out += _gpu_and_checkpoint_problems(spec, base)
    return out


def _gpu_and_checkpoint_problems(spec: dict, base: tuple) -> list[Problem]:
    out: list[Problem] = []
    found = _main(spec)
    if gpu_count(spec) < 1:
        path = ("podTemplate", "spec", "containers", *((found[0], "resources") if found else ()))
        out.append(
            Problem(
                path,
                "required",
                "GPU memory service replaces the main container's nvidia.com/gpu request by a DRA claim for "
                "as many GPUs, and the main container requests none",
                "set resources.limits[nvidia.com/gpu] (1 or more) on the main container",
            )
        )
    if ((spec.get("experimental") or {}).get("checkpoint") or {}).get("enabled"):
        out.append(
            Problem(
                ("experimental", "checkpoint", "enabled"),
                "forbidden",
                "a checkpoint of a GPU memory service component is not supported (upstream disables GMS + "
                "snapshot as well)",
                f"disable experimental.checkpoint, or remove {'.'.join(base)}",
            )
        )
    return out


def _failover_problems(
    spec: dict, gms: dict | None, failover: dict, backend: str | None, annotations: dict
) -> list[Problem]:
    base = FAILOVER_PATH
    out: list[Problem] = []
    mode = mode_of(failover)
    if mode == INTER_POD:
        out.append(_inter_pod((*base, "mode")))
    elif gms is not None and mode_of(gms) != mode:
        out.append(
            Problem(
                (*base, "mode"),
                "invalid",
                f"must match gpuMemoryService.mode ({mode_of(gms)})",
                "set both modes to IntraPod (or omit both)",
                mode,
            )
        )
    shadows = failover.get("numShadows")
    if shadows is not None and shadows != 1:
        out.append(
            Problem(
                (*base, "numShadows"),
                "invalid",
                "intra-pod failover runs exactly one active and one standby engine",
                "set numShadows to 1 or omit it",
                shadows,
            )
        )
    if annotations.get(names.ANN_KUBE_DISCOVERY_MODE) == names.KUBE_DISCOVERY_POD:
        out.append(
            Problem(
                base,
                "invalid",
                "failover needs per-container Kubernetes discovery (the two engines of a pod register "
                f'separately), and the annotation {names.ANN_KUBE_DISCOVERY_MODE} asks for "pod"',
                'remove the annotation (failover sets "container" itself) or set it to "container"',
            )
        )
    out += _failover_backend_problems(spec, backend, annotations)
    return out


def _failover_backend_problems(spec: dict, backend: str | None, annotations: dict) -> list[Problem]:
    if backend not in FAILOVER_BACKENDS:
        return [
            Problem(
                FAILOVER_PATH,
                "notSupported",
                "failover needs to know the engine to keep the standby apart from the active one: vLLM, "
                f"SGLang or TensorRT-LLM (backend: {backend or 'not detected'})",
                "run the worker with python3 -m dynamo.<vllm|sglang|trtllm> (or set backendFramework), or "
                "remove experimental.failover",
            )
        ]
    count = int(((spec.get("multinode") or {}).get("nodeCount")) or 1)
    if count > 1 and backend == "vllm" and launch_mode(spec, count, backend, annotations) == VLLM_RAY:
        return [
            Problem(
                FAILOVER_PATH,
                "forbidden",
                f"failover of multinode vLLM on the Ray executor (the annotation {names.ANN_VLLM_EXECUTOR} "
                "asks for it) would start two Ray head nodes on the leader's port 6379 in one pod, and the "
                "standby's could never start",
                "remove the annotation (failover then runs on the mp executor, torch.distributed, whose "
                "port the standby moves) or set it to mp, or remove experimental.failover",
            )
        ]
    return []


def raise_first(obj: dict, found: list[Problem], prefix: str = "spec") -> None:
    """Raise the first problem as a ``RenderError`` on ``obj`` (the DCD, or the graph with ``prefix``
    ``spec.components[i]``), worded as admission words it."""
    if not found:
        return
    p = found[0]
    detail = f"{p.detail} (have {p.value})" if p.value is not None else p.detail
    raise RenderError(obj, p.render_path().replace("spec", prefix, 1), detail, p.fix)


# ---------------------------------------------------------------------------------------------------------
# rendering


def claim_template_spec(gms: dict, gpus: int) -> dict:
    """``spec`` of the component's ResourceClaimTemplate: exactly ``gpus`` devices of the class."""
    return {
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": DEVICE_REQUEST,
                        "exactly": {
                            "deviceClassName": device_class(gms),
                            "allocationMode": "ExactCount",
                            "count": gpus,
                        },
                    }
                ]
            }
        }
    }


def _env(name: str, value: str) -> dict:
    return {"name": name, "value": value}


def _mount() -> dict:
    return {"name": SHARED_VOLUME, "mountPath": SHARED_PATH}


def _wire_client(container: dict) -> None:
    """A GMS client: the shared claim, the socket directory and its env (kept when already there)."""
    resources = container.setdefault("resources", {})
    claims = [c for c in resources.get("claims") or [] if c.get("name") != CLAIM_NAME]
    resources["claims"] = [*claims, {"name": CLAIM_NAME}]
    mounts = [m for m in container.get("volumeMounts") or [] if m.get("name") != SHARED_VOLUME]
    container["volumeMounts"] = [*mounts, _mount()]
    env = container.get("env") or []
    if not any(e.get("name") == ENV_SOCKET_DIR for e in env):
        container["env"] = [*env, _env(ENV_SOCKET_DIR, SHARED_PATH)]


def _strip_gpus(container: dict) -> None:
    """``nvidia.com/gpu`` out of limits and requests: the DRA claim allocates the GPUs instead."""
    resources = container.get("resources") or {}
    for side in ("limits", "requests"):
        values = resources.get(side)
        if isinstance(values, dict):
            values.pop(GPU_RESOURCE, None)
            if not values:
                resources.pop(side)


def server_container(image: str | None, engines: int) -> dict:
    """The GMS server: a restartable init container (kubelet starts it first and keeps it running) whose
    startup probe holds the engines back until its sockets are ready."""
    env = [_env(ENV_SOCKET_DIR, SHARED_PATH)]
    if engines > 1:
        env.append(_env(ENV_ENGINE_COUNT, str(engines)))
    return {
        "name": SERVER_CONTAINER,
        "image": image,
        "command": ["python3", "-m", SERVER_MODULE],
        "env": env,
        "resources": {"claims": [{"name": CLAIM_NAME}]},
        "volumeMounts": [_mount()],
        "restartPolicy": "Always",
        "startupProbe": {
            "exec": {"command": ["test", "-f", f"{SHARED_PATH}/{READY_FILE}"]},
            "periodSeconds": SERVER_STARTUP_PERIOD,
            "failureThreshold": SERVER_STARTUP_FAILURES,
        },
    }


def apply_gms(pod: dict, gms: dict, claim_template: str, engines: int) -> None:
    """Wire a pod spec (``containers[0]`` is main) for intra-pod GMS, in place."""
    containers = pod["containers"]
    main = containers[0]
    _strip_gpus(main)
    _wire_client(main)
    clients = set(gms.get("extraClientContainers") or [])
    for c in containers[1:]:
        if c.get("name") in clients:  # absent names are ignored, as the seed says
            _wire_client(c)
    inits = [c for c in pod.get("initContainers") or [] if c.get("name") != SERVER_CONTAINER]
    pod["initContainers"] = [*inits, server_container(main.get("image"), engines)]
    volumes = [v for v in pod.get("volumes") or [] if v.get("name") != SHARED_VOLUME]
    pod["volumes"] = [*volumes, {"name": SHARED_VOLUME, "emptyDir": {}}]
    tolerations = pod.get("tolerations") or []
    if not any(t.get("key") == GPU_RESOURCE and t.get("effect") == "NoSchedule" for t in tolerations):
        pod["tolerations"] = [*tolerations, dict(GPU_TOLERATION)]
    claims = [c for c in pod.get("resourceClaims") or [] if c.get("name") != CLAIM_NAME]
    pod["resourceClaims"] = [*claims, {"name": CLAIM_NAME, "resourceClaimTemplateName": claim_template}]


def _retarget_probes(engine: dict, port_name: str, ssh_port: int) -> None:
    """HTTP probes to the engine's own system port; a TensorRT-LLM worker's TCP probe to its own sshd."""
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = engine.get(kind) or {}
        if isinstance(probe.get("httpGet"), dict):
            probe["httpGet"]["port"] = port_name
        tcp = probe.get("tcpSocket")
        if isinstance(tcp, dict) and tcp.get("port") == TRTLLM_SSH_PORT:
            tcp["port"] = ssh_port


def engine_container(main: dict, engine_id: int, spec: dict, backend: str | None) -> dict:
    """``main`` cloned as ``engine-<id>``: its own system port, the failover env, and what its backend needs
    to run beside the other engine (``_backend_engine``)."""
    engine = copy.deepcopy(main)
    name = f"engine-{engine_id}"
    port = ENGINE_BASE_SYSTEM_PORT + engine_id
    port_name = f"system-{engine_id}"
    engine["name"] = name
    engine["ports"] = [{"name": port_name, "containerPort": port, "protocol": "TCP"}]
    env = [e for e in engine.get("env") or [] if e.get("name") not in _ENGINE_REPLACED_ENV]
    env += [
        _env("ENGINE_ID", str(engine_id)),
        _env("CONTAINER_NAME", name),
        _env("FAILOVER_LOCK_PATH", FAILOVER_LOCK),
        _env("DYN_GMS_FAILOVER_PRIMARY_ENGINE_ID", "0"),
        _env("DYN_GMS_FAILOVER_SHADOW_MODE", "true"),
        _env("DYN_SYSTEM_STARTING_HEALTH_STATUS", "notready"),
        _env("DYN_SYSTEM_PORT", str(port)),
        _env("DYN_SYSTEM_ENABLED", "true"),
    ]
    engine["env"] = env
    _backend_engine(engine, engine_id, spec, backend)
    last = {e.get("name"): i for i, e in enumerate(engine["env"])}  # the operator's value wins, once
    engine["env"] = [e for i, e in enumerate(engine["env"]) if last[e.get("name")] == i]
    _retarget_probes(engine, port_name, TRTLLM_SSH_PORT + engine_id)
    return engine


_SHADOW_ENV = {"vllm": "DYN_VLLM_GMS_SHADOW_MODE", "trtllm": "DYN_TRTLLM_GMS_SHADOW_MODE"}
SGLANG_NO_PIECEWISE_CUDA_GRAPH = "--disable-piecewise-cuda-graph"
SGLANG_DIST_INIT_FLAG = "--dist-init-addr"
VLLM_DP_RPC_FLAG = "--data-parallel-rpc-port"


def _backend_engine(engine: dict, engine_id: int, spec: dict, backend: str | None) -> None:
    """What each backend's engines need to share one pod (one network namespace): the runtime's shadow
    switches (the engine takes the failover lock before initialising when it is the primary), and every
    port both would bind moved for the standby by ``MASTER_PORT_STRIDE`` (upstream's offsets)."""
    nodes = int(((spec.get("multinode") or {}).get("nodeCount")) or 1)
    env = engine["env"]
    if backend in _SHADOW_ENV:
        env.append(_env(_SHADOW_ENV[backend], "true"))
    if backend:
        lock_first = "1" if engine_id == 0 else "0"
        env.append(_env(f"DYN_{backend.upper()}_GMS_LOCK_BEFORE_INIT", lock_first))
    if nodes > 1 and backend in ("vllm", "trtllm"):
        env.append(_env("NNODES", str(nodes)))
    offset = MASTER_PORT_STRIDE * engine_id
    if backend == "vllm":
        env.append(_env("VLLM_NIXL_SIDE_CHANNEL_PORT", str(NIXL_SIDE_CHANNEL_BASE_PORT + engine_id)))
        if engine_id > 0:  # a torch.distributed store of its own: engine-0 keeps 29500
            engine["command"], engine["args"] = add_launch_flag(
                spec, engine, MASTER_PORT_FLAG, offset, MASTER_PORT
            )
            if not engine["command"]:
                engine.pop("command")
            bump_launch_flag(engine, VLLM_DP_RPC_FLAG, offset)  # multinode data parallel
    elif backend == "sglang":
        words = [str(w) for w in (engine.get("command") or []) + (engine.get("args") or [])]
        if not any(SGLANG_NO_PIECEWISE_CUDA_GRAPH in w for w in words):  # a shadow cannot capture them
            engine["command"], engine["args"] = add_launch_switch(
                spec, engine, SGLANG_NO_PIECEWISE_CUDA_GRAPH
            )
            if not engine["command"]:
                engine.pop("command")
        if engine_id > 0:
            bump_launch_flag(engine, SGLANG_DIST_INIT_FLAG, offset)  # multinode rendezvous
    elif backend == "trtllm":
        env.append(_env("MASTER_PORT", str(MASTER_PORT + offset)))  # TRT-LLM has no --master-port
        if engine_id > 0 and nodes > 1:  # each engine's own sshd, and its mpirun dialling it
            _retarget_ssh(engine, TRTLLM_SSH_PORT + engine_id)


def _retarget_ssh(engine: dict, port: int) -> None:
    """The standby engine's sshd (a TensorRT-LLM worker) and mpirun's ``-p`` (the leader) on ``port``."""
    old, new = f"-p {TRTLLM_SSH_PORT} ", f"-p {port} "
    for key in ("command", "args"):
        if engine.get(key):
            engine[key] = [str(w).replace(old, new) for w in engine[key]]


def apply_failover(pod: dict, spec: dict, backend: str | None) -> None:
    """Replace ``main`` (``containers[0]``, already a GMS client) by the two engines; sidecars stay."""
    main, sidecars = pod["containers"][0], pod["containers"][1:]
    engines = [engine_container(main, i, spec, backend) for i in range(ENGINE_COUNT)]
    pod["containers"] = [*engines, *sidecars]


__all__ = [
    "API_VERSION",
    "CLAIM_NAME",
    "KIND",
    "apply_failover",
    "apply_gms",
    "claim_template_spec",
    "failover_spec",
    "gms_spec",
    "gpu_count",
    "problems",
    "raise_first",
]
