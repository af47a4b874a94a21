"""Controller runtime against a real kube-apiserver (the ``api`` profile): informers, leader election between
managers and between ``dynamo-operator run`` processes, namespace-scope markers, secure metrics.

Every wait is bounded; every server binds 127.0.0.1; subprocesses are killed in ``finally``.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
import uuid

import pytest
from dynamo_operator.runtime.client import CONFIGMAPS, LEASES, NAMESPACES, SERVICEACCOUNTS, ResourceClient
from dynamo_operator.runtime.controller import Controller, Request, Result
from dynamo_operator.runtime.informer import ClientListWatcher, Informer
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.runtime.metrics import OperatorMetrics
from dynamo_operator.runtime.nsscope import MARKER_LEASE_NAME
from dynamo_operator.runtime.settings import RuntimeSettings, RuntimeTunables
from dynamo_operator.runtime.testing import ECHO_SUFFIX, TEST_LABEL, setup_echo_controller
from dynamo_operator.runtime.workqueue import ItemExponentialFailureRateLimiter
from kubernetes.client.exceptions import ApiException
from support.poll import stays, wait_for
from support.processes import http_get, run_argv, spawn_operator

pytestmark = pytest.mark.api

FAST_LEASE = {"lease_duration": 4.0, "renew_deadline": 3.0, "retry_period": 0.5}


@pytest.fixture
def client(api_cluster):
    return ResourceClient(api_cluster.api_client())


@pytest.fixture
def make_ns(client):
    created = []

    def make(prefix="rt"):
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        client.create(NAMESPACES, {"metadata": {"name": name}})
        created.append(name)
        return name

    yield make
    for ns in created:
        # the api profile runs no namespace controller: a deleted namespace keeps its objects, and a Lease
        # left there reads as a Dynamo operator to every later conflict check on this cluster
        with contextlib.suppress(ApiException):
            for lease in client.list(LEASES, ns).get("items") or []:
                client.delete(LEASES, lease["metadata"]["name"], ns)
            client.delete(NAMESPACES, ns)


def parent_cm(client, ns, name="p", data=None):
    return client.create(
        CONFIGMAPS,
        {
            "metadata": {"name": name, "namespace": ns, "labels": {TEST_LABEL: "true"}},
            "data": data or {"k": "v"},
        },
    )


def child_data(client, ns, name="p"):
    try:
        return client.get(CONFIGMAPS, name + ECHO_SUFFIX, ns).get("data") or {}
    except ApiException as e:
        if e.status == 404:
            return None
        raise


def settings(**kw):
    base = dict(
        metrics_bind_address="0",
        health_probe_bind_address="127.0.0.1:0",
        metrics_secure=False,
        tunables=RuntimeTunables(scope_sweep_interval=0.2),
    )
    base.update(kw)
    return RuntimeSettings(**base)


@contextlib.contextmanager
def running(mgr: Manager):
    mgr.start()
    try:
        yield mgr
    finally:
        mgr.stop()
        assert mgr.wait(30)


# -- informer ------------------------------------------------------------------------------------------------


def test_resource_client_verbs_and_errors(client, make_ns):
    ns = make_ns("rc")
    created = client.create(CONFIGMAPS, {"metadata": {"name": "a", "namespace": ns}, "data": {"x": "1"}})
    assert created["metadata"]["uid"]
    got = client.get(CONFIGMAPS, "a", ns)
    got["data"] = {"x": "2"}
    client.replace(CONFIGMAPS, got)
    with pytest.raises(ApiException) as e:
        client.replace(CONFIGMAPS, got)  # stale resourceVersion
    assert e.value.status == 409
    client.patch(CONFIGMAPS, "a", {"data": {"y": "3"}}, ns)
    items, rv = client.list_all(CONFIGMAPS, ns)
    mine = [i for i in items if i["metadata"]["name"] == "a"]
    assert [i["data"] for i in mine] == [{"x": "2", "y": "3"}] and rv
    assert mine[0]["kind"] == "ConfigMap"
    with pytest.raises(ApiException) as e:
        client.get(CONFIGMAPS, "missing", ns)
    assert e.value.status == 404 and "NotFound" in e.value.body
    client.delete(CONFIGMAPS, "a", ns)
    assert (
        LEASES.object_path("x", "kube-system")
        == "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x"
    )


def test_watch_stream_and_close_from_another_thread(client, make_ns):
    import threading

    ns = make_ns("w")
    _, rv = client.list_all(CONFIGMAPS, ns)
    w = client.watch(CONFIGMAPS, ns, resource_version=rv, timeout_seconds=20)
    got = []

    def consume():
        for ev in w:
            if ev["type"] in ("ADDED", "DELETED") and ev["object"]["metadata"]["name"] == "w1":
                got.append((ev["type"], ev["object"]["metadata"]["name"]))

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    client.create(CONFIGMAPS, {"metadata": {"name": "w1", "namespace": ns}})
    client.delete(CONFIGMAPS, "w1", ns)
    wait_for(lambda: len(got) == 2, 10)
    assert got == [("ADDED", "w1"), ("DELETED", "w1")]
    w.close()  # from another thread: the consumer ends promptly
    t.join(5)
    assert not t.is_alive()


class CountingListWatcher(ClientListWatcher):
    """Counts the watches opened (the one way to see, from outside, that an informer resumed) and the
    lists (none where the apiserver streams the initial state)."""

    watches = 0
    lists = 0

    def watch(self, resource_version: str):
        self.watches += 1
        return super().watch(resource_version)

    def watch_list(self):
        self.watches += 1
        return super().watch_list()

    def list(self, *args, **kw):
        self.lists += 1
        return super().list(*args, **kw)


def test_informer_sees_create_update_delete(api_cluster, client, make_ns):
    ns = make_ns()
    events = []
    lw = CountingListWatcher(client, CONFIGMAPS, ns, watch_timeout=(5, 6))
    inf = Informer(CONFIGMAPS, lw)
    inf.add_event_handler(
        on_add=lambda o: events.append(("add", o["metadata"]["name"])),
        on_update=lambda a, b: events.append(("update", b["metadata"]["name"], b.get("data"))),
        on_delete=lambda o: events.append(("delete", o["metadata"]["name"])),
    )
    client.create(CONFIGMAPS, {"metadata": {"name": "before", "namespace": ns}})
    inf.start()
    try:
        assert inf.wait_for_sync(10)
        assert ("add", "before") in events
        client.create(CONFIGMAPS, {"metadata": {"name": "a", "namespace": ns}, "data": {"x": "1"}})
        wait_for(lambda: ("add", "a") in events, 10)
        client.patch(CONFIGMAPS, "a", {"data": {"x": "2"}}, ns)
        wait_for(lambda: ("update", "a", {"x": "2"}) in events, 10)
        client.delete(CONFIGMAPS, "a", ns)
        wait_for(lambda: ("delete", "a") in events, 10)
        assert inf.store.get(ns, "a") is None and inf.store.get(ns, "before") is not None
        # the server ends the watch after timeoutSeconds (5-6s): the informer resumes without losing events
        wait_for(lambda: lw.watches >= 2, 15, "the informer's next watch after the server ended the first")
        client.create(CONFIGMAPS, {"metadata": {"name": "after-resume", "namespace": ns}})
        wait_for(lambda: ("add", "after-resume") in events, 10)
        assert inf.relists == 1
        # the initial state came streamed (watch-list, served by this apiserver), not listed
        assert inf.stream_initial and lw.lists == 0
    finally:
        inf.stop()


# -- controllers and leader election in one process ----------------------------------------------------------


def test_two_managers_one_leader_and_handover_on_release(api_cluster, client, make_ns):
    ns = make_ns()
    mgrs = []
    for _ in range(2):
        m = Manager(
            settings(leader_elect=True, leader_election_namespace=ns, **FAST_LEASE), api_cluster.api_client()
        )
        setup_echo_controller(m)
        mgrs.append(m)
    a, b = mgrs
    a.start()
    b.start()
    try:
        wait_for(lambda: a.is_leader() or b.is_leader(), 15)
        stays(lambda: a.is_leader() != b.is_leader(), 1.5, "exactly one leader")
        leader, follower = (a, b) if a.is_leader() else (b, a)
        lease = client.get(LEASES, "dynamo.nvidia.com", ns)
        assert lease["spec"]["holderIdentity"] == leader.identity
        # the controllers' writes are fenced, and one accepted past leaseDuration - renewDeadline is reported
        for m in mgrs:
            assert m.client.write_fence is not None and m.lease_client.write_fence is None
            assert m.client.late_write_after == FAST_LEASE["lease_duration"] - FAST_LEASE["renew_deadline"]
            assert m.client.on_late_write == m._late_write
        parent_cm(client, ns)
        wait_for(
            lambda: (child_data(client, ns) or {}).get("reconciledBy") == leader.identity,
            15,
        )
        # the follower has caches (ready) but no workers
        assert follower.controllers["configmap-echo"].reconciles == 0
        assert follower.wait_for_cache_sync(10)
        # a clean stop releases the lease: the follower takes over well before the lease would expire
        t0 = time.monotonic()
        leader.stop()
        wait_for(follower.is_leader, FAST_LEASE["lease_duration"])
        assert time.monotonic() - t0 < FAST_LEASE["lease_duration"]
        client.patch(CONFIGMAPS, "p", {"data": {"k": "changed"}}, ns)
        wait_for(
            lambda: child_data(client, ns) == {"k": "changed", "reconciledBy": follower.identity},
            15,
        )
    finally:
        for m in mgrs:
            m.stop()
        for m in mgrs:
            assert m.wait(30)


def test_owned_child_edit_is_put_back_and_metrics_count(api_cluster, client, make_ns):
    ns = make_ns()
    mgr = Manager(settings(), api_cluster.api_client())
    setup_echo_controller(mgr)
    with running(mgr):
        assert mgr.wait_for_cache_sync(15)
        parent_cm(client, ns)
        wait_for(lambda: child_data(client, ns) is not None, 15)
        client.patch(CONFIGMAPS, "p" + ECHO_SUFFIX, {"data": {"k": "hand-edit"}}, ns)
        wait_for(
            lambda: (child_data(client, ns) or {}).get("k") == "v",
            15,
        )

        def successes() -> float:
            got = mgr.registry.get_sample_value(
                "dynamo_operator_reconcile_total",
                {"resource_type": "ConfigMap", "namespace": ns, "result": "success"},
            )
            return got or 0.0

        # the pass that put the child back is counted once it returns, just after its write is seen
        # (a loaded machine showed the write before the count: 1.0)
        wait_for(lambda: successes() >= 2, 15)


# -- two `dynamo-operator run` processes ---------------------------------------------------------------------


def _spawn(api_cluster, name, ns, tmp_path):
    env = dict(api_cluster.env)
    env.update(POD_NAME=name, DYNAMO_RUNTIME_TEST_IDENTITY=name)
    return spawn_operator(
        api_cluster,
        tmp_path / f"{name}.log",
        "--no-default-controllers",
        "--setup",
        "dynamo_operator.runtime.testing:setup",
        "--leader-elect",
        "--leader-election-namespace",
        ns,
        "--leader-elect-lease-duration",
        str(FAST_LEASE["lease_duration"]),
        "--leader-elect-renew-deadline",
        str(FAST_LEASE["renew_deadline"]),
        "--leader-elect-retry-period",
        str(FAST_LEASE["retry_period"]),
        env=env,
    )


def test_processes_one_leader_and_kill9_takeover(api_cluster, client, make_ns, tmp_path):
    ns = make_ns()
    procs = {n: _spawn(api_cluster, n, ns, tmp_path) for n in ("op-a", "op-b")}
    try:
        for p in procs.values():
            p.wait_ready(30)

        def holder():
            try:
                return client.get(LEASES, "dynamo.nvidia.com", ns)["spec"].get("holderIdentity") or ""
            except ApiException:
                return ""

        wait_for(lambda: holder().split("_")[0] in procs, 20)
        leader_name = holder().split("_")[0]
        other = "op-b" if leader_name == "op-a" else "op-a"
        parent_cm(client, ns)
        wait_for(
            lambda: (child_data(client, ns) or {}).get("reconciledBy") == leader_name,
            20,
        )
        stays(lambda: child_data(client, ns)["reconciledBy"] == leader_name, 1.5, "the follower never wrote")
        status, body = http_get(f"http://127.0.0.1:{procs[leader_name].metrics}/metrics")
        assert status == 200
        assert any(
            ln.startswith("dynamo_operator_reconcile_total{") and f'namespace="{ns}"' in ln
            for ln in body.splitlines()
        )

        procs[leader_name].send_signal(signal.SIGKILL)
        t0 = time.monotonic()
        client.patch(CONFIGMAPS, "p", {"data": {"k": "while-leaderless"}}, ns)  # changed meanwhile
        wait_for(
            lambda: holder().split("_")[0] == other,
            FAST_LEASE["lease_duration"] + 3,
        )
        assert time.monotonic() - t0 <= FAST_LEASE["lease_duration"] + 3
        wait_for(
            lambda: child_data(client, ns) == {"k": "while-leaderless", "reconciledBy": other},
            15,
        )
        # SIGTERM releases the lease: holder becomes empty at once, exit code 0
        procs[other].send_signal(signal.SIGTERM)
        assert procs[other].wait(20) == 0
        assert holder() == ""
    finally:
        for p in procs.values():
            p.reap()


# -- namespace-restricted + cluster-wide ---------------------------------------------------------------------


def test_restricted_and_cluster_wide_coexist_and_takeover(api_cluster, client, make_ns):
    team, shared = make_ns("team"), make_ns("shared")
    restricted = Manager(
        settings(
            restricted_namespace=team,
            scope_lease_duration=3.0,
            scope_lease_renew_interval=1.0,
            operator_version="9.9.9-test",
            pod_name="restricted-pod",
        ),
        api_cluster.api_client(),
    )
    setup_echo_controller(restricted)
    cluster = Manager(settings(), api_cluster.api_client())
    setup_echo_controller(cluster)
    restricted.start()
    try:
        marker = client.get(LEASES, MARKER_LEASE_NAME, team)
        assert marker["spec"]["holderIdentity"] == "namespace-restricted-operator-9.9.9-test/restricted-pod"
        assert marker["spec"]["leaseDurationSeconds"] == 3
        cluster.start()
        assert cluster.wait_for_cache_sync(15)
        wait_for(lambda: cluster.is_namespace_excluded(team), 5)
        assert not cluster.is_namespace_excluded(shared)
        assert restricted.is_namespace_excluded(shared) and not restricted.is_namespace_excluded(team)
        parent_cm(client, team)
        parent_cm(client, shared)
        wait_for(
            lambda: (child_data(client, shared) or {}).get("reconciledBy") == cluster.identity,
            15,
        )
        wait_for(
            lambda: (child_data(client, team) or {}).get("reconciledBy") == restricted.identity,
            15,
        )
        # renewals keep the claim alive past one lease duration (3 s)
        stays(
            lambda: cluster.is_namespace_excluded(team), 4, "the namespace claimed by the restricted operator"
        )
        assert child_data(client, team)["reconciledBy"] == restricted.identity
        # the restricted operator dies without cleaning up: its marker expires and the namespace comes back
        restricted.stop(release=False)
        assert restricted.wait(30)
        client.patch(CONFIGMAPS, "p", {"data": {"k": "orphaned"}}, team)
        t0 = time.monotonic()
        wait_for(
            lambda: not cluster.is_namespace_excluded(team),
            3.0 + 3,
        )
        wait_for(
            lambda: child_data(client, team) == {"k": "orphaned", "reconciledBy": cluster.identity},
            15,
        )
        assert time.monotonic() - t0 < 15
    finally:
        restricted.stop()
        cluster.stop()
        assert restricted.wait(30) and cluster.wait(30)


def test_clean_restricted_stop_deletes_marker_and_returns_namespace_at_once(api_cluster, client, make_ns):
    team = make_ns("team")
    restricted = Manager(settings(restricted_namespace=team), api_cluster.api_client())  # default 30s marker
    cluster = Manager(settings(), api_cluster.api_client())
    setup_echo_controller(cluster)
    restricted.start()
    cluster.start()
    try:
        wait_for(lambda: cluster.is_namespace_excluded(team), 10)
        parent_cm(client, team)
        # nobody reconciles it: restricted has no controller here
        stays(lambda: child_data(client, team) is None, 1, "no child in the claimed namespace")
        restricted.stop()  # deletes the marker
        assert restricted.wait(30)
        wait_for(lambda: not cluster.is_namespace_excluded(team), 5)  # not 30s
        wait_for(
            lambda: (child_data(client, team) or {}).get("reconciledBy") == cluster.identity,
            15,
        )
    finally:
        restricted.stop()
        cluster.stop()
        assert restricted.wait(30) and cluster.wait(30)


# -- secure metrics ------------------------------------------------------------------------------------------


def _token_for(client, ns, sa):
    client.create(SERVICEACCOUNTS, {"metadata": {"name": sa, "namespace": ns}})
    tr = client.create_raw(
        f"/api/v1/namespaces/{ns}/serviceaccounts/{sa}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 600},
        },
    )
    return tr["status"]["token"]


def test_secure_metrics_refuses_anonymous_and_serves_authorized(api_cluster, client, make_ns):
    ns = make_ns()
    reader, nobody = _token_for(client, ns, "reader"), _token_for(client, ns, "nobody")
    role = f"metrics-reader-{ns}"
    client.request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        body={"metadata": {"name": role}, "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]},
    )
    client.request(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        body={
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}],
        },
    )
    mgr = Manager(settings(metrics_bind_address="127.0.0.1:0", metrics_secure=True), api_cluster.api_client())
    setup_echo_controller(mgr)
    try:
        with running(mgr):
            url = mgr.metrics_server.url + "/metrics"
            assert url.startswith("https://127.0.0.1:")
            wait_for(
                lambda: http_get(mgr.health.url + "/readyz")[0] == 200,
                15,
            )
            parent_cm(client, ns)
            wait_for(lambda: child_data(client, ns) is not None, 15)
            assert http_get(url)[0] == 401
            assert http_get(url, "not-a-token")[0] == 401
            assert http_get(url, nobody)[0] == 403
            status, body = 0, ""

            def scraped():
                nonlocal status, body
                status, body = http_get(url, reader)
                return status == 200 and f'namespace="{ns}"' in body

            wait_for(scraped, 15, lambda: (status, body[:500]))
            line = next(
                ln
                for ln in body.splitlines()
                if ln.startswith("dynamo_operator_reconcile_total{") and f'namespace="{ns}"' in ln
            )
            assert 'resource_type="ConfigMap"' in line and 'result="success"' in line
            assert float(line.rsplit(" ", 1)[1]) >= 1
            assert 'workqueue_adds_total{name="configmap-echo"}' in body
    finally:
        for path in ("clusterrolebindings", "clusterroles"):
            with contextlib.suppress(ApiException):
                client.request("DELETE", f"/apis/rbac.authorization.k8s.io/v1/{path}/{role}")


def test_process_exits_nonzero_when_marker_cannot_be_created(api_cluster, tmp_path):
    argv = run_argv(
        api_cluster,
        "--health-probe-bind-address",
        "0",
        "--metrics-bind-address",
        "0",
        "--no-default-controllers",
        "--namespace-restricted",
        f"missing-{uuid.uuid4().hex[:6]}",
    )
    r = subprocess.run(argv, env=api_cluster.env, capture_output=True, timeout=60)
    assert r.returncode == 1, r.stderr.decode()[-2000:]


# -- controller semantics (requeue, backoff, owner mapping, exclusions) on real watches ---------------------


def _controller(client, reconcile, label: str, excluded=()):
    """A Controller on ConfigMaps labelled ``label`` in every namespace, owning ConfigMaps labelled
    ``label`` + ``-owned``: both caches watch the real server (cluster-wide, so a namespace exclusion is
    what keeps a request out)."""
    infs = [
        Informer(
            CONFIGMAPS,
            ClientListWatcher(client, CONFIGMAPS, None, label_selector=selector, watch_timeout=(5, 6)),
            name=role,
        )
        for role, selector in (("primary", label), ("owned", f"{label}-owned"))
    ]
    for inf in infs:
        inf.start()
    assert all(i.wait_for_sync(10) for i in infs)
    m = OperatorMetrics()
    ctl = Controller(
        "test",
        CONFIGMAPS,
        infs[0],
        reconcile,
        owned=[(CONFIGMAPS, infs[1])],
        workers=2,
        metrics=m,
        is_excluded=lambda ns: ns in excluded,
    )
    return ctl, m, infs


def _labelled(name: str, ns: str, label: str, **meta) -> dict:
    key, value = label.split("=")
    return {"metadata": {"name": name, "namespace": ns, "labels": {key: value}, **meta}}


def _stop_all(ctl, infs):
    ctl.stop(timeout=5)
    for i in infs:
        i.stop()


def test_controller_requeues_errors_with_backoff_and_counts_them(client, make_ns):
    ns, label = make_ns("bo"), f"rtctl={uuid.uuid4().hex[:8]}"
    client.create(CONFIGMAPS, _labelled("a", ns, label))
    calls = []

    def reconcile(req):
        calls.append((req, time.monotonic()))
        if len(calls) < 3:
            raise RuntimeError("boom")
        return Result()

    ctl, m, infs = _controller(client, reconcile, label)
    ctl.rate_limiter_factory = lambda: ItemExponentialFailureRateLimiter(0.05, 1)
    ctl.start()
    try:
        wait_for(lambda: len(calls) >= 3, 10)
        stays(lambda: len(calls) == 3, 0.3, "no requeue after the success (forgotten)")
        assert calls[2][1] - calls[1][1] >= 0.09  # second retry waited ~0.1s
        lbl = {"resource_type": "ConfigMap", "namespace": ns}
        r = m.registry
        assert r.get_sample_value("dynamo_operator_reconcile_total", {**lbl, "result": "error"}) == 2
        assert r.get_sample_value("dynamo_operator_reconcile_total", {**lbl, "result": "success"}) == 1
        errors = r.get_sample_value(
            "dynamo_operator_reconcile_errors_total", {**lbl, "error_type": "internal"}
        )
        assert errors == 2
    finally:
        _stop_all(ctl, infs)


def test_controller_requeue_after(client, make_ns):
    ns, label = make_ns("ra"), f"rtctl={uuid.uuid4().hex[:8]}"
    client.create(CONFIGMAPS, _labelled("a", ns, label))
    calls = []

    def reconcile(req):
        calls.append(time.monotonic())
        return Result(requeue_after=0.2) if len(calls) == 1 else Result()

    ctl, m, infs = _controller(client, reconcile, label)
    ctl.start()
    try:
        wait_for(lambda: len(calls) >= 2, 10)
        assert calls[1] - calls[0] >= 0.18
        lbl = {"resource_type": "ConfigMap", "namespace": ns, "result": "requeue"}
        assert m.registry.get_sample_value("dynamo_operator_reconcile_total", lbl) == 1
    finally:
        _stop_all(ctl, infs)


def test_owned_child_enqueues_controller_owner_and_exclusions_drop(client, make_ns):
    ns, claimed, label = make_ns("own"), make_ns("claimed"), f"rtctl={uuid.uuid4().hex[:8]}"
    parent = client.create(CONFIGMAPS, _labelled("parent", ns, label))
    client.create(CONFIGMAPS, _labelled("other", claimed, label))
    client.create(CONFIGMAPS, _labelled("orphan", ns, label))
    seen: list[Request] = []
    ctl, _m, infs = _controller(client, seen.append, label, excluded={claimed})
    ctl.start()
    try:
        wait_for(lambda: Request(ns, "parent") in seen, 10)
        seen.clear()
        ref = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "parent",
            "uid": parent["metadata"]["uid"],
            "controller": True,
        }
        client.create(CONFIGMAPS, _labelled("child", ns, f"{label}-owned", ownerReferences=[ref]))
        # the owned child's event enqueues its controller owner, not itself
        wait_for(lambda: Request(ns, "parent") in seen, 10)
        # an owned object maps to its owner only
        stays(lambda: Request(ns, "child") not in seen, 0.3, "the owned child never enqueued itself")
        # the primary cache holds `other` (cluster-wide watch), but its namespace is another operator's
        assert infs[0].store.get(claimed, "other") is not None
        assert Request(claimed, "other") not in seen
    finally:
        _stop_all(ctl, infs)
