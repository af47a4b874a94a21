"""What both reconcilers share: the render context, status writes, failure handling."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client.exceptions import ApiException

from dynamo_operator import __version__
from dynamo_operator.api.config import lookup
from dynamo_operator.api.jsontree import copy_tree
from dynamo_operator.render import RenderContext, build_index
from dynamo_operator.render.mpisecret import key_id
from dynamo_operator.runtime.atomic import AtomicCounter
from dynamo_operator.runtime.client import SECRETS, ResourceClient, ResourceDescriptor
from dynamo_operator.runtime.controller import Request, Result, reconcile_context
from dynamo_operator.runtime.events import EventRecorder
from dynamo_operator.runtime.informer import PACKED, Indexer, unpack
from dynamo_operator.runtime.log import get_logger
from dynamo_operator.tunables import ControllerTunables

from . import store
from .status import status_equal
from .sync import Conflict, OwnershipConflict, RecentWrites


@dataclass
class Deps:
    """Everything a reconciler needs; built by ``setup`` from a Manager."""

    client: ResourceClient
    recorder: EventRecorder
    stores: dict[ResourceDescriptor, Indexer]
    secrets: Indexer | None = None
    operator_config: Any = None
    operator_version: str = __version__
    recent: RecentWrites = field(default_factory=RecentWrites)
    detected: frozenset[str] = frozenset()  # integrations served by the cluster (``discovery``)
    tunables: ControllerTunables = field(default_factory=ControllerTunables)
    # the cache of the MPI SSH Secret's name in every namespace (``wiring.mpi_secrets``), when the operator
    # provides the Secret (``mpi.sshSecretCopy``)
    mpi_secrets: Indexer | None = None
    # the cache of the per-namespace etcd client Secret's name (``wiring.etcd_clients``), when the operator
    # issues each namespace its own etcd access (``etcdAuth.method: namespaceCertificate``)
    etcd_clients: Indexer | None = None
    # the cache of the per-namespace NATS client Secret's name (``wiring.nats_clients``), when the operator
    # gives each namespace its own NATS account (``natsAuth.method: namespaceAccount``)
    nats_clients: Indexer | None = None

    def render_context(self, namespace: str | None) -> RenderContext:
        secrets = self.secrets.list(namespace) if (self.secrets is not None and namespace) else []
        return RenderContext(
            operator_config=self.operator_config,
            pull_secrets=build_index(secrets),
            operator_version=self.operator_version,
            detected=self.detected,
            checkpoints=self.checkpoints(namespace),
            mpi_ssh_key_id=self.mpi_ssh_key_id(namespace),
        )

    def mpi_ssh_key_id(self, namespace: str | None) -> str | None:
        """The id of the keys in the namespace's MPI SSH Secret as stored (freshest known version): what its
        multinode TensorRT-LLM pods are stamped with."""
        if self.mpi_secrets is None or not namespace:
            return None
        name = str(lookup(self.operator_config, "mpi.sshSecretName", ""))
        return key_id(self.recent.resolve(self.mpi_secrets.get(namespace, name)))

    def checkpoints(self, namespace: str | None) -> dict[str, dict]:
        """The namespace's DynamoCheckpoints by name (freshest known version), what restores and
        WaitForCheckpoint read."""
        cache = self.stores.get(store.CHECKPOINTS)
        if cache is None or not namespace:
            return {}
        out = {}
        for obj in cache.list(namespace):
            obj = self.recent.resolve(obj) or obj
            out[obj["metadata"]["name"]] = obj
        return out


def referrers(res: ResourceDescriptor) -> Callable[[dict], list[Request]]:
    """A watch map: every object of kind ``res`` in an object's owner references, controller or not (a
    shared ServiceAccount names its users with plain references)."""

    def map_fn(obj: dict) -> list[Request]:
        md = obj.get("metadata") or {}
        return [
            Request(md.get("namespace") or "", r.get("name") or "")
            for r in md.get("ownerReferences") or []
            if res.matches(r.get("apiVersion", ""), r.get("kind", ""))
        ]

    return map_fn


def log():
    ctx = reconcile_context()
    return ctx.log if ctx is not None else get_logger("controllers")


def awaiting_gc(e: OwnershipConflict, owner: dict) -> Result | None:
    """A short requeue when the children's controller is a deleted object of ``owner``'s kind and name (it was
    deleted and re-created, and the garbage collector has not removed the old children yet); None when
    another object really owns them."""
    if not e.previous_incarnation_of(owner):
        return None
    log().info("waiting for the garbage collector to remove the previous children", error=str(e))
    return Result(requeue_after=2)


@dataclass(frozen=True)
class Deferred:
    """A progress-only status held back: the pass requeues after ``seconds`` and writes the latest then."""

    seconds: float


class ProgressClock:
    """When the operator last wrote each object's status (by uid), to space out its progress-only writes.

    A progress write is due ``interval`` after the object's last write, and never sooner than ``settle``
    after the progress was first held back: components of one graph become ready seconds apart, and the
    progress seen a moment before the last of them would be overwritten by the readiness at once. An object
    this process has not written yet starts its clock when its first progress is held back.

    ``share`` (0: off) bounds the progress writes of all objects together: with more than ``share``
    objects holding progress back, each waits ``interval * waiting / share`` since its last write, so a
    burst of new objects writes about as much progress per interval as ``share`` objects would (progress
    is cosmetic; what someone must act on never waits). An object's due time only moves later while it
    holds progress back: the first objects of a burst stretch as the others arrive, and a burst ending
    does not release every straggler's progress at once."""

    def __init__(
        self,
        interval: float,
        settle: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        share: int = 0,
    ):
        self.interval = interval
        self.settle = settle
        self.clock = clock
        self.share = share
        self._last: OrderedDict[str, float] = OrderedDict()  # oldest first
        self._due: dict[str, float] = {}  # uid -> when its held-back progress goes out
        self._lock = threading.Lock()

    def wait(self, uid: str) -> float:
        """Seconds until ``uid`` may write progress (0: now)."""
        now = self.clock()
        with self._lock:
            last = self._last.setdefault(uid, now)
            held = self._due.get(uid)
            waiting = len(self._due) + (held is None)
            due = last + self._interval(waiting)
            due = max(due, now + self.settle) if held is None else max(due, held)
            self._due[uid] = due
        return max(0.0, due - now)

    def _interval(self, waiting: int) -> float:
        """The interval while ``waiting`` objects hold progress back."""
        if self.share <= 0:
            return self.interval
        return self.interval * max(1.0, waiting / self.share)

    def wrote(self, uid: str) -> None:
        now = self.clock()
        with self._lock:
            self._last[uid] = now
            self._last.move_to_end(uid)
            self._due.pop(uid, None)
            # entries long past their interval no longer hold anything back; bound the maps
            horizon = now - 10 * self.interval
            while self._last and next(iter(self._last.values())) < horizon:
                gone, _ = self._last.popitem(last=False)
                self._due.pop(gone, None)


class StatusWriter:
    """Writes a status through the status subresource, only when it changed.

    ``convert`` (the DGD and DCD controllers): ``status`` is in the internal (v1beta1) shape and is converted
    to the stored version's; kinds reconciled in their stored version (DGDR, DynamoModel, checkpoints) pass
    False. ``recent`` remembers each write so the next pass sees it before the informer does.
    ``progress`` (a ``ProgressClock``) spaces out the writes callers mark as progress-only."""

    def __init__(
        self,
        client: ResourceClient,
        res: ResourceDescriptor,
        recent: RecentWrites | None = None,
        convert: bool = True,
        progress: ProgressClock | None = None,
    ):
        self.client = client
        self.res = res
        self.recent = recent
        self.convert = convert
        self.progress = progress
        self._writes = AtomicCounter()  # status writes sent (a writer serves every worker)

    @property
    def writes(self) -> int:
        return self._writes.value

    def old(self, live_wire: dict) -> dict:
        """The live status in the shape callers compute theirs in."""
        return (store.to_internal(live_wire) if self.convert else live_wire).get("status") or {}

    def write(
        self, live_wire: dict, status: dict, progress_only: Callable[[dict, dict], bool] | None = None
    ) -> dict | Deferred | None:
        """The response of the write; None when ``status`` equals the live one (no request) or the object
        is gone; ``Deferred`` when ``progress_only(old, status)`` says it is progress and this object wrote
        within the writer's progress interval."""
        old = self.old(live_wire)
        if status_equal(old, status):
            return None
        uid = live_wire["metadata"].get("uid") or ""
        progress = self.progress is not None and progress_only is not None and progress_only(old, status)
        if progress and (wait := self.progress.wait(uid)) > 0:
            return Deferred(wait)
        body = unpack(live_wire) if PACKED in live_wire else copy_tree(live_wire)  # a lean entry: its whole
        body["metadata"].pop("managedFields", None)
        body["status"] = store.status_to_wire(live_wire, status) if self.convert else status
        try:
            out = self.client.replace(self.res, body, subresource="status")
        except ApiException as e:
            if e.status == 409:
                raise Conflict("status: " + str(e.reason)) from e
            if e.status == 404:
                return None  # deleted meanwhile
            raise
        self._writes.add()
        if self.progress is not None:
            self.progress.wrote(uid)
        out.setdefault("apiVersion", self.res.api_version)
        out.setdefault("kind", self.res.kind)
        if self.recent is not None:
            self.recent.remember(live_wire, out)
        return out


def paced_status_writer(deps: Deps, res: ResourceDescriptor) -> StatusWriter:
    """The DGD and DCD controllers' status writer: progress-only statuses (``status.dcd_progress_only`` /
    ``dgd_progress_only``) paced by ``status_progress_seconds``, ``status_progress_settle_seconds`` and
    ``status_progress_share`` of the tunables (one clock per controller, by object uid)."""
    t = deps.tunables
    clock = ProgressClock(
        t.status_progress_seconds, t.status_progress_settle_seconds, share=t.status_progress_share
    )
    return StatusWriter(deps.client, res, deps.recent, progress=clock)


def namespace_terminating(e: BaseException) -> bool:
    """403 NamespaceTerminating: the namespace and everything in it is going away; not worth an error."""
    if not isinstance(e, ApiException) or e.status != 403:
        return False
    body = e.body.decode(errors="replace") if isinstance(e.body, bytes) else str(e.body or "")
    return "NamespaceTerminating" in body


def short_error(e: BaseException) -> str:
    if isinstance(e, ApiException):
        body = e.body.decode(errors="replace") if isinstance(e.body, bytes) else e.body
        msg = ""
        if isinstance(body, str) and body.startswith("{"):
            import json

            try:
                msg = json.loads(body).get("message") or ""
            except ValueError:
                msg = ""
        return f"{e.status} {e.reason}: {msg}".strip(": ")
    return str(e) or type(e).__name__


def read_secret(deps: Deps, cache: Indexer | None, namespace: str, name: str) -> dict | None:
    """A Secret the operator keeps per namespace, from its name-scoped cache (the freshest of it and this
    process's own recent writes), or read when a reconciler runs without that cache; None when absent."""
    if cache is not None:
        cached = cache.get(namespace, name)
        return deps.recent.resolve(cached) if cached is not None else None
    try:
        return deps.client.get(SECRETS, name, namespace)
    except ApiException as e:
        if e.status == 404:
            return None
        raise


def release_secret(deps: Deps, have: dict, owner_uid: str) -> bool:
    """Drop ``owner_uid`` from the owners of the operator's per-namespace Secret ``have``; with the last owner
    gone, delete it, by uid (a Secret made again meanwhile stays). True when this call deleted it; a Secret
    already gone or changed meanwhile is left to the next pass."""
    md = have["metadata"]
    refs = md.get("ownerReferences") or []
    rest = [r for r in refs if r.get("uid") != owner_uid]
    if len(rest) == len(refs):
        return False
    try:
        if rest:
            body = {**have, "metadata": {**md, "ownerReferences": rest}}
            body["metadata"].pop("managedFields", None)
            deps.recent.remember(have, deps.client.replace(SECRETS, body))
            return False
        deps.client.delete(SECRETS, md["name"], md["namespace"], preconditions={"uid": md.get("uid")})
    except ApiException as e:
        if e.status not in (404, 409):
            raise
        return False
    return True


def replace_secret(deps: Deps, have: dict, body: dict) -> dict:
    """Write ``body`` over the Secret ``have`` (its resourceVersion guards the write) and remember the write
    for the cache; a concurrent change is a Conflict (the pass is retried)."""
    try:
        written = deps.client.replace(SECRETS, body)
    except ApiException as e:
        if e.status == 409:
            raise Conflict(str(e)) from e
        raise
    deps.recent.remember(have, written)
    return written
