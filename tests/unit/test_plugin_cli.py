"""`helm dynamo` commands: help, preflight exit codes and JSON, and install running helm only when allowed."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from dynamo_hooks import preflight
from dynamo_hooks.fake import DEPLOYMENTS, FakeCluster, operator_deployment
from dynamo_plugin import cli as plugin_cli


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeCluster:
    cluster = FakeCluster()
    cluster.add("/api/v1/namespaces", {"metadata": {"name": "dynamo-system"}})
    cluster.add(
        "/apis/storage.k8s.io/v1/storageclasses",
        {"metadata": {"name": "std", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}},
    )
    monkeypatch.setattr(preflight, "connect", lambda *a, **k: cluster)
    monkeypatch.setenv("DYNAMO_CHART_DIR", "/nonexistent")  # chart defaults, whatever the checkout holds
    monkeypatch.delenv("HELM_NAMESPACE", raising=False)
    return cluster


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


def test_preflight_ok_text_and_json(fake: FakeCluster) -> None:
    out = invoke("check", "preflight", "-n", "dynamo-system")
    assert out.exit_code == 0, out.output
    assert "Result: OK" in out.output and "nodes.gpu" in out.output  # GPU warning shown, not blocking
    doc = json.loads(invoke("check", "preflight", "-n", "dynamo-system", "-o", "json").output)
    assert doc["release"] == {
        "name": "dynamo-platform",
        "namespace": "dynamo-system",
        "operatorMode": "cluster-wide",
        "targetNamespace": None,
    }
    assert doc["summary"]["blocked"] is False and doc["summary"]["warnings"] >= 1


def test_preflight_blocked_exit_1(fake: FakeCluster) -> None:
    fake.add(DEPLOYMENTS.format(ns="prod"), operator_deployment("prod", "prod"))
    out = invoke(
        "check",
        "preflight",
        "-n",
        "dynamo-system",
        "--set",
        "dynamo-operator.namespaceRestriction.enabled=true",
    )
    assert out.exit_code == 1
    assert "BLOCKED" in out.output and "Cluster-wide already manages target namespace" in out.output


def test_namespace_from_helm_environment(fake: FakeCluster) -> None:
    doc = json.loads(invoke("check", "preflight", "-o", "json", env={"HELM_NAMESPACE": "team-x"}).output)
    assert doc["release"]["namespace"] == "team-x"


def test_usage_errors_exit_2(fake: FakeCluster, tmp_path: Path) -> None:
    assert invoke("check", "preflight", "--set", "novalue").exit_code == 2
    assert invoke("check", "preflight", "-o", "yaml").exit_code == 2
    assert invoke("check", "preflight", "--only", "no.such.check").exit_code == 2
    bad = tmp_path / "v.yaml"
    bad.write_text("[1, 2]\n")
    assert invoke("check", "preflight", "-f", str(bad)).exit_code == 2


def test_check_list() -> None:
    ids = [c["id"] for c in json.loads(invoke("check", "list", "-o", "json").output)]
    assert "operators.conflicts" in ids and "crds.version-skew" in ids


def test_install_runs_helm_after_preflight(fake: FakeCluster, fake_helm: Path) -> None:
    out = invoke("install", "dp", "./chart", "--wait", env={"HELM_NAMESPACE": "dynamo-system"})
    assert out.exit_code == 0, out.output
    assert fake_helm.read_text().split() == [
        "install",
        "dp",
        "./chart",
        "--wait",
        "--namespace",
        "dynamo-system",
    ]


def test_install_blocked_never_calls_helm(fake: FakeCluster, fake_helm: Path) -> None:
    fake.add(DEPLOYMENTS.format(ns="prod"), operator_deployment("prod", "prod"))
    out = invoke("install", "dp", "./chart", "-n", "dynamo-system")
    assert out.exit_code == 1 and "nothing was installed" in out.output
    assert not fake_helm.exists()


def test_install_usage_error(fake: FakeCluster, fake_helm: Path) -> None:
    assert invoke("install", "only-a-chart").exit_code == 2


def test_console_script_main_uses_helm_prog_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        plugin_cli.main(["--help"])
    assert exc.value.code == 0 and "Usage: helm dynamo" in capsys.readouterr().out
