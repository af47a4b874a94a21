"""Operator-injected environment variables (defaults document, "Environment Variables")."""

from __future__ import annotations

from . import etcdaccess, names, natsaccess
from .context import RenderContext
from .credentials import credential_env
from .info import ComponentInfo, vllm_multinode_mode
from .multinode import VLLM_MP, vllm_executor
from .ports import (
    FRONTEND_HTTP_PORT,
    NIXL_PORT,
    PLANNER_METRICS_PORT,
    SYSTEM_PORT,
)
from .restore import restore_id


def _v(name: str, value: str) -> dict:
    return {"name": name, "value": value}


def _field(name: str, path: str) -> dict:
    return {"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": path}}}


def common_env(info: ComponentInfo, container: str = names.MAIN_CONTAINER) -> list[dict]:
    """Injected into every component; ``container`` is the container it goes into (per-container discovery
    registers each container under its own name)."""
    if info.checkpoint:
        # A restored process was checkpointed in another pod: read the namespace from this pod's annotation.
        dyn_ns = _field("DYN_NAMESPACE", f"metadata.annotations['{names.ANN_DYNAMO_NAMESPACE}']")
    else:
        dyn_ns = _v("DYN_NAMESPACE", info.dynamo_namespace)
    env = [dyn_ns]
    if info.component_type:
        env.append(_v("DYN_COMPONENT", info.component_type))
    env += [
        _v("DYN_PARENT_DGD_K8S_NAME", info.dgd_name or info.name),
        _v("DYN_PARENT_DGD_K8S_NAMESPACE", info.namespace),
        _field("POD_NAME", "metadata.name"),
        _field("POD_NAMESPACE", "metadata.namespace"),
        _field("POD_UID", "metadata.uid"),
        _v("DYN_DISCOVERY_BACKEND", info.discovery_backend),
    ]
    if info.kube_discovery_mode == names.KUBE_DISCOVERY_CONTAINER:
        env += [
            _v("CONTAINER_NAME", container),
            _v("DYN_KUBE_DISCOVERY_MODE", names.KUBE_DISCOVERY_CONTAINER),
        ]
    return env


INFRASTRUCTURE_ENV = (
    ("NATS_SERVER", "natsAddress"),
    ("ETCD_ENDPOINTS", "etcdAddress"),
    ("MODEL_EXPRESS_URL", "modelExpressURL"),
    ("PROMETHEUS_ENDPOINT", "prometheusEndpoint"),
)


def _nats_tls(ctx: RenderContext) -> bool:
    """The runtime speaks TLS to NATS (its own namespace's certificate, or ``natsTLS``): it then needs the
    ``tls://`` scheme in ``NATS_SERVER`` (the runtime 1.6.1 refuses TLS files with ``nats://``)."""
    return natsaccess.enabled(ctx) or bool(ctx.config("infrastructure", "natsTLS", "secretName"))


def infrastructure_env(ctx: RenderContext, info: ComponentInfo) -> list[dict]:
    """Injected into every component when the OperatorConfiguration configures the service, followed by
    the NATS / etcd credentials when configured (``credentials.py``). With per-namespace etcd access
    (``etcdaccess.py``) etcd is the pod's own proxy, for graphs on etcd discovery only; NATS over TLS is
    addressed ``tls://`` (``natsaccess.server_address``)."""
    env = []
    per_namespace = etcdaccess.enabled(ctx)
    for var, key in INFRASTRUCTURE_ENV:
        value = ctx.config("infrastructure", key)
        if value and var == "ETCD_ENDPOINTS" and per_namespace:
            if etcdaccess.uses_etcd(info.discovery_backend):
                env.append(_v(var, etcdaccess.PROXY_ADDRESS))
        elif value and var == "NATS_SERVER" and _nats_tls(ctx):
            env.append(_v(var, natsaccess.server_address(str(value))))
        elif value:
            env.append(_v(var, str(value)))
    return env + credential_env(ctx)


def type_env(info: ComponentInfo) -> list[dict]:
    t = info.component_type
    if t == "frontend":
        return [
            _v("DYNAMO_PORT", str(FRONTEND_HTTP_PORT)),
            _v("DYN_HTTP_PORT", str(FRONTEND_HTTP_PORT)),
            _v("DYN_NAMESPACE_PREFIX", info.dynamo_namespace),
        ]
    if t in names.WORKER_TYPES:
        env = [
            _v("DYN_SYSTEM_ENABLED", "true"),
            _v("DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS", '["generate"]'),
            _v("DYN_SYSTEM_PORT", str(SYSTEM_PORT)),
            _v("DYN_HEALTH_CHECK_ENABLED", "false"),
            _v("NIXL_TELEMETRY_ENABLE", "n"),
            _v("NIXL_TELEMETRY_EXPORTER", "prometheus"),
            _v("NIXL_TELEMETRY_PROMETHEUS_PORT", str(NIXL_PORT)),
        ]
        if info.worker_hash:
            env.append(_v("DYN_NAMESPACE_WORKER_SUFFIX", info.worker_hash))
        return env
    if t == "planner":
        return [_v("PLANNER_PROMETHEUS_PORT", str(PLANNER_METRICS_PORT))]
    if t == "epp":
        return [_v("USE_STREAMING", "true"), _v("RUST_LOG", "debug,dynamo_llm::kv_router=trace")]
    return []


def backend_env(info: ComponentInfo, main: dict, cache_mount_path: str | None) -> list[dict]:
    env: list[dict] = []
    if info.backend == "vllm":
        if cache_mount_path:
            env.append(_v("VLLM_CACHE_ROOT", cache_mount_path))
        if (
            info.multinode
            and info.is_worker
            and vllm_multinode_mode(main) == "tp-pp"
            and vllm_executor(info.annotations, info.spec) == VLLM_MP
        ):
            env.append(_field("VLLM_NIXL_SIDE_CHANNEL_HOST", "status.podIP"))
    elif info.backend == "trtllm" and info.multinode:
        env.append(_v("OMPI_MCA_orte_keep_fqdn_hostnames", "1"))
    return env


def checkpoint_env(info: ComponentInfo, ctx: RenderContext) -> list[dict]:
    """The defaults document's "Checkpoint / Restore" variables (``restore.py`` says which checkpoint)."""
    if not info.checkpoint:
        return []
    storage = str(ctx.config("checkpoint", "storage", "type")).lower()
    ident = restore_id(info, ctx)
    env: list[dict] = []
    if storage == "pvc":
        base = ctx.config("checkpoint", "storage", "pvc", "basePath")
        env.append(_v("DYN_CHECKPOINT_PATH", str(base)))
    else:
        uri = ctx.config("checkpoint", "storage", storage, "uri")
        if uri:
            location = f"{str(uri).rstrip('/')}/{ident}" if ident else str(uri)
            env.append(_v("DYN_CHECKPOINT_LOCATION", location))
    if ident:
        env.append(_v("DYN_CHECKPOINT_HASH", ident))
    env.append(_v("SKIP_WAIT_FOR_CHECKPOINT", "true"))
    return env


def default_env(
    info: ComponentInfo,
    ctx: RenderContext,
    main: dict,
    cache_mount_path: str | None,
    container: str = names.MAIN_CONTAINER,
) -> list[dict]:
    """All operator env for the ``main`` container (or the frontend sidecar ``container``), in table order
    (user env is merged over it)."""
    return (
        common_env(info, container)
        + infrastructure_env(ctx, info)
        + type_env(info)
        + backend_env(info, main, cache_mount_path)
        + checkpoint_env(info, ctx)
    )
