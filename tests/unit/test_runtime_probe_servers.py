"""The health and metrics servers against abuse (issue 23, Medium 8): made-up tokens cost a bounded number
of TokenReviews and never flush a real caller's cached decision; readiness details only for callers inside
the pod or with a token; the health listener on the pod IP and loopback; idle connections neither pile up
nor cost threads."""

from __future__ import annotations

import datetime as dt
import socket
import ssl
import threading
import urllib.request

import pytest
from dynamo_operator.pki import issue_ca, issue_serving
from dynamo_operator.runtime.httpserver import Request
from dynamo_operator.runtime.metrics import OperatorMetrics
from dynamo_operator.runtime.servers import Authenticator, HealthServer, MetricsServer, probe_hosts
from support.fakecerts import FakeManager
from support.poll import wait_for


class Reviews:
    """A stand-in for the API server's TokenReview and SubjectAccessReview: ``reader`` is allowed."""

    def __init__(self) -> None:
        self.token_reviews = 0
        self.sar_paths: list[str] = []

    def create_raw(self, path: str, body: dict) -> dict:
        if body["kind"] == "TokenReview":
            self.token_reviews += 1
            ok = body["spec"]["token"] in ("reader", "nobody")
            name = f"system:serviceaccount:x:{body['spec']['token']}"
            return {"status": {"authenticated": ok, "user": {"username": name}}}
        self.sar_paths.append(body["spec"]["nonResourceAttributes"]["path"])
        return {"status": {"allowed": body["spec"]["user"].endswith(":reader")}}


def test_made_up_tokens_cost_a_bounded_number_of_reviews_and_never_lock_out_a_known_caller():
    reviews = Reviews()
    auth = Authenticator(reviews, ttl=0.05, review_rate=5.0, review_burst=20)
    assert auth.check("Bearer reader", "/metrics") == (200, "ok")
    codes: dict[int, int] = {}
    for i in range(2000):  # 2000 distinct made-up tokens, as fast as they come
        code = auth.check(f"Bearer made-up-{i}", "/metrics")[0]
        codes[code] = codes.get(code, 0) + 1
    assert reviews.token_reviews <= 1 + 20 + 5 * 2  # the burst, plus the refill while the loop ran
    assert codes.get(429, 0) >= 1900 and set(codes) <= {401, 429}
    wait_for(lambda: auth.check("Bearer reader", "/metrics")[0] == 200, 2)  # cache expired: exempt


def test_decisions_are_an_lru_keyed_by_token_hash_with_negative_caching():
    reviews = Reviews()
    auth = Authenticator(reviews, max_entries=100, review_burst=1000)
    assert auth.check("Bearer made-up", "/metrics")[0] == 401
    assert auth.check("Bearer made-up", "/metrics")[0] == 401
    assert reviews.token_reviews == 1  # the refusal was cached
    assert auth.check("Bearer reader", "/metrics")[0] == 200
    for i in range(150):
        auth.check(f"Bearer other-{i}", "/metrics")
        auth.check("Bearer reader", "/metrics")  # used all along: never the least recently used
    assert len(auth._cache) == 100
    before = reviews.token_reviews
    assert auth.check("Bearer reader", "/metrics")[0] == 200 and reviews.token_reviews == before
    assert all("reader" not in str(k) and "made-up" not in str(k) for k in auth._cache)  # hashes only
    assert auth.check("Bearer nobody", "/metrics")[0] == 403


def _req(path: str, peer: str, token: str = "") -> Request:
    return Request("GET", path, {"authorization": f"Bearer {token}"} if token else {}, b"", peer)


def test_readiness_details_only_for_callers_in_the_pod_or_with_a_token():
    reviews = Reviews()
    hs = HealthServer("127.0.0.1:0", auth=Authenticator(reviews))
    hs.ready_checks["webhook-callers"] = lambda: (_ for _ in ()).throw(RuntimeError("secret internals"))
    hs.ready_checks["informers-synced"] = lambda: True
    status, _, body = hs.handle(_req("/readyz?verbose", "10.0.0.7"))
    assert status == 500 and b"reason withheld" in body and b"secret internals" not in body
    assert b"[+]informers-synced ok" in body  # which check fails is no secret, why it fails is
    assert b"secret internals" not in hs.handle(_req("/readyz", "10.0.0.7", "made-up"))[2]
    assert b"secret internals" in hs.handle(_req("/readyz?verbose", "10.0.0.7", "reader"))[2]
    assert reviews.sar_paths[-1] == "/readyz"
    assert b"secret internals" in hs.handle(_req("/readyz", "127.0.0.1"))[2]  # kubectl port-forward
    assert b"secret internals" in hs.handle(_req("/readyz", "::ffff:127.0.0.1"))[2]
    hs.ready_checks.pop("webhook-callers")
    assert hs.handle(_req("/readyz", "10.0.0.7")) == (200, "text/plain; charset=utf-8", b"ok")
    status, _, body = hs.handle(_req("/readyz?verbose", "10.0.0.7"))
    assert status == 200 and body == b"[+]informers-synced ok\nreadyz check passed\n"


def test_health_listens_on_the_pod_ip_and_loopback_when_the_host_is_empty():
    assert probe_hosts(":8081", "10.1.2.3") == ["10.1.2.3", "127.0.0.1"]
    assert probe_hosts(":8081", None) == ["0.0.0.0"]  # outside a pod: as before
    assert probe_hosts("0.0.0.0:8081", "10.1.2.3") == ["0.0.0.0"]  # asked for explicitly
    assert probe_hosts("127.0.0.1:8081", "10.1.2.3") == ["127.0.0.1"]
    assert probe_hosts("[::1]:8081", "fd00::5") == ["::1"]
    assert probe_hosts(":8081", "fd00::5") == ["fd00::5", "127.0.0.1"]
    assert probe_hosts("0", "10.1.2.3") == []
    hs = HealthServer(":0", pod_ip="127.0.0.1")  # the test's stand-in for the pod IP is loopback itself
    assert hs.hosts() == ["127.0.0.1"]


@pytest.mark.parametrize("count", [200])
def test_idle_connections_neither_pile_up_nor_cost_threads(count):
    hs = HealthServer("127.0.0.1:0")
    hs.ready_checks["x"] = lambda: True
    threads_before = threading.active_count()
    hs.start()
    idle: list[socket.socket] = []
    try:
        for _ in range(count):  # more than the cap (64), none sending a byte
            idle.append(socket.create_connection(("127.0.0.1", hs.port), timeout=5))
        wait_for(lambda: hs._srv.stats()["evicted_idle"] >= count - 64, 10)
        assert hs._srv.connections <= 64
        assert threading.active_count() <= threads_before + 1 + 2  # the loop thread, the pool's workers
        with urllib.request.urlopen(f"{hs.url}/readyz", timeout=5) as r:  # the probe still gets through
            assert r.status == 200
    finally:
        for s in idle:
            s.close()
        hs.stop()


def test_metrics_serve_the_webhook_certificate_verified_by_the_metrics_service_name():
    """The ServiceMonitor verifies the metrics listener against the webhook CA by the Service's name: the
    serving certificate carries those names and the secure listener serves it (set up by setup_webhooks
    when the chart passes METRICS_SERVICE_NAME)."""
    from dynamo_operator.runtime.settings import RuntimeSettings
    from dynamo_operator.webhooks import setup_webhooks

    metrics = MetricsServer(
        "127.0.0.1:0", OperatorMetrics().registry, client=Reviews(), service_bind_address="127.0.0.1:0"
    )
    manager = FakeManager(RuntimeSettings(pod_namespace="ns"), client=Reviews(), metrics_server=metrics)
    wh = setup_webhooks(manager, None, metrics_service="dp-metrics", port=0)
    assert {"dp-metrics.ns.svc", "dp-metrics", "dp-metrics.ns.svc.cluster.local"} <= set(wh.certs.hosts)
    ca, ca_key = issue_ca(dt.timedelta(days=1))
    wh.tls.update(*issue_serving(ca, ca_key, wh.certs.hosts, dt.timedelta(days=1)))
    metrics.start()
    try:
        assert metrics.service is not None and metrics.service.port
        verify = ssl.create_default_context(cadata=ca.decode())
        address = ("127.0.0.1", metrics.service.port)
        with (
            socket.create_connection(address, timeout=5) as raw,
            verify.wrap_socket(raw, server_hostname="dp-metrics.ns.svc") as tls,
        ):
            tls.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer reader\r\n\r\n")
            assert tls.recv(100).startswith(b"HTTP/1.1 200")
        with socket.create_connection(address, timeout=5) as raw, pytest.raises(ssl.SSLCertVerificationError):
            verify.wrap_socket(raw, server_hostname="someone-else.ns.svc")
    finally:
        metrics.stop()
