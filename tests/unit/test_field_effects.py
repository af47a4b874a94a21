"""Fields users rely on, each named and shown to change what the operator does (the coverage table cites
these tests; ``docs/api-coverage.md``): v1alpha1 service settings that land in the v1beta1 component, a
graph's topology name in both versions, rolling-update status, a checkpoint identity's fields, and the
configuration keys for MPI's sshd policy, the EPP's ClusterRole and the webhook's certificate directory."""

from __future__ import annotations

import copy

from dynamo_operator.api.conversion import convert
from dynamo_operator.render import RenderContext, render_component
from dynamo_operator.render.checkpoint_ids import identity_hash
from support import graphs


def alpha_graph(service: dict, **spec) -> dict:
    return graphs.dgd_v1alpha1({"Worker": service}, **spec)


def component(obj: dict) -> dict:
    return convert(copy.deepcopy(obj), "v1beta1")["spec"]["components"][0]


def main(comp: dict) -> dict:
    return next(c for c in comp["podTemplate"]["spec"]["containers"] if c["name"] == "main")


def test_sub_component_type_makes_a_worker_a_prefill_or_decode_component():
    worker = graphs.alpha_service("worker", image="w:1")
    assert component(alpha_graph(worker))["type"] == "worker"
    for sub in ("prefill", "decode"):
        assert component(alpha_graph({**worker, "subComponentType": sub}))["type"] == sub
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"serviceName": "w", **worker, "subComponentType": "prefill"},
    }
    assert convert(dcd, "v1beta1")["spec"]["type"] == "prefill"


def test_env_from_secret_comes_first_in_the_main_containers_env_from():
    worker = graphs.alpha_service("worker", image="w:1", envFromSecret="hf-token")
    worker["extraPodSpec"]["mainContainer"]["envFrom"] = [{"configMapRef": {"name": "cfg"}}]
    assert main(component(alpha_graph(worker)))["envFrom"] == [
        {"secretRef": {"name": "hf-token"}},
        {"configMapRef": {"name": "cfg"}},
    ]
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"serviceName": "w", **worker},
    }
    rendered = render_component(dcd, RenderContext())
    pod = next(o for o in rendered if o["kind"] == "Deployment")["spec"]["template"]["spec"]
    assert {"secretRef": {"name": "hf-token"}} in pod["containers"][0]["envFrom"]


def test_the_frontend_sidecars_env_from_secret():
    front = graphs.alpha_service(
        "frontend", image="f:1", frontendSidecar={"image": "side:1", "envFromSecret": "side-secret"}
    )
    containers = component(alpha_graph(front))["podTemplate"]["spec"]["containers"]
    sidecar = next(c for c in containers if c["name"] == "frontend-sidecar")
    assert sidecar["envFrom"] == [{"secretRef": {"name": "side-secret"}}]


def test_a_volume_mount_used_as_compilation_cache_becomes_the_components_cache():
    worker = graphs.alpha_service(
        "worker",
        volumeMounts=[
            {"name": "cache", "mountPoint": "/root/.cache/vllm", "useAsCompilationCache": True},
            {"name": "models", "mountPoint": "/models"},
        ],
    )
    comp = component(alpha_graph(worker))
    assert comp["compilationCache"] == {"pvcName": "cache", "mountPath": "/root/.cache/vllm"}
    assert [m["name"] for m in main(comp)["volumeMounts"]] == ["models"]  # the cache is not mounted twice


def test_topology_profile_is_v1beta1s_cluster_topology_name():
    graph = alpha_graph(graphs.alpha_service("worker"), topologyConstraint={"topologyProfile": "rack-a"})
    beta = convert(copy.deepcopy(graph), "v1beta1")
    assert beta["spec"]["topologyConstraint"]["clusterTopologyName"] == "rack-a"
    beta["spec"]["topologyConstraint"]["clusterTopologyName"] = "rack-b"
    assert convert(beta, "v1alpha1")["spec"]["topologyConstraint"]["topologyProfile"] == "rack-b"


def test_a_rolling_updates_updated_services_are_its_updated_components():
    graph = alpha_graph(graphs.alpha_service("worker"))
    graph["status"] = {"rollingUpdate": {"phase": "InProgress", "updatedServices": ["Worker"]}}
    beta = convert(copy.deepcopy(graph), "v1beta1")
    assert beta["status"]["rollingUpdate"] == {"phase": "InProgress", "updatedComponents": ["Worker"]}
    assert convert(beta, "v1alpha1")["status"]["rollingUpdate"]["updatedServices"] == ["Worker"]


def test_every_identity_field_names_another_checkpoint():
    base = {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"}
    ids = {
        identity_hash(base),
        identity_hash({**base, "dynamoVersion": "0.7.0"}),
        identity_hash({**base, "maxModelLen": 4096}),
        identity_hash({**base, "extraParameters": {"enforce-eager": "true"}}),
        identity_hash({**base, "model": "Qwen/Qwen3-8B"}),
        identity_hash({**base, "tensorParallelSize": 2}),
        identity_hash({**base, "pipelineParallelSize": 2}),
    }
    assert len(ids) == 7
    one = identity_hash({**base, "extraParameters": {"a": "1", "b": "2"}})
    assert one == identity_hash({**base, "extraParameters": {"b": "2", "a": "1"}})  # order does not matter


def test_a_services_labels_and_annotations_reach_its_pods_under_extra_pod_metadata():
    """v1alpha1 ``labels`` and ``annotations`` of a component deployment (and of a graph's service) are
    its pods' metadata in v1beta1; ``extraPodMetadata`` wins a key both set."""
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g-worker", "namespace": "ns"},
        "spec": {
            "serviceName": "worker",
            "componentType": "worker",
            "labels": {"team": "a", "tier": "gold"},
            "annotations": {"owner": "ops"},
            "extraPodMetadata": {"labels": {"tier": "silver"}},
        },
    }
    metadata = convert(copy.deepcopy(dcd), "v1beta1")["spec"]["podTemplate"]["metadata"]
    assert metadata == {"labels": {"team": "a", "tier": "silver"}, "annotations": {"owner": "ops"}}
    service = graphs.alpha_service("worker", labels={"team": "b"}, annotations={"owner": "dev"})
    assert component(alpha_graph(service))["podTemplate"]["metadata"] == {
        "labels": {"team": "b"},
        "annotations": {"owner": "dev"},
    }


def test_the_services_readiness_probe_is_the_main_containers():
    probe = {"httpGet": {"path": "/health", "port": 9090}, "periodSeconds": 7}
    assert (
        main(component(alpha_graph(graphs.alpha_service("worker", readinessProbe=probe))))["readinessProbe"]
        == probe
    )
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g-worker", "namespace": "ns"},
        "spec": {"serviceName": "worker", "componentType": "worker", "readinessProbe": probe},
    }
    assert main(convert(dcd, "v1beta1")["spec"])["readinessProbe"] == probe


def test_gpu_type_names_the_gpu_resource_and_memory_and_custom_resources_pass_through():
    resources = {
        "requests": {"memory": "16Gi", "custom": {"example.com/fpga": "1"}},
        "limits": {"gpu": "2", "gpuType": "gpu.intel.com/xe", "memory": "32Gi"},
    }
    worker = graphs.alpha_service("worker", resources=resources)
    assert main(component(alpha_graph(worker)))["resources"] == {
        "requests": {"memory": "16Gi", "example.com/fpga": "1"},
        "limits": {"gpu.intel.com/xe": "2", "memory": "32Gi"},
    }
    plain = graphs.alpha_service("worker", resources={"limits": {"gpu": "1"}})
    assert main(component(alpha_graph(plain)))["resources"] == {"limits": {"nvidia.com/gpu": "1"}}


def test_a_v1alpha1_reader_sees_a_components_newest_resource_as_its_component_name():
    """``componentName`` is read, not written: the last of v1beta1's ``componentNames`` (during a rolling
    update, the new revision's)."""
    graph = graphs.dgd(graphs.component("worker", "decode"))
    graph["status"] = {"components": {"worker": {"componentNames": ["g-worker-a1", "g-worker-b2"]}}}
    alpha = convert(graph, "v1alpha1")
    assert alpha["status"]["services"]["worker"]["componentName"] == "g-worker-b2"
