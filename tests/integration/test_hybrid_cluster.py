"""The hybrid layout of the operator overview on the real local control plane ("cluster" profile): one
cluster-wide operator and a namespace-restricted one for its own namespace (installable with
``dynamo-operator.namespaceRestriction.hybrid``: tests/integration/test_hooks_cluster.py).

The cluster-wide operator is the real controllers in-process (``support.operator.Operator``); the restricted
operator is a ``Manager`` restricted to the namespace with no controllers: what the cluster-wide one reads is
its namespace-scope marker (the Lease ``dynamo-operator-namespace-scope``, renewed every second, 3 s TTL),
and with no controllers it renders nothing itself, so every child in the namespace is the cluster-wide
operator's. While the marker lives, a graph in that namespace gets nothing from the cluster-wide operator
(a graph elsewhere does); when the restricted operator dies without releasing it, the marker expires and the
cluster-wide operator takes the namespace back and renders the graph.
"""

from __future__ import annotations

import contextlib
import uuid

import pytest
from dynamo_operator.controllers import store
from dynamo_operator.runtime.client import LEASES, NAMESPACES
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.runtime.nsscope import MARKER_LEASE_NAME
from dynamo_operator.runtime.settings import RuntimeSettings, RuntimeTunables
from kubernetes.client.exceptions import ApiException
from support import graphs
from support.dgd import apply_dgd, get
from support.operator import Operator
from support.poll import stays, wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "hyb"
LEASE_SECONDS = 3.0
TUNABLES = RuntimeTunables(scope_sweep_interval=0.2)  # how often an expired marker is noticed


def graph(ns: str) -> dict:
    return graphs.dgd(graphs.component("Frontend", "frontend"), name="g", namespace=ns)


def restricted_operator(kube_cluster, namespace: str) -> Manager:
    settings = RuntimeSettings(
        metrics_bind_address="0",
        health_probe_bind_address="127.0.0.1:0",
        metrics_secure=False,
        restricted_namespace=namespace,
        scope_lease_duration=LEASE_SECONDS,
        scope_lease_renew_interval=1.0,
        operator_version="2.0.0-beta",
        pod_name="dynamo-test-operator",
        tunables=TUNABLES,
    )
    return Manager(settings, kube_cluster.api_client())


@pytest.fixture
def shared_ns(client, crds):
    name = f"{NS_PREFIX}-shared-{uuid.uuid4().hex[:6]}"
    client.create(NAMESPACES, {"metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiException):
        client.delete(NAMESPACES, name)


def test_the_cluster_wide_operator_skips_a_marked_namespace_and_takes_it_back(
    kube_cluster, client, ns, shared_ns
):
    restricted = restricted_operator(kube_cluster, ns)
    restricted.start()
    try:
        marker = wait_for(
            lambda: get(client, LEASES, MARKER_LEASE_NAME, ns), 15, "the namespace-scope marker"
        )
        assert marker["spec"]["holderIdentity"].startswith("namespace-restricted-operator-2.0.0-beta")
        with Operator(kube_cluster, tunables=TUNABLES) as cluster_wide:
            wait_for(lambda: cluster_wide.mgr.is_namespace_excluded(ns), 15, "the marked namespace excluded")
            apply_dgd(client, graph(ns))
            apply_dgd(client, graph(shared_ns))
            wait_for(lambda: get(client, store.DCD, "g-frontend", shared_ns), 60, "the shared graph's DCD")
            # renewed past two lease durations: the cluster-wide operator still leaves the namespace alone
            stays(
                lambda: get(client, store.DCD, "g-frontend", ns) is None,
                2 * LEASE_SECONDS,
                "no DCD from the cluster-wide operator in the restricted namespace",
            )
            assert not (get(client, store.DGD, "g", ns).get("status") or {})  # nor a status written
            # the restricted operator dies without releasing its marker: it expires, the namespace comes back
            restricted.stop(release=False)
            assert restricted.wait(30)
            wait_for(
                lambda: not cluster_wide.mgr.is_namespace_excluded(ns), 3 * LEASE_SECONDS, "marker expired"
            )
            dcd = wait_for(lambda: get(client, store.DCD, "g-frontend", ns), 60, "the DCD once taken back")
            assert dcd["metadata"]["ownerReferences"][0]["name"] == "g"
    finally:
        restricted.stop()
        assert restricted.wait(30)
