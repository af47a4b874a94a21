"""Leader-election timing and namespace-scope marker logic against an in-memory Lease store."""

from __future__ import annotations

import copy
import datetime as dt
import threading

import pytest
from dynamo_operator.runtime.client import LEASES
from dynamo_operator.runtime.leaderelection import (
    LeaderElectionRecord,
    LeaderElector,
    format_microtime,
    held_by_other,
)
from dynamo_operator.runtime.nsscope import (
    MARKER_LEASE_NAME,
    NamespaceExclusions,
    NamespaceScopeMarker,
    holder_identity,
    marker_expired,
    max_renew_failures,
    validate_scope_durations,
)
from kubernetes.client.exceptions import ApiException
from support.poll import wait_for


class FakeLeaseClient:
    """get/create/replace/delete with resourceVersion conflicts, like the apiserver."""

    def __init__(self):
        self.objs = {}
        self.rv = 0
        self.lock = threading.Lock()
        self.fail = False
        self.writes = 0

    def _check(self):
        if self.fail:
            raise ApiException(status=503, reason="unavailable")

    def get(self, res, name, namespace=None):
        self._check()
        with self.lock:
            if (namespace, name) not in self.objs:
                raise ApiException(status=404, reason="NotFound")
            return copy.deepcopy(self.objs[(namespace, name)])

    def create(self, res, body, namespace=None):
        self._check()
        with self.lock:
            key = (body["metadata"]["namespace"], body["metadata"]["name"])
            if key in self.objs:
                raise ApiException(status=409, reason="AlreadyExists")
            self.rv += 1
            self.writes += 1
            obj = copy.deepcopy(body)
            obj["metadata"]["resourceVersion"] = str(self.rv)
            self.objs[key] = obj
            return copy.deepcopy(obj)

    def replace(self, res, body, subresource=None):
        self._check()
        with self.lock:
            key = (body["metadata"]["namespace"], body["metadata"]["name"])
            cur = self.objs.get(key)
            if cur is None:
                raise ApiException(status=404, reason="NotFound")
            if body["metadata"].get("resourceVersion") != cur["metadata"]["resourceVersion"]:
                raise ApiException(status=409, reason="Conflict")
            self.rv += 1
            self.writes += 1
            obj = copy.deepcopy(body)
            obj["metadata"]["resourceVersion"] = str(self.rv)
            self.objs[key] = obj
            return copy.deepcopy(obj)

    def delete(self, res, name, namespace=None, propagation=None):
        self._check()
        with self.lock:
            if self.objs.pop((namespace, name), None) is None:
                raise ApiException(status=404, reason="NotFound")


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def elector(client, identity, clock, **kw):
    return LeaderElector(
        client,
        "kube-system",
        "dynamo.nvidia.com",
        identity,
        lease_duration=15,
        renew_deadline=10,
        retry_period=2,
        clock=clock,
        **kw,
    )


def test_held_by_other_pure_timing():
    rec = LeaderElectionRecord(holder_identity="a", lease_duration_seconds=15)
    assert held_by_other(rec, "b", observed_at=100, now=114.9, default_duration=15)
    assert not held_by_other(rec, "b", observed_at=100, now=115.1, default_duration=15)
    assert not held_by_other(rec, "a", observed_at=100, now=101, default_duration=15)  # ours
    assert not held_by_other(LeaderElectionRecord(holder_identity=""), "b", 100, 101, 15)  # released


def test_exactly_one_leader_and_takeover_after_observed_expiry():
    c = FakeLeaseClient()
    clock = Clock()
    a, b = elector(c, "a", clock), elector(c, "b", clock)
    assert a.try_acquire_or_renew()
    assert not b.try_acquire_or_renew()  # b first observes a's record now
    clock.t += 10
    assert a.try_acquire_or_renew()  # renew: record changes
    assert not b.try_acquire_or_renew()  # b re-observes at t+10
    clock.t += 14
    assert not b.try_acquire_or_renew()  # only 14s since b saw a change
    clock.t += 2
    assert b.try_acquire_or_renew()  # a stopped renewing for > 15s of b's clock
    spec = c.objs[("kube-system", "dynamo.nvidia.com")]["spec"]
    assert spec["holderIdentity"] == "b"
    assert spec["leaseTransitions"] == 1
    assert not a.try_acquire_or_renew()  # a now sees b's fresh record


def test_conflicting_writes_one_wins():
    c = FakeLeaseClient()
    clock = Clock()
    a, b = elector(c, "a", clock), elector(c, "b", clock)
    assert a.try_acquire_or_renew()
    # both observe an expired/released lease, then race: the second PUT carries a stale resourceVersion
    a.release()
    lease = c.get(LEASES, "dynamo.nvidia.com", "kube-system")
    assert lease["spec"]["holderIdentity"] == "" and lease["spec"]["leaseDurationSeconds"] == 1
    assert b.try_acquire_or_renew()  # released: taken at once, no waiting out the lease
    orig_get = c.get
    c.get = lambda *a_, **k: lease  # a acts on the pre-b snapshot
    assert not a.try_acquire_or_renew()  # 409 → not leader
    c.get = orig_get


def test_release_only_by_holder():
    c = FakeLeaseClient()
    clock = Clock()
    a, b = elector(c, "a", clock), elector(c, "b", clock)
    assert a.try_acquire_or_renew()
    assert b.release() is False
    assert c.objs[("kube-system", "dynamo.nvidia.com")]["spec"]["holderIdentity"] == "a"


def test_elector_loop_calls_back_and_detects_loss():
    c = FakeLeaseClient()
    started, lost = threading.Event(), threading.Event()
    e = LeaderElector(
        c,
        "ns",
        "id",
        "me",
        lease_duration=0.6,
        renew_deadline=0.4,
        retry_period=0.1,
        on_started_leading=started.set,
        on_stopped_leading=lost.set,
    )
    e.start()
    try:
        assert started.wait(2)
        assert e.is_leader()
        c.fail = True  # apiserver unreachable: renewals fail until the renew deadline
        assert lost.wait(2)
        assert not e.is_leader()
    finally:
        e.stop(release=False)


def test_elector_validates_durations():
    with pytest.raises(ValueError):
        LeaderElector(
            FakeLeaseClient(), "ns", "id", "me", lease_duration=5, renew_deadline=10, retry_period=2
        )


# -- namespace scope markers ---------------------------------------------------------------------------------

T0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


def marker(ns, renew=T0, duration=30, name=MARKER_LEASE_NAME):
    spec = {"holderIdentity": "namespace-restricted-operator-1.0.0/pod", "leaseDurationSeconds": duration}
    if renew is not None:
        spec["renewTime"] = format_microtime(renew)
    return {"metadata": {"name": name, "namespace": ns}, "spec": spec}


def test_marker_expiry_rules():
    assert not marker_expired(marker("x"), T0 + dt.timedelta(seconds=29))
    assert not marker_expired(marker("x"), T0 + dt.timedelta(seconds=30))
    assert marker_expired(marker("x"), T0 + dt.timedelta(seconds=30.001))
    assert marker_expired(marker("x", renew=None), T0)  # no renewTime → expired
    assert marker_expired(marker("x", duration=None), T0)  # no duration → expired
    assert max_renew_failures(30, 10) == 2
    assert max_renew_failures(10, 9) == 1
    assert holder_identity("1.2.3", "op-7f9") == "namespace-restricted-operator-1.2.3/op-7f9"
    validate_scope_durations(30, 10)
    for bad in [(0, 1), (10, 10), (10, 20), (10, 0)]:
        with pytest.raises(ValueError):
            validate_scope_durations(*bad)


def test_exclusions_follow_markers_and_release_on_expiry_or_delete():
    now = [T0]
    released, excluded = [], []
    ex = NamespaceExclusions(on_released=released.append, on_excluded=excluded.append, now=lambda: now[0])
    ex.observe(marker("team-a"))
    ex.observe(marker("team-b"))
    ex.observe(marker("ignored", name="some-other-lease"))
    ex.observe(marker("stale", renew=T0 - dt.timedelta(minutes=5)))
    assert ex.contains("team-a") and ex.contains("team-b")
    assert not ex.contains("ignored") and not ex.contains("stale") and not ex.contains("default")
    assert excluded == ["team-a", "team-b"]
    now[0] = T0 + dt.timedelta(seconds=20)
    ex.observe(marker("team-a", renew=now[0]))  # renewed
    now[0] = T0 + dt.timedelta(seconds=31)
    assert ex.sweep() == ["team-b"]  # team-b's holder died: expired, taken back
    assert released == ["team-b"]
    assert ex.contains("team-a")
    ex.forget("team-a")  # lease deleted on a clean stop
    assert released == ["team-b", "team-a"]
    assert not ex.contains("team-a")
    ex.forget("team-a")
    assert released == ["team-b", "team-a"]  # once per take-back
    # contains() re-checks expiry itself, without waiting for the sweep
    ex.observe(marker("team-c", renew=now[0]))
    now[0] += dt.timedelta(seconds=31)
    assert not ex.contains("team-c")
    assert released[-1] == "team-c"


def test_marker_create_update_delete():
    c = FakeLeaseClient()
    m = NamespaceScopeMarker(
        c, "team-a", "namespace-restricted-operator-1.0.0/p", lease_duration=30, renew_interval=10
    )
    m.ensure()
    lease = c.objs[("team-a", MARKER_LEASE_NAME)]
    assert lease["spec"]["holderIdentity"] == "namespace-restricted-operator-1.0.0/p"
    assert lease["spec"]["leaseDurationSeconds"] == 30
    first = lease["spec"]["renewTime"]
    m.ensure()
    assert c.objs[("team-a", MARKER_LEASE_NAME)]["spec"]["acquireTime"] == lease["spec"]["acquireTime"]
    assert c.objs[("team-a", MARKER_LEASE_NAME)]["spec"]["renewTime"] >= first
    del c.objs[("team-a", MARKER_LEASE_NAME)]
    m.ensure()  # self-heals a manual deletion
    m.stop(delete=True)
    assert ("team-a", MARKER_LEASE_NAME) not in c.objs
    m.stop(delete=True)  # 404 is fine


def test_marker_gives_up_after_failure_budget():
    c = FakeLeaseClient()
    fatal = threading.Event()
    m = NamespaceScopeMarker(
        c, "ns", "id", lease_duration=0.3, renew_interval=0.1, on_fatal=lambda r: fatal.set()
    )
    assert m.max_failures == 2
    m.start()
    try:
        c.fail = True
        assert fatal.wait(2)
        assert m.failures == 2
    finally:
        m.stop(delete=False)


def test_marker_recovers_from_a_single_failure():
    c = FakeLeaseClient()
    fatal = threading.Event()
    m = NamespaceScopeMarker(
        c, "ns", "id", lease_duration=0.3, renew_interval=0.1, on_fatal=lambda r: fatal.set()
    )
    m.start()
    try:
        c.fail = True
        wait_for(lambda: m.failures == 1, 1, interval=0.01)
        c.fail = False
        wait_for(lambda: m.failures == 0, 1)
        assert not fatal.is_set()
    finally:
        m.stop()
