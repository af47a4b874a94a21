"""The abuse scenarios of issue 30 for ``abuse.py``: one thread per connection, blocking TLS sockets, every
connection to 127.0.0.1 only and bounded in count and seconds.

* ``convert-body``: complete ConversionReviews of v1alpha1 graphs (the shared sample graph) just under the
  16 MiB limit (to convert to v1beta1), one after another on each connection, the answers read: the
  server parses and converts one large body after another;
* ``unread``: one 12 MiB ConversionReview already in the desired version per connection (its answer is as
  large, more than the kernel buffers), the answer never read: the responses wait in the server;
* ``tls-records``: an admission request whose 64 KiB body goes out a byte a TLS record, again on a new
  connection whenever the server answers or closes.

The report counts requests, the status lines answered and the connections the server closed under an
unread answer (``unread_dropped``).
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from pathlib import Path

HOST = "127.0.0.1"
SCENARIOS = ("convert-body", "unread", "tls-records")
CONVERT_BYTES = 16 * 1024 * 1024 - 64 * 1024
UNREAD_BYTES = 12 * 1024 * 1024
RECORDS_BODY = 64 * 1024
ADMISSION = "/validate-nvidia-com-v1beta1-dynamographdeployment"
# How long a converting client waits for its page's answer once the body is out: the pages admitted before
# it are converted one at a time (about 1 s each on a quiet 2-core machine, many times that beside make
# test's other streams); within the phase's join (its seconds plus 60).
ANSWER_SECONDS = 55.0


def _graph() -> dict:
    """The shared sample graph (frontend, prefill and decode workers) as the API server stores it."""
    from dynamo_localcluster.graphs import DISAGGREGATED, graph
    from dynamo_operator.api.conversion import convert

    return convert(graph("abuse", "default", DISAGGREGATED), "v1alpha1")


def conversion_review(size: int, desired: str) -> bytes:
    """A ConversionReview of graphs about ``size`` bytes long."""
    sample = _graph()
    named = [{**sample, "metadata": {**sample["metadata"], "name": f"abuse-{i:05d}"}} for i in range(2)]
    count = max(1, (size - 4096) // (len(json.dumps(named)) // 2 + 2))
    objects = [{**sample, "metadata": {**sample["metadata"], "name": f"abuse-{i:05d}"}} for i in range(count)]
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "abuse", "desiredAPIVersion": desired, "objects": objects},
    }
    return json.dumps(review).encode()


def _head(path: str, size: int) -> bytes:
    return f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n".encode()


def _answer(sock: ssl.SSLSocket) -> str:
    """Read one response in full (its body counted, not kept); its status line, or "(closed)" when the
    server closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return "(closed)"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = next((int(h.split(b":")[1]) for h in lines if h.lower().startswith(b"content-length")), 0)
    got = len(body)
    while got < length:
        chunk = sock.recv(1 << 20)
        if not chunk:
            return "(closed)"
        got += len(chunk)
    return lines[0].decode(errors="replace")[:40]


class _Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.connected = self.refused = self.requests = self.sent = self.unread_dropped = 0
        self.answers: dict[str, int] = {}
        self.answer_seconds: list[float] = []

    def add(self, **counts: int) -> None:
        with self.lock:
            for k, v in counts.items():
                setattr(self, k, getattr(self, k) + v)

    def answered(self, line: str) -> None:
        with self.lock:
            self.answers[line] = self.answers.get(line, 0) + 1

    def timed(self, seconds: float) -> None:
        with self.lock:
            self.answer_seconds.append(round(seconds, 1))


def _connect(port: int, ctx: ssl.SSLContext, stats: _Stats, rcvbuf: int = 0) -> ssl.SSLSocket | None:
    try:
        raw = socket.socket()
        if rcvbuf:
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)  # before connecting: a small window
        raw.settimeout(30)
        raw.connect((HOST, port))
        sock = ctx.wrap_socket(raw, server_hostname="localhost")
    except OSError:
        stats.add(refused=1)
        return None
    stats.add(connected=1)
    return sock


def _convert_body(port: int, ctx: ssl.SSLContext, until: float, stats: _Stats, body: bytes) -> None:
    """Pages one after another on a connection while the phase lasts. A page the client sent whole
    (``requests``: its last byte written, which may still be in flight) must be answered: 200 when the server
    read it within its deadline and converted it, 408 when the deadline passed with bytes still on their way
    (seen once in a loaded run, answered at once). A send the server cut short is counted as such, and the
    thread connects again. Each answer's time from the body's last byte goes in ``answer_seconds``."""
    while time.monotonic() < until:
        sock = _connect(port, ctx, stats)
        if sock is None:
            time.sleep(0.5)  # not a wait: a refused connection is retried after a moment
            continue
        with sock:
            while time.monotonic() < until:
                try:
                    sock.sendall(_head("/convert", len(body)) + body)
                except OSError:
                    stats.answered("(closed while sending)")
                    break
                stats.add(requests=1, sent=len(body))
                sent = time.monotonic()
                sock.settimeout(ANSWER_SECONDS)
                try:
                    line = _answer(sock)
                except OSError as e:
                    line = f"(no answer: {type(e).__name__})"
                stats.answered(line)
                stats.timed(time.monotonic() - sent)
                if not line.startswith("HTTP/1.1 200"):
                    break


def _unread(port: int, ctx: ssl.SSLContext, until: float, stats: _Stats, body: bytes) -> None:
    sock = _connect(port, ctx, stats, rcvbuf=4096)
    if sock is None:
        return
    with sock:
        try:
            sock.sendall(_head("/convert", len(body)) + body)
            stats.add(requests=1, sent=len(body))
        except OSError:
            stats.answered("(closed while sending)")
            return
        time.sleep(max(0.0, until - time.monotonic()))  # not a wait: the answer stays unread until the end
        sock.settimeout(5)
        try:
            line = _answer(sock)
        except OSError:
            line = "(closed)"
        stats.answered(line)
        if line == "(closed)":
            stats.add(unread_dropped=1)


def _tiny_records(port: int, ctx: ssl.SSLContext, until: float, stats: _Stats) -> None:
    while time.monotonic() < until:
        sock = _connect(port, ctx, stats)
        if sock is None:
            time.sleep(0.5)  # not a wait: a refused connection is retried after a moment
            continue
        with sock:
            try:
                sock.sendall(_head(ADMISSION, RECORDS_BODY))
                stats.add(requests=1)
                for _ in range(RECORDS_BODY):
                    if time.monotonic() > until:
                        break
                    sock.send(b"{")  # one send, one TLS record
                    stats.add(sent=1)
                sock.settimeout(5)
                stats.answered(_answer(sock))
            except OSError:
                stats.answered("(closed)")


def run(
    port: int, scenario: str, seconds: float, count: int, ctx: ssl.SSLContext, ready: Path | None
) -> dict:
    started = time.monotonic()
    until = started + seconds
    stats = _Stats()
    if scenario == "convert-body":
        body = conversion_review(CONVERT_BYTES, "nvidia.com/v1beta1")
        target, args = _convert_body, (body,)
    elif scenario == "unread":
        target, args = _unread, (conversion_review(UNREAD_BYTES, "nvidia.com/v1alpha1"),)
    else:
        target, args = _tiny_records, ()
    threads = [
        threading.Thread(target=target, args=(port, ctx, until, stats, *args), daemon=True)
        for _ in range(count)
    ]
    for t in threads:
        t.start()
    if ready is not None:
        ready.touch()
    for t in threads:
        t.join(seconds + 60)
    return {
        "scenario": scenario,
        "attempted": count,
        "connected": stats.connected,
        "refused": stats.refused,
        "requests": stats.requests,
        "bytes_sent": stats.sent,
        "answers": stats.answers,
        "unread_dropped": stats.unread_dropped,
        "answer_seconds": stats.answer_seconds,
        "seconds": round(time.monotonic() - started, 1),
    }
