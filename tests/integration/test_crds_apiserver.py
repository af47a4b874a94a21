"""The generated CRDs on a real kube-apiserver: they establish, accept valid objects of every kind and
version, reject invalid ones with a message naming the field, and teach ``kubectl explain``.

No conversion webhook runs here. Objects are created in the storage version (v1alpha1), which never
calls the webhook. v1beta1 objects cannot be stored through the real CRDs without it, so valid v1beta1
samples go to a "probe" copy of each CRD: the same generated v1beta1 schema, served and stored alone
under a throwaway group. Invalid v1beta1 samples go to the real CRDs: schema and CEL validation run in
the request version before anything is converted, so they are rejected without the webhook.
"""

from __future__ import annotations

import copy
import subprocess
import uuid

import pytest
from dynamo_operator.api import crdgen, registry
from kubernetes import client
from kubernetes.client.rest import ApiException
from support.crds import install_crds, wait_established
from support.poll import wait_for

pytestmark = pytest.mark.api

NS = "crd-tests"
PROBE_GROUP = "probe.nvidia.com"

ALPHA_SAMPLES: dict[str, dict] = {
    "DynamoGraphDeployment": {
        "spec": {
            "backendFramework": "vllm",
            "pvcs": [
                {
                    "name": "models",
                    "create": True,
                    "size": "10Gi",
                    "storageClass": "std",
                    "volumeAccessMode": "ReadWriteOnce",
                }
            ],
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "replicas": 1,
                    "dynamoNamespace": "legacy",
                    "extraPodSpec": {"mainContainer": {"image": "frontend:1"}},
                },
                "VllmDecodeWorker": {
                    "componentType": "worker",
                    "subComponentType": "decode",
                    "replicas": 2,
                    "resources": {"limits": {"gpu": "1"}},
                    "sharedMemory": {"size": "16Gi"},
                    "envs": [{"name": "A", "value": "1"}],
                    "volumeMounts": [{"name": "models", "mountPoint": "/models"}],
                    "extraPodSpec": {
                        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                        "mainContainer": {"image": "vllm:1", "args": ["--model", "m"]},
                    },
                },
            },
        }
    },
    "DynamoComponentDeployment": {
        "spec": {
            "backendFramework": "sglang",
            "serviceName": "worker",
            "componentType": "worker",
            "replicas": 1,
        }
    },
    "DynamoGraphDeploymentRequest": {
        "spec": {
            "model": "Qwen/Qwen3-0.6B",
            "backend": "vllm",
            "profilingConfig": {"profilerImage": "planner:1", "config": {"sla": {"ttft": 200}}},
        }
    },
    "DynamoGraphDeploymentScalingAdapter": {
        "spec": {"replicas": 2, "dgdRef": {"name": "g", "serviceName": "Decode"}}
    },
    "DynamoModel": {
        "spec": {
            "modelName": "llama-lora",
            "baseModelName": "llama",
            "modelType": "lora",
            "source": {"uri": "hf://org/lora"},
        }
    },
    "DynamoCheckpoint": {
        "spec": {
            "identity": {"model": "llama", "backendFramework": "vllm"},
            "job": {"podTemplateSpec": {"spec": {"containers": [{"name": "main", "image": "vllm:1"}]}}},
        }
    },
    "PodSnapshot": {"spec": {"source": {"podRef": {"name": "worker-0"}}}},
    "PodSnapshotContent": {
        "spec": {
            "podSnapshotRef": {"namespace": NS, "name": "snap"},
            "source": {"podRef": {"name": "worker-0", "uid": "1234"}, "nodeName": "node-1"},
        }
    },
}

BETA_SAMPLES: dict[str, dict] = {
    "DynamoGraphDeployment": {
        "spec": {
            "backendFramework": "vllm",
            "env": [{"name": "HF_HOME", "value": "/cache"}],
            "components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1},
                {"name": "epp", "type": "epp", "replicas": 1, "eppConfig": {"config": {"plugins": []}}},
                {
                    "name": "decode",
                    "type": "decode",
                    "replicas": 2,
                    "sharedMemorySize": "0",
                    "scalingAdapter": {},
                    "podTemplate": {"spec": {"containers": [{"name": "main", "image": "vllm:1"}]}},
                },
            ],
        }
    },
    "DynamoComponentDeployment": {"spec": {"name": "worker", "type": "worker", "backendFramework": "trtllm"}},
    "DynamoGraphDeploymentRequest": {
        "spec": {
            "model": "Qwen/Qwen3-0.6B",
            "backend": "auto",
            "sla": {"ttft": 200, "itl": 20},
            "searchStrategy": "rapid",
        }
    },
    "DynamoGraphDeploymentScalingAdapter": {
        "spec": {"replicas": 0, "dgdRef": {"name": "g", "componentName": "decode"}}
    },
}


def _dgd(components: list[dict], **spec: object) -> dict:
    return {"spec": {"components": components, **spec}}


# (kind, version, body, field the error must name)
INVALID = [
    ("DynamoGraphDeployment", "v1beta1", _dgd([], backendFramework="tensorflow"), "spec.backendFramework"),
    ("DynamoGraphDeployment", "v1beta1", _dgd([{"name": "-bad_name"}]), "spec.components[0].name"),
    (
        "DynamoGraphDeployment",
        "v1beta1",
        _dgd([{"name": "w", "replicas": -1}]),
        "spec.components[0].replicas",
    ),
    ("DynamoGraphDeployment", "v1beta1", _dgd([{"name": f"c{i}"} for i in range(26)]), "spec.components"),
    (
        "DynamoGraphDeployment",
        "v1beta1",
        _dgd([{"name": "a", "type": "epp"}, {"name": "b", "type": "epp"}]),
        "spec.components",
    ),
    ("DynamoGraphDeployment", "v1beta1", _dgd([{"name": "Decode"}, {"name": "decode"}]), "spec.components"),
    (
        "DynamoGraphDeployment",
        "v1alpha1",
        {"spec": {"services": {"W": {"replicas": -1}}, "backendFramework": "vllm"}},
        "spec.services.W.replicas",
    ),
    ("DynamoGraphDeployment", "v1alpha1", {"spec": {"backendFramework": "jax"}}, "spec.backendFramework"),
    (
        "DynamoGraphDeploymentRequest",
        "v1alpha1",
        {"spec": {"backend": "vllm", "profilingConfig": {"profilerImage": "p"}}},
        "spec.model",
    ),
    ("DynamoGraphDeploymentRequest", "v1beta1", {"spec": {"backend": "vllm"}}, "spec.model"),
    (
        "DynamoGraphDeploymentScalingAdapter",
        "v1alpha1",
        {"spec": {"replicas": -3, "dgdRef": {"name": "g", "serviceName": "s"}}},
        "spec.replicas",
    ),
]


def _probe_crd(crd: dict) -> dict:
    """The v1beta1 version of a generated CRD, alone and stored, under the probe group."""
    probe = copy.deepcopy(crd)
    spec = probe["spec"]
    spec["group"] = PROBE_GROUP
    spec["versions"] = [dict(v, storage=True) for v in spec["versions"] if v["name"] == "v1beta1"]
    spec.pop("conversion", None)
    spec["names"].pop("shortNames", None)
    spec["names"].pop("categories", None)
    probe["metadata"] = {"name": f"{spec['names']['plural']}.{PROBE_GROUP}"}
    return probe


@pytest.fixture(scope="module")
def api(api_cluster):
    api_client = api_cluster.api_client()
    install_crds(api_cluster, timeout=60)
    ext = client.ApiextensionsV1Api(api_client)
    for crd in crdgen.render_crds():
        if len(crd["spec"]["versions"]) > 1:
            probe = _probe_crd(crd)
            try:
                ext.create_custom_resource_definition(probe)
            except ApiException as exc:
                if exc.status != 409:
                    raise
            wait_established(api_client, probe["metadata"]["name"], timeout=60)
    core = client.CoreV1Api(api_client)
    try:
        core.create_namespace({"metadata": {"name": NS}})
    except ApiException as exc:
        if exc.status != 409:
            raise
    return client.CustomObjectsApi(api_client)


def _create(
    api: client.CustomObjectsApi, kind: str, version: str, body: dict, group: str = "nvidia.com"
) -> dict:
    info = registry.KINDS[kind]
    obj = {
        "apiVersion": f"{group}/{version}",
        "kind": kind,
        "metadata": {"name": f"t-{uuid.uuid4().hex[:8]}"},
        **copy.deepcopy(body),
    }
    if info.scope == "Cluster":
        return api.create_cluster_custom_object(group, version, info.plural, obj)
    return api.create_namespaced_custom_object(group, version, NS, info.plural, obj)


def test_all_crds_established(api, api_cluster) -> None:
    ext = client.ApiextensionsV1Api(api_cluster.api_client())
    names = {c.metadata.name for c in ext.list_custom_resource_definition().items}
    assert {info.crd_name for info in registry.KINDS.values()} <= names


@pytest.mark.parametrize("kind", sorted(ALPHA_SAMPLES))
def test_valid_v1alpha1_sample_is_accepted(api, kind: str) -> None:
    created = _create(api, kind, "v1alpha1", ALPHA_SAMPLES[kind])
    assert created["spec"] == ALPHA_SAMPLES[kind]["spec"], "the apiserver pruned or changed fields"


@pytest.mark.parametrize("kind", sorted(BETA_SAMPLES))
def test_valid_v1beta1_sample_is_accepted(api, kind: str) -> None:
    created = _create(api, kind, "v1beta1", BETA_SAMPLES[kind], group=PROBE_GROUP)
    assert created["spec"] == BETA_SAMPLES[kind]["spec"], "the apiserver pruned or changed fields"


@pytest.mark.parametrize(
    ("kind", "version", "body", "field"), INVALID, ids=[f"{k}-{v}-{f}" for k, v, _, f in INVALID]
)
def test_invalid_sample_is_rejected_naming_the_field(api, kind, version, body, field) -> None:
    with pytest.raises(ApiException) as info:
        _create(api, kind, version, body)
    assert info.value.status == 422, info.value.body
    assert field in info.value.body, info.value.body


def test_scale_subresource_drives_the_adapter(api) -> None:
    created = _create(
        api,
        "DynamoGraphDeploymentScalingAdapter",
        "v1alpha1",
        ALPHA_SAMPLES["DynamoGraphDeploymentScalingAdapter"],
    )
    name = created["metadata"]["name"]
    plural = registry.KINDS["DynamoGraphDeploymentScalingAdapter"].plural
    api.patch_namespaced_custom_object_scale(
        "nvidia.com", "v1alpha1", NS, plural, name, {"spec": {"replicas": 5}}
    )
    assert (
        api.get_namespaced_custom_object("nvidia.com", "v1alpha1", NS, plural, name)["spec"]["replicas"] == 5
    )


def test_kubectl_explain_prints_descriptions(api, api_cluster) -> None:
    def explain() -> str:
        """The explanation, once the apiserver publishes the CRD's OpenAPI (it does so a moment after the
        CRD is Established)."""
        proc = subprocess.run(
            [
                "kubectl",
                "explain",
                "dynamographdeployment.spec.components",
                "--api-version=nvidia.com/v1beta1",
            ],
            env=api_cluster.env,
            capture_output=True,
            text=True,
        )
        return proc.stdout if proc.returncode == 0 and "stable logical identifier" in proc.stdout else ""

    out = wait_for(explain, 60, "kubectl explain of spec.components", interval=1)
    assert "components are the components deployed as part of this graph" in out, out
    assert "podTemplate" in out and "sharedMemorySize" in out, out
