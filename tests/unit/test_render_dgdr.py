"""DGDR's phase machine (render/dgdr.py): every transition, the validation against what the cluster has
(PVC, ConfigMap, GPUs) and the v1beta1-only status it keeps (profilingPhase, profilingJobName,
deploymentInfo)."""

from __future__ import annotations

import json

import pytest
import yaml
from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE
from dynamo_operator.api.conversion import convert
from dynamo_operator.api.dgdr_conversion import STATUS_ANNOTATION
from dynamo_operator.render import dgdr as rd
from dynamo_operator.render.gpu import GpuInfo

H100 = GpuInfo("NVIDIA-H100-80GB-HBM3", 8, 81559, 2)  # what the local cluster's kwok nodes say
SEEN = rd.Observed(gpus=H100, gpu_discovery="found")

DGD_V1BETA1 = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "from-profiler", "labels": {"profiled": "yes"}},
    "spec": {
        "components": [
            {
                "name": "Frontend",
                "type": "frontend",
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": "fe:1"}]}},
            },
            {
                "name": "Worker",
                "type": "worker",
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": "w:1"}]}},
            },
        ]
    },
}


def dgdr(state=None, generation=1, observed=None, **spec_extra):
    spec = {
        "model": "Qwen/Qwen3-0.6B",
        "backend": "vllm",
        "useMocker": True,
        "profilingConfig": {
            "profilerImage": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1",
            "config": {"sla": {"ttft": 200}},
        },
        **spec_extra,
    }
    status = {}
    if state:
        status["state"] = state
        status["observedGeneration"] = observed if observed is not None else generation
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "req", "namespace": "team", "generation": generation, "uid": "u1"},
        "spec": spec,
        "status": status,
    }


def stored(beta: dict, state=None) -> dict:
    """A v1beta1 request as the controller reads it from storage (v1alpha1 with the difference record)."""
    obj = convert(beta, "v1alpha1")
    obj["metadata"].setdefault("generation", 1)
    if state:
        obj["status"] = {"state": state, "observedGeneration": 1}
    return obj


def beta(**spec) -> dict:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "req", "namespace": "team", "uid": "u1"},
        "spec": {"model": "Qwen/Qwen3-0.6B", **spec},
    }


def output(final=DGD_V1BETA1, status_yaml=None):
    data = {}
    if final is not None:
        data[rd.FINAL_CONFIG] = final if isinstance(final, str) else yaml.safe_dump(final)
    if status_yaml is not None:
        data[rd.STATUS_FILE] = status_yaml
    return {"metadata": {"name": "dgdr-output-req"}, "data": data}


def job(kind=None, message=""):
    conds = [{"type": kind, "status": "True", "message": message}] if kind else []
    return {
        "status": {
            "conditions": conds,
            **({"completionTime": "2026-01-01T00:00:00Z"} if kind == "Complete" else {}),
        }
    }


def reasons(s: rd.Step) -> dict[str, tuple[bool, str]]:
    return {c.type: (c.ok, c.reason) for c in s.conditions}


def test_pending_validates_and_creates_the_job():
    s = rd.step(dgdr(), SEEN)
    assert s.status["state"] == "Profiling" and s.status["observedGeneration"] == 1
    assert s.create_job["metadata"]["name"] == "profile-online-req"
    assert s.status["backend"] == "vllm"
    assert reasons(s) == {
        "Validation": (True, "SpecValid"),
        "Profiling": (False, "ProfilingJobCreated"),
        "Succeeded": (False, "ProfilingJobCreated"),
    }
    assert s.events == [("Normal", "ProfilingJobCreated", "profiling Job profile-online-req created")]
    assert s.beta_status == {"profilingJobName": "profile-online-req", "profilingPhase": "Initializing"}


def test_a_request_with_only_a_model_profiles_with_the_defaults():
    """The seed: only model is required. The image defaults (admission writes it; a request that bypassed
    admission gets the same from the controller), the hardware comes from discovery."""
    s = rd.step(stored(beta()), SEEN, rd.Settings(profiler_image="registry.local/planner:9"))
    assert s.status["state"] == "Profiling"
    profiler = s.create_job["spec"]["template"]["spec"]["containers"][0]
    assert profiler["image"] == "registry.local/planner:9"
    given = json.loads(profiler["args"][1])
    assert given["model"] == "Qwen/Qwen3-0.6B" and given["image"] == "registry.local/planner:9"
    assert given["hardware"] == {"gpuSku": "h100_sxm", "vramMb": 81559, "numGpusPerNode": 8, "totalGpus": 16}
    assert rd.step(stored(beta()), SEEN).create_job["spec"]["template"]["spec"]["containers"][0]["image"] == (
        DEFAULT_PROFILER_IMAGE
    )


@pytest.mark.parametrize(
    ("seen", "spec", "fragment"),
    [
        (
            rd.Observed(gpu_discovery="GPU discovery is off: gpu.discoveryEnabled is false"),
            {},
            "spec.hardware.gpuSku and spec.hardware.numGpusPerNode: the profiler needs the GPU hardware and "
            "GPU discovery could not find it (GPU discovery is off",
        ),
        (
            rd.Observed(gpu_discovery="no node has GPUs"),
            {"hardware": {"gpuSku": "h100_sxm"}},
            "spec.hardware.numGpusPerNode: the profiler needs",
        ),
        (
            rd.Observed(gpus=H100, model_cache_missing="weights"),
            {"modelCache": {"pvcName": "weights"}},
            "spec.modelCache.pvcName: PersistentVolumeClaim 'weights' not found",
        ),
    ],
)
def test_what_the_cluster_lacks_fails_validation_naming_the_field(seen, spec, fragment):
    s = rd.step(stored(beta(**spec)), seen)
    assert s.status["state"] == "Failed" and s.create_job is None
    assert reasons(s) == {"Validation": (False, "InvalidSpec"), "Succeeded": (False, "InvalidSpec")}
    assert fragment in s.conditions[0].message, s.conditions[0].message


def test_hardware_the_request_gives_needs_no_discovery():
    hardware = {"gpuSku": "a100_sxm", "numGpusPerNode": 4}
    s = rd.step(stored(beta(hardware=hardware)), rd.Observed(gpu_discovery="not run"))
    assert s.status["state"] == "Profiling"
    given = json.loads(s.create_job["spec"]["template"]["spec"]["containers"][0]["args"][1])
    assert given["hardware"] == hardware  # the request's own, discovery found nothing to add


def test_admission_errors_fail_validation():
    s = rd.step(
        dgdr(), rd.Observed(gpus=H100, admission_errors=("spec.model: Required value: name the model",))
    )
    assert s.status["state"] == "Failed" and s.create_job is None
    assert s.conditions[0].message.startswith("spec.model: Required value")


def test_missing_config_map_ref_fails_validation():
    s = rd.step(dgdr(), rd.Observed(gpus=H100, config_map_ref_missing="disagg"))
    assert s.status["state"] == "Failed" and "ConfigMap 'disagg' not found" in s.conditions[0].message


def test_running_job_reports_the_profiler_sub_phase():
    s = rd.step(dgdr("Profiling"), rd.Observed(job=job()))
    assert reasons(s)["Profiling"] == (False, "ProfilingRunning") and s.status["state"] == "Profiling"
    assert s.beta_status["profilingPhase"] == "Initializing"
    s = rd.step(
        dgdr("Profiling"),
        rd.Observed(job=job(), output=output(None, "phase: SweepingDecode\nmessage: tp=2\n")),
    )
    assert reasons(s)["Profiling"] == (False, "SweepingDecode") and s.conditions[0].message == "tp=2"
    assert s.beta_status == {"profilingJobName": "profile-online-req", "profilingPhase": "SweepingDecode"}


def test_a_job_deleted_while_profiling_is_created_again():
    s = rd.step(dgdr("Profiling"), rd.Observed())
    assert s.create_job["metadata"]["name"] == "profile-online-req" and s.status["state"] == "Profiling"


def test_failed_job_fails_the_request():
    s = rd.step(dgdr("Profiling"), rd.Observed(job=job("Failed", "BackoffLimitExceeded")))
    assert s.status["state"] == "Failed"
    assert reasons(s) == {"Profiling": (False, "ProfilingFailed"), "Succeeded": (False, "ProfilingFailed")}
    assert s.beta_status == {"profilingJobName": "profile-online-req"}  # sub-phase cleared on failure


def test_completed_job_waits_for_its_output_then_fails_after_the_grace_period():
    s = rd.step(dgdr("Profiling"), rd.Observed(job=job("Complete"), job_finished_seconds_ago=3))
    assert s.status["state"] == "Profiling" and reasons(s)["Profiling"] == (False, "WaitingForOutput")
    assert s.requeue_after == rd.RECHECK_SECONDS and s.beta_status["profilingPhase"] == "Done"
    s = rd.step(
        dgdr("Profiling"),
        rd.Observed(job=job("Complete"), job_finished_seconds_ago=rd.OUTPUT_GRACE_SECONDS + 1),
    )
    assert s.status["state"] == "Failed" and reasons(s)["Profiling"] == (False, "ProfilingOutputMissing")


@pytest.mark.parametrize(
    ("final", "fragment"),
    [
        ("{not yaml", "is not YAML"),
        (yaml.safe_dump({"kind": "Deployment", "apiVersion": "apps/v1"}), "a document of kind 'Deployment'"),
        (
            yaml.safe_dump({"kind": "DynamoGraphDeployment", "apiVersion": "nvidia.com/v9"}),
            "apiVersion 'nvidia.com/v9'",
        ),
        (yaml.safe_dump({"kind": "ConfigMap", "metadata": {"name": "x"}}), "is not a DynamoGraphDeployment"),
    ],
)
def test_unusable_output_fails_the_request(final, fragment):
    s = rd.step(dgdr("Profiling"), rd.Observed(job=job("Complete"), output=output(final)))
    assert s.status["state"] == "Failed" and reasons(s)["Profiling"] == (False, "InvalidProfilingOutput")
    assert fragment in s.conditions[0].message


def test_completed_profiling_generates_the_dgd_and_deploys_it():
    req = dgdr(
        "Profiling", deploymentOverrides={"name": "served", "labels": {"team": "a"}, "workersImage": "w:2"}
    )
    s = rd.step(req, rd.Observed(job=job("Complete"), output=output()))
    assert s.status["state"] == "Deploying"
    assert s.status["deployment"] == {"name": "served", "namespace": "team", "created": False}
    assert s.status["profilingResults"] == "configmap/dgdr-output-req"
    gen = s.status["generatedDeployment"]
    assert gen["apiVersion"] == "nvidia.com/v1alpha1"  # the storage version
    assert gen["metadata"]["labels"] == {
        "profiled": "yes",
        "team": "a",
        "dgdr.nvidia.com/name": "req",
        "dgdr.nvidia.com/namespace": "team",
    }
    services = gen["spec"]["services"]
    assert services["Worker"]["extraPodSpec"]["mainContainer"]["image"] == "w:2"
    assert services["Frontend"]["extraPodSpec"]["mainContainer"]["image"] == "fe:1"
    assert reasons(s) == {"Profiling": (True, "Completed"), "SpecGenerated": (True, "SpecGenerated")}
    assert s.beta_status == {"profilingJobName": "profile-online-req"}  # profiling over: no sub-phase
    # next pass: the DGD does not exist yet -> create it
    nxt = rd.step({**req, "status": s.status}, rd.Observed())
    assert nxt.create_dgd == gen and nxt.status["state"] == "Deploying"


def test_the_configmaps_the_profiler_packaged_are_created_with_the_graph():
    planner_graph = {
        **DGD_V1BETA1,
        "spec": {"components": [*DGD_V1BETA1["spec"]["components"], {"name": "Planner", "type": "planner"}]},
    }
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "planner-config-ab12"},
        "data": {"a": "1"},
    }
    final = yaml.safe_dump_all([cm, planner_graph])
    req = stored(beta(features={"planner": {"mode": "disagg"}}), state="Profiling")
    s = rd.step(req, rd.Observed(job=job("Complete"), output=output(final)))
    assert s.status["state"] == "Deploying", s.conditions
    assert [c["metadata"]["name"] for c in s.create_config_maps] == ["planner-config-ab12"]
    made = s.create_config_maps[0]
    assert made["metadata"]["namespace"] == "team" and made["data"] == {"a": "1"}
    assert made["metadata"]["labels"]["dgdr.nvidia.com/name"] == "req"


def test_auto_apply_off_stops_at_ready_with_the_generated_spec():
    s = rd.step(dgdr("Profiling", autoApply=False), rd.Observed(job=job("Complete"), output=output()))
    assert s.status["state"] == "Ready" and "deployment" not in s.status and s.create_dgd is None
    assert s.status["generatedDeployment"]["metadata"]["name"] == "req"
    assert reasons(s)["SpecGenerated"] == (True, "AwaitingManualApply") and reasons(s)["Succeeded"][0] is True
    again = rd.step({**dgdr("Ready", autoApply=False), "status": s.status}, rd.Observed())
    assert again.status == s.status and not again.events


def _deploying(dgd_state, state="Deploying", created=True):
    req = dgdr(state)
    req["status"]["deployment"] = {"name": "req", "namespace": "team", "created": created}
    req["status"]["generatedDeployment"] = {"kind": "DynamoGraphDeployment"}
    services = {
        "Frontend": {"replicas": 1, "availableReplicas": 1},
        "Worker": {"replicas": 2, "readyReplicas": 1},
    }
    seen = rd.Observed(
        dgd=None if dgd_state is None else {"status": {"state": dgd_state, "services": services}}
    )
    return rd.step(req, seen)


def test_deploying_follows_the_dgd_to_ready_and_back_when_it_degrades():
    s = _deploying("pending")
    assert s.status["state"] == "Deploying" and reasons(s)["DeploymentReady"] == (
        False,
        "DeploymentInProgress",
    )
    assert s.status["deployment"] == {"name": "req", "namespace": "team", "created": True, "state": "pending"}
    assert s.beta_status["deploymentInfo"] == {"replicas": 3, "availableReplicas": 2}
    s = _deploying("successful")
    assert s.status["state"] == "Ready" and reasons(s)["DeploymentReady"] == (True, "DeploymentReady")
    assert s.events[0][:2] == ("Normal", "DeploymentReady")
    s = _deploying("pending", state="Ready")
    assert s.status["state"] == "Deploying" and reasons(s)["DeploymentReady"] == (False, "DeploymentDegraded")
    assert s.events[0][:2] == ("Warning", "DeploymentDegraded")


def test_a_deleted_dgd_is_not_recreated():
    s = _deploying(None, state="Ready")
    assert s.status["state"] == "DeploymentDeleted" and s.create_dgd is None
    assert reasons(s)["DeploymentReady"] == (False, "DeploymentDeleted")
    assert "delete this request" in s.conditions[0].message
    assert s.beta_status == {"profilingJobName": "profile-online-req"}  # no deploymentInfo any more
    assert rd.step({**dgdr(), "status": s.status}, rd.Observed()).status == s.status  # terminal


def test_v1beta1_readers_see_the_progress_as_the_seed_says():
    """The stored status plus the annotation the controller writes read as the v1beta1 status."""
    s = _deploying("successful")
    req = dgdr()
    req["metadata"]["annotations"] = {STATUS_ANNOTATION: json.dumps(s.beta_status)}
    req["status"] = s.status
    st = convert(req, "v1beta1")["status"]
    assert st["phase"] == "Deployed" and st["dgdName"] == "req"
    assert st["profilingJobName"] == "profile-online-req"
    assert st["deploymentInfo"] == {"replicas": 3, "availableReplicas": 2}


def test_v1beta1_readers_see_the_conditions_and_generation_the_controller_wrote():
    """The controller writes a step's conditions into the stored (v1alpha1) status at the request's
    generation (``apply_conditions``); a v1beta1 reader sees them unchanged, with the phase."""
    from dynamo_operator.controllers.lifecycle import apply_conditions

    s = rd.step(dgdr(), SEEN)
    req = dgdr()
    req["status"] = apply_conditions(s.status, s.conditions, 1)
    st = convert(req, "v1beta1")["status"]
    assert (st["phase"], st["observedGeneration"]) == ("Profiling", 1)
    assert {c["type"]: (c["status"], c["reason"]) for c in st["conditions"]} == {
        "Validation": ("True", "SpecValid"),
        "Profiling": ("False", "ProfilingJobCreated"),
        "Succeeded": ("False", "ProfilingJobCreated"),
    }


def test_spec_changes_after_profiling_started_are_rejected():
    s = rd.step(dgdr("Profiling", generation=2, observed=1), rd.Observed(job=job()))
    assert s.status["observedGeneration"] == 1 and not s.conditions
    assert s.events[0][:2] == ("Warning", "SpecChangeRejected")


def test_job_names_and_output_names():
    assert rd.job_name("req") == "profile-online-req"
    assert rd.output_configmap_name("req") == "dgdr-output-req"
