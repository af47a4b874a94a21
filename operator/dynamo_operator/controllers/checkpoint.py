"""DynamoCheckpoint controller: creates the checkpoint Job while ``checkpoint.enabled`` is on in the
operator configuration (the namespace's checkpoint claim first, when ``checkpoint.storage.pvc.create``
asks the operator to create it), follows it to ``Ready`` or ``Failed`` (``render.checkpoint.step``), records
the outcome with an Event, then deletes the Job.  With checkpointing disabled (admission already refuses
new checkpoints then) an existing checkpoint stays ``Pending`` with the reason ``CheckpointingDisabled``.

A deleted automatic checkpoint (the graph's, created with the operator's finalizer) has its artifacts
removed by a cleanup Job before it goes (``checkpoint_storage.CheckpointCleanup``).
"""

from __future__ import annotations

from dynamo_operator.api.config import lookup
from dynamo_operator.render import checkpoint as rc
from dynamo_operator.render.checkpoint_storage import idle_claim_settings
from dynamo_operator.render.security import harden_job
from dynamo_operator.runtime.client import PVCS
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
    ):
        self.client = client
        self.recorder = recorder
        self.checkpoints, self.jobs = checkpoints, jobs
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
        s = rc.step(live, typed(job, JOBS), self.enabled)
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
        return Result()


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
    reconciler = CheckpointReconciler(
        m.client,
        w.recorder,
        m.informer(CHECKPOINTS).store,
        m.informer(JOBS, label_selector=rc.LABEL_CHECKPOINT, resync_period=0).store,
        enabled=bool(lookup(w.config, "checkpoint.enabled", False)),
        base_path=str(lookup(w.config, "checkpoint.storage.pvc.basePath", rc.DEFAULT_BASE_PATH)),
        restricted=restricted,
        storage=(claim, CheckpointCleanup(m.client, w.recorder, w.config, restricted)),
    )
    return m.add_controller(
        CONTROLLER,
        primary=CHECKPOINTS,
        reconcile=reconciler,
        owns=[(JOBS, rc.LABEL_CHECKPOINT)],
        workers=w.tunables.checkpoint_workers,
        resource_type=CHECKPOINTS.kind,
    )
