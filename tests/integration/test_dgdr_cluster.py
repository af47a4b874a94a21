"""The DGDR controller on the real control plane ("cluster" profile).

The profiling Job really runs its course: kube-controller-manager's Job controller creates the pod, the
scheduler binds it to a kwok node, kwok's ``pod-complete`` Stage ends pods owned by a Job with exit code 0,
and the Job controller marks the Job ``Complete``.  What kwok cannot do is run the profiler container, so
the profiler's OUTPUT is written by the test, exactly where the Job's ``output-copier`` sidecar would
publish it: the ConfigMap ``dgdr-output-<name>`` with ``final_config.yaml`` (a mocker graph) and
``profiler_status.yaml``.  From there on everything is the operator's: the DGD it creates is reconciled
by the DGD controller to ``successful`` on kwok pods, and the request follows it.

v1beta1 requests go through the real conversion webhook to v1alpha1 storage and back: a request with every
field is read back identical in v1beta1 and in its natural v1alpha1 homes; its profiling Job carries every
field (the profiler's ``--config``, the model cache PVC, ``overrides.profilingJob``); the generated graph
carries ``overrides.dgd``, the model cache mounts and the planner's ConfigMap; and v1beta1 readers follow the
progress (phase, profilingPhase, profilingJobName, dgdName, deploymentInfo). GPU discovery reads the kwok
nodes (``nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3``, 8 allocatable GPUs each, 2 nodes).
"""

from __future__ import annotations

import contextlib
import json

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.controllers import store
from dynamo_operator.controllers.lifecycle import DGDRS, JOBS
from dynamo_operator.render import dgdr as rd
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    NAMESPACES,
    PVCS,
    SERVICEACCOUNTS,
    ResourceDescriptor,
    custom,
)
from kubernetes.client.exceptions import ApiException
from support import graphs
from support.crs import condition, describe, events_of
from support.dgd import get
from support.operator import Operator
from support.poll import wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "dgdr"
WAIT = 90.0
EXAMPLE = REPO_ROOT / "examples" / "dgdr-mocker.yaml"
EXAMPLE_V1BETA1 = REPO_ROOT / "examples" / "dgdr-v1beta1.yaml"
DGDRS_V1BETA1 = custom(
    "nvidia.com", "v1beta1", "dynamographdeploymentrequests", "DynamoGraphDeploymentRequest"
)
PVS = ResourceDescriptor("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
PROFILER_IMAGE = "registry.local/ai-dynamo/dynamo-planner:1.2.1"  # the operator configuration's default
IMAGE = graphs.IMAGE
MOCKER = ["python3", "-m", "dynamo.mocker", "--model-path", "Qwen/Qwen3-0.6B"]
# what the stand-in profiler writes: a graph of mocker workers (no GPU), named by the request's output
MOCKER_GRAPH = graphs.dgd(
    graphs.component("Frontend", "frontend"),
    graphs.component("MockerWorker", replicas=2, command=MOCKER),
    name="profiled",
    namespace=None,
)


@pytest.fixture(scope="module")
def operator(kube_cluster, crds):
    """One in-process operator for the module, with the chart's profiler image configured: each test works
    in a namespace of its own."""
    with Operator(kube_cluster, {"images": {"profiler": PROFILER_IMAGE}}) as op:
        yield op


def request(ns: str, name: str = "req", **spec_extra) -> dict:
    return {
        "apiVersion": DGDRS.api_version,
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "model": "Qwen/Qwen3-0.6B",
            "backend": "vllm",
            "useMocker": True,
            "profilingConfig": {
                "profilerImage": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:0.6.0",
                "config": {"sla": {"ttft": 200, "itl": 20}},
            },
            **spec_extra,
        },
    }


def dgdr(client, ns, name="req") -> dict:
    return get(client, DGDRS, name, ns) or {}


def state(client, ns, name="req") -> str | None:
    return (dgdr(client, ns, name).get("status") or {}).get("state")


def wait_job_complete(client, ns, name="req") -> dict:
    def done():
        job = get(client, JOBS, rd.job_name(name), ns)
        conds = ((job or {}).get("status") or {}).get("conditions") or []
        return job if any(c.get("type") == "Complete" and c.get("status") == "True" for c in conds) else None

    return wait_for(done, WAIT, f"Job {rd.job_name(name)} Complete")


def publish_output(client, ns, name="req", final=MOCKER_GRAPH) -> None:
    """What the Job's output-copier sidecar does once the profiler wrote its files."""
    client.create(
        CONFIGMAPS,
        {
            "metadata": {
                "name": rd.output_configmap_name(name),
                "namespace": ns,
                "labels": {rd.LABEL_DGDR_NAME: name, rd.LABEL_DGDR_NAMESPACE: ns},
            },
            "data": {
                rd.FINAL_CONFIG: final if isinstance(final, str) else yaml.safe_dump(final),
                rd.STATUS_FILE: "phase: Done\nmessage: profiling finished\n",
            },
        },
    )


def test_profiling_job_completes_and_the_generated_graph_is_deployed(client, ns, operator):
    example = yaml.safe_load(EXAMPLE.read_text())  # applied unchanged, in the test's namespace
    n = example["metadata"]["name"]
    client.create(DGDRS, {**example, "metadata": {**example["metadata"], "namespace": ns}})
    # written in v1alpha1, read in v1beta1: the profiler blob's fields in their typed homes, and back
    spec = get(client, DGDRS_V1BETA1, n, ns)["spec"]
    assert (spec["sla"], spec["workload"]) == ({"ttft": 200, "itl": 20}, {"isl": 3000, "osl": 150})
    assert spec["features"] == {"mocker": {"enabled": True}} and spec["image"].endswith(
        "dynamo-planner:1.2.1"
    )
    assert get(client, DGDRS, n, ns)["spec"] == example["spec"]
    wait_for(lambda: state(client, ns, n) == "Profiling", WAIT, "state Profiling")
    obj = dgdr(client, ns, n)
    assert (condition(obj, "Validation")["status"], condition(obj, "Validation")["reason"]) == (
        "True",
        "SpecValid",
    )
    job = wait_job_complete(client, ns, n)
    assert job["metadata"]["ownerReferences"][0]["name"] == n
    pod = job["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["profiler", "output-copier"]
    assert pod["serviceAccountName"] == "dgdr-profiling-job"
    assert get(client, SERVICEACCOUNTS, "dgdr-profiling-job", ns) is not None
    # the Job succeeded but the output is not there yet: the request waits for it (bounded grace)
    wait_for(
        lambda: condition(dgdr(client, ns, n), "Profiling").get("reason") == "WaitingForOutput",
        WAIT,
        "Profiling=WaitingForOutput",
    )
    publish_output(client, ns, n)

    dgd = wait_for(lambda: get(client, store.DGD, n, ns), WAIT, "the generated DGD")
    assert dgd["metadata"]["ownerReferences"][0]["kind"] == "DynamoGraphDeploymentRequest"
    assert dgd["metadata"]["labels"][rd.LABEL_DGDR_NAME] == n
    assert dgd["metadata"]["labels"]["team"] == "inference"  # deploymentOverrides.labels
    assert set(dgd["spec"]["services"]) == {"Frontend", "MockerWorker"}  # stored as v1alpha1
    wait_for(lambda: state(client, ns, n) == "Ready", WAIT, "state Ready (the DGD became successful)")
    obj = dgdr(client, ns, n)
    st = obj["status"]
    assert st["deployment"] == {"name": n, "namespace": ns, "created": True, "state": "successful"}
    assert st["generatedDeployment"]["kind"] == "DynamoGraphDeployment" and st["backend"] == "vllm"
    for type_, reason in (
        ("Profiling", "Completed"),
        ("SpecGenerated", "SpecGenerated"),
        ("DeploymentReady", "DeploymentReady"),
        ("Succeeded", "DeploymentReady"),
    ):
        c = condition(obj, type_)
        assert (c["status"], c["reason"]) == ("True", reason), (type_, c)
    wait_for(
        lambda: (
            {"ProfilingJobCreated", "SpecGenerated", "DeploymentReady"}
            <= {e[1] for e in events_of(client, ns, n, DGDRS.kind)}
        ),
        WAIT,
        "the request's events",
    )

    # deleting the generated DGD ends the request; the DGD is not re-created
    client.delete(store.DGD, n, ns)
    wait_for(lambda: state(client, ns, n) == "DeploymentDeleted", WAIT, "state DeploymentDeleted")
    assert get(client, store.DGD, n, ns) is None
    c = condition(dgdr(client, ns, n), "DeploymentReady")
    assert (c["status"], c["reason"]) == ("False", "DeploymentDeleted") and "delete this request" in c[
        "message"
    ]


def test_without_auto_apply_the_generated_spec_waits_in_status(client, ns, operator):
    client.create(DGDRS, request(ns, autoApply=False))
    wait_job_complete(client, ns)
    publish_output(client, ns)
    wait_for(lambda: state(client, ns) == "Ready", WAIT, "state Ready")
    obj = dgdr(client, ns)
    gen = obj["status"]["generatedDeployment"]
    assert gen["metadata"]["name"] == "req" and set(gen["spec"]["services"]) == {"Frontend", "MockerWorker"}
    c = condition(obj, "SpecGenerated")
    assert (c["status"], c["reason"]) == ("True", "AwaitingManualApply")
    assert get(client, store.DGD, "req", ns) is None and "deployment" not in obj["status"]


def test_deployment_overrides_place_name_and_image_the_generated_graph(client, ns, operator):
    """v1alpha1 ``deploymentOverrides``: the graph goes to ``namespace`` (another namespace, so no owner
    reference: the request finds it through its labels), named ``name``, its workers on ``workersImage``."""
    target = f"{ns}-serving"
    client.create(NAMESPACES, {"metadata": {"name": target}})
    try:
        overrides = {"namespace": target, "name": "served", "workersImage": "registry.local/worker:2"}
        client.create(DGDRS, request(ns, deploymentOverrides=overrides))
        wait_job_complete(client, ns)
        publish_output(client, ns)
        dgd = wait_for(lambda: get(client, store.DGD, "served", target), WAIT, "the DGD in the target ns")
        assert not dgd["metadata"].get("ownerReferences")  # across namespaces: labels, not an owner
        assert dgd["metadata"]["labels"][rd.LABEL_DGDR_NAMESPACE] == ns
        services = dgd["spec"]["services"]  # stored as v1alpha1
        assert services["MockerWorker"]["extraPodSpec"]["mainContainer"]["image"] == "registry.local/worker:2"
        assert services["Frontend"]["extraPodSpec"]["mainContainer"]["image"] == IMAGE  # not a worker
        assert get(client, store.DGD, "req", ns) is None
        wait_for(lambda: state(client, ns) == "Ready", WAIT, "state Ready (the DGD there became successful)")
        deployment = dgdr(client, ns)["status"]["deployment"]
        assert (deployment["name"], deployment["namespace"]) == ("served", target)
    finally:
        with contextlib.suppress(ApiException):
            client.delete(NAMESPACES, target)


def test_unusable_profiler_output_fails_with_the_reason(client, ns, operator):
    client.create(DGDRS, request(ns))
    wait_job_complete(client, ns)
    publish_output(client, ns, final=yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment"}))
    wait_for(lambda: state(client, ns) == "Failed", WAIT, "state Failed")
    c = condition(dgdr(client, ns), "Profiling")
    assert (c["status"], c["reason"]) == ("False", "InvalidProfilingOutput")
    assert "has a document of kind 'Deployment'" in c["message"]
    wait_for(
        lambda: (
            ("Warning", "InvalidProfilingOutput") in {e[:2] for e in events_of(client, ns, "req", DGDRS.kind)}
        ),
        WAIT,
        "a Warning InvalidProfilingOutput event",
    )
    assert get(client, store.DGD, "req", ns) is None


def test_invalid_request_fails_validation_without_a_job(kube_cluster, client, ns, operator):
    bad = request(ns)
    bad["spec"]["profilingConfig"]["configMapRef"] = {"name": "missing-disagg", "key": "disagg.yaml"}
    client.create(DGDRS, bad)
    wait_for(lambda: state(client, ns) == "Failed", WAIT, "state Failed")
    c = condition(dgdr(client, ns), "Validation")
    assert (c["status"], c["reason"]) == ("False", "InvalidSpec")
    assert "ConfigMap 'missing-disagg' not found" in c["message"]
    assert get(client, JOBS, rd.job_name("req"), ns) is None
    # `kubectl describe` answers "why is this not ready": the reason, the message and the event
    wait_for(
        lambda: "InvalidSpec" in {e[1] for e in events_of(client, ns, "req")}, WAIT, "the InvalidSpec event"
    )
    text = describe(kube_cluster, "dgdr", "req", ns)
    assert "InvalidSpec" in text and "missing-disagg" in text and "Warning" in text, text


# -- v1beta1 ------------------------------------------------------------------------------------------------

PLANNER_GRAPH = {
    **MOCKER_GRAPH,
    "spec": {
        "components": [
            *MOCKER_GRAPH["spec"]["components"],
            {
                "name": "Planner",
                "type": "planner",
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1"}
                        ]
                    }
                },
            },
        ]
    },
}
PLANNER_CONFIG = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "planner-config-4a1f"},
    "data": {"planner_config.json": '{"mode": "disagg"}'},
}
EVERY_FIELD = {
    "model": "Qwen/Qwen3-0.6B",
    "backend": "vllm",
    "image": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1",
    "modelCache": {"pvcName": "models", "pvcModelPath": "qwen3-0.6b", "pvcMountPath": "/opt/models"},
    "hardware": {
        "gpuSku": "h100_sxm",
        "vramMb": 81559,
        "totalGpus": 16,
        "numGpusPerNode": 8,
        "interconnect": "nvlink",
        "rdma": False,
    },
    "workload": {"isl": 3000, "osl": 150, "concurrency": 8},
    "sla": {"ttft": 200, "itl": 20, "optimizationType": "latency"},
    "overrides": {
        "profilingJob": {
            "activeDeadlineSeconds": 3600,
            "template": {
                "metadata": {"labels": {"team": "inference"}},
                "spec": {
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [
                        {
                            "name": "profiler",
                            "resources": {"requests": {"cpu": "1"}},
                            "env": [{"name": "DYN_LOG", "value": "debug"}],
                        }
                    ],
                },
            },
        },
        "dgd": {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeployment",
            "metadata": {"labels": {"team": "inference"}},
            "spec": {
                "components": [
                    {
                        "name": "MockerWorker",
                        "replicas": 1,
                        "podTemplate": {
                            "spec": {
                                "containers": [
                                    {"name": "main", "env": [{"name": "DYN_LOG", "value": "debug"}]}
                                ]
                            }
                        },
                    }
                ]
            },
        },
    },
    "features": {"planner": {"mode": "disagg", "ttft_ms": 200}, "mocker": {"enabled": True}},
    "searchStrategy": "rapid",
    "autoApply": True,
}


@contextlib.contextmanager
def bound_pvc(client, ns: str, name: str):
    """A PersistentVolumeClaim bound (by kube-controller-manager) to a hostPath PersistentVolume of its
    own, so pods mounting it schedule on the kwok nodes (kwok runs nothing, nothing is written)."""
    pv, sc = f"{ns}-{name}", f"manual-{ns}"
    client.create(
        PVS,
        {
            "metadata": {"name": pv},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteMany"],
                "storageClassName": sc,
                "hostPath": {"path": f"/tmp/{pv}"},
            },
        },
    )
    try:
        client.create(
            PVCS,
            {
                "metadata": {"name": name, "namespace": ns},
                "spec": {
                    "accessModes": ["ReadWriteMany"],
                    "storageClassName": sc,
                    "volumeName": pv,
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            },
        )
        wait_for(
            lambda: ((get(client, PVCS, name, ns) or {}).get("status") or {}).get("phase") == "Bound",
            WAIT,
            f"PVC {name} Bound",
        )
        yield
    finally:
        with contextlib.suppress(ApiException):
            client.delete(PVS, pv)


def beta_request(ns: str, name: str, spec: dict) -> dict:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def beta_status(client, ns, name) -> dict:
    return (get(client, DGDRS_V1BETA1, name, ns) or {}).get("status") or {}


def profiler_given(job: dict) -> dict:
    profiler = job["spec"]["template"]["spec"]["containers"][0]
    assert profiler["name"] == "profiler" and profiler["args"][0] == "--config", profiler
    return json.loads(profiler["args"][1])


def _assert_stored_in_both_versions(client, ns: str, n: str) -> None:
    """Stored as v1alpha1 and read back identical in v1beta1; v1alpha1 readers see the fields in their
    natural homes."""
    assert get(client, DGDRS_V1BETA1, n, ns)["spec"] == EVERY_FIELD
    alpha = get(client, DGDRS, n, ns)
    prof = alpha["spec"]["profilingConfig"]
    assert prof["profilerImage"] == EVERY_FIELD["image"] and alpha["spec"]["useMocker"] is True
    assert prof["config"]["sla"] == {"ttft": 200, "itl": 20, "isl": 3000, "osl": 150}
    assert prof["config"]["deployment"]["modelCache"] == {
        "pvcName": "models",
        "modelPathInPvc": "qwen3-0.6b",
        "pvcMountPath": "/opt/models",
    }
    assert prof["config"]["planner"] == {"mode": "disagg", "ttft_ms": 200}
    assert prof["resources"] == {"requests": {"cpu": "1"}}


def _assert_profiling_job_carries_every_field(client, ns: str, n: str) -> None:
    """The profiling Job carries every field of ``EVERY_FIELD``."""
    job = wait_job_complete(client, ns, n)
    assert profiler_given(job) == EVERY_FIELD  # all four hardware fields given: no discovery
    pod = job["spec"]["template"]["spec"]
    assert {"name": "model-cache", "mountPath": "/opt/models", "readOnly": True} in pod["containers"][0][
        "volumeMounts"
    ]
    assert {
        "name": "model-cache",
        "persistentVolumeClaim": {"claimName": "models", "readOnly": True},
    } in pod["volumes"]
    assert job["spec"]["activeDeadlineSeconds"] == 3600
    assert job["spec"]["template"]["metadata"]["labels"]["team"] == "inference"
    assert pod["tolerations"] == EVERY_FIELD["overrides"]["profilingJob"]["template"]["spec"]["tolerations"]
    assert pod["containers"][0]["resources"] == {"requests": {"cpu": "1"}}
    assert {"name": "DYN_LOG", "value": "debug"} in pod["containers"][0]["env"]


def _assert_generated_graph(client, ns: str, n: str) -> None:
    """The generated graph: ``overrides.dgd``, the model cache mounts, the planner and its ConfigMap."""
    dgd = wait_for(lambda: get(client, store.DGD, n, ns), WAIT, "the generated DGD")
    assert dgd["metadata"]["labels"]["team"] == "inference"
    worker = dgd["spec"]["services"]["MockerWorker"]
    assert worker["replicas"] == 1
    assert {"name": "DYN_LOG", "value": "debug"} in worker["envs"]
    assert worker["extraPodSpec"]["mainContainer"]["image"] == IMAGE
    for svc in ("Frontend", "MockerWorker"):
        assert {"name": "models", "mountPoint": "/opt/models"} in dgd["spec"]["services"][svc]["volumeMounts"]
    assert dgd["spec"]["services"]["Planner"]["componentType"] == "planner"
    cm = wait_for(lambda: get(client, CONFIGMAPS, "planner-config-4a1f", ns), WAIT, "the planner ConfigMap")
    assert cm["data"] == PLANNER_CONFIG["data"]
    assert cm["metadata"]["ownerReferences"][0]["name"] == n


def test_v1beta1_request_with_every_field_is_kept_and_acted_on(client, ns, operator):
    n = "every"
    with bound_pvc(client, ns, "models"):
        client.create(DGDRS_V1BETA1, beta_request(ns, n, EVERY_FIELD))

        _assert_stored_in_both_versions(client, ns, n)
        _assert_profiling_job_carries_every_field(client, ns, n)
        st = beta_status(client, ns, n)
        assert st["phase"] == "Profiling" and st["profilingJobName"] == rd.job_name(n)
        assert st["profilingPhase"] in ("Initializing", "Done")
        publish_output(client, ns, n, final=yaml.safe_dump_all([PLANNER_CONFIG, PLANNER_GRAPH]))

        _assert_generated_graph(client, ns, n)

        # progress as v1beta1 readers see it
        wait_for(lambda: beta_status(client, ns, n).get("phase") == "Deployed", WAIT, "phase Deployed")
        st = beta_status(client, ns, n)
        assert st["dgdName"] == n and "profilingPhase" not in st
        assert st["profilingResults"]["selectedConfig"]["kind"] == "DynamoGraphDeployment"
        wait_for(
            lambda: (
                beta_status(client, ns, n).get("deploymentInfo") == {"replicas": 3, "availableReplicas": 3}
            ),
            WAIT,
            "deploymentInfo of the three components",
        )
        assert condition({"status": st}, "Succeeded")["status"] == "True"
        assert get(client, DGDRS_V1BETA1, n, ns)["spec"] == EVERY_FIELD  # still identical
        # the v1beta1 view carries no annotation of ours but the record of v1alpha1-only status fields
        annotations = get(client, DGDRS_V1BETA1, n, ns)["metadata"].get("annotations") or {}
        assert set(annotations) <= {"nvidia.com/conversion-from-v1alpha1"}, annotations
        saved = json.loads(annotations.get("nvidia.com/conversion-from-v1alpha1", "[]"))
        assert {tuple(r["path"][:2]) for r in saved} <= {
            ("status", "backend"),
            ("status", "deployment"),
            ("status", "profilingResults"),
        }, saved


def test_v1beta1_example_profiles_with_the_configured_image_and_discovered_gpus(client, ns, operator):
    example = yaml.safe_load(EXAMPLE_V1BETA1.read_text())  # applied unchanged, in the test's namespace
    n = example["metadata"]["name"]
    client.create(DGDRS_V1BETA1, {**example, "metadata": {**example["metadata"], "namespace": ns}})
    job = wait_job_complete(client, ns, n)
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == PROFILER_IMAGE
    given = profiler_given(job)
    assert given["hardware"] == {"gpuSku": "h100_sxm", "numGpusPerNode": 8, "totalGpus": 16}
    assert {k: given[k] for k in ("sla", "workload", "searchStrategy", "features")} == {
        k: example["spec"][k] for k in ("sla", "workload", "searchStrategy", "features")
    }
    publish_output(client, ns, n, final=yaml.safe_dump_all([PLANNER_CONFIG, PLANNER_GRAPH]))
    wait_for(lambda: beta_status(client, ns, n).get("phase") == "Deployed", WAIT, "phase Deployed")
    assert get(client, store.DGD, n, ns)["metadata"]["labels"]["team"] == "inference"


def test_a_request_with_only_a_model_gets_the_defaults(client, ns, operator):
    client.create(DGDRS_V1BETA1, beta_request(ns, "bare", {"model": "Qwen/Qwen3-0.6B"}))
    job = wait_for(lambda: get(client, JOBS, rd.job_name("bare"), ns), WAIT, "the profiling Job")
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == PROFILER_IMAGE
    given = profiler_given(job)
    assert given == {
        "model": "Qwen/Qwen3-0.6B",
        "image": PROFILER_IMAGE,
        "hardware": {"gpuSku": "h100_sxm", "numGpusPerNode": 8, "totalGpus": 16},
    }
    assert get(client, DGDRS_V1BETA1, "bare", ns)["spec"] == {"model": "Qwen/Qwen3-0.6B"}  # nothing rewritten
    st = wait_for(
        lambda: beta_status(client, ns, "bare").get("profilingJobName") and beta_status(client, ns, "bare"),
        WAIT,
        "profilingJobName",
    )
    assert st["phase"] == "Profiling"


def test_without_gpu_discovery_a_request_must_name_its_hardware(kube_cluster, client, ns, operator):
    # the module's operator holds its reconciles of this namespace while one restricted to it, configured
    # without GPU discovery, answers
    held = {(name, ns) for name in operator.controllers}
    operator.held |= held
    try:
        with Operator(kube_cluster, {"gpu": {"discoveryEnabled": False}}, restricted_namespace=ns):
            client.create(DGDRS_V1BETA1, beta_request(ns, "nohw", {"model": "Qwen/Qwen3-0.6B"}))
            wait_for(lambda: beta_status(client, ns, "nohw").get("phase") == "Failed", WAIT, "phase Failed")
            c = condition(get(client, DGDRS_V1BETA1, "nohw", ns), "Validation")
            assert (c["status"], c["reason"]) == ("False", "InvalidSpec")
            assert "spec.hardware.gpuSku and spec.hardware.numGpusPerNode" in c["message"]
            assert "gpu.discoveryEnabled is false" in c["message"]
            assert get(client, JOBS, rd.job_name("nohw"), ns) is None
    finally:
        operator.held -= held
