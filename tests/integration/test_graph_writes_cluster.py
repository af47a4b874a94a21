"""What the operator writes to create one graph, held to the benchmark's floor on the real control plane.

The floor (``bench.floor.Floor``: a minimal client creating exactly the objects the operator creates, with
the statuses it must write) runs first, for the benchmark's graph in a namespace of its own; then the
operator (in-process, every request it sends recorded by ``support.operator.FaultClient``, refused ones
included) creates the same graph in another. Its writes other than Events must be as many as the floor's,
and a graph's creation is announced by one Event. A regression (an object written twice, a patch of the
graph, a second owner added to a shared object) fails here, not only in ``make bench``.

Progress-only statuses are paced (``status_progress_seconds``) and tested on their own
(``test_controllers_behaviour.py``); this operator's interval is long enough that a loaded machine, where
one graph may take more than 30 s to become ready, cannot add one.
"""

from __future__ import annotations

import contextlib
import uuid

import pytest
from dynamo_operator.controllers import store
from dynamo_operator.runtime.client import NAMESPACES, SERVICEACCOUNTS, ResourceClient
from dynamo_operator.tunables import ControllerTunables
from kubernetes.client.exceptions import ApiException
from support.crs import events_of
from support.dgd import apply_dgd, wait_successful
from support.operator import Operator
from support.poll import wait_for

from bench.floor import Floor
from bench.graphs import graph as bench_graph

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

NS_PREFIX = "writes"
WAIT = 120.0
QUIET = ControllerTunables(status_progress_seconds=3600)  # no progress write in a single graph's creation


@pytest.fixture
def floor_ns(client) -> str:
    name = f"{NS_PREFIX}-floor-{uuid.uuid4().hex[:8]}"
    client.create(NAMESPACES, {"metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiException):
        client.delete(NAMESPACES, name)


def floor_writes(kube_cluster, namespace: str) -> int:
    """The floor's writes for one benchmark graph (it counts its own, all accepted)."""
    floor = Floor(
        ResourceClient(kube_cluster.api_client()), ResourceClient(kube_cluster.api_client()), namespace
    )
    floor.run(1, "g", WAIT)
    return floor.writes


def owners(client, ns: str, name: str) -> list[tuple[str, str]]:
    sa = client.get(SERVICEACCOUNTS, name, ns)
    return [(r["kind"], r["name"]) for r in sa["metadata"].get("ownerReferences") or []]


def test_creating_a_graph_writes_what_the_floor_writes(client, kube_cluster, crds, ns, floor_ns):
    floor = floor_writes(kube_cluster, floor_ns)
    client.delete(NAMESPACES, floor_ns)  # the operator started next must not reconcile the floor's graph
    with Operator(kube_cluster, controller_tunables=QUIET) as op:
        apply_dgd(client, bench_graph("g-0000", ns))
        wait_successful(client, ns, name="g-0000", timeout=WAIT)
        op.idle(ns, quiet=3, timeout=WAIT)
        writes = [(m, p) for m, p, _ in op.client.writes_in(ns)]
        events = [(m, p) for m, p, _ in op.client.writes_in(ns, events=True) if "/events" in p]
    assert len(writes) == floor, (
        f"the floor wrote {floor} times, the operator {len(writes)}: {sorted(writes)}"
    )
    assert len(events) == 1, events
    # ... and the one Event names what the graph's creation made
    ((_, reason, message),) = events_of(client, ns, "g-0000")
    assert reason == "SuccessfulCreate" and "ServiceAccount" in message, message


def test_the_graphs_discovery_account_has_one_owner_the_graph(client, kube_cluster, crds, ns):
    sa = "g-0000-k8s-service-discovery"
    with Operator(kube_cluster, controller_tunables=QUIET) as op:
        apply_dgd(client, bench_graph("g-0000", ns))
        wait_successful(client, ns, name="g-0000", timeout=WAIT)
        op.idle(ns, quiet=2, timeout=WAIT)
        assert owners(client, ns, sa) == [(store.DGD.kind, "g-0000")]
    # an operator before this one: each component held a reference to the account
    live = client.get(SERVICEACCOUNTS, sa, ns)
    dcds = client.list(store.DCD, ns).get("items") or []
    live["metadata"]["ownerReferences"] = [
        {
            "apiVersion": d["apiVersion"],
            "kind": d["kind"],
            "name": d["metadata"]["name"],
            "uid": d["metadata"]["uid"],
        }
        for d in dcds
    ]
    client.replace(SERVICEACCOUNTS, live)
    with Operator(kube_cluster, controller_tunables=QUIET):
        # the components release it to their graph; it is never deleted (pods' tokens name its uid)
        wait_for(
            lambda: owners(client, ns, sa) == [(store.DGD.kind, "g-0000")],
            WAIT,
            lambda: f"{sa} owned by {owners(client, ns, sa)}",
        )
    assert client.get(SERVICEACCOUNTS, sa, ns)["metadata"]["uid"] == live["metadata"]["uid"]
