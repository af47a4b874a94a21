"""A bounded abuse client for our own HTTPS servers on 127.0.0.1, in a process of its own.

``python abuse.py PORT SCENARIO SECONDS COUNT OUT_JSON``: opens COUNT connections to ``127.0.0.1:PORT``
(within two minutes), runs one scenario on them for SECONDS more and writes what it saw to OUT_JSON
(``ABUSE_PLAIN=1``: plain HTTP, for the health server); OUT_JSON + ``.ready`` appears once the abuse is in
place. Scenarios (the four ways issue 23 held the admission
server down):

* ``idle``: COUNT connections complete the TLS handshake and then send nothing;
* ``slow-headers``: COUNT connections send a request line, then one header byte every second;
* ``slow-body``: COUNT connections send complete headers (``Content-Length: 65536``), then one body byte
  every second;
* ``big-body``: COUNT connections each announce a body of ``7 MiB - 1 KiB`` (just under the admission
  limit) or, with ``BIG_BODY_BYTES`` set, that many bytes, send all but the last KiB as fast as the server
  takes it, then stall;

and, one thread per connection (``abuse_streams.py``), the three ways issue 30 found to make it hold memory or
work: ``convert-body`` (complete ConversionReviews just under the 16 MiB limit, one after another, their
answers read), ``unread`` (12 MiB ConversionReviews whose answers are never read) and ``tls-records``
(admission bodies sent a byte a TLS record, again on a new connection whenever refused).

The report says how many connections the server still held at the end, how long the server let the longest
one live (``max_held``, from the connection's start; ``max_request_held``, from its request's first byte),
what it answered (status lines), and how many bytes it accepted. Loopback only,
bounded in count and time: never aimed anywhere else.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import socket
import ssl
import sys
import time
from pathlib import Path

import abuse_streams as streams

HOST = "127.0.0.1"
PATH = "/validate-nvidia-com-v1beta1-dynamographdeployment"
BIG = 7 * 1024 * 1024 - 1024
OPEN_SECONDS = 120.0


def _ctx() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


class Conn:
    def __init__(self, sock: socket.socket, opened: float):
        self.sock, self.opened = sock, opened
        self.first_byte: float | None = None  # when the request's first byte went out
        self.closed_at: float | None = None
        self.answer = b""
        self.sent = 0

    def held(self, now: float) -> float:
        return (self.closed_at or now) - self.opened

    def request_held(self, now: float) -> float:
        """How long the server kept the connection once a request had begun (0: none began)."""
        return (self.closed_at or now) - self.first_byte if self.first_byte is not None else 0.0


def _open(port: int, ctx: ssl.SSLContext | None, deadline: float) -> Conn | None:
    try:
        raw = socket.create_connection((HOST, port), timeout=max(0.1, min(5.0, deadline - time.monotonic())))
        tls = ctx.wrap_socket(raw, server_hostname="localhost") if ctx is not None else raw
    except OSError:
        return None
    tls.setblocking(False)
    return Conn(tls, time.monotonic())


def _poll_closed(conns: list[Conn], now: float) -> None:
    """Mark connections the server closed (EOF, reset) and keep what it answered."""
    for c in conns:
        if c.closed_at is not None:
            continue
        try:
            while True:
                data = c.sock.recv(65536)
                if not data:
                    c.closed_at = now
                    break
                c.answer += data[: max(0, 200 - len(c.answer))]
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            pass
        except OSError:
            c.closed_at = now


def _trickle(conns: list[Conn], payload: bytes) -> None:
    for c in conns:
        if c.closed_at is not None:
            continue
        try:
            c.sent += c.sock.send(payload[c.sent % len(payload) : c.sent % len(payload) + 1])
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            pass
        except OSError:
            c.closed_at = time.monotonic()


def _flush_big(conns: list[Conn], head: bytes, size: int, until: float) -> None:
    """Send every connection's headers and all but the last KiB of its body, as fast as the server reads."""
    chunk = b"x" * 65536
    sel = selectors.DefaultSelector()
    want = {id(c): len(head) + size - 1024 for c in conns}
    for c in conns:
        sel.register(c.sock, selectors.EVENT_WRITE, c)
    while sel.get_map() and time.monotonic() < until:
        for key, _ in sel.select(timeout=0.2):
            c = key.data
            left = want[id(c)] - c.sent
            data = head[c.sent :] if c.sent < len(head) else chunk[: min(len(chunk), left)]
            c.first_byte = c.first_byte or time.monotonic()
            try:
                c.sent += c.sock.send(data)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                continue
            except OSError:
                c.closed_at = time.monotonic()
            if c.closed_at is not None or c.sent >= want[id(c)]:
                sel.unregister(c.sock)
        _poll_closed(conns, time.monotonic())
    sel.close()


def run(port: int, scenario: str, seconds: float, count: int, ready: Path | None = None) -> dict:
    """Run ``scenario``; touch ``ready`` once every connection is open and its abuse has begun."""
    if scenario in streams.SCENARIOS:
        return streams.run(port, scenario, seconds, count, _ctx(), ready)
    ctx = None if os.environ.get("ABUSE_PLAIN") else _ctx()  # plain HTTP: the health server
    started = time.monotonic()
    conns: list[Conn] = []
    refused = 0
    for _ in range(count):  # opening has a bound of its own: a busy machine may take a while
        if time.monotonic() > started + OPEN_SECONDS:
            break
        c = _open(port, ctx, started + OPEN_SECONDS)
        if c is None:
            refused += 1
        else:
            conns.append(c)
    opened_in = time.monotonic() - started
    deadline = time.monotonic() + seconds
    size = int(os.environ.get("BIG_BODY_BYTES") or BIG)
    if scenario == "big-body":
        if ready is not None:
            ready.touch()
        head = f"POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n".encode()
        _flush_big(conns, head, size, deadline)
    trickle = {
        "slow-headers": f"POST {PATH} HTTP/1.1\r\nHost: x\r\nX-Slow: " + "a" * 60000,
        "slow-body": f"POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n" + "{" * 65536,
    }.get(scenario)
    if trickle:  # the request line (and, for slow-body, the headers) at once, then a byte a second
        first = trickle.index("\r\n") + 2 if scenario == "slow-headers" else trickle.index("\r\n\r\n") + 4
        for c in conns:
            try:
                c.sock.setblocking(True)
                c.first_byte = time.monotonic()
                c.sock.sendall(trickle[:first].encode())
                c.sent = first
                c.sock.setblocking(False)
            except OSError:
                c.closed_at = time.monotonic()
    if ready is not None and not ready.exists():
        ready.touch()
    next_tick = time.monotonic()
    while time.monotonic() < deadline and any(c.closed_at is None for c in conns):
        now = time.monotonic()
        if trickle and now >= next_tick:
            _trickle(conns, trickle.encode())
            next_tick = now + 1.0
        _poll_closed(conns, now)
        time.sleep(0.05)  # not a wait: the abuse client's tick (trickle bytes, notice closed sockets)
    now = time.monotonic()
    _poll_closed(conns, now)
    answers: dict[str, int] = {}
    for c in conns:
        line = c.answer.split(b"\r\n", 1)[0].decode(errors="replace")[:40] or "(closed, no answer)"
        if c.closed_at is None:
            line = "(still open)"
        answers[line] = answers.get(line, 0) + 1
    report = {
        "scenario": scenario,
        "attempted": count,
        "connected": len(conns),
        "refused": refused,
        "opened_in": round(opened_in, 2),
        "still_open": sum(1 for c in conns if c.closed_at is None),
        "max_held": round(max((c.held(now) for c in conns), default=0.0), 1),
        "max_request_held": round(max((c.request_held(now) for c in conns), default=0.0), 1),
        "seconds": round(now - started, 1),
        "bytes_sent": sum(c.sent for c in conns),
        "answers": answers,
    }
    for c in conns:
        with contextlib.suppress(OSError):
            c.sock.close()
    return report


if __name__ == "__main__":
    port, scenario, seconds, count, result = sys.argv[1:6]
    out = run(int(port), scenario, float(seconds), int(count), Path(result + ".ready"))
    with open(result, "w") as f:
        json.dump(out, f)
