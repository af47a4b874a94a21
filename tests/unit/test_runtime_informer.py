"""Informer against a scripted list/watch source (the only way to force a 410 Gone deterministically)."""

from __future__ import annotations

import threading

from dynamo_operator.runtime.client import CONFIGMAPS
from dynamo_operator.runtime.informer import Indexer, Informer
from kubernetes.client.exceptions import ApiException
from support.fakewatch import FakeWatch, Recorder, cm, started
from support.poll import wait_for


class ScriptedLW:
    """list() results and watch() scripts are consumed in order; the last watch blocks until closed."""

    def __init__(self, lists, watches):
        self.lists = list(lists)
        self.watches = list(watches)
        self.watch_rvs = []
        self.list_calls = 0
        self.lock = threading.Lock()

    def list(self, transform=lambda o: o):
        with self.lock:
            self.list_calls += 1
            items, rv = self.lists.pop(0) if len(self.lists) > 1 else self.lists[0]
        return [transform(o) for o in items], rv

    def watch(self, rv):
        with self.lock:
            self.watch_rvs.append(rv)
            script = self.watches.pop(0) if self.watches else None
        if isinstance(script, Exception):
            raise script
        return FakeWatch(script or [], block=script is None)


def test_list_watch_bookmark_and_410_relist():
    lw = ScriptedLW(
        lists=[
            ([cm("a", 1), cm("b", 2)], "10"),
            ([cm("a", 11), cm("c", 12)], "20"),  # after the 410: b gone, a changed, c new
        ],
        watches=[
            [
                {"type": "ADDED", "object": cm("d", 11)},
                {"type": "MODIFIED", "object": cm("a", 12, data={"k": "v"})},
                {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "15"}}},
                {"type": "DELETED", "object": cm("d", 16)},
                {
                    "type": "ERROR",
                    "object": {"kind": "Status", "code": 410, "message": "too old resource version"},
                },
            ],
        ],
    )
    inf = Informer(CONFIGMAPS, lw)
    rec = started(inf)
    try:
        assert inf.wait_for_sync(2)
        wait_for(
            lambda: lw.list_calls >= 2 and len(lw.watch_rvs) >= 2,
            3,
        )
        assert lw.watch_rvs[:2] == ["10", "20"]  # resumed from the relist's resourceVersion
        assert inf.relists == 2
        assert rec.events[:6] == [
            ("add", "a"),
            ("add", "b"),
            ("add", "d"),
            ("update", "a"),
            ("delete", "d"),
            ("update", "a"),  # relist: a changed (rv 12 → 11 differs)
        ]
        assert ("add", "c") in rec.events and ("delete", "b") in rec.events
        assert sorted(inf.store.keys()) == ["default/a", "default/c"]
        assert inf.store.get("default", "a")["metadata"]["resourceVersion"] == "11"
    finally:
        inf.stop()


def test_bookmark_advances_resource_version_for_resume():
    lw = ScriptedLW(
        lists=[([], "5")],
        watches=[[{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "42"}}}]],
    )
    inf = Informer(CONFIGMAPS, lw)
    inf.start()
    try:
        wait_for(lambda: len(lw.watch_rvs) >= 2, 3)
        assert lw.watch_rvs[:2] == ["5", "42"]  # a normal watch end resumes, no relist
        assert lw.list_calls == 1
    finally:
        inf.stop()


def test_http_410_on_watch_start_relists_and_errors_back_off():
    lw = ScriptedLW(
        lists=[([cm("a", 1)], "1"), ([cm("a", 1)], "7")],
        watches=[ApiException(status=410, reason="Gone"), ApiException(status=500, reason="boom")],
    )
    inf = Informer(CONFIGMAPS, lw, backoff=(0.05, 0.1))
    inf.start()
    try:
        wait_for(lambda: len(lw.watch_rvs) >= 3, 3)
        assert lw.list_calls == 2
        assert lw.watch_rvs[:3] == ["1", "7", "7"]
    finally:
        inf.stop()


def test_handler_added_late_gets_replay_and_resync():
    lw = ScriptedLW(lists=[([cm("a", 1), cm("b", 1)], "1")], watches=[])
    inf = Informer(CONFIGMAPS, lw, resync_period=0.1)
    inf.start()
    try:
        assert inf.wait_for_sync(2)
        rec = Recorder()
        inf.add_event_handler(**rec.handlers())
        assert sorted(rec.events) == [("add", "a"), ("add", "b")]
        wait_for(lambda: ("resync", "a") in rec.events, 2)
    finally:
        inf.stop()


def test_handler_exception_does_not_kill_informer():
    lw = ScriptedLW(lists=[([cm("a", 1)], "1")], watches=[[{"type": "ADDED", "object": cm("b", 2)}]])
    inf = Informer(CONFIGMAPS, lw)

    def bad(_o):
        raise RuntimeError("handler bug")

    inf.add_event_handler(on_add=bad)
    inf.start()
    try:
        wait_for(lambda: inf.store.get("default", "b") is not None, 2)
    finally:
        inf.stop()


def test_stop_is_prompt():
    lw = ScriptedLW(lists=[([], "1")], watches=[])
    inf = Informer(CONFIGMAPS, lw)
    inf.start()
    assert inf.wait_for_sync(2)
    inf.stop(timeout=2)
    assert not inf._thread.is_alive()


def test_indexer_by_namespace_and_owner():
    idx = Indexer()
    idx.upsert(cm("a", 1, ns="x", owner_uid="p1"))
    idx.upsert(cm("b", 1, ns="x", owner_uid="p2"))
    idx.upsert(cm("c", 1, ns="y", owner_uid="p1"))
    assert [o["metadata"]["name"] for o in idx.by_index("namespace", "x")] == ["a", "b"]
    assert [o["metadata"]["name"] for o in idx.by_index("owner", "p1")] == ["a", "c"]
    idx.upsert(cm("a", 2, ns="x", owner_uid="p2"))  # owner changed: re-indexed
    assert [o["metadata"]["name"] for o in idx.by_index("owner", "p1")] == ["c"]
    idx.delete(cm("c", 3, ns="y"))
    assert idx.by_index("owner", "p1") == []
    assert idx.by_index("namespace", "y") == []
    idx.add_indexer("name", lambda o: [o["metadata"]["name"]])
    assert len(idx.by_index("name", "a")) == 1
    assert len(idx.list("x")) == 2 and len(idx) == 2


class _Node:
    """An object that can sit in a reference cycle (plain dicts and lists would too; a class is clearer)."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def test_release_memory_freezes_survivors_and_a_full_pass_collects_a_frozen_cycle():
    """The interpreter's full collections walked every cached object, finding nothing (67-153 ms pauses at
    1000 graphs): after a pass the survivors are frozen, so they are out of every later walk; a cycle
    among them is collected only by a ``full`` pass, which unfreezes first."""
    import gc
    import weakref

    from dynamo_operator.runtime.informer import release_memory

    try:
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        release_memory()
        assert gc.get_freeze_count() > 0 and gc.is_tracked(a)
        del a, b  # a cycle: only a collection frees it, and it is frozen
        release_memory()
        assert gone() is not None  # an ordinary pass does not walk frozen objects
        release_memory(full=True)
        assert gone() is None
        assert gc.get_freeze_count() > 0  # what survived the full pass is frozen again
    finally:
        gc.unfreeze()  # the rest of the test process's heap goes back to the collector
