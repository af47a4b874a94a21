"""Writes counted from the apiserver's audit log (``LocalCluster(audit=True)``): the operator's writes are
the events whose user agent is the operator's (``dynamo-operator/<version>``), independent of anything the
operator counts itself."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from dynamo_operator.runtime.client import USER_AGENT

OPERATOR_AGENT = USER_AGENT.split("/", 1)[0] + "/"


@dataclass
class AuditLog:
    path: Path

    def mark(self) -> int:
        """A position to count from."""
        return self.path.stat().st_size if self.path.exists() else 0

    def events(self, start: int, end: int | None = None, agent: str = OPERATOR_AGENT) -> list[dict]:
        """Completed write requests from user agents starting with ``agent``, between two marks."""
        out = []
        data = self._lines(start, end)
        needle = f'"userAgent":"{agent}'.encode()
        for line in data.splitlines():
            if needle not in line:  # most lines are the control plane's own; skip them unparsed
                continue
            ev = json.loads(line)
            if ev.get("stage") == "ResponseComplete" and str(ev.get("userAgent", "")).startswith(agent):
                out.append(ev)
        return out

    def _lines(self, start: int, end: int | None) -> bytes:
        """The whole lines that end between two marks. The API server writes its log in buffered chunks,
        not lines, so a mark can fall inside a line (at 5000 graphs one did, and the half line failed to
        parse): a line belongs to the window holding its newline, read from its own beginning."""
        with open(self.path, "rb") as f:
            begin = start
            while begin > 0:  # back to the newline before ``start``, however long the cut line is
                step = min(begin, 1 << 16)
                f.seek(begin - step)
                newline = f.read(step).rfind(b"\n")
                begin -= step
                if newline >= 0:
                    begin += newline + 1
                    break
            f.seek(begin)
            data = f.read() if end is None else f.read(max(0, end - begin))
        return data[: data.rfind(b"\n") + 1]

    def count(self, start: int, end: int | None = None, agent: str = OPERATOR_AGENT) -> int:
        return len(self.events(start, end, agent))

    def breakdown(self, start: int, end: int | None = None, agent: str = OPERATOR_AGENT) -> dict[str, int]:
        """ "verb resource[/subresource]" -> count, to say *what* was written."""
        c: Counter = Counter()
        for ev in self.events(start, end, agent):
            ref = ev.get("objectRef") or {}
            res = ref.get("resource", "?") + (f"/{ref['subresource']}" if ref.get("subresource") else "")
            c[f"{ev.get('verb')} {res}"] += 1
        return dict(c)


def events_in(breakdown: dict[str, int]) -> int:
    """How many of a breakdown's writes are Events (created, or a repeat counted by a patch)."""
    return sum(n for what, n in breakdown.items() if what.split(" ", 1)[-1] == "events")
