"""``scheduledReplicas``: the component's pods the scheduler placed (controllers/component_pods.py), Grove's
own count on its pathway, and unset (not reported, never zero) where nothing counts it."""

from __future__ import annotations

from dynamo_operator.controllers import component_pods as cp
from dynamo_operator.controllers import grove as grove_status
from dynamo_operator.controllers import status as st
from dynamo_operator.runtime.controller import Request
from dynamo_operator.runtime.informer import Indexer


def pod(name: str, component: str = "g-worker", node: str | None = "n1", phase: str = "Running", **md):
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": {"nvidia.com/selector": component}, **md},
        "spec": {"nodeName": node} if node else {},
        "status": {"phase": phase},
    }


def cache(*pods: dict) -> Indexer:
    store = Indexer()
    store.add_indexer(cp.INDEX, cp.index_by_component)
    for p in pods:
        store.upsert(p)
    return store


def test_scheduled_replicas_counts_placed_pods_of_the_component():
    pods = cache(
        pod("a"),
        pod("b", node=None),  # pending: no node yet
        pod("c", deletionTimestamp="2026-01-01T00:00:00Z"),  # going away
        pod("d", phase="Failed"),
        pod("e", component="g-frontend"),  # another component
    )
    assert cp.scheduled_replicas(pods, "ns", "g-worker") == 1
    assert cp.scheduled_replicas(pods, "ns", "g-frontend") == 1
    assert cp.scheduled_replicas(pods, "other", "g-worker") == 0
    assert cp.scheduled_replicas(None, "ns", "g-worker") is None  # no cache: not reported
    assert cp.component_of(pod("a")) == [Request("ns", "g-worker")]
    assert cp.component_of({"metadata": {"name": "x", "namespace": "ns"}}) == []


def test_scheduled_replicas_is_written_only_when_known():
    dep = {"status": {"replicas": 2, "readyReplicas": 1}}
    with_count = st.replica_status("Deployment", "g-worker", None, dep, scheduled=2)
    assert with_count["scheduledReplicas"] == 2 and with_count["readyReplicas"] == 1
    assert "scheduledReplicas" not in st.replica_status("LeaderWorkerSet", "g-worker", None, dep)
    assert st.replica_status("Deployment", "g-worker", None, None, scheduled=0)["scheduledReplicas"] == 0


def test_grove_reports_scheduled_replicas_itself():
    clique = {"status": {"replicas": 2, "readyReplicas": 0, "scheduledReplicas": 1}}
    assert grove_status.replica_status("PodClique", "g-0-worker", None, clique)["scheduledReplicas"] == 1
    unreported = {"status": {"replicas": 2}}
    assert "scheduledReplicas" not in grove_status.replica_status("PodClique", "g-0-w", None, unreported)
