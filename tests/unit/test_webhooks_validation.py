"""Every admission rule with its exact message, v1alpha1 field paths, and the defaulting patches."""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.webhooks import defaulting
from dynamo_operator.webhooks.validation import Context, denial_message, validate
from support import graphs

NS = "team"
OPERATOR = "system:serviceaccount:dynamo-system:dynamo-operator"


def dgd(components=None, version="v1beta1", **spec) -> dict:
    """A vLLM graph in ``NS``: a Frontend and a Worker (no pod template) unless ``components`` are given."""
    if components is None:
        components = [{"name": "Frontend", "type": "frontend"}, {"name": "Worker", "type": "worker"}]
    return graphs.dgd(*components, namespace=NS, version=version, **{"backendFramework": "vllm", **spec})


def dgd_alpha(services: dict) -> dict:
    return graphs.dgd_v1alpha1(services, namespace=NS, backendFramework="vllm")


def mn_main(backend="vllm", args=("--tensor-parallel-size", "16"), gpus="8", **extra) -> dict:
    """A main container whose launch the operator can spread over nodes (TP 16 > 8 GPUs for vLLM)."""
    main = {
        "name": "main",
        "image": "img",
        "command": ["python3", "-m", f"dynamo.{backend}"],
        "args": list(args),
    }
    if gpus:
        main["resources"] = {"limits": {"nvidia.com/gpu": gpus}}
    return {**main, **extra}


def mn_worker(name="w", nodes=2, **main) -> dict:
    return {
        "name": name,
        "type": "worker",
        "multinode": {"nodeCount": nodes},
        "podTemplate": {"spec": {"containers": [mn_main(**main)]}},
    }


def errors(kind, version, obj, old=None, ctx=None) -> list[str]:
    return [str(e) for e in validate(kind, version, obj, old, ctx).errors]


def dgd_errors(obj, old=None, ctx=None, version="v1beta1") -> list[str]:
    return errors("DynamoGraphDeployment", version, obj, old, ctx)


# ------------------------------------------------------------------------------------------------------------
# create rules (DGD)

RULES = [
    (
        [],
        "spec.components: Required value: a DynamoGraphDeployment needs at least one component; add one "
        "(for example a frontend and a worker)",
    ),
    (
        [{"name": "Frontend"}, {"name": "frontend"}],
        'spec.components[1].name: Duplicate value: "frontend": component names must be unique ignoring case '
        '(clashes with component "Frontend"); rename one of them',
    ),
    (
        [
            {"name": "a", "type": "epp", "eppConfig": {"config": {}}},
            {"name": "b", "type": "epp", "eppConfig": {"config": {}}},
        ],
        'spec.components[1].type: Too many: "epp": at most one component may have type epp (component "a" '
        "already has it); remove the extra epp component",
    ),
    (
        [{"name": "e", "type": "epp"}],
        "spec.components[0].eppConfig: Required value: an epp component needs eppConfig; set exactly one of "
        "eppConfig.configMapRef (a ConfigMap holding the EndpointPickerConfig) or eppConfig.config (the "
        "EndpointPickerConfig inline)",
    ),
    (
        [{"name": "e", "type": "epp", "eppConfig": {}}],
        "spec.components[0].eppConfig: Required value: set exactly one of eppConfig.configMapRef "
        "(a ConfigMap holding the EndpointPickerConfig) or eppConfig.config (the EndpointPickerConfig "
        "inline)",
    ),
    (
        [{"name": "e", "type": "epp", "eppConfig": {"configMapRef": {"name": "c"}, "config": {}}}],
        "spec.components[0].eppConfig: Invalid value: configMapRef and config are mutually exclusive; keep "
        "exactly one of them",
    ),
    (
        [{"name": "e", "type": "epp", "eppConfig": {"configMapRef": {"key": "k"}}}],
        "spec.components[0].eppConfig.configMapRef.name: Required value: name the ConfigMap that holds the "
        "EndpointPickerConfig",
    ),
    (
        [{"name": "e", "type": "epp", "replicas": 2, "eppConfig": {"config": {}}}],
        "spec.components[0].replicas: Invalid value: 2: an epp component runs exactly one replica; set "
        "replicas to 1",
    ),
    (
        [{"name": "e", "type": "epp", "multinode": {"nodeCount": 2}, "eppConfig": {"config": {}}}],
        "spec.components[0].multinode: Forbidden: an epp component cannot be multinode; remove multinode",
    ),
    (
        [{"name": "w", "sharedMemorySize": "-1Gi"}],
        'spec.components[0].sharedMemorySize: Invalid value: "-1Gi": must be 0 or more; give a size such as '
        '"8Gi", or "0" to disable /dev/shm',
    ),
    (
        [{"name": "w", "sharedMemorySize": "lots"}],
        'spec.components[0].sharedMemorySize: Invalid value: "lots": is not a quantity; give a size such as '
        '"8Gi", or "0" to disable /dev/shm',
    ),
    (
        [{"name": "w", "minAvailable": 1}],
        "spec.components[0].minAvailable: Forbidden: minAvailable is only supported when the deployment runs "
        "on Grove (Grove is not enabled for the operator, or the annotation nvidia.com/enable-grove is "
        '"false"); remove it',
    ),
    (
        [{"name": "w", "frontendSidecar": "fe", "podTemplate": {"spec": {"containers": [{"name": "main"}]}}}],
        'spec.components[0].frontendSidecar: Not found: "fe": must name a container in '
        'podTemplate.spec.containers (containers: "main"); add that container with its image, or fix the '
        "name",
    ),
    (
        [{"name": "w", "podTemplate": {"spec": {"containers": [{"name": "main"}, {"name": "log"}]}}}],
        'spec.components[0].podTemplate.spec.containers[1].image: Required value: container "log" is not '
        '"main", so the operator does not fill it in; set its image',
    ),
    (
        [{"name": "w", "podTemplate": {"spec": {"initContainers": [{"name": "init"}]}}}],
        "spec.components[0].podTemplate.spec.initContainers[0].image: Required value: init container "
        '"init" is not filled in by the operator; set its image',
    ),
    (
        [{"name": "w", "replicas": -1}],
        "spec.components[0].replicas: Invalid value: -1: must be 0 or more; use 0 to scale the component to "
        "zero",
    ),
    (
        [{"name": "w", "replicas": "2"}],
        'spec.components[0].replicas: Invalid value: "2": must be a whole number; set replicas to 0 or more',
    ),
]


@pytest.mark.parametrize("components,message", RULES)
def test_dgd_create_rule_message(components, message):
    assert dgd_errors(dgd(components)) == [message]


def test_valid_dgd_passes():
    ok = [
        {"name": "Frontend", "type": "frontend", "replicas": 0},
        {
            "name": "Worker",
            "type": "worker",
            "sharedMemorySize": "0",
            "frontendSidecar": "fe",
            "podTemplate": {"spec": {"containers": [{"name": "main"}, {"name": "fe", "image": "f:1"}]}},
        },
        {"name": "Epp", "type": "epp", "eppConfig": {"configMapRef": {"name": "c", "key": "k"}}},
    ]
    assert dgd_errors(dgd(ok)) == []


def test_all_errors_are_aggregated_in_one_message():
    obj = dgd([{"name": "w", "replicas": -1, "sharedMemorySize": "-1"}, {"name": "W"}])
    errs = validate("DynamoGraphDeployment", "v1beta1", obj).errors
    assert [e.field for e in errs] == [
        "spec.components[0].replicas",
        "spec.components[0].sharedMemorySize",
        "spec.components[1].name",
    ]
    msg = denial_message("DynamoGraphDeployment", "g", errs)
    assert msg.startswith('DynamoGraphDeployment.nvidia.com "g" is invalid: [spec.components[0].replicas')
    assert all(str(e) in msg for e in errs)


def test_min_available_on_grove():
    grove = Context(grove_enabled=True)
    assert dgd_errors(dgd([{"name": "w", "minAvailable": 2, "replicas": 4}]), ctx=grove) == []
    assert dgd_errors(dgd([{"name": "w", "minAvailable": 2, "replicas": 0}]), ctx=grove) == []
    assert dgd_errors(dgd([{"name": "w", "minAvailable": 2, "replicas": 1}]), ctx=grove) == [
        "spec.components[0].replicas: Invalid value: 1: must be 0 (scale to zero) or at least minAvailable "
        "(2); raise replicas or lower minAvailable"
    ]
    opted_out = dgd([{"name": "w", "minAvailable": 1}])
    opted_out["metadata"]["annotations"] = {"nvidia.com/enable-grove": "False"}
    assert "Forbidden: minAvailable is only supported" in dgd_errors(opted_out, ctx=grove)[0]
    old = dgd([{"name": "w", "minAvailable": 1}])
    new = dgd([{"name": "w", "minAvailable": 2}])
    assert dgd_errors(new, old, ctx=grove) == [
        "spec.components[0].minAvailable: Invalid value: 2: is immutable after creation (was 1); delete and "
        "recreate the DynamoGraphDeployment to change it"
    ]


# ------------------------------------------------------------------------------------------------------------
# update rules (DGD)


def test_component_set_is_immutable():
    old = dgd([{"name": "a"}, {"name": "b"}])
    new = dgd([{"name": "a"}, {"name": "c"}])
    assert dgd_errors(new, old) == [
        "spec.components: Forbidden: the set of components cannot change after creation (added: c; removed: "
        "b); delete and recreate the DynamoGraphDeployment to add or remove components"
    ]


def test_backend_framework_is_immutable():
    old, new = dgd(), dgd(backendFramework="sglang")
    res = validate("DynamoGraphDeployment", "v1beta1", new, old)
    assert [str(e) for e in res.errors] == [
        'spec.backendFramework: Invalid value: "sglang": is immutable (was "vllm"); delete and recreate the '
        "DynamoGraphDeployment to change the backend"
    ]
    assert res.warnings == ["Changing spec.backendFramework may cause unexpected behavior"]


def test_single_node_multinode_switch_is_forbidden():
    old = dgd([{"name": "w"}])
    new = dgd([mn_worker("w")])
    msg = (
        "spec.components[0].multinode: Forbidden: a component cannot switch between single-node and "
        "multinode (was {}, now {}); delete and recreate the DynamoGraphDeployment to change it"
    )
    assert dgd_errors(new, old) == [msg.format("single-node", "multinode")]
    assert dgd_errors(old, new) == [msg.format("multinode", "single-node")]


@pytest.mark.parametrize(
    "user,allowed",
    [
        (None, False),  # no userInfo: fail closed
        ("admin", False),
        (f"system:serviceaccount:{NS}:someone", False),
        ("system:serviceaccount:other:planner-serviceaccount", False),
        (f"system:serviceaccount:{NS}:planner-serviceaccount", True),
        (OPERATOR, True),
    ],
)
def test_scaling_adapter_replicas_only_by_operator_or_planner(user, allowed):
    old = dgd([{"name": "Worker", "replicas": 2, "scalingAdapter": {}}])
    new = dgd([{"name": "Worker", "replicas": 3, "scalingAdapter": {}}])
    ctx = Context(operation="UPDATE", username=user, operator_usernames=frozenset({OPERATOR}))
    got = dgd_errors(new, old, ctx)
    if allowed:
        assert got == []
    else:
        assert got == [
            "spec.components[0].replicas: Forbidden: replicas of a component with scalingAdapter are owned "
            "by its DynamoGraphDeploymentScalingAdapter; scale that instead (kubectl -n team scale dgdsa "
            "g-worker --replicas=3), or remove scalingAdapter first"
        ]


def test_scaling_adapter_rule_ignores_unchanged_or_unmanaged_replicas():
    ctx = Context(username="admin")
    same = dgd([{"name": "w", "replicas": 2, "scalingAdapter": {}}])
    assert dgd_errors(same, copy.deepcopy(same), ctx) == []
    plain_old, plain_new = dgd([{"name": "w", "replicas": 2}]), dgd([{"name": "w", "replicas": 5}])
    assert dgd_errors(plain_new, plain_old, ctx) == []
    opt_out = dgd([{"name": "w", "replicas": 5}])  # removing scalingAdapter and scaling at once is allowed
    assert dgd_errors(opt_out, same, ctx) == []


def test_terminating_object_is_never_blocked():
    bad = dgd([])
    bad["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert dgd_errors(bad, dgd()) == []
    assert defaulting.default_patch("DynamoGraphDeployment", "v1beta1", bad) == []


# ------------------------------------------------------------------------------------------------------------
# v1alpha1: validated as v1beta1, reported in v1alpha1 paths


def test_alpha_paths():
    obj = dgd_alpha(
        {
            "Frontend": {"componentType": "frontend", "replicas": -1},
            "frontend": {
                "sharedMemory": {"size": "-2Gi"},
                "extraPodSpec": {"containers": [{"name": "side"}]},
                "frontendSidecar": {"args": ["x"]},
            },
        }
    )
    assert [e.split(": ")[0] for e in dgd_errors(obj, version="v1alpha1")] == [
        "spec.services[Frontend].replicas",
        "spec.services[frontend]",
        "spec.services[frontend].sharedMemory.size",
        "spec.services[frontend].extraPodSpec.containers[0].image",
        "spec.services[frontend].frontendSidecar.image",
    ]
    assert dgd_errors(dgd_alpha({}), version="v1alpha1")[0].startswith("spec.services: Required value")


def test_alpha_update_rules_and_scaling_adapter():
    old = dgd_alpha({"W": {"replicas": 1, "scalingAdapter": {"enabled": True}}})
    new = dgd_alpha({"W": {"replicas": 4, "scalingAdapter": {"enabled": True}}})
    got = dgd_errors(new, old, Context(username="admin"), version="v1alpha1")
    assert len(got) == 1 and got[0].startswith(
        "spec.services[W].replicas: Forbidden: replicas of a component"
    )


def test_dcd_rules_and_alpha_paths():
    dcd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "d", "namespace": NS},
        "spec": {"name": "d", "backendFramework": "vllm", "minAvailable": 1, "replicas": -3},
    }
    assert errors("DynamoComponentDeployment", "v1beta1", dcd) == [
        "spec.replicas: Invalid value: -3: must be 0 or more; use 0 to scale the component to zero",
        "spec.minAvailable: Forbidden: minAvailable applies only to components of a Grove-backed "
        "DynamoGraphDeployment; remove it from the DynamoComponentDeployment",
    ]
    old = copy.deepcopy(dcd)
    old["spec"].update(minAvailable=None, replicas=1)
    new = copy.deepcopy(old)
    new["spec"]["backendFramework"] = "trtllm"
    new["spec"].update(mn_worker("d", nodes=3, backend="trtllm", args=()))
    assert errors("DynamoComponentDeployment", "v1beta1", new, old) == [
        'spec.backendFramework: Invalid value: "trtllm": is immutable (was "vllm"); delete and recreate the '
        "DynamoComponentDeployment to change the backend",
        "spec.multinode: Forbidden: a component cannot switch between single-node and multinode (was "
        "single-node, now multinode); delete and recreate the DynamoComponentDeployment to change it",
    ]
    alpha = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "d", "namespace": NS},
        "spec": {"serviceName": "d", "sharedMemory": {"size": "-1"}},
    }
    assert errors("DynamoComponentDeployment", "v1alpha1", alpha)[0].startswith(
        'spec.sharedMemory.size: Invalid value: "-1"'
    )


# ------------------------------------------------------------------------------------------------------------
# DGDR, DGDSA, DynamoModel, DynamoCheckpoint


def dgdr(version="v1beta1", phase=None, **spec):
    obj = {
        "apiVersion": f"nvidia.com/{version}",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r", "namespace": NS},
        "spec": {"model": "Qwen/Qwen3-0.6B", **spec},
    }
    if phase:
        obj["status"] = {"state" if version == "v1alpha1" else "phase": phase}
    return obj


@pytest.mark.parametrize("phase", ["Profiling", "Deploying", "Ready", "Deployed"])
def test_dgdr_spec_frozen_once_profiling_started(phase):
    old, new = dgdr(phase=phase), dgdr(phase=phase, backend="vllm")
    assert errors("DynamoGraphDeploymentRequest", "v1beta1", new, old) == [
        f"spec: Forbidden: the spec cannot change once profiling has started (now {phase}); delete and "
        "recreate the DynamoGraphDeploymentRequest to change it"
    ]


def test_dgdr_spec_free_before_profiling_and_metadata_always():
    assert (
        errors("DynamoGraphDeploymentRequest", "v1beta1", dgdr(backend="vllm"), dgdr(phase="Pending")) == []
    )
    old = dgdr(phase="Profiling")
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"a": "b"}
    assert errors("DynamoGraphDeploymentRequest", "v1beta1", new, old) == []
    alpha_old = {**dgdr("v1alpha1", phase="Profiling"), "spec": {"model": "m", "backend": "vllm"}}
    alpha_new = copy.deepcopy(alpha_old)
    alpha_new["spec"]["backend"] = "sglang"
    assert errors("DynamoGraphDeploymentRequest", "v1alpha1", alpha_new, alpha_old)[0].startswith(
        "spec: Forbidden"
    )
    assert errors("DynamoGraphDeploymentRequest", "v1beta1", dgdr(model=" ")) == [
        'spec.model: Required value: name the model to deploy, e.g. "Qwen/Qwen3-0.6B"'
    ]


def test_dgdsa_rules():
    obj = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": "a", "namespace": NS},
        "spec": {"replicas": -1, "dgdRef": {"name": "g"}},
    }
    assert errors("DynamoGraphDeploymentScalingAdapter", "v1alpha1", obj) == [
        "spec.replicas: Invalid value: -1: must be a whole number, 0 or more",
        "spec.dgdRef.serviceName: Required value: give the name of the component (in the "
        "DynamoGraphDeployment's spec.components) to scale",
    ]


def model(**spec):
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoModel",
        "metadata": {"name": "m", "namespace": NS},
        "spec": spec,
    }


def test_dynamo_model_rules():
    assert errors("DynamoModel", "v1alpha1", model()) == [
        'spec.modelName: Required value: give the full model identifier, e.g. "meta-llama/Llama-3.3-70B-'
        'Instruct-lora"',
        "spec.baseModelName: Required value: give the base model name the serving components use in "
        "modelRef.name",
    ]
    base = {"modelName": "x", "baseModelName": "b"}
    assert errors("DynamoModel", "v1alpha1", model(**base, modelType="lora")) == [
        "spec.source: Required value: a lora model needs spec.source.uri; use s3://bucket/path, "
        "hf://org/model@revision or file:///path"
    ]
    assert errors("DynamoModel", "v1alpha1", model(**base, modelType="lora", source={"uri": "ftp://a"})) == [
        'spec.source.uri: Invalid value: "ftp://a": unsupported URI scheme; use s3://bucket/path, '
        "hf://org/model@revision or file:///path"
    ]
    for uri in ("s3://b/p", "hf://org/m@abc", "file:///models/m"):
        assert errors("DynamoModel", "v1alpha1", model(**base, modelType="lora", source={"uri": uri})) == []
    assert errors("DynamoModel", "v1alpha1", model(**base, modelType="full")) == [
        'spec.modelType: Unsupported value: "full": use one of base, lora, adapter'
    ]
    res = validate("DynamoModel", "v1alpha1", model(**base, source={"uri": "s3://x"}))
    assert res.allowed and res.warnings == ["spec.source is ignored unless spec.modelType is lora"]
    old = model(**base)
    assert errors("DynamoModel", "v1alpha1", model(modelName="x", baseModelName="c"), old) == [
        'spec.baseModelName: Invalid value: "c": is immutable (was "b"): endpoint discovery is keyed on it; '
        "create a new DynamoModel instead"
    ]
    assert errors(
        "DynamoModel", "v1alpha1", model(**base, modelType="lora", source={"uri": "s3://x"}), old
    ) == [
        'spec.modelType: Invalid value: "lora": is immutable (was "base"); create a new DynamoModel instead'
    ]


def checkpoint(**spec):
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "c", "namespace": NS},
        "spec": spec,
    }


def test_dynamo_checkpoint_rules():
    assert errors("DynamoCheckpoint", "v1alpha1", checkpoint()) == [
        "spec.identity: Required value: a standalone checkpoint needs spec.identity with model and "
        "backendFramework",
        "spec.job: Required value: give spec.job.podTemplateSpec with the container to checkpoint",
    ]
    bad = checkpoint(
        identity={"model": "", "backendFramework": "tgi", "tensorParallelSize": 0},
        job={
            "podTemplateSpec": {"spec": {"containers": [{"name": "main"}]}},
            "targetContainerName": "w",
            "activeDeadlineSeconds": 0,
            "backoffLimit": -1,
        },
        gpuMemoryService={"extraClientPods": [{"name": "p"}]},
    )
    assert errors("DynamoCheckpoint", "v1alpha1", bad) == [
        'spec.identity.model: Required value: give the model, e.g. "meta-llama/Llama-3-70B"',
        'spec.identity.backendFramework: Unsupported value: "tgi": use one of vllm, sglang, trtllm',
        "spec.identity.tensorParallelSize: Invalid value: 0: must be a whole number of at least 1",
        'spec.job.targetContainerName: Not found: "w": must name a container in '
        "spec.job.podTemplateSpec.spec.containers (main); fix the name or add the container",
        "spec.job.activeDeadlineSeconds: Invalid value: 0: must be a whole number of at least 1",
        "spec.job.backoffLimit: Invalid value: -1: must be a whole number of at least 0",
        "spec.gpuMemoryService.extraClientPods: Forbidden: is reserved for future use and not supported yet; "
        "remove it",
    ]
    good = checkpoint(
        identity={"model": "m", "backendFramework": "vllm"},
        job={"podTemplateSpec": {"spec": {"containers": [{"name": "main"}]}}},
    )
    assert errors("DynamoCheckpoint", "v1alpha1", good) == []
    assert errors("DynamoCheckpoint", "v1alpha1", good, ctx=Context(checkpoint_enabled=False)) == [
        "spec: Forbidden: checkpointing is disabled in the operator configuration; enable checkpoint.enabled "
        "in the OperatorConfiguration (Helm: dynamo-operator checkpoint values) first"
    ]
    changed = copy.deepcopy(good)
    changed["spec"]["identity"]["model"] = "n"
    assert errors("DynamoCheckpoint", "v1alpha1", changed, good) == [
        "spec.identity: Forbidden: is immutable after creation (it identifies the checkpoint); create a new "
        "DynamoCheckpoint instead"
    ]


@pytest.mark.parametrize(
    "obj",
    [
        None,
        [],
        "x",
        3,
        {"spec": []},
        {"spec": {"components": {}}},
        {"spec": {"services": []}},
        {"metadata": 1},
    ],
)
def test_malformed_objects_yield_errors_not_exceptions(obj):
    for kind in ("DynamoGraphDeployment", "DynamoComponentDeployment", "DynamoModel", "DynamoCheckpoint"):
        for version in ("v1alpha1", "v1beta1"):
            body = dict(obj, apiVersion=f"nvidia.com/{version}", kind=kind) if isinstance(obj, dict) else obj
            res = validate(kind, version, body, body)
            assert isinstance(res.errors, list)
            if not isinstance(obj, dict) or obj.get("spec") == []:
                assert not res.allowed


# ------------------------------------------------------------------------------------------------------------
# defaulting


def test_defaulting_dgd_beta_and_alpha():
    obj = dgd([{"name": "a"}, {"name": "b", "replicas": 3}])
    patch = defaulting.default_patch("DynamoGraphDeployment", "v1beta1", obj, Context(), "1.2.0")
    assert patch == [
        {"op": "add", "path": "/spec/components/0/replicas", "value": 1},
        {"op": "add", "path": "/metadata/annotations", "value": {defaulting.ANN_ORIGIN_VERSION: "1.2.0"}},
    ]
    out = defaulting.apply_patch(obj, patch)
    assert out["spec"]["components"][0]["replicas"] == 1
    alpha = dgd_alpha({"a/b": {}})
    alpha["metadata"]["annotations"] = {"x": "y"}
    assert defaulting.default_patch("DynamoGraphDeployment", "v1alpha1", alpha, Context(), "1.2.0") == [
        {"op": "add", "path": "/spec/services/a~1b/replicas", "value": 1},
        {
            "op": "add",
            "path": "/metadata/annotations/nvidia.com~1dynamo-operator-origin-version",
            "value": "1.2.0",
        },
    ]


def test_defaulting_origin_version_only_on_create_and_kept():
    obj = dgd([{"name": "a", "replicas": 1}])
    assert defaulting.default_patch("DynamoGraphDeployment", "v1beta1", obj, Context("UPDATE"), "1.0.0") == []
    obj["metadata"]["annotations"] = {defaulting.ANN_ORIGIN_VERSION: "0.9.0"}
    assert defaulting.default_patch("DynamoGraphDeployment", "v1beta1", obj, Context("CREATE"), "1.0.0") == []


def test_defaulting_grove_min_available():
    obj = dgd([{"name": "a", "replicas": 1}])
    patch = defaulting.default_patch(
        "DynamoGraphDeployment", "v1beta1", obj, Context("UPDATE", grove_enabled=True)
    )
    assert patch == [{"op": "add", "path": "/spec/components/0/minAvailable", "value": 1}]


def test_defaulting_standalone_dcd_name():
    beta = {"metadata": {"name": "dcd-1"}, "spec": {"backendFramework": "vllm"}}
    assert defaulting.default_patch("DynamoComponentDeployment", "v1beta1", beta, Context("UPDATE")) == [
        {"op": "add", "path": "/spec/replicas", "value": 1},
        {"op": "add", "path": "/spec/name", "value": "dcd-1"},
    ]
    alpha = {"metadata": {"name": "dcd-1"}, "spec": {"replicas": 2, "serviceName": ""}}
    assert defaulting.default_patch("DynamoComponentDeployment", "v1alpha1", alpha, Context("UPDATE")) == [
        {"op": "add", "path": "/spec/serviceName", "value": "dcd-1"},
    ]


@pytest.mark.parametrize("obj", [None, 1, {"metadata": "x"}, {"spec": []}, {"spec": {"components": 3}}])
def test_defaulting_tolerates_malformed_input(obj):
    for kind in ("DynamoGraphDeployment", "DynamoComponentDeployment"):
        defaulting.default_patch(kind, "v1beta1", obj, Context(), "1.0.0")


# ------------------------------------------------------------------------------------------------------------
# multinode launch shapes (rules from render.multinode, reported on the field in the version written)


def test_multinode_launch_that_can_work_is_admitted():
    assert dgd_errors(dgd([{"name": "Frontend", "type": "frontend"}, mn_worker("W")])) == []
    sg = dgd([mn_worker("W", backend="sglang", args=("--nnodes", "2"), gpus=None)], backendFramework="sglang")
    assert dgd_errors(sg) == []


def test_multinode_conflicting_flag_names_the_args_of_the_component():
    # TP 4 fits one node of 8 GPUs: admitted, as upstream deploys it (each node runs its own engine)
    fits = dgd(
        [{"name": "Frontend", "type": "frontend"}, mn_worker("W", args=("--tensor-parallel-size", "4"))]
    )
    assert dgd_errors(fits) == []
    sg = dgd([mn_worker("W", backend="sglang", args=("--nnodes=3", "--dist-init-addr", "x:1"))])
    sg["spec"]["backendFramework"] = "sglang"
    assert dgd_errors(sg) == [
        'spec.components[0].podTemplate.spec.containers[0].args: Forbidden: "--dist-init-addr x:1": '
        "--dist-init-addr is set by the operator on each node of a multinode component (leader address and "
        "node rank differ per pod and pathway); remove --dist-init-addr from the command",
        'spec.components[0].podTemplate.spec.containers[0].args: Invalid value: "--nnodes 3": conflicts '
        "with the multinode launch, which needs --nnodes 2 (multinode.nodeCount is 2); remove --nnodes or "
        "set it to 2",
    ]


def test_multinode_problems_use_v1alpha1_paths():
    svc = {
        "componentType": "worker",
        "multinode": {"nodeCount": 2},
        "resources": {"limits": {"gpu": "8"}},
        "extraPodSpec": {
            "mainContainer": {
                "image": "i",
                "command": ["python3", "-m", "dynamo.vllm"],
                "args": ["--tensor-parallel-size", "16", "--distributed-executor-backend", "mp"],
            }
        },
    }
    assert dgd_errors(dgd_alpha({"W": svc}), version="v1alpha1") == [
        "spec.services[W].extraPodSpec.mainContainer.args: Invalid value: "
        '"--distributed-executor-backend mp": conflicts with the multinode launch, which needs '
        "--distributed-executor-backend ray (the executor "
        "comes from the annotation nvidia.com/vllm-distributed-executor-backend (ray unless it says mp)); "
        "remove --distributed-executor-backend or set it to ray"
    ]
    no_gpus = dgd_alpha({"W": {**svc, "resources": {}}})
    assert dgd_errors(no_gpus, version="v1alpha1")[0].startswith(
        "spec.services[W].resources: Required value: multinode vLLM needs the GPU count of one node"
    )
    mp = dgd_alpha({"W": svc})
    mp["metadata"]["annotations"] = {"nvidia.com/vllm-distributed-executor-backend": "mp"}
    assert dgd_errors(mp, version="v1alpha1") == []


@pytest.mark.parametrize("kind", ["DynamoGraphDeployment", "DynamoComponentDeployment"])
def test_vllm_executor_annotation_must_be_mp_or_ray(kind):
    obj = dgd() if kind == "DynamoGraphDeployment" else {"kind": kind, "metadata": {}, "spec": {"name": "d"}}
    obj["metadata"]["annotations"] = {"nvidia.com/vllm-distributed-executor-backend": "Ray"}
    assert errors(kind, "v1beta1", obj) == [
        'metadata.annotations[nvidia.com/vllm-distributed-executor-backend]: Unsupported value: "Ray": '
        'must be "mp" or "ray" (the vLLM distributed executor of multinode tensor/pipeline parallel '
        "components); fix the value or remove the annotation"
    ]


def test_multinode_dcd_reports_spec_paths():
    d = {
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "d", "namespace": NS},
        "spec": {
            "name": "d",
            "backendFramework": "trtllm",
            **mn_worker("d", backend="trtllm", args=(), gpus=None),
        },
    }
    assert errors("DynamoComponentDeployment", "v1beta1", d) == [
        "spec.podTemplate.spec.containers[0].resources: Required value: multinode TensorRT-LLM needs the "
        "GPU count of one node to start one MPI rank per GPU (mpirun -n); set "
        "resources.limits[nvidia.com/gpu] on the main container"
    ]


def test_unchanged_multinode_launch_is_not_rejudged_on_update():
    """An object admitted before a launch rule existed can still be updated (finalizers, replicas...)."""
    old = dgd([mn_worker("W", args=("--tensor-parallel-size", "32"))])  # more GPUs than 2 nodes: refused
    assert dgd_errors(old) != []
    same = copy.deepcopy(old)
    same["metadata"]["labels"] = {"team": "a"}
    assert dgd_errors(same, old) == []
    changed = copy.deepcopy(old)
    changed["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["args"] = [
        "--tensor-parallel-size",
        "24",
    ]
    assert [e.split(":")[0] for e in dgd_errors(changed, old)] == [
        "spec.components[0].podTemplate.spec.containers[0].args"
    ]
    dcd = {
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "d"},
        "spec": {"backendFramework": "vllm", **old["spec"]["components"][0]},
    }
    assert errors("DynamoComponentDeployment", "v1beta1", dcd) != []
    assert errors("DynamoComponentDeployment", "v1beta1", copy.deepcopy(dcd), dcd) == []


# ------------------------------------------------------------------------------------------------------------
# a component's checkpoint (experimental.checkpoint; v1alpha1 services.<name>.checkpoint)

CKPT_ON = Context(checkpoint_enabled=True)
CKPT_OFF = Context(checkpoint_enabled=False)


def ck_worker(checkpoint: dict, **extra) -> dict:
    main = {"name": "main", "image": "img", "command": ["python3", "-m", "dynamo.vllm"]}
    main.update(extra.pop("main", {}))
    pod = {"containers": [main, *extra.pop("sidecars", [])], **extra.pop("pod", {})}
    return {
        "name": "Worker",
        "type": "worker",
        "experimental": {"checkpoint": checkpoint},
        "podTemplate": {"spec": pod},
        **extra,
    }


def test_checkpoint_shapes_the_operator_acts_on_are_admitted():
    for cp in (
        {"enabled": True},
        {"enabled": True, "startupPolicy": "WaitForCheckpoint", "deletionPolicy": "Retain"},
        {"enabled": True, "checkpointRef": "warm", "startupPolicy": "WaitForCheckpoint"},
        {"enabled": True, "mode": "Manual", "checkpointRef": "warm"},
        {"enabled": True, "targetContainerName": "main", "job": {"podTemplate": {"spec": {}}}},
        {"enabled": False, "checkpointRef": "x", "job": {"podTemplate": {}}},  # off: nothing to judge
    ):
        assert dgd_errors(dgd([ck_worker(cp)]), ctx=CKPT_ON) == [], cp
    # a sidecar may mount the operator's checkpoint volume by its name (a GMS saver reads checkpoints)
    side = {
        "name": "saver",
        "image": "s",
        "volumeMounts": [{"name": "checkpoint-storage", "mountPath": "/c"}],
    }
    assert dgd_errors(dgd([ck_worker({"enabled": True}, sidecars=[side])]), ctx=CKPT_ON) == []


def test_checkpoint_volume_name_clash_is_refused_naming_the_volume_and_the_fix():
    vol = {"name": "checkpoint-storage", "emptyDir": {}}
    mount = {"name": "checkpoint-storage", "mountPath": "/mine"}
    bad = dgd([ck_worker({"enabled": True}, pod={"volumes": [vol]}, main={"volumeMounts": [mount]})])
    assert dgd_errors(bad, ctx=CKPT_ON) == [
        'spec.components[0].podTemplate.spec.volumes[0].name: Invalid value: "checkpoint-storage": '
        "'checkpoint-storage' is the name of the operator's checkpoint volume (the checkpoint PVC it adds "
        "because checkpoint.enabled is true), which would replace this volume; rename this volume (and the "
        "mounts that use it)",
        "spec.components[0].podTemplate.spec.containers[0].volumeMounts[0].name: Invalid value: "
        "\"checkpoint-storage\": 'checkpoint-storage' is the operator's checkpoint volume, which it "
        "mounts in "
        "main at checkpoint.storage.pvc.basePath itself, replacing this mount; remove this mount, or rename "
        "your volume and mount that",
    ]
    # the same name without checkpointing clashes with nothing
    off = dgd([ck_worker({"enabled": False}, pod={"volumes": [vol]}, main={"volumeMounts": [mount]})])
    assert dgd_errors(off, ctx=CKPT_ON) == []
    alpha = dgd_alpha(
        {
            "Worker": {
                "componentType": "worker",
                "checkpoint": {"enabled": True},
                "extraPodSpec": {
                    "volumes": [vol],
                    "mainContainer": {"image": "img", "command": ["python3", "-m", "dynamo.vllm"]},
                },
            }
        }
    )
    (err,) = dgd_errors(alpha, ctx=CKPT_ON, version="v1alpha1")
    assert err.startswith(
        'spec.services[Worker].extraPodSpec.volumes[0].name: Invalid value: "checkpoint-storage"'
    )


def test_checkpoint_refused_while_the_operator_configuration_disables_it():
    new = dgd([ck_worker({"enabled": True})])
    assert dgd_errors(new, ctx=CKPT_OFF) == [
        "spec.components[0].experimental.checkpoint.enabled: Forbidden: checkpointing is disabled in the "
        "operator configuration; set checkpoint.enabled: true in the OperatorConfiguration (Helm: "
        "dynamo-operator.checkpoint.enabled=true), or remove the checkpoint"
    ]
    updated = copy.deepcopy(new)
    updated["metadata"]["labels"] = {"a": "b"}
    assert dgd_errors(updated, new, ctx=CKPT_OFF) == []  # admitted earlier: stays updatable


def test_checkpoint_job_pod_template_must_be_a_pod_template():
    for template, where in (
        ([1], ""),
        ({"spec": []}, ".spec"),
        ({"spec": {"containers": [{"image": "x"}]}}, ".spec.containers"),
        ({"metadata": {"labels": ["a"]}}, ".metadata.labels"),
    ):
        (err,) = dgd_errors(
            dgd([ck_worker({"enabled": True, "job": {"podTemplate": template}})]), ctx=CKPT_ON
        )
        assert err.startswith(
            f"spec.components[0].experimental.checkpoint.job.podTemplate{where}: Invalid"
        ), err
        assert "give a pod template (metadata, spec.containers with names)" in err


@pytest.mark.parametrize(
    ("checkpoint", "extra", "expected"),
    [
        (
            {"enabled": True, "checkpointRef": "warm", "job": {"podTemplate": {}}},
            {},
            "spec.components[0].experimental.checkpoint.job: Forbidden: checkpoint.job cannot be set when "
            "checkpointRef is specified (job customizes the checkpoint Job the graph runs itself; "
            "checkpointRef "
            "restores an existing checkpoint); remove one of them",
        ),
        (
            {"enabled": True, "mode": "Manual"},
            {},
            "spec.components[0].experimental.checkpoint.checkpointRef: Required value: mode Manual "
            "restores an "
            "existing checkpoint: name its DynamoCheckpoint in checkpointRef, or omit mode for a "
            "checkpoint the "
            "graph creates",
        ),
        (
            {"enabled": True, "targetContainerName": "engine"},
            {},
            'spec.components[0].experimental.checkpoint.targetContainerName: Not found: "engine": must '
            "name a "
            "container of podTemplate.spec.containers (containers: main); fix the name, or omit it for main",
        ),
        (
            {"enabled": True, "job": {"gmsClientContainers": ["saver"]}},
            {},
            "spec.components[0].experimental.checkpoint.job.gmsClientContainers: Forbidden: is not "
            "supported by "
            "this operator: the checkpoint Job gets no GPU Memory Service client wiring; remove it",
        ),
        (
            {"enabled": True},
            {
                "multinode": {"nodeCount": 2},
                "main": {
                    "args": ["--tensor-parallel-size", "16"],
                    "resources": {"limits": {"nvidia.com/gpu": "8"}},
                },
            },
            "spec.components[0].experimental.checkpoint: Forbidden: a checkpoint captures and restores "
            "one pod, "
            "and this component runs across several nodes (multinode); remove the checkpoint or multinode",
        ),
    ],
)
def test_checkpoint_shapes_that_cannot_act_are_refused(checkpoint, extra, expected):
    assert dgd_errors(dgd([ck_worker(checkpoint, **extra)]), ctx=CKPT_ON) == [expected]


def test_automatic_checkpoint_needs_a_backend():
    w = ck_worker({"enabled": True}, main={"command": ["/run.sh"]})
    g = dgd([w])
    del g["spec"]["backendFramework"]
    assert dgd_errors(g, ctx=CKPT_ON) == [
        "spec.components[0].experimental.checkpoint: Required value: a checkpoint the graph creates needs "
        "the "
        "backend (vllm, sglang or trtllm); set spec.backendFramework, or run python3 -m dynamo.<backend> in "
        "the main container"
    ]
    assert (
        dgd_errors(
            dgd([ck_worker({"enabled": True, "checkpointRef": "warm"}, main={"command": ["/run.sh"]})]),
            ctx=CKPT_ON,
        )
        == []
    )


def test_a_dcd_names_the_checkpoint_it_restores():
    spec = {"backendFramework": "vllm", **ck_worker({"enabled": True})}
    dcd = {"kind": "DynamoComponentDeployment", "metadata": {"name": "d", "namespace": NS}, "spec": spec}
    assert errors("DynamoComponentDeployment", "v1beta1", dcd, ctx=CKPT_ON) == [
        "spec.experimental.checkpoint.checkpointRef: Required value: a DynamoComponentDeployment does not "
        "create checkpoints; set checkpointRef to an existing DynamoCheckpoint, or enable the checkpoint "
        "on the "
        "DynamoGraphDeployment component"
    ]
    spec["experimental"]["checkpoint"]["checkpointRef"] = "checkpoint-abc"  # what a graph writes
    assert errors("DynamoComponentDeployment", "v1beta1", dcd, ctx=CKPT_ON) == []


def test_deletion_policy_with_checkpoint_ref_is_admitted_with_a_warning():
    res = validate(
        "DynamoGraphDeployment",
        "v1beta1",
        dgd([ck_worker({"enabled": True, "checkpointRef": "w", "deletionPolicy": "Retain"})]),
        None,
        CKPT_ON,
    )
    assert res.allowed and res.warnings == [
        "checkpoint.deletionPolicy applies only to a checkpoint the graph creates; with checkpointRef the "
        "referenced DynamoCheckpoint is never owned or deleted by the graph"
    ]


@pytest.mark.parametrize("version", ["v1beta1", "v1alpha1"])
def test_kv_transfer_policy_is_admitted_and_judged_for_contradictions(version):
    """The policy acts (render/kvtransfer.py, controllers/topology.py): admitted in both versions; refused
    only where no reading is right (no source or two, no domain, "preferred" without its weight) or it
    cannot act (a ClusterTopology without Grove)."""
    base = dgd() if version == "v1beta1" else dgd_alpha({"Frontend": {"componentType": "frontend"}})

    def errors_with(policy: dict, ctx=None) -> list[str]:
        obj = copy.deepcopy(base)
        obj["spec"]["experimental"] = {"kvTransferPolicy": policy}
        return dgd_errors(obj, version=version, **({"ctx": ctx} if ctx else {}))

    assert errors_with({"labelKey": "topology.kubernetes.io/zone", "domain": "zone"}) == []
    grove = Context(grove_enabled=True)
    assert errors_with({"clusterTopologyName": "gb200", "domain": "rack"}, grove) == []
    (err,) = errors_with({"clusterTopologyName": "gb200", "domain": "rack"})
    assert err.startswith(
        'spec.experimental.kvTransferPolicy.clusterTopologyName: Forbidden: "gb200": names a Grove'
    )
    (err,) = errors_with({"domain": "zone"})
    assert err.startswith("spec.experimental.kvTransferPolicy: Invalid value: name exactly one source")
    both = {"labelKey": "k", "clusterTopologyName": "t", "domain": "zone"}
    assert errors_with(both, grove)[0].startswith("spec.experimental.kvTransferPolicy: Invalid value")
    (err,) = errors_with({"labelKey": "k"})
    assert err.startswith("spec.experimental.kvTransferPolicy.domain: Required value: name the topology")
    (err,) = errors_with({"labelKey": "k", "domain": "zone", "enforcement": "preferred"})
    assert err.startswith("spec.experimental.kvTransferPolicy.preferredWeight: Required value")


def test_pod_snapshots_are_refused_when_created_and_left_alone_after():
    """No snapshot node agent here: a new PodSnapshot (or content) would never be bound or dumped."""
    snap = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "PodSnapshot",
        "metadata": {"name": "s", "namespace": "team"},
        "spec": {"source": {"podRef": {"name": "worker-0", "uid": "u"}}},
    }
    (err,) = errors("PodSnapshot", "v1alpha1", snap)
    assert err.startswith("spec.source: Forbidden: pod snapshots are not captured by this operator")
    assert "checkpoint a component with a DynamoCheckpoint" in err
    assert errors("PodSnapshot", "v1alpha1", snap, snap) == []  # an update (a finalizer coming off) passes
    content = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "PodSnapshotContent",
        "metadata": {"name": "c"},
        "spec": {
            "podSnapshotRef": {"namespace": "team", "name": "s", "uid": "u"},
            "source": {"podRef": {"name": "worker-0"}, "nodeName": "n1"},
        },
    }
    (err,) = errors("PodSnapshotContent", "v1alpha1", content)
    assert "pod snapshot contents are not produced by this operator" in err
