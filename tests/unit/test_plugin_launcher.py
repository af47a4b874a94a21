"""plugin/plugin.yaml and its launcher work offline, through the symlink `helm plugin install` creates."""

import os
import subprocess
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "plugin"


def test_manifest_is_a_plain_local_plugin() -> None:
    meta = yaml.safe_load((PLUGIN / "plugin.yaml").read_text())
    assert meta["name"] == "dynamo"
    assert meta["command"] == "$HELM_PLUGIN_DIR/bin/helm-dynamo"
    assert "hooks" not in meta and "downloaders" not in meta  # nothing runs or downloads at install time
    assert os.access(PLUGIN / "bin" / "helm-dynamo", os.X_OK)


def test_launcher_through_a_symlinked_plugin_dir(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    link = plugins / "plugin"
    link.symlink_to(PLUGIN)
    env = {
        "HELM_PLUGIN_DIR": str(link),
        "PATH": "/usr/bin:/bin",  # no helm-dynamo on PATH: the checkout's .venv is found via the symlink
        "HOME": str(tmp_path),
    }
    out = subprocess.run(
        [str(link / "bin" / "helm-dynamo"), "--help"], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "Usage: helm dynamo" in out.stdout and "install" in out.stdout
