"""DynamoGraphDeploymentRequest v1alpha1 <-> v1beta1 (api/dgdr_conversion.py through api/conversion.py):
every field of both versions survives a round trip (hypothesis, both directions), and the fields both
versions can say land in their natural home in the other version (what the controller and a reader of the
other version see)."""

from __future__ import annotations

import copy
import json

from dgdr_strategies import alpha_dgdr, beta_dgdr
from dynamo_operator.api import v1alpha1, v1beta1
from dynamo_operator.api.conversion import annotation_for, convert
from dynamo_operator.api.dgdr_conversion import STATUS_ANNOTATION
from hypothesis import HealthCheck, given, settings

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MODELS = {"v1alpha1": v1alpha1.DynamoGraphDeploymentRequest, "v1beta1": v1beta1.DynamoGraphDeploymentRequest}


def assert_valid(obj: dict) -> None:
    """What the apiserver would store: the object validates against its version's schema, unchanged."""
    model = MODELS[obj["apiVersion"].split("/")[1]]
    assert model.model_validate(obj).to_dict() == obj


@SETTINGS
@given(beta_dgdr)
def test_v1beta1_to_v1alpha1_and_back_is_identical(obj: dict) -> None:
    original = copy.deepcopy(obj)
    assert_valid(obj)
    alpha = convert(obj, "v1alpha1")
    assert obj == original, "convert must not modify its input"
    assert_valid(alpha)
    assert convert(alpha, "v1beta1") == original


@SETTINGS
@given(alpha_dgdr)
def test_v1alpha1_to_v1beta1_and_back_is_identical(obj: dict) -> None:
    original = copy.deepcopy(obj)
    assert_valid(obj)
    beta = convert(obj, "v1beta1")
    assert obj == original
    assert_valid(beta)
    assert convert(beta, "v1alpha1") == original


@SETTINGS
@given(beta_dgdr)
def test_reading_back_and_forth_never_drifts(obj: dict) -> None:
    alpha = convert(obj, "v1alpha1")
    assert convert(convert(alpha, "v1beta1"), "v1alpha1") == alpha


EVERY_FIELD = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeploymentRequest",
    "metadata": {"name": "req", "namespace": "ns"},
    "spec": {
        "model": "Qwen/Qwen3-0.6B",
        "backend": "vllm",
        "image": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1",
        "modelCache": {"pvcName": "models", "pvcModelPath": "qwen3", "pvcMountPath": "/opt/models"},
        "hardware": {
            "gpuSku": "h100_sxm",
            "vramMb": 81920.0,
            "totalGpus": 16,
            "numGpusPerNode": 8,
            "interconnect": "nvlink",
            "rdma": True,
        },
        "workload": {"isl": 3000, "osl": 150, "concurrency": 8.0},
        "sla": {"ttft": 200.0, "itl": 20.0, "optimizationType": "latency"},
        "overrides": {
            "profilingJob": {
                "activeDeadlineSeconds": 3600,
                "template": {
                    "spec": {
                        "containers": [{"name": "profiler", "resources": {"limits": {"cpu": "2"}}}],
                        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                        "nodeSelector": {"pool": "gpu"},
                    }
                },
            },
            "dgd": {
                "apiVersion": "nvidia.com/v1beta1",
                "kind": "DynamoGraphDeployment",
                "metadata": {"labels": {"team": "inference"}},
                "spec": {"components": [{"name": "Worker", "replicas": 2}]},
            },
        },
        "features": {"planner": {"mode": "disagg"}, "mocker": {"enabled": True}},
        "searchStrategy": "thorough",
        "autoApply": True,
    },
    "status": {
        "phase": "Profiling",
        "profilingPhase": "SweepingDecode",
        "profilingJobName": "profile-online-req",
        "observedGeneration": 1,
    },
}


def test_fields_both_versions_hold_land_in_their_v1alpha1_homes() -> None:
    alpha = convert(EVERY_FIELD, "v1alpha1")
    spec = alpha["spec"]
    assert spec["model"] == "Qwen/Qwen3-0.6B" and spec["backend"] == "vllm" and spec["useMocker"] is True
    prof = spec["profilingConfig"]
    assert prof["profilerImage"] == "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1"
    assert prof["config"] == {
        "sla": {"ttft": 200.0, "itl": 20.0, "isl": 3000, "osl": 150},
        "deployment": {
            "modelCache": {"pvcName": "models", "modelPathInPvc": "qwen3", "pvcMountPath": "/opt/models"}
        },
        "hardware": {"numGpusPerNode": 8, "gpuType": "h100_sxm"},
        "planner": {"mode": "disagg"},
    }
    assert prof["resources"] == {"limits": {"cpu": "2"}}
    assert prof["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    assert prof["nodeSelector"] == {"pool": "gpu"}
    assert alpha["status"] == {"state": "Profiling", "observedGeneration": 1}
    annotations = alpha["metadata"]["annotations"]
    assert json.loads(annotations[STATUS_ANNOTATION]) == {
        "profilingPhase": "SweepingDecode",
        "profilingJobName": "profile-online-req",
    }
    # what v1alpha1 cannot say travels in the difference record, leaf by leaf
    saved = {tuple(map(str, r["path"])) for r in json.loads(annotations[annotation_for("v1beta1")])}
    assert ("spec", "searchStrategy") in saved and ("spec", "overrides", "dgd") in saved
    assert ("spec", "hardware", "totalGpus") in saved and ("spec", "workload", "concurrency") in saved
    assert convert(alpha, "v1beta1") == EVERY_FIELD


def test_upstream_v1alpha1_request_reads_as_typed_v1beta1_fields() -> None:
    alpha = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {
            "model": "Qwen/Qwen3-0.6B",
            "backend": "vllm",
            "useMocker": True,
            "profilingConfig": {
                "profilerImage": "p:1",
                "config": {
                    "sla": {"isl": 3000, "osl": 150, "ttft": 200, "itl": 20},
                    "planner": {"planner_min_endpoint": 2},
                    "deployment": {
                        "modelCache": {"pvcName": "cache", "modelPathInPvc": "m", "pvcMountPath": "/c"}
                    },
                },
                "resources": {"requests": {"cpu": "1"}},
            },
        },
    }
    spec = convert(alpha, "v1beta1")["spec"]
    assert spec["sla"] == {"ttft": 200, "itl": 20}
    assert spec["workload"] == {"isl": 3000, "osl": 150}
    assert spec["modelCache"] == {"pvcName": "cache", "pvcModelPath": "m", "pvcMountPath": "/c"}
    assert spec["features"] == {"planner": {"planner_min_endpoint": 2}, "mocker": {"enabled": True}}
    assert spec["image"] == "p:1"
    assert spec["overrides"] == {
        "profilingJob": {
            "template": {
                "spec": {"containers": [{"name": "profiler", "resources": {"requests": {"cpu": "1"}}}]}
            }
        }
    }


def test_wrongly_typed_blob_values_stay_v1alpha1_only() -> None:
    alpha = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r"},
        "spec": {
            "model": "m",
            "backend": "auto",
            "profilingConfig": {
                "profilerImage": "p",
                "config": {"sla": {"ttft": "fast"}, "hardware": {"gpuType": "H100"}},
            },
        },
    }
    beta = convert(alpha, "v1beta1")
    assert "sla" not in beta["spec"] and "hardware" not in beta["spec"]
    assert_valid(beta)
    assert convert(beta, "v1alpha1") == alpha


def test_status_phases_follow_the_v1beta1_lifecycle() -> None:
    def phase(status: dict) -> str:
        obj = {
            **EVERY_FIELD,
            "apiVersion": "nvidia.com/v1alpha1",
            "spec": {"model": "m", "backend": "auto", "profilingConfig": {"profilerImage": "p"}},
            "status": status,
        }
        return convert(obj, "v1beta1")["status"]["phase"]

    assert phase({"state": "Ready", "deployment": {"name": "g", "created": True}}) == "Deployed"
    assert (
        phase(
            {
                "state": "Ready",
                "generatedDeployment": {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment"},
            }
        )
        == "Ready"
    )
    assert phase({"state": "DeploymentDeleted", "deployment": {"name": "g"}}) == "Failed"
    assert phase({"state": "Initializing"}) == "Pending"


def test_generated_graph_name_is_the_dgd_name_before_it_is_created() -> None:
    obj = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {
            "name": "r",
            "namespace": "ns",
            "annotations": {STATUS_ANNOTATION: '{"deploymentInfo":{"availableReplicas":2,"replicas":3}}'},
        },
        "spec": {"model": "m", "backend": "auto", "profilingConfig": {"profilerImage": "p"}},
        "status": {
            "state": "Ready",
            "generatedDeployment": {
                "apiVersion": "nvidia.com/v1alpha1",
                "kind": "DynamoGraphDeployment",
                "metadata": {"name": "g"},
            },
        },
    }
    beta = convert(obj, "v1beta1")
    assert beta["status"]["dgdName"] == "g"
    assert beta["status"]["profilingResults"]["selectedConfig"]["metadata"] == {"name": "g"}
    assert beta["status"]["deploymentInfo"] == {"replicas": 3, "availableReplicas": 2}
    assert "annotations" not in beta["metadata"]
    assert convert(beta, "v1alpha1") == obj
