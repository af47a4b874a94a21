"""``helm template`` of the platform chart for the chart tests (the ``tools`` tier: helm, no cluster)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support import yamlc

REPO_ROOT = Path(__file__).resolve().parents[2]
CHART = REPO_ROOT / "charts" / "platform"
# Helm reports the chart's subchart and crds symlinks on every render of the chart directory (a packaged
# chart has none); everything else on stderr is a real warning.
SYMLINK_NOTICE = re.compile(r"^walk\.go:\d+: found symbolic link in path: .*$")


def _helm() -> str:
    helm = shutil.which("helm")
    if helm is None:
        pytest.fail("helm is not on PATH: run these through `make charts-check` (it builds the pinned tools)")
    return helm


def template(tmp_path: Path, values: str | None = None, *sets: str) -> subprocess.CompletedProcess[str]:
    """``helm template`` of the chart with ``values`` (a file's text) and ``--set`` pairs; helm's own
    config and cache under ``tmp_path``."""
    args = [_helm(), "template", "dp", str(CHART), "--namespace", "dynamo-system"]
    if values is not None:
        path = tmp_path / "my-values.yaml"
        path.write_text(values)
        args += ["--values", str(path)]
    for s in sets:
        args += ["--set", s]
    env = {
        **os.environ,
        "HELM_CONFIG_HOME": str(tmp_path / "helm"),
        "HELM_CACHE_HOME": str(tmp_path / "helm"),
    }
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env, check=False)


def warnings(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """What helm wrote on stderr, but the symlink notices of an unpacked chart."""
    return [line for line in proc.stderr.splitlines() if line.strip() and not SYMLINK_NOTICE.match(line)]


def docs(proc: subprocess.CompletedProcess[str]) -> list[dict]:
    """The rendered manifests."""
    return [d for d in yamlc.load_all(proc.stdout) if d]
