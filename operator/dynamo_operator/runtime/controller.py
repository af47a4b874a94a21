"""Level-triggered controllers: events become ``Request(namespace, name)`` keys on a work queue; N workers
call ``reconcile(request) -> Result | None``.

* Primary events enqueue the object's own key; events on an owned child enqueue its *controller* owner
  (``ownerReferences[].controller == true``) when that owner is of the primary kind (any version of its
  group), for both the old and the new object of an update (an owner change enqueues both owners).
* ``Result(requeue_after=s)`` re-adds the key after ``s`` seconds (backoff forgotten);
  ``Result(requeue=True)`` re-adds it rate-limited; an exception re-adds it rate-limited and counts as an
  error in the metrics.
* Keys in a namespace claimed by a namespace-restricted operator are dropped at enqueue and again before
  reconcile.
* Periodic resync of the primary informer re-delivers every object (``RuntimeTunables.resync_period``).

``reconcile_context()`` gives a reconciler its logger (controller, namespace, name, reconcileID) and the
attempt.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .atomic import AtomicCounter
from .client import ResourceDescriptor
from .informer import Informer
from .log import KVLogger, get_logger
from .metrics import OperatorMetrics, classify_error
from .workqueue import RateLimiter, WorkQueue, default_controller_rate_limiter


@dataclass(frozen=True, order=True)
class Request:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Result:
    requeue: bool = False
    requeue_after: float | None = None


Reconciler = Callable[[Request], "Result | None"]
MapFunc = Callable[[dict], Iterable[Request]]


@dataclass
class ReconcileContext:
    controller: str
    request: Request
    reconcile_id: str
    log: KVLogger
    attempt: int


_ctx = threading.local()


def reconcile_context() -> ReconcileContext | None:
    """The context of the reconcile running on this thread (None outside a reconcile)."""
    return getattr(_ctx, "current", None)


def request_for(obj: dict) -> Request:
    md = obj.get("metadata") or {}
    return Request(md.get("namespace") or "", md.get("name") or "")


def owner_requests(primary: ResourceDescriptor, obj: dict) -> list[Request]:
    md = obj.get("metadata") or {}
    out = []
    for ref in md.get("ownerReferences") or []:
        if ref.get("controller") and primary.matches(ref.get("apiVersion", ""), ref.get("kind", "")):
            out.append(Request(md.get("namespace") or "", ref.get("name") or ""))
    return out


@dataclass
class Watch:
    """An extra watch: events on ``informer`` are mapped to requests by ``map_fn`` (enqueued ``delay``
    seconds later when given, coalescing a burst)."""

    informer: Informer
    map_fn: MapFunc
    delay: float | None = None


class Controller:
    def __init__(
        self,
        name: str,
        primary: ResourceDescriptor,
        primary_informer: Informer,
        reconcile: Reconciler,
        owned: list[tuple[ResourceDescriptor, Informer]] | None = None,
        watches: list[Watch] | None = None,
        workers: int = 1,
        metrics: OperatorMetrics | None = None,
        resource_type: str | None = None,
        is_excluded: Callable[[str], bool] | None = None,
        rate_limiter_factory: Callable[[], RateLimiter] = default_controller_rate_limiter,
        predicate: Callable[[dict | None, dict], bool] | None = None,
        owned_delay: float | None = None,
    ):
        self.name = name
        self.primary = primary
        self.primary_informer = primary_informer
        self.reconcile_fn = reconcile
        self.owned = owned or []
        self.watches = watches or []
        self.workers = max(1, workers)
        self.metrics = metrics or OperatorMetrics()
        self.resource_type = resource_type or primary.kind
        self.is_excluded = is_excluded or (lambda ns: False)
        self.rate_limiter_factory = rate_limiter_factory
        self.predicate = predicate
        # enqueue the owner this long after a child's event: the events of one burst (a child's status
        # moving through several states) then cost one reconcile, not one each
        self.owned_delay = owned_delay
        self.queue: WorkQueue | None = None
        self._threads: list[threading.Thread] = []
        self._handlers_registered = False
        self._stop = threading.Event()
        self._active = 0
        self._active_lock = threading.Lock()
        self._reconciles = AtomicCounter()  # reconciles finished, by every worker
        self.log = get_logger("controller", controller=name)

    # -- event plumbing -------------------------------------------------------------------------------------
    def enqueue(self, req: Request, after: float | None = None) -> None:
        q = self.queue
        if q is None or not req.name or self.is_excluded(req.namespace):
            return
        if after:
            q.add_after(req, after)
        else:
            q.add(req)

    def enqueue_namespace(self, namespace: str) -> int:
        """Enqueue every cached primary object in ``namespace`` (a namespace taken back from another
        operator)."""
        objs = self.primary_informer.store.list(namespace)
        for obj in objs:
            self.enqueue(request_for(obj))
        return len(objs)

    def _primary_handlers(self) -> dict[str, Callable]:
        def on_add(obj: dict) -> None:
            if self.predicate is None or self.predicate(None, obj):
                self.enqueue(request_for(obj))

        def on_update(old: dict, new: dict) -> None:
            if old is new or self.predicate is None or self.predicate(old, new):
                self.enqueue(request_for(new))

        def on_delete(obj: dict) -> None:
            self.enqueue(request_for(obj))

        return {"on_add": on_add, "on_update": on_update, "on_delete": on_delete}

    def _mapped_handlers(self, map_fn: MapFunc, after: float | None = None) -> dict[str, Callable]:
        def emit(obj: dict) -> None:
            for req in map_fn(obj):
                self.enqueue(req, after)

        def on_update(old: dict, new: dict) -> None:
            reqs = set(map_fn(new))
            if old is not new:
                reqs |= set(map_fn(old))
            for req in reqs:
                self.enqueue(req, after)

        return {"on_add": emit, "on_update": on_update, "on_delete": emit}

    def watch(self, informer: Informer, map_fn: MapFunc, delay: float | None = None) -> None:
        """Also reconcile what ``map_fn`` maps each event of ``informer`` to (the one way to relate another
        kind to this controller's objects; owned children and primaries are wired by ``Manager``)."""
        w = Watch(informer, map_fn, delay)
        self.watches.append(w)
        if self._handlers_registered:
            informer.add_event_handler(**self._mapped_handlers(w.map_fn, w.delay))

    # -- lifecycle ------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start workers (the manager calls this once this replica leads)."""
        if self.queue is not None:
            return
        self.queue = WorkQueue(
            self.name, rate_limiter=self.rate_limiter_factory(), metrics=self.metrics.queue(self.name)
        )
        if not self._handlers_registered:  # registering replays the cache as adds: the initial full sync
            self._handlers_registered = True
            self.primary_informer.add_event_handler(**self._primary_handlers())
            for _res, inf in self.owned:
                inf.add_event_handler(
                    **self._mapped_handlers(lambda o: owner_requests(self.primary, o), self.owned_delay)
                )
            for w in self.watches:
                w.informer.add_event_handler(**self._mapped_handlers(w.map_fn, w.delay))
        for i in range(self.workers):
            t = threading.Thread(target=self._worker, name=f"{self.name}-worker-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        t = threading.Thread(target=self._in_flight_loop, name=f"{self.name}-inflight", daemon=True)
        t.start()
        self.log.info("starting workers", workers=self.workers)

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self.queue is not None:
            self.queue.shutdown(drain=True, timeout=timeout)
        deadline = time.monotonic() + timeout
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(max(0.0, deadline - time.monotonic()))
        self._threads.clear()

    @property
    def reconciles(self) -> int:
        return self._reconciles.value

    def halt(self) -> None:
        """Stop taking work at once, without draining (lost leadership: another replica reconciles now)."""
        self._stop.set()
        if self.queue is not None:
            self.queue.shutdown()

    @property
    def idle(self) -> bool:
        """Nothing queued, no worker busy."""
        q = self.queue
        return self._active == 0 and (q is None or len(q) == 0)

    @property
    def running(self) -> bool:
        return self.queue is not None and not self._stop.is_set()

    def _in_flight_loop(self) -> None:
        while not self._stop.wait(1.0):
            q = self.queue
            if q is not None and q.metrics is not None:
                q.metrics.set_in_flight(*q.in_flight())

    # -- workers --------------------------------------------------------------------------------------------
    def _worker(self) -> None:
        q = self.queue
        assert q is not None
        while True:
            item, shutdown = q.get(timeout=1.0)
            if shutdown:
                return
            if item is None:
                continue
            try:
                self._process(q, item)
            except Exception:  # never lose a worker thread
                self.log.exception("worker failed", request=str(item))
                q.add_rate_limited(item)
            finally:
                q.done(item)

    def _process(self, q: WorkQueue, req: Request) -> None:
        if self.is_excluded(req.namespace):
            q.forget(req)
            return
        rid = str(uuid.uuid4())
        log = self.log.bind(namespace=req.namespace, name=req.name, reconcileID=rid)
        ctx = ReconcileContext(self.name, req, rid, log, q.num_requeues(req))
        _ctx.current = ctx
        with self._active_lock:
            self._active += 1
            self.metrics.controller_active_workers.labels(self.name).set(self._active)
        start = time.monotonic()
        err: BaseException | None = None
        result: Result | None = None
        try:
            result = self.reconcile_fn(req)
        except Exception as e:
            err = e
        finally:
            _ctx.current = None
            with self._active_lock:
                self._active -= 1
                self.metrics.controller_active_workers.labels(self.name).set(self._active)
        elapsed = time.monotonic() - start
        self._reconciles.add()
        ns = req.namespace
        if err is not None:
            self.metrics.observe_reconcile(self.resource_type, ns, "error", elapsed, err)
            self.metrics.controller_reconcile_total.labels(self.name, "error").inc()
            self.metrics.controller_reconcile_errors.labels(self.name).inc()
            log.error(
                "Reconciler error",
                exc_info=err,
                errorType=classify_error(err),
                attempt=ctx.attempt,
            )
            q.add_rate_limited(req)
            return
        result = result or Result()
        if result.requeue_after and result.requeue_after > 0:
            q.forget(req)
            q.add_after(req, result.requeue_after, requeue=True)
            outcome = "requeue"
        elif result.requeue:
            q.add_rate_limited(req)
            outcome = "requeue"
        else:
            q.forget(req)
            q.cancel_requeue(req)  # an earlier pass's wake-up is moot now
            outcome = "success"
        self.metrics.observe_reconcile(self.resource_type, ns, outcome, elapsed)
        self.metrics.controller_reconcile_total.labels(
            self.name, "requeue_after" if result.requeue_after else outcome
        ).inc()
        log.debug("reconciled", result=outcome, durationSeconds=round(elapsed, 4))
