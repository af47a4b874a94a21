"""A small HTTP/1.1 server on one asyncio loop, for every listener the operator opens: the admission and
conversion webhooks (``webhooks.server``), metrics and health probes (``runtime.servers``).

Why not ``http.server``: it spends a thread per connection and times each ``recv`` separately, so anyone who
can reach the port holds it down (issue 23 measured: 256 idle TLS connections filled the cap and the API
server's next admission failed with EOF; one header byte every 5 s kept a connection past 45 s; 150
unfinished 8 MiB bodies drove the process to 1277 MiB). Here a connection costs no thread until its request
is complete, and the server enforces, for every connection:

* **a per-request deadline** (``request_timeout``) from the first byte of a request (or of the TLS
  handshake) to its last body byte: headers and body together, however slowly they trickle;
* **a body limit** chosen per path by the application, answered with 413 before a byte of the body is read;
* **a cap on bytes in flight** (``max_inflight_bytes``): request bytes buffered plus response bytes not yet
  taken by the client, over all connections. Past it, the connection holding the largest unfinished body
  is dropped (503) for a smaller one; a request that is itself the largest waits (reading paused) until
  bytes are released, within its deadline;
* **a connection cap that closes the idle first**: at ``max_connections`` a new connection evicts the
  connection idle the longest (no request in progress, or not even a TLS handshake started); without an idle
  one, the request receiving the longest for more than ``evict_receiving_after`` (a slow sender); only when
  every connection is doing work is the new one refused, and :meth:`HTTPServer.saturated` turns true for
  ``saturation_memory`` seconds, which the webhook's readiness check reports;
* an idle timeout for kept-alive connections and a write timeout for responses the client does not read.

Handlers are plain functions run on a small thread pool (``workers``), so a slow one (a TokenReview, a big
conversion) never stalls the loop, and the number of requests being parsed at once is bounded too.
TLS runs through ``ssl.MemoryBIO`` with the context the ``tls`` callable returns for each new connection, so
a rotated certificate is served from the next connection on, without a restart.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import resource
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .log import get_logger

MiB = 1024 * 1024
REASONS = {
    100: "Continue",
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    411: "Length Required",
    413: "Content Too Large",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
}


@dataclass(frozen=True)
class Limits:
    """What one listener allows; every number is a bound an abuser runs into, never a legitimate client."""

    max_connections: int = 1024
    request_timeout: float = 10.0  # first byte of a request (or TLS handshake) to its last body byte
    idle_timeout: float = 120.0  # a kept-alive connection between requests (Go clients keep idle ones 90 s)
    write_timeout: float = 30.0  # a response the client does not take within this is dropped
    max_header_bytes: int = 64 * 1024
    max_inflight_bytes: int = 32 * MiB
    workers: int = 4
    evict_receiving_after: float = 1.0  # at the cap, a request still arriving after this may be evicted
    saturation_memory: float = 5.0  # saturated() stays true this long after a refusal


@dataclass
class Request:
    method: str
    path: str  # the request target, query included
    headers: dict[str, str]  # lower-case names
    body: bytes
    peer: str  # the client's IP address

    def header(self, name: str, default: str = "") -> str:
        return self.headers.get(name.lower(), default)


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    close: bool = False  # close the connection after this response
    headers: dict[str, str] = field(default_factory=dict)


# The application: ``body_limit(method, path)`` is asked once the headers are in (the largest body accepted
# there, or a Response to answer at once, e.g. 404/405), then ``handle(request)`` runs on a worker thread.
BodyLimit = Callable[[str, str], "int | Response"]
Handler = Callable[[Request], Response]
TLSSource = Callable[[], "ssl.SSLContext | None"]


def encode_response(resp: Response, keep_alive: bool) -> bytes:
    head = [f"HTTP/1.1 {resp.status} {REASONS.get(resp.status, 'Status')}"]
    headers = {"Content-Type": resp.content_type, "Content-Length": str(len(resp.body)), **resp.headers}
    if not keep_alive:
        headers["Connection"] = "close"
    head += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + resp.body


def error(status: int, message: str) -> Response:
    return Response(status, (message + "\n").encode(), close=True)


class BadRequest(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def parse_head(raw: bytes) -> tuple[str, str, str, dict[str, str]]:
    """(method, target, version, headers) of a request head without its final CRLF CRLF; BadRequest else."""
    try:
        text = raw.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
        raise BadRequest(400, "undecodable request head") from None
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[0].isalpha() or not parts[1].startswith("/"):
        raise BadRequest(400, "malformed request line")
    method, target, version = parts
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise BadRequest(505, f"{version[:16]} is not supported; use HTTP/1.1")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or " " in name:
            raise BadRequest(400, "malformed header line")
        key, value = name.lower(), value.strip()
        if key in headers and key == "content-length" and headers[key] != value:
            raise BadRequest(400, "conflicting Content-Length headers")
        headers[key] = f"{headers[key]}, {value}" if key in headers and key != "content-length" else value
    return method, target, version, headers


def body_length(method: str, headers: dict[str, str]) -> int:
    """The announced body size; chunked bodies are refused (the API server always sends Content-Length)."""
    if "transfer-encoding" in headers:
        raise BadRequest(411, "chunked request bodies are not supported; send Content-Length")
    raw = headers.get("content-length")
    if raw is None:
        if method == "POST":
            raise BadRequest(411, "Content-Length is required")
        return 0
    if not raw.isdigit():
        raise BadRequest(400, "invalid Content-Length")
    return int(raw)


def ensure_file_limit(need: int, log: Any) -> None:
    """Raise the soft open-file limit toward ``need`` (as Go does at start): container runtimes may set a
    soft limit of 1024, less than the connection cap plus the process's own files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        if target < need:
            log.warning("open-file limit below the connection cap", soft=target, need=need)


COUNTERS = ("refused", "evicted_idle", "evicted_slow", "dropped_big", "deadline")
IDLE, HANDSHAKE, RECEIVING, PROCESSING, WRITING, CLOSED = (
    "idle",
    "handshake",
    "receiving",
    "processing",
    "writing",
    "closed",
)


class _Conn(asyncio.Protocol):
    """One connection's state machine: idle -> (handshake) -> receiving -> processing -> writing -> idle."""

    def __init__(self, server: HTTPServer):
        self.srv = server
        self.state = IDLE
        self.since = time.monotonic()  # when the current state began
        self.buf = bytearray()  # plaintext received and not yet consumed
        self.held = 0  # bytes of this connection counted in the server's in-flight total
        self.head: tuple[str, str, str, dict[str, str]] | None = None
        self.need = 0  # body bytes the parsed head announced
        self.keep_alive = True
        self.timer: asyncio.TimerHandle | None = None
        self.tls: ssl.SSLObject | None = None
        self.incoming = self.outgoing = None  # type: ignore[assignment]
        self.peer = ""
        self.paused = False  # reading paused (a request in work, or waiting for in-flight bytes)
        self.write_paused = False  # the client is not taking the response
        self.handshake_done = False
        self.transport: asyncio.Transport | None = None

    # -- transport callbacks --------------------------------------------------------------------------------
    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.peer = str(peer[0]) if peer else ""
        transport.set_write_buffer_limits(high=16 * 1024, low=0)
        if not self.srv.admit(self):
            transport.abort()
            self.state = CLOSED
            return
        if self.srv.tls_source is not None:
            ctx = self.srv.tls_source()
            if ctx is None:  # no serving certificate yet: refuse rather than serve plain text
                self.close(abort=True)
                return
            self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
            self.tls = ctx.wrap_bio(self.incoming, self.outgoing, server_side=True)
        self._enter(IDLE, self.srv.limits.idle_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timer()
        self.state = CLOSED
        self.srv.forget(self)
        self._release()

    def data_received(self, data: bytes) -> None:
        if self.state == CLOSED:
            return
        if self.state == IDLE:
            handshaking = self.tls is not None and not self.handshake_done
            self._enter(HANDSHAKE if handshaking else RECEIVING, self.srv.limits.request_timeout)
        try:
            plain = self._decrypt(data) if self.tls is not None else data
        except ssl.SSLError:
            self.close(abort=True)
            return
        if plain is None:  # the peer closed its TLS session
            self.close()
            return
        if plain:
            self.buf += plain
            self._hold(len(plain))
        if self.state in (IDLE, HANDSHAKE, RECEIVING) and self.state != CLOSED:
            self._advance()

    def eof_received(self) -> bool:
        self.close()
        return False

    def pause_writing(self) -> None:  # the client is not reading: wait for it within the write timeout
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        if self.state == WRITING:
            self._after_response()

    # -- TLS ------------------------------------------------------------------------------------------------
    def _decrypt(self, data: bytes) -> bytes | None:
        """Feed ``data`` to TLS; the plaintext it yields (b"" for none yet), None once the peer closed."""
        assert self.tls is not None
        self.incoming.write(data)
        just_done = False
        if not self.handshake_done:
            try:
                self.tls.do_handshake()
            except ssl.SSLWantReadError:
                self._flush()
                return b""
            self.handshake_done = just_done = True
            self._flush()
            self._enter(RECEIVING, self.srv.limits.request_timeout)
        out = bytearray()
        while True:
            try:
                chunk = self.tls.read(256 * 1024)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                return None
            if not chunk:
                return None
            out += chunk
        self._flush()
        if just_done and not out and not self.buf:
            self._enter(IDLE, self.srv.limits.idle_timeout)  # a handshake and no request yet: idle
        return bytes(out)

    def _flush(self) -> None:
        if self.outgoing is not None and self.outgoing.pending and self.transport is not None:
            self.transport.write(self.outgoing.read())

    def _write(self, data: bytes) -> None:
        if self.transport is None or self.state == CLOSED:
            return
        if self.tls is not None:
            self.tls.write(data)
            self._flush()
        else:
            self.transport.write(data)

    # -- request parsing ------------------------------------------------------------------------------------
    def _advance(self) -> None:
        """Parse what arrived; dispatch a complete request."""
        if not self.buf and self.head is None:
            return
        if self.state == IDLE:
            self._enter(RECEIVING, self.srv.limits.request_timeout)
        try:
            if self.head is None and not self._parse_head():
                return
        except BadRequest as e:
            self.respond(error(e.status, str(e)))
            return
        if len(self.buf) < self.need:
            self.srv.relieve(self)
            return
        method, target, _version, headers = self.head  # type: ignore[misc]
        body = bytes(self.buf[: self.need])
        del self.buf[: self.need]
        self.head = None
        self._enter(PROCESSING, None)
        self.srv.waiting.discard(self)
        self._pause(True)  # pipelined bytes wait in the kernel until this response is out
        self.srv.dispatch(self, Request(method, target, headers, body, self.peer))

    def _parse_head(self) -> bool:
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buf) > self.srv.limits.max_header_bytes:
                raise BadRequest(431, "request headers too large")
            return False
        if end > self.srv.limits.max_header_bytes:
            raise BadRequest(431, "request headers too large")
        method, target, version, headers = parse_head(bytes(self.buf[:end]))
        del self.buf[: end + 4]
        length = body_length(method, headers)
        limit = self.srv.body_limit(method, target)
        if isinstance(limit, Response):
            raise BadRequest(limit.status, limit.body.decode(errors="replace").strip())
        if length > limit:
            raise BadRequest(413, f"request body over {limit} bytes")
        conn_hdr = headers.get("connection", "").lower()
        self.keep_alive = version == "HTTP/1.1" and "close" not in conn_hdr
        if "100-continue" in headers.get("expect", "").lower() and length > 0:
            self._write(b"HTTP/1.1 100 Continue\r\n\r\n")
        self.head, self.need = (method, target, version, headers), length
        return True

    # -- responses ------------------------------------------------------------------------------------------
    def respond(self, resp: Response) -> None:
        """Send ``resp`` (from the loop thread); count it in flight until the client has taken it."""
        if self.state == CLOSED:
            return
        keep = self.keep_alive and not resp.close
        self.keep_alive = keep
        self.head = None
        data = encode_response(resp, keep)
        self._enter(WRITING, self.srv.limits.write_timeout)
        self._hold(len(data))
        self._write(data)
        # Up to the write buffer's high-water mark (16 KiB) counts as taken; beyond it, pause_writing was
        # called and resume_writing finishes the response once the client has read it all.
        if not self.write_paused and self.state == WRITING:
            self._after_response()

    def _after_response(self) -> None:
        self._release()
        if not self.keep_alive:
            self.close()
            return
        self._enter(IDLE, self.srv.limits.idle_timeout)
        self._hold(len(self.buf))
        self._pause(False)
        if self.buf:
            self._advance()

    # -- bookkeeping ----------------------------------------------------------------------------------------
    def _enter(self, state: str, timeout: float | None) -> None:
        self.state = state
        self.since = time.monotonic()
        self.srv.moved(self)
        self._cancel_timer()
        if timeout is not None and self.srv.loop is not None:
            self.timer = self.srv.loop.call_later(timeout, self._expired, state)

    def _cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _expired(self, state: str) -> None:
        if self.state != state:
            return
        if state == RECEIVING and self.head is not None:
            self.respond(error(408, "request not received in time"))
            self.srv.counters["deadline"] += 1
            return
        if state in (HANDSHAKE, RECEIVING):
            self.srv.counters["deadline"] += 1
        self.close(abort=state == WRITING)

    def _hold(self, n: int) -> None:
        self.held += n
        self.srv.inflight += n

    def _release(self) -> None:
        if self.held:
            self.srv.inflight -= self.held
            self.held = 0
            self.srv.released()

    def _pause(self, on: bool) -> None:
        if self.transport is None or on == self.paused or self.state == CLOSED:
            return
        self.paused = on
        (self.transport.pause_reading if on else self.transport.resume_reading)()

    def close(self, abort: bool = False) -> None:
        """Close (flushing what was written) or abort; a close the client stalls is aborted later."""
        if self.transport is None or self.state == CLOSED:
            return
        self._cancel_timer()
        self.state = CLOSED
        self.srv.forget(self)
        self._release()
        if abort:
            self.transport.abort()
            return
        self.transport.close()
        if self.srv.loop is not None:
            self.srv.loop.call_later(self.srv.limits.write_timeout, self.transport.abort)


class HTTPServer:
    """Listen on ``hosts``:``port``; serve ``handler`` with ``body_limit`` under ``limits``; TLS when
    ``tls_source`` is given (it returns the context for each new connection, or None: no certificate yet)."""

    def __init__(
        self,
        name: str,
        hosts: list[str],
        port: int,
        handler: Handler,
        body_limit: BodyLimit,
        limits: Limits | None = None,
        tls_source: TLSSource | None = None,
    ):
        self.name = name
        self.hosts, self.requested_port = hosts, port
        self.handler, self.body_limit = handler, body_limit
        self.limits = limits or Limits()
        self.tls_source = tls_source
        self.log = get_logger(name)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.inflight = 0
        self.idle: OrderedDict[_Conn, None] = OrderedDict()  # oldest idle first
        self.receiving: OrderedDict[_Conn, None] = OrderedDict()  # oldest request first
        self.busy: set[_Conn] = set()  # processing or writing
        self.waiting: set[_Conn] = set()  # paused for in-flight bytes
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.refused_at = float("-inf")
        self._sockets: list[socket.socket] = []
        self._thread: threading.Thread | None = None
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._servers: list[asyncio.base_events.Server] = []
        self._last_warning = float("-inf")

    # -- lifecycle ------------------------------------------------------------------------------------------
    @property
    def port(self) -> int | None:
        return self._sockets[0].getsockname()[1] if self._sockets else None

    def start(self) -> None:
        """Bind now (an address in use fails here, in the caller), then serve from a thread of its own."""
        ensure_file_limit(self.limits.max_connections + 256, self.log)
        port = self.requested_port
        for host in self.hosts:
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            sock = socket.create_server((host, port), family=family, backlog=1024, reuse_port=False)
            sock.setblocking(False)
            self._sockets.append(sock)
            port = sock.getsockname()[1]  # port 0: every host on the port the first one got
        self._pool = concurrent.futures.ThreadPoolExecutor(self.limits.workers, thread_name_prefix=self.name)
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,), name=self.name, daemon=True)
        self._thread.start()
        started.wait(10)

    def _serve(self, started: threading.Event) -> None:
        assert self.loop is not None
        asyncio.set_event_loop(self.loop)

        async def listen() -> None:
            for sock in self._sockets:
                self._servers.append(await self.loop.create_server(lambda: _Conn(self), sock=sock))  # type: ignore[union-attr]

        self.loop.run_until_complete(listen())
        started.set()
        self.loop.run_forever()
        self.loop.close()

    def stop(self) -> None:
        loop, thread = self.loop, self._thread
        if loop is None or thread is None:
            return

        def shutdown() -> None:
            for s in self._servers:
                s.close()
            for conn in [*self.idle, *self.receiving, *self.busy]:
                conn.close(abort=True)
            loop.stop()

        loop.call_soon_threadsafe(shutdown)
        thread.join(10)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        for sock in self._sockets:
            sock.close()
        self._sockets.clear()
        self.loop = self._thread = None

    # -- connection accounting (loop thread) ----------------------------------------------------------------
    @property
    def connections(self) -> int:
        return len(self.idle) + len(self.receiving) + len(self.busy)

    def admit(self, conn: _Conn) -> bool:
        """Make room for ``conn`` under the cap: the longest-idle connection goes first, then the slowest
        request still arriving; refuse ``conn`` when every connection is doing work."""
        if self.connections < self.limits.max_connections:
            return True
        victim, kind = None, ""
        if self.idle:
            victim, kind = next(iter(self.idle)), "evicted_idle"
        elif self.receiving:
            oldest = next(iter(self.receiving))
            if time.monotonic() - oldest.since >= self.limits.evict_receiving_after:
                victim, kind = oldest, "evicted_slow"
        if victim is None:
            self.counters["refused"] += 1
            self.refused_at = time.monotonic()
            self._warn("connection cap reached with every connection busy: refusing new connections")
            return False
        self.counters[kind] += 1
        victim.close(abort=True)
        self._warn("connection cap reached: closing the idle and the slowest connections first")
        return True

    def moved(self, conn: _Conn) -> None:
        """Keep the idle / receiving / busy indexes in step with ``conn.state``."""
        self.idle.pop(conn, None)
        self.receiving.pop(conn, None)
        self.busy.discard(conn)
        if conn.state == IDLE:
            self.idle[conn] = None
        elif conn.state in (HANDSHAKE, RECEIVING):
            self.receiving[conn] = None
        elif conn.state in (PROCESSING, WRITING):
            self.busy.add(conn)

    def forget(self, conn: _Conn) -> None:
        self.idle.pop(conn, None)
        self.receiving.pop(conn, None)
        self.busy.discard(conn)
        self.waiting.discard(conn)

    def relieve(self, conn: _Conn) -> None:
        """Over the in-flight cap: drop the largest unfinished bodies bigger than ``conn``'s; if that is not
        enough, ``conn`` itself waits (reading paused) for bytes to be released."""
        while self.inflight > self.limits.max_inflight_bytes:
            victim = max(self.receiving, key=lambda c: c.held, default=None)
            if victim is None or victim is conn or victim.held <= conn.held:
                break
            self.counters["dropped_big"] += 1
            self._warn("in-flight bytes over the cap: dropping the largest unfinished request")
            victim.respond(error(503, "server busy: request body dropped, retry"))
            victim.close()
        if self.inflight > self.limits.max_inflight_bytes:
            conn._pause(True)
            self.waiting.add(conn)

    def released(self) -> None:
        if self.waiting and self.inflight <= self.limits.max_inflight_bytes:
            for conn in list(self.waiting):
                self.waiting.discard(conn)
                conn._pause(False)

    def saturated(self) -> bool:
        """A new request could not be taken now: a connection was refused at the cap lately, or requests
        wait for in-flight bytes."""
        recent = time.monotonic() - self.refused_at < self.limits.saturation_memory
        return recent or bool(self.waiting)

    def _warn(self, message: str) -> None:
        now = time.monotonic()
        if now - self._last_warning >= 10.0:
            self._last_warning = now
            self.log.warning(message, **self.stats())

    # -- handlers (worker threads) --------------------------------------------------------------------------
    def dispatch(self, conn: _Conn, req: Request) -> None:
        assert self._pool is not None and self.loop is not None
        loop = self.loop

        def run() -> None:
            try:
                resp = self.handler(req)
            except Exception as e:  # the handler's own bug: a 500, never a dropped connection
                self.log.exception("handler failed", path=req.path.split("?", 1)[0])
                resp = error(500, f"internal error: {type(e).__name__}")
            with contextlib.suppress(RuntimeError):  # the loop stopped meanwhile
                loop.call_soon_threadsafe(conn.respond, resp)

        try:
            self._pool.submit(run)
        except RuntimeError:  # shutting down
            conn.close(abort=True)

    def stats(self) -> dict[str, int]:
        """A snapshot for logs and tests (read from any thread; values may be a moment old)."""
        return {
            "connections": self.connections,
            "idle": len(self.idle),
            "receiving": len(self.receiving),
            "busy": len(self.busy),
            "inflightBytes": self.inflight,
            **self.counters,
        }
