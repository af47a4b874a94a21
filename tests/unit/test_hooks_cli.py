"""The hook Job argv contract: exit status and messages of `dynamo-hooks` commands."""

import json

import pytest
from click.testing import CliRunner
from dynamo_hooks import cli as hooks_cli
from dynamo_hooks import preflight
from dynamo_hooks.fake import DEPLOYMENTS, FakeCluster, operator_deployment


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeCluster:
    cluster = FakeCluster()
    monkeypatch.setattr(preflight, "connect", lambda *a, **k: cluster)
    monkeypatch.setattr(hooks_cli, "connect", lambda *a, **k: cluster)
    return cluster


def invoke(*args: str):
    return CliRunner().invoke(hooks_cli.main, list(args))


def test_check_conflicts_allows_then_blocks(fake: FakeCluster) -> None:
    ok = invoke("check-conflicts", "--release-namespace", "dynamo-system", "--release-name", "a")
    assert ok.exit_code == 0 and "No other Dynamo operator" in ok.output
    fake.add(DEPLOYMENTS.format(ns="dynamo-system"), operator_deployment("dynamo-system", "a"))
    # The release's own operator (an upgrade) does not block.
    assert (
        invoke("check-conflicts", "--release-namespace", "dynamo-system", "--release-name", "a").exit_code
        == 0
    )
    blocked = invoke(
        "check-conflicts",
        "--release-namespace",
        "team-a",
        "--release-name",
        "b",
        "--namespace-restricted",
        "--target-namespace",
        "team-a",
    )
    assert blocked.exit_code == 1
    assert "BLOCKED" in blocked.output and "Cluster-wide already manages target namespace" in blocked.output


def test_check_conflicts_json(fake: FakeCluster) -> None:
    out = invoke("-o", "json", "check-conflicts", "--release-namespace", "ns", "--release-name", "a")
    doc = json.loads(out.output)
    assert doc["summary"]["blocked"] is False
    assert [r["id"] for r in doc["results"]] == ["cluster.api-reachable", "operators.conflicts"]


def test_unreachable_api_exits_3(fake: FakeCluster) -> None:
    fake.unreachable = True
    out = invoke("check-conflicts", "--release-namespace", "ns", "--release-name", "a")
    assert out.exit_code == 3 and "cannot reach the Kubernetes API" in out.output


def test_usage_error_exits_2(fake: FakeCluster) -> None:
    assert invoke("check-conflicts", "--release-name", "a").exit_code == 2


def test_ensure_commands_are_idempotent(fake: FakeCluster) -> None:
    args = ["ensure-mpi-ssh-secret", "--namespace", "ns", "--secret-name", "mpi-run-ssh-secret"]
    assert "created" in invoke(*args).output
    writes = fake.writes
    assert "unchanged" in invoke(*args).output and fake.writes == writes
    cert_args = [
        "-o",
        "json",
        "ensure-webhook-certs",
        "--namespace",
        "ns",
        "--secret-name",
        "webhook-server-cert",
        "--service-name",
        "dynamo-operator-webhook-service",
    ]
    first = json.loads(invoke(*cert_args).output)
    second = json.loads(invoke(*cert_args).output)
    assert first["action"] == "created" and second["action"] == "unchanged"
    assert first["resourceVersion"] == second["resourceVersion"]
    assert "dynamo-operator-webhook-service.ns.svc.cluster.local" in first["dnsNames"]


def test_refused_repair_exits_1(fake: FakeCluster) -> None:
    fake.add("/api/v1/namespaces/ns/secrets", {"metadata": {"name": "bad"}, "data": {"private.key": "eA=="}})
    out = invoke("ensure-mpi-ssh-secret", "--namespace", "ns", "--secret-name", "bad")
    assert out.exit_code == 1 and "never rotated automatically" in out.output
