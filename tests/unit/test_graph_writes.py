"""A graph's creation written once, as pure behaviour (the count on the real control plane is
``tests/integration/test_graph_writes_cluster.py``): the graph renders its discovery account once and its
components none; a component releasing the account hands it to its graph; a child just created is known
before the cache shows it; progress writes of a burst are shared out; a ready replica counts as scheduled."""

from __future__ import annotations

import copy

from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from dynamo_operator.controllers.common import ProgressClock
from dynamo_operator.controllers.sync import SERVICEACCOUNTS, ChildSyncer, RecentWrites, child_type
from dynamo_operator.render import RenderContext, render_component, render_graph_parts
from dynamo_operator.runtime.informer import Indexer
from support import graphs

GRAPH_UID = "graph-uid"


def graph() -> dict:
    return graphs.dgd(
        graphs.component("Frontend", "frontend"),
        graphs.component("VllmDecodeWorker", "decode", command=graphs.VLLM),
        name="g",
        namespace="ns",
    )


def owned_by_graph(dcd: dict) -> dict:
    out = copy.deepcopy(dcd)
    ref = {"apiVersion": store.DGD.api_version, "kind": store.DGD.kind, "name": "g", "uid": GRAPH_UID}
    out["metadata"]["ownerReferences"] = [{**ref, "controller": True, "blockOwnerDeletion": True}]
    return out


def kinds(objs: list[dict]) -> list[str]:
    return [o["kind"] for o in objs]


def test_the_graph_renders_its_discovery_account_once_and_its_components_none():
    parts = render_graph_parts(graph(), RenderContext())
    assert [(o["kind"], o["metadata"]["name"]) for o in parts.companions] == [
        ("ServiceAccount", "g-k8s-service-discovery")
    ]
    for dcd in parts.children:
        assert "ServiceAccount" not in kinds(render_component(owned_by_graph(dcd)))
        # a DCD applied on its own (no graph controls it) still makes the account its pods run as
        assert "ServiceAccount" in kinds(render_component(dcd))


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def normal(self, obj, reason, message):
        self.events.append((reason, message))


class Client:
    def __init__(self) -> None:
        self.replaced: list[dict] = []
        self.deleted: list[str] = []

    def replace(self, res, body, subresource=None):
        self.replaced.append(body)
        return body

    def delete(self, res, name, namespace=None, propagation=None, preconditions=None):
        self.deleted.append(name)


def legacy_account(*owners: str) -> dict:
    """The account as an operator before this one left it: a plain reference from each component."""
    refs = [
        {"apiVersion": store.DCD.api_version, "kind": store.DCD.kind, "name": o, "uid": f"{o}-uid"}
        for o in owners
    ]
    labels = {"app.kubernetes.io/component": "rbac"}
    md = {"name": "g-k8s-service-discovery", "namespace": "ns", "labels": labels, "ownerReferences": refs}
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {**md, "resourceVersion": "5"}}


def dcd_owner(name: str) -> dict:
    dcd = owned_by_graph({"apiVersion": store.DCD.api_version, "kind": store.DCD.kind, "metadata": {}})
    dcd["metadata"].update(name=name, namespace="ns", uid=f"{name}-uid")
    return dcd


def test_the_last_component_hands_the_discovery_account_to_its_graph_never_deletes_it():
    client = Client()
    syncer = ChildSyncer(client, Recorder())
    sa = legacy_account("g-frontend", "g-decode")
    syncer.release(dcd_owner("g-frontend"), child_type(sa), sa)
    assert [r["name"] for r in client.replaced[-1]["metadata"]["ownerReferences"]] == ["g-decode"]
    sa = legacy_account("g-decode")
    syncer.release(dcd_owner("g-decode"), child_type(sa), sa)
    assert client.deleted == []  # pods' tokens name the account's uid: it must not be made again
    (ref,) = client.replaced[-1]["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"]) == (store.DGD.kind, "g", GRAPH_UID)
    assert not ref.get("controller")


def test_a_shared_child_nobody_takes_over_is_deleted():
    client = Client()
    sa = legacy_account("g-frontend")
    sa["metadata"]["labels"] = {}  # not the graph's discovery account (a planner's, say)
    ChildSyncer(client, Recorder()).release(dcd_owner("g-frontend"), child_type(sa), sa)
    assert client.deleted == ["g-k8s-service-discovery"]


def test_a_child_just_created_is_known_until_the_cache_shows_it():
    recent = RecentWrites()
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a", "namespace": "ns"}}
    created = {**sa, "metadata": {**sa["metadata"], "resourceVersion": "7"}}
    syncer = ChildSyncer(Client(), Recorder(), {SERVICEACCOUNTS: Indexer()}, recent)
    assert syncer.live(child_type(sa), "ns", "a") is None
    recent.remember_created(created)
    # a second pass before the informer delivers it: the child exists, no second create (409)
    assert syncer.live(child_type(sa), "ns", "a") is created
    recent.observe(created)  # the informer delivered it: the cache is the truth again
    assert recent.created("ServiceAccount", "ns", "a") is None


def test_progress_of_a_burst_is_shared_out():
    now = [0.0]
    clock = ProgressClock(30, clock=lambda: now[0], share=2)
    # the first two wait one interval; with three and four waiting, 1.5 and 2
    assert [clock.wait(f"u{i}") for i in range(4)] == [30, 30, 45, 60]
    assert clock.wait("u0") == 60  # the first of the burst stretches as the others arrive
    for uid in ("u1", "u2", "u3"):
        clock.wrote(uid)  # ... and keeps its stretched due time when they are done
    assert clock.wait("u0") == 60
    now[0] = 100.0
    clock.wrote("u0")
    assert clock.wait("u0") == 30  # alone again: the plain interval
    alone = ProgressClock(30, clock=lambda: now[0], share=2)
    assert alone.wait("x") == 30  # one object: the plain interval


def test_a_ready_replica_is_a_scheduled_one():
    dep = {"status": {"replicas": 2, "readyReplicas": 2}}
    assert st.replica_status("Deployment", "d", None, dep, scheduled=1)["scheduledReplicas"] == 2
    dep = {"status": {"replicas": 2, "readyReplicas": 0}}
    assert st.replica_status("Deployment", "d", None, dep, scheduled=1)["scheduledReplicas"] == 1
