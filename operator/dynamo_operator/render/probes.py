"""Default health probes per component type, and the multinode changes per backend."""

from __future__ import annotations

import copy

from .ports import (
    EPP_GRPC_HEALTH_PORT,
    FRONTEND_HTTP_PORT_NAME,
    SYSTEM_PORT_NAME,
    TRTLLM_SSH_PORT,
)

PROBE_KINDS = ("livenessProbe", "readinessProbe", "startupProbe")

FRONTEND_READINESS_COMMAND = (
    'curl -s http://localhost:${DYNAMO_PORT}/health | jq -e ".status == \\"healthy\\""'
)


def _http(path: str, port: str) -> dict:
    return {"httpGet": {"path": path, "port": port}}


def frontend_probes() -> dict:
    return {
        "livenessProbe": {
            **_http("/health", FRONTEND_HTTP_PORT_NAME),
            "initialDelaySeconds": 60,
            "periodSeconds": 60,
            "timeoutSeconds": 30,
            "failureThreshold": 10,
        },
        "readinessProbe": {
            "exec": {"command": ["/bin/sh", "-c", FRONTEND_READINESS_COMMAND]},
            "initialDelaySeconds": 60,
            "periodSeconds": 60,
            "timeoutSeconds": 30,
            "failureThreshold": 10,
        },
    }


def worker_probes() -> dict:
    return {
        "livenessProbe": {
            **_http("/live", SYSTEM_PORT_NAME),
            "periodSeconds": 5,
            "timeoutSeconds": 30,
            "failureThreshold": 1,
        },
        "readinessProbe": {
            **_http("/health", SYSTEM_PORT_NAME),
            "periodSeconds": 10,
            "timeoutSeconds": 30,
            "failureThreshold": 60,
        },
        "startupProbe": {
            **_http("/live", SYSTEM_PORT_NAME),
            "periodSeconds": 10,
            "timeoutSeconds": 5,
            "failureThreshold": 720,
        },
    }


def epp_probes() -> dict:
    """Not in the defaults document; upstream's gRPC health probes of the EPP (port 9003)."""
    grpc = {"grpc": {"port": EPP_GRPC_HEALTH_PORT, "service": "inference-extension"}}
    return {
        "livenessProbe": {**grpc, "initialDelaySeconds": 5, "periodSeconds": 10},
        "readinessProbe": {**grpc, "initialDelaySeconds": 5, "periodSeconds": 10},
        "startupProbe": {**grpc, "periodSeconds": 10, "failureThreshold": 180},
    }


def default_probes(component_type: str | None) -> dict:
    """Probes keyed by container field name. Planner and untyped components get none."""
    if component_type == "frontend":
        return frontend_probes()
    if component_type in ("worker", "prefill", "decode"):
        return worker_probes()
    if component_type == "epp":
        return epp_probes()
    return {}


def trtllm_worker_readiness() -> dict:
    return {
        "tcpSocket": {"port": TRTLLM_SSH_PORT},
        "initialDelaySeconds": 20,
        "periodSeconds": 20,
        "timeoutSeconds": 5,
        "failureThreshold": 10,
    }


def multinode_probes(probes: dict, backend: str | None, role: str) -> dict:
    """Apply the multinode rules to a container's probes for ``role`` ("leader" or "worker").

    Leaders keep every probe. Workers: vLLM and SGLang lose all probes; TensorRT-LLM loses
    liveness and startup and gets a TCP readiness check on the SSH port. Without a backend the
    probes are left alone.
    """
    out = copy.deepcopy(probes)
    if role != "worker":
        return out
    if backend in ("vllm", "sglang"):
        return {}
    if backend == "trtllm":
        return {"readinessProbe": trtllm_worker_readiness()}
    return out
