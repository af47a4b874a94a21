"""A scripted watch for the informer and controller unit tests, with the ConfigMaps (``cm``) and the
event recorder (``Recorder``) they share.

Why a test double here rather than the real apiserver: it is the only way to make a watch end with a
410 Gone (``ERROR`` event, "too old resource version") at a chosen point, deterministically.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable


class FakeWatch:
    """Yields the given events, then ends (or, with ``block``, waits until closed, like an idle watch)."""

    def __init__(self, events: Iterable[dict], block: bool = False):
        self._events = list(events)
        self._block = block
        self._closed = threading.Event()

    def __iter__(self):
        for ev in self._events:
            if self._closed.is_set():
                return
            yield ev
        if self._block:
            self._closed.wait(30)

    def close(self) -> None:
        self._closed.set()


def cm(name, rv, ns="default", owner_uid=None, data=None):
    """A ConfigMap as a watch delivers it (name, resourceVersion, uid; an owner when given)."""
    md = {"name": name, "namespace": ns, "resourceVersion": str(rv), "uid": f"uid-{name}"}
    if owner_uid:
        md["ownerReferences"] = [{"uid": owner_uid, "kind": "ConfigMap", "name": "o", "controller": True}]
    return {"metadata": md, "data": data or {}}


class Recorder:
    """An informer's handlers that record each event as (kind, name); a resync is an update to itself."""

    def __init__(self):
        self.events = []

    def handlers(self):
        return {
            "on_add": lambda o: self.events.append(("add", o["metadata"]["name"])),
            "on_update": lambda a, b: self.events.append(
                ("resync" if a is b else "update", b["metadata"]["name"])
            ),
            "on_delete": lambda o: self.events.append(("delete", o["metadata"]["name"])),
        }


def started(inf) -> Recorder:
    """Start the informer ``inf`` with a ``Recorder`` of its events as handlers; the caller stops it."""
    rec = Recorder()
    inf.add_event_handler(**rec.handlers())
    inf.start()
    return rec
