"""A counter that many threads may add to at once.

``x += 1`` on an attribute is a read, an add and a write: two workers doing it at once can lose one of the
increments (the GIL switches between the bytecodes). Counters read for metrics, logs or tests and written
by workers, informers or webhook threads go through this instead."""

from __future__ import annotations

import threading


class AtomicCounter:
    def __init__(self, value: int = 0):
        self._value = value
        self._lock = threading.Lock()

    def add(self, n: int = 1) -> int:
        """Add ``n``; returns the new value."""
        with self._lock:
            self._value += n
            return self._value

    @property
    def value(self) -> int:
        with self._lock:
            return self._value

    def __repr__(self) -> str:
        return f"AtomicCounter({self.value})"
