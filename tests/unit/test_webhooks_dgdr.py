"""Admission of DynamoGraphDeploymentRequests (webhooks/validation/dgdr.py, webhooks/defaulting.py): what
acts is admitted, what would not act is refused naming the field, why and what to write instead, in the
version the user wrote; a request with only a model gets its profiler image."""

from __future__ import annotations

import pytest
from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE
from dynamo_operator.webhooks import defaulting
from dynamo_operator.webhooks.validation import Context, validate

KIND = "DynamoGraphDeploymentRequest"
EVERY_FIELD = {
    "model": "Qwen/Qwen3-0.6B",
    "backend": "vllm",
    "image": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1",
    "modelCache": {"pvcName": "models", "pvcModelPath": "qwen3", "pvcMountPath": "/opt/models"},
    "hardware": {"gpuSku": "h100_sxm", "vramMb": 81920.0, "totalGpus": 16, "numGpusPerNode": 8, "rdma": True},
    "workload": {"isl": 3000, "osl": 150, "concurrency": 8.0},
    "sla": {"ttft": 200.0, "itl": 20.0, "optimizationType": "latency"},
    "overrides": {
        "profilingJob": {"template": {"spec": {"containers": [{"name": "profiler", "resources": {}}]}}},
        "dgd": {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeployment",
            "metadata": {"labels": {"team": "a"}},
            "spec": {"components": [{"name": "decode", "replicas": 2}]},
        },
    },
    "features": {"planner": {"mode": "disagg"}, "mocker": {"enabled": False}},
    "searchStrategy": "thorough",
    "autoApply": True,
}


def request(version="v1beta1", name="req", **spec) -> dict:
    return {
        "apiVersion": f"nvidia.com/{version}",
        "kind": KIND,
        "metadata": {"name": name, "namespace": "team"},
        "spec": spec,
    }


def alpha(config=None, **spec) -> dict:
    prof = {"profilerImage": "p:1", **({"config": config} if config is not None else {})}
    return request("v1alpha1", **{"model": "m", "backend": "vllm", "profilingConfig": prof, **spec})


def errors(obj, old=None) -> list[str]:
    return [str(e) for e in validate(KIND, obj["apiVersion"].split("/")[1], obj, old).errors]


def test_every_field_and_a_bare_model_are_admitted():
    assert errors(request(**EVERY_FIELD)) == []
    assert errors(request(model="Qwen/Qwen3-0.6B")) == []
    upstream = alpha(
        {"sla": {"isl": 3000, "osl": 150, "ttft": 200, "itl": 20}}, useMocker=True, autoApply=True
    )
    assert errors(upstream) == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"sla": {"ttft": 0}},
            "spec.sla.ttft: Invalid value: 0: must be a positive number (a latency target in milliseconds)",
        ),
        (
            {"sla": {"ttft": 100.0, "e2eLatency": 900.0}},
            "spec.sla.e2eLatency: Forbidden: an end-to-end latency target replaces ttft and itl (the "
            "profiler "
            "would ignore them): set either e2eLatency or ttft and itl",
        ),
        (
            {"workload": {"concurrency": 4.0, "requestRate": 2.0}},
            "spec.workload.requestRate: Forbidden: the profiler takes the load as concurrency or as "
            "requestRate, "
            "not both: keep one",
        ),
        (
            {"searchStrategy": "thorough", "backend": "auto"},
            'spec.searchStrategy: Forbidden: searchStrategy "thorough" benchmarks real engines of one '
            "backend and "
            "cannot pick one: set spec.backend to sglang, trtllm or vllm, or use searchStrategy rapid",
        ),
        (
            {"modelCache": {"pvcMountPath": "/m"}},
            "spec.modelCache.pvcName: Required value: name the PersistentVolumeClaim holding the model "
            "weights "
            "(without it the cache does nothing), or remove spec.modelCache",
        ),
        (
            {"modelCache": {"pvcName": "w", "pvcMountPath": "models"}},
            'spec.modelCache.pvcMountPath: Invalid value: "models": must be an absolute path',
        ),
        (
            {"hardware": {"totalGpus": 0}},
            "spec.hardware.totalGpus: Invalid value: 0: must be a positive number (the GPUs to plan for)",
        ),
        (
            {"overrides": {"profilingJob": {"template": {"spec": {"containers": [{"command": ["sh"]}]}}}}},
            "spec.overrides.profilingJob.template.spec.containers[0].command: Forbidden: not applied to the "
            "profiling Job (a container override can set name, image, resources, securityContext, env, "
            "volumeMounts, envFrom): remove it",
        ),
        (
            {
                "overrides": {
                    "dgd": {
                        "apiVersion": "nvidia.com/v1beta1",
                        "kind": "DynamoGraphDeployment",
                        "metadata": {"namespace": "x"},
                    }
                }
            },
            "spec.overrides.dgd.metadata.namespace: Invalid value: not applied (an override sets only the "
            "graph's name, labels and annotations; the graph lives in the request's namespace): remove it",
        ),
        (
            {"overrides": {"dgd": {"apiVersion": "v1", "kind": "ConfigMap"}}},
            "spec.overrides.dgd.kind: Invalid value: must be DynamoGraphDeployment, not 'ConfigMap'",
        ),
    ],
)
def test_v1beta1_fields_that_would_not_act_are_refused(spec, message):
    assert message in errors(request(model="m", **spec))


def test_a_name_too_long_for_the_job_is_refused():
    assert errors(request(name="x" * 49, model="m")) == [
        'metadata.name: Invalid value: "' + "x" * 49 + "\": too long for the profiling Job's name "
        "(profile-online-<name>, 63 characters): use at most 48 characters"
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"sla": {"ttft": -1}},  # judged as the v1beta1 field, reported where the user wrote it
            "spec.profilingConfig.config.sla.ttft: Invalid value: -1: must be a positive number",
        ),
        (
            {"sla": {"ttft": "fast"}},
            'spec.profilingConfig.config.sla.ttft: Invalid value: "fast": must be a number of milliseconds '
            "(the profiler's sla.ttft)",
        ),
        (
            {"hardware": {"gpuType": "H100-SXM5-80GB"}},
            'spec.profilingConfig.config.hardware.gpuType: Invalid value: "H100-SXM5-80GB": must be one of '
            "a100_pcie",
        ),
        (
            {"sweep": {"useAiConfigurator": True}},
            "spec.profilingConfig.config.sweep.useAiConfigurator: Unsupported value: not passed to the "
            "profiler, "
            "which receives the request in its v1beta1 form and has no field for it: remove it; use "
            "nvidia.com/v1beta1 spec.searchStrategy",
        ),
        (
            {"deployment": {"model": "x"}},
            "spec.profilingConfig.config.deployment.model: Forbidden: set by the operator from spec.model: "
            "remove it",
        ),
        (
            {"engine": {"config": "/x"}},
            "spec.profilingConfig.config.engine.config: Forbidden: set by the operator from "
            "spec.profilingConfig.configMapRef",
        ),
    ],
)
def test_v1alpha1_blob_keys_the_profiler_would_not_get_are_refused(config, message):
    assert any(e.startswith(message) for e in errors(alpha(config))), errors(alpha(config))


def test_v1alpha1_blob_keys_with_a_v1beta1_home_are_admitted():
    config = {
        "sla": {"isl": 3000, "osl": 150, "ttft": 200, "itl": 20},
        "deployment": {"modelCache": {"pvcName": "c", "modelPathInPvc": "m", "pvcMountPath": "/c"}},
        "hardware": {"numGpusPerNode": 8, "gpuType": "h200_sxm"},
        "planner": {"planner_min_endpoint": 2},
    }
    assert errors(alpha(config)) == []


def test_v1alpha1_deployment_overrides():
    assert errors(alpha(deploymentOverrides={"name": "Bad_Name"})) == [
        'spec.deploymentOverrides.name: Invalid value: "Bad_Name": not a valid Kubernetes name: use '
        "lower-case "
        "letters, digits and '-', at most 63 characters"
    ]
    assert errors(alpha(autoApply=False, deploymentOverrides={"name": "x"})) == [
        "spec.deploymentOverrides: Forbidden: applies only to the graph autoApply creates: remove it or set "
        "autoApply: true"
    ]


def test_the_deprecated_gpu_discovery_switch_is_admitted_with_a_warning():
    result = validate(KIND, "v1alpha1", alpha(enableGpuDiscovery=True))
    assert result.allowed and "spec.enableGpuDiscovery is deprecated and has no effect" in result.warnings[0]


def test_a_request_without_a_profiler_image_gets_the_operators():
    patch = defaulting.default_patch(KIND, "v1beta1", request(model="m"))
    assert patch == [{"op": "add", "path": "/spec/image", "value": DEFAULT_PROFILER_IMAGE}]
    ctx = Context(profiler_image="registry.local/planner:3")
    patch = defaulting.default_patch(KIND, "v1alpha1", alpha(profilingConfig={"profilerImage": ""}), ctx)
    assert patch == [
        {"op": "add", "path": "/spec/profilingConfig/profilerImage", "value": "registry.local/planner:3"}
    ]
    bare = request("v1alpha1", model="m", backend="vllm")
    assert defaulting.apply_patch(bare, defaulting.default_patch(KIND, "v1alpha1", bare))["spec"][
        "profilingConfig"
    ] == {"profilerImage": DEFAULT_PROFILER_IMAGE}
    assert defaulting.default_patch(KIND, "v1beta1", request(model="m", image="mine:1")) == []


def test_an_update_that_keeps_the_spec_is_not_judged_again():
    """A request admitted before a rule existed stays updatable (labels, the controller's status
    annotation); a changed spec is judged."""
    old = request(model="m", sla={"ttft": 0})
    new = request(model="m", sla={"ttft": 0})
    new["metadata"]["labels"] = {"team": "a"}
    assert errors(new, old) == []
    changed = request(model="m", sla={"ttft": 0}, backend="vllm")
    assert any(e.startswith("spec.sla.ttft") for e in errors(changed, old))


def test_the_profiler_image_is_defaulted_on_create_only():
    update = Context(operation="UPDATE")
    assert defaulting.default_patch(KIND, "v1beta1", request(model="m"), update) == []
