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
* **a cap on bytes in flight** (``max_inflight_bytes``): request bytes plus response bytes not yet taken
  by the client, over all connections. A body is counted whole once its headers are in (a reservation),
  so every body admitted can finish; one that does not fit waits (reading paused, in arrival order) within
  its deadline. A small request (an admission review) has a reserve of a quarter of the cap beyond it, and
  past that drops a response its client does not take or a larger body stalled for over
  ``evict_receiving_after`` (503); a large request only drops unread responses, else waits its turn;
* **a connection cap that closes the idle first**: at ``max_connections`` a new connection evicts the
  connection idle the longest (no request in progress, or not even a TLS handshake started); without an idle
  one, the request receiving the longest for more than ``evict_receiving_after`` (a slow sender); only when
  every connection is doing work is the new one refused, and :meth:`HTTPServer.saturated` turns true for
  ``saturation_memory`` seconds;
* an idle timeout for kept-alive connections and a write timeout for responses the client does not read;
* **unread responses give way**: a response the client has not taken any of for ``evict_receiving_after``
  seconds is dropped when its bytes are needed for another request, or its connection slot at the cap
  (after the idle and the slow senders);
* **TLS records worth their cost**: each record costs a decryption and a trip through Python whatever it
  carries, so past ``free_records`` a request's records must average ``min_record_bytes`` (a request
  trickled in one-byte records is answered 400; real clients send kilobytes a record).

Where a request runs is the application's ``route``: ``inline`` on the loop itself (a small request whose
handler never blocks: no thread hop, the admission reviews), ``pool`` on a small thread pool (``workers``;
the default, so a slow handler such as a TokenReview never stalls the loop), or ``large``: one request at
a time on a lane of its own, so only one large body is ever parsed at once (the rest wait their turn,
their raw bytes counted in flight). Responses leave in chunks as the client takes them, so an unread one
holds its plain bytes only, not an encrypted copy in the transport.
:meth:`HTTPServer.healthy` is what readiness should ask: the loop answers and pooled work starts, whatever
an abuser queues; :meth:`HTTPServer.saturated` (refusals, requests waiting for bytes) is for logs.
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
from collections import OrderedDict, deque
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
    evict_receiving_after: float = 1.0  # at the cap, a request still arriving (or a response not taken)
    saturation_memory: float = 5.0  # saturated() stays true this long after a refusal
    free_records: int = 64  # TLS records a request may use before they must average min_record_bytes
    min_record_bytes: int = 256
    stall_timeout: float = 10.0  # healthy() is false once the loop or queued pool work waited this long


@dataclass
class Request:
    method: str
    path: str  # the request target, query included
    headers: dict[str, str]  # lower-case names
    body: bytes | bytearray  # the receive buffer itself when it held exactly this body (no copy)
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
# there, or a Response to answer at once, e.g. 404/405), then ``route(request)`` (on the loop) says where
# ``handle(request)`` runs: INLINE on the loop, POOL on a worker thread (the default), LARGE on the lane that
# takes one request at a time.
BodyLimit = Callable[[str, str], "int | Response"]
Handler = Callable[[Request], Response]
TLSSource = Callable[[], "ssl.SSLContext | None"]
INLINE, POOL, LARGE = "inline", "pool", "large"
Route = Callable[[Request], str]
CHUNK = 64 * 1024  # a response leaves in pieces of this size as the client takes them
TLS_READ = 32 * 1024  # one TLS record carries at most 16 KiB: a larger read buffer buys nothing


def encode_head(resp: Response, keep_alive: bool) -> bytes:
    head = [f"HTTP/1.1 {resp.status} {REASONS.get(resp.status, 'Status')}"]
    headers = {"Content-Type": resp.content_type, "Content-Length": str(len(resp.body)), **resp.headers}
    if not keep_alive:
        headers["Connection"] = "close"
    head += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")


def encode_response(resp: Response, keep_alive: bool) -> bytes:
    return encode_head(resp, keep_alive) + resp.body


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


COUNTERS = (
    "refused",
    "evicted_idle",
    "evicted_slow",
    "evicted_unread",
    "dropped_big",
    "dropped_unread",
    "tiny_records",
    "deadline",
)
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
        self.records = self.record_bytes = 0  # TLS records of the current request, and what they carried
        self.reserved = 0  # body bytes counted in flight before they arrived (the request's reservation)
        self.admitted = False  # the current request's body has its reservation
        self.out: list[memoryview] = []  # the response still to write, in order
        self.taken_at = 0.0  # when the client last took some of the response
        self.lost = False  # the transport reported the connection gone
        self.abort_timer: asyncio.TimerHandle | None = None  # aborts a close the client stalls

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
        self.lost = True
        self._cancel_timer()
        if self.abort_timer is not None:
            self.abort_timer.cancel()
        self.state = CLOSED
        self.srv.forget(self)
        self._release()
        self._drop_buffers()

    def data_received(self, data: bytes) -> None:
        if self.state == CLOSED:
            return
        if self.state == IDLE:  # the deadline is armed below, if the request is not complete at once
            self._enter(HANDSHAKE if self.tls is not None and not self.handshake_done else RECEIVING, None)
        try:
            got = self._decrypt(data) if self.tls is not None else self._append(data)
        except ssl.SSLError:
            self.close(abort=True)
            return
        except BadRequest as e:
            self.srv.counters["tiny_records"] += 1
            self.respond(error(e.status, str(e)))
            return
        if got is None:  # the peer closed its TLS session
            self.close()
            return
        if self.state in (IDLE, HANDSHAKE, RECEIVING):
            self._advance()
        if self.state in (HANDSHAKE, RECEIVING):
            self._arm(self.srv.limits.request_timeout)

    def eof_received(self) -> bool:
        self.close()
        return False

    def pause_writing(self) -> None:  # the client is not reading: wait for it within the write timeout
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        self.taken_at = time.monotonic()
        if self.state == WRITING and self.srv.loop is not None:
            # not from inside the transport's own write callback: closing there (the response's end on a
            # non-kept-alive connection) makes asyncio report the connection lost twice
            self.srv.loop.call_soon(self._pump)

    # -- TLS ------------------------------------------------------------------------------------------------
    def _append(self, plain: bytes) -> int:
        self.buf += plain
        covered = min(self.reserved, len(plain))  # body bytes already counted by the reservation
        self.reserved -= covered
        self._hold(len(plain) - covered)
        return len(plain)

    def _decrypt(self, data: bytes) -> int | None:
        """Feed ``data`` to TLS and append the plaintext to the buffer: the bytes added (0 for none yet),
        None once the peer closed. BadRequest when the request's records carry too little each."""
        assert self.tls is not None
        self.incoming.write(data)
        just_done = False
        if not self.handshake_done:
            try:
                self.tls.do_handshake()
            except ssl.SSLWantReadError:
                self._flush()
                return 0
            self.handshake_done = just_done = True
            self._flush()
            self._enter(RECEIVING, None)  # the request's own deadline, from here
        got = 0
        while True:
            try:
                chunk = self.tls.read(TLS_READ)
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                return None
            if not chunk:
                return None
            got += self._append(chunk)
            self._count_record(len(chunk))
            if not self.incoming.pending and not self.tls.pending():
                break  # nothing left to decrypt: a further read would only raise SSLWantReadError
        self._flush()
        if just_done and not got and not self.buf:
            self._enter(IDLE, self.srv.limits.idle_timeout)  # a handshake and no request yet: idle
        return got

    def _count_record(self, size: int) -> None:
        """Past ``free_records``, a request's records must average ``min_record_bytes``: a record costs a
        decryption and a Python round whatever it carries, so one-byte records would let a client buy a
        hundred times the server's work per byte sent (and hold the loop that long)."""
        self.records += 1
        self.record_bytes += size
        lim = self.srv.limits
        if self.records > lim.free_records and self.record_bytes < (self.records - lim.free_records) * (
            lim.min_record_bytes
        ):
            raise BadRequest(
                400,
                f"request sent in {self.records} TLS records of {self.record_bytes // self.records} bytes on "
                f"average; send records of at least {lim.min_record_bytes} bytes",
            )

    def _flush(self) -> None:
        if self.outgoing is not None and self.outgoing.pending and self.transport is not None:
            self.transport.write(self.outgoing.read())

    def _write(self, data: bytes | memoryview) -> None:
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
        if not self.admitted and not self.srv.reserve(self):
            return  # reading paused until the body's bytes fit in flight (or the deadline)
        if len(self.buf) < self.need:
            return
        method, target, _version, headers = self.head  # type: ignore[misc]
        if len(self.buf) == self.need:  # the usual case: hand the buffer over rather than copy it
            body, self.buf = self.buf, bytearray()
        else:  # pipelined bytes follow the body
            with memoryview(self.buf) as view:
                body = bytes(view[: self.need])
            del self.buf[: self.need]
        self.head = None
        self.records = self.record_bytes = 0
        self.admitted = False
        self._enter(PROCESSING, None)
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
        """Send ``resp`` (from the loop thread): the request's bytes are done with, the response's count in
        flight until the client has taken them all. A small response leaves in one write (one TLS record,
        one wake-up of the caller); a large one a chunk at a time as the client takes it."""
        if self.state == CLOSED:
            return
        keep = self.keep_alive and not resp.close
        self.keep_alive = keep
        self.head = None
        self._release()
        self._hold(len(self.buf))  # pipelined bytes still count
        head = encode_head(resp, keep)
        self._enter(WRITING, None)
        self._hold(len(head) + len(resp.body))
        self.taken_at = time.monotonic()
        if len(resp.body) <= CHUNK:
            self.out = [memoryview(head + resp.body)]
        else:
            self.out = [memoryview(head), memoryview(resp.body)]
        self._pump()
        if self.state == WRITING:  # the client is slow to take it: pipelined bytes wait in the kernel
            self._arm(self.srv.limits.write_timeout)
            self._pause(True)

    def _pump(self) -> None:
        """Write the response on while the client takes it (up to the write buffer's high-water mark, 16
        KiB, counts as taken; beyond it pause_writing was called, and resume_writing calls this again)."""
        while self.out and not self.write_paused and self.state == WRITING:
            piece = self.out[0]
            self.out[0] = piece[CHUNK:]
            if not self.out[0]:
                self.out.pop(0)
            self._write(piece[:CHUNK])
        if not self.out and not self.write_paused and self.state == WRITING:
            self._after_response()

    def unread(self, now: float) -> bool:
        """A response the client has taken nothing of for ``evict_receiving_after`` seconds."""
        return (
            self.state == WRITING
            and self.write_paused
            and now - self.taken_at >= (self.srv.limits.evict_receiving_after)
        )

    def _after_response(self) -> None:
        self._release()
        if not self.keep_alive:
            self.close()
            return
        self._enter(IDLE, self.srv.limits.idle_timeout)
        self._hold(len(self.buf))
        self._pause(False)
        if self.buf and self.srv.loop is not None:
            # pipelined requests: the next from a fresh stack (answered inline, each would recurse)
            self.srv.loop.call_soon(self._next_pipelined)

    def _next_pipelined(self) -> None:
        if self.state == IDLE:
            self._advance()

    # -- bookkeeping ----------------------------------------------------------------------------------------
    def _enter(self, state: str, timeout: float | None) -> None:
        self.state = state
        self.since = time.monotonic()
        self.srv.moved(self)
        self._cancel_timer()
        if timeout is not None and self.srv.loop is not None:
            self.timer = self.srv.loop.call_later(timeout, self._expired, state)

    def _arm(self, timeout: float) -> None:
        """The current state's deadline, counted from when it began, unless one is armed. Armed only once
        a request does not complete in the read that began it: most arrive whole, and the timers made and
        cancelled at once for each were about 5% of the loop's time per review in a profile."""
        if self.timer is None and self.srv.loop is not None and self.state != CLOSED:
            self.timer = self.srv.loop.call_at(self.since + timeout, self._expired, self.state)

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
        self.reserved = 0
        if self.held:
            self.srv.inflight -= self.held
            self.held = 0
            self.srv.released()

    def _pause(self, on: bool) -> None:
        if self.transport is None or on == self.paused or self.state == CLOSED:
            return
        self.paused = on
        (self.transport.pause_reading if on else self.transport.resume_reading)()

    def drop(self, message: str) -> None:
        """The server needs this connection's bytes: a response the client does not take is cut off, any
        other request is answered 503 (retry) and closed."""
        if self.state == WRITING:
            self.close(abort=True)
            return
        self.respond(error(503, message))
        self.close()

    def close(self, abort: bool = False) -> None:
        """Close (flushing what was written) or abort; a close the client stalls is aborted later."""
        if self.transport is None or self.state == CLOSED:
            return
        self._cancel_timer()
        self.state = CLOSED
        self.srv.forget(self)
        self._release()
        self._drop_buffers()
        if abort:
            self.transport.abort()
            return
        self.transport.close()
        if self.srv.loop is not None:
            self.abort_timer = self.srv.loop.call_later(self.srv.limits.write_timeout, self._abort_stalled)

    def _drop_buffers(self) -> None:
        """What a closed connection buffered goes now: its bytes no longer count in flight, so they must
        not stay in memory either (the close timer holds this object for write_timeout)."""
        self.buf = bytearray()
        self.out = []
        self.head = None

    def _abort_stalled(self) -> None:
        """A close the client stalled (it never took the rest): abort. Not after the transport reported the
        connection lost: asyncio would report it a second time."""
        if not self.lost and self.transport is not None:
            self.transport.abort()


class _Lane:
    """Requests run one at a time, in arrival order, on a thread of their own: only one large body is
    parsed at once. The request of a connection closed while it waits is taken back, unrun; ``run`` is
    called on the lane's thread."""

    def __init__(self, name: str, run: Callable[[_Conn, Request], None]):
        self.run = run
        self.queue: deque[tuple[_Conn, Request]] = deque()
        self.cond = threading.Condition()
        self.stopped = False
        self.thread = threading.Thread(target=self._work, name=name, daemon=True)
        self.thread.start()

    def put(self, conn: _Conn, req: Request) -> None:
        with self.cond:
            self.queue.append((conn, req))
            self.cond.notify()

    def take_back(self, conn: _Conn) -> bool:
        """Remove ``conn``'s request if it has not started; whether it was still queued."""
        with self.cond:
            for item in self.queue:
                if item[0] is conn:
                    self.queue.remove(item)
                    return True
        return False

    def stop(self) -> None:
        with self.cond:
            self.stopped = True
            self.queue.clear()
            self.cond.notify()

    def _work(self) -> None:
        while True:
            with self.cond:
                while not self.queue and not self.stopped:
                    self.cond.wait()
                if self.stopped:
                    return
                conn, req = self.queue.popleft()
            try:
                self.run(conn, req)
            except Exception:  # never lose the lane: every large request after this one needs it
                get_logger("httpserver").exception("large-lane request failed")
            del conn, req  # the body goes now, not when the next request arrives


class HTTPServer:
    """Listen on ``hosts``:``port``; serve ``handler`` with ``body_limit`` under ``limits``; TLS when
    ``tls_source`` is given (it returns the context for each new connection, or None: no certificate yet);
    ``route`` says where each request runs (``POOL`` for all when not given)."""

    def __init__(
        self,
        name: str,
        hosts: list[str],
        port: int,
        handler: Handler,
        body_limit: BodyLimit,
        limits: Limits | None = None,
        tls_source: TLSSource | None = None,
        route: Route | None = None,
    ):
        self.name = name
        self.hosts, self.requested_port = hosts, port
        self.handler, self.body_limit, self.route = handler, body_limit, route
        self.limits = limits or Limits()
        self.tls_source = tls_source
        self.log = get_logger(name)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.inflight = 0
        self.idle: OrderedDict[_Conn, None] = OrderedDict()  # oldest idle first
        self.receiving: OrderedDict[_Conn, None] = OrderedDict()  # oldest request first
        self.busy: set[_Conn] = set()  # processing or writing
        self.waiting: OrderedDict[_Conn, None] = OrderedDict()  # paused for in-flight bytes, in order
        self._retry_scheduled = False
        self.counters = dict.fromkeys(COUNTERS, 0)
        self.refused_at = float("-inf")
        self.beat_at = time.monotonic()  # the loop's last heartbeat
        self._pending: OrderedDict[int, float] = OrderedDict()  # pooled work not started: id -> queued at
        self._pending_lock = threading.Lock()
        self._ids = iter(range(1 << 62))
        self._sockets: list[socket.socket] = []
        self._thread: threading.Thread | None = None
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._lane: _Lane | None = None
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
        self._lane = _Lane(f"{self.name}-large", self._run_and_answer)
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
        self._beat()
        started.set()
        self.loop.run_forever()
        self.loop.close()

    def _beat(self) -> None:
        self.beat_at = time.monotonic()
        if self.waiting:
            self._retry_waiting()
        if self.loop is not None:
            self.loop.call_later(min(1.0, self.limits.stall_timeout / 4), self._beat)

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
        if self._lane is not None:
            self._lane.stop()
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
        request still arriving, then a response its client does not take; refuse ``conn`` when every
        connection is doing work."""
        if self.connections < self.limits.max_connections:
            return True
        now = time.monotonic()
        victim, kind = None, ""
        if self.idle:
            victim, kind = next(iter(self.idle)), "evicted_idle"
        elif self.receiving and now - next(iter(self.receiving)).since >= self.limits.evict_receiving_after:
            victim, kind = next(iter(self.receiving)), "evicted_slow"
        else:
            victim = min((c for c in self.busy if c.unread(now)), key=lambda c: c.taken_at, default=None)
            kind = "evicted_unread"
        if victim is None:
            self.counters["refused"] += 1
            self.refused_at = now
            self._warn("connection cap reached with every connection busy: refusing new connections")
            return False
        self.counters[kind] += 1
        victim.close(abort=True)
        self._warn("connection cap reached: closing the idle, the slowest and the unread connections first")
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
        self.waiting.pop(conn, None)
        if self._lane is not None and conn.state == CLOSED:
            self._lane.take_back(conn)

    def reserve(self, conn: _Conn, drop: bool = True) -> bool:
        """Count ``conn``'s body in flight before it is read, once its headers are in; False (reading
        paused, ``conn`` waiting in arrival order) while it does not fit under the cap. Counting a body
        whole from the start, not as it trickles in, means every body admitted can finish: bodies read
        half-way each, none able to complete, cannot hold the cap between them.

        A small request (a 64th of the cap: the admission review of a real graph) may go a quarter of the
        cap beyond it, and past that drops what it needs (see :meth:`_victim`); a large one may only drop
        responses their clients do not take, else waits its turn (a complete body queued for the large
        lane is never dropped: it was admitted and will finish). A body larger than the cap is taken when
        nothing else is in flight. ``drop=False``: only whether it fits now, nothing dropped (a cheap
        retry)."""
        cap = self.limits.max_inflight_bytes
        need = max(0, conn.need - len(conn.buf))
        small = self._small(conn)
        limit = cap + cap // 4 if small else cap
        while self.inflight + need > limit and self.inflight > conn.held:
            victim, kind = self._victim(conn, conn.held + need, small) if drop else (None, "")
            if victim is None:
                conn._pause(True)
                self.waiting[conn] = None
                return False
            self.counters[kind] += 1
            self._warn("in-flight bytes over the cap: dropping an unread response or a stalled body")
            victim.drop("server busy: request dropped, retry")
        self.waiting.pop(conn, None)
        conn._hold(need)
        conn.reserved, conn.admitted = need, True
        conn._pause(False)
        return True

    def _small(self, conn: _Conn) -> bool:
        """A request whose whole body is a 64th of the cap or less (the admission review of a real graph)."""
        return conn.held + max(0, conn.need - len(conn.buf)) <= self.limits.max_inflight_bytes // 64

    def _victim(self, conn: _Conn, whole: int, small: bool) -> tuple[_Conn | None, str]:
        """What to drop for ``conn`` (whose request holds ``whole`` bytes), the one holding most first: a
        response its client has not taken any of for ``evict_receiving_after``, whatever its size; for a
        small request also a body larger than ``conn``'s still arriving after that long (a stalled
        sender). A large request never drops another's body."""
        now = time.monotonic()
        slow = self.limits.evict_receiving_after
        candidates = [(c, "dropped_unread") for c in self.busy if c is not conn and c.unread(now)]
        if small:
            candidates += [
                (c, "dropped_big")
                for c in self.receiving
                if c is not conn and c.admitted and c.held > whole and now - c.since >= slow
            ]
        if not candidates:
            return None, ""
        return max(candidates, key=lambda ck: ck[0].held)

    def released(self) -> None:
        """Bytes were released: let the waiting requests in, in arrival order, while they fit."""
        if self.waiting and self.loop is not None and not self._retry_scheduled:
            self._retry_scheduled = True
            self.loop.call_soon(self._retry_waiting)

    def _retry_waiting(self) -> None:
        """Admit the waiting requests that fit, in arrival order, then let the oldest drop what it may (a
        stalled sender becomes droppable with time: this runs every heartbeat too). Each request is only
        checked, not searched for victims: a thousand waiting ones must not cost a thousand scans of every
        connection at each release. Scheduled, not called from the release: that may be deep in another
        connection's close."""
        self._retry_scheduled = False
        large_waits = False  # large requests go in their order: one that waits holds back those after it
        for conn in list(self.waiting):
            small = self._small(conn)
            if conn.state == CLOSED:
                self.waiting.pop(conn, None)
            elif (small or not large_waits) and self.reserve(conn, drop=False):
                conn._advance()
            else:
                large_waits = large_waits or not small
        oldest = next(iter(self.waiting), None)
        if oldest is not None and self.reserve(oldest):
            oldest._advance()

    def saturated(self) -> bool:
        """A new request could not be taken now: a connection was refused at the cap lately, or requests
        wait for in-flight bytes. For logs and tests, not readiness: an abuser can cause it at will."""
        recent = time.monotonic() - self.refused_at < self.limits.saturation_memory
        return recent or bool(self.waiting)

    def healthy(self) -> bool:
        """The server works: its loop ran within ``stall_timeout`` and no pooled request has waited that
        long to start. What an abuser queues (bytes, connections, large bodies) does not turn this false;
        a wedged loop or worker pool does."""
        if self.loop is None or self._thread is None or not self._thread.is_alive():
            return False
        now = time.monotonic()
        if now - self.beat_at > self.limits.stall_timeout:
            return False
        with self._pending_lock:
            oldest = next(iter(self._pending.values()), now)
        return now - oldest <= self.limits.stall_timeout

    def _warn(self, message: str) -> None:
        now = time.monotonic()
        if now - self._last_warning >= 10.0:
            self._last_warning = now
            self.log.warning(message, **self.stats())

    # -- handlers -------------------------------------------------------------------------------------------
    def dispatch(self, conn: _Conn, req: Request) -> None:
        """Run ``req`` where the application's route says (loop thread)."""
        try:
            lane = self.route(req) if self.route is not None else POOL
        except Exception:  # the route's own bug: the pool is always safe
            self.log.exception("route failed", path=req.path.split("?", 1)[0])
            lane = POOL
        if lane == INLINE:
            conn.respond(self._run(req))
            return
        conn._pause(True)  # pipelined bytes wait in the kernel until this response is out
        if lane == LARGE and self._lane is not None:
            self._lane.put(conn, req)
            return
        assert self._pool is not None
        key = next(self._ids)
        with self._pending_lock:
            self._pending[key] = time.monotonic()

        def run() -> None:
            with self._pending_lock:
                self._pending.pop(key, None)
            self._run_and_answer(conn, req)

        try:
            self._pool.submit(run)
        except RuntimeError:  # shutting down
            conn.close(abort=True)

    def _run(self, req: Request) -> Response:
        try:
            return self.handler(req)
        except Exception as e:  # the handler's own bug: a 500, never a dropped connection
            self.log.exception("handler failed", path=req.path.split("?", 1)[0])
            return error(500, f"internal error: {type(e).__name__}")

    def _run_and_answer(self, conn: _Conn, req: Request) -> None:
        """On a worker or the lane: run the handler, hand the response to the loop."""
        resp = self._run(req)
        loop = self.loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop stopped meanwhile
                loop.call_soon_threadsafe(conn.respond, resp)

    def stats(self) -> dict[str, int]:
        """A snapshot for logs and tests (read from any thread; values may be a moment old)."""
        return {
            "connections": self.connections,
            "idle": len(self.idle),
            "receiving": len(self.receiving),
            "busy": len(self.busy),
            "inflightBytes": self.inflight,
            "largeQueued": len(self._lane.queue) if self._lane is not None else 0,
            **self.counters,
        }
