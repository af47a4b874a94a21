"""``make bench`` at a small size (N=5, short idle, settle and admission windows), only to prove the
benchmark runs end to end on the local control plane and reports every row; no timing is asserted (shared
machines). Every phase runs whatever N is (the figures come from ``make bench`` at N=500); most of this
test's time is its three control planes, so N=5 rather than 10 is what there is to save."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from dynamo_localcluster.cluster import REPO_ROOT

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

N = 5
ROWS = ("1 floor", "2 burst", "3 idle", "4 restart", "5 admission", "6 memory/cpu", "7 render start")


def test_bench_runs_and_reports_every_row(tmp_path):
    env = {
        **os.environ,
        "BENCH_N": str(N),
        "BENCH_IDLE_SECONDS": "5",
        "BENCH_SETTLE_SECONDS": "3",
        "BENCH_ADMISSION_SECONDS": "2",
        "BENCH_ADMISSION_RATE": "50",
        "BENCH_TIMEOUT": "300",
        "BENCH_DIR": str(tmp_path / "run"),
        "BENCH_OUT": str(tmp_path / "results"),
    }
    r = subprocess.run(
        [sys.executable, "-m", "bench"], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    assert r.returncode == 0, f"bench failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    for row in ROWS:
        assert f"| {row}" in r.stdout, f"row {row!r} missing from the table:\n{r.stdout[-3000:]}"
    (result,) = (tmp_path / "results").glob("*.json")
    data = json.loads(result.read_text())
    assert data["floor"]["writes"] > 0
    assert data["floor"]["converted_on_read"] == 3 * N  # the floor's cluster converts, as the operator's
    assert data["floor_after"]["writes"] == data["floor"]["writes"]  # the floor again, after the operator
    assert " and " in next(line for line in r.stdout.splitlines() if line.startswith("| 1 floor"))
    assert data["burst"]["writes"] > 0  # the audit log saw the operator's writes
    assert set(data["memory"]["points"]) >= {"0", str(N), str(2 * N)}
    assert data["admission"]["direct"]["errors"] == 0
    assert data["admission"]["apiserver"]["errors"] == 0
    noop = data["admission"]["noop"]  # the reference webhook, measured in the same run
    assert noop["direct"]["errors"] == noop["apiserver"]["errors"] == 0
