"""The pydantic models: exact JSON names, lossless round trips, reference validation markers."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
from dynamo_operator.api import v1alpha1, v1beta1
from dynamo_operator.api.config import types as config_types
from dynamo_operator.api.registry import KINDS, MULTI_VERSION_KINDS, kind_for_plural
from pydantic import ValidationError

# An upstream-style v1alpha1 DGD (disaggregated vLLM) as users write it today.
UPSTREAM_DGD = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "vllm-disagg", "namespace": "dynamo"},
    "spec": {
        "backendFramework": "vllm",
        "services": {
            "Frontend": {
                "dynamoNamespace": "vllm-disagg",
                "componentType": "frontend",
                "replicas": 1,
                "extraPodSpec": {"mainContainer": {"image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"}},
            },
            "VllmDecodeWorker": {
                "dynamoNamespace": "vllm-disagg",
                "envFromSecret": "hf-token-secret",
                "componentType": "worker",
                "subComponentType": "decode",
                "replicas": 1,
                "resources": {"limits": {"gpu": "1"}},
                "sharedMemory": {"size": "16Gi"},
                "extraPodSpec": {
                    "mainContainer": {
                        "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1",
                        "workingDir": "/workspace/examples/backends/vllm",
                        "command": ["python3", "-m", "dynamo.vllm"],
                        "args": ["--model", "Qwen/Qwen3-0.6B"],
                        "startupProbe": {
                            "httpGet": {"path": "/health", "port": 9090},
                            "failureThreshold": 60,
                        },
                    }
                },
            },
        },
    },
}

BETA_DGD = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g"},
    "spec": {
        "backendFramework": "sglang",
        "components": [
            {"name": "Frontend", "type": "frontend", "replicas": 1},
            {
                "name": "decode",
                "type": "decode",
                "sharedMemorySize": "0",
                "scalingAdapter": {},
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {"name": "main", "image": "img", "env": [{"name": "A", "value": "1"}]},
                            {"name": "sidecar", "image": "busybox", "someFutureField": {"x": 1}},
                        ]
                    }
                },
                "experimental": {"gpuMemoryService": {"mode": "IntraPod"}},
            },
        ],
    },
    "status": {"state": "pending", "components": {"decode": {"replicas": 1, "updatedReplicas": 0}}},
}


@pytest.mark.parametrize(
    ("model", "obj"),
    [(v1alpha1.DynamoGraphDeployment, UPSTREAM_DGD), (v1beta1.DynamoGraphDeployment, BETA_DGD)],
)
def test_round_trip_is_unchanged(model, obj) -> None:
    parsed = model.model_validate(copy.deepcopy(obj))
    assert parsed.to_dict() == obj
    assert parsed.model_dump(by_alias=True, exclude_none=True) == obj


def test_typed_access_to_fields_the_operator_reads() -> None:
    dgd = v1beta1.DynamoGraphDeployment.model_validate(BETA_DGD)
    comp = dgd.spec.components[1]
    main = comp.pod_template.spec.containers[0]
    assert (main.name, main.image, main.env[0].name, main.env[0].value) == ("main", "img", "A", "1")
    assert comp.shared_memory_size == "0"
    alpha = v1alpha1.DynamoGraphDeployment.model_validate(UPSTREAM_DGD)
    worker = alpha.spec.services["VllmDecodeWorker"]
    assert worker.extra_pod_spec.main_container.command == ["python3", "-m", "dynamo.vllm"]
    assert worker.resources.limits.gpu == "1"


def test_populate_by_python_name_dumps_camel_case() -> None:
    ref = v1beta1.DynamoGraphDeploymentComponentRef(name="g", component_name="decode")
    assert ref.to_dict() == {"name": "g", "componentName": "decode"}
    status = v1alpha1.DynamoCheckpointStatus(checkpoint_id="abc")
    assert status.to_dict() == {"checkpointID": "abc"}
    cfg = config_types.InfrastructureConfiguration(model_express_url="http://mx:8001")
    assert cfg.to_dict() == {"modelExpressURL": "http://mx:8001"}


def _error_locs(model, obj) -> set[tuple]:
    with pytest.raises(ValidationError) as info:
        model.model_validate(obj)
    return {tuple(e["loc"]) for e in info.value.errors()}


@pytest.mark.parametrize(
    ("patch", "loc"),
    [
        ({"backendFramework": "tensorflow"}, ("spec", "backendFramework")),
        ({"components": [{"name": "-bad-"}]}, ("spec", "components", 0, "name")),
        ({"components": [{"name": "x" * 64}]}, ("spec", "components", 0, "name")),
        ({"components": [{"name": "a", "replicas": -1}]}, ("spec", "components", 0, "replicas")),
        ({"components": [{"name": "a", "type": "router"}]}, ("spec", "components", 0, "type")),
        ({"components": [{"name": f"c{i}"} for i in range(26)]}, ("spec", "components")),
        ({"components": [{"name": "a", "minAvailable": 0}]}, ("spec", "components", 0, "minAvailable")),
        (
            {"components": [{"name": "a", "sharedMemorySize": "lots"}]},
            ("spec", "components", 0, "sharedMemorySize"),
        ),
        ({"restart": {}}, ("spec", "restart", "id")),
        ({"typo": 1}, ("spec", "typo")),
    ],
)
def test_reference_markers_are_enforced(patch, loc) -> None:
    obj = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "spec": patch}
    assert loc in _error_locs(v1beta1.DynamoGraphDeployment, obj)


def test_v1alpha1_markers_are_enforced() -> None:
    too_many = {f"s{i}": {} for i in range(26)}
    assert ("spec", "services") in _error_locs(
        v1alpha1.DynamoGraphDeployment, {"spec": {"services": too_many}}
    )
    assert ("spec", "model") in _error_locs(
        v1alpha1.DynamoGraphDeploymentRequest,
        {"spec": {"backend": "vllm", "profilingConfig": {"profilerImage": "x"}}},
    )
    assert ("spec", "dgdRef", "serviceName") in _error_locs(
        v1alpha1.DynamoGraphDeploymentScalingAdapter, {"spec": {"replicas": 1, "dgdRef": {"name": "g"}}}
    )
    assert ("spec", "multinode", "nodeCount") in _error_locs(
        v1alpha1.DynamoComponentDeployment, {"spec": {"multinode": {"nodeCount": 1}}}
    )


def test_registry_matches_the_reference() -> None:
    assert set(MULTI_VERSION_KINDS) == {
        "DynamoGraphDeployment",
        "DynamoComponentDeployment",
        "DynamoGraphDeploymentRequest",
        "DynamoGraphDeploymentScalingAdapter",
    }
    for kind in ("DynamoModel", "DynamoCheckpoint", "PodSnapshot", "PodSnapshotContent"):
        assert KINDS[kind].versions == ("v1alpha1",)
    assert all(info.storage_version == "v1alpha1" for info in KINDS.values())
    assert KINDS["PodSnapshotContent"].scope == "Cluster"
    assert {KINDS[k].short_names[0] for k in MULTI_VERSION_KINDS} == {"dgd", "dcd", "dgdr", "dgdsa"}
    assert KINDS["DynamoGraphDeploymentScalingAdapter"].scale is not None
    assert kind_for_plural("dynamographdeployments").kind == "DynamoGraphDeployment"
    for info in KINDS.values():
        for version, model in info.models.items():
            assert model.__name__ == info.kind
            assert version in info.printer_columns


def test_every_reference_type_has_a_model() -> None:
    # Type names of the API reference, per package (enums are Literal aliases, the rest models).
    alpha_only = {
        "DeploymentOverridesSpec",
        "PVC",
        "ServiceCheckpointConfig",
        "ServiceReplicaStatus",
        "ProfilingConfigSpec",
        "ResourceItem",
        "Resources",
        "SharedMemorySpec",
        "VolumeMount",
        "PodSnapshot",
        "PodSnapshotContent",
        "DynamoModel",
        "DynamoCheckpoint",
        "Autoscaling",
        "IngressSpec",
        "FrontendSidecarSpec",
        "ExtraPodSpec",
        "ExtraPodMetadata",
        "DGDRState",
    }
    beta_only = {
        "BackendType",
        "ComponentType",
        "CompilationCacheConfig",
        "ExperimentalSpec",
        "FeaturesSpec",
        "HardwareSpec",
        "SLASpec",
        "WorkloadSpec",
        "OverridesSpec",
        "DGDRPhase",
        "ProfilingPhase",
        "GPUSKUType",
        "ComponentReplicaStatus",
        "DynamoGraphDeploymentComponentRef",
    }
    assert alpha_only <= set(v1alpha1.__all__)
    assert beta_only <= set(v1beta1.__all__)
    assert len(v1alpha1.__all__) >= 83
    assert len(v1beta1.__all__) >= 65
    assert len(config_types.__all__) >= 32


def test_resolved_fields_gives_types_where_an_unbuilt_model_holds_names():
    """Models are built on first use (``defer_build``): until then a field typed with a class defined
    further down its module holds a ForwardRef, which is why field readers go through ``resolved_fields``.
    A fresh interpreter, since any test that validated the model has built it."""
    code = (
        "from dynamo_operator.api.meta import resolved_fields\n"
        "from dynamo_operator.api.v1beta1 import DynamoComponentDeploymentSpec as M, MultinodeSpec\n"
        "assert not M.__pydantic_complete__\n"
        "print(repr(M.model_fields['multinode'].annotation))\n"
        "assert resolved_fields(M)['multinode'].annotation == MultinodeSpec | None\n"
        "assert M.__pydantic_complete__\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ForwardRef" in out.stdout


def test_configuration_types_are_attributes_of_api_config_on_first_use():
    """``api.config`` loads its pydantic types only when one is asked for (``render`` without --config needs
    none of them); asking works as an import of the name always did."""
    from dynamo_operator.api import config

    assert config.OperatorConfiguration is config_types.OperatorConfiguration
    assert config.WebhookServer is config_types.WebhookServer
    with pytest.raises(AttributeError, match="NoSuchType"):
        _ = config.NoSuchType


def test_the_operator_builds_every_served_model_before_it_serves():
    """``dynamo-operator run`` calls ``build_models`` before its servers start, so no admission review or
    conversion pays for building a validator (a fresh interpreter: models here are built on first use)."""
    code = (
        "from dynamo_operator.api.registry import KINDS, build_models\n"
        "models = [m for info in KINDS.values() for m in info.models.values()]\n"
        "assert not all(m.__pydantic_complete__ for m in models)\n"
        "build_models()\n"
        "missing = [f'{m.__module__}.{m.__name__}' for m in models if not m.__pydantic_complete__]\n"
        "assert not missing, missing\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    cli = (Path(__file__).parents[2] / "operator" / "dynamo_operator" / "cli.py").read_text()
    run = cli[cli.index("def run(") :]
    assert run.index("build_models()") < run.index("mgr.run()"), "build_models runs before the manager"
