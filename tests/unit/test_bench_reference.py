"""The benchmark's admission reference and its rows (issue 34, items 4 and 5): the no-op webhook answers
``allowed`` with the review's uid over the operator's TLS settings (TLS 1.2 or newer, ALPN http/1.1), and
the table judges the operator's p99 against the no-op's measured in the same run, and render's start."""

from __future__ import annotations

import http.client
import json
import ssl
import sys
from pathlib import Path

import pytest
from dynamo_localcluster.cluster import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))  # `bench` lives at the repository's root, beside `tests`

from bench import report
from bench.admission import review
from bench.noop import NoopWebhook


def test_the_noop_webhook_answers_allowed_over_the_operators_tls_settings(tmp_path: Path):
    noop = NoopWebhook(tmp_path)
    noop.start()
    try:
        ctx = ssl.create_default_context(cadata=noop.ca.decode())
        ctx.set_alpn_protocols(["h2", "http/1.1"])
        conn = http.client.HTTPSConnection("127.0.0.1", noop.port, context=ctx, timeout=10)
        body = review("bench-noop")
        conn.request("POST", "/validate-anything", body, {"Content-Type": "application/json"})
        answer = json.loads(conn.getresponse().read())
        assert answer["response"] == {"uid": json.loads(body)["request"]["uid"], "allowed": True}
        assert conn.sock.selected_alpn_protocol() == "http/1.1"  # as the operator's server: no HTTP/2
        assert conn.sock.version() in ("TLSv1.2", "TLSv1.3")
        conn.close()
    finally:
        noop.stop()


def _latency(p99: float, errors: int = 0) -> dict:
    return {"p50_ms": p99 / 4, "p99_ms": p99, "errors": errors}


def _admission(direct: float, apiserver: float, errors: int = 0) -> dict:
    return {
        "rate": 200,
        "direct": _latency(direct, errors),
        "apiserver": _latency(apiserver),
        "cpu_ms_per_review": 0.25,
        "noop": {"direct": _latency(2.0), "apiserver": _latency(100.0), "cpu_ms_per_review": 0.2},
        "ratios": {"direct": round(direct / 2.0, 2), "apiserver": round(apiserver / 100.0, 2)},
    }


@pytest.mark.parametrize(
    "direct,apiserver,errors,verdict",
    [(3.0, 120.0, 0, "PASS"), (3.2, 110.0, 0, "MISS"), (2.5, 125.0, 0, "MISS"), (2.5, 110.0, 1, "MISS")],
)
def test_the_admission_row_compares_the_operator_with_the_noop(direct, apiserver, errors, verdict):
    row = report._admission_row(_admission(direct, apiserver, errors))
    assert row[0] == "5 admission" and row[3] == verdict, row
    assert f"({round(direct / 2, 2)}x)" in row[1] and "CPU/review 0.25 vs 0.2 ms" in row[1]


def test_the_render_start_row():
    rows = dict((r[0], r) for r in report.rows({"config": {"n": 5}, "render_start": _start(0.25)}))
    assert rows["7 render start"][3] == "PASS" and "median 0.25 s" in rows["7 render start"][1]
    rows = dict((r[0], r) for r in report.rows({"config": {"n": 5}, "render_start": _start(0.45)}))
    assert rows["7 render start"][3] == "MISS"


def _start(median: float) -> dict:
    return {"runs": 10, "median_s": median, "min_s": median - 0.02, "cpu_median_s": median - 0.05}


def test_the_two_servers_are_measured_in_turn_and_each_ones_rounds_pooled(monkeypatch):
    """A machine that slows down for a while must move both servers' figures: each server's minute is
    taken in rounds, the two in turn (ABBA...), and a server's percentiles come from all of its rounds."""
    from bench import admission, noop, procstat

    calls: list[tuple[str, str, float]] = []
    slow_round = 3  # the machine is slow in the fourth round: both servers see it, one of them in each turn

    def measure(where: str):
        def run(*args) -> admission.Sample:
            ns, seconds = args[1], args[3]  # direct(port, ns, ...), through_apiserver(rc, ns, ...)
            calls.append((where, ns, seconds))
            round_ = sum(1 for c in calls if c[0] == where) - 1
            base = 100.0 if ns == "bench-noop" else 110.0
            late = 10.0 if round_ // 2 == slow_round else 1.0
            return admission.Sample(10, 1.0, [base * late / 1000] * 10, [])

        return run

    monkeypatch.setattr(admission, "direct", measure("direct"))
    monkeypatch.setattr(admission, "through_apiserver", measure("apiserver"))
    monkeypatch.setattr(procstat, "cpu_seconds", lambda pid: 0.0)
    box = type("Noop", (), {"port": 2, "pid": 2})()
    got = noop.compare(None, (1, 1, "bench-admission"), box, "bench-noop", 200.0, 60.0)
    order = [ns for where, ns, _ in calls if where == "apiserver"]
    rounds = noop.ROUNDS
    assert len(order) == 2 * rounds and {s for _, _, s in calls} == {60.0 / rounds}
    assert order[:4] == ["bench-admission", "bench-noop", "bench-noop", "bench-admission"], order
    assert got["direct"]["requests"] == got["noop"]["direct"]["requests"] == 10 * rounds
    assert got["ratios"] == {"direct": 1.1, "apiserver": 1.1}, got["ratios"]  # the slow round moved both
