"""The operator's HTTP/1.1 server core (``runtime.httpserver``) on 127.0.0.1: each bound an abuser runs into
(per-request deadline over headers and body, body limits, bytes in flight, the connection cap closing idle
connections first, unread responses and queued large requests giving way, tiny TLS records, saturation),
where requests run (inline, pool, the one-at-a-time large lane), health, keep-alive and pipelining, TLS
through memory BIOs."""

from __future__ import annotations

import datetime as dt
import socket
import ssl
import threading
import time

import pytest
from dynamo_operator.pki import issue_ca, issue_serving
from dynamo_operator.runtime.httpserver import (
    INLINE,
    LARGE,
    POOL,
    HTTPServer,
    Limits,
    Request,
    Response,
    parse_head,
)
from support.poll import stays, wait_for

KiB = 1024


class App:
    """Echoes the body length; ``.../block`` waits for ``gate``; ``/big`` answers 16 MiB; ``/upload...``
    takes bodies up to 4 MiB, the rest 64 KiB. ``route``: ``/large...`` on the large lane, ``/inline...``
    on the loop, the rest on the pool; ``threads`` records where each request ran and ``running`` how
    many large ones ran at once (``most_large``)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.seen: list[Request] = []
        self.threads: dict[str, str] = {}
        self.lock = threading.Lock()
        self.running = self.most_large = 0

    def route(self, req: Request) -> str:
        return LARGE if req.path.startswith("/large") else INLINE if req.path.startswith("/inline") else POOL

    def limit(self, method: str, path: str) -> int | Response:
        if path == "/nope":
            return Response(404, b"no\n", close=True)
        return 4 * 1024 * KiB if path.startswith(("/upload", "/large")) else 64 * KiB

    def handle(self, req: Request) -> Response:
        self.seen.append(req)
        self.threads[req.path] = threading.current_thread().name
        large = req.path.startswith("/large")
        with self.lock:
            self.running += large
            self.most_large = max(self.most_large, self.running)
        try:
            if req.path.endswith("/block"):
                self.gate.wait(20)
        finally:
            with self.lock:
                self.running -= large
        if req.path == "/big":
            return Response(200, b"x" * (16 * 1024 * KiB))
        return Response(200, f"{req.method} {req.path} {len(req.body)}".encode())


def serve(app: App, tls: ssl.SSLContext | None = None, **limits) -> HTTPServer:
    srv = HTTPServer(
        "test-http",
        ["127.0.0.1"],
        0,
        app.handle,
        app.limit,
        Limits(**limits),
        tls_source=(lambda: tls) if tls is not None else None,
        route=app.route,
    )
    srv.start()
    return srv


@pytest.fixture
def app():
    a = App()
    yield a
    a.gate.set()


def connect(srv: HTTPServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", srv.port), timeout=10)


def read_response(sock: socket.socket) -> bytes:
    """One response (headers + Content-Length body), or what arrived before the server closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(ln.split(b":")[1]) for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")),
        0,
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def closed(sock: socket.socket, timeout: float = 10.0) -> bool:
    """The server closed the connection (EOF or reset) within ``timeout``; any data before it is drained."""
    sock.settimeout(timeout)
    try:
        while sock.recv(65536):
            pass
        return True
    except (ConnectionResetError, ssl.SSLError):
        return True
    except TimeoutError:
        return False


def request(srv: HTTPServer, path: str = "/x", body: bytes = b"{}", sock: socket.socket | None = None):
    own = sock is None
    sock = sock or connect(srv)
    try:
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
        sock.sendall(head.encode() + body)
        return read_response(sock)
    finally:
        if own:
            sock.close()


# ------------------------------------------------------------------------------------------------------------


def test_parse_head_refuses_malformed_requests():
    assert parse_head(b"GET /a HTTP/1.1\r\nHost: x\r\nX-A: 1")[3] == {"host": "x", "x-a": "1"}
    for bad in (b"GET", b"GET a HTTP/1.1", b"GET /a HTTP/1.1\r\nbad line", b"GET /a HTTP/1.1\r\n X: folded"):
        with pytest.raises(Exception, match="malformed"):
            parse_head(bad)
    with pytest.raises(Exception, match="not supported"):
        parse_head(b"GET /a HTTP/2.0")
    with pytest.raises(Exception, match="conflicting"):
        parse_head(b"POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2")


def test_keep_alive_pipelining_limits_and_errors(app):
    srv = serve(app)
    try:
        with connect(srv) as s:
            assert request(srv, body=b"abc", sock=s).endswith(b"POST /x 3")
            assert request(srv, "/y", b"", sock=s).endswith(b"POST /y 0")  # same connection
            s.sendall(b"POST /p1 HTTP/1.1\r\nContent-Length: 1\r\n\r\na" + b"GET /p2 HTTP/1.1\r\n\r\n")
            got = b""
            while b"GET /p2 0" not in got:  # both answers, in order, on the same connection
                got += s.recv(65536)
            assert got.index(b"POST /p1 1") < got.index(b"GET /p2 0")
        big = b"POST /x HTTP/1.1\r\nContent-Length: 999999\r\n\r\n"
        for raw, status in (
            (big, b"413"),
            (b"POST /x HTTP/1.1\r\n\r\n", b"411"),
            (b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", b"411"),
            (b"POST /nope HTTP/1.1\r\nContent-Length: 0\r\n\r\n", b"404"),
            (b"BROKEN\r\n\r\n", b"400"),
            (b"GET /x HTTP/1.1\r\nX: " + b"a" * (70 * KiB), b"431"),
        ):
            with connect(srv) as s:
                s.sendall(raw)
                assert read_response(s).startswith(b"HTTP/1.1 " + status), raw[:40]
                assert closed(s)  # an error closes the connection
        assert len(app.seen) == 4  # nothing refused reached the handler
    finally:
        srv.stop()


def test_deadline_covers_headers_and_body_however_slow(app):
    """One byte a tenth of a second keeps every single read short: the request as a whole still ends."""
    srv = serve(app, request_timeout=1.0)
    try:
        for head in (b"POST /x HTTP/1.1\r\nX-Slow: ", b"POST /x HTTP/1.1\r\nContent-Length: 1000\r\n\r\n"):
            with connect(srv) as s:
                s.sendall(head)
                started = time.monotonic()
                s.settimeout(0.1)
                answer = b""
                while time.monotonic() - started < 8:
                    try:
                        s.send(b"a")
                        chunk = s.recv(1000)
                        if not chunk:
                            break
                        answer += chunk
                    except TimeoutError:
                        continue
                    except OSError:
                        break
                held = time.monotonic() - started
                assert held < 4, f"held {held:.1f}s"
                assert answer == b"" or answer.startswith(b"HTTP/1.1 408")
        assert srv.stats()["deadline"] >= 2
    finally:
        srv.stop()


def test_connection_cap_closes_the_idle_first(app):
    srv = serve(app, max_connections=4)
    try:
        idle = [connect(srv) for _ in range(3)]  # never send a byte
        wait_for(lambda: srv.connections == 3, 5)
        kept = connect(srv)
        assert request(srv, sock=kept).endswith(b"POST /x 2")  # a kept-alive connection, idle again
        fresh = []
        for _ in range(3):  # each new connection takes the slot of the longest-idle one, and stays
            fresh.append(connect(srv))
            assert request(srv, sock=fresh[-1]).endswith(b"POST /x 2")
        assert all(closed(s, 5) for s in idle)
        assert request(srv, sock=kept).endswith(b"POST /x 2")  # the most recently used ones survived
        assert all(request(srv, sock=s).endswith(b"POST /x 2") for s in fresh)
        assert srv.stats()["evicted_idle"] == 3 and srv.stats()["refused"] == 0
        for s in [*idle, kept, *fresh]:
            s.close()
    finally:
        srv.stop()


def test_at_the_cap_a_slow_sender_goes_before_a_new_request_and_busy_ones_stay(app):
    srv = serve(app, max_connections=2, evict_receiving_after=0.2, saturation_memory=0.5)
    try:
        slow = connect(srv)
        slow.sendall(b"POST /x HTTP/1.1\r\nX-Slow: a")  # headers never finish
        busy = connect(srv)
        busy.sendall(b"POST /block HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        wait_for(lambda: srv.stats()["busy"] == 1 and srv.stats()["receiving"] == 1, 5)
        # still receiving (not evicted: the cap is not reached) until it is older than evict_receiving_after
        stays(lambda: srv.stats()["receiving"] == 1 and srv.stats()["evicted_slow"] == 0, 0.3)
        assert request(srv).endswith(b"POST /x 2")
        assert closed(slow, 5) and srv.stats()["evicted_slow"] == 1
        # two requests in work: a third connection is refused and the server says it is saturated
        busy2 = connect(srv)
        busy2.sendall(b"POST /block HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        wait_for(lambda: [r.path for r in app.seen].count("/block") == 2, 5)  # both in the handler
        with connect(srv) as third:
            assert closed(third, 5)
        assert srv.saturated() and srv.stats()["refused"] == 1
        app.gate.set()
        assert all(read_response(s).endswith(b"POST /block 0") for s in (busy, busy2))
        wait_for(lambda: not srv.saturated(), 5)
        for s in (slow, busy, busy2):
            s.close()
    finally:
        srv.stop()


def _send_partial(srv: HTTPServer, path: str, size: int, send: int) -> socket.socket:
    s = connect(srv)
    s.sendall(f"POST {path} HTTP/1.1\r\nContent-Length: {size}\r\n\r\n".encode() + b"x" * send)
    return s


def test_a_small_request_drops_a_stalled_body_and_a_large_one_waits_its_turn(app):
    """A body is counted whole once its headers are in. The 4 MiB one (over the 1 MiB cap, taken because
    nothing else was in flight) stalls; a 300 KiB request waits its turn rather than drop it; a 10 KiB one
    (small: a 64th of the cap) drops it once it has stalled for evict_receiving_after, and both are
    answered."""
    srv = serve(app, max_inflight_bytes=1024 * KiB, evict_receiving_after=0.3)
    try:
        big = _send_partial(srv, "/upload", 4 * 1024 * KiB, 900 * KiB)
        wait_for(lambda: srv.inflight >= 4 * 1024 * KiB, 5)  # reserved whole
        medium = _send_partial(srv, "/upload2", 300 * KiB, 300 * KiB)
        wait_for(srv.saturated, 5)  # waits: a large request never drops another's body
        stays(lambda: srv.stats()["dropped_big"] == 0, 0.5)
        assert request(srv, "/upload3", b"x" * (10 * KiB)).endswith(b"POST /upload3 10240")
        assert read_response(big).startswith(b"HTTP/1.1 503")
        assert read_response(medium).endswith(b"POST /upload2 307200")
        assert srv.stats()["dropped_big"] == 1
        wait_for(lambda: srv.inflight == 0, 5)
        for s in (big, medium):
            s.close()
    finally:
        srv.stop()


def test_a_request_waits_for_bytes_held_by_requests_in_work(app):
    srv = serve(app, max_inflight_bytes=1024 * KiB)
    try:
        working = _send_partial(srv, "/upload/block", 800 * KiB, 800 * KiB)  # complete: in the handler
        wait_for(lambda: srv.stats()["busy"] == 1, 5)
        waiting = _send_partial(srv, "/upload", 500 * KiB, 500 * KiB)
        wait_for(srv.saturated, 5)  # paused: nothing larger to drop
        app.gate.set()
        assert read_response(working).endswith(b"POST /upload/block 819200")
        assert read_response(waiting).endswith(b"POST /upload 512000")
        wait_for(lambda: not srv.saturated() and srv.inflight == 0, 5)
        for s in (working, waiting):
            s.close()
    finally:
        srv.stop()


def test_a_response_the_client_does_not_read_is_dropped(app):
    srv = serve(app, write_timeout=1.0)
    try:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
        s.connect(("127.0.0.1", srv.port))
        s.sendall(b"POST /big HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        wait_for(lambda: srv.inflight >= 8 * 1024 * KiB, 5)  # the unread response counts
        wait_for(lambda: srv.connections == 0 and srv.inflight == 0, 10)
        s.close()
    finally:
        srv.stop()


# -- TLS -----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls():
    ca, ca_key = issue_ca(dt.timedelta(days=1))
    crt, key = issue_serving(ca, ca_key, ["localhost"], dt.timedelta(days=1))
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "c").write_bytes(crt)
        (Path(d) / "k").write_bytes(key)
        server.load_cert_chain(str(Path(d) / "c"), str(Path(d) / "k"))
    client = ssl.create_default_context(cadata=ca.decode())
    return server, client


def test_tls_requests_and_idle_handshakes(app, tls):
    server_ctx, client_ctx = tls
    srv = serve(app, tls=server_ctx, max_connections=3, request_timeout=1.0)
    try:
        with client_ctx.wrap_socket(connect(srv), server_hostname="localhost") as s:
            assert request(srv, body=b"hello", sock=s).endswith(b"POST /x 5")
            assert request(srv, body=b"", sock=s).endswith(b"POST /x 0")
        # handshaken but silent connections are idle, not slow requests: evicted at the cap, not timed out
        idle = [client_ctx.wrap_socket(connect(srv), server_hostname="localhost") for _ in range(3)]
        # idle, not slow: none is ended by the deadline over longer than request_timeout
        wait_for(lambda: srv.stats()["idle"] == 3, 5, "the three handshakes done")
        stays(lambda: srv.stats()["idle"] == 3 and srv.stats()["deadline"] == 0, 1.5)
        with client_ctx.wrap_socket(connect(srv), server_hostname="localhost") as s:
            assert request(srv, sock=s).endswith(b"POST /x 2")
        assert srv.stats()["evicted_idle"] == 1
        # a handshake that stops half way is a slow request: ended by the deadline
        raw = connect(srv)
        raw.sendall(b"\x16\x03\x01\x00\xff\x01")  # the start of a ClientHello, never finished
        assert closed(raw, 5)
        for s in [*idle, raw]:
            s.close()
    finally:
        srv.stop()


def test_no_certificate_yet_closes_connections(app):
    srv = HTTPServer("t", ["127.0.0.1"], 0, app.handle, app.limit, Limits(), tls_source=lambda: None)
    srv.start()
    try:
        with connect(srv) as s:
            assert closed(s, 5)
    finally:
        srv.stop()


# -- where requests run, what gives way when bytes are needed, health -------------------------------------


def _unread_big(srv: HTTPServer) -> socket.socket:
    """A client that asks for the 16 MiB response and takes none of it (a 4 KiB receive window)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    s.connect(("127.0.0.1", srv.port))
    s.sendall(b"POST /big HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
    return s


def test_requests_run_inline_in_the_pool_or_one_large_at_a_time(app):
    srv = serve(app)
    try:
        assert request(srv, "/inline").endswith(b"POST /inline 2")
        assert request(srv, "/x").endswith(b"POST /x 2")
        assert app.threads["/inline"] == "test-http"  # the loop's own thread: no hop
        assert app.threads["/x"].startswith("test-http_")  # a pool worker
        large = [_send_partial(srv, f"/large{i}/block", 300 * KiB, 300 * KiB) for i in range(3)]
        wait_for(lambda: srv.stats()["largeQueued"] == 2, 5, "two large requests queued behind the first")
        assert request(srv, "/x").endswith(b"POST /x 2")  # the pool answers meanwhile
        app.gate.set()
        assert all(read_response(s).endswith(b" 307200") for s in large)
        assert {name for path, name in app.threads.items() if path.startswith("/large")} == {
            "test-http-large"
        }
        assert app.most_large == 1  # never two large bodies in the handler at once
        for s in large:
            s.close()
    finally:
        srv.stop()


def test_pipelined_requests_answered_inline_are_answered_in_order(app):
    """Thousands of pipelined requests in one read, each answered on the loop: the next is taken from a
    fresh stack, not from inside the previous answer (which overflowed the interpreter's stack)."""
    srv = serve(app)
    try:
        with connect(srv) as s:
            s.sendall(
                b"".join(b"POST /inline%d HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}" % i for i in range(3000))
            )
            got = b""
            while b"POST /inline2999 2" not in got:
                chunk = s.recv(1 << 20)
                assert chunk, f"closed after {got.count(b'HTTP/1.1 200')} answers"
                got += chunk
        assert got.count(b"HTTP/1.1 200") == 3000 and got.index(b"/inline1 ") < got.index(b"/inline2 ")
    finally:
        srv.stop()


def test_a_response_leaves_as_the_client_takes_it_and_an_unread_one_gives_way(app):
    """The 16 MiB answer waits in plain bytes, not encrypted in the transport's buffer; once its client has
    taken nothing for evict_receiving_after, a request that needs the bytes drops it (before: that request
    waited for the 30 s write timeout and got 408 at its 10 s deadline)."""
    srv = serve(app, max_inflight_bytes=1024 * KiB, evict_receiving_after=0.2)
    try:
        unread = _unread_big(srv)
        wait_for(lambda: srv.inflight >= 16 * 1024 * KiB, 5)  # the unread response counts
        conn = next(iter(srv.busy))
        assert conn.transport.get_write_buffer_size() <= 256 * KiB
        time.sleep(0.3)  # not a wait: the response must have been unread this long
        started = time.monotonic()
        assert request(srv, "/upload", b"x" * (600 * KiB)).endswith(b"POST /upload 614400")
        assert time.monotonic() - started < 5
        assert srv.stats()["dropped_unread"] == 1 and closed(unread, 5)
        wait_for(lambda: srv.inflight == 0, 5)
        unread.close()
    finally:
        srv.stop()


def test_at_the_cap_an_unread_response_goes_before_a_refusal(app):
    srv = serve(app, max_connections=2, evict_receiving_after=0.2)
    try:
        unread = _unread_big(srv)
        busy = connect(srv)
        busy.sendall(b"POST /block HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        wait_for(lambda: srv.stats()["busy"] == 2, 5)
        time.sleep(0.3)  # not a wait: the response must have been unread this long
        assert request(srv).endswith(b"POST /x 2")
        assert srv.stats()["evicted_unread"] == 1 and srv.stats()["refused"] == 0 and closed(unread, 5)
        app.gate.set()
        assert read_response(busy).endswith(b"POST /block 0")
        for s in (unread, busy):
            s.close()
    finally:
        srv.stop()


def test_healthy_follows_the_loop_and_workers_not_what_clients_queue(app):
    srv = serve(app, max_inflight_bytes=1024 * KiB, workers=1, stall_timeout=0.5)
    try:
        working = _send_partial(srv, "/upload/block", 800 * KiB, 800 * KiB)  # holds the only worker
        wait_for(lambda: app.seen, 5)
        waiting = _send_partial(srv, "/upload", 500 * KiB, 400 * KiB)  # waits for in-flight bytes
        wait_for(srv.saturated, 5)
        stays(srv.healthy, 1.0)  # a queue of bytes is the clients' doing, not a fault of the server
        stuck = _send_partial(srv, "/queued", 10, 10)  # complete, but no worker will start it
        wait_for(lambda: not srv.healthy(), 5, "pooled work waiting past stall_timeout")
        app.gate.set()
        waiting.sendall(b"x" * (100 * KiB))
        for s in (working, waiting, stuck):
            assert read_response(s).startswith(b"HTTP/1.1 200")
        wait_for(srv.healthy, 5)
        for s in (working, waiting, stuck):
            s.close()
    finally:
        srv.stop()


def test_a_request_in_tiny_tls_records_is_refused(app, tls):
    """Each TLS record costs a decryption and a round through Python whatever it carries: a body sent a
    byte a record is answered 400 once its records average under min_record_bytes (past free_records);
    the same body in ordinary records, and a header trickled in a few records, are served."""
    server_ctx, client_ctx = tls
    srv = serve(app, tls=server_ctx, free_records=64, min_record_bytes=256)
    try:
        with client_ctx.wrap_socket(connect(srv), server_hostname="localhost") as s:
            s.sendall(b"POST /x HTTP/1.1\r\nContent-Length: 4000\r\n\r\n")
            for _ in range(4000):  # one send, one record
                try:
                    s.send(b"a")
                except OSError:
                    break
            assert read_response(s).startswith(b"HTTP/1.1 400")
        assert srv.stats()["tiny_records"] == 1
        with client_ctx.wrap_socket(connect(srv), server_hostname="localhost") as s:
            for piece in (b"POST /x HTTP/1.1\r\n", b"Content-", b"Length: 4000\r\n\r\n"):
                s.send(piece)
            assert request(srv, body=b"a" * 4000, sock=s).endswith(b"POST /x 4000")  # headers, then body
    finally:
        srv.stop()
