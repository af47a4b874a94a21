"""`helm dynamo` commands that need no cluster: help, usage errors, the check list.

Preflight and install against an API server run in ``tests/integration/test_hooks_checks_cluster.py`` and
``tests/integration/test_plugin_cluster.py``."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from dynamo_plugin import cli as plugin_cli


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never reach a cluster from unit tests: a kubeconfig path that does not exist."""
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig")
    monkeypatch.setenv("DYNAMO_CHART_DIR", "/nonexistent")  # chart defaults, whatever the checkout holds
    monkeypatch.delenv("HELM_NAMESPACE", raising=False)


@pytest.fixture
def fake_helm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in `helm` that records its argv, so install's hand-off can be asserted."""
    log = tmp_path / "helm.log"
    script = tmp_path / "helm"
    script.write_text(f'#!/bin/sh\n[ "$1" = template ] && exit 1\necho "$@" >> {log}\n')
    script.chmod(0o755)
    monkeypatch.setenv("HELM_BIN", str(script))
    return log


def invoke(*args: str, env: dict | None = None):
    return CliRunner().invoke(plugin_cli.cli, list(args), env=env, prog_name="helm dynamo")


def test_help_lists_commands() -> None:
    out = invoke("--help")
    assert out.exit_code == 0
    for word in ("check", "install", "preflight"):
        assert word in out.output
    assert "preflight" in invoke("check", "--help").output


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert invoke("check", "preflight", "--set", "novalue").exit_code == 2
    assert invoke("check", "preflight", "-o", "yaml").exit_code == 2
    assert invoke("check", "preflight", "--only", "no.such.check").exit_code == 2
    bad = tmp_path / "v.yaml"
    bad.write_text("[1, 2]\n")
    assert invoke("check", "preflight", "-f", str(bad)).exit_code == 2


def test_check_list() -> None:
    ids = [c["id"] for c in json.loads(invoke("check", "list", "-o", "json").output)]
    assert "operators.conflicts" in ids and "crds.version-skew" in ids


def test_install_usage_error(fake_helm: Path) -> None:
    assert invoke("install", "only-a-chart").exit_code == 2


def test_console_script_main_uses_helm_prog_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        plugin_cli.main(["--help"])
    assert exc.value.code == 0 and "Usage: helm dynamo" in capsys.readouterr().out
