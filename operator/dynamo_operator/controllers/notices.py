"""The accepted-with-no-effect warnings of a graph or component (``render/notices.py``) as Events.

Admission printed them to whoever applied the object; the Event keeps them on the object, for
``kubectl describe`` and for whoever applied it without seeing the warning (a GitOps controller, a script).
Each warning is recorded once per generation: the pass that first sees a generation records them, later
passes (every resync, every child event) do not. A generation the object's status already reports
(``status.observedGeneration``) was seen by an earlier pass, possibly of another operator process, so a
restarted operator does not record it again either.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from dynamo_operator.render import notices
from dynamo_operator.runtime.events import EventRecorder

REASON = "FieldHasNoEffect"


class NoticeEvents:
    """Records an object's notices as ``Warning`` Events, once per (uid, generation)."""

    def __init__(self, recorder: EventRecorder, size: int = 4096):
        self.recorder = recorder
        self.size = size
        self._seen: OrderedDict[str, int] = OrderedDict()  # uid -> the last generation recorded
        self._lock = threading.Lock()

    def _first_pass(self, live: dict, internal: dict) -> bool:
        md = live.get("metadata") or {}
        uid, gen = md.get("uid"), md.get("generation")
        if not uid or not isinstance(gen, int):
            return False
        if (internal.get("status") or {}).get("observedGeneration") == gen:
            return False  # an earlier pass handled this generation
        with self._lock:
            if self._seen.get(uid) == gen:
                self._seen.move_to_end(uid)
                return False
            self._seen[uid] = gen
            self._seen.move_to_end(uid)
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)
        return True

    def record(self, live: dict, internal: dict) -> None:
        """``live``: the object as read (the Event's subject); ``internal``: its v1beta1 form."""
        if not self._first_pass(live, internal):
            return
        for text in notices.warnings(internal):
            self.recorder.warning(live, REASON, text)


__all__ = ["REASON", "NoticeEvents"]
