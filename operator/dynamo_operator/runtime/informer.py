"""Watch caches (informers): list, then watch from the list's resourceVersion, keep an indexed store, call
handlers.

client-go's reflector + DeltaFIFO + indexer, reduced to what a level-triggered operator needs:

* the initial state is streamed (**watch-list**: a watch with ``sendInitialEvents=true``, the apiserver's
  ``ADDED`` events for every object and a bookmark marking their end, then the watch goes on): objects
  arrive and are compacted one at a time, so a restart over thousands of objects never holds a page of
  full objects; where the apiserver does not stream (older versions, the feature gate off: the request is
  refused, or the stream ends without the end bookmark), a paginated list replaces the store instead,
  compacted page by page. Either way the difference to the store is emitted as add/update/delete, then
  the watch continues from the last resourceVersion with ``allowWatchBookmarks`` (bookmarks only advance
  the resourceVersion);
* a watch that ends normally (server ``timeoutSeconds``) resumes from the last resourceVersion seen;
* ``410 Gone`` (as an HTTP status or as an ``ERROR`` event, "too old resource version") → relist;
* a watch silent for ``watch_inactivity_timeout`` (no event, no bookmark, not ended by the server) is dead
  without having been closed: it is dropped and re-established at once from the last resourceVersion;
* other errors → capped exponential backoff, then resume;
* periodic resync re-delivers every cached object to ``on_update(old, new)`` with ``old is new``;
* indexes by namespace and by owner UID (``by_index("owner", uid)``);
* the cache is lean (``compact``): no ``metadata.managedFields`` (controller-runtime's default cache
  transform: no reconciler reads them, and they are often a third of an object), and every key and short
  string is interned, so thousands of Deployments share one copy of ``"terminationMessagePath"`` instead of
  each holding its own (the JSON decoder shares strings only within one document); measured on the
  benchmark's Deployments this halves the cache's memory for about 50 µs of CPU per event;
* an informer's ``transform`` (default ``compact``) may keep less: only what its readers use
  (``controllers/caches.py``), and, for objects one reader needs whole, the whole object packed
  (``packed`` / ``unpack``: zlib with a dictionary of the first object of the informer, a few hundred bytes
  where the decoded dicts took several kilobytes).

Handlers run on the informer's own thread: they must be cheap (controllers only enqueue keys). One daemon
thread per informer; ``stop()`` closes the open watch so the thread exits promptly.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
import random
import sys
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kubernetes.client.exceptions import ApiException

from .client import ResourceClient, ResourceDescriptor, WatchSilent, obj_key
from .log import get_logger
from .settings import RuntimeTunables

_DEFAULTS = RuntimeTunables()

IndexFunc = Callable[[dict], list[str]]


INTERN_MAX = 64  # longer strings (messages, images, commands) are rarely shared
# Values no two objects share: interning them saves nothing and costs an entry each in the interpreter's
# table of interned strings (at 5000 graphs, hundreds of thousands: tens of megabytes).
UNIQUE_VALUES = frozenset(
    {
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "lastTransitionTime",
        "lastUpdateTime",
        "lastProbeTime",
        "lastHeartbeatTime",
        "startTime",
    }
)


def _interned(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            sys.intern(k): v if k in UNIQUE_VALUES and isinstance(v, str) else _interned(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_interned(v) for v in value]
    if isinstance(value, str) and len(value) <= INTERN_MAX:
        return sys.intern(value)
    return value


def _without_managed_fields(obj: dict) -> dict:
    md = obj.get("metadata")
    if md:
        md.pop("managedFields", None)
    return obj


def compact(obj: dict) -> dict:
    """The object as the cache keeps it: without ``metadata.managedFields`` (a write without them keeps the
    server's), keys and short strings interned (but for ``UNIQUE_VALUES``)."""
    return _interned(_without_managed_fields(obj))


Transform = Callable[[dict], dict]

PACKED = "\x00packed"  # the key of a lean cached object that holds the whole object, packed


class Packer:
    """Packs whole objects of one kind into zlib streams that share a dictionary: the first object packed
    (its JSON), which holds the keys, labels and defaults every object of the kind repeats. Thread-safe
    once the dictionary is set (the informer's thread packs, reconcilers unpack)."""

    def __init__(self) -> None:
        self._zdict: bytes | None = None
        self._lock = threading.Lock()

    def pack(self, obj: dict) -> bytes:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        with self._lock:
            if self._zdict is None:
                self._zdict = raw[-32768:]  # zlib's window
        c = zlib.compressobj(6, zdict=self._zdict)
        return c.compress(raw) + c.flush()

    def unpack(self, blob: bytes) -> dict:
        assert self._zdict is not None
        d = zlib.decompressobj(zdict=self._zdict)
        return json.loads(d.decompress(blob) + d.flush())


def packed(lean: Transform) -> Transform:
    """A transform keeping ``lean(obj)`` (what the cache's readers use) and the whole object packed under
    ``PACKED`` for the one reader that needs it whole (``unpack``)."""
    packer = Packer()

    def transform(obj: dict) -> dict:
        whole = _without_managed_fields(obj)
        view = compact(lean(whole))
        view[PACKED] = (packer, packer.pack(whole))
        return view

    return transform


def unpack(obj: dict) -> dict:
    """The whole object of a cache entry a ``packed`` transform made (a new dict); any other object as
    it is."""
    entry = obj.get(PACKED)
    if entry is None:
        return obj
    packer, blob = entry
    return packer.unpack(blob)


def release_memory(collect: bool = True, full: bool = False) -> None:
    """Return freed memory to the system: collect cycles (``collect``), then (glibc) trim the heap. Run
    once the caches have synced (a restart kept the peak of its first lists for good) and when the
    controllers go idle after work (``Manager``). The trim runs without the GIL.

    A collection also freezes what survives it (``gc.freeze``). Without that, the interpreter's own full
    collections walked every cached object again and again, finding nothing: 67-153 ms each at 1000 graphs
    (the bench's operator, ``collected=0``), a pause of every thread, admission reviews included, a few
    times a minute while anything allocates. Frozen objects are still freed by reference counting when a
    cache drops them (cached objects are JSON trees, without cycles), and later collections walk only what
    came since the last freeze. A cycle among frozen objects would wait for a ``full`` pass, which unfreezes
    everything first (the ``Manager`` runs one when idle, at most once per ``memory_full_collect_interval``).
    """
    if collect:
        if full:
            gc.unfreeze()
        gc.collect()
        gc.freeze()
    name = ctypes.util.find_library("c")
    if not name:
        return
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return
    trim(0)


def index_by_namespace(obj: dict) -> list[str]:
    return [(obj.get("metadata") or {}).get("namespace") or ""]


def index_by_owner_uid(obj: dict) -> list[str]:
    return [r["uid"] for r in (obj.get("metadata") or {}).get("ownerReferences") or [] if r.get("uid")]


DEFAULT_INDEXERS: dict[str, IndexFunc] = {"namespace": index_by_namespace, "owner": index_by_owner_uid}


def _index_add(index: dict[str, str | set[str]], value: str, key: str) -> None:
    have = index.get(value)
    if have is None:
        index[value] = key
    elif isinstance(have, str):
        if have != key:
            index[value] = {have, key}
    else:
        have.add(key)


def _index_remove(index: dict[str, str | set[str]], value: str, key: str) -> None:
    have = index.get(value)
    if have is None:
        return
    if isinstance(have, str):
        if have == key:
            del index[value]
        return
    have.discard(key)
    if len(have) == 1:
        index[value] = next(iter(have))
    elif not have:
        del index[value]


class Indexer:
    """Thread-safe object store keyed by ``namespace/name`` with secondary indexes.

    An index maps a value to its one key (a string) or to a set of keys: most values (an owner's uid, a
    component) name one object, and a set per object was a fifth of a lean cache's memory."""

    def __init__(self, indexers: dict[str, IndexFunc] | None = None):
        self._lock = threading.RLock()
        self._items: dict[str, dict] = {}
        self._indexers = dict(DEFAULT_INDEXERS if indexers is None else indexers)
        self._indices: dict[str, dict[str, str | set[str]]] = {n: {} for n in self._indexers}

    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        with self._lock:
            self._indexers[name] = fn
            self._indices[name] = {}
            for key, obj in self._items.items():
                for v in fn(obj):
                    _index_add(self._indices[name], v, key)

    def _reindex(self, key: str, old: dict | None, new: dict | None) -> None:
        for name, fn in self._indexers.items():
            before = fn(old) if old is not None else []
            after = fn(new) if new is not None else []
            if before == after:
                continue
            index = self._indices[name]
            for v in before:
                _index_remove(index, v, key)
            for v in after:
                _index_add(index, v, key)

    def upsert(self, obj: dict) -> dict | None:
        key = obj_key(obj)
        with self._lock:
            old = self._items.get(key)
            self._items[key] = obj
            self._reindex(key, old, obj)
            return old

    def delete(self, obj: dict) -> dict | None:
        key = obj_key(obj)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._reindex(key, old, None)
            return old

    def get(self, namespace: str | None, name: str) -> dict | None:
        with self._lock:
            return self._items.get(f"{namespace}/{name}" if namespace else name)

    def get_by_key(self, key: str) -> dict | None:
        with self._lock:
            return self._items.get(key)

    def list(self, namespace: str | None = None) -> list[dict]:
        if namespace is not None:
            return self.by_index("namespace", namespace)
        with self._lock:
            return list(self._items.values())

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._items)

    def by_index(self, name: str, value: str) -> list[dict]:
        with self._lock:
            keys = self._indices[name].get(value)
            if keys is None:
                return []
            if isinstance(keys, str):
                return [self._items[keys]]
            return [self._items[k] for k in sorted(keys)]

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


class WatchHandle(Protocol):
    def __iter__(self): ...
    def close(self) -> None: ...


class ListWatcher(Protocol):
    """The informer's source; ``ClientListWatcher`` talks to an apiserver, tests can script one. A source
    that can stream the initial state also has ``watch_list() -> WatchHandle``."""

    def list(self, transform: Transform = ...) -> tuple[list[dict], str]: ...
    def watch(self, resource_version: str) -> WatchHandle: ...


class ClientListWatcher:
    def __init__(
        self,
        client: ResourceClient,
        res: ResourceDescriptor,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        watch_timeout: tuple[int, int] = _DEFAULTS.watch_timeout,
        inactivity_timeout: float = _DEFAULTS.watch_inactivity_timeout,
    ):
        self.client = client
        self.res = res
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        if not 0 < watch_timeout[0] <= watch_timeout[1] < inactivity_timeout:
            raise ValueError(
                f"watch_timeout {watch_timeout} must end before the inactivity timeout "
                f"({inactivity_timeout}s), or healthy watches would be taken for dead ones"
            )
        self.watch_timeout = watch_timeout
        self.inactivity_timeout = inactivity_timeout

    def list(self, transform: Transform = compact) -> tuple[list[dict], str]:
        return self.client.list_all(
            self.res,
            self.namespace,
            transform=transform,  # page by page: a relist of thousands never holds them all in full
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            limit=LIST_PAGE,
        )

    def watch_list(self) -> WatchHandle:
        """A watch that first streams every object (``sendInitialEvents``), then goes on."""
        return self.client.watch(
            self.res,
            self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            timeout_seconds=random.randint(*self.watch_timeout),
            inactivity_timeout=self.inactivity_timeout,
            send_initial_events=True,
        )

    def watch(self, resource_version: str) -> WatchHandle:
        return self.client.watch(
            self.res,
            self.namespace,
            resource_version=resource_version,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            timeout_seconds=random.randint(*self.watch_timeout),
            inactivity_timeout=self.inactivity_timeout,
        )


LIST_PAGE = 100  # objects a page (the fallback list): a smaller page is a smaller peak of full objects
INITIAL_EVENTS_END = "k8s.io/initial-events-end"  # the bookmark annotation ending a watch-list's state


class GoneError(Exception):
    """The resourceVersion is too old (HTTP 410 / watch ERROR 410): relist."""


class NoWatchList(Exception):
    """The apiserver does not stream the initial state: list instead."""


@dataclass
class _Handler:
    on_add: Callable[[dict], None] | None
    on_update: Callable[[dict, dict], None] | None
    on_delete: Callable[[dict], None] | None


class Informer:
    def __init__(
        self,
        res: ResourceDescriptor,
        list_watcher: ListWatcher,
        resync_period: float = 0.0,
        name: str | None = None,
        indexers: dict[str, IndexFunc] | None = None,
        backoff: tuple[float, float] = _DEFAULTS.list_watch_backoff,
        transform: Transform = compact,
    ):
        self.res = res
        self.lw = list_watcher
        self.transform = transform
        # stream the initial state when the source can (``watch_list``) until the apiserver shows it cannot
        self.stream_initial = hasattr(list_watcher, "watch_list")
        self.resync_period = resync_period
        self.name = name or str(res)
        self.store = Indexer(indexers)
        self.backoff = backoff
        self.resource_version = ""
        self.relists = 0
        self.silent_watches = 0  # watches dropped for silence (each re-established at once)
        self._handlers: list[_Handler] = []
        self._hlock = threading.RLock()
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._watch: WatchHandle | None = None
        self._thread: threading.Thread | None = None
        self._resync_thread: threading.Thread | None = None
        self.log = get_logger("informer", resource=self.name)

    # -- handlers -------------------------------------------------------------------------------------------
    def add_event_handler(
        self,
        on_add: Callable[[dict], None] | None = None,
        on_update: Callable[[dict, dict], None] | None = None,
        on_delete: Callable[[dict], None] | None = None,
    ) -> None:
        """Register handlers; objects already cached are replayed as adds (like client-go)."""
        h = _Handler(on_add, on_update, on_delete)
        with self._hlock:
            self._handlers.append(h)
            if on_add is not None:
                for obj in self.store.list():
                    self._call(on_add, obj)

    def _call(self, fn: Callable, *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            self.log.exception("event handler failed")

    def _emit_add(self, obj: dict) -> None:
        with self._hlock:
            for h in self._handlers:
                if h.on_add:
                    self._call(h.on_add, obj)

    def _emit_update(self, old: dict, new: dict) -> None:
        with self._hlock:
            for h in self._handlers:
                if h.on_update:
                    self._call(h.on_update, old, new)

    def _emit_delete(self, obj: dict) -> None:
        with self._hlock:
            for h in self._handlers:
                if h.on_delete:
                    self._call(h.on_delete, obj)

    # -- lifecycle ------------------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.name}", daemon=True)
        self._thread.start()
        if self.resync_period > 0:
            self._resync_thread = threading.Thread(
                target=self._resync_loop, name=f"resync-{self.name}", daemon=True
            )
            self._resync_thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        w = self._watch
        if w is not None:
            w.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def has_synced(self) -> bool:
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        return self._synced.wait(timeout)

    # -- reflector ------------------------------------------------------------------------------------------
    def _run(self) -> None:
        failures = 0
        need_list = True
        while not self._stop.is_set():
            try:
                if need_list and self.stream_initial:
                    streamed = self.relists
                    try:
                        self._watch_list()  # the state, then the watch until the stream ends
                    finally:
                        # once the initial state has arrived, the stream is a watch like any other: a silent
                        # or broken one resumes from its resourceVersion (below), it does not stream it again
                        if self.relists > streamed:
                            need_list, failures = False, 0
                    continue
                if need_list:
                    self._relist()
                    need_list = False
                self._watch_once()
                failures = 0
            except NoWatchList as e:
                self.stream_initial = False
                self.log.info("the apiserver does not stream the initial state; listing", reason=str(e))
            except GoneError:
                self.log.info("resourceVersion too old, relisting", resourceVersion=self.resource_version)
                need_list = True
            except WatchSilent as e:
                self.silent_watches += 1
                rv = self.resource_version
                self.log.warning("watch went silent, re-establishing it", error=str(e), resourceVersion=rv)
            except Exception as e:
                if self._stop.is_set():
                    break
                if isinstance(e, ApiException) and e.status == 410:
                    need_list = True
                    continue
                failures += 1
                delay = min(self.backoff[0] * (2 ** min(failures - 1, 10)), self.backoff[1])
                self.log.warning("list/watch failed, backing off", error=str(e), delay=round(delay, 2))
                if failures >= 3:
                    need_list = True  # the watch may never recover from the old resourceVersion
                self._stop.wait(delay * (0.5 + random.random() / 2))

    def _relist(self) -> None:
        items, rv = self.lw.list(self.transform)
        self.relists += 1
        seen = set()
        for obj in items:
            self._replace_one(obj, seen)
        self._replaced(seen, rv)

    def _replace_one(self, obj: dict, seen: set[str]) -> None:
        """One object of a new initial state (``obj`` transformed)."""
        seen.add(obj_key(obj))
        old = self.store.upsert(obj)
        if old is None:
            self._emit_add(obj)
        elif _rv(old) != _rv(obj):
            self._emit_update(old, obj)

    def _replaced(self, seen: set[str], rv: str) -> None:
        """The new initial state is complete: what it did not hold is gone."""
        for key in set(self.store.keys()) - seen:
            old = self.store.get_by_key(key)
            if old is not None:
                self.store.delete(old)
                self._emit_delete(old)
        self.resource_version = rv
        self._synced.set()

    def _watch_list(self) -> None:
        """The initial state streamed (``ADDED`` events up to the bookmark marking their end), then the watch
        goes on in the same stream. ``NoWatchList`` when the apiserver refuses to stream, or ends the stream
        (or bookmarks) without that mark."""
        try:
            w = self.lw.watch_list()
        except ApiException as e:
            if e.status in (400, 403, 404, 405, 422):
                raise NoWatchList(f"{e.status} {e.reason}") from e
            raise
        self._watch = w
        seen: set[str] | None = set()
        try:
            for ev in w:
                if self._stop.is_set():
                    return
                if seen is None:
                    self._handle_event(ev)
                elif ev.get("type") == "BOOKMARK":
                    md = (ev.get("object") or {}).get("metadata") or {}
                    if (md.get("annotations") or {}).get(INITIAL_EVENTS_END) != "true":
                        raise NoWatchList("a bookmark before the initial events' end")
                    self.relists += 1
                    self._replaced(seen, md.get("resourceVersion") or self.resource_version)
                    seen = None
                elif ev.get("type") == "ADDED":
                    self._replace_one(self._transformed(ev.get("object") or {}), seen)
                else:
                    self._handle_event(ev)  # an ERROR (410: relist), or a change the server sent early
        finally:
            self._watch = None
            w.close()
        if seen is not None and not self._stop.is_set():
            raise NoWatchList("the stream ended before the initial events' end")

    def _transformed(self, obj: dict) -> dict:
        obj.setdefault("apiVersion", self.res.api_version)
        obj.setdefault("kind", self.res.kind)
        return self.transform(obj)

    def _watch_once(self) -> None:
        w = self.lw.watch(self.resource_version)
        self._watch = w
        try:
            if self._stop.is_set():
                return
            for ev in w:
                if self._stop.is_set():
                    return
                self._handle_event(ev)
        finally:
            self._watch = None
            w.close()

    def _handle_event(self, ev: dict) -> None:
        typ = ev.get("type")
        obj = ev.get("object") or {}
        if typ == "ERROR":
            code = obj.get("code")
            if code == 410 or obj.get("reason") in ("Expired", "Gone"):
                raise GoneError(obj.get("message", ""))
            raise ApiException(status=code or 500, reason=obj.get("message", "watch error"))
        rv = _rv(obj)
        if typ == "BOOKMARK":
            if rv:
                self.resource_version = rv
            return
        obj = self._transformed(obj)
        if typ in ("ADDED", "MODIFIED"):
            old = self.store.upsert(obj)
            if old is None:
                self._emit_add(obj)
            else:
                self._emit_update(old, obj)
        elif typ == "DELETED":
            self.store.delete(obj)
            self._emit_delete(obj)
        if rv:
            self.resource_version = rv

    def _resync_loop(self) -> None:
        while not self._stop.wait(self.resync_period):
            if not self._synced.is_set():
                continue
            self.resync()

    def resync(self) -> None:
        for obj in self.store.list():
            self._emit_update(obj, obj)


def _rv(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("resourceVersion", "")
