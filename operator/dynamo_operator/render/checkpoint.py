"""DynamoCheckpoint, the pure part: the checkpoint Job and the phase machine (``step``).

``status.phase``: ``Pending`` (nothing started; also while checkpointing is disabled in the operator
configuration) → ``Creating`` (the Job runs) → ``Ready`` (the Job succeeded) or ``Failed``.  The Job runs
the user's pod template once (``backoffLimit: 0``: checkpoint Jobs never retry) with the target container
told its checkpoint ID and path; the operator deletes the Job after recording its outcome, as upstream
does.  The deprecated ``status.conditions`` still get one ``Ready`` condition with a typed reason, so
``kubectl describe`` explains a checkpoint that is not ready.

The checkpoint ID (``checkpoint_ids.checkpoint_id_of``) is the label a graph-managed checkpoint carries,
else the identity hash of ``spec.identity`` (the same identity gives the same ID, which is what lets
restores find an existing checkpoint).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from . import names
from .checkpoint_ids import checkpoint_id_of, identity_hash
from .checkpoint_stall import Stall, deadline_note
from .conditions import Cond
from .pod import SHM_DEFAULT_SIZE, SHM_MOUNT_PATH, SHM_VOLUME

PENDING, CREATING, READY, FAILED = "Pending", "Creating", "Ready", "Failed"
TERMINAL = frozenset({READY, FAILED})
READY_COND = "Ready"
R_DISABLED, R_JOB_CREATED, R_JOB_RUNNING = "CheckpointingDisabled", "JobCreated", "JobRunning"
R_READY, R_JOB_FAILED, R_JOB_LOST = "CheckpointReady", "JobFailed", "JobDeleted"
LABEL_CHECKPOINT = "nvidia.com/dynamo-checkpoint"
ENV_ID, ENV_PATH = "DYN_CHECKPOINT_ID", "DYN_CHECKPOINT_PATH"
DEFAULT_BASE_PATH = "/checkpoints"


def checkpoint_id(spec: dict) -> str:
    """The identity hash of a DynamoCheckpoint spec (a standalone checkpoint's ID)."""
    return identity_hash(spec.get("identity"))


def job_name(name: str) -> str:
    return names.dns_label(f"checkpoint-{name}")


def _target(template_spec: dict, job: dict) -> dict | None:
    containers = template_spec.get("containers") or []
    want = job.get("targetContainerName")
    for c in containers:
        if c.get("name") == want or (want is None and c.get("name") == names.MAIN_CONTAINER):
            return c
    return containers[0] if containers and want is None else None


def checkpoint_job(ckpt: dict, base_path: str = DEFAULT_BASE_PATH) -> dict:
    """The Job that runs ``spec.job.podTemplateSpec`` once to capture the target container."""
    md, spec = ckpt["metadata"], ckpt.get("spec") or {}
    job = spec.get("job") or {}
    template = copy.deepcopy(job.get("podTemplateSpec") or {})
    pod = template.setdefault("spec", {})
    pod["restartPolicy"] = "Never"
    cid = checkpoint_id_of(ckpt)
    target = _target(pod, job)
    if target is not None:
        env = [e for e in target.get("env") or [] if e.get("name") not in (ENV_ID, ENV_PATH)]
        env += [{"name": ENV_ID, "value": cid}, {"name": ENV_PATH, "value": f"{base_path.rstrip('/')}/{cid}"}]
        target["env"] = env
        shm = job.get("sharedMemory") or {}
        if not shm.get("disabled"):
            size = str(shm.get("size") or SHM_DEFAULT_SIZE)
            vols = [v for v in pod.get("volumes") or [] if v.get("name") != SHM_VOLUME]
            pod["volumes"] = [
                *vols,
                {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": size}},
            ]
            mounts = [m for m in target.get("volumeMounts") or [] if m.get("mountPath") != SHM_MOUNT_PATH]
            target["volumeMounts"] = [*mounts, {"name": SHM_VOLUME, "mountPath": SHM_MOUNT_PATH}]
    labels = {names.LABEL_MANAGED_BY: names.MANAGED_BY, LABEL_CHECKPOINT: md["name"]}
    tmd = template.setdefault("metadata", {})
    tmd["labels"] = {**(tmd.get("labels") or {}), **labels}
    job_spec: dict = {"backoffLimit": 0, "template": template}
    if job.get("activeDeadlineSeconds"):
        job_spec["activeDeadlineSeconds"] = int(job["activeDeadlineSeconds"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name(md["name"]), "namespace": md["namespace"], "labels": labels},
        "spec": job_spec,
    }


@dataclass
class Step:
    status: dict
    conditions: list[Cond] = field(default_factory=list)
    create_job: bool = False
    delete_job: bool = False
    events: list[tuple[str, str, str]] = field(default_factory=list)


def job_outcome(job: dict | None) -> tuple[str, str, str | None]:
    """("missing" | "running" | "succeeded" | "failed", message, completion time)."""
    if job is None:
        return "missing", "", None
    st = job.get("status") or {}
    for c in st.get("conditions") or []:
        if c.get("status") != "True":
            continue
        if c.get("type") == "Complete":
            return "succeeded", "", st.get("completionTime") or c.get("lastTransitionTime")
        if c.get("type") == "Failed":
            return "failed", f"{c.get('reason') or 'Failed'}: {c.get('message') or 'Job failed'}", None
    return "running", "", None


def step(ckpt: dict, job: dict | None, enabled: bool, stall: Stall | None = None) -> Step:
    """The next step for a DynamoCheckpoint (wire form) given its Job, the configuration gate and, while the
    Job runs, why it is not getting anywhere (``checkpoint_stall.stall``)."""
    md = ckpt["metadata"]
    st = copy.deepcopy(ckpt.get("status") or {})
    phase = st.get("phase") or PENDING
    name = job_name(md["name"])
    if phase in TERMINAL:
        # the outcome is recorded; a Job still around is removed
        return Step(st, delete_job=job is not None)
    cid = checkpoint_id_of(ckpt)
    st["checkpointID"] = cid
    st["identityHash"] = cid
    if phase == PENDING:
        if not enabled:
            msg = (
                "checkpointing is disabled in the operator configuration: set checkpoint.enabled: true "
                "(Helm: dynamo-operator checkpoint values) to create the checkpoint Job"
            )
            st["phase"], st["message"] = PENDING, msg
            return Step(st, [Cond(READY_COND, False, R_DISABLED, msg)], events=[("Warning", R_DISABLED, msg)])
        st["phase"], st["jobName"] = CREATING, name
        msg = f"checkpoint Job {name} created"
        st["message"] = msg
        return Step(
            st,
            [Cond(READY_COND, False, R_JOB_CREATED, msg)],
            create_job=True,
            events=[("Normal", R_JOB_CREATED, msg)],
        )
    outcome, detail, finished = job_outcome(job)
    if outcome == "running" and stall is not None:
        msg = f"{stall.message}; {deadline_note(job or {})}"
        st["message"] = msg
        return Step(st, [Cond(READY_COND, False, stall.reason, msg)], events=[("Warning", stall.reason, msg)])
    if outcome == "running":
        msg = f"checkpoint Job {name} running"
        st["message"] = msg
        return Step(st, [Cond(READY_COND, False, R_JOB_RUNNING, msg)])
    if outcome == "succeeded":
        st["phase"] = READY
        st["createdAt"] = finished
        msg = f"checkpoint {cid} captured by Job {name}"
        st["message"] = msg
        return Step(
            st, [Cond(READY_COND, True, R_READY, msg)], delete_job=True, events=[("Normal", R_READY, msg)]
        )
    if outcome == "failed":
        reason, msg = R_JOB_FAILED, f"checkpoint Job {name} failed: {detail}"
    else:
        reason, msg = (
            R_JOB_LOST,
            f"checkpoint Job {name} was deleted before it finished; create the checkpoint again",
        )
    st["phase"] = FAILED
    st["message"] = msg
    return Step(
        st,
        [Cond(READY_COND, False, reason, msg)],
        delete_job=job is not None,
        events=[("Warning", reason, msg)],
    )
