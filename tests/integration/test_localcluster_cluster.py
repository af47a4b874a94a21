"""The 'cluster' profile behaves like a cluster: workloads run (as kwok fakes them), all on loopback."""

from __future__ import annotations

import ipaddress
import subprocess
import uuid

import pytest
from kubernetes import client
from support.poll import wait_for

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
