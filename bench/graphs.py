"""The benchmark's graph: a disaggregated vLLM deployment (frontend + prefill + decode workers, one replica
each, no GPU request so hundreds fit on the fake nodes) in the internal (v1beta1) shape."""

from __future__ import annotations

import math

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"
COMPONENTS = (
    ("Frontend", "frontend", ["python3", "-m", "dynamo.frontend"], []),
    ("VllmPrefillWorker", "prefill", ["python3", "-m", "dynamo.vllm"], ["--is-prefill-worker"]),
    ("VllmDecodeWorker", "decode", ["python3", "-m", "dynamo.vllm"], []),
)
PODS_PER_GRAPH = len(COMPONENTS)
PODS_PER_NODE = 110  # the local cluster's fake node capacity


def graph(name: str, namespace: str) -> dict:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "backendFramework": "vllm",
            "components": [
                {
                    "name": cname,
                    "type": ctype,
                    "replicas": 1,
                    "podTemplate": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "main",
                                    "image": IMAGE,
                                    "command": command,
                                    "args": ["--model", "Qwen/Qwen3-0.6B", *args],
                                }
                            ]
                        }
                    },
                }
                for cname, ctype, command, args in COMPONENTS
            ],
        },
    }


def names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}-{i:04d}" for i in range(n)]


def nodes_for(graphs: int) -> int:
    """Fake nodes enough for every pod (110 pods a node), plus one spare."""
    return math.ceil(graphs * PODS_PER_GRAPH / PODS_PER_NODE) + 1
