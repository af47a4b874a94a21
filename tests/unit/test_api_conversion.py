"""v1alpha1 <-> v1beta1 conversion: field mappings and lossless round trips (hypothesis)."""

from __future__ import annotations

import copy
import json

import pytest
from dgdr_strategies import alpha_dgdr, beta_dgdr
from dynamo_operator.api import v1alpha1, v1beta1
from dynamo_operator.api.conversion import ConversionError, annotation_for, convert
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MODELS = {
    ("v1alpha1", "DynamoGraphDeployment"): v1alpha1.DynamoGraphDeployment,
    ("v1beta1", "DynamoGraphDeployment"): v1beta1.DynamoGraphDeployment,
    ("v1alpha1", "DynamoComponentDeployment"): v1alpha1.DynamoComponentDeployment,
    ("v1beta1", "DynamoComponentDeployment"): v1beta1.DynamoComponentDeployment,
    ("v1alpha1", "DynamoGraphDeploymentScalingAdapter"): v1alpha1.DynamoGraphDeploymentScalingAdapter,
    ("v1beta1", "DynamoGraphDeploymentScalingAdapter"): v1beta1.DynamoGraphDeploymentScalingAdapter,
    ("v1alpha1", "DynamoGraphDeploymentRequest"): v1alpha1.DynamoGraphDeploymentRequest,
    ("v1beta1", "DynamoGraphDeploymentRequest"): v1beta1.DynamoGraphDeploymentRequest,
}


def assert_valid(obj: dict) -> None:
    """A converted object must be a valid object of its version (the apiserver would store it)."""
    model = MODELS[(obj["apiVersion"].split("/")[1], obj["kind"])]
    assert model.model_validate(obj).to_dict() == obj


# ---------------------------------------------------------------- strategies

names = st.from_regex(r"\A[A-Za-z][A-Za-z0-9]{0,8}\Z")
dns = st.from_regex(r"\A[a-z][a-z0-9]{0,6}\Z")
text = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=8)
quantity = st.sampled_from(["1", "500m", "8Gi", "16Gi", 2, "0.5"])
env = st.lists(
    st.builds(lambda n, v: {"name": n, "value": v}, dns, text), max_size=3, unique_by=lambda e: e["name"]
)
labels = st.dictionaries(dns, text, max_size=2)
probe = st.fixed_dictionaries(
    {"httpGet": st.fixed_dictionaries({"path": st.just("/health"), "port": st.integers(1, 65535)})},
    optional={"periodSeconds": st.integers(1, 60), "failureThreshold": st.integers(1, 720)},
)
resource_item = st.fixed_dictionaries(
    {},
    optional={
        "cpu": st.sampled_from(["1", "4"]),
        "memory": st.just("8Gi"),
        "gpu": st.just("1"),
        "gpuType": st.just("gpu.intel.com/xe"),
        "custom": st.just({"example.com/x": "2"}),
    },
)
container = st.fixed_dictionaries(
    {"name": dns, "image": text},
    optional={"args": st.lists(text, max_size=2), "env": env, "resources": st.just({"limits": {"cpu": "1"}})},
)
main_container = st.fixed_dictionaries(
    {},
    optional={
        "image": text,
        "command": st.lists(text, max_size=2),
        "args": st.lists(text, max_size=2),
        "env": env,
        "readinessProbe": probe,
        "workingDir": st.just("/w"),
        "resources": st.sampled_from(
            [
                {"claims": [{"name": "gpu"}]},
                {"limits": {"cpu": "2", "nvidia.com/gpu": "2"}, "claims": [{"name": "gpu"}]},
                {"requests": {"memory": "4Gi"}},
            ]
        ),
    },
)
extra_pod_spec = st.fixed_dictionaries(
    {},
    optional={
        "mainContainer": main_container,
        "containers": st.lists(container, max_size=2, unique_by=lambda c: c["name"]).filter(
            lambda cs: all(c["name"] not in ("main", "frontend-sidecar") for c in cs)
        ),
        "tolerations": st.just([{"key": "nvidia.com/gpu", "operator": "Exists"}]),
        "serviceAccountName": dns,
    },
)
alpha_service = st.fixed_dictionaries(
    {},
    optional={
        "componentType": st.sampled_from(["frontend", "worker", "planner", "epp", "main"]),
        "subComponentType": st.sampled_from(["prefill", "decode", "other"]),
        "replicas": st.integers(0, 5),
        "minAvailable": st.integers(1, 3),
        "annotations": labels,
        "labels": labels,
        "envs": env,
        "envFromSecret": dns,
        "resources": st.fixed_dictionaries({}, optional={"requests": resource_item, "limits": resource_item}),
        "livenessProbe": probe,
        "readinessProbe": probe,
        "sharedMemory": st.one_of(
            st.just({"disabled": True}),
            st.builds(lambda q: {"size": q}, quantity),
            st.just({"disabled": False}),
        ),
        "volumeMounts": st.lists(
            st.fixed_dictionaries(
                {"name": dns},
                optional={"mountPoint": st.just("/data"), "useAsCompilationCache": st.booleans()},
            ),
            max_size=2,
            unique_by=lambda v: v["name"],
        ),
        "extraPodMetadata": st.fixed_dictionaries({}, optional={"labels": labels, "annotations": labels}),
        "extraPodSpec": extra_pod_spec,
        "scalingAdapter": st.builds(lambda b: {"enabled": b}, st.booleans()),
        "multinode": st.builds(lambda n: {"nodeCount": n}, st.integers(2, 4)),
        "ingress": st.just({"enabled": True, "host": "example.com"}),
        "dynamoNamespace": dns,
        "globalDynamoNamespace": st.booleans(),
        "modelRef": st.builds(lambda n: {"name": n}, text),
        "frontendSidecar": st.fixed_dictionaries(
            {"image": text}, optional={"args": st.lists(text, max_size=2), "envs": env, "envFromSecret": dns}
        ),
        "checkpoint": st.fixed_dictionaries({}, optional={"enabled": st.booleans(), "checkpointRef": dns}),
        "gpuMemoryService": st.fixed_dictionaries(
            {"enabled": st.booleans()}, optional={"mode": st.sampled_from(["intraPod", "interPod"])}
        ),
        "failover": st.fixed_dictionaries(
            {"enabled": st.booleans()}, optional={"numShadows": st.integers(1, 3)}
        ),
        "topologyConstraint": st.just({"packDomain": "rack"}),
        "eppConfig": st.just({"config": {"plugins": [{"type": "x"}]}}),
        "serviceName": dns,
    },
)
replica_status = st.fixed_dictionaries(
    {"replicas": st.integers(0, 3), "updatedReplicas": st.integers(0, 3)},
    optional={
        "componentKind": st.sampled_from(["Deployment", "PodClique"]),
        "componentName": dns,
        "componentNames": st.lists(dns, min_size=1, max_size=2),
        "readyReplicas": st.integers(0, 3),
    },
)
metadata = st.fixed_dictionaries(
    {"name": dns, "namespace": st.just("ns")}, optional={"labels": labels, "annotations": labels}
)
alpha_dgd = st.fixed_dictionaries(
    {
        "apiVersion": st.just("nvidia.com/v1alpha1"),
        "kind": st.just("DynamoGraphDeployment"),
        "metadata": metadata,
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "backendFramework": st.sampled_from(["vllm", "sglang", "trtllm"]),
                "services": st.dictionaries(names, alpha_service, max_size=3),
                "envs": env,
                "pvcs": st.just([{"name": "models", "create": False}]),
                "annotations": labels,
                "topologyConstraint": st.just({"topologyProfile": "default", "packDomain": "zone"}),
                "restart": st.just({"id": "r1", "strategy": {"type": "Sequential", "order": ["Frontend"]}}),
            },
        ),
    },
    optional={
        "status": st.fixed_dictionaries(
            {},
            optional={
                "state": st.sampled_from(["pending", "successful"]),
                "services": st.dictionaries(names, replica_status, max_size=2),
                "rollingUpdate": st.just({"phase": "InProgress", "updatedServices": ["A"]}),
                "conditions": st.just([{"type": "Ready", "status": "False", "reason": "x", "message": "y"}]),
            },
        )
    },
)

beta_component = st.fixed_dictionaries(
    {"name": names},
    optional={
        "type": st.sampled_from(["frontend", "worker", "prefill", "decode", "planner", "epp"]),
        "replicas": st.integers(0, 5),
        "sharedMemorySize": st.sampled_from(["0", "8Gi", 0, "1Gi"]),
        "scalingAdapter": st.just({}),
        "compilationCache": st.fixed_dictionaries({"pvcName": dns}, optional={"mountPath": st.just("/c")}),
        "podTemplate": st.fixed_dictionaries(
            {},
            optional={
                "metadata": st.fixed_dictionaries({}, optional={"labels": labels}),
                "spec": st.fixed_dictionaries(
                    {},
                    optional={
                        "containers": st.lists(
                            st.one_of(
                                container,
                                st.fixed_dictionaries(
                                    {"name": st.just("main")},
                                    optional={
                                        "image": text,
                                        "env": env,
                                        "resources": st.just({"limits": {"nvidia.com/gpu": 1, "cpu": 2}}),
                                        "livenessProbe": probe,
                                        "envFrom": st.just([{"secretRef": {"name": "hf"}}]),
                                    },
                                ),
                            ),
                            max_size=3,
                            unique_by=lambda c: c["name"],
                        ),
                        "nodeSelector": labels,
                    },
                ),
            },
        ),
        "experimental": st.fixed_dictionaries(
            {},
            optional={
                "gpuMemoryService": st.fixed_dictionaries(
                    {}, optional={"mode": st.sampled_from(["IntraPod"])}
                ),
                "failover": st.fixed_dictionaries({}, optional={"numShadows": st.just(1)}),
                "checkpoint": st.fixed_dictionaries({"enabled": st.booleans()}),
            },
        ),
        "frontendSidecar": dns,
        "globalDynamoNamespace": st.booleans(),
    },
)
beta_dgd = st.fixed_dictionaries(
    {
        "apiVersion": st.just("nvidia.com/v1beta1"),
        "kind": st.just("DynamoGraphDeployment"),
        "metadata": metadata,
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "backendFramework": st.sampled_from(["vllm", "sglang", "trtllm"]),
                "components": st.lists(beta_component, max_size=3, unique_by=lambda c: c["name"].lower()),
                "env": env,
                "topologyConstraint": st.just({"clusterTopologyName": "t", "packDomain": "zone"}),
            },
        ),
    },
    optional={
        "status": st.fixed_dictionaries(
            {},
            optional={
                "components": st.dictionaries(
                    names,
                    replica_status.map(lambda s: {k: v for k, v in s.items() if k != "componentName"}),
                    max_size=2,
                )
            },
        )
    },
)
alpha_dcd = st.builds(
    lambda meta, svc, backend: {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": meta,
        "spec": {**svc, **backend},
    },
    metadata,
    alpha_service,
    st.sampled_from([{}, {"backendFramework": "vllm"}]),
)
beta_dcd = st.builds(
    lambda meta, comp: {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": meta,
        "spec": {**comp, "backendFramework": "sglang"},
    },
    metadata,
    beta_component,
)


def _dgdsa(version: str, key: str):
    return st.builds(
        lambda meta, n, c, r, status: {
            "apiVersion": f"nvidia.com/{version}",
            "kind": "DynamoGraphDeploymentScalingAdapter",
            "metadata": meta,
            "spec": {"replicas": r, "dgdRef": {"name": n, key: c}},
            **({"status": status} if status else {}),
        },
        metadata,
        dns,
        names,
        st.integers(0, 10),
        st.fixed_dictionaries({}, optional={"replicas": st.integers(0, 9), "selector": st.just("a=b")}),
    )


ALPHA = st.one_of(alpha_dgd, alpha_dcd, _dgdsa("v1alpha1", "serviceName"), alpha_dgdr)
BETA = st.one_of(beta_dgd, beta_dcd, _dgdsa("v1beta1", "componentName"), beta_dgdr)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- properties


@SETTINGS
@given(ALPHA)
def test_alpha_beta_alpha_round_trip_is_lossless(obj: dict) -> None:
    assert_valid(obj)
    original = copy.deepcopy(obj)
    beta = convert(obj, "v1beta1")
    assert obj == original, "convert must not modify its input"
    assert_valid(beta)
    assert convert(beta, "v1alpha1") == original


@SETTINGS
@given(BETA)
def test_beta_alpha_beta_round_trip_is_lossless(obj: dict) -> None:
    assert_valid(obj)
    alpha = convert(obj, "v1alpha1")
    assert_valid(alpha)
    assert convert(alpha, "v1beta1") == obj


@SETTINGS
@given(ALPHA)
def test_repeated_conversion_is_stable(obj: dict) -> None:
    """Reading an object back and forth many times (as controllers do) never grows or drifts it."""
    beta = convert(obj, "v1beta1")
    again = convert(convert(beta, "v1alpha1"), "v1beta1")
    assert again == beta


# ---------------------------------------------------------------- explicit mappings

ALPHA_DGD = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "llm", "namespace": "ns"},
    "spec": {
        "backendFramework": "vllm",
        "envs": [{"name": "HF_HOME", "value": "/cache"}],
        "services": {
            "Frontend": {"componentType": "frontend", "replicas": 1},
            "VllmPrefillWorker": {
                "componentType": "worker",
                "subComponentType": "prefill",
                "replicas": 2,
                "envs": [{"name": "A", "value": "1"}],
                "resources": {"limits": {"gpu": "1"}},
                "sharedMemory": {"disabled": True},
                "livenessProbe": {"httpGet": {"path": "/live", "port": 9090}},
                "extraPodMetadata": {"annotations": {"x": "y"}},
                "extraPodSpec": {"mainContainer": {"image": "vllm:1", "args": ["serve"]}},
            },
        },
    },
}


def test_services_map_becomes_components_list_with_main_container() -> None:
    beta = convert(ALPHA_DGD, "v1beta1")
    comps = beta["spec"]["components"]
    assert [c["name"] for c in comps] == ["Frontend", "VllmPrefillWorker"]
    assert comps[0]["type"] == "frontend"
    worker = comps[1]
    assert worker["type"] == "prefill"
    assert worker["sharedMemorySize"] == "0"
    main = worker["podTemplate"]["spec"]["containers"][0]
    assert main["name"] == "main"
    assert main["image"] == "vllm:1"
    assert main["env"] == [{"name": "A", "value": "1"}]
    assert main["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert main["livenessProbe"] == {"httpGet": {"path": "/live", "port": 9090}}
    assert worker["podTemplate"]["metadata"] == {"annotations": {"x": "y"}}
    assert beta["spec"]["env"] == [{"name": "HF_HOME", "value": "/cache"}]
    assert annotation_for("v1alpha1") not in beta["metadata"].get("annotations", {})


def test_fields_without_a_v1beta1_home_travel_in_one_annotation() -> None:
    alpha = copy.deepcopy(ALPHA_DGD)
    alpha["spec"]["pvcs"] = [{"name": "models", "create": False}]
    alpha["spec"]["services"]["Frontend"]["ingress"] = {"enabled": True, "host": "llm.example.com"}
    beta = convert(alpha, "v1beta1")
    annotations = beta["metadata"]["annotations"]
    assert list(annotations) == [annotation_for("v1alpha1")]
    saved = json.loads(annotations[annotation_for("v1alpha1")])
    assert {tuple(map(str, r["path"])) for r in saved} == {
        ("spec", "pvcs"),
        ("spec", "services", "Frontend", "ingress"),
    }
    assert convert(beta, "v1alpha1") == alpha


def test_edit_in_other_version_wins_over_saved_data() -> None:
    beta = convert(ALPHA_DGD, "v1beta1")
    beta["spec"]["components"][1]["replicas"] = 7
    beta["spec"]["components"][1]["sharedMemorySize"] = "4Gi"
    alpha = convert(beta, "v1alpha1")
    worker = alpha["spec"]["services"]["VllmPrefillWorker"]
    assert worker["replicas"] == 7
    assert worker["sharedMemory"] == {"size": "4Gi"}


def test_shared_memory_size_zero_disables() -> None:
    beta = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "w"},
        "spec": {"name": "w", "sharedMemorySize": "0"},
    }
    alpha = convert(beta, "v1alpha1")
    assert alpha["spec"]["sharedMemory"] == {"disabled": True}
    assert alpha["spec"]["serviceName"] == "w"


def test_scaling_adapter_service_name_becomes_component_name() -> None:
    alpha = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": "llm-decode"},
        "spec": {"replicas": 3, "dgdRef": {"name": "llm", "serviceName": "Decode"}},
        "status": {"replicas": 3, "selector": "app=x"},
    }
    beta = convert(alpha, "v1beta1")
    assert beta["spec"] == {"replicas": 3, "dgdRef": {"name": "llm", "componentName": "Decode"}}
    assert beta["status"] == alpha["status"]
    assert "annotations" not in beta["metadata"]


def test_status_services_become_components() -> None:
    alpha = copy.deepcopy(ALPHA_DGD)
    alpha["status"] = {
        "state": "successful",
        "services": {
            "Frontend": {
                "componentKind": "Deployment",
                "componentNames": ["llm-frontend"],
                "replicas": 1,
                "updatedReplicas": 1,
            }
        },
    }
    beta = convert(alpha, "v1beta1")
    assert beta["status"]["components"]["Frontend"]["componentNames"] == ["llm-frontend"]
    assert "services" not in beta["status"]


def test_same_version_is_a_copy_and_unknown_versions_fail() -> None:
    assert convert(ALPHA_DGD, "v1alpha1") == ALPHA_DGD
    assert convert(ALPHA_DGD, "v1alpha1") is not ALPHA_DGD
    with pytest.raises(ConversionError):
        convert(ALPHA_DGD, "v2")
    with pytest.raises(ConversionError):
        convert({**ALPHA_DGD, "kind": "DynamoModel"}, "v1beta1")
    with pytest.raises(ConversionError):
        convert({**ALPHA_DGD, "apiVersion": "apps/v1"}, "v1beta1")


def test_service_resources_merge_into_the_main_containers_and_keep_its_claims() -> None:
    """v1alpha1 service-level ``resources`` and ``extraPodSpec.mainContainer.resources`` both reach the
    main container: key by key with the main container's over the service's (it is the override), DRA
    claims of both by name; the v1alpha1 object round-trips unchanged."""
    alpha = copy.deepcopy(ALPHA_DGD)
    worker = alpha["spec"]["services"]["VllmPrefillWorker"]
    worker["resources"] = {
        "requests": {"cpu": "4", "memory": "16Gi"},
        "limits": {"gpu": "1", "cpu": "8"},
        "claims": [{"name": "scratch"}],
    }
    worker["extraPodSpec"]["mainContainer"]["resources"] = {
        "limits": {"cpu": "6"},
        "claims": [{"name": "gpu", "request": "gpus"}],
    }
    beta = convert(alpha, "v1beta1")
    main = beta["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
    assert main["resources"] == {
        "requests": {"cpu": "4", "memory": "16Gi"},
        "limits": {"nvidia.com/gpu": "1", "cpu": "6"},
        "claims": [{"name": "gpu", "request": "gpus"}, {"name": "scratch"}],
    }
    assert convert(beta, "v1alpha1") == alpha
    assert_valid(beta)


def test_main_container_resources_alone_are_kept_when_the_service_sets_none() -> None:
    alpha = copy.deepcopy(ALPHA_DGD)
    worker = alpha["spec"]["services"]["VllmPrefillWorker"]
    del worker["resources"]
    worker["extraPodSpec"]["mainContainer"]["resources"] = {"claims": [{"name": "gpu"}]}
    beta = convert(alpha, "v1beta1")
    main = beta["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
    assert main["resources"] == {"claims": [{"name": "gpu"}]}
    assert convert(beta, "v1alpha1") == alpha


def test_component_type_main_is_the_frontend_and_round_trips() -> None:
    """``componentType: main`` (the API reference's example value) is what upstream called the frontend
    before the type was renamed (its defaults factory gave ``main`` the frontend's defaults): v1beta1 reads
    it as ``type: frontend``, and the record restores ``main`` for v1alpha1 readers."""
    alpha = copy.deepcopy(ALPHA_DGD)
    alpha["spec"]["services"]["Frontend"]["componentType"] = "main"
    beta = convert(alpha, "v1beta1")
    assert beta["spec"]["components"][0]["type"] == "frontend"
    assert convert(beta, "v1alpha1") == alpha
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "llm-frontend"},
        "spec": {"serviceName": "Frontend", "componentType": "main"},
    }
    assert convert(dcd, "v1beta1")["spec"]["type"] == "frontend"
    assert convert(convert(dcd, "v1beta1"), "v1alpha1") == dcd
