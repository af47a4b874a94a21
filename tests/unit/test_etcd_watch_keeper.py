"""The watch keeper's frame rule (``etcdwatch.py``): the client's ``END_STREAM`` is held back on Watch
streams alone, whatever HPACK state the request headers were encoded with; every other frame passes with
its flags. The keeper in front of a real etcd gRPC proxy is proven in tests/integration/test_etcd_access.py
and with the Dynamo runtime on the real node (tests/realnode/test_bundled_graphs.py)."""

from __future__ import annotations

import hpack
from dynamo_operator.etcdwatch import (
    CONTINUATION,
    DATA,
    END_HEADERS,
    END_STREAM,
    HEADERS,
    PADDED,
    PRIORITY,
    RST_STREAM,
    WATCH_PATH,
    ClientFrames,
)


def request(encoder: hpack.Encoder, path: str) -> bytes:
    return encoder.encode(
        [(":method", "POST"), (":scheme", "http"), (":path", path), ("content-type", "application/grpc")]
    )


def test_only_a_watch_streams_end_is_held_back() -> None:
    enc, frames = hpack.Encoder(), ClientFrames()
    assert frames.frame(HEADERS, END_HEADERS, 1, request(enc, WATCH_PATH)) == END_HEADERS
    assert frames.frame(HEADERS, END_HEADERS, 3, request(enc, "/etcdserverpb.KV/Range")) == END_HEADERS
    assert frames.frame(DATA, 0, 1, b"\x00\x00\x00\x00\x02\x0a\x00") == 0
    assert frames.frame(DATA, END_STREAM, 1, b"") == 0  # the watch's client side: held back
    assert frames.frame(DATA, END_STREAM, 3, b"\x00\x00\x00\x00\x00") == END_STREAM  # a unary call's end
    # the same headers again come out of the dynamic table (indexed): still told apart
    assert frames.frame(HEADERS, END_HEADERS, 5, request(enc, WATCH_PATH)) == END_HEADERS
    assert frames.frame(HEADERS, END_HEADERS, 7, request(enc, "/etcdserverpb.KV/Range")) == END_HEADERS
    assert frames.frame(DATA, END_STREAM | PADDED, 5, b"\x01\x00") == PADDED
    assert frames.frame(DATA, END_STREAM, 7, b"") == END_STREAM
    assert frames.watches == {1, 5}


def test_a_watch_ends_when_the_client_resets_it_or_the_server_ends_it() -> None:
    enc, frames = hpack.Encoder(), ClientFrames()
    for stream in (1, 3):
        frames.frame(HEADERS, END_HEADERS, stream, request(enc, WATCH_PATH))
    assert frames.frame(RST_STREAM, 0, 1, b"\x00\x00\x00\x08") == 0  # passed on: the proxy cancels it
    frames.ended_by_server(3)
    assert frames.watches == set()
    assert frames.frame(DATA, END_STREAM, 3, b"") == END_STREAM


def test_headers_split_over_continuation_with_padding_and_priority() -> None:
    enc, frames = hpack.Encoder(), ClientFrames()
    block = request(enc, WATCH_PATH)
    first = b"\x02" + b"\x00\x00\x00\x00\x10" + block[:4] + b"\x00\x00"  # pad length 2, priority fields
    assert frames.frame(HEADERS, PADDED | PRIORITY, 9, first) == PADDED | PRIORITY
    assert frames.watches == set()  # not known before the block ends
    frames.frame(CONTINUATION, END_HEADERS, 9, block[4:])
    assert frames.watches == {9}
    # a watch whose request also ends its side in the HEADERS frame itself
    assert frames.frame(HEADERS, END_HEADERS | END_STREAM, 11, request(enc, WATCH_PATH)) == END_HEADERS
