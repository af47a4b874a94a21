"""Graphs in the shapes upstream Dynamo's examples and recipes write them (looked up in upstream's sources,
written here, not copied), shared by the unit regression set (tests/unit/test_upstream_shapes.py) and the
tiers that apply them to a cluster (tests/realnode/test_checkpoint.py: upstream's snapshot recipes).
Each case names the upstream file whose shape it follows."""

from __future__ import annotations

from support import graphs

VLLM = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.1"
SGLANG = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.3.1"
TRTLLM = "nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:1.3.1"


def beta(name: str, components: list, annotations: dict | None = None, **spec) -> dict:
    metadata = {"annotations": annotations} if annotations else None
    return graphs.dgd(*components, name=name, namespace="team", metadata=metadata, **spec)


def beta_frontend(image: str = VLLM) -> dict:
    main = {"name": "main", "image": image, "envFrom": [{"secretRef": {"name": "hf-token-secret"}}]}
    return {
        "name": "Frontend",
        "type": "frontend",
        "replicas": 1,
        "podTemplate": {"spec": {"containers": [main]}},
    }


def beta_worker(name: str, backend: str, image: str, args: list[str], gpus: str = "1", **comp) -> dict:
    main = {
        "name": "main",
        "image": image,
        "workingDir": f"/workspace/examples/backends/{backend}",
        "command": ["python3", "-m", f"dynamo.{backend}"],
        "args": args,
        "envFrom": [{"secretRef": {"name": "hf-token-secret"}}],
        "resources": {"limits": {"nvidia.com/gpu": gpus}, "requests": {"ephemeral-storage": "2Gi"}},
    }
    return {
        "name": name,
        "type": "worker",
        "replicas": 1,
        "podTemplate": {"spec": {"containers": [main]}},
        **comp,
    }


def checkpoint_cases() -> dict[str, tuple[dict, str]]:
    tp8 = ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "8", "--disable-custom-all-reduce"]
    wait = {"checkpoint": {"enabled": True, "startupPolicy": "WaitForCheckpoint"}}
    trt = beta_worker(
        "TRTLLMWorker", "trtllm", "nvcr.io/nvidia/ai-dynamo/tensorrtllm-placeholder:1.3.0",
        ["--model-path", "Qwen/Qwen3-0.6B", "--served-model-name", "Qwen/Qwen3-0.6B"], experimental=wait,
    )  # fmt: skip
    pod = trt["podTemplate"]["spec"]
    pod.update(
        runtimeClassName="nvidia",
        nodeSelector={"nvidia.com/gpu.present": "true"},
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        volumes=[
            {"name": "hf-cache", "persistentVolumeClaim": {"claimName": "model-cache"}},
            {"name": "criu-work", "emptyDir": {}},
            {"name": "dev-net-tun", "hostPath": {"path": "/dev/net/tun", "type": "CharDevice"}},
        ],
    )
    pod["containers"][0]["env"] = [{"name": "UCX_TLS", "value": "tcp,self"}]
    pod["containers"][0]["volumeMounts"] = [
        {"name": "hf-cache", "mountPath": "/home/dynamo/.cache/huggingface"},
        {"name": "dev-net-tun", "mountPath": "/dev/net/tun"},
    ]
    return {
        # examples/backends/vllm/deploy/v1beta1/agg_snapshot_tp8.yaml
        "vllm agg snapshot tp8 (v1beta1)": (
            beta(
                "vllm-agg-snapshot-tp8",
                [beta_frontend(), beta_worker("VllmDecodeWorker", "vllm", VLLM, tp8, "8", experimental=wait)],
            ),
            "DynamoCheckpoint",
        ),
        # examples/backends/trtllm/deploy/v1beta1/snapshot-restore.yaml
        "trtllm snapshot restore (v1beta1)": (
            beta(
                "qwen3-0-6b-trtllm-snapshot-restore",
                [beta_frontend(TRTLLM), trt],
                {"nvidia.com/enable-grove": "false"},
                backendFramework="trtllm",
            ),
            "DynamoCheckpoint",
        ),
    }
