"""Pod template assembly: base container, user merge, volumes, pod-level defaults and precedence."""

from __future__ import annotations

import copy
import dataclasses

from . import discovery, etcdaccess, gms, names, security
from .context import RenderContext
from .credentials import credential_volumes
from .env import common_env, default_env, infrastructure_env, type_env
from .errors import RenderError, spec_path
from .info import ComponentInfo
from .merge import merge_container, merge_env, merge_named
from .multinode import (
    MPI_SSH_MOUNT_PATH,
    MPI_SSH_SECRET_MODE,
    Addressing,
    forward_env,
    lws_addressing,
    rewrite_launch,
)
from .ports import EPP_GRPC_HEALTH_PORT, EPP_GRPC_PORT, default_ports
from .probes import PROBE_KINDS, default_probes, multinode_probes
from .pullsecrets import discover_pull_secrets
from .quantity import parse_quantity
from .restore import CHECKPOINT_VOLUME, volume_clashes

TERMINATION_GRACE_PERIOD_SECONDS = 60
RESTART_POLICY = "Always"
DEFAULT_FS_GROUP = 1000
SHM_VOLUME = "shared-memory"
SHM_MOUNT_PATH = "/dev/shm"
SHM_DEFAULT_SIZE = "8Gi"
COMPILATION_CACHE_VOLUME = "compilation-cache"
VLLM_COMPILATION_CACHE_PATH = "/root/.cache/vllm"
EPP_CONFIG_VOLUME = "epp-config"
EPP_CONFIG_DIR = "/etc/epp"
EPP_CONFIG_KEY = "epp-config.yaml"
FRONTEND_COMMAND = ("python3",)
FRONTEND_ARGS = ("-m", "dynamo.frontend")
_CONTAINER_ORDER = (
    "name",
    "image",
    "imagePullPolicy",
    "command",
    "args",
    "workingDir",
    "env",
    "envFrom",
    "ports",
)


def ensure_main(component: dict) -> dict:
    """The ``main`` container of a (v1beta1) component's pod template, added first when there is none:
    where the graph puts what it gives every component (the graph's env, a KV-transfer policy)."""
    containers = component.setdefault("podTemplate", {}).setdefault("spec", {}).setdefault("containers", [])
    main = next((c for c in containers if c.get("name") == names.MAIN_CONTAINER), None)
    if main is None:
        main = {"name": names.MAIN_CONTAINER}
        containers.insert(0, main)
    return main


def split_containers(pod_spec: dict) -> tuple[dict | None, list[dict]]:
    """(the user's ``main`` container or None, the sidecars in order)."""
    main, sidecars = None, []
    for c in pod_spec.get("containers") or []:
        if c.get("name") == names.MAIN_CONTAINER and main is None:
            main = c
        else:
            sidecars.append(c)
    return main, sidecars


def shared_memory_size(spec: dict, obj: dict, path: str = "spec.sharedMemorySize") -> str | None:
    """The /dev/shm size, or None when disabled with ``"0"``. Absent means 8Gi."""
    value = spec.get("sharedMemorySize")
    if value is None:
        return SHM_DEFAULT_SIZE
    try:
        amount = parse_quantity(value)
    except ValueError as exc:
        raise RenderError(obj, path, str(exc), 'use a quantity such as "16Gi", or "0" to disable') from exc
    if amount < 0:
        raise RenderError(obj, path, f"negative size {value!r}", 'use a positive quantity or "0" to disable')
    return None if amount == 0 else str(value)


def compilation_cache_mount(info: ComponentInfo) -> tuple[str, str] | None:
    """(pvcName, mountPath) of the compilation cache, or None."""
    cc = info.spec.get("compilationCache")
    if not cc:
        return None
    pvc = cc.get("pvcName")
    if not pvc:
        raise RenderError(info.dcd, "spec.compilationCache.pvcName", "missing", "name an existing PVC")
    mount = cc.get("mountPath")
    if not mount:
        if info.backend != "vllm":
            raise RenderError(
                info.dcd,
                "spec.compilationCache.mountPath",
                f"no default mount path for backend {info.backend or '(none)'}",
                "set compilationCache.mountPath",
            )
        mount = VLLM_COMPILATION_CACHE_PATH
    return pvc, mount


def epp_config_source(info: ComponentInfo) -> tuple[str, str] | None:
    """(ConfigMap name, key) holding the EPP config."""
    if info.component_type != "epp":
        return None
    epp = info.spec.get("eppConfig") or {}
    ref = epp.get("configMapRef")
    if ref and epp.get("config") is not None:
        raise RenderError(
            info.dcd, "spec.eppConfig", "configMapRef and config are both set", "keep only one of them"
        )
    if ref:
        if not ref.get("name"):
            raise RenderError(info.dcd, "spec.eppConfig.configMapRef.name", "empty", "name the ConfigMap")
        return ref["name"], ref.get("key") or EPP_CONFIG_KEY
    if epp.get("config") is not None:
        return names.epp_configmap_name(info.name), EPP_CONFIG_KEY
    raise RenderError(
        info.dcd,
        "spec.eppConfig",
        "an epp component needs its config",
        "set eppConfig.config or configMapRef",
    )


def epp_args(info: ComponentInfo, config_key: str) -> list[str]:
    return [
        "-pool-name",
        names.inference_pool_name(info.dgd_name or info.name),
        "-pool-namespace",
        info.namespace,
        "-pool-group",
        "inference.networking.k8s.io",
        "-v",
        "4",
        "--zap-encoder",
        "json",
        "-grpc-port",
        str(EPP_GRPC_PORT),
        "-grpc-health-port",
        str(EPP_GRPC_HEALTH_PORT),
        "-config-file",
        f"{EPP_CONFIG_DIR}/{config_key}",
    ]


def _replace_named(items: list[dict], new: dict, key: str = "name") -> list[dict]:
    return [i for i in items if i.get(key) != new.get(key)] + [new]


def base_container(info: ComponentInfo, ctx: RenderContext, user_main: dict | None, cache) -> dict:
    main_for_env = user_main or {}
    container: dict = {"name": names.MAIN_CONTAINER}
    if info.component_type == "epp":
        src = epp_config_source(info)
        container["args"] = epp_args(info, src[1])
    elif (
        info.component_type == "frontend" and not main_for_env.get("command") and not main_for_env.get("args")
    ):
        container["command"] = list(FRONTEND_COMMAND)
        container["args"] = list(FRONTEND_ARGS)
    container["env"] = default_env(info, ctx, main_for_env, cache[1] if cache else None)
    ports = default_ports(info.component_type)
    if ports:
        container["ports"] = ports
    container.update(default_probes(info.component_type))
    return container


def build_pod_template(
    info: ComponentInfo, ctx: RenderContext, role: str = "main", addressing: Addressing | None = None
) -> dict:
    """The pod template of a component; ``role`` is "main" (single node), "leader" or "worker".

    ``addressing`` says how a multinode pod finds its leader and rank (Grove or LWS); None means LWS.
    In steps: the user's containers, the main container (defaults, the user's main over them, the
    multinode role), the operator's volumes mounted into it, then the pod around them.
    """
    template = info.spec.get("podTemplate") or {}
    user_spec = copy.deepcopy(template.get("spec") or {})
    user_main, sidecars = split_containers(user_spec)
    _check_sidecars(info, sidecars)
    cache = compilation_cache_mount(info)
    main = _main_container(info, ctx, user_main, cache, role, addressing or lws_addressing())
    volumes, mounts = _operator_volumes(info, ctx, cache)
    _mount(main, mounts)
    sidecars = _with_frontend_sidecar(info, ctx, sidecars, main)
    pod = _pod_spec(info, user_spec, main, sidecars, volumes)
    _add_etcd_access(info, ctx, pod)
    _apply_gms(info, ctx, pod)
    if security.restricted(ctx):  # after every container the operator adds
        security.harden_pod_spec(pod, template.get("spec"))
    if info.annotations.get(names.ANN_DISABLE_PULL_SECRET_DISCOVERY, "").lower() != "true":
        secrets = discover_pull_secrets(pod, info.namespace, ctx.pull_secrets)
        if secrets:
            pod["imagePullSecrets"] = secrets
    metadata = pod_metadata(info, template)
    if info.backend == "trtllm" and info.multinode and ctx.mpi_ssh_key_id:  # new MPI SSH keys roll the pods
        metadata["annotations"] = dict(
            sorted({**metadata.get("annotations", {}), names.ANN_MPI_SSH_KEY_ID: ctx.mpi_ssh_key_id}.items())
        )
    return {"metadata": metadata, "spec": _ordered_pod(pod)}


def frontend_sidecar(info: ComponentInfo, ctx: RenderContext, user: dict, main: dict) -> dict:
    """The container ``frontendSidecar`` names, completed as a frontend: ``python3 -m dynamo.frontend``
    (``args`` given replace the default args only, the command stays), the frontend's Dynamo env (with the
    infrastructure and credential env every component gets), its ``http`` port and probes; the user's
    fields merged over them as over ``main`` (env by name, probes wholesale); and the main container's
    volume mounts it lacks (shared memory, credentials, caches)."""
    frontend = dataclasses.replace(info, component_type="frontend", node_count=1)
    name = user["name"]
    base: dict = {
        "name": name,
        "command": list(FRONTEND_COMMAND),
        "args": list(FRONTEND_ARGS),
        "env": common_env(frontend, name) + infrastructure_env(ctx, frontend) + type_env(frontend),
        "ports": default_ports("frontend"),
        **default_probes("frontend"),
    }
    out = merge_container(base, user)
    out["name"] = name
    mounts = list(out.get("volumeMounts") or [])
    have = {m.get("name") for m in mounts}
    mounts += [copy.deepcopy(m) for m in main.get("volumeMounts") or [] if m.get("name") not in have]
    if mounts:
        out["volumeMounts"] = mounts
    return {**{k: out[k] for k in _CONTAINER_ORDER if k in out}, **out}


def _with_frontend_sidecar(
    info: ComponentInfo, ctx: RenderContext, sidecars: list[dict], main: dict
) -> list[dict]:
    name = info.spec.get("frontendSidecar")
    if not name:
        return sidecars
    if not any(c.get("name") == name for c in sidecars):
        raise RenderError(
            info.dcd,
            "spec.frontendSidecar",
            f"names no sidecar container ({name!r})",
            "add a container of that name (with its image) to podTemplate.spec.containers, or fix the name",
        )
    return [frontend_sidecar(info, ctx, c, main) if c.get("name") == name else c for c in sidecars]


def _add_etcd_access(info: ComponentInfo, ctx: RenderContext, pod: dict) -> None:
    """The namespace's etcd tunnel and proxy sidecars (``etcdaccess.py``), first among the init containers
    (those before them would start without etcd), for a graph on etcd discovery."""
    if not (etcdaccess.enabled(ctx) and etcdaccess.uses_etcd(info.discovery_backend)):
        return
    containers, volumes = etcdaccess.sidecars(info.namespace, ctx, info.dcd)
    ours = {c["name"] for c in containers}
    inits = [c for c in pod.get("initContainers") or [] if c.get("name") not in ours]
    pod["initContainers"] = [*containers, *inits]
    for v in volumes:
        pod["volumes"] = _replace_named(list(pod.get("volumes") or []), v)


def gms_problems(info: ComponentInfo, ctx: RenderContext) -> list:
    """The component's GMS / failover problems (``gms.problems``), as admission reports them."""
    return gms.problems(info.spec, info.backend, info.annotations, ctx.dra_enabled)


def _apply_gms(info: ComponentInfo, ctx: RenderContext, pod: dict) -> None:
    """GPU memory service (and intra-pod failover) wiring of the pod spec, when the component asks."""
    spec = gms.gms_spec(info.spec)  # a failover's own, when it names none
    if spec is None:
        return
    gms.raise_first(info.dcd, gms_problems(info, ctx))
    failover = gms.failover_spec(info.spec) is not None
    engines = gms.ENGINE_COUNT if failover else 1
    gms.apply_gms(pod, spec, names.claim_template_name(info.name), engines)
    if failover:
        gms.apply_failover(pod, info.spec, gms.backend_of(info.spec, info.backend))
    if info.multinode:  # a TensorRT-LLM leader's remote ranks need the env added here too
        for container in pod["containers"]:
            forward_env(container)


def _check_sidecars(info: ComponentInfo, sidecars: list[dict]) -> None:
    for i, c in enumerate(sidecars):
        if not c.get("image"):
            raise RenderError(
                info.dcd,
                f"spec.podTemplate.spec.containers[{c.get('name') or i}].image",
                "a sidecar container needs an image (the operator injects defaults only into 'main')",
                "set image on the sidecar",
            )


def _main_container(
    info: ComponentInfo,
    ctx: RenderContext,
    user_main: dict | None,
    cache: tuple[str, str] | None,
    role: str,
    addressing: Addressing,
) -> dict:
    """The operator's defaults with the user's ``main`` merged over them; a multinode role rewrites the
    launch, ports and probes."""
    main = merge_container(base_container(info, ctx, user_main, cache), user_main)
    main["name"] = names.MAIN_CONTAINER
    if not main.get("image"):
        raise RenderError(
            info.dcd,
            "spec.podTemplate.spec.containers[main].image",
            "the main container has no image",
            "add a container named 'main' with an image to podTemplate.spec.containers",
        )
    if role != "main":
        role_ports = rewrite_launch(info, main, role, addressing)
        if role_ports:
            main["ports"] = merge_named(main.get("ports") or [], role_ports)
        probes = multinode_probes({k: main[k] for k in PROBE_KINDS if k in main}, info.backend, role)
        for k in PROBE_KINDS:
            main.pop(k, None)
        main.update(probes)
    for i, m in enumerate(main.get("volumeMounts") or []):
        if not m.get("name") or not m.get("mountPath"):
            raise RenderError(
                info.dcd,
                f"spec.podTemplate.spec.containers[main].volumeMounts[{i}]",
                "a volume mount needs name and mountPath",
                "set both",
            )
    return main


def _operator_volumes(
    info: ComponentInfo, ctx: RenderContext, cache: tuple[str, str] | None
) -> tuple[list[dict], list[dict]]:
    """(volumes, main-container mounts) the operator adds: compilation cache, checkpoint storage, the EPP
    config, the MPI SSH secret of multinode TensorRT-LLM, /dev/shm. They replace the user's of the same
    name."""
    volumes: list[dict] = []
    mounts: list[dict] = []
    if cache:
        volumes.append({"name": COMPILATION_CACHE_VOLUME, "persistentVolumeClaim": {"claimName": cache[0]}})
        mounts.append({"name": COMPILATION_CACHE_VOLUME, "mountPath": cache[1]})
    if info.checkpoint and str(ctx.config("checkpoint", "storage", "type")).lower() == "pvc":
        claim = ctx.config("checkpoint", "storage", "pvc", "pvcName")
        base = str(ctx.config("checkpoint", "storage", "pvc", "basePath"))
        _refuse_checkpoint_clash(info, base)
        volumes.append({"name": CHECKPOINT_VOLUME, "persistentVolumeClaim": {"claimName": str(claim)}})
        mounts.append({"name": CHECKPOINT_VOLUME, "mountPath": base})
    if info.component_type == "epp":
        cm, _ = epp_config_source(info)
        volumes.append({"name": EPP_CONFIG_VOLUME, "configMap": {"name": cm}})
        mounts.append({"name": EPP_CONFIG_VOLUME, "mountPath": EPP_CONFIG_DIR, "readOnly": True})
    if info.backend == "trtllm" and info.multinode:
        secret = ctx.config("mpi", "sshSecretName")
        if not secret:
            raise RenderError(
                info.dcd,
                "spec.multinode",
                "multinode TensorRT-LLM needs the MPI SSH secret",
                "set mpi.sshSecretName in the operator configuration",
            )
        volumes.append(
            {"name": str(secret), "secret": {"secretName": str(secret), "defaultMode": MPI_SSH_SECRET_MODE}}
        )
        mounts.append({"name": str(secret), "mountPath": MPI_SSH_MOUNT_PATH})
    cred_volumes, cred_mounts = credential_volumes(ctx)  # NATS credentials file / TLS material, if any
    volumes += cred_volumes
    mounts += cred_mounts
    shm = shared_memory_size(info.spec, info.dcd)
    if shm:
        volumes.append({"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": shm}})
        mounts.append({"name": SHM_VOLUME, "mountPath": SHM_MOUNT_PATH})
    return volumes, mounts


def _refuse_checkpoint_clash(info: ComponentInfo, base_path: str) -> None:
    """A user volume or ``main`` mount the checkpoint PVC would silently replace (``restore.volume_clashes``,
    the rule admission applies too), or a ``main`` mount at the checkpoint base path."""
    clashes = volume_clashes(info.spec)
    if clashes:
        raise RenderError(info.dcd, spec_path(clashes[0].path), clashes[0].detail, clashes[0].fix)
    main, _ = split_containers(((info.spec.get("podTemplate") or {}).get("spec")) or {})
    for k, m in enumerate((main or {}).get("volumeMounts") or []):
        if str(m.get("mountPath", "")).rstrip("/") == base_path.rstrip("/"):
            raise RenderError(
                info.dcd,
                f"spec.podTemplate.spec.containers[main].volumeMounts[{k}].mountPath",
                f"{base_path!r} is where the operator mounts the checkpoint PVC (checkpoint.storage.pvc."
                "basePath)",
                "mount your volume elsewhere",
            )


def _mount(main: dict, mounts: list[dict]) -> None:
    """Add ``mounts`` to ``main``, each replacing a user mount of the same name or path."""
    main_mounts = list(main.get("volumeMounts") or [])
    for m in mounts:
        main_mounts = [
            x for x in main_mounts if x.get("name") != m["name"] and x.get("mountPath") != m["mountPath"]
        ]
        main_mounts.append(m)
    if main_mounts:
        main["volumeMounts"] = main_mounts


def _pod_spec(
    info: ComponentInfo, user_spec: dict, main: dict, sidecars: list[dict], volumes: list[dict]
) -> dict:
    """Pod level: defaults, then every user podTemplate.spec field except containers over them, the
    operator's volumes, and a PVC volume for each mount of a volume not declared (v1alpha1 volumeMounts)."""
    pod: dict = {
        "terminationGracePeriodSeconds": TERMINATION_GRACE_PERIOD_SECONDS,
        "restartPolicy": RESTART_POLICY,
    }
    if info.component_type == "planner":
        pod["serviceAccountName"] = names.PLANNER_SERVICE_ACCOUNT
    elif info.component_type == "epp":
        pod["serviceAccountName"] = names.EPP_SERVICE_ACCOUNT
    elif discovery.enabled(info):  # the runtime publishes and watches DynamoWorkerMetadata as this account
        pod["serviceAccountName"] = discovery.service_account_name(info)
    for key, value in user_spec.items():
        if key != "containers" and value is not None:
            pod[key] = value
    if "securityContext" not in user_spec or user_spec.get("securityContext") is None:
        pod["securityContext"] = {"fsGroup": DEFAULT_FS_GROUP}
    pod_volumes = list(pod.get("volumes") or [])
    for v in volumes:
        pod_volumes = _replace_named(pod_volumes, v)
    have = {v.get("name") for v in pod_volumes}
    for m in main.get("volumeMounts") or []:
        if m["name"] not in have:  # a mount of a PVC by name (v1alpha1 volumeMounts)
            have.add(m["name"])
            pod_volumes.append({"name": m["name"], "persistentVolumeClaim": {"claimName": m["name"]}})
    if pod_volumes:
        pod["volumes"] = pod_volumes
    main = {**{k: main[k] for k in _CONTAINER_ORDER if k in main}, **main}
    pod["containers"] = [main, *sidecars]
    return pod


def system_labels(info: ComponentInfo) -> dict:
    labels = {
        names.LABEL_SELECTOR: info.name,
        names.LABEL_DGD_NAME: info.dgd_name or info.name,
        names.LABEL_COMPONENT: info.component_name,
        names.LABEL_COMPONENT_TYPE: info.type_label,
        names.LABEL_DYNAMO_NAMESPACE: info.dynamo_namespace,
    }
    if info.discovery_backend == "kubernetes":
        labels[names.LABEL_DISCOVERY_BACKEND] = "kubernetes"
        labels[names.LABEL_DISCOVERY_ENABLED] = "true"
    if info.worker_hash:
        labels[names.LABEL_WORKER_HASH] = info.worker_hash
    if info.component_type in names.SUB_COMPONENT_TYPES:  # what an EPP's label filter selects on
        labels[names.LABEL_SUB_COMPONENT_TYPE] = info.component_type
    model = (info.spec.get("modelRef") or {}).get("name")
    if model:
        labels[names.LABEL_BASE_MODEL_HASH] = names.model_hash(model)
    return labels


def pod_metadata(info: ComponentInfo, template: dict) -> dict:
    meta = template.get("metadata") or {}
    labels: dict = {}
    if info.annotations.get(names.ANN_ENABLE_METRICS, "").lower() != "false":
        labels[names.LABEL_METRICS_ENABLED] = "true"
    labels.update(meta.get("labels") or {})
    labels.update(system_labels(info))  # users cannot override the labels selectors depend on
    annotations = dict(meta.get("annotations") or {})
    model = (info.spec.get("modelRef") or {}).get("name")
    if model:
        annotations.setdefault(names.ANN_BASE_MODEL, model)
    if info.checkpoint:
        annotations[names.ANN_DYNAMO_NAMESPACE] = info.dynamo_namespace
    out: dict = {"labels": dict(sorted(labels.items()))}
    if annotations:
        out["annotations"] = dict(sorted(annotations.items()))
    return out


_POD_ORDER = (
    "serviceAccountName",
    "terminationGracePeriodSeconds",
    "restartPolicy",
    "securityContext",
    "imagePullSecrets",
    "initContainers",
    "containers",
    "volumes",
)


def _ordered_pod(pod: dict) -> dict:
    out = {k: pod[k] for k in _POD_ORDER if k in pod}
    out.update({k: v for k, v in pod.items() if k not in out})
    return out


__all__ = ["build_pod_template", "ensure_main", "merge_env", "shared_memory_size", "split_containers"]
