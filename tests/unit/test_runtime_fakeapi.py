"""The runtime's wire code (ResourceClient on the real kubernetes ApiClient, watch streaming, Manager, leader
election, echo controller) against a tiny in-process fake apiserver over HTTP.  This is a smoke test of the
plumbing; the behaviour that needs a real apiserver lives in tests/integration/test_runtime_api.py."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import time
import urllib.parse
import uuid

import kubernetes
import pytest
from dynamo_operator.runtime.client import CONFIGMAPS, LEASES, ResourceClient
from dynamo_operator.runtime.informer import wait_until
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.runtime.settings import RuntimeSettings
from dynamo_operator.runtime.testing import ECHO_SUFFIX, TEST_LABEL, setup_echo_controller
from kubernetes.client.exceptions import ApiException


class FakeAPI:
    """Namespaced collections only; label selector ``k=v``; watch streams from an event log."""

    def __init__(self):
        self.objs: dict[tuple[str, str, str], dict] = {}  # (collection path, ns, name)
        self.log: list[tuple[int, str, str, dict]] = []  # (rv, collection, type, obj)
        self.rv = 100
        self.cond = threading.Condition()
        self.requests: list[tuple[str, str]] = []

    def _split(self, path):
        parts = path.strip("/").split("/")
        i = parts.index("namespaces") if "namespaces" in parts else None
        if i is None:
            return "/".join(parts), None, None
        ns, plural = parts[i + 1], parts[i + 2]
        coll = "/".join([*parts[:i], plural])
        name = parts[i + 3] if len(parts) > i + 3 else None
        return coll, ns, name

    def _record(self, coll, typ, obj):
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.log.append((self.rv, coll, typ, json.loads(json.dumps(obj))))
        self.cond.notify_all()

    def handle(self, method, path, query, body):
        self.requests.append((method, path))
        coll, ns, name = self._split(path)
        with self.cond:
            if method == "GET" and name is None and "watch" not in query:
                items = [
                    o
                    for (c, n, _), o in sorted(self.objs.items())
                    if c == coll and (ns is None or n == ns) and _match(o, query)
                ]
                return 200, {"kind": "List", "metadata": {"resourceVersion": str(self.rv)}, "items": items}
            if method == "GET" and name is None:
                return "watch", (coll, ns, int(query.get("resourceVersion") or 0), query)
            key = (coll, ns, name or (body or {}).get("metadata", {}).get("name"))
            if method == "GET":
                return (200, self.objs[key]) if key in self.objs else (404, _status(404, "NotFound"))
            if method == "POST":
                if key in self.objs:
                    return 409, _status(409, "AlreadyExists")
                body["metadata"].update(namespace=ns, uid=str(uuid.uuid4()))
                self.objs[key] = body
                self._record(coll, "ADDED", body)
                return 201, body
            if method == "PUT":
                cur = self.objs.get(key)
                if cur is None:
                    return 404, _status(404, "NotFound")
                if body["metadata"].get("resourceVersion") != cur["metadata"]["resourceVersion"]:
                    return 409, _status(409, "Conflict")
                self.objs[key] = body
                self._record(coll, "MODIFIED", body)
                return 200, body
            if method == "PATCH":
                cur = self.objs.get(key)
                if cur is None:
                    return 404, _status(404, "NotFound")
                for k, v in body.items():
                    cur[k] = {**(cur.get(k) or {}), **v} if isinstance(v, dict) else v
                self._record(coll, "MODIFIED", cur)
                return 200, cur
            if method == "DELETE":
                cur = self.objs.pop(key, None)
                if cur is None:
                    return 404, _status(404, "NotFound")
                self._record(coll, "DELETED", cur)
                return 200, cur
        return 405, _status(405, "MethodNotAllowed")

    def stream(self, wfile, coll, ns, since, query, stop):
        deadline = time.monotonic() + min(float(query.get("timeoutSeconds", 5)), 5)
        pos = since
        while time.monotonic() < deadline and not stop.is_set():
            with self.cond:
                evs = [e for e in self.log if e[0] > pos and e[1] == coll]
                if not evs:
                    self.cond.wait(0.1)
                    continue
            for rv, _c, typ, obj in evs:
                pos = rv
                if (ns is None or obj["metadata"].get("namespace") == ns) and _match(obj, query):
                    line = json.dumps({"type": typ, "object": obj}).encode() + b"\n"
                    wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                    wfile.flush()
        wfile.write(b"0\r\n\r\n")


def _match(obj, query):
    sel = query.get("labelSelector")
    if not sel:
        return True
    k, _, v = sel.partition("=")
    return (obj["metadata"].get("labels") or {}).get(k) == v


def _status(code, reason):
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code}


@pytest.fixture
def fake_api():
    api = FakeAPI()
    stop = threading.Event()

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def _do(self):
            u = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(u.query))
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n)) if n else None
            status, payload = api.handle(self.command, u.path, query, body)
            if status == "watch":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                with contextlib.suppress(OSError):
                    api.stream(self.wfile, *payload, stop)
                return
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _do

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    api.url = f"http://127.0.0.1:{srv.server_address[1]}"
    yield api
    stop.set()
    srv.shutdown()
    srv.server_close()


def api_client(url):
    cfg = kubernetes.client.Configuration()
    cfg.host = url
    return kubernetes.client.ApiClient(cfg)


def test_resource_client_verbs_and_errors(fake_api):
    c = ResourceClient(api_client(fake_api.url))
    created = c.create(CONFIGMAPS, {"metadata": {"name": "a", "namespace": "ns"}, "data": {"x": "1"}})
    assert created["metadata"]["uid"]
    assert ("POST", "/api/v1/namespaces/ns/configmaps") in fake_api.requests
    got = c.get(CONFIGMAPS, "a", "ns")
    got["data"] = {"x": "2"}
    c.replace(CONFIGMAPS, got)
    with pytest.raises(ApiException) as e:
        c.replace(CONFIGMAPS, got)  # stale resourceVersion
    assert e.value.status == 409
    c.patch(CONFIGMAPS, "a", {"data": {"y": "3"}}, "ns")
    items, rv = c.list_all(CONFIGMAPS, "ns")
    assert [i["data"] for i in items] == [{"x": "2", "y": "3"}] and rv
    assert items[0]["kind"] == "ConfigMap"
    with pytest.raises(ApiException) as e:
        c.get(CONFIGMAPS, "missing", "ns")
    assert e.value.status == 404 and "NotFound" in e.value.body
    c.delete(CONFIGMAPS, "a", "ns")
    lease_path = LEASES.object_path("x", "kube-system")
    assert lease_path == "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x"


def test_watch_stream_and_close(fake_api):
    c = ResourceClient(api_client(fake_api.url))
    _, rv = c.list_all(CONFIGMAPS, "ns")
    w = c.watch(CONFIGMAPS, "ns", resource_version=rv, timeout_seconds=5)
    got = []

    def consume():
        for ev in w:
            got.append((ev["type"], ev["object"]["metadata"]["name"]))

    t = threading.Thread(target=consume, daemon=True)
    t.start()
    c.create(CONFIGMAPS, {"metadata": {"name": "w1", "namespace": "ns"}})
    c.delete(CONFIGMAPS, "w1", "ns")
    assert wait_until(lambda: len(got) == 2, 5)
    assert got == [("ADDED", "w1"), ("DELETED", "w1")]
    w.close()  # from another thread: the consumer ends promptly
    t.join(3)
    assert not t.is_alive()


def test_two_managers_leader_election_and_echo_controller(fake_api):
    c = ResourceClient(api_client(fake_api.url))
    mgrs = []
    for _ in range(2):
        s = RuntimeSettings(
            metrics_bind_address="0",
            health_probe_bind_address="127.0.0.1:0",
            metrics_secure=False,
            leader_elect=True,
            leader_election_namespace="ops",
            lease_duration=2.0,
            renew_deadline=1.5,
            retry_period=0.2,
        )
        m = Manager(s, api_client(fake_api.url))
        setup_echo_controller(m)
        mgrs.append(m)
    for m in mgrs:
        m.start()
    try:
        assert wait_until(lambda: any(m.is_leader() for m in mgrs), 10)
        time.sleep(0.5)
        assert sum(m.is_leader() for m in mgrs) == 1
        leader = next(m for m in mgrs if m.is_leader())
        follower = next(m for m in mgrs if not m.is_leader())
        c.create(
            CONFIGMAPS,
            {
                "metadata": {"name": "p", "namespace": "ns", "labels": {TEST_LABEL: "true"}},
                "data": {"k": "v"},
            },
        )

        def child():
            try:
                return c.get(CONFIGMAPS, "p" + ECHO_SUFFIX, "ns")["data"]
            except ApiException:
                return None

        assert wait_until(lambda: child() == {"k": "v", "reconciledBy": leader.identity}, 10)
        # owned child edited by hand → owner re-enqueued → put back
        c.patch(CONFIGMAPS, "p" + ECHO_SUFFIX, {"data": {"k": "hand"}}, "ns")
        assert wait_until(lambda: child() == {"k": "v", "reconciledBy": leader.identity}, 10)
        assert follower.controllers["configmap-echo"].reconciles == 0
        assert (
            leader.registry.get_sample_value(
                "dynamo_operator_reconcile_total",
                {"resource_type": "ConfigMap", "namespace": "ns", "result": "success"},
            )
            >= 2
        )
        # clean stop releases the lease; the follower leads at once and converges
        leader.stop()
        assert c.get(LEASES, "dynamo.nvidia.com", "ops")["spec"]["holderIdentity"] in ("", follower.identity)
        assert wait_until(follower.is_leader, 2.0)
        c.patch(CONFIGMAPS, "p", {"data": {"k": "new"}}, "ns")
        assert wait_until(lambda: child() == {"k": "new", "reconciledBy": follower.identity}, 10)
        import urllib.request

        with urllib.request.urlopen(follower.health.url + "/readyz", timeout=5) as r:
            assert r.status == 200
    finally:
        for m in mgrs:
            m.stop()
        for m in mgrs:
            assert m.wait(20)
