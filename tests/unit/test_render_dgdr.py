"""DGDR's pure part: validation, the profiling Job, the generated DGD and every phase transition
(render/dgdr.py)."""

from __future__ import annotations

import json

import pytest
import yaml
from dynamo_operator.api.config import OPERATOR_IMAGE
from dynamo_operator.render import dgdr as rd

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
    s = rd.step(dgdr(), rd.Observed())
    assert s.status["state"] == "Profiling" and s.create_job and s.status["observedGeneration"] == 1
    assert s.status["backend"] == "vllm"
    assert reasons(s) == {
        "Validation": (True, "SpecValid"),
        "Profiling": (False, "ProfilingJobCreated"),
        "Succeeded": (False, "ProfilingJobCreated"),
    }
    assert s.events == [("Normal", "ProfilingJobCreated", "profiling Job profile-online-req created")]


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"profilingConfig": {"profilerImage": ""}}, "spec.profilingConfig.profilerImage is empty"),
        (
            {"profilingConfig": {"profilerImage": "i", "config": {"deployment": {"model": "x"}}}},
            "config.deployment.model is set by the operator",
        ),
        (
            {"deploymentOverrides": {"name": "Bad_Name"}},
            "spec.deploymentOverrides.name 'Bad_Name' is not a valid",
        ),
        ({"autoApply": False, "deploymentOverrides": {"name": "x"}}, "applies only with autoApply"),
    ],
)
def test_invalid_spec_fails_with_the_field_and_the_fix(spec, fragment):
    s = rd.step(dgdr(**spec), rd.Observed())
    assert s.status["state"] == "Failed" and not s.create_job
    assert reasons(s) == {"Validation": (False, "InvalidSpec"), "Succeeded": (False, "InvalidSpec")}
    assert fragment in s.conditions[0].message
    assert s.events[0][:2] == ("Warning", "InvalidSpec")


def test_admission_errors_fail_validation():
    s = rd.step(dgdr(), rd.Observed(admission_errors=("spec.model: Required value: name the model",)))
    assert s.status["state"] == "Failed" and not s.create_job
    assert s.conditions[0].message.startswith("spec.model: Required value")


def test_missing_config_map_ref_fails_validation():
    s = rd.step(dgdr(), rd.Observed(config_map_ref_missing="disagg"))
    assert s.status["state"] == "Failed" and "ConfigMap 'disagg' not found" in s.conditions[0].message


def test_profiling_job_runs_the_profiler_and_the_output_copier():
    req = dgdr(
        profilingConfig={
            "profilerImage": "p:1",
            "config": {"sla": {"ttft": 200}},
            "outputPVC": "prof",
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        }
    )
    j = rd.profiling_job(req)
    assert j["metadata"] == {
        "name": "profile-online-req",
        "namespace": "team",
        "labels": {
            "app.kubernetes.io/managed-by": "dynamo-operator",
            "dgdr.nvidia.com/name": "req",
            "dgdr.nvidia.com/namespace": "team",
        },
    }
    pod = j["spec"]["template"]["spec"]
    assert j["spec"]["backoffLimit"] == 0 and pod["restartPolicy"] == "Never"
    assert pod["serviceAccountName"] == "dgdr-profiling-job"
    assert [c["name"] for c in pod["containers"]] == ["profiler", "output-copier"]
    profiler, copier = pod["containers"]
    assert profiler["image"] == "p:1" and copier["image"] == OPERATOR_IMAGE  # pinned, the operator's own
    assert copier["command"] == ["dynamo-operator", "publish-profiling-output"]
    assert copier["args"] == ["--dir", "/data", "--configmap", "dgdr-output-req"]
    assert copier["volumeMounts"] == [{"name": "output", "mountPath": "/data", "readOnly": True}]
    sc = copier["securityContext"]
    assert sc["runAsNonRoot"] and not sc["allowPrivilegeEscalation"] and sc["readOnlyRootFilesystem"]
    cfg = json.loads(profiler["env"][0]["value"])
    assert cfg["deployment"] == {"model": "Qwen/Qwen3-0.6B", "useMocker": True}
    assert (
        cfg["engine"] == {"backend": "vllm"} and cfg["sla"] == {"ttft": 200} and cfg["output_dir"] == "/data"
    )
    assert pod["volumes"] == [{"name": "output", "persistentVolumeClaim": {"claimName": "prof"}}]
    assert pod["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert rd.profiling_job(req, "registry.example/op@sha256:" + "a" * 64)["spec"]["template"]["spec"][
        "containers"
    ][1]["image"].endswith("a" * 64)


def test_running_job_reports_the_profiler_sub_phase():
    s = rd.step(dgdr("Profiling"), rd.Observed(job=job()))
    assert reasons(s)["Profiling"] == (False, "ProfilingRunning") and s.status["state"] == "Profiling"
    s = rd.step(
        dgdr("Profiling"),
        rd.Observed(job=job(), output=output(None, "phase: SweepingDecode\nmessage: tp=2\n")),
    )
    assert reasons(s)["Profiling"] == (False, "SweepingDecode") and s.conditions[0].message == "tp=2"


def test_failed_job_fails_the_request():
    s = rd.step(dgdr("Profiling"), rd.Observed(job=job("Failed", "BackoffLimitExceeded")))
    assert s.status["state"] == "Failed"
    assert reasons(s) == {"Profiling": (False, "ProfilingFailed"), "Succeeded": (False, "ProfilingFailed")}


def test_completed_job_waits_for_its_output_then_fails_after_the_grace_period():
    s = rd.step(dgdr("Profiling"), rd.Observed(job=job("Complete"), job_finished_seconds_ago=3))
    assert s.status["state"] == "Profiling" and reasons(s)["Profiling"] == (False, "WaitingForOutput")
    assert s.requeue_after == rd.RECHECK_SECONDS
    s = rd.step(
        dgdr("Profiling"),
        rd.Observed(job=job("Complete"), job_finished_seconds_ago=rd.OUTPUT_GRACE_SECONDS + 1),
    )
    assert s.status["state"] == "Failed" and reasons(s)["Profiling"] == (False, "ProfilingOutputMissing")


@pytest.mark.parametrize(
    ("final", "fragment"),
    [
        ("{not yaml", "is not YAML"),
        (yaml.safe_dump({"kind": "Deployment", "apiVersion": "apps/v1"}), "is not a DynamoGraphDeployment"),
        (
            yaml.safe_dump({"kind": "DynamoGraphDeployment", "apiVersion": "nvidia.com/v9"}),
            "apiVersion 'nvidia.com/v9'",
        ),
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
    # next pass: the DGD does not exist yet -> create it
    nxt = rd.step({**req, "status": s.status}, rd.Observed())
    assert nxt.create_dgd == gen and nxt.status["state"] == "Deploying"


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
    seen = rd.Observed(dgd=None if dgd_state is None else {"status": {"state": dgd_state}})
    return rd.step(req, seen)


def test_deploying_follows_the_dgd_to_ready_and_back_when_it_degrades():
    s = _deploying("pending")
    assert s.status["state"] == "Deploying" and reasons(s)["DeploymentReady"] == (
        False,
        "DeploymentInProgress",
    )
    assert s.status["deployment"] == {"name": "req", "namespace": "team", "created": True, "state": "pending"}
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
    assert rd.step({**dgdr(), "status": s.status}, rd.Observed()).status == s.status  # terminal


def test_spec_changes_after_profiling_started_are_rejected():
    s = rd.step(dgdr("Profiling", generation=2, observed=1), rd.Observed(job=job()))
    assert s.status["observedGeneration"] == 1 and not s.conditions
    assert s.events[0][:2] == ("Warning", "SpecChangeRejected")


def test_job_names_and_output_names():
    assert rd.job_name("req") == "profile-online-req"
    assert rd.output_configmap_name("req") == "dgdr-output-req"
    long = dgdr()
    long["metadata"]["name"] = "x" * 60
    assert any("metadata.name is too long" in e for e in rd.validate(long))
