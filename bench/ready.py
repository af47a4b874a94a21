"""Waiting for graphs to be ``successful`` with ``Ready=True`` through one list + watch (no polling of
hundreds of objects), recording when the last one got there."""

from __future__ import annotations

import threading
import time

from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from dynamo_operator.runtime.client import ResourceClient


def graph_ready(obj: dict) -> bool:
    """Successful, Ready=True, for the current generation."""
    s = store.to_internal(obj).get("status") or {}
    cond = st.condition(s, st.READY) or {}
    gen = (obj.get("metadata") or {}).get("generation")
    return (
        s.get("state") == st.STATE_SUCCESSFUL
        and cond.get("status") == "True"
        and (gen is None or s.get("observedGeneration") == gen)
    )


class ReadyWatch:
    """Tracks which graphs of a namespace are ready; ``wait(n)`` returns the monotonic time at which the
    n-th became ready."""

    def __init__(self, client: ResourceClient, namespace: str):
        self.client = client
        self.namespace = namespace
        self.ready: set[str] = set()
        self.last_change = 0.0
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._stream = None
        self._thread = threading.Thread(target=self._run, name=f"ready-{namespace}", daemon=True)

    def start(self) -> ReadyWatch:
        self._thread.start()
        return self

    def _apply(self, obj: dict, deleted: bool = False) -> None:
        name = obj["metadata"]["name"]
        with self._cond:
            was = name in self.ready
            now = not deleted and graph_ready(obj)
            if now and not was:
                self.ready.add(name)
            elif was and not now:
                self.ready.discard(name)
            if now != was:
                self.last_change = time.monotonic()
                self._cond.notify_all()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                items, rv = self.client.list_all(store.DGD, self.namespace)
                for obj in items:
                    self._apply(obj)
                while not self._stop.is_set():
                    self._stream = self.client.watch(store.DGD, self.namespace, resource_version=rv)
                    for ev in self._stream:
                        obj = ev.get("object") or {}
                        if ev.get("type") == "ERROR":
                            raise RuntimeError(str(obj.get("message")))
                        rv = (obj.get("metadata") or {}).get("resourceVersion", rv)
                        if ev.get("type") != "BOOKMARK":
                            self._apply(obj, deleted=ev.get("type") == "DELETED")
            except Exception:
                if self._stop.wait(0.5):
                    return

    def wait(self, n: int, timeout: float) -> float:
        """Monotonic time when ``n`` graphs were ready; raises TimeoutError with the count otherwise."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.ready) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"{len(self.ready)}/{n} graphs ready in {self.namespace} after {timeout}s"
                    )
                self._cond.wait(min(left, 1.0))
            return self.last_change

    def stop(self) -> None:
        self._stop.set()
        if self._stream is not None:
            self._stream.close()
