"""Progress-only statuses are spaced out, news is written at once; conversions of live objects are reused
only for the very dict they were made from; ``copy_tree``; the controllers' worker counts.

The status writer is driven with a fake clock and a recording client: what is proved is timing and the
progress/news decision, not API behaviour (``test_controllers_cluster.py`` proves a graph-owned DCD's single
status write and a graph's prompt first status against the real control plane)."""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.api.jsontree import copy_tree
from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from dynamo_operator.controllers.common import Deferred, ProgressClock, StatusWriter
from dynamo_operator.tunables import ControllerTunables
from support import graphs

SEL = {"nvidia.com/selector": "g-frontend"}
WAITING = st.Readiness(False, st.PODS_NOT_READY, "0/1 replicas ready, 0/1 available")
READY = st.Readiness(True, "", "1/1 replicas ready")


def dcd(old, gen, readiness, reason=None):
    return st.dcd_status(old, gen, SEL, {"replicas": 1}, readiness, now="t", available_reason=reason)


# -- what counts as progress -------------------------------------------------------------------------------


def test_dcd_first_status_is_progress_only_for_a_graphs_own_component():
    first = dcd(None, 1, WAITING)
    assert st.dcd_progress_only({}, first, first_is_progress=True)
    assert not st.dcd_progress_only({}, first, first_is_progress=False)  # a DCD a user applied: news


def test_dcd_readiness_failures_and_generations_are_news():
    waiting = dcd(None, 1, WAITING)
    updating = st.Readiness(False, st.UPDATING, "1/1 updated")
    assert st.dcd_progress_only(waiting, dcd(waiting, 1, updating), False)
    assert not st.dcd_progress_only(waiting, dcd(waiting, 1, READY), True)  # ready
    was_ready = dcd(None, 1, READY)
    assert not st.dcd_progress_only(was_ready, dcd(was_ready, 1, WAITING), True)  # lost its readiness
    assert not st.dcd_progress_only(waiting, dcd(waiting, 2, WAITING), True)  # a new generation observed
    failed = dcd(None, 1, st.Readiness(False, "", "boom"), reason="ReconcileError")
    assert not st.dcd_progress_only(waiting, failed, True)
    assert not st.dcd_progress_only(failed, dcd(failed, 1, WAITING), True)  # recovered from a failure
    missing = st.Readiness(False, st.ORCHESTRATOR_MISSING, "no LWS controller")
    no_lws = dcd(waiting, 1, missing, reason="LeaderWorkerSetNotReconciled")
    assert not st.dcd_progress_only(waiting, no_lws, True)  # a user must act


def dgd(old, gen, state, reason, message="m", **extra):
    out = st.dgd_status(old, gen, state, reason, message, {}, now="t")
    out.update(extra)
    return out


def test_dgd_progress_is_any_change_while_the_graph_is_still_starting():
    pending = dgd(None, 1, st.STATE_PENDING, st.REASON_UPDATING)
    assert st.dgd_progress_only(pending, dgd(pending, 1, st.STATE_PENDING, st.REASON_PODS_NOT_READY, "other"))
    assert not st.dgd_progress_only({}, pending)  # the first status tells the user the graph was taken
    init = dgd(None, 1, st.STATE_INITIALIZING, st.REASON_NOT_CREATED)
    assert st.dgd_progress_only(init, dgd(init, 1, st.STATE_PENDING, st.REASON_UPDATING))  # still starting
    assert not st.dgd_progress_only(pending, dgd(pending, 1, st.STATE_SUCCESSFUL, st.REASON_ALL_READY))
    assert not st.dgd_progress_only(pending, dgd(pending, 2, st.STATE_PENDING, st.REASON_UPDATING))
    missing = dgd(pending, 1, st.STATE_PENDING, st.REASON_ORCHESTRATOR_MISSING)
    assert not st.dgd_progress_only(pending, missing)
    rolling = dgd(pending, 1, st.STATE_PENDING, st.REASON_UPDATING, rollingUpdate={"phase": "InProgress"})
    assert not st.dgd_progress_only(pending, rolling)


# -- the writer's clock ------------------------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    """The one client call a status write makes."""

    def __init__(self):
        self.bodies: list[dict] = []

    def replace(self, res, body, subresource=None):
        assert subresource == "status"
        self.bodies.append(copy.deepcopy(body))
        out = copy.deepcopy(body)
        out["metadata"]["resourceVersion"] = str(len(self.bodies) + 1)
        return out


def live(status=None):
    md = {"name": "x", "uid": "u-1", "resourceVersion": "1"}
    obj = {"apiVersion": "v1", "kind": "Thing", "metadata": md}
    if status is not None:
        obj["status"] = status
    return obj


def always(old, new):
    return True


def test_progress_waits_for_the_interval_news_does_not():
    clock, client = Clock(), Recorder()
    w = StatusWriter(client, store.DCD, convert=False, progress=ProgressClock(30, clock=clock))
    # the first progress starts the object's clock and is held back for the whole interval
    assert w.write(live(), {"n": 1}, always) == Deferred(30)
    clock.now += 12
    assert w.write(live(), {"n": 2}, always) == Deferred(18)
    assert client.bodies == []
    # news goes out at once, and restarts the clock
    out = w.write(live(), {"n": 3}, lambda o, n: False)
    assert isinstance(out, dict) and [b["status"] for b in client.bodies] == [{"n": 3}]
    clock.now += 29
    assert w.write(out, {"n": 4}, always) == Deferred(pytest.approx(1))
    clock.now += 1
    assert isinstance(w.write(out, {"n": 4}, always), dict)
    # nothing changed: no request and no wait
    assert w.write(live({"n": 5}), {"n": 5}, always) is None
    # without a predicate every change is news
    assert isinstance(w.write(live(), {"n": 6}), dict)
    assert len(client.bodies) == 3


def test_progress_waits_to_settle_even_when_the_interval_has_passed():
    clock, client = Clock(), Recorder()
    w = StatusWriter(client, store.DCD, convert=False, progress=ProgressClock(30, 3, clock=clock))
    out = w.write(live(), {"n": 1})  # news
    clock.now += 100  # long after the interval: the next progress still settles for 3 s
    assert w.write(out, {"n": 2}, always) == Deferred(3)
    clock.now += 1
    assert w.write(out, {"n": 3}, always) == Deferred(2)  # the due time holds; the latest status goes
    clock.now += 1
    assert isinstance(w.write(out, {"n": 4}, lambda o, n: False), dict)  # readiness: at once
    clock.now += 2
    assert w.write(out, {"n": 5}, always) == Deferred(28)  # the news restarted the clock
    assert [b["status"] for b in client.bodies] == [{"n": 1}, {"n": 4}]


def test_progress_clock_forgets_long_quiet_objects():
    clock = Clock()
    c = ProgressClock(1, clock=clock)
    c.wrote("a")
    clock.now += 11
    c.wrote("b")  # "a" has been quiet for ten intervals: dropped
    assert list(c._last) == ["b"]


# -- conversions of live objects ---------------------------------------------------------------------------


def wire_graph() -> dict:
    internal = graphs.dgd(
        {"name": "Frontend", "type": "frontend", "replicas": 1},
        version=store.INTERNAL_VERSION,
        metadata={"uid": "u-g", "resourceVersion": "7"},
    )
    return store.to_wire({**internal, "status": {"state": "pending"}})


def test_conversion_is_reused_for_the_same_live_dict_only():
    obj = wire_graph()
    first = store.to_internal(obj)
    hits = store._converted.hits
    again = store.to_internal(obj)
    assert again == first and again is not first and store._converted.hits == hits + 1
    again["status"]["state"] = "mutated"  # callers get their own copy
    assert store.to_internal(obj)["status"]["state"] == "pending"
    # a copy changed locally keeps the resourceVersion it was read at: converted afresh, not served stale
    body = copy.deepcopy(obj)
    body["status"]["state"] = "successful"
    assert store.to_internal(body)["status"]["state"] == "successful"


def test_copy_tree_copies_containers_and_shares_leaves():
    src = {"a": [{"b": "x"}, 1], "c": {"d": None}}
    out = copy_tree(src)
    assert out == src and out["a"] is not src["a"] and out["a"][0] is not src["a"][0]
    out["a"][0]["b"] = "y"
    assert src["a"][0]["b"] == "x"


def test_component_controller_gets_more_workers_than_the_graph_controller():
    t = ControllerTunables()
    assert t.component_workers == t.component_workers_factor * t.graph_workers > t.graph_workers
    assert ControllerTunables(graph_workers=3).component_workers == 3 * t.component_workers_factor
