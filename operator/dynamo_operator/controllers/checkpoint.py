"""DynamoCheckpoint controller: creates the checkpoint Job while ``checkpoint.enabled`` is on in the
operator configuration (the namespace's checkpoint claim first, when ``checkpoint.storage.pvc.create``
asks the operator to create it), follows it to ``Ready`` or ``Failed`` (``render.checkpoint.step``), records
the outcome with an Event, then deletes the Job.  With checkpointing disabled (admission already refuses
new checkpoints then) an existing checkpoint stays ``Pending`` with the reason ``CheckpointingDisabled``.

While the Job runs, its pods (a label-selected cache) say whether it is getting anywhere: a pod that cannot
be created, scheduled or started, or a target that serves and never exits, is reported once it has lasted
``checkpoint_stall_seconds`` (``render/checkpoint_stall.py``); the reconcile asks to be woken when that
bound is due, so a stall is named within it even when nothing else changes.

A deleted automatic checkpoint (the graph's, created with the operator's finalizer) has its artifacts
removed by a cleanup Job before it goes (``checkpoint_storage.CheckpointCleanup``).
"""

from __future__ import annotations

import time

from dynamo_operator.api.config import lookup
from dynamo_operator.render import checkpoint as rc
from dynamo_operator.render import checkpoint_stall as stall
from dynamo_operator.render.checkpoint_storage import idle_claim_settings
from dynamo_operator.render.security import harden_job
from dynamo_operator.runtime.client import EVENTS, PODS, PVCS
from dynamo_operator.runtime.controller import Controller, Request, Result
from dynamo_operator.runtime.events import EventRecorder
from dynamo_operator.runtime.informer import Indexer

from .checkpoint_storage import CheckpointClaim, CheckpointCleanup
from .common import StatusWriter, log, short_error
from .lifecycle import (
    CHECKPOINTS,
    JOBS,
    apply_conditions,
    create_child,
    get_or_none,
    guarded,
    typed,
)
from .wiring import Wiring

POD_INDEX = "checkpoint"


def checkpoint_of_pod(pod: dict) -> list[str]:
    """Index: a checkpoint Job's pod under ``<namespace>/<checkpoint>`` (the template's label)."""
    md = pod.get("metadata") or {}
    name = (md.get("labels") or {}).get(rc.LABEL_CHECKPOINT)
    return [f"{md.get('namespace')}/{name}"] if name else []


def pod_to_checkpoint(pod: dict) -> list[Request]:
    md = pod.get("metadata") or {}
    name = (md.get("labels") or {}).get(rc.LABEL_CHECKPOINT)
    return [Request(md.get("namespace") or "", name)] if name else []


class CheckpointReconciler:
    def __init__(
        self,
        client,
        recorder: EventRecorder,
        checkpoints: Indexer,
        jobs: Indexer,
        enabled: bool,
        base_path: str = rc.DEFAULT_BASE_PATH,
        restricted: bool = False,
        storage: tuple[CheckpointClaim, CheckpointCleanup] | None = None,
        pods: Indexer | None = None,
        stall_seconds: float = 60.0,
    ):
        self.client = client
        self.recorder = recorder
        self.checkpoints, self.jobs, self.pods = checkpoints, jobs, pods
        self.stall_seconds = stall_seconds
        self.enabled = enabled
        self.base_path = base_path
        self.restricted = restricted  # security.workloads.restrictedSecurityContext
        self.status = StatusWriter(client, CHECKPOINTS, convert=False)
        self.claim, self.cleanup = storage or (None, None)

    def __call__(self, req: Request) -> Result:
        live = typed(self.checkpoints.get(req.namespace, req.name), CHECKPOINTS)
        if live is None:
            return Result()
        if live["metadata"].get("deletionTimestamp"):
            if self.cleanup is None:
                return Result()
            return guarded(self.recorder, live, lambda: self.cleanup.finalize(live))
        return guarded(self.recorder, live, lambda: self._reconcile(req, live))

    def _reconcile(self, req: Request, live: dict) -> Result:
        if self.cleanup is not None and self.cleanup.wants_finalizer(live):
            live = self.cleanup.add_finalizer(live)  # an automatic checkpoint made before cleanup existed
        name = rc.job_name(req.name)
        job = self.jobs.get(req.namespace, name)
        if job is None and (live.get("status") or {}).get("phase") == rc.CREATING:
            job = get_or_none(self.client, JOBS, name, req.namespace)  # the cache may lag our create
        job = typed(job, JOBS)
        verdict = self._verdict(live, job)
        s = rc.step(live, job, self.enabled, verdict.stall)
        if s.create_job:
            if self.claim is not None:  # the Job mounts the namespace's checkpoint claim
                self.claim.ensure(live, req.namespace)
            template = ((live.get("spec") or {}).get("job") or {}).get("podTemplateSpec") or {}
            job = rc.checkpoint_job(live, self.base_path)
            job = harden_job(job, self.restricted, template.get("spec") or {})
            create_child(self.client, JOBS, live, job)
            log().info("checkpoint job created", job=name)
        status = apply_conditions(s.status, s.conditions, live["metadata"].get("generation"))
        written = self.status.write(live, status)
        if written is not None:
            for type_, reason, message in s.events:
                self.recorder.event(live, type_, reason, message)
        if s.delete_job and job is not None and (written is not None or not s.conditions):
            try:
                self.client.delete(JOBS, name, req.namespace)
            except Exception as e:  # the outcome is recorded; a leftover Job is only clutter
                log().info("could not delete the checkpoint job", job=name, error=short_error(e))
        if s.status.get("phase") == rc.CREATING and verdict.recheck_in is not None:
            return Result(requeue_after=verdict.recheck_in + 1.0)
        return Result()

    def _verdict(self, live: dict, job: dict | None) -> stall.Verdict:
        """Whether the running Job is stalled, from its pods (and, when it has none, its Events)."""
        if job is None or self.pods is None or (live.get("status") or {}).get("phase") != rc.CREATING:
            return stall.Verdict(None)
        if rc.job_outcome(job)[0] != "running":
            return stall.Verdict(None)
        md = live["metadata"]
        uid = (job.get("metadata") or {}).get("uid")
        indexed = self.pods.by_index(POD_INDEX, f"{md['namespace']}/{md['name']}")
        pods = [p for p in indexed if _owned_by(p, uid)]
        now = time.time()
        failed_create = None
        if stall.needs_events(job, pods, now, self.stall_seconds):
            failed_create = self._failed_create(md["namespace"], uid)
        return stall.stall(job, pods, now, self.stall_seconds, failed_create)

    def _failed_create(self, namespace: str, uid: str | None) -> str | None:
        """The message of the Job controller's latest ``FailedCreate`` Event on the Job: why it has no pod."""
        if not uid:
            return None
        try:
            events = (
                self.client.list(
                    EVENTS, namespace, field_selector=f"involvedObject.uid={uid},reason=FailedCreate"
                ).get("items")
                or []
            )
        except Exception as e:  # the stall is still reported, pointing at kubectl describe
            log().info("could not read the checkpoint job's events", error=short_error(e))
            return None
        latest = max(events, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "", default=None)
        return (latest or {}).get("message") or None


def _owned_by(pod: dict, uid: str | None) -> bool:
    refs = (pod.get("metadata") or {}).get("ownerReferences") or []
    return uid is None or any(r.get("uid") == uid for r in refs)


CONTROLLER = "DynamoCheckpoint"


def register(w: Wiring) -> Controller:
    """Always registered: existing checkpoints report why nothing happens while ``checkpoint.enabled`` is
    off; it owns its Jobs."""
    m = w.manager
    restricted = bool(lookup(w.config, "security.workloads.restrictedSecurityContext", False))
    idle = idle_claim_settings(lookup(w.config, "checkpoint"))
    if idle:
        log().warning(
            "no effect without checkpoint.storage.pvc.create: true (no claim is created)", keys=idle
        )
    claim = CheckpointClaim(m.client, w.recorder, w.deps.stores.get(PVCS), w.config)
    # the checkpoint Jobs' pods (their template's label): whether a running Job is getting anywhere
    pods = m.informer(PODS, label_selector=rc.LABEL_CHECKPOINT, resync_period=0)
    pods.store.add_indexer(POD_INDEX, checkpoint_of_pod)
    reconciler = CheckpointReconciler(
        m.client,
        w.recorder,
        m.informer(CHECKPOINTS).store,
        m.informer(JOBS, label_selector=rc.LABEL_CHECKPOINT, resync_period=0).store,
        enabled=bool(lookup(w.config, "checkpoint.enabled", False)),
        base_path=str(lookup(w.config, "checkpoint.storage.pvc.basePath", rc.DEFAULT_BASE_PATH)),
        restricted=restricted,
        storage=(claim, CheckpointCleanup(m.client, w.recorder, w.config, restricted)),
        pods=pods.store,
        stall_seconds=w.tunables.checkpoint_stall_seconds,
    )
    ctl = m.add_controller(
        CONTROLLER,
        primary=CHECKPOINTS,
        reconcile=reconciler,
        owns=[(JOBS, rc.LABEL_CHECKPOINT)],
        workers=w.tunables.checkpoint_workers,
        resource_type=CHECKPOINTS.kind,
    )
    ctl.watch(pods, pod_to_checkpoint)
    return ctl
