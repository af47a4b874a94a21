"""`ct install` (chart-testing, ``ct.yaml``) on the local control plane with the real node.

For each ``charts/platform/ci/*-values.yaml`` ct installs the chart (``helm install --wait``), runs the
chart's ``helm test``, uninstalls the release and deletes its namespace, as CI's ``ct lint-and-install``
does (``ct lint`` runs in the unit tier: ``tests/unit/test_chart_lint.py``). Here the chart's workloads run
for real on the node, with ``realnode/placement-values.yaml`` after each CI values file (ct's
``--helm-extra-set-args``: where each workload runs and from which image, nothing else): the hook Jobs, the
operator's Pods (probed by the kubelet, their webhooks called through their Service), NATS and etcd (with
the hardened file's TLS and authentication), and the helm test pod, whose ``wget`` and ``nc`` reach them
over the pod network.

One stand-in, said plainly: Grove's and KAI's controllers (``cluster-wide-values.yaml`` enables their
subcharts) cannot be built here (their Go modules are not served), so their pods land on kwok's fake nodes
(they do not tolerate the real node's taint) and are Ready without running. Their CRDs are real; they are
removed afterwards, as Helm leaves a chart's ``crds/`` behind.

The negative control: a copy of the chart whose only CI values file runs no operator Pod
(``controllerManager.replicas: 0``; nor NATS and etcd, which the test pod checks only when enabled, nor the
hook Jobs): the install succeeds, and the helm test pod, running for real, finds nothing behind the webhook
Service and fails, so ``ct install`` fails. On kwok's fake nodes the same test pod "succeeded" without
running: that is the imitation these runs replace.

Named ``test_01_``: it runs before the tier's ``platform`` fixture installs its release (the chart's
conflict check refuses a second cluster-wide operator) and leaves the cluster as it found it.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT, LocalCluster
from dynamo_localcluster.realnode import layout
from dynamo_localcluster.realnode.node import PLACEMENT_VALUES
from support.crds import remove_third_party_crds

CHART = REPO_ROOT / "charts" / "platform"
CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))
TEST_POD_SUFFIX = "-platform-test"  # templates/tests/test-connection.yaml


def ct_install(node: LocalCluster, chart: Path, timeout: float = 1800) -> subprocess.CompletedProcess:
    argv = ["ct", "install", "--config", str(REPO_ROOT / "ct.yaml")]
    argv += ["--chart-dirs", str(chart.parent), "--charts", str(chart)]
    argv += ["--helm-extra-set-args", f"--values={PLACEMENT_VALUES}"]
    return subprocess.run(argv, cwd=REPO_ROOT, env=node.env, capture_output=True, text=True, timeout=timeout)


def watch_pods(node: LocalCluster, seen: dict[str, dict], stop: threading.Event) -> None:
    """Records every pod's node and containers' ends while ct runs: its releases, their namespaces and the
    helm test pods (deleted once they succeed) are gone when it returns."""
    from kubernetes import client, watch

    with node.api_client() as api:
        core = client.CoreV1Api(api)
        while not stop.is_set():
            try:
                for ev in watch.Watch().stream(core.list_pod_for_all_namespaces, timeout_seconds=2):
                    pod = ev["object"]
                    ends = [
                        s.state.terminated.exit_code
                        for s in pod.status.container_statuses or []
                        if s.state and s.state.terminated
                    ]
                    known = seen.setdefault(f"{pod.metadata.namespace}/{pod.metadata.name}", {"ends": []})
                    known.update(node=pod.spec.node_name, ready=known.get("ready") or _ready(pod))
                    known["ends"] = ends or known["ends"]
                    if stop.is_set():
                        break
            except Exception:
                stop.wait(0.2)  # the watch thread's pause before re-opening its stream


def _ready(pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])


def run_watched(node: LocalCluster, chart: Path) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    seen: dict[str, dict] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=watch_pods, args=(node, seen, stop), daemon=True)
    watcher.start()
    try:
        return ct_install(node, chart), seen
    finally:
        stop.set()
        watcher.join(10)
        remove_third_party_crds(node.env)


def helm_test_pods(seen: dict[str, dict]) -> dict[str, dict]:
    return {k: v for k, v in seen.items() if k.endswith(TEST_POD_SUFFIX)}


@pytest.mark.usefixtures("node")
def test_ct_install_runs_each_ci_values_file_and_its_helm_test_for_real(node: LocalCluster):
    r, seen = run_watched(node, CHART)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "All charts installed successfully" in out, out[-3000:]
    for values in CI_VALUES:
        assert f"values file '{values.relative_to(REPO_ROOT)}'" in out or str(values) in out, out[-3000:]
    # the helm test pods ran for real, on the real node, and their containers exited 0
    tests = helm_test_pods(seen)
    assert len(tests) == len(CI_VALUES), seen
    assert all(t["node"] == layout.NODE_NAME and t["ends"] == [0] for t in tests.values()), tests
    # and so did the operator, NATS and etcd of each release: Ready on the real node
    for part in ("-dynamo-operator-controller-manager-", "-nats-0", "-etcd-0"):
        pods = {k: v for k, v in seen.items() if part in k}
        assert len({k.split("/")[0] for k in pods}) == len(CI_VALUES), (part, sorted(seen))
        assert all(v["node"] == layout.NODE_NAME and v["ready"] for v in pods.values()), (part, pods)


def test_ct_install_fails_when_the_helm_test_finds_no_operator(node: LocalCluster, tmp_path):
    chart = tmp_path / "charts" / "platform"
    shutil.copytree(CHART, chart, symlinks=False, ignore=shutil.ignore_patterns("ci"))
    (chart / "ci").mkdir()
    # nor NATS and etcd, nor the install and uninstall hook Jobs: the test pod checks the webhook whatever
    # else runs; their pods starting and passing their probes took most of this install's minute, the five
    # hook Jobs (three before the install, two at the uninstall) half of the rest (the positive run above
    # and test_platform.py run them)
    no_operator = {
        "dynamo-operator": {"controllerManager": {"replicas": 0}, "installHooks": {"enabled": False}},
        "nats": {"enabled": False},
        "etcd": {"enabled": False},
    }
    (chart / "ci" / "no-operator-values.yaml").write_text(yaml.safe_dump(no_operator))
    r, seen = run_watched(node, chart)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out[-3000:]
    assert "platform-test" in out and "failed" in out, out[-3000:]
    (test,) = helm_test_pods(seen).values()
    assert test["node"] == layout.NODE_NAME and test["ends"] == [1], test  # ran, found nothing: exit 1
