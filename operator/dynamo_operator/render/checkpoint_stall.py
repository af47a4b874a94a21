"""Why a running checkpoint Job is not getting anywhere (pure: Job, pods and clock in; a verdict out).

A checkpoint Job finishes only when its target container exits: this platform has no snapshot agent (no
PodSnapshot capture, no CRIU DaemonSet), so the container itself must write the checkpoint under
``$DYN_CHECKPOINT_PATH`` and exit 0. A serving engine never does, and a pod that cannot be created,
scheduled or started never gets that far either; the Job controller then waits, at most until the Job's
``activeDeadlineSeconds`` (3600 s for a graph's checkpoint), and nothing said why. ``stall`` names the cause
once it has lasted ``bound`` seconds:

* ``JobPodNotCreated``: the Job has no pod (Kubernetes refused it: a missing RuntimeClass, a quota,
  a PodSecurity or webhook refusal; the Job controller's ``FailedCreate`` Event says which);
* ``JobPodUnschedulable``: the scheduler's message (no node with the GPUs, a claim that does not exist...);
* ``JobPodNotStarting``: a container waiting in an error (an image that cannot be pulled, a missing
  Secret or ConfigMap, a crash loop);
* ``CheckpointNotCaptured``: the target container runs and is Ready, and has not exited.

A stall is reported (condition, Event, the graph's message), never acted on: the cause may be fixed (a
RuntimeClass created, a node added), and an external agent a user added may still be capturing. The Job's
deadline ends it; ``deadline_note`` says when, or that nothing will.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

R_NOT_CREATED = "JobPodNotCreated"
R_UNSCHEDULABLE = "JobPodUnschedulable"
R_NOT_STARTING = "JobPodNotStarting"
R_NOT_CAPTURED = "CheckpointNotCaptured"
STALL_REASONS = frozenset({R_NOT_CREATED, R_UNSCHEDULABLE, R_NOT_STARTING, R_NOT_CAPTURED})
# container waiting reasons that do not go away by waiting (the kubelet retries, the outcome stays)
STUCK_WAITING = frozenset(
    {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
        "CreateContainerConfigError",
        "CreateContainerError",
        "RunContainerError",
        "CrashLoopBackOff",
    }
)
PULL_FAILURES = frozenset({"ErrImagePull", "ImagePullBackOff"})


@dataclass(frozen=True)
class Stall:
    reason: str
    message: str


@dataclass(frozen=True)
class Verdict:
    """A stall (or None) and, while none is due yet, in how many seconds one may be (None: no clock runs)."""

    stall: Stall | None
    recheck_in: float | None = None


def parse_time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _condition(pod: dict, type_: str) -> dict | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return c
    return None


def _live_pod(pods: list[dict]) -> dict | None:
    """The Job's current pod: not being deleted, not finished, the newest (backoffLimit 0: one at most)."""
    live = [
        p
        for p in pods
        if not (p.get("metadata") or {}).get("deletionTimestamp")
        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    ]
    return max(live, key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or "", default=None)


def _stuck_container(pod: dict) -> tuple[str, str, str, str] | None:
    """(container, image, waiting reason, kubelet message) of the first container stuck in an error."""
    st = pod.get("status") or {}
    spec = pod.get("spec") or {}
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    images = {c.get("name"): c.get("image", "") for c in containers}
    for cs in [*(st.get("initContainerStatuses") or []), *(st.get("containerStatuses") or [])]:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in STUCK_WAITING:
            name = cs.get("name", "")
            image = images.get(name) or cs.get("image", "")
            return name, image, waiting["reason"], waiting.get("message", "")
    return None


class _Clock:
    """Which stall is due: each candidate starts at a time; the first one past ``bound`` wins, else the
    soonest one to come is when to look again."""

    def __init__(self, now: float, bound: float):
        self.now, self.bound = now, bound
        self.due_in: float | None = None

    def due(self, since: float | None) -> bool:
        if since is None:
            return False
        left = since + self.bound - self.now
        if left <= 0:
            return True
        self.due_in = left if self.due_in is None else min(self.due_in, left)
        return False


def _pod_stall(pod: dict, job_name: str, clock: _Clock) -> Stall | None:
    name = (pod.get("metadata") or {}).get("name", "")
    where = f"pod {name} of checkpoint Job {job_name}"
    scheduled = _condition(pod, "PodScheduled")
    if scheduled and scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
        if clock.due(parse_time(scheduled.get("lastTransitionTime"))):
            detail = scheduled.get("message") or "no node fits it"
            return Stall(R_UNSCHEDULABLE, f"{where} cannot be scheduled: {detail}")
        return None
    stuck = _stuck_container(pod)
    started = parse_time((pod.get("status") or {}).get("startTime")) or parse_time(
        (pod.get("metadata") or {}).get("creationTimestamp")
    )
    if stuck is not None:
        if clock.due(started):
            container, image, reason, message = stuck
            if reason in PULL_FAILURES:
                detail = f"its image {image} cannot be pulled ({reason})"
            else:
                detail = f"{reason}: {message}" if message else reason
            return Stall(R_NOT_STARTING, f"container {container} of {where} does not start: {detail}")
        return None
    ready = _condition(pod, "Ready")
    if ready and ready.get("status") == "True" and clock.due(parse_time(ready.get("lastTransitionTime"))):
        return Stall(
            R_NOT_CAPTURED,
            f"{where} has been Ready for more than {clock.bound:.0f}s without exiting: nothing on this "
            "platform captures a running process (no snapshot agent), so the Job ends only when its target "
            "container writes the checkpoint under $DYN_CHECKPOINT_PATH and exits 0; a serving engine never "
            "does",
        )
    return None


def stall(job: dict, pods: list[dict], now: float, bound: float, failed_create: str | None = None) -> Verdict:
    """The verdict on a checkpoint Job that has not finished: ``pods`` are its pods, ``failed_create`` the
    message of the Job controller's latest ``FailedCreate`` Event, when the caller read one."""
    clock = _Clock(now, bound)
    job_name = (job.get("metadata") or {}).get("name", "")
    pod = _live_pod(pods)
    if pod is None:
        if pods:  # a finished or deleted pod: the Job controller records the outcome next
            return Verdict(None)
        if clock.due(parse_time((job.get("metadata") or {}).get("creationTimestamp"))):
            why = failed_create or "the Job controller's FailedCreate Events say why (kubectl describe job)"
            return Verdict(Stall(R_NOT_CREATED, f"checkpoint Job {job_name} has no pod: {why}"))
        return Verdict(None, clock.due_in)
    found = _pod_stall(pod, job_name, clock)
    return Verdict(found, None if found else clock.due_in)


def needs_events(job: dict, pods: list[dict], now: float, bound: float) -> bool:
    """Whether the Job's own Events are worth reading: it has had no pod for ``bound`` seconds."""
    created = parse_time((job.get("metadata") or {}).get("creationTimestamp"))
    return not pods and created is not None and now - created >= bound


def deadline_note(job: dict) -> str:
    """When the Job's deadline ends the wait (or that none will), for the stall's message."""
    seconds = (job.get("spec") or {}).get("activeDeadlineSeconds")
    if seconds:
        return f"the Job fails at its deadline ({int(seconds)}s after it started) unless this is resolved"
    return "the Job has no deadline: fix the cause, or delete the DynamoCheckpoint"
