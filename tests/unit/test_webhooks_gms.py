"""Admission of GPU memory service, failover and EPP settings: every inconsistent combination refused with
the field, why and the fix, in the version the user wrote."""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.webhooks.validation import Context, validate
from support import graphs

CONTAINER_MODE = {"nvidia.com/dynamo-kube-discovery-mode": "container"}


def worker(gms: dict | None = None, failover: dict | None = None, gpus: str | None = "1", **extra) -> dict:
    main = {"name": "main", "image": "img", "command": ["python3", "-m", "dynamo.vllm"]}
    if gpus:
        main["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    experimental = {}
    if gms is not None:
        experimental["gpuMemoryService"] = gms
    if failover is not None:
        experimental["failover"] = failover
    return {
        "name": "Worker",
        "type": "worker",
        "experimental": experimental,
        "podTemplate": {"spec": {"containers": [main]}},
        **extra,
    }


def dgd(*components, annotations=None) -> dict:
    return graphs.dgd(*components, namespace="team", metadata={"annotations": annotations or {}})


def errors(obj, ctx=None, old=None, kind="DynamoGraphDeployment", version="v1beta1") -> list[str]:
    return [str(e) for e in validate(kind, version, obj, old, ctx or Context()).errors]


def test_consistent_gms_and_failover_are_admitted():
    assert errors(dgd(worker({}))) == []
    assert (
        errors(
            dgd(
                worker({"mode": "IntraPod"}, {"mode": "IntraPod", "numShadows": 1}),
                annotations=CONTAINER_MODE,
            )
        )
        == []
    )
    # the discovery mode on the component's pod template is enough too
    w = worker({}, {})
    w["podTemplate"]["metadata"] = {"annotations": CONTAINER_MODE}
    assert errors(dgd(w)) == []


@pytest.mark.parametrize(
    ("component", "ctx", "want"),
    [
        (
            {**worker({}), "type": "frontend"},
            None,
            "spec.components[0].experimental.gpuMemoryService: Forbidden: GPU memory service (and "
            "failover, which runs on it) serves worker components only (type is frontend); remove "
            "experimental.gpuMemoryService, or set type to worker, prefill or decode",
        ),
        (
            worker({"mode": "InterPod"}),
            None,
            'spec.components[0].experimental.gpuMemoryService.mode: Unsupported value: "InterPod": '
            "inter-pod GMS",
        ),
        (
            worker({"extraClientPods": [{"name": "p"}]}),
            None,
            "spec.components[0].experimental.gpuMemoryService.extraClientPods: Forbidden: is reserved for "
            "inter-pod GMS client pods, which are not wired yet; remove extraClientPods",
        ),
        (
            worker({}),
            Context(dra_enabled=False),
            "spec.components[0].experimental.gpuMemoryService: Forbidden: GMS shares the GPUs through a DRA "
            "ResourceClaim, and DRA is off for this operator",
        ),
        (
            worker({}, gpus=None),
            None,
            "spec.components[0].podTemplate.spec.containers[0].resources: Required value: GPU memory service "
            "replaces the "
            "main container's nvidia.com/gpu request",
        ),
        (
            {**worker({}), "experimental": {"gpuMemoryService": {}, "checkpoint": {"enabled": True}}},
            None,
            "spec.components[0].experimental.checkpoint.enabled: Forbidden: a checkpoint of a GPU memory "
            "service "
            "component is not supported",
        ),
    ],
)
def test_gms_refusals(component, ctx, want):
    found = errors(dgd(component), ctx)
    assert any(e.startswith(want) for e in found), found


@pytest.mark.parametrize(
    ("component", "annotations", "want"),
    [
        (
            worker({}, {"mode": "InterPod"}),
            CONTAINER_MODE,
            'spec.components[0].experimental.failover.mode: Unsupported value: "InterPod": inter-pod GMS',
        ),
        (
            worker({}, {}),
            {"nvidia.com/dynamo-kube-discovery-mode": "pod"},
            "spec.components[0].experimental.failover: Invalid value: failover needs per-container "
            "Kubernetes discovery (the two engines of a pod register separately), and the annotation "
            'nvidia.com/dynamo-kube-discovery-mode asks for "pod"; remove the annotation (failover sets '
            '"container" itself) or set it to "container"',
        ),
        (
            {**worker(None, {}), "type": "frontend"},
            None,
            "spec.components[0].experimental.failover: Forbidden: GPU memory service (and failover, which "
            "runs on it) serves worker components only (type is frontend); remove experimental.failover",
        ),
        (
            worker(None, {}),
            None,
            None,  # upstream's shape: no gpuMemoryService (failover runs on its own), no annotation
        ),
    ],
)
def test_failover_refusals(component, annotations, want):
    found = errors(dgd(component, annotations=annotations))
    if want is None:
        assert found == []
    else:
        assert any(e.startswith(want) for e in found), found


@pytest.mark.parametrize("backend", ["vllm", "sglang", "trtllm"])
def test_failover_of_every_backend_is_admitted_on_one_node_or_several(backend):
    """Upstream renders failover for vLLM, SGLang and TensorRT-LLM workers, multinode ones included
    (multinode vLLM with failover runs on the mp executor unless annotated: two Ray heads cannot share
    the leader's port)."""
    w = worker(None, {}, gpus="8")
    main = w["podTemplate"]["spec"]["containers"][0]
    main["command"] = ["python3", "-m", f"dynamo.{backend}"]
    main["args"] = ["--model", "m", "--tensor-parallel-size", "16"]
    assert errors(dgd(w)) == []
    w["multinode"] = {"nodeCount": 2}
    assert errors(dgd(w)) == []


def test_failover_needs_a_known_engine_and_not_two_ray_heads():
    w = worker(None, {})
    w["podTemplate"]["spec"]["containers"][0]["command"] = ["python3", "-m", "dynamo.mocker"]
    assert errors(dgd(w)) == [
        "spec.components[0].experimental.failover: Unsupported value: failover needs to know the engine "
        "to keep the standby apart from the active one: vLLM, SGLang or TensorRT-LLM (backend: not "
        "detected); run the worker with python3 -m dynamo.<vllm|sglang|trtllm> (or set "
        "backendFramework), or remove experimental.failover"
    ]
    ray = worker(None, {}, gpus="8", multinode={"nodeCount": 2})
    ray["podTemplate"]["spec"]["containers"][0]["args"] = ["--tensor-parallel-size", "16"]
    asked = {"nvidia.com/vllm-distributed-executor-backend": "ray"}
    (found,) = errors(dgd(ray, annotations=asked))
    assert found.startswith("spec.components[0].experimental.failover: Forbidden: failover of multinode vLLM")
    assert "remove the annotation (failover then runs on the mp executor" in found


def test_failover_modes_must_match():
    # IntraPod failover on an InterPod service: the mismatch and the unsupported mode are both named
    found = errors(dgd(worker({"mode": "InterPod"}, {"mode": "IntraPod"}), annotations=CONTAINER_MODE))
    assert (
        'spec.components[0].experimental.failover.mode: Invalid value: "IntraPod": must match '
        in "\n".join(found)
    )


def test_the_discovery_mode_annotation_is_judged():
    found = errors(dgd(worker({}), annotations={"nvidia.com/dynamo-kube-discovery-mode": "node"}))
    assert found == [
        'metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: Unsupported value: "node": must be '
        '"pod" '
        'or "container" (how workers register with Kubernetes discovery: per pod, or per container as '
        "failover "
        "needs); fix the value or remove the annotation"
    ]


def test_dcd_rules_are_the_same():
    dcd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g-worker", "namespace": "team"},
        "spec": {**worker({"mode": "InterPod"}), "backendFramework": "vllm"},
    }
    found = errors(dcd, kind="DynamoComponentDeployment")
    assert found[0].startswith('spec.experimental.gpuMemoryService.mode: Unsupported value: "InterPod"')


# -- v1alpha1 ----------------------------------------------------------------------------------------------


def alpha(svc: dict) -> dict:
    base = {
        "componentType": "worker",
        "resources": {"limits": {"gpu": "1"}},
        "extraPodSpec": {"mainContainer": {"image": "img", "command": ["python3", "-m", "dynamo.vllm"]}},
    }
    return graphs.dgd_v1alpha1(
        {"Worker": {**base, **svc}}, namespace="team", metadata={"annotations": CONTAINER_MODE}
    )


def test_v1alpha1_paths():
    ok = alpha({"gpuMemoryService": {"enabled": True, "mode": "intraPod"}, "failover": {"enabled": True}})
    assert errors(ok, version="v1alpha1") == []
    inter = alpha({"gpuMemoryService": {"enabled": True, "mode": "interPod"}})
    assert errors(inter, version="v1alpha1")[0].startswith(
        'spec.services[Worker].gpuMemoryService.mode: Unsupported value: "InterPod": inter-pod GMS'
    )
    no_gms = alpha({"gpuMemoryService": {"enabled": False}, "failover": {"enabled": True}})
    assert errors(no_gms, version="v1alpha1") == []  # failover runs on a GPU memory service of its own
    frontend = alpha({"componentType": "frontend", "failover": {"enabled": True}})
    assert errors(frontend, version="v1alpha1")[0].startswith(
        "spec.services[Worker].failover: Forbidden: GPU memory service (and failover"
    )
    no_gpu = alpha({"gpuMemoryService": {"enabled": True}, "resources": {"limits": {"cpu": "1"}}})
    assert errors(no_gpu, version="v1alpha1")[0].startswith("spec.services[Worker].resources: Required value")


def test_v1alpha1_shapes_conversion_keeps_aside_are_refused():
    shadows = alpha(
        {
            "gpuMemoryService": {"enabled": True},
            "failover": {"enabled": True, "mode": "interPod", "numShadows": 3},
        }
    )
    assert errors(shadows, version="v1alpha1") == [
        "spec.services[Worker].failover.numShadows: Invalid value: 3: intra-pod failover runs exactly one "
        "active and one standby engine, and inter-pod failover (which takes more shadows) is not supported "
        "by "
        "this operator; set numShadows to 1 or omit it"
    ]
    disabled = alpha({"gpuMemoryService": {"enabled": False, "extraClientPods": [{"name": "p"}]}})
    assert errors(disabled, version="v1alpha1") == [
        "spec.services[Worker].gpuMemoryService.extraClientPods: Forbidden: is reserved for inter-pod GMS "
        "client "
        "pods, which are not wired yet; remove extraClientPods (helper containers go into "
        "extraPodSpec.containers and extraClientContainers)"
    ]
    off = alpha({"failover": {"enabled": False, "numShadows": 3}})
    assert errors(off, version="v1alpha1") == []  # switched off: nothing to run


def test_v1alpha1_dcd():
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g-worker", "namespace": "team"},
        "spec": {
            "serviceName": "Worker",
            "componentType": "worker",
            "failover": {"enabled": True, "numShadows": 2},
            "extraPodSpec": {"mainContainer": {"image": "img"}},
        },
    }
    assert errors(dcd, kind="DynamoComponentDeployment", version="v1alpha1") == [
        "spec.failover.numShadows: Invalid value: 2: intra-pod failover runs exactly one active and one "
        "standby "
        "engine, and inter-pod failover (which takes more shadows) is not supported by this operator; set "
        "numShadows to 1 or omit it"
    ]


# -- EPP ---------------------------------------------------------------------------------------------------


def epp() -> dict:
    return {
        "name": "Epp",
        "type": "epp",
        "eppConfig": {"config": {"plugins": []}},
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": "epp:1"}]}},
    }


def test_epp_needs_the_inference_pool_api():
    assert errors(dgd(epp())) == []
    assert errors(dgd(epp()), Context(inference_pool_served=False)) == [
        'spec.components[0].type: Forbidden: "epp": an epp component needs the Gateway API Inference '
        "Extension's InferencePool API (inference.networking.k8s.io/v1), which the cluster does not serve, "
        "so "
        "the pool it routes for cannot exist; install the Inference Extension CRDs, or remove the epp "
        "component"
    ]


def test_a_standalone_epp_dcd_is_warned_that_nothing_creates_its_pool():
    dcd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g-epp", "namespace": "team"},
        "spec": copy.deepcopy(epp()),
    }
    result = validate("DynamoComponentDeployment", "v1beta1", dcd, None, Context())
    assert result.errors == []
    assert any("gets no InferencePool" in w for w in result.warnings)


def test_the_webhook_asks_its_detectors():
    """The admission app passes what the operator detected (DRA, the InferencePool API) to the rules."""
    import json

    from dynamo_operator.webhooks.server import AdmissionSettings, WebhookApp, admission_path

    calls = []

    def served(name, value):
        def ask():
            calls.append(name)
            return value

        return ask

    app = WebhookApp(
        AdmissionSettings(dra_enabled=served("dra", False), inference_pool_served=served("pool", True))
    )
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "kind": {"group": "nvidia.com", "version": "v1beta1", "kind": "DynamoGraphDeployment"},
            "resource": {"group": "nvidia.com", "version": "v1beta1", "resource": "dynamographdeployments"},
            "operation": "CREATE",
            "namespace": "team",
            "object": dgd(worker({})),
        },
    }
    path = admission_path("validate", "v1beta1", "DynamoGraphDeployment")
    status, body = app.handle(path, json.dumps(review).encode())
    response = body["response"]
    assert status == 200
    assert not response["allowed"]
    assert "DRA is off" in response["status"]["message"]
    assert calls == ["dra", "pool"]


def test_an_unchanged_component_is_not_judged_again_on_update():
    """A component admitted before a rule existed (here: DRA turned off since) stays updatable as long as
    it is unchanged; a changed one is judged."""
    old = dgd(worker({}), {"name": "Frontend", "type": "frontend"})
    new = copy.deepcopy(old)
    new["spec"]["components"][1]["replicas"] = 2
    off = Context(operation="UPDATE", dra_enabled=False)
    assert errors(new, off, old=old) == []
    new["spec"]["components"][0]["replicas"] = 2
    assert "DRA is off" in "\n".join(errors(new, off, old=old))
