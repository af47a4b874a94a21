"""The dynamo-platform chart on the local cluster: what the kwok nodes add to `ct install` on the real node.

Every charts/platform/ci/*-values.yaml is installed, helm-tested and uninstalled by `ct install` with its
workloads running for real on the real node (tests/realnode/test_01_ct_install.py); `ct lint` runs with the
chart checks (tests/unit/test_chart_lint.py). Here: with grove.enabled (and Kai) the install brings the CRDs a
PodCliqueSet needs (one the operator renders is accepted right after it), the metrics listeners as the chart
lays them out, an install without NATS and etcd, and garbage values refused before anything is created.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from support.crds import remove_third_party_crds

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

REPO_ROOT = Path(__file__).resolve().parents[2]
CHART = REPO_ROOT / "charts" / "platform"


def _run(
    args: list[str], env: dict[str, str], timeout: float = 600, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        args, env=env, cwd=REPO_ROOT, input=input, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, (
        f"{' '.join(args)} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}\n"
        f"--- stderr\n{proc.stderr[-4000:]}"
    )
    return proc


def _kubectl_json(env: dict[str, str], *args: str) -> dict:
    return json.loads(_run(["kubectl", *args, "-o", "json"], env).stdout)


def _grove_crds_serve_a_rendered_podcliqueset(env: dict[str, str], namespace: str) -> None:
    """The CRDs the Grove and Kai subcharts brought: a PodCliqueSet rendered for a multinode example is
    created with strict field validation in ``namespace``."""
    from dynamo_operator.render import RenderContext, render_all
    from dynamo_operator.render.cli import dump_yaml

    for crd in (
        "podcliquesets.grove.io",
        "podcliques.grove.io",
        "podcliquescalinggroups.grove.io",
        "queues.scheduling.run.ai",
    ):
        _kubectl_json(env, "get", "crd", crd)
    _kubectl_json(env, "get", "queue", "dynamo")  # the Kai subchart's queue, created after install
    doc = yaml.safe_load((REPO_ROOT / "examples" / "sglang-multinode.yaml").read_text())
    doc["metadata"]["namespace"] = namespace
    ctx = RenderContext(detected=frozenset({"grove", "kaiScheduler"}))
    (pcs,) = [o for o in render_all(doc, ctx) if o["kind"] == "PodCliqueSet"]
    _run(["kubectl", "create", "--validate=strict", "-f", "-"], env, input=dump_yaml([pcs]))
    _kubectl_json(env, "get", "podcliqueset", pcs["metadata"]["name"], "-n", namespace)


def test_grove_and_kai_subcharts_bring_the_crds_a_podcliqueset_needs(kube_cluster) -> None:
    """The cluster-wide CI values (grove and kai-scheduler enabled) on a cluster without their CRDs: the
    install brings them, and a PodCliqueSet the operator renders is created with strict validation."""
    env = kube_cluster.env
    release = f"dp-{uuid.uuid4().hex[:6]}"
    namespace = f"{release}-ns"
    remove_third_party_crds(env)  # so only the chart can bring them
    argv = ["helm", "install", release, str(CHART), "--namespace", namespace, "--create-namespace"]
    argv += ["--values", str(CHART / "ci" / "cluster-wide-values.yaml"), "--wait", "--timeout", "300s"]
    _run(argv, env)
    try:
        _grove_crds_serve_a_rendered_podcliqueset(env, namespace)
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


def test_metrics_as_the_chart_serves_them(kube_cluster, client, crds, tmp_path) -> None:
    """The chart's layout on the real apiserver: the manager's plain listener on loopback (127.0.0.1:8080 in
    the pod) and the listener the metrics Service reaches (8443 in the pod; a free port here), which
    authenticates with TokenReview and authorizes with the chart's metrics-reader ClusterRole."""
    from dynamo_localcluster.cluster import free_port
    from support.processes import http_get
    from support.rbac import service_account_user, wait_allowed
    from support.release import preserved_crds, release, run

    env = kube_cluster.env
    plain, service = free_port(), free_port()
    with preserved_crds(client), release(kube_cluster, tmp_path, "metrics") as rel:
        rel.install(CHART, "--skip-crds")
        deploy = _kubectl_json(
            env, "-n", rel.namespace, "get", "deployment", f"{rel.name}-dynamo-operator-controller-manager"
        )
        args = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
        assert (
            "--metrics-bind-address=127.0.0.1:8080" in args and "--metrics-service-bind-address=:8443" in args
        )
        rel.start_operator(
            "--metrics-secure",
            f"--metrics-bind-address=127.0.0.1:{plain}",
            f"--metrics-service-bind-address=127.0.0.1:{service}",
        )
        tokens = {}
        for sa in ("prometheus", "nobody"):
            run(env, "kubectl", "create", "serviceaccount", "-n", rel.namespace, sa)
            tokens[sa] = run(env, "kubectl", "create", "token", "-n", rel.namespace, sa).stdout.strip()
        role = f"{rel.name}-dynamo-operator-{rel.namespace}-metrics-reader"
        binding = f"{rel.name}-scrape"
        run(
            env,
            "kubectl",
            "create",
            "clusterrolebinding",
            binding,
            f"--clusterrole={role}",
            f"--serviceaccount={rel.namespace}:prometheus",
        )
        try:
            status, body = http_get(f"http://127.0.0.1:{plain}/metrics")
            assert status == 200 and "dynamo_operator_" in body
            url = f"https://127.0.0.1:{service}/metrics"
            assert http_get(url)[0] == 401
            assert http_get(url, tokens["nobody"])[0] == 403
            wait_allowed(env, service_account_user(rel.namespace, "prometheus"), "get", "/metrics")
            status, body = http_get(url, tokens["prometheus"])
            assert status == 200 and "dynamo_operator_" in body, (status, body[:300])
        finally:
            run(env, "kubectl", "delete", "clusterrolebinding", binding, "--ignore-not-found", check=False)


def test_without_nats_and_etcd_the_platform_installs_and_runs_graphs(
    kube_cluster, client, crds, tmp_path
) -> None:
    """nats.enabled=false, etcd.enabled=false, no addresses: the release installs, the operator runs with
    Kubernetes discovery and a graph becomes ready, its pods given neither NATS_SERVER nor ETCD_ENDPOINTS."""
    from support.dgd import wait_successful
    from support.release import preserved_crds, release, run

    env = kube_cluster.env
    example = REPO_ROOT / "examples" / "vllm-agg.yaml"
    with (
        preserved_crds(client),
        release(kube_cluster, tmp_path, "nostore", "nats.enabled=false", "etcd.enabled=false") as rel,
    ):
        rel.install(CHART, "--skip-crds")
        names = run(env, "kubectl", "get", "statefulsets,services", "-n", rel.namespace, "-o", "name").stdout
        assert "nats" not in names and "etcd" not in names, names
        rel.start_operator()
        graphs = f"{rel.name}-graphs"
        run(env, "kubectl", "create", "namespace", graphs)
        try:
            run(env, "kubectl", "apply", "-n", graphs, "-f", str(example))
            wait_successful(client, graphs, "vllm-agg", timeout=120)
            deployments = _kubectl_json(env, "-n", graphs, "get", "deployments")["items"]
            assert deployments
            for dep in deployments:
                for container in dep["spec"]["template"]["spec"]["containers"]:
                    env_names = {e["name"] for e in container.get("env") or []}
                    assert not {"NATS_SERVER", "ETCD_ENDPOINTS"} & env_names, (
                        dep["metadata"]["name"],
                        env_names,
                    )
                    assert "DYN_DISCOVERY_BACKEND" in env_names
        finally:
            rel.stop_operator()
            run(env, "kubectl", "delete", "namespace", graphs, "--wait=false", check=False)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            "dynamo-operator:\n  controllerManger: {}\n",
            "additional properties 'controllerManger' not allowed",
        ),
        ("- not\n- a mapping\n", "garbage-values.yaml"),
    ],
    ids=["typo", "not-a-mapping"],
)
def test_helm_install_refuses_garbage_values_and_creates_nothing(
    kube_cluster, tmp_path, values, message
) -> None:
    env = kube_cluster.env
    release = f"bad-{uuid.uuid4().hex[:6]}"
    path = tmp_path / "garbage-values.yaml"
    path.write_text(values)
    proc = subprocess.run(
        [
            "helm",
            "install",
            release,
            str(CHART),
            "-n",
            f"{release}-ns",
            "--create-namespace",
            "-f",
            str(path),
        ],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr
    listed = subprocess.run(["helm", "list", "-A", "-q"], env=env, capture_output=True, text=True, timeout=60)
    assert release not in listed.stdout
    ns = subprocess.run(
        ["kubectl", "get", "namespace", f"{release}-ns"], env=env, capture_output=True, text=True
    )
    assert ns.returncode != 0, "the refused install created its namespace"
