"""DynamoGraphDeployments for the local control plane (benchmark, fault tests): one builder, so the graph
a test creates is the graph the benchmark measures, component for component."""

from __future__ import annotations

from dataclasses import dataclass

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"
MODEL_ARGS = ("--model", "Qwen/Qwen3-0.6B")


@dataclass(frozen=True)
class Component:
    name: str
    type: str
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    gpus: int = 0
    replicas: int = 1

    def spec(self) -> dict:
        main: dict = {"name": "main", "image": IMAGE}
        if self.command:
            main["command"] = list(self.command)
        if self.args:
            main["args"] = list(self.args)
        if self.gpus:
            main["resources"] = {"limits": {"nvidia.com/gpu": str(self.gpus)}}
        return {
            "name": self.name,
            "type": self.type,
            "replicas": self.replicas,
            "podTemplate": {"spec": {"containers": [main]}},
        }


# frontend + prefill + decode workers, no GPU request, so hundreds fit on the fake nodes (the benchmark's)
DISAGGREGATED = (
    Component("Frontend", "frontend", ("python3", "-m", "dynamo.frontend"), MODEL_ARGS),
    Component(
        "VllmPrefillWorker",
        "prefill",
        ("python3", "-m", "dynamo.vllm"),
        (*MODEL_ARGS, "--is-prefill-worker"),
    ),
    Component("VllmDecodeWorker", "decode", ("python3", "-m", "dynamo.vllm"), MODEL_ARGS),
)
# the smallest real graph: an OpenAI frontend and one GPU worker (the fault tests')
AGGREGATED = (
    Component("Frontend", "frontend"),
    Component("VllmWorker", "worker", args=MODEL_ARGS, gpus=1),
)


def graph(name: str, namespace: str, components: tuple[Component, ...] = DISAGGREGATED) -> dict:
    """A vLLM graph in the internal (v1beta1) shape."""
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"backendFramework": "vllm", "components": [c.spec() for c in components]},
    }
