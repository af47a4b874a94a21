"""Default container ports per component type and the backend multinode ports."""

from __future__ import annotations

from .names import WORKER_TYPES

# Port numbers and names (defaults document, "Port Configurations").
FRONTEND_HTTP_PORT = 8000
FRONTEND_HTTP_PORT_NAME = "http"
SYSTEM_PORT = 9090
SYSTEM_PORT_NAME = "system"
NIXL_PORT = 19090
NIXL_PORT_NAME = "nixl"
PLANNER_METRICS_PORT = 9085
METRICS_PORT_NAME = "metrics"
EPP_GRPC_PORT = 9002
EPP_GRPC_PORT_NAME = "grpc"
EPP_GRPC_HEALTH_PORT = 9003
EPP_GRPC_HEALTH_PORT_NAME = "grpc-health"
EPP_METRICS_PORT = 9090

# Backend-specific (multinode) ports: the defaults document, "Backend-Specific Configurations". vLLM's
# multiprocessing executor is not in it; its torch.distributed master port is upstream's (29500).
VLLM_RAY_HEAD_PORT = 6379
RAY_HEAD_PORT_NAME = "ray-head"
VLLM_DP_RPC_PORT = 13445
DP_RPC_PORT_NAME = "dp-rpc"
SGLANG_DIST_INIT_PORT = 29500
VLLM_MP_MASTER_PORT = 29500
DIST_INIT_PORT_NAME = "dist-init"
TRTLLM_SSH_PORT = 2222
SSH_PORT_NAME = "ssh"


# (port name, number) of the ``main`` container, per component type.
_CONTAINER_PORTS: dict[str, tuple[tuple[str, int], ...]] = {
    "frontend": ((FRONTEND_HTTP_PORT_NAME, FRONTEND_HTTP_PORT),),
    **dict.fromkeys(WORKER_TYPES, ((SYSTEM_PORT_NAME, SYSTEM_PORT), (NIXL_PORT_NAME, NIXL_PORT))),
    "planner": ((METRICS_PORT_NAME, PLANNER_METRICS_PORT),),
    "epp": (
        (EPP_GRPC_PORT_NAME, EPP_GRPC_PORT),
        (EPP_GRPC_HEALTH_PORT_NAME, EPP_GRPC_HEALTH_PORT),
        (METRICS_PORT_NAME, EPP_METRICS_PORT),
    ),
}

# The component Service's one port, per component type: (name, port, targetPort, appProtocol). The EPP's
# targetPort is the number, not the name, as upstream renders it.
_SERVICE_PORT: dict[str, tuple[str, int, str | int, str | None]] = {
    "frontend": (FRONTEND_HTTP_PORT_NAME, FRONTEND_HTTP_PORT, FRONTEND_HTTP_PORT_NAME, None),
    **dict.fromkeys(WORKER_TYPES, (SYSTEM_PORT_NAME, SYSTEM_PORT, SYSTEM_PORT_NAME, None)),
    "planner": (METRICS_PORT_NAME, PLANNER_METRICS_PORT, METRICS_PORT_NAME, None),
    "epp": (EPP_GRPC_PORT_NAME, EPP_GRPC_PORT, EPP_GRPC_PORT, "http2"),
}


def default_ports(component_type: str | None) -> list[dict]:
    """The container ports the operator gives the ``main`` container of a component type."""
    return [
        {"name": name, "containerPort": number, "protocol": "TCP"}
        for name, number in _CONTAINER_PORTS.get(component_type or "", ())
    ]


def service_ports(component_type: str | None) -> list[dict]:
    """Ports of the component Service (one per type; empty means no Service)."""
    spec = _SERVICE_PORT.get(component_type or "")
    if spec is None:
        return []
    name, port, target, app_protocol = spec
    out: dict = {"name": name, "port": port, "targetPort": target, "protocol": "TCP"}
    if app_protocol:
        out["appProtocol"] = app_protocol
    return [out]
