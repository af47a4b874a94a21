"""The watch keeper: the runtime's leg of a graph pod's path to etcd (``render/etcdaccess.py``).

A graph pod reaches etcd as ``runtime -> watch keeper -> etcd-proxy -> etcd-tunnel -> etcd``. The Dynamo
runtime (1.6.1, Rust ``etcd-client``) opens each watch and drops its request sender at once, which ends
its side of the HTTP/2 stream (``END_STREAM``) while it keeps reading events. etcd itself keeps such a
watch; etcd's gRPC proxy (3.5 and 3.6) ends the whole watch when the client's side ends ("context
canceled"). The runtime then lists the prefix again and re-watches at once: measured on the real node, a
frontend and a worker re-listed about 500 times a second, and their sidecar proxy and the bundled etcd
burned most of a core between them for as long as the graph ran.

This keeper sits in front of the proxy on the pod's loopback and forwards HTTP/2 frames unchanged, except
that the client's ``END_STREAM`` on a Watch stream is not passed on: the proxy sees a watch whose client
may still send, which is what etcd's own server assumes. Every other call (ranges, puts, transactions,
lease keep-alives) passes untouched, and a client that cancels a watch (``RST_STREAM``) cancels it at the
proxy too. To know which stream is a Watch it decodes the client's request headers (HPACK, whose table
is shared by every header block of the connection, so every block is decoded in order); the server's
frames are read only for their type and flags, to forget streams the server ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import Awaitable, Callable
from typing import Any

import hpack

from dynamo_operator.runtime.log import get_logger

log = get_logger("etcd-watch-keeper")

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
WATCH_PATH = "/etcdserverpb.Watch/Watch"
DATA, HEADERS, RST_STREAM, CONTINUATION = 0x0, 0x1, 0x3, 0x9
END_STREAM, END_HEADERS, PADDED, PRIORITY = 0x1, 0x4, 0x8, 0x20


def header_block(flags: int, payload: bytes) -> bytes:
    """A HEADERS frame's header block fragment: without its padding and priority fields (RFC 9113 6.2)."""
    start, end = 0, len(payload)
    if flags & PADDED:
        start, end = 1, len(payload) - payload[0]
    if flags & PRIORITY:
        start += 5
    return payload[start:end]


class ClientFrames:
    """The client-to-server half of one connection: decodes every request's headers, holds back the end of
    the client's side of each Watch stream."""

    def __init__(self) -> None:
        self.decoder = hpack.Decoder()
        self.watches: set[int] = set()
        self._block: tuple[int, bytearray] | None = None  # stream id, header block awaiting CONTINUATION

    def _headers_done(self, stream: int, block: bytes) -> None:
        headers = dict(self.decoder.decode(block, raw=False))
        if headers.get(":path") == WATCH_PATH:
            self.watches.add(stream)

    def frame(self, kind: int, flags: int, stream: int, payload: bytes) -> int:
        """The flags to forward the frame with (the payload never changes)."""
        if kind == HEADERS:
            block = header_block(flags, payload)
            if flags & END_HEADERS:
                self._headers_done(stream, block)
            else:
                self._block = (stream, bytearray(block))
        elif kind == CONTINUATION and self._block is not None:
            self._block[1].extend(payload)
            if flags & END_HEADERS:
                sid, block = self._block
                self._block = None
                self._headers_done(sid, bytes(block))
        elif kind == RST_STREAM:
            self.watches.discard(stream)
        if kind in (DATA, HEADERS) and flags & END_STREAM and stream in self.watches:
            return flags & ~END_STREAM
        return flags

    def ended_by_server(self, stream: int) -> None:
        self.watches.discard(stream)


async def read_frame(reader: asyncio.StreamReader) -> tuple[bytes, int, int, int, bytes]:
    """(9-byte header, type, flags, stream id, payload)."""
    head = await reader.readexactly(9)
    length = int.from_bytes(head[:3], "big")
    kind, flags = head[3], head[4]
    stream = struct.unpack(">I", head[5:9])[0] & 0x7FFFFFFF
    payload = await reader.readexactly(length) if length else b""
    return head, kind, flags, stream, payload


async def _client_to_server(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, frames: ClientFrames
) -> None:
    try:
        preface = await reader.readexactly(len(PREFACE))
        writer.write(preface)
        if preface != PREFACE:  # not HTTP/2 with prior knowledge: forward as it is, the server refuses it
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
            return
        while True:
            head, kind, flags, stream, payload = await read_frame(reader)
            out = frames.frame(kind, flags, stream, payload)
            if out != flags:
                head = head[:4] + bytes([out]) + head[5:]
            writer.write(head + payload)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, hpack.HPACKError) as e:
        if isinstance(e, hpack.HPACKError):
            log.warning("undecodable request headers: connection closed", error=str(e))
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def _server_to_client(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, frames: ClientFrames
) -> None:
    try:
        while True:
            head, kind, flags, stream, payload = await read_frame(reader)
            if kind == RST_STREAM or (kind == HEADERS and flags & END_STREAM):
                frames.ended_by_server(stream)
            writer.write(head + payload)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


class WatchKeeper:
    """Plain HTTP/2 on ``listen`` (loopback), to the etcd gRPC proxy at ``upstream`` (``host:port``)."""

    def __init__(self, upstream: str):
        host, _, port = upstream.rpartition(":")
        self.host, self.port = host.strip("[]"), int(port)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        except OSError as e:
            log.warning("cannot reach the etcd proxy", host=self.host, port=self.port, error=str(e))
            writer.close()
            return
        frames = ClientFrames()
        await asyncio.gather(
            _client_to_server(reader, up_writer, frames), _server_to_client(up_reader, writer, frames)
        )

    async def serve(self, listen: str, started: asyncio.Event | None = None) -> None:
        await serve_loopback(
            self.handle, listen, started, log, "etcd watch keeper serving", self.host, self.port
        )


async def serve_loopback(
    handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
    listen: str,
    started: asyncio.Event | None,
    logger: Any,
    what: str,
    host: str,
    port: int,
) -> None:
    """Serve ``handle`` on ``listen`` until cancelled, saying so (the tunnel's and the keeper's listeners)."""
    lhost, _, lport = listen.rpartition(":")
    server = await asyncio.start_server(handle, lhost, int(lport))
    logger.info(what, listen=listen, host=host, port=port)
    if started is not None:
        started.set()
    async with server:
        await server.serve_forever()
