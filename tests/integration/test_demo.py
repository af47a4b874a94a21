"""`make demo` end to end, non-interactive: the README's quickstart must keep working."""

from __future__ import annotations

import os
import subprocess

import pytest
from dynamo_localcluster.cluster import REPO_ROOT, leftover_processes

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def test_demo_end_to_end_and_down(tmp_path, kube_cluster):
    # kube_cluster is not used directly; depending on it makes this test run with the cluster tier
    # (the demo starts a control plane of its own in tmp_path).
    del kube_cluster
    demo_dir = tmp_path / "demo"
    # --kwok: the kwok path everywhere (the real-node path is the real-node tier's, tests/realnode)
    cli = [str(REPO_ROOT / ".venv" / "bin" / "dynamo-localcluster"), "demo", "--dir", str(demo_dir)]
    run = [*cli, "--kwok"]
    env = dict(os.environ)
    env["PATH"] = f"{REPO_ROOT / '.tools' / 'bin'}:{REPO_ROOT / '.venv' / 'bin'}:{env.get('PATH', '')}"
    try:
        r = subprocess.run(run, env=env, capture_output=True, text=True, timeout=600, cwd=REPO_ROOT)
        out = r.stdout + r.stderr
        assert r.returncode == 0, out
        for step in range(1, 8):
            assert f"[{step}/7]" in out, out
        assert "Result: OK" in out  # preflight passed
        assert "state=successful" in out and "Ready=True" in out, out
        assert "make demo-down" in out
    finally:
        down = subprocess.run([*cli, "--down"], env=env, capture_output=True, text=True, timeout=120)
    assert down.returncode == 0, down.stderr
    assert leftover_processes(str(demo_dir)) == []
