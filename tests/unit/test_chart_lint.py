"""What CI's chart-testing lint does (`ct lint --config ct.yaml`): the Chart.yaml schema (yamale), yamllint,
`helm lint` and the helm unittest suites ct.yaml names. No cluster: the `tools` tier, run with the chart
checks. `ct install` (one install per charts/platform/ci/*-values.yaml, `helm test`, uninstall) runs on
the real node: tests/realnode/test_01_ct_install.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.tools


def test_ct_lint():
    if shutil.which("ct") is None:
        pytest.fail("ct is not on PATH: run this through `make charts-check` (build-tools.sh builds ct)")
    if not os.environ.get("HELM_PLUGINS"):
        pytest.fail("HELM_PLUGINS is not set: run this through `make charts-check` (it links helm-unittest)")
    proc = subprocess.run(
        ["ct", "lint", "--config", "ct.yaml"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
