"""Unary etcd gRPC calls for tests, through curl's HTTP/2 (the venv has no gRPC library; etcd's JSON
gateway cannot stand in: it refuses client certificates that carry a Common Name, which is how a namespace's
etcd user is named). Only what the tests ask: Range and Put, their status and the keys a Range returns.

A Range request is field 1 (key) and 2 (range_end); a Put request field 1 (key) and 2 (value); a Range
response's kvs are field 2, each a KeyValue whose key is field 1. Protobuf here is length-delimited fields
and varints only.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

OK, PERMISSION_DENIED = 0, 7


def _varint(n: int) -> bytes:
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([low])
        out += bytes([low | 0x80])


def _field(number: int, data: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _read_varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def _fields(buf: bytes) -> list[tuple[int, bytes | int]]:
    out: list[tuple[int, bytes | int]] = []
    i = 0
    while i < len(buf):
        tag, i = _read_varint(buf, i)
        number, kind = tag >> 3, tag & 7
        if kind == 0:
            value, i = _read_varint(buf, i)
            out.append((number, value))
        elif kind == 2:
            size, i = _read_varint(buf, i)
            out.append((number, buf[i : i + size]))
            i += size
        else:
            raise ValueError(f"wire type {kind} not expected in an etcd response")
    return out


def prefix_end(prefix: bytes) -> bytes:
    return prefix[:-1] + bytes([prefix[-1] + 1])


@dataclass
class Reply:
    status: int | None  # grpc-status; None when no HTTP/2 answer came (a refused handshake)
    message: str
    body: bytes

    def keys(self) -> list[str]:
        """The keys of a Range response."""
        if len(self.body) < 5:
            return []
        msg = self.body[5 : 5 + int.from_bytes(self.body[1:5], "big")]
        kvs = [v for n, v in _fields(msg) if n == 2 and isinstance(v, bytes)]
        return [next(v for n, v in _fields(kv) if n == 1).decode() for kv in kvs]  # type: ignore[union-attr]


def call(
    url: str,
    method: str,
    message: bytes,
    tls: tuple[Path, ...] | None = None,
    connect_to: str | None = None,
) -> Reply:
    """POST one gRPC message to ``url`` + ``method``; ``tls``: (ca, cert, key) for https, or (ca,) to
    present no client certificate; ``connect_to``: the address to open instead of the URL's host, whose
    name the server's certificate is still checked against (a Service's ClusterIP)."""
    with tempfile.TemporaryDirectory() as d:
        req, resp = Path(d) / "req", Path(d) / "resp"
        req.write_bytes(b"\x00" + len(message).to_bytes(4, "big") + message)
        cmd = ["curl", "-sS", "-m", "10", "-o", str(resp), "-D", "-", "--data-binary", f"@{req}"]
        cmd += ["-H", "content-type: application/grpc", "-H", "te: trailers"]
        cmd += ["--http2"] if url.startswith("https") else ["--http2-prior-knowledge"]
        if tls:
            cmd += ["--cacert", str(tls[0])]
        if tls and len(tls) == 3:
            cmd += ["--cert", str(tls[1]), "--key", str(tls[2])]
        if connect_to:
            parts = urlsplit(url)
            cmd += ["--connect-to", f"{parts.hostname}:{parts.port}:{connect_to}:{parts.port}"]
        r = subprocess.run([*cmd, url + method], capture_output=True, text=True, timeout=30, check=False)
        body = resp.read_bytes() if resp.exists() else b""
    headers = {}
    for line in r.stdout.splitlines():
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    status = int(headers["grpc-status"]) if "grpc-status" in headers else None
    return Reply(status, headers.get("grpc-message", r.stderr.strip()), body)


def range_prefix(
    url: str, prefix: str, tls: tuple[Path, ...] | None = None, connect_to: str | None = None
) -> Reply:
    key = prefix.encode()
    message = _field(1, key) + _field(2, prefix_end(key))
    return call(url, "/etcdserverpb.KV/Range", message, tls, connect_to)


def put(
    url: str, key: str, value: str, tls: tuple[Path, ...] | None = None, connect_to: str | None = None
) -> Reply:
    message = _field(1, key.encode()) + _field(2, value.encode())
    return call(url, "/etcdserverpb.KV/Put", message, tls, connect_to)


# -- one Watch over raw HTTP/2, its client side ended right after the create request ----------------------
# What the Dynamo runtime's etcd client does (operator/dynamo_operator/etcdwatch.py says why it matters):
# curl cannot keep reading a stream whose request it ended, so this speaks HTTP/2 frames itself.
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_DATA, _HEADERS, _RST, _SETTINGS, _PING, _GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7
_END_STREAM, _ACK, _END_HEADERS = 0x1, 0x1, 0x4


def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


@dataclass
class WatchOutcome:
    created: bool
    keys: list[str]  # the keys of the first events after the watch was created
    ended: str | None  # how the server ended the stream, if it did


def watch_half_closed(address: str, prefix: str, act, timeout: float = 15.0) -> WatchOutcome:
    """Watch ``prefix`` at ``address`` (``host:port``, plain HTTP/2) with the client's side of the stream
    ended right after the create request; once the server says the watch is created, call ``act`` (a write
    under the prefix, through another connection) and read until an event comes, the server ends the
    stream, or ``timeout``."""
    import socket
    import time

    import hpack

    host, _, port = address.rpartition(":")
    key = prefix.encode()
    create = _field(1, _field(1, key) + _field(2, prefix_end(key)))  # WatchRequest.create_request
    headers = hpack.Encoder().encode(
        [
            (":method", "POST"),
            (":scheme", "http"),
            (":path", "/etcdserverpb.Watch/Watch"),
            (":authority", address),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
        ]
    )
    out = WatchOutcome(False, [], None)
    deadline = time.monotonic() + timeout
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(
            PREFACE
            + _frame(_SETTINGS, 0, 0)
            + _frame(_HEADERS, _END_HEADERS, 1, headers)
            + _frame(_DATA, 0, 1, b"\x00" + len(create).to_bytes(4, "big") + create)
            + _frame(_DATA, _END_STREAM, 1)  # the client's side ends here, as the runtime's does
        )
        buf, body = b"", b""
        while out.ended is None and not out.keys:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                out.ended = "connection closed"
                break
            buf += chunk
            while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
                size = int.from_bytes(buf[:3], "big")
                kind, flags, stream = buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
                payload, buf = buf[9 : 9 + size], buf[9 + size :]
                if kind == _SETTINGS and not flags & _ACK:
                    sock.sendall(_frame(_SETTINGS, _ACK, 0))
                elif kind == _PING and not flags & _ACK:
                    sock.sendall(_frame(_PING, _ACK, 0, payload))
                elif kind == _GOAWAY:
                    out.ended = "GOAWAY"
                elif stream == 1 and kind == _RST:
                    out.ended = "RST_STREAM"
                elif stream == 1 and kind == _HEADERS and flags & _END_STREAM:
                    out.ended = "trailers (the server ended the watch)"
                elif stream == 1 and kind == _DATA:
                    body += payload
                    while len(body) >= 5 and len(body) >= 5 + (n := int.from_bytes(body[1:5], "big")):
                        msg, body = body[5 : 5 + n], body[5 + n :]
                        if _watch_response(msg, out) == "created":
                            act()
    return out


def _watch_response(msg: bytes, out: WatchOutcome) -> str:
    """A WatchResponse: ``created`` (field 3) the first time; its events (11) add their keys to ``out``."""
    fields = _fields(msg)
    for number, event in fields:
        if number == 11 and isinstance(event, bytes):
            kv = next(v for m, v in _fields(event) if m == 2)
            assert isinstance(kv, bytes)
            key = next(v for m, v in _fields(kv) if m == 1)
            assert isinstance(key, bytes)
            out.keys.append(key.decode())
    if any(number == 3 and value == 1 for number, value in fields) and not out.created:
        out.created = True
        return "created"
    return ""
