"""The MPI sshd NetworkPolicy of a graph (OperatorConfiguration ``mpi.sshNetworkPolicy``, a
dynamo-platform extension, on by default: issue 30).

A multinode TensorRT-LLM component runs ``sshd`` on port 2222 in its worker pods so that the leader's
``mpirun`` can start ranks there. Anything that can reach that port may try the key; this policy admits it
only from pods of the same graph. Why per graph and rendered by the operator: a policy rendered by the
chart per namespace cannot say "the same graph" (NetworkPolicy has no "same label value as the target"),
and a cluster-wide chart cannot know the namespaces graphs run in.

The policy selects the pods of the graph's multinode TensorRT-LLM components and allows (a) everything
from pods of the same graph (MPI and NCCL also use ports other than 2222), (b) every other TCP port and all
UDP from anywhere, so selecting the pods changes nothing but port 2222. ``endPort`` ranges are stable
since Kubernetes 1.25; a CNI that ignores them would block those ports instead (docs/security-network.md).
"""

from __future__ import annotations

from . import names
from .context import RenderContext
from .graph import graph_backend
from .hashing import stamp
from .ports import TRTLLM_SSH_PORT

API_VERSION = "networking.k8s.io/v1"
KIND = "NetworkPolicy"
MAX_PORT = 65535


def mpi_ssh_policy_name(dgd_name: str) -> str:
    return names.dns_label(f"{dgd_name}-mpi-ssh")


def mpi_components(dgd: dict) -> list[str]:
    """Names of a (v1beta1) graph's components that run sshd: multinode TensorRT-LLM workers."""
    if graph_backend(dgd) != "trtllm":
        return []
    return [
        c["name"]
        for c in (dgd.get("spec") or {}).get("components") or []
        if c.get("type") in names.WORKER_TYPES and int((c.get("multinode") or {}).get("nodeCount") or 1) > 1
    ]


def _all_ports_but(port: int) -> list[dict]:
    return [
        {"protocol": "TCP", "port": 1, "endPort": port - 1},
        {"protocol": "TCP", "port": port + 1, "endPort": MAX_PORT},
        {"protocol": "UDP", "port": 1, "endPort": MAX_PORT},
    ]


def mpi_ssh_network_policy(dgd: dict, ctx: RenderContext) -> dict | None:
    """The hash-stamped NetworkPolicy of a (v1beta1, validated) graph, or None when the configuration does
    not ask for it or the graph has no multinode TensorRT-LLM component."""
    if not ctx.config("mpi", "sshNetworkPolicy"):
        return None
    components = mpi_components(dgd)
    if not components:
        return None
    meta = dgd["metadata"]
    graph = {names.LABEL_DGD_NAME: meta["name"]}
    policy = {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": mpi_ssh_policy_name(meta["name"]),
            "namespace": meta.get("namespace") or "default",
            "labels": {**graph, names.LABEL_MANAGED_BY: names.MANAGED_BY},
            "annotations": {names.ANN_OPERATOR_VERSION: ctx.operator_version},
        },
        "spec": {
            "podSelector": {
                "matchLabels": dict(graph),
                "matchExpressions": [
                    {"key": names.LABEL_COMPONENT, "operator": "In", "values": sorted(components)}
                ],
            },
            "policyTypes": ["Ingress"],
            "ingress": [
                {"from": [{"podSelector": {"matchLabels": dict(graph)}}]},
                {"ports": _all_ports_but(TRTLLM_SSH_PORT)},
            ],
        },
    }
    return stamp(policy)
