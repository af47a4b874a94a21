"""Default container ports per component type and the backend multinode ports."""

from __future__ import annotations

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

# Backend-specific (multinode) ports.
VLLM_RAY_HEAD_PORT = 6379
VLLM_DP_RPC_PORT = 13445
SGLANG_DIST_INIT_PORT = 29500
TRTLLM_SSH_PORT = 2222


def _port(name: str, number: int) -> dict:
    return {"name": name, "containerPort": number, "protocol": "TCP"}


def default_ports(component_type: str | None) -> list[dict]:
    """The container ports the operator gives the ``main`` container of a component type."""
    if component_type == "frontend":
        return [_port(FRONTEND_HTTP_PORT_NAME, FRONTEND_HTTP_PORT)]
    if component_type in ("worker", "prefill", "decode"):
        return [_port(SYSTEM_PORT_NAME, SYSTEM_PORT), _port(NIXL_PORT_NAME, NIXL_PORT)]
    if component_type == "planner":
        return [_port(METRICS_PORT_NAME, PLANNER_METRICS_PORT)]
    if component_type == "epp":
        return [
            _port(EPP_GRPC_PORT_NAME, EPP_GRPC_PORT),
            _port(EPP_GRPC_HEALTH_PORT_NAME, EPP_GRPC_HEALTH_PORT),
            _port(METRICS_PORT_NAME, EPP_METRICS_PORT),
        ]
    return []


def service_ports(component_type: str | None) -> list[dict]:
    """Ports of the component Service (one per type; empty means no Service)."""
    if component_type == "frontend":
        return [
            {
                "name": "http",
                "port": FRONTEND_HTTP_PORT,
                "targetPort": FRONTEND_HTTP_PORT_NAME,
                "protocol": "TCP",
            }
        ]
    if component_type in ("worker", "prefill", "decode"):
        return [{"name": "system", "port": SYSTEM_PORT, "targetPort": SYSTEM_PORT_NAME, "protocol": "TCP"}]
    if component_type == "planner":
        return [
            {
                "name": "metrics",
                "port": PLANNER_METRICS_PORT,
                "targetPort": METRICS_PORT_NAME,
                "protocol": "TCP",
            }
        ]
    if component_type == "epp":
        return [
            {
                "name": "grpc",
                "port": EPP_GRPC_PORT,
                "targetPort": EPP_GRPC_PORT,
                "protocol": "TCP",
                "appProtocol": "http2",
            }
        ]
    return []
