"""A running checkpoint Job that is not getting anywhere is named within the bound
(render/checkpoint_stall.py), recorded by the phase machine (render/checkpoint.py), and repeated by a
graph waiting for it (render/restore.py gate, CheckpointPlan.notice)."""

from __future__ import annotations

import datetime as dt

from dynamo_operator.render import checkpoint as rc
from dynamo_operator.render import checkpoint_stall as cs
from dynamo_operator.render.context import RenderContext
from dynamo_operator.render.graph_checkpoint import CheckpointPlan
from dynamo_operator.render.info import component_info
from dynamo_operator.render.restore import gate

T0 = cs.parse_time("2026-01-01T00:00:00Z")
BOUND = 60.0


def at(seconds: float) -> str:
    return dt.datetime.fromtimestamp(T0 + seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


JOB = {
    "metadata": {"name": "checkpoint-warm", "uid": "job-uid", "creationTimestamp": at(0)},
    "spec": {"activeDeadlineSeconds": 3600},
    "status": {"active": 1},
}


def pod(phase="Pending", conditions=(), statuses=(), created=0.0, deleting=False):
    md = {"name": "checkpoint-warm-x1", "creationTimestamp": at(created)}
    if deleting:
        md["deletionTimestamp"] = at(created + 1)
    return {
        "metadata": md,
        "spec": {"containers": [{"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.1"}]},
        "status": {
            "phase": phase,
            "startTime": at(created),
            "conditions": [
                {"type": t, "status": s, "reason": r, "message": m, "lastTransitionTime": at(since)}
                for t, s, r, m, since in conditions
            ],
            "containerStatuses": list(statuses),
        },
    }


UNSCHEDULABLE = (
    "PodScheduled",
    "False",
    "Unschedulable",
    '0/3 nodes are available: pvc "chrek-pvc" not found',
    5,
)
READY = ("Ready", "True", "", "", 20)


def test_a_job_without_a_pod_is_named_with_the_job_controllers_reason_once_the_bound_passed():
    early = cs.stall(JOB, [], T0 + 30, BOUND)
    assert early.stall is None and early.recheck_in == 30  # woken when the bound is due
    assert not cs.needs_events(JOB, [], T0 + 30, BOUND) and cs.needs_events(JOB, [], T0 + 61, BOUND)
    why = 'pods "checkpoint-warm-" is forbidden: pod rejected: RuntimeClass "nvidia" not found'
    v = cs.stall(JOB, [], T0 + 61, BOUND, why)
    assert v.stall == cs.Stall(cs.R_NOT_CREATED, f"checkpoint Job checkpoint-warm has no pod: {why}")
    assert "kubectl describe job" in cs.stall(JOB, [], T0 + 61, BOUND).stall.message  # events unread


def test_an_unschedulable_pod_is_named_with_the_schedulers_message():
    p = pod(conditions=[UNSCHEDULABLE])
    assert cs.stall(JOB, [p], T0 + 64, BOUND) == cs.Verdict(None, 1.0)
    v = cs.stall(JOB, [p], T0 + 65, BOUND)
    assert v.stall.reason == cs.R_UNSCHEDULABLE
    assert (
        "pod checkpoint-warm-x1 of checkpoint Job checkpoint-warm cannot be scheduled: 0/3 nodes"
        in v.stall.message
    )


def test_a_container_stuck_in_an_error_is_named_and_a_pull_failure_reads_the_same_either_way():
    def stuck(reason, message=""):
        return pod(
            "Pending",
            statuses=[{"name": "main", "state": {"waiting": {"reason": reason, "message": message}}}],
        )

    pulls = {
        cs.stall(JOB, [stuck(r, m)], T0 + 61, BOUND).stall
        for r, m in [("ErrImagePull", "x"), ("ImagePullBackOff", "y")]
    }
    assert len(pulls) == 2 and all(s.reason == cs.R_NOT_STARTING for s in pulls)
    assert {s.message.split(" (")[0] for s in pulls} == {
        "container main of pod checkpoint-warm-x1 of checkpoint Job checkpoint-warm does not start: "
        "its image nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.1 cannot be pulled"
    }
    v = cs.stall(
        JOB, [stuck("CreateContainerConfigError", 'secret "hf-token-secret" not found')], T0 + 61, BOUND
    )
    assert v.stall.message.endswith(
        'does not start: CreateContainerConfigError: secret "hf-token-secret" not found'
    )
    assert (
        cs.stall(JOB, [stuck("ContainerCreating")], T0 + 600, BOUND).stall is None
    )  # a slow start is no stall


def test_a_ready_target_that_never_exits_is_not_captured_by_anything_here():
    p = pod("Running", conditions=[("PodScheduled", "True", "", "", 1), READY])
    assert cs.stall(JOB, [p], T0 + 79, BOUND) == cs.Verdict(None, 1.0)
    v = cs.stall(JOB, [p], T0 + 80, BOUND)
    assert v.stall.reason == cs.R_NOT_CAPTURED and "no snapshot agent" in v.stall.message
    assert "$DYN_CHECKPOINT_PATH and exits 0" in v.stall.message
    running = pod("Running", conditions=[("Ready", "False", "ContainersNotReady", "", 1)])
    assert cs.stall(JOB, [running], T0 + 600, BOUND) == cs.Verdict(None, None)  # loading: no clock runs


def test_a_finished_or_deleted_pod_is_left_to_the_job_controller():
    done = pod("Succeeded")
    assert cs.stall(JOB, [done], T0 + 600, BOUND) == cs.Verdict(None)
    assert cs.stall(JOB, [pod("Running", conditions=[READY], deleting=True)], T0 + 600, BOUND) == cs.Verdict(
        None
    )


def checkpoint(status=None):
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "warm", "namespace": "team", "generation": 1},
        "spec": {"identity": {"model": "m", "backendFramework": "vllm"}, "job": {"podTemplateSpec": {}}},
        "status": status or {"phase": "Creating"},
    }


def test_the_phase_machine_records_a_stall_as_a_warning_and_keeps_the_job():
    found = cs.Stall(cs.R_NOT_CAPTURED, "pod p has been Ready")
    s = rc.step(checkpoint(), JOB, enabled=True, stall=found)
    assert s.status["phase"] == "Creating" and not s.delete_job and not s.create_job
    (cond,) = s.conditions
    assert (cond.ok, cond.reason) == (False, cs.R_NOT_CAPTURED)
    assert (
        cond.message
        == "pod p has been Ready; the Job fails at its deadline (3600s after it started) unless this is "
        "resolved"
    )
    assert s.events == [("Warning", cs.R_NOT_CAPTURED, cond.message)] and s.status["message"] == cond.message
    no_deadline = {**JOB, "spec": {}}
    assert "no deadline" in rc.step(checkpoint(), no_deadline, enabled=True, stall=found).status["message"]
    # resolved: back to running, no event
    s = rc.step(checkpoint(), JOB, enabled=True)
    assert s.conditions[0].reason == rc.R_JOB_RUNNING and s.events == []


def stalled() -> dict:
    return checkpoint(
        {
            "phase": "Creating",
            "message": "m",
            "conditions": [
                {"type": "Ready", "status": "False", "reason": cs.R_UNSCHEDULABLE, "message": "no GPUs"}
            ],
        }
    )


def test_a_waiting_component_says_why_its_checkpoint_will_not_become_ready():
    failed = checkpoint(
        {
            "phase": "Failed",
            "message": "checkpoint Job x failed: DeadlineExceeded",
            "conditions": [{"type": "Ready", "status": "False", "reason": "JobFailed"}],
        }
    )
    for obj, expected in (
        (checkpoint(), "(phase Creating; startupPolicy WaitForCheckpoint)"),
        (stalled(), f"(phase Creating, {cs.R_UNSCHEDULABLE}: no GPUs; startupPolicy WaitForCheckpoint)"),
        (failed, "(phase Failed, JobFailed: checkpoint Job x failed: DeadlineExceeded; startupPolicy"),
    ):
        msg = gate(component_info(WAITING_DCD), RenderContext(checkpoints={"warm": obj}))
        assert msg.startswith("waiting for DynamoCheckpoint team/warm to be Ready") and expected in msg, msg


WAITING_DCD = {
    "metadata": {"name": "g-worker", "namespace": "team"},
    "spec": {
        "experimental": {
            "checkpoint": {"enabled": True, "checkpointRef": "warm", "startupPolicy": "WaitForCheckpoint"}
        }
    },
}


def test_a_graph_notices_a_stalled_or_failed_checkpoint_and_says_what_it_means_for_the_component():
    def plan(live, waiting):
        return CheckpointPlan("Worker", "warm", "id", True, False, live, None, waiting)

    assert plan(checkpoint(), "w").notice() is None
    reason, message = plan(stalled(), "w").notice()
    assert reason == "CheckpointStalled"
    assert message == (
        f"DynamoCheckpoint team/warm of component Worker: {cs.R_UNSCHEDULABLE}: no GPUs; the component "
        "stays at zero replicas until it is Ready (startupPolicy WaitForCheckpoint)"
    )
    failed = checkpoint(
        {"phase": "Failed", "message": "gone", "conditions": [{"type": "Ready", "reason": "JobDeleted"}]}
    )
    reason, message = plan(failed, None).notice()
    assert reason == "CheckpointFailed" and message.endswith(
        "JobDeleted: gone; the component's pods start cold meanwhile"
    )
