"""A scripted watch for the informer and controller unit tests.

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
