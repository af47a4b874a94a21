"""``spec.experimental.kvTransferPolicy`` on the real control plane ("cluster" profile: the scheduler places
the workers on kwok nodes): the operator, running as the chart's own ServiceAccount (so the grants it needs
are the chart's: pods patch, nodes get, clustertopologies get), copies each scheduled worker's node label
onto it, from ``labelKey`` or from every level of a Grove ClusterTopology, and says in a Warning Event when
the node lacks the label. kwok nodes carry ``kubernetes.io/hostname``: the domain here is the host.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import pytest
from dynamo_operator.controllers.topology import CLUSTER_TOPOLOGIES, EV_MISSING
from dynamo_operator.runtime.client import EVENTS, PODS
from support import graphs
from support.dgd import apply_dgd
from support.operator import Operator, chart_operator_identity
from support.poll import wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "topo"
WAIT = 60.0
HOST = "kubernetes.io/hostname"
OFF_GROVE = {"annotations": {"nvidia.com/enable-grove": "false"}}  # Deployments, which kwok runs


@pytest.fixture(scope="module")
def operator_identity(kube_cluster) -> Iterator[str]:
    with chart_operator_identity(kube_cluster, NS_PREFIX) as user:
        yield user


def graph(ns: str, policy: dict) -> dict:
    worker = graphs.component("Decode", "decode", command=graphs.VLLM, gpus=1)
    frontend = graphs.component("Frontend", "frontend")
    return graphs.dgd(
        frontend,
        worker,
        name="g",
        namespace=ns,
        metadata=OFF_GROVE,
        experimental={"kvTransferPolicy": policy},
    )


def worker_pods(client, ns: str) -> list[dict]:
    items = client.list(PODS, ns, label_selector="nvidia.com/selector=g-decode").get("items") or []
    return [p for p in items if (p.get("spec") or {}).get("nodeName")]


def labelled(client, ns: str, key: str) -> dict | None:
    """The scheduled worker pod once it carries ``key`` with its node's name as the value."""
    for pod in worker_pods(client, ns):
        if (pod["metadata"].get("labels") or {}).get(key) == pod["spec"]["nodeName"]:
            return pod
    return None


def test_a_worker_gets_its_nodes_label_from_the_label_key(kube_cluster, client, ns, operator_identity):
    with Operator(kube_cluster, user=operator_identity):
        apply_dgd(client, graph(ns, {"labelKey": HOST, "domain": "host"}))
        pod = wait_for(lambda: labelled(client, ns, HOST), WAIT, "the worker pod labelled with its host")
        assert pod["metadata"]["annotations"]["nvidia.com/topology-label-key"] == HOST
        (main,) = pod["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in main["env"]}
        assert env["DYN_KV_TRANSFER_DOMAIN"] == "host"
        (vol,) = [v for v in pod["spec"]["volumes"] if v["name"] == "topology-labels"]
        assert vol["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"] == f"metadata.labels['{HOST}']"
        front = client.list(PODS, ns, label_selector="nvidia.com/selector=g-frontend")["items"]
        assert all(HOST not in (p["metadata"].get("labels") or {}) for p in front)


def test_a_missing_node_label_is_a_warning_on_the_pod(kube_cluster, client, ns, operator_identity):
    with Operator(kube_cluster, user=operator_identity):
        apply_dgd(client, graph(ns, {"labelKey": "example.com/rack", "domain": "rack"}))

        def warned() -> dict | None:
            events = client.list(EVENTS, ns).get("items") or []
            return next((e for e in events if e.get("reason") == EV_MISSING), None)

        event = wait_for(warned, WAIT, "the TopologyLabelMissing Event")
        assert event["involvedObject"]["kind"] == "Pod"
        assert "has no label example.com/rack" in event["message"]
        pods = worker_pods(client, ns)
        assert pods and all("example.com/rack" not in (p["metadata"].get("labels") or {}) for p in pods)


@pytest.fixture
def cluster_topology(client) -> Iterator[str]:
    name = f"topo-{uuid.uuid4().hex[:6]}"
    body = {"metadata": {"name": name}, "spec": {"levels": [{"domain": "host", "key": HOST}]}}
    client.create(CLUSTER_TOPOLOGIES, body)
    yield name
    with contextlib.suppress(Exception):
        client.delete(CLUSTER_TOPOLOGIES, name)


def test_every_level_of_a_cluster_topology_becomes_a_dynamo_label(
    kube_cluster, client, ns, operator_identity, third_party_crds, cluster_topology
):
    with Operator(kube_cluster, user=operator_identity):
        apply_dgd(client, graph(ns, {"clusterTopologyName": cluster_topology, "domain": "host"}))
        key = "nvidia.com/dynamo-topology.host"
        pod = wait_for(lambda: labelled(client, ns, key), WAIT, "the worker pod labelled with its host")
        assert pod["metadata"]["annotations"]["nvidia.com/topology-cluster-topology-name"] == cluster_topology
        (vol,) = [v for v in pod["spec"]["volumes"] if v["name"] == "topology-labels"]
        assert vol["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"] == f"metadata.labels['{key}']"
