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
