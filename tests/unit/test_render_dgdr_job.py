"""The DGDR profiling Job from each field (render/dgdr_job.py), ``overrides.profilingJob`` merged and
refused, the GPU discovery that fills ``spec.hardware`` (render/gpu.py), and ``render`` showing the Job."""

from __future__ import annotations

import json

import pytest
from dynamo_operator.api.config import OPERATOR_IMAGE
from dynamo_operator.api.conversion import convert
from dynamo_operator.render import RenderContext, gpu, render_all
from dynamo_operator.render import dgdr_job as dj

EVERY_FIELD = {
    "model": "Qwen/Qwen3-0.6B",
    "backend": "vllm",
    "image": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1",
    "modelCache": {"pvcName": "models", "pvcModelPath": "qwen3", "pvcMountPath": "/opt/models"},
    "hardware": {"gpuSku": "h100_sxm", "vramMb": 81920.0, "totalGpus": 16, "numGpusPerNode": 8, "rdma": True},
    "workload": {"isl": 3000, "osl": 150, "concurrency": 8.0},
    "sla": {"ttft": 200.0, "itl": 20.0, "optimizationType": "latency"},
    "features": {"planner": {"mode": "disagg"}, "mocker": {"enabled": True}},
    "searchStrategy": "thorough",
    "autoApply": True,
}


def request(**spec) -> dict:
    beta = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "req", "namespace": "team", "uid": "u1"},
        "spec": {"model": "Qwen/Qwen3-0.6B", **spec},
    }
    return convert(beta, "v1alpha1")  # as stored


def job_of(req: dict, gpus=None, **kw) -> dict:
    return dj.profiling_job(req, dj.profiler_spec(dj.request_spec(req), gpus=gpus), **kw)


def pod(job: dict) -> dict:
    return job["spec"]["template"]["spec"]


def profiler(job: dict) -> dict:
    return pod(job)["containers"][0]


def test_the_profiler_is_given_every_field_of_the_request():
    j = job_of(request(**EVERY_FIELD))
    p = profiler(j)
    assert p["name"] == "profiler" and p["image"] == EVERY_FIELD["image"]
    assert p["command"] == ["python", "-m", "dynamo.profiler"] and p["workingDir"] == "/workspace"
    assert p["args"][0] == "--config" and p["args"][2:] == ["--output-dir", "/data"]
    assert json.loads(p["args"][1]) == EVERY_FIELD  # the v1beta1 spec, verbatim, whatever was stored
    env = {e["name"]: e for e in p["env"]}
    assert env["HUGGING_FACE_HUB_TOKEN"]["valueFrom"]["secretKeyRef"] == {
        "name": "hf-token-secret",
        "key": "HF_TOKEN",
        "optional": True,
    }
    assert (env["DGDR_NAME"]["value"], env["DGDR_NAMESPACE"]["value"], env["DGDR_UID"]["value"]) == (
        "req",
        "team",
        "u1",
    )


def test_the_model_cache_pvc_is_mounted_read_only():
    j = job_of(request(modelCache={"pvcName": "models", "pvcMountPath": "/opt/models"}))
    assert {"name": "model-cache", "persistentVolumeClaim": {"claimName": "models", "readOnly": True}} in pod(
        j
    )["volumes"]
    assert {"name": "model-cache", "mountPath": "/opt/models", "readOnly": True} in profiler(j)[
        "volumeMounts"
    ]
    default = job_of(request(modelCache={"pvcName": "models"}))
    assert {"name": "model-cache", "mountPath": "/opt/model-cache", "readOnly": True} in profiler(default)[
        "volumeMounts"
    ]
    assert all(v["name"] != "model-cache" for v in pod(job_of(request()))["volumes"])


def test_discovered_hardware_fills_what_the_request_leaves_out():
    info = gpu.GpuInfo("NVIDIA-H200", 8, 143771, 6)
    given = json.loads(profiler(job_of(request(hardware={"totalGpus": 4}), gpus=info))["args"][1])
    assert given["hardware"] == {"totalGpus": 4, "gpuSku": "h200_sxm", "vramMb": 143771, "numGpusPerNode": 8}
    full = {"gpuSku": "a100_sxm", "vramMb": 1.0, "totalGpus": 2, "numGpusPerNode": 2}
    given = json.loads(profiler(job_of(request(hardware=full), gpus=info))["args"][1])
    assert given["hardware"] == full  # all four set: discovery is skipped


def test_v1alpha1_output_pvc_config_map_resources_and_tolerations():
    alpha = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "req", "namespace": "team"},
        "spec": {
            "model": "m",
            "backend": "vllm",
            "profilingConfig": {
                "profilerImage": "p:1",
                "outputPVC": "prof",
                "configMapRef": {"name": "base", "key": "my.yaml"},
                "resources": {"limits": {"cpu": "2"}},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                "nodeSelector": {"pool": "gpu"},
            },
        },
    }
    j = dj.profiling_job(alpha)
    volumes = {v["name"]: v for v in pod(j)["volumes"]}
    assert volumes["output"] == {"name": "output", "persistentVolumeClaim": {"claimName": "prof"}}
    assert volumes["base-config"]["configMap"] == {
        "name": "base",
        "items": [{"key": "my.yaml", "path": "disagg.yaml"}],
    }
    assert {"name": "base-config", "mountPath": "/config", "readOnly": True} in profiler(j)["volumeMounts"]
    assert profiler(j)["resources"] == {"limits": {"cpu": "2"}}
    assert pod(j)["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    assert pod(j)["nodeSelector"] == {"pool": "gpu"}


def test_the_output_copier_runs_the_operators_pinned_image():
    j = job_of(request())
    copier = pod(j)["containers"][1]
    assert copier["image"] == OPERATOR_IMAGE
    assert copier["command"] == ["dynamo-operator", "publish-profiling-output"]
    assert copier["args"] == ["--dir", "/data", "--configmap", "dgdr-output-req"]
    assert copier["volumeMounts"] == [{"name": "output", "mountPath": "/data", "readOnly": True}]
    sc = copier["securityContext"]
    assert sc["runAsNonRoot"] and not sc["allowPrivilegeEscalation"] and sc["readOnlyRootFilesystem"]
    assert j["spec"]["backoffLimit"] == 0 and pod(j)["restartPolicy"] == "Never"
    assert pod(j)["serviceAccountName"] == "dgdr-profiling-job"
    pinned = job_of(request(), copier_image="registry.example/op@sha256:" + "a" * 64)
    assert pod(pinned)["containers"][1]["image"].endswith("a" * 64)
    assert j["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "dynamo-operator",
        "dgdr.nvidia.com/name": "req",
        "dgdr.nvidia.com/namespace": "team",
    }


OVERRIDE = {
    "backoffLimit": 2,
    "activeDeadlineSeconds": 7200,
    "template": {
        "metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
        "spec": {
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
            "priorityClassName": "high",
            "securityContext": {"runAsUser": 2000},
            "volumes": [{"name": "extra", "emptyDir": {}}],
            "imagePullSecrets": [{"name": "nvcr"}],
            "containers": [
                {
                    "name": "profiler",
                    "image": "mine:2",
                    "resources": {"requests": {"nvidia.com/gpu": "1"}},
                    "env": [{"name": "DGDR_NAME", "value": "x"}, {"name": "EXTRA", "value": "1"}],
                    "volumeMounts": [{"name": "extra", "mountPath": "/extra"}],
                    "envFrom": [{"secretRef": {"name": "hf"}}],
                }
            ],
        },
    },
}


def test_overrides_profiling_job_is_merged_as_upstream_merges_it():
    j = job_of(request(overrides={"profilingJob": OVERRIDE}))
    assert j["spec"]["backoffLimit"] == 2 and j["spec"]["activeDeadlineSeconds"] == 7200
    md = j["spec"]["template"]["metadata"]
    assert md["labels"]["team"] == "a" and md["labels"]["dgdr.nvidia.com/name"] == "req"
    assert md["annotations"] == {"note": "x"}
    p = pod(j)
    assert p["tolerations"] == [{"key": "gpu", "operator": "Exists"}] and p["priorityClassName"] == "high"
    assert p["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 2000,
        "runAsGroup": 1000,
        "fsGroup": 1000,
    }
    assert [v["name"] for v in p["volumes"]] == ["output", "extra"]
    assert p["imagePullSecrets"] == [{"name": "nvcr"}]
    c = profiler(j)
    assert c["image"] == "mine:2" and c["resources"] == {"requests": {"nvidia.com/gpu": "1"}}
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["DGDR_NAME"] == "x" and env["EXTRA"] == "1"
    assert {"name": "extra", "mountPath": "/extra"} in c["volumeMounts"]
    assert c["envFrom"] == [{"secretRef": {"name": "hf"}}]
    assert p["containers"][1]["name"] == "output-copier"  # only the profiler is overridden


def test_protected_labels_stay_the_operators():
    override = {"template": {"metadata": {"labels": {"dgdr.nvidia.com/name": "other"}}}}
    j = job_of(request(overrides={"profilingJob": override}))
    assert j["spec"]["template"]["metadata"]["labels"]["dgdr.nvidia.com/name"] == "req"


def test_no_service_account_token_still_lets_the_copier_publish():
    j = job_of(
        request(overrides={"profilingJob": {"template": {"spec": {"automountServiceAccountToken": False}}}})
    )
    p = pod(j)
    assert p["automountServiceAccountToken"] is False
    token = next(v for v in p["volumes"] if v["name"] == dj.TOKEN_VOLUME)
    assert {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}} in token["projected"][
        "sources"
    ]
    assert {"name": dj.TOKEN_VOLUME, "mountPath": dj.TOKEN_DIR, "readOnly": True} in p["containers"][1][
        "volumeMounts"
    ]


@pytest.mark.parametrize(
    ("override", "path", "fragment"),
    [
        ({"selector": {}}, "selector", "not applied to the profiling Job"),
        (
            {"template": {"spec": {"hostNetwork": True}}},
            "template.spec.hostNetwork",
            "a pod override can set",
        ),
        (
            {"template": {"spec": {"containers": [{"command": ["sh"]}]}}},
            "template.spec.containers[0].command",
            "",
        ),
        ({"template": {"spec": {"containers": [{}, {}]}}}, "template.spec.containers", "only one entry"),
        (
            {"template": {"spec": {"containers": [{"name": "x"}]}}},
            "template.spec.containers[0].name",
            "name it so",
        ),
        (
            {"template": {"metadata": {"labels": {"app.kubernetes.io/managed-by": "me"}}}},
            "template.metadata.labels.app.kubernetes.io/managed-by",
            "set by the operator",
        ),
    ],
)
def test_what_the_job_override_cannot_apply_is_named(override, path, fragment):
    errors = dict(dj.job_override_errors(override))
    assert path in errors and fragment in errors[path], errors
    assert dj.job_override_errors(OVERRIDE) == []


def test_render_shows_the_requests_children():
    beta = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "req", "namespace": "team"},
        "spec": {"model": "Qwen/Qwen3-0.6B", "sla": {"ttft": 100.0, "itl": 10.0}},
    }
    config = {
        "images": {"profiler": "registry.local/planner:7"},
        "rbac": {"dgdrProfilingClusterRoleName": "prof"},
    }
    out = render_all(beta, RenderContext(operator_config=config))
    assert [(o["kind"], o["metadata"]["name"]) for o in out] == [
        ("ServiceAccount", "dgdr-profiling-job"),
        ("RoleBinding", "dgdr-profiling-job"),
        ("Job", "profile-online-req"),
    ]
    given = json.loads(profiler(out[2])["args"][1])
    assert given == {**beta["spec"], "image": "registry.local/planner:7"}


# ---------------------------------------------------------------- GPU discovery


def node(product=None, count=None, memory=None, allocatable=None) -> dict:
    labels = {
        k: v
        for k, v in {
            "nvidia.com/gpu.product": product,
            "nvidia.com/gpu.count": count,
            "nvidia.com/gpu.memory": memory,
        }.items()
        if v is not None
    }
    status = {"allocatable": {"nvidia.com/gpu": allocatable}} if allocatable else {}
    return {"metadata": {"labels": labels}, "status": status}


def test_discovery_picks_the_largest_gpu_node_and_counts_gpu_nodes():
    nodes = [
        node("NVIDIA-A100-SXM4-80GB", "4", "81920"),
        node("NVIDIA-H100-80GB-HBM3", "8", "81559"),
        node("NVIDIA-H100-80GB-HBM3", "8", "81559"),
        node(),  # a CPU node
    ]
    info = gpu.discover(nodes)
    assert (info.product, info.per_node, info.memory_mib, info.nodes, info.sku) == (
        "NVIDIA-H100-80GB-HBM3",
        8,
        81559,
        3,
        "h100_sxm",
    )
    assert gpu.discover(nodes, "a100_sxm").per_node == 4  # gpuSku selects the nodes
    assert gpu.discover([node()]) is None


def test_allocatable_counts_when_gfd_has_no_count_label_and_total_is_capped():
    info = gpu.discover([node("NVIDIA-H100-80GB-HBM3", allocatable="8")] * 5)
    assert info.per_node == 8 and info.memory_mib is None
    assert gpu.enrich({}, info) == {"gpuSku": "h100_sxm", "numGpusPerNode": 8, "totalGpus": 32}


@pytest.mark.parametrize(
    ("product", "sku"),
    [
        ("NVIDIA-GB200", "gb200_sxm"),
        ("NVIDIA H200 141GB HBM3e", "h200_sxm"),
        ("NVIDIA-H100-PCIe", "h100_pcie"),
        ("NVIDIA-L40S", "l40s"),
        ("NVIDIA-L4", "l4"),
        ("Tesla-T4", "t4"),
        ("NVIDIA-GeForce-RTX-4090", None),
    ],
)
def test_sku_from_the_product_name(product, sku):
    assert gpu.infer_sku(product) == sku


def test_an_unknown_sku_is_passed_on_as_the_product_name():
    assert (
        gpu.enrich({}, gpu.GpuInfo("NVIDIA-GeForce-RTX-4090", 2, 24564, 1))["gpuSku"]
        == "NVIDIA-GeForce-RTX-4090"
    )
