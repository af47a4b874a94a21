"""What a worker's error reply puts into a DynamoModel's status: a short, single-line, printable excerpt."""

from __future__ import annotations

import http.server
import threading

from dynamo_operator.controllers.dynamomodel import REPLY_EXCERPT_CHARS, call_endpoint, reply_excerpt


def test_control_characters_and_newlines_cannot_forge_lines():
    raw = b"bad adapter\n\x1b[31mWarning  Forged  event\x1b[0m\r\n\tdone"
    out = reply_excerpt(raw)
    assert "\n" not in out and "\r" not in out and "\x1b" not in out
    assert out == "bad adapter [31mWarning Forged event [0m done"


def test_a_long_reply_is_capped():
    out = reply_excerpt(b"x" * 10_000)
    assert len(out) == REPLY_EXCERPT_CHARS
    assert out.endswith("…")


def test_invalid_utf8_is_replaced_not_raised():
    assert reply_excerpt(b"\xff\xfeoops") == "\ufffd\ufffdoops"


class _Rejecting(http.server.BaseHTTPRequestHandler):
    body = b"unknown lora\n" + b"y" * 10_000

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(400)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def test_an_error_reply_reaches_the_outcome_as_an_excerpt():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Rejecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1/load_lora_adapter"
        outcome = call_endpoint("POST", url, {"lora_name": "a"}, timeout=5, attempts=3, backoff=0.01)
    finally:
        server.shutdown()
        server.server_close()
    assert outcome.http_status == 400 and outcome.attempts == 1  # a 4xx is final
    assert outcome.error.startswith("HTTP 400: unknown lora yyy")
    assert len(outcome.error) <= len("HTTP 400: ") + REPLY_EXCERPT_CHARS
