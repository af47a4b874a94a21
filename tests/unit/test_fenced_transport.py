"""The write fence inside the connection (``install_fenced_transport``), against a real HTTP server on
loopback: a refused write sends no byte, and the connection is open before the last check, so nothing slow
(a connect) lies between that check and the socket write (docs/reliability.md, fencing a stale leader)."""

from __future__ import annotations

import json
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest
from dynamo_operator.runtime.client import (
    AUDIT_ID_HEADER,
    CONFIGMAPS,
    ResourceClient,
    StaleLeaderWrite,
    _raw_write,
    install_fenced_transport,
)
from kubernetes.client import ApiClient, Configuration
from support.countingserver import CountingServer
from support.poll import wait_for


class _Server(CountingServer):
    def __init__(self) -> None:
        super().__init__(_Handler)
        self.requests: list[tuple[str, str, dict]] = []
        self.audit_ids: list[str | None] = []
        self.hold = threading.Event()  # set: the handler answers only once ``release`` is set
        self.release = threading.Event()


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.command, self.path, body))
        self.server.audit_ids.append(self.headers.get(AUDIT_ID_HEADER))
        if self.server.hold.is_set():
            self.server.release.wait(10)
        out = json.dumps(body).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _client(server: _Server, fence) -> ResourceClient:
    cfg = Configuration()
    cfg.host = f"http://127.0.0.1:{server.server_address[1]}"
    api = ApiClient(cfg)
    install_fenced_transport(api)
    return ResourceClient(api, request_timeout=10, write_fence=fence)


def _cm(name: str) -> dict:
    return {"metadata": {"name": name, "namespace": "ns"}, "data": {"k": "v"}}


def test_an_allowed_write_is_checked_twice_the_last_time_on_an_open_connection(server: _Server) -> None:
    calls: list[str] = []

    def fence(method: str, path: str) -> None:
        calls.append(path)
        if len(calls) == 2:  # the last check: the connection exists already (the server accepts it at once)
            wait_for(lambda: server.connections == 1, 10, "the connection open at the last check")

    created = _client(server, fence).create(CONFIGMAPS, _cm("a"))
    assert created["metadata"]["name"] == "a"
    assert server.requests == [("POST", "/api/v1/namespaces/ns/configmaps", created)]
    assert len(calls) == 2  # once before the request is built, once as its bytes leave
    assert len(server.audit_ids) == 1 and server.audit_ids[0]  # each fenced write names itself


def test_a_write_accepted_long_after_its_fence_passed_is_reported_with_its_audit_id(server: _Server) -> None:
    """What no client-side fence can stop (a write frozen, or held up, between its last check and the
    apiserver's answer) is reported: the Audit-ID it carried is the one in the apiserver's audit log."""
    reports: list[tuple[str, str, str, float]] = []
    client = _client(server, lambda method, path: None)
    client.late_write_after = 0.3
    client.on_late_write = lambda *report: reports.append(report)
    client.create(CONFIGMAPS, _cm("quick"))
    assert reports == []  # answered at once: nothing to report
    server.hold.set()
    threading.Timer(0.5, server.release.set).start()  # the answer comes late
    client.create(CONFIGMAPS, _cm("late"))
    [(method, path, audit_id, seconds)] = reports
    assert (method, path) == ("POST", "/api/v1/namespaces/ns/configmaps")
    assert audit_id == server.audit_ids[1] and audit_id != server.audit_ids[0]
    assert seconds >= 0.3


def test_unfenced_writes_carry_no_audit_id_and_are_never_reported(server: _Server) -> None:
    client = _client(server, None)  # no fence: a client without leader election, or the lease client
    client.late_write_after = 0.0
    client.on_late_write = lambda *report: pytest.fail(f"reported an unfenced write: {report}")
    client.create(CONFIGMAPS, _cm("free"))
    assert server.audit_ids == [None]


def test_a_write_refused_by_the_last_check_sends_no_byte(server: _Server) -> None:
    calls: list[str] = []
    refuse_at = [2]  # the lease lapses while the first request is being built

    def fence(method: str, path: str) -> None:
        calls.append(path)
        if len(calls) in refuse_at:
            raise StaleLeaderWrite(f"{method} {path} refused")

    client = _client(server, fence)
    with pytest.raises(StaleLeaderWrite):
        client.create(CONFIGMAPS, _cm("b"))
    assert server.requests == []
    refuse_at.clear()
    client.create(CONFIGMAPS, _cm("c"))  # the connection is still usable: nothing half-sent on it
    assert [body["metadata"]["name"] for _, _, body in server.requests] == ["c"]


def test_the_write_after_the_check_is_the_sockets_own() -> None:
    plain = socket.socket()
    try:
        assert _raw_write(plain) == plain.send
    finally:
        plain.close()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    a, b = socket.socketpair()
    try:
        wrapped = ctx.wrap_socket(a, server_hostname="x", do_handshake_on_connect=False)
        assert wrapped._sslobj is not None
        assert _raw_write(wrapped) == wrapped._sslobj.write  # not SSLSocket.sendall, a Python loop
    finally:
        a.close()
        b.close()
