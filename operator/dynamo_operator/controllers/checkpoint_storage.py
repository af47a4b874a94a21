"""The checkpoint storage's writes (``render/checkpoint_storage.py`` builds what they write).

``CheckpointClaim``: with ``checkpoint.storage.pvc.create`` (and checkpointing enabled), the claim
``checkpoint.storage.pvc.pvcName`` is created in the namespace of every checkpoint user (a graph with a
checkpoint component, a standalone DCD with one, a DynamoCheckpoint about to run its Job) when it is
missing. It is never updated, owned or deleted: it holds the namespace's checkpoints. A namespace whose
claim was seen is not looked at again for ``RECHECK_SECONDS`` (a claim the user made is outside the
operator's label-selected cache, and every reconcile of every graph would otherwise read it).

``CheckpointCleanup``: when an automatically created DynamoCheckpoint is deleted (it carries the
operator's finalizer from its creation), the Job ``checkpoint-cleanup-<id>`` removes its artifacts from the
claim; once the Job ends, either way, it is deleted and the finalizer released (best effort: a failure is a
Warning Event naming what to remove by hand, never a checkpoint held forever). Nothing to clean (no claim
in the namespace, an ID that names no plain directory) releases it at once; so does a namespace being
deleted (no Job can start there).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from kubernetes.client.exceptions import ApiException

from dynamo_operator.api.config import effective, lookup
from dynamo_operator.render import checkpoint as rc
from dynamo_operator.render import checkpoint_storage as rcs
from dynamo_operator.render.checkpoint_ids import checkpoint_id_of
from dynamo_operator.render.graph_checkpoint import ANN_AUTO
from dynamo_operator.render.security import harden_job
from dynamo_operator.runtime.client import PVCS
from dynamo_operator.runtime.controller import Result
from dynamo_operator.runtime.events import EventRecorder

from .common import Deps, log, namespace_terminating, short_error
from .lifecycle import CHECKPOINTS, FINALIZER, JOBS, get_or_none, set_finalizer

RECHECK_SECONDS = 300.0
CLEANUP_POLL_SECONDS = 5.0
# the Events of a finalized checkpoint: artifacts removed, nothing to remove, or removal failed
REASON_REMOVED, REASON_NOTHING, REASON_FAILED = (
    "CheckpointArtifactsRemoved",
    "CheckpointArtifactsNotFound",
    "CheckpointCleanupFailed",
)


def _claim_exists(client, cache, namespace: str, name: str) -> bool:
    """In the operator's label-selected claim cache, else one GET (a claim the user made)."""
    if cache is not None and cache.get(namespace, name) is not None:
        return True
    return get_or_none(client, PVCS, name, namespace) is not None


class CheckpointClaim:
    """Creates a namespace's checkpoint claim when it is missing (``ensure``)."""

    def __init__(
        self, client, recorder: EventRecorder, cache, config, clock: Callable[[], float] = time.monotonic
    ):
        self.client, self.recorder, self.cache = client, recorder, cache
        self.checkpoint = lookup(effective(config), "checkpoint") or {}
        self.enabled = rcs.storage_claim("", self.checkpoint) is not None
        self.clock = clock
        self._seen: dict[str, float] = {}  # namespace -> when its claim was last seen
        self._lock = threading.Lock()

    @classmethod
    def from_deps(cls, deps: Deps) -> CheckpointClaim:
        """For the DGD and DCD reconcilers: their client, recorder, claim cache and configuration."""
        return cls(deps.client, deps.recorder, deps.stores.get(PVCS), deps.operator_config)

    def _recently_seen(self, namespace: str) -> bool:
        with self._lock:
            at = self._seen.get(namespace)
            return at is not None and self.clock() - at < RECHECK_SECONDS

    def _mark(self, namespace: str) -> None:
        with self._lock:
            self._seen[namespace] = self.clock()

    def ensure(self, owner: dict, namespace: str) -> None:
        """The claim exists in ``namespace`` (created when missing); ``owner`` gets the Event."""
        if not self.enabled or self._recently_seen(namespace):
            return
        desired = rcs.storage_claim(namespace, self.checkpoint)
        if desired is None:
            return
        name = desired["metadata"]["name"]
        if not _claim_exists(self.client, self.cache, namespace, name):
            try:
                self.client.create(PVCS, desired, namespace)
            except ApiException as e:
                if e.status != 409:  # 409: created meanwhile, by another worker or the user
                    raise
            else:
                self.recorder.normal(
                    owner,
                    "SuccessfulCreate",
                    f"Created PersistentVolumeClaim {namespace}/{name} (checkpoint storage, "
                    f"{desired['spec']['resources']['requests']['storage']})",
                )
                log().info("checkpoint claim created", namespace=namespace, pvc=name)
        self._mark(namespace)


class CheckpointCleanup:
    """Finalizes deleted automatic DynamoCheckpoints: their artifacts' cleanup Job, then the finalizer."""

    def __init__(self, client, recorder: EventRecorder, config, restricted: bool = False):
        self.client, self.recorder = client, recorder
        self.checkpoint = lookup(effective(config), "checkpoint") or {}
        self.restricted = restricted  # security.workloads.restrictedSecurityContext

    @staticmethod
    def wants_finalizer(live: dict) -> bool:
        """An automatic checkpoint (the graph's) without the finalizer: one made before this release."""
        md = live["metadata"]
        auto = (md.get("annotations") or {}).get(ANN_AUTO) == "true"
        return auto and FINALIZER not in (md.get("finalizers") or [])

    def add_finalizer(self, live: dict) -> dict:
        return set_finalizer(self.client, CHECKPOINTS, live, True)

    def finalize(self, live: dict) -> Result:
        md = live["metadata"]
        if FINALIZER not in (md.get("finalizers") or []):
            return Result()
        cid = checkpoint_id_of(live)
        job = rcs.cleanup_job(live, cid, self.checkpoint)
        if job is None:
            return self._release(
                live, REASON_FAILED, f"checkpoint ID {cid!r} names no plain directory: nothing removed"
            )
        name, ns = job["metadata"]["name"], md["namespace"]
        current = get_or_none(self.client, JOBS, name, ns)
        if current is None:
            if not self._still_finalizing(live):  # a stale copy: the checkpoint was released, its Job deleted
                return Result()
            return self._start(live, job)
        outcome, detail, _ = rc.job_outcome(current)
        if outcome == "running":
            return Result(requeue_after=CLEANUP_POLL_SECONDS)
        self._delete_job(name, ns)
        path = f"{rcs.pvc_settings(self.checkpoint).get('basePath')}/{cid}"
        claim = rcs.pvc_settings(self.checkpoint).get("pvcName")
        if outcome == "succeeded":
            return self._release(
                live, REASON_REMOVED, f"removed {path} from PersistentVolumeClaim {ns}/{claim}"
            )
        return self._release(
            live,
            REASON_FAILED,
            f"cleanup Job {name} failed ({detail}); {path} may remain on PersistentVolumeClaim {ns}/{claim}: "
            "remove it by hand",
        )

    def _still_finalizing(self, live: dict) -> bool:
        """The checkpoint as the apiserver holds it still waits for its cleanup. A pass on a cached copy from
        before the release (the Job's deletion wakes one) would otherwise start a second Job that no
        checkpoint waits for, left until its TTL: one GET, only when no Job exists."""
        md = live["metadata"]
        fresh = get_or_none(self.client, CHECKPOINTS, md["name"], md["namespace"])
        fmd = (fresh or {}).get("metadata") or {}
        return fmd.get("uid") == md.get("uid") and FINALIZER in (fmd.get("finalizers") or [])

    def _start(self, live: dict, job: dict) -> Result:
        md = live["metadata"]
        ns, claim = md["namespace"], job["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]
        if not _claim_exists(self.client, None, ns, claim["claimName"]):
            return self._release(
                live, REASON_NOTHING, f"no PersistentVolumeClaim {ns}/{claim['claimName']}: nothing to remove"
            )
        try:
            self.client.create(JOBS, harden_job(job, self.restricted), ns)
        except ApiException as e:
            if namespace_terminating(e):  # no pod starts there any more: let the namespace go
                return self._release(
                    live, REASON_NOTHING, "the namespace is being deleted: no cleanup Job can run"
                )
            if e.status != 409:
                raise
        log().info("checkpoint cleanup job created", job=job["metadata"]["name"], namespace=ns)
        return Result(requeue_after=CLEANUP_POLL_SECONDS)

    def _delete_job(self, name: str, namespace: str) -> None:
        try:
            self.client.delete(JOBS, name, namespace)
        except Exception as e:  # its TTL removes it anyway
            log().info("could not delete the cleanup job", job=name, error=short_error(e))

    def _release(self, live: dict, reason: str, message: str) -> Result:
        """Report the outcome and let the checkpoint go."""
        type_ = "Warning" if reason == REASON_FAILED else "Normal"
        self.recorder.event(live, type_, reason, message)
        set_finalizer(self.client, CHECKPOINTS, live, False)
        return Result()


__all__ = [
    "CLEANUP_POLL_SECONDS",
    "REASON_FAILED",
    "REASON_NOTHING",
    "REASON_REMOVED",
    "RECHECK_SECONDS",
    "CheckpointClaim",
    "CheckpointCleanup",
]
