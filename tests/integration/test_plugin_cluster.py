"""`helm dynamo` installed with `helm plugin install` and called through helm against the local cluster.

Covers preflight text and JSON on a healthy and an unhealthy setup, and the conflict matrix through
`helm dynamo install` (a real `helm install` of the chart when preflight allows it).
"""

from __future__ import annotations

import json
import subprocess

import pytest
from support.helm import CHART, PLUGIN, helm, skip_if_shared_cluster_has_operators

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

# kwok has no provisioner: persistence off, as the chart's CI values do.
LIGHT = [
    "--set",
    "etcd.persistence.enabled=false",
    "--set",
    "nats.config.jetstream.fileStore.pvc.enabled=false",
]


@pytest.fixture(scope="module")
def helm_env(kube_cluster, tmp_path_factory) -> dict[str, str]:
    """The cluster env with a private plugin dir holding `dynamo`, installed the way a user does."""
    env = dict(kube_cluster.env)
    env["HELM_PLUGINS"] = str(tmp_path_factory.mktemp("helm-plugins"))
    out = helm(env, "plugin", "install", str(PLUGIN), timeout=60)
    assert out.returncode == 0, out.stderr
    return env


def test_plugin_help_through_helm(helm_env) -> None:
    out = helm(helm_env, "dynamo", "--help")
    assert out.returncode == 0 and "check" in out.stdout and "install" in out.stdout
    assert "dynamo" in helm(helm_env, "plugin", "list").stdout


def test_preflight_healthy_text_and_json(helm_env) -> None:
    text = helm(helm_env, "dynamo", "check", "preflight", "-n", "pf-ok", "--create-namespace", *LIGHT)
    assert text.returncode == 0, text.stdout + text.stderr
    assert "Result: OK" in text.stdout and "PASS  operators.conflicts" in text.stdout
    raw = helm(
        helm_env, "dynamo", "check", "preflight", "-n", "pf-ok", "--create-namespace", "-o", "json", *LIGHT
    )
    doc = json.loads(raw.stdout)
    assert doc["summary"]["blocked"] is False and doc["release"]["namespace"] == "pf-ok"
    gpu = next(r for r in doc["results"] if r["id"] == "nodes.gpu")
    assert gpu["status"] == "pass"  # kwok nodes advertise nvidia.com/gpu


def test_preflight_unhealthy(helm_env) -> None:
    out = helm(
        helm_env,
        "dynamo",
        "check",
        "preflight",
        "-n",
        "pf-bad",
        "-o",
        "json",
        "--set",
        "dynamo-operator.webhook.certificateMode=cert-manager",
        "--set",
        "dynamo-operator.natsAddr=http://nats",
    )
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    failed = {r["id"] for r in doc["results"] if r["status"] == "fail" and r["severity"] == "error"}
    assert {"webhook.cert-manager", "values.external-addresses", "rbac.install-permissions"} <= failed
    text = helm(
        helm_env,
        "dynamo",
        "check",
        "preflight",
        "-n",
        "pf-bad",
        "--set",
        "dynamo-operator.webhook.certificateMode=cert-manager",
    )
    assert text.returncode == 1 and "BLOCKED" in text.stdout and "fix: Install cert-manager" in text.stdout


def _flat(text: str) -> str:
    """The text report wraps long reasons; compare on single-spaced text."""
    return " ".join(text.split())


def test_conflict_matrix_through_helm_dynamo_install(helm_env) -> None:
    skip_if_shared_cluster_has_operators(helm_env)

    def install(release: str, restricted: bool) -> subprocess.CompletedProcess[str]:
        args = ["dynamo", "install", release, str(CHART), "-n", release, "--create-namespace", *LIGHT]
        if restricted:
            args += ["--set", "dynamo-operator.namespaceRestriction.enabled=true"]
        return helm(helm_env, *args)

    releases: list[str] = []
    try:
        first = install("pm-a", restricted=False)  # none -> cluster-wide
        assert first.returncode == 0, first.stdout + first.stderr
        releases.append("pm-a")
        second = install("pm-b", restricted=False)  # cluster-wide -> cluster-wide
        assert second.returncode == 1 and "Multiple cluster managers" in _flat(second.stdout)
        third = install("pm-c", restricted=True)  # cluster-wide -> restricted
        assert third.returncode == 1
        assert "Cluster-wide already manages target namespace" in _flat(third.stdout)
        assert helm(helm_env, "uninstall", "pm-a", "-n", "pm-a", "--wait").returncode == 0
        releases.remove("pm-a")

        fourth = install("pm-c", restricted=True)  # none -> restricted
        assert fourth.returncode == 0, fourth.stdout + fourth.stderr
        releases.append("pm-c")
        fifth = install("pm-d", restricted=False)  # restricted -> cluster-wide
        assert fifth.returncode == 1
        assert "Would conflict with existing namespace operators" in _flat(fifth.stdout)
        sixth = install("pm-e", restricted=True)  # restricted A -> restricted B (other namespace)
        assert sixth.returncode == 0, sixth.stdout + sixth.stderr
        releases.append("pm-e")
    finally:
        for release in releases:
            helm(helm_env, "uninstall", release, "-n", release, "--wait")
