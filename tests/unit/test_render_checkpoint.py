"""DynamoCheckpoint's pure part: the checkpoint Job and the phase machine (render/checkpoint.py)."""

from __future__ import annotations

from dynamo_operator.render import checkpoint as rc

IDENTITY = {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"}


def ckpt(phase=None, **job_extra):
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "warm", "namespace": "team", "generation": 1, "uid": "u"},
        "spec": {
            "identity": IDENTITY,
            "job": {
                "podTemplateSpec": {
                    "spec": {
                        "containers": [
                            {"name": "sidecar", "image": "s:1"},
                            {"name": "main", "image": "vllm:1", "env": [{"name": "A", "value": "1"}]},
                        ]
                    }
                },
                **job_extra,
            },
        },
        "status": {"phase": phase} if phase else {},
    }


def job(kind=None, message=""):
    conds = (
        [{"type": kind, "status": "True", "reason": "BackoffLimitExceeded", "message": message}]
        if kind
        else []
    )
    extra = {"completionTime": "2026-01-01T00:00:09Z"} if kind == "Complete" else {}
    return {"metadata": {"name": "checkpoint-warm"}, "status": {"conditions": conds, **extra}}


def test_checkpoint_id_is_stable_per_identity():
    a = rc.checkpoint_id({"identity": IDENTITY})
    assert a == rc.checkpoint_id({"identity": dict(reversed(list(IDENTITY.items())))}) and len(a) == 16
    assert a != rc.checkpoint_id({"identity": {**IDENTITY, "dtype": "fp8"}})


def test_job_runs_the_template_once_with_the_target_told_its_checkpoint():
    j = rc.checkpoint_job(ckpt(activeDeadlineSeconds=600, sharedMemory={"size": "16Gi"}), "/ckpts/")
    cid = rc.checkpoint_id(ckpt()["spec"])
    assert j["metadata"]["name"] == "checkpoint-warm"
    assert j["spec"]["backoffLimit"] == 0 and j["spec"]["activeDeadlineSeconds"] == 600
    pod = j["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    sidecar, main = pod["containers"]
    template = ckpt()["spec"]["job"]["podTemplateSpec"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in pod["containers"]] == [(c["name"], c["image"]) for c in template]
    assert "env" not in sidecar
    assert main["env"] == [
        {"name": "A", "value": "1"},
        {"name": "DYN_CHECKPOINT_ID", "value": cid},
        {"name": "DYN_CHECKPOINT_PATH", "value": f"/ckpts/{cid}"},
    ]
    assert pod["volumes"] == [
        {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}
    ]
    assert main["volumeMounts"] == [{"name": "shared-memory", "mountPath": "/dev/shm"}]
    assert j["spec"]["template"]["metadata"]["labels"]["nvidia.com/dynamo-checkpoint"] == "warm"


def test_target_container_name_and_disabled_shared_memory():
    j = rc.checkpoint_job(ckpt(targetContainerName="sidecar", sharedMemory={"disabled": True}))
    sidecar, main = j["spec"]["template"]["spec"]["containers"]
    assert [e["name"] for e in sidecar["env"]] == ["DYN_CHECKPOINT_ID", "DYN_CHECKPOINT_PATH"]
    assert main["env"] == [{"name": "A", "value": "1"}] and "volumes" not in j["spec"]["template"]["spec"]


def test_disabled_configuration_keeps_it_pending_with_a_reason():
    s = rc.step(ckpt(), None, enabled=False)
    assert s.status["phase"] == "Pending"
    assert not s.create_job
    assert [(c.type, c.ok, c.reason) for c in s.conditions] == [("Ready", False, "CheckpointingDisabled")]
    assert "checkpoint.enabled: true" in s.conditions[0].message and s.events[0][0] == "Warning"


def test_phases_pending_creating_ready_and_the_job_is_deleted_after():
    s = rc.step(ckpt(), None, enabled=True)
    assert s.status["phase"] == "Creating" and s.create_job and s.status["jobName"] == "checkpoint-warm"
    assert s.conditions[0].reason == "JobCreated"
    s = rc.step(ckpt("Creating"), job(), enabled=True)
    assert s.status["phase"] == "Creating" and s.conditions[0].reason == "JobRunning" and not s.delete_job
    s = rc.step(ckpt("Creating"), job("Complete"), enabled=True)
    assert s.status["phase"] == "Ready" and s.status["createdAt"] == "2026-01-01T00:00:09Z"
    assert s.status["checkpointID"] == rc.checkpoint_id(ckpt()["spec"]) and s.delete_job
    assert (s.conditions[0].ok, s.conditions[0].reason) == (True, "CheckpointReady")
    assert rc.step(ckpt("Ready"), job("Complete"), enabled=True).delete_job  # leftover Job goes
    assert rc.step(ckpt("Ready"), None, enabled=False).conditions == []  # terminal: nothing more


def test_failed_or_lost_job_fails_the_checkpoint():
    s = rc.step(ckpt("Creating"), job("Failed", "deadline"), enabled=True)
    assert s.status["phase"] == "Failed" and s.conditions[0].reason == "JobFailed" and s.delete_job
    assert "deadline" in s.status["message"]
    s = rc.step(ckpt("Creating"), None, enabled=True)
    assert s.status["phase"] == "Failed" and s.conditions[0].reason == "JobDeleted" and not s.delete_job
