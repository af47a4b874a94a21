"""The dynamo-platform chart installs, passes `helm test` and uninstalls on the local cluster.

kwok makes every Pod Ready (and Job / helm-test Pods complete) without running containers, so this
checks what Helm and the API server see: the chart is valid against a real Kubernetes 1.36 API
(CRDs, RBAC, webhook configurations, hooks, Services), `helm install --wait` converges, and the
chart's test Pod completes. One install per charts/platform/ci/*-values.yaml, like `ct install`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from support.crds import remove_third_party_crds

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]
CHART = REPO_ROOT / "charts" / "platform"
CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))


def _run(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{' '.join(args)} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n"
        f"--- stderr\n{proc.stderr[-4000:]}"
    )
    return proc


def _kubectl_json(env: dict[str, str], *args: str) -> dict:
    return json.loads(_run(["kubectl", *args, "-o", "json"], env).stdout)


@pytest.mark.parametrize("values", CI_VALUES, ids=[p.name for p in CI_VALUES])
def test_install_and_helm_test(kube_cluster, values: Path) -> None:
    env = kube_cluster.env
    release = f"dp-{uuid.uuid4().hex[:6]}"
    namespace = f"{release}-ns"
    _run(
        [
            "helm",
            "install",
            release,
            str(CHART),
            "--namespace",
            namespace,
            "--create-namespace",
            "--values",
            str(values),
            "--wait",
            "--timeout",
            "300s",
        ],
        env,
    )
    try:
        deploy = _kubectl_json(
            env, "-n", namespace, "get", "deployment", f"{release}-dynamo-operator-controller-manager"
        )
        assert deploy["status"].get("readyReplicas") == deploy["spec"]["replicas"]
        container = deploy["spec"]["template"]["spec"]["containers"][0]
        assert container["command"] == ["dynamo-operator"]
        assert container["args"][:3] == ["run", "--config", "/etc/dynamo-operator/config.yaml"]

        hooks = _kubectl_json(
            env,
            "get",
            "validatingwebhookconfigurations,mutatingwebhookconfigurations",
            "-l",
            f"nvidia.com/dynamo-operator-namespace={namespace}",
        )["items"]
        assert len(hooks) == 2
        injection = "nvidia.com/dynamo-webhook-cabundle-injection"
        assert all(h["metadata"]["labels"].get(injection) == "true" for h in hooks)
        svc = _kubectl_json(env, "-n", namespace, "get", "service", "dynamo-operator-webhook-service")
        assert svc["spec"]["ports"][0]["port"] == 443

        for sts in ("nats", "etcd"):
            obj = _kubectl_json(env, "-n", namespace, "get", "statefulset", f"{release}-{sts}")
            assert obj["status"].get("readyReplicas") == obj["spec"]["replicas"], sts

        _run(["helm", "test", release, "--namespace", namespace, "--timeout", "300s"], env)
    finally:
        subprocess.run(
            ["helm", "uninstall", release, "--namespace", namespace, "--wait", "--timeout", "300s"],
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=400,
        )
        subprocess.run(
            ["kubectl", "delete", "namespace", namespace, "--wait=false", "--ignore-not-found"],
            env=env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        remove_third_party_crds(env)  # the Grove/Kai subcharts' crds/ outlive the release


def test_ct_lint_and_install(kube_cluster) -> None:
    """What CI's chart-testing run does: yamale + yamllint + helm lint + helm unittest, then an
    install, `helm test` and uninstall per ci/*-values.yaml, in namespaces ct creates."""
    env = kube_cluster.env
    if shutil.which("ct", path=env["PATH"]) is None:
        pytest.fail("ct is not on PATH: run `make tools` (tools/build-tools.sh builds ct v3.14.0)")
    try:
        _run(["ct", "lint-and-install", "--config", "ct.yaml"], env, timeout=1800)
    finally:
        remove_third_party_crds(env)  # the Grove/Kai subcharts' crds/ outlive the releases
