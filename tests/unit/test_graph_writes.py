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
    labels = {"app.kubernetes.io/component": "rbac", "app.kubernetes.io/managed-by": "dynamo-operator"}
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
    # not the graph's discovery account (a planner's the operator created, say)
    sa["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "dynamo-operator"}
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


def chart_account(*owners: str, helm_label: bool = True) -> dict:
    """The restricted chart's planner-serviceaccount (workload-rbac.yaml), with the plain references an
    earlier operator added from each planner using it."""
    refs = [
        {"apiVersion": store.DCD.api_version, "kind": store.DCD.kind, "name": o, "uid": f"{o}-uid"}
        for o in owners
    ]
    by = "Helm" if helm_label else "dynamo-operator"  # an earlier operator relabelled the ones it took over
    md = {
        "name": "planner-serviceaccount",
        "namespace": "ns",
        "labels": {"app.kubernetes.io/managed-by": by, "app.kubernetes.io/component": "planner"},
        "annotations": {"meta.helm.sh/release-name": "dp", "meta.helm.sh/release-namespace": "ns"},
        "ownerReferences": refs,
        "resourceVersion": "5",
    }
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": md}


class LiveClient(Client):
    """``Client`` with one live object to read (``get``) and no store: what ``sync`` finds."""

    def __init__(self, live: dict) -> None:
        super().__init__()
        self.live = live

    def get(self, res, name, namespace=None):
        return copy.deepcopy(self.live)


def planner_sa() -> dict:
    """The planner-serviceaccount the operator renders for a graph's planner."""
    dgd = graphs.dgd(graphs.component("Planner", "planner"), name="g", namespace="ns")
    (dcd,) = render_graph_parts(dgd, RenderContext()).children
    accounts = [o for o in render_component(dcd) if o["kind"] == "ServiceAccount"]
    (sa,) = [o for o in accounts if o["metadata"]["name"] == "planner-serviceaccount"]
    return sa


def test_the_charts_shared_account_is_used_as_it_is_never_owned():
    """Restricted mode: the chart made planner-serviceaccount; a planner using it adds no owner reference
    (the garbage collector would delete the chart's object with the last planner) and writes nothing."""
    client = LiveClient(chart_account())
    owner = dcd_owner("g-planner")
    result = ChildSyncer(client, Recorder()).sync(owner, planner_sa())
    assert (result.action, client.replaced, client.deleted) == ("unchanged", [], [])


def test_a_reference_an_earlier_operator_added_to_the_charts_account_is_removed_and_nothing_else():
    for helm_label in (True, False):
        client = LiveClient(chart_account("g-planner", "h-planner", helm_label=helm_label))
        sa = planner_sa()
        result = ChildSyncer(client, Recorder()).sync(dcd_owner("g-planner"), sa)
        assert result.action == "updated"
        (body,) = client.replaced
        assert [r["name"] for r in body["metadata"]["ownerReferences"]] == ["h-planner"]
        want = chart_account(helm_label=helm_label)["metadata"]
        assert body["metadata"]["labels"] == want["labels"]  # Helm's labels stay Helm's
        assert body["metadata"]["annotations"] == want["annotations"]


def test_the_last_user_releasing_the_charts_account_never_deletes_it():
    client = Client()
    sa = chart_account("g-planner")
    ChildSyncer(client, Recorder()).release(dcd_owner("g-planner"), child_type(sa), sa)
    assert client.deleted == []
    (body,) = client.replaced
    assert body["metadata"]["ownerReferences"] == []
