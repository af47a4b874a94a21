"""Kubernetes Events (core/v1) with client-go's correlation: spam filter, aggregation, de-duplication.

``EventRecorder.event(obj, type, reason, message)`` never blocks a reconciler: the event goes through the
``EventCorrelator`` (pure, synchronous, unit-testable) and the resulting create/patch is queued for a
background sender thread.  Semantics follow ``k8s.io/client-go/tools/record``:

* **spam filter**: a token bucket per (source, involved object): burst 25, one token per 5 minutes; an event
  without a token is dropped (like client-go's ``EventSourceObjectSpamFilter``);
* **aggregation**: events that differ only in their message are grouped by (source, involved object, type,
  reason); from the 10th distinct message within 10 minutes they collapse into one event whose message is
  ``(combined from similar events): <latest message>``;
* **de-duplication**: an event identical to one already sent (same source, involved object, type, reason,
  message) patches the existing Event's ``count`` and ``lastTimestamp`` instead of creating a new object;
  a patch that finds the Event gone (404, e.g. expired by the apiserver's TTL) creates a new one.

Write failures are logged and dropped (events are best-effort and must never fail a reconcile).
"""

from __future__ import annotations

import datetime as dt
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from kubernetes.client.exceptions import ApiException

from .atomic import AtomicCounter
from .client import EVENTS, ResourceClient
from .log import get_logger

NORMAL = "Normal"
WARNING = "Warning"

SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
CACHE_SIZE = 4096
MAX_MESSAGE = 1024
COMBINED_PREFIX = "(combined from similar events): "


def _now_rfc3339(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def object_reference(obj: dict) -> dict:
    """An ObjectReference (``involvedObject``) for a whole Kubernetes object dict."""
    md = obj.get("metadata") or {}
    ref = {
        "apiVersion": obj.get("apiVersion", ""),
        "kind": obj.get("kind", ""),
        "name": md.get("name", ""),
        "namespace": md.get("namespace", ""),
        "uid": md.get("uid", ""),
        "resourceVersion": md.get("resourceVersion", ""),
    }
    return {k: v for k, v in ref.items() if v}


@dataclass
class _Bucket:
    tokens: float
    last: float


@dataclass
class _Seen:
    """What the de-duplication cache remembers about an Event already written."""

    name: str
    namespace: str
    count: int
    body: dict  # the body of the create, to write it again when the Event is gone


@dataclass
class _Group:
    messages: dict[str, float] = field(default_factory=dict)  # message -> last seen


@dataclass(frozen=True)
class Action:
    """What the sender must do: ``create`` a new Event or ``patch`` an existing one (count+lastTimestamp)."""

    verb: str  # "create" | "patch"
    namespace: str
    name: str
    body: dict
    dedup_key: tuple


class _LRU(OrderedDict):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def put(self, key, value) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)

    def touch(self, key):
        v = self.get(key)
        if v is not None:
            self.move_to_end(key)
        return v


class EventCorrelator:
    """Pure event correlation: decides, per event, drop / create / patch (thread-safe)."""

    def __init__(
        self,
        component: str,
        instance: str = "",
        clock: Callable[[], float] = time.time,
        burst: int = SPAM_BURST,
        qps: float = SPAM_QPS,
        aggregate_max: int = AGGREGATE_MAX_EVENTS,
        aggregate_interval: float = AGGREGATE_INTERVAL,
        cache_size: int = CACHE_SIZE,
    ):
        self.component = component
        self.instance = instance
        self.clock = clock
        self.burst = burst
        self.qps = qps
        self.aggregate_max = aggregate_max
        self.aggregate_interval = aggregate_interval
        self._buckets: _LRU = _LRU(cache_size)
        self._groups: _LRU = _LRU(cache_size)
        self._seen: _LRU = _LRU(cache_size)
        self._lock = threading.Lock()
        self.dropped = 0

    def _allow(self, obj_key: tuple, now: float) -> bool:
        b = self._buckets.touch(obj_key)
        if b is None:
            b = _Bucket(float(self.burst), now)
            self._buckets.put(obj_key, b)
        b.tokens = min(float(self.burst), b.tokens + (now - b.last) * self.qps)
        b.last = now
        if b.tokens < 1.0:
            return False
        b.tokens -= 1.0
        return True

    def _aggregate(self, group_key: tuple, message: str, now: float) -> str:
        g = self._groups.touch(group_key)
        if g is None:
            g = _Group()
            self._groups.put(group_key, g)
        g.messages = {m: t for m, t in g.messages.items() if now - t <= self.aggregate_interval}
        g.messages[message] = now
        if len(g.messages) >= self.aggregate_max:
            return COMBINED_PREFIX + message
        return message

    def correlate(self, obj: dict, type_: str, reason: str, message: str) -> Action | None:
        """The write for one event, or None when the spam filter drops it."""
        ref = object_reference(obj)
        ns = ref.get("namespace") or "default"
        message = message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."
        obj_key = (self.component, ref.get("kind"), ns, ref.get("name"), ref.get("uid"))
        now = self.clock()
        ts = _now_rfc3339(now)
        with self._lock:
            if not self._allow(obj_key, now):
                self.dropped += 1
                return None
            group_key = (*obj_key, type_, reason)
            message = self._aggregate(group_key, message, now)
            # an aggregated event is one Event per group whose message follows the latest one (client-go)
            aggregated = message.startswith(COMBINED_PREFIX)
            dedup_key = (*group_key, None) if aggregated else (*group_key, message)
            seen = self._seen.touch(dedup_key)
            if seen is not None:
                seen.count += 1
                body = {"count": seen.count, "lastTimestamp": ts, "message": message}
                return Action("patch", seen.namespace, seen.name, body, dedup_key)
            name = f"{ref.get('name', 'unknown')}.{time.time_ns():x}"
            body = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "involvedObject": ref,
                "reason": reason,
                "message": message,
                "type": type_,
                "source": {"component": self.component},
                "firstTimestamp": ts,
                "lastTimestamp": ts,
                "count": 1,
                "reportingComponent": self.component,
            }
            if self.instance:
                body["reportingInstance"] = self.instance
            self._seen.put(dedup_key, _Seen(name, ns, 1, body))
            return Action("create", ns, name, body, dedup_key)

    def recreate(self, action: Action) -> Action:
        """A patched Event was gone (404): the create that replaces it, remembered under the same key."""
        ts = action.body.get("lastTimestamp") or _now_rfc3339(self.clock())
        with self._lock:
            seen = self._seen.get(action.dedup_key)
            template = seen.body if seen is not None else {}
            name = f"{action.name.rsplit('.', 1)[0]}.{time.time_ns():x}"
            body = {
                **template,
                "metadata": {"name": name, "namespace": action.namespace},
                "message": action.body.get("message", template.get("message", "")),
                "firstTimestamp": ts,
                "lastTimestamp": ts,
                "count": 1,
            }
            self._seen.put(action.dedup_key, _Seen(name, action.namespace, 1, body))
        return Action("create", action.namespace, name, body, action.dedup_key)


class EventRecorder:
    """Records Events for objects; writes happen on a background thread (``start``/``stop``).

    ``sync=True`` writes inline (tests)."""

    def __init__(
        self,
        client: ResourceClient | None,
        component: str = "dynamo-operator",
        instance: str = "",
        max_queue: int = 1000,
        sync: bool = False,
        correlator: EventCorrelator | None = None,
    ):
        self.client = client
        self.correlator = correlator or EventCorrelator(component, instance)
        self.sync = sync
        self._q: queue.Queue = queue.Queue(maxsize=max_queue)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._sent = AtomicCounter()  # events written (the sender thread, or workers in sync mode)
        self._failed = AtomicCounter()  # events lost: queue full (any thread) or the write failed
        self.log = get_logger("events", component=component)

    # -- API ------------------------------------------------------------------------------------------------
    def event(self, obj: dict, type_: str, reason: str, message: str) -> None:
        try:
            action = self.correlator.correlate(obj, type_, reason, message)
        except Exception:
            self.log.exception("event correlation failed", reason=reason)
            return
        if action is None:
            return
        if self.sync or self.client is None:
            if self.client is not None:
                self._send(action)
            return
        try:
            self._q.put_nowait(action)
        except queue.Full:
            self._failed.add()
            self.log.warning("event queue full, dropping event", reason=reason)

    @property
    def sent(self) -> int:
        return self._sent.value

    @property
    def failed(self) -> int:
        return self._failed.value

    def normal(self, obj: dict, reason: str, message: str) -> None:
        self.event(obj, NORMAL, reason, message)

    def warning(self, obj: dict, reason: str, message: str) -> None:
        self.event(obj, WARNING, reason, message)

    # -- lifecycle ------------------------------------------------------------------------------------------
    def start(self, stop_event: threading.Event | None = None) -> None:
        """Start the sender (``Manager.add_runnable`` compatible: returns at once)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="event-recorder", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Send what is queued (bounded by ``timeout``), then stop."""
        self.flush(timeout)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued event has been written (or ``timeout``)."""
        if self._thread is None:
            return self._q.empty()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._q.unfinished_tasks == 0:
                return True
            time.sleep(0.02)
        return self._q.unfinished_tasks == 0

    # -- sender ---------------------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                action = self._q.get(timeout=0.5)
            except queue.Empty:
                continue
            try:
                self._send(action)
            finally:
                self._q.task_done()

    def _send(self, action: Action) -> None:
        assert self.client is not None
        try:
            if action.verb == "patch":
                try:
                    self.client.patch(EVENTS, action.name, action.body, action.namespace)
                except ApiException as e:
                    if e.status != 404:
                        raise
                    action = self.correlator.recreate(action)
                    self.client.create(EVENTS, action.body, action.namespace)
            else:
                self.client.create(EVENTS, action.body, action.namespace)
            self._sent.add()
        except Exception as e:
            self._failed.add()
            self.log.warning(
                "could not write event",
                reason=action.body.get("reason"),
                error=str(getattr(e, "reason", "") or e),
            )
