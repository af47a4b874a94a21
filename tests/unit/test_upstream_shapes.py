"""Upstream's shapes as a regression set: graphs written here the way upstream Dynamo's examples and recipes
write them (failover, GPU memory service, EPP, checkpoints, ingress, multinode, KV-transfer topology),
each admitted by our validating webhook's rules and rendered by ``render_all`` with the integrations it
needs switched on. None may be refused for a reason upstream does not have; what upstream accepts and
ignores in part is accepted with a warning, never refused.

The facts were looked up in upstream's sources (examples/backends/*/deploy, docs/kubernetes, the
operator's internal/dynamo); the manifests are written here, not copied (test_upstream_manifests.py holds
files copied byte for byte). Each case names the upstream file whose shape it follows.
"""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.render import RenderContext, render_all
from dynamo_operator.webhooks.validation import Context, validate
from support import graphs
from support.upstream_shapes import SGLANG, TRTLLM, VLLM, beta, beta_frontend, beta_worker, checkpoint_cases

CONTAINER_MODE = {"nvidia.com/dynamo-kube-discovery-mode": "container"}
# every integration a case may need: DRA (GPU memory service), the InferencePool API (EPP), Istio, LWS
# and Grove (multinode), the MPI SSH Secret (TensorRT-LLM multinode), checkpoints on a claim
DETECTED = frozenset({"dra", "inferencePool", "istio", "lws"})
CONFIG = {
    "mpi": {"sshSecretName": "mpi-run-ssh-secret", "sshSecretNamespace": "dynamo-system"},
    "checkpoint": {"enabled": True, "storage": {"type": "pvc", "pvc": {"pvcName": "snapshot-pvc"}}},
    "ingress": {"hostSuffix": "example.com"},
}


def alpha(name: str, services: dict, annotations: dict | None = None, **spec) -> dict:
    metadata = {"annotations": annotations} if annotations else None
    return graphs.dgd_v1alpha1(services, name=name, namespace="team", metadata=metadata, **spec)


def alpha_frontend(image: str = VLLM) -> dict:
    return {
        "envFromSecret": "hf-token-secret",
        "componentType": "frontend",
        "replicas": 1,
        "extraPodSpec": {"mainContainer": {"image": image}},
    }


def alpha_worker(backend: str, image: str, args: list[str], gpus: str = "1", **svc) -> dict:
    return {
        "envFromSecret": "hf-token-secret",
        "componentType": "worker",
        "replicas": 1,
        "resources": {"limits": {"gpu": gpus}, "requests": {"custom": {"ephemeral-storage": "2Gi"}}},
        "extraPodSpec": {
            "mainContainer": {
                "image": image,
                "workingDir": f"/workspace/examples/backends/{backend}",
                "command": ["python3", "-m", f"dynamo.{backend}"],
                "args": args,
            }
        },
        **svc,
    }


QWEN_TP2_GMS = ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2", "--load-format", "gms"]


ON = {"enabled": True}


def vllm_failover_cases() -> dict[str, tuple[dict, str]]:
    """(graph, what the render must contain) in the shapes of upstream's vLLM failover examples."""
    tp16 = ["--model", "deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "16", "--load-format", "gms"]
    on = ON
    return {
        # examples/backends/vllm/deploy/agg_failover.yaml
        "vllm agg failover (v1alpha1)": (
            alpha(
                "vllm-agg-failover",
                {
                    "Frontend": alpha_frontend(),
                    "VllmWorker": alpha_worker(
                        "vllm", VLLM, QWEN_TP2_GMS, "2", gpuMemoryService=on, failover=on
                    ),
                },
                CONTAINER_MODE,
            ),
            "engine-1",
        ),
        # examples/backends/vllm/deploy/v1beta1/agg_failover.yaml
        "vllm agg failover (v1beta1)": (
            beta(
                "vllm-agg-failover",
                [
                    beta_frontend(),
                    beta_worker(
                        "VllmWorker",
                        "vllm",
                        VLLM,
                        QWEN_TP2_GMS,
                        "2",
                        experimental={"failover": {}, "gpuMemoryService": {}},
                    ),
                ],
                CONTAINER_MODE,
            ),
            "engine-1",
        ),
        # the multinode failover shape: failover alone (no gpuMemoryService, no discovery-mode annotation)
        "vllm multinode failover, failover alone (v1alpha1)": (
            alpha(
                "vllm-mn-failover",
                {
                    "Frontend": alpha_frontend(),
                    "VllmWorker": alpha_worker(
                        "vllm", VLLM, tp16, "8", failover=on, multinode={"nodeCount": 2}
                    ),
                },
            ),
            "'--master-port', '29600'",
        ),
    }


def other_failover_cases() -> dict[str, tuple[dict, str]]:
    """The TensorRT-LLM and SGLang failover shapes."""
    eagle = [
        "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpus-per-node", "1", "--load-format", "gms",
        "--gms-shadow-mode", "--free-gpu-memory-fraction", "0.75",
        "--override-engine-args", '{"speculative_config":{"decoding_type":"Eagle3","max_draft_len":3}}',
    ]  # fmt: skip
    on = ON
    return {
        # examples/backends/trtllm/deploy/agg_failover_eagle.yaml
        "trtllm agg failover, eagle (v1alpha1)": (
            alpha(
                "trtllm-agg-failover-eagle",
                {
                    "Frontend": alpha_frontend(TRTLLM),
                    "TRTLLMWorker": alpha_worker(
                        "trtllm", TRTLLM, eagle, "1", gpuMemoryService=on, failover=on
                    ),
                },
                CONTAINER_MODE,
            ),
            "DYN_TRTLLM_GMS_SHADOW_MODE",
        ),
        # the SGLang failover path of upstream's operator (failover_sglang.go)
        "sglang agg failover (v1beta1)": (
            beta(
                "sglang-agg-failover",
                [
                    beta_frontend(SGLANG),
                    beta_worker(
                        "decode",
                        "sglang",
                        SGLANG,
                        ["--model-path", "Qwen/Qwen3-0.6B", "--load-format", "gms"],
                        experimental={"failover": {}},
                    ),
                ],
            ),
            "--disable-piecewise-cuda-graph",
        ),
    }


def gms_cases() -> dict[str, tuple[dict, str]]:
    sglang_args = [
        "--model-path", "Qwen/Qwen3-0.6B", "--served-model-name", "Qwen/Qwen3-0.6B", "--page-size", "16",
        "--tp", "1", "--trust-remote-code", "--skip-tokenizer-init", "--load-format", "gms",
    ]  # fmt: skip
    return {
        # examples/backends/vllm/deploy/agg_gms.yaml
        "vllm agg gms (v1alpha1)": (
            alpha(
                "vllm-agg-gms",
                {
                    "Frontend": alpha_frontend(),
                    "VllmWorker": alpha_worker(
                        "vllm",
                        VLLM,
                        ["--model", "Qwen/Qwen3-0.6B", "--load-format", "gms"],
                        gpuMemoryService={"enabled": True},
                    ),
                },
            ),
            "gms-server",
        ),
        # examples/backends/sglang/deploy/v1beta1/agg_gms.yaml
        "sglang agg gms (v1beta1)": (
            beta(
                "sglang-agg-gms",
                [
                    beta_frontend(SGLANG),
                    beta_worker(
                        "decode", "sglang", SGLANG, sglang_args, experimental={"gpuMemoryService": {}}
                    ),
                ],
            ),
            "ResourceClaimTemplate",
        ),
    }


def epp_case() -> dict[str, tuple[dict, str]]:
    """examples/backends/vllm/deploy/gaie/v1beta1/agg.yaml: an EPP with its config inline, a decode worker
    launched by ``/bin/sh -c`` with a frontend sidecar."""
    plugins = [
        {"type": "disagg-profile-handler"},
        {
            "name": "decode-filter",
            "type": "label-filter",
            "parameters": {
                "allowsNoLabel": True,
                "label": "nvidia.com/dynamo-component-type",
                "validValues": ["decode"],
            },
        },
        {"name": "picker", "type": "max-score-picker"},
        {"name": "dyn-decode", "type": "dyn-decode-scorer"},
    ]
    profile = {
        "name": "decode",
        "plugins": [{"pluginRef": p, "weight": 1} for p in ("decode-filter", "dyn-decode", "picker")],
    }
    epp_main = {
        "name": "main",
        "image": "nvcr.io/nvidia/ai-dynamo/epp-image:my-tag",
        "env": [
            {"name": "DYN_KV_CACHE_BLOCK_SIZE", "value": "128"},
            {"name": "DYN_MODEL_NAME", "value": "Qwen/Qwen3-0.6B"},
        ],
    }
    launch = (
        "python3 -m dynamo.vllm --model $MODEL_PATH --served-model-name $SERVED_MODEL_NAME "
        "--tensor-parallel-size 1 --data-parallel-size 1 --block-size 128"
    )
    decode_main = {
        "name": "main",
        "image": VLLM,
        "command": ["/bin/sh", "-c"],
        "args": [launch],
        "env": [
            {"name": "MODEL_PATH", "value": "Qwen/Qwen3-0.6B"},
            {"name": "SERVED_MODEL_NAME", "value": "Qwen/Qwen3-0.6B"},
        ],
        "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}},
    }
    sidecar = {
        "name": "sidecar-frontend",
        "image": VLLM,
        "args": ["-m", "dynamo.frontend", "--router-mode", "direct"],
    }
    components = [
        {
            "name": "Epp",
            "type": "epp",
            "replicas": 1,
            "eppConfig": {"config": {"plugins": plugins, "schedulingProfiles": [profile]}},
            "podTemplate": {"spec": {"containers": [epp_main]}},
        },
        {
            "name": "VllmDecodeWorker",
            "type": "decode",
            "replicas": 1,
            "sharedMemorySize": "2Gi",
            "frontendSidecar": "sidecar-frontend",
            "podTemplate": {"spec": {"containers": [decode_main, sidecar]}},
        },
    ]
    return {
        "epp with a frontend sidecar (v1beta1)": (
            beta("qwen", components, backendFramework="vllm"),
            "InferencePool",
        )
    }


def ingress_and_multinode_cases() -> dict[str, tuple[dict, str]]:
    ingress = {
        "enabled": True,
        "host": "llm-api",
        "ingressControllerClassName": "nginx",
        "tls": {"secretName": "llm-api-tls"},
        "annotations": {"nginx.ingress.kubernetes.io/proxy-read-timeout": "600"},
    }
    frontend = {**alpha_frontend(), "ingress": ingress}
    tp16 = ["--model", "deepseek-ai/DeepSeek-R1", "--tensor-parallel-size", "16"]
    sglang_mn = ["--model-path", "deepseek-ai/DeepSeek-R1", "--tp", "16", "--trust-remote-code"]
    trt_mn = ["--model-path", "deepseek-ai/DeepSeek-R1", "--extra-engine-args", "engine_configs/decode.yaml"]
    mn = {"nodeCount": 2}
    return {
        # the frontend exposure of upstream's v1alpha1 examples (ingress on the Frontend service)
        "frontend behind an Ingress (v1alpha1)": (
            alpha(
                "vllm-agg", {"Frontend": frontend, "VllmWorker": alpha_worker("vllm", VLLM, ["--model", "m"])}
            ),
            "Ingress",
        ),
        # the API reference's own example value: componentType main (upstream's old name of the frontend)
        "componentType main (v1alpha1)": (
            alpha("main", {"Frontend": {**alpha_frontend(), "componentType": "main"}}),
            "dynamo.frontend",
        ),
        # examples/backends/vllm/deploy/disagg-multinode.yaml (LWS pathway: a cluster without Grove)
        "vllm disagg multinode (v1alpha1)": (
            alpha(
                "vllm-disagg-multinode",
                {
                    "Frontend": alpha_frontend(),
                    "decode": alpha_worker("vllm", VLLM, tp16, "8", subComponentType="decode", multinode=mn),
                    "prefill": alpha_worker(
                        "vllm", VLLM, tp16, "8", subComponentType="prefill", multinode=mn
                    ),
                },
            ),
            "LeaderWorkerSet",
        ),
        # examples/backends/sglang/deploy/v1beta1/disagg-multinode.yaml
        "sglang disagg multinode (v1beta1)": (
            beta(
                "sglang-mn",
                [
                    beta_frontend(SGLANG),
                    beta_worker("decode", "sglang", SGLANG, sglang_mn, "8", multinode=mn),
                ],
            ),
            "--dist-init-addr",
        ),
        # examples/backends/trtllm/deploy/disagg-multinode.yaml
        "trtllm multinode (v1alpha1)": (
            alpha(
                "trtllm-mn",
                {
                    "Frontend": alpha_frontend(TRTLLM),
                    "decode": alpha_worker("trtllm", TRTLLM, trt_mn, "8", multinode=mn),
                },
            ),
            "mpirun",
        ),
        # upstream's webhook tests: a KV-transfer policy from a node label, enforcement preferred
        "kv-transfer policy from a node label (v1beta1)": (
            beta(
                "kvt",
                [beta_frontend(), beta_worker("decode", "vllm", VLLM, ["--model", "m"], type="decode")],
                experimental={
                    "kvTransferPolicy": {
                        "labelKey": "topology.kubernetes.io/zone",
                        "domain": "zone",
                        "enforcement": "preferred",
                        "preferredWeight": 1,
                    }
                },
            ),
            "/etc/dynamo/topology",
        ),
    }


CASES = {
    **vllm_failover_cases(),
    **other_failover_cases(),
    **gms_cases(),
    **epp_case(),
    **checkpoint_cases(),
    **ingress_and_multinode_cases(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstreams_shape_is_admitted_and_renders(name):
    graph, shows = CASES[name]
    version = graph["apiVersion"].rpartition("/")[2]
    ctx = Context(operation="CREATE", checkpoint_enabled=True)
    result = validate("DynamoGraphDeployment", version, copy.deepcopy(graph), None, ctx)
    assert result.allowed, f"{name}: {[str(e) for e in result.errors]}"
    out = render_all(copy.deepcopy(graph), RenderContext(operator_config=CONFIG, detected=DETECTED))
    assert out, name
    assert shows in repr(out), f"{name}: the render shows no {shows!r}"


@pytest.mark.parametrize("name", ["vllm agg failover (v1beta1)", "vllm disagg multinode (v1alpha1)"])
def test_upstreams_shape_on_grove_too(name):
    graph, _ = CASES[name]
    version = graph["apiVersion"].rpartition("/")[2]
    result = validate(
        "DynamoGraphDeployment", version, copy.deepcopy(graph), None, Context(grove_enabled=True)
    )
    assert result.allowed, [str(e) for e in result.errors]
    out = render_all(
        copy.deepcopy(graph), RenderContext(operator_config=CONFIG, detected=DETECTED | {"grove"})
    )
    assert any(o["kind"] == "PodCliqueSet" for o in out)
