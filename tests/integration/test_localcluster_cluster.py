"""The 'cluster' profile behaves like a cluster: workloads run (as kwok fakes them), all on loopback."""

from __future__ import annotations

import ipaddress
import subprocess
import uuid
from pathlib import Path

import pytest
from dynamo_localcluster.cluster import KWOK_ONLY_CONTROLLERS
from kubernetes import client
from support.poll import stays, wait_for

pytestmark = pytest.mark.cluster

LOOPBACK = ipaddress.ip_network("127.0.0.0/8")


@pytest.fixture
def namespace(kube_cluster):
    core = client.CoreV1Api(kube_cluster.api_client())
    name = f"smoke-{uuid.uuid4().hex[:6]}"
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)


def test_deployment_gets_ready_pods(kube_cluster, namespace):
    api = kube_cluster.api_client()
    apps = client.AppsV1Api(api)
    labels = {"app": "smoke"}
    apps.create_namespaced_deployment(
        namespace,
        {
            "metadata": {"name": "smoke"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
                },
            },
        },
    )
    wait_for(
        lambda: (apps.read_namespaced_deployment_status("smoke", namespace).status.ready_replicas or 0) == 2,
        timeout=60,
        what="2 ready replicas",
    )
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector="app=smoke").items
    assert len(pods) == 2
    assert all(p.status.phase == "Running" for p in pods)


def test_job_completes(kube_cluster, namespace):
    batch = client.BatchV1Api(kube_cluster.api_client())
    batch.create_namespaced_job(
        namespace,
        {
            "metadata": {"name": "once"},
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                    }
                }
            },
        },
    )
    wait_for(
        lambda: (batch.read_namespaced_job_status("once", namespace).status.succeeded or 0) == 1,
        timeout=60,
        what="job",
    )


def test_helm_install_wait_and_helm_test(kube_cluster, namespace, repo_root):
    chart = repo_root / "tests" / "fixtures" / "charts" / "smoke"
    env = kube_cluster.env

    def helm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["helm", *args], env=env, capture_output=True, text=True, timeout=180)

    r = helm("install", "smoke", str(chart), "-n", namespace, "--wait", "--timeout", "120s")
    assert r.returncode == 0, r.stderr
    r = helm("test", "smoke", "-n", namespace, "--timeout", "120s")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Phase:          Succeeded" in r.stdout
    r = helm("uninstall", "smoke", "-n", namespace, "--wait")
    assert r.returncode == 0, r.stderr


def test_every_node_service_and_pod_address_is_loopback(kube_cluster, namespace):
    """kwok's default node IP is this machine's real gateway: nothing in the cluster may point off-box."""
    core = client.CoreV1Api(kube_cluster.api_client())
    # Make sure at least one pod exists to check.
    core.create_namespaced_pod(
        namespace, {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}
    )
    wait_for(lambda: core.read_namespaced_pod("p", namespace).status.pod_ip, timeout=60, what="pod IP")
    nodes = core.list_node().items
    assert nodes
    for n in nodes:
        for a in n.status.addresses:
            if a.type in ("InternalIP", "ExternalIP"):
                assert ipaddress.ip_address(a.address) in LOOPBACK, (n.metadata.name, a.address)
    # The apiserver dials ClusterIPs for service-referenced webhooks: those must stay on this machine too.
    services = core.list_service_for_all_namespaces().items
    assert services
    for svc in services:
        for ip in svc.spec.cluster_ips or []:
            if ip != "None":
                assert ipaddress.ip_address(ip) in LOOPBACK, (svc.metadata.namespace, svc.metadata.name, ip)
    pods = core.list_pod_for_all_namespaces().items
    assert pods
    for p in pods:
        for ip in [p.status.pod_ip, p.status.host_ip, *[x.ip for x in p.status.pod_ips or []]]:
            if ip:
                assert ipaddress.ip_address(ip) in LOOPBACK, (p.metadata.namespace, p.metadata.name, ip)


def test_the_control_plane_runs_with_the_test_beds_gc_target_and_no_endpoints_controllers(
    kube_cluster, namespace
):
    """``LocalCluster.gogc`` reaches every Go process of the control plane and the tools' environment. A
    kwok-only cluster runs no Endpoints controllers (``KWOK_ONLY_CONTROLLERS``): a Service selecting a
    running pod (a loopback address) gets no Endpoints written, so no refused write and no Warning Event
    (with them on: ``FailedToCreateEndpoint``, retried for the cluster's life)."""
    for comp in kube_cluster.components:
        environ = Path(f"/proc/{comp.pid}/environ").read_bytes().split(b"\0")
        assert f"GOGC={kube_cluster.gogc}".encode() in environ, comp.name
    assert kube_cluster.env["GOGC"] == str(kube_cluster.gogc)
    (kcm,) = [c for c in kube_cluster.components if c.name == "kube-controller-manager"]
    assert f"--controllers={KWOK_ONLY_CONTROLLERS}" in kcm.argv
    core = client.CoreV1Api(kube_cluster.api_client())
    pod = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
    core.create_namespaced_pod(
        namespace, {"metadata": {"name": "p", "labels": {"app": "ep"}}, "spec": {"containers": [pod]}}
    )
    wait_for(lambda: core.read_namespaced_pod("p", namespace).status.pod_ip, 60, "the pod's address")
    core.create_namespaced_service(
        namespace, {"metadata": {"name": "ep"}, "spec": {"selector": {"app": "ep"}, "ports": [{"port": 80}]}}
    )
    # the Endpoints controllers answer a new Service within a second: none of their Events for 3 s

    def endpoint_events() -> list[str]:
        return [
            e.reason for e in core.list_namespaced_event(namespace).items if "Endpoint" in (e.reason or "")
        ]

    stays(
        lambda: not endpoint_events(), 3.0, lambda: f"Endpoints controllers' Events: {endpoint_events()}", 0.5
    )
