"""The bench's write counts from the audit log: a mark inside a half-written line (the API server writes in
chunks; at 5000 graphs the burst's breakdown failed to parse one) counts that line once, in the window that
holds its end."""

from __future__ import annotations

import json

from bench.audit import OPERATOR_AGENT, AuditLog


def _event(verb: str, name: str, agent: str = OPERATOR_AGENT + "1.0") -> bytes:
    ev = {"stage": "ResponseComplete", "userAgent": agent, "verb": verb, "objectRef": {"resource": name}}
    return json.dumps(ev, separators=(",", ":")).encode() + b"\n"


def test_marks_inside_lines_count_each_event_once_where_it_ends(tmp_path):
    path = tmp_path / "audit.log"
    lines = [_event("create", "deployments"), _event("patch", "services"), _event("update", "x", "kubelet/1")]
    lines.append(_event("create", "services"))
    data = b"".join(lines)
    path.write_bytes(data)
    log = AuditLog(path)
    for cut in range(1, len(data)):
        first, second = log.breakdown(0, cut), log.breakdown(cut, len(data))
        total = {k: first.get(k, 0) + second.get(k, 0) for k in set(first) | set(second)}
        assert total == {"create deployments": 1, "patch services": 1, "create services": 1}, cut
    # a line still being written at the end of the file (its user agent already there) is counted once it
    # is complete
    path.write_bytes(data + lines[0][:-5])
    assert log.count(0) == 3
    path.write_bytes(data + lines[0])
    assert log.count(0) == 4
    # a mark inside a line longer than one read back is found from that line's own beginning
    long = _event("create", "configmaps" + "x" * 1_200_000)
    path.write_bytes(lines[0] + long + lines[1])
    cut = len(lines[0]) + 1_100_000
    assert log.breakdown(cut) == {"create configmaps" + "x" * 1_200_000: 1, "patch services": 1}
    assert log.breakdown(0, cut) == {"create deployments": 1}
