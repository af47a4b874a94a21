"""A loopback HTTP server that counts the connections it accepts: the client tests that must tell a reused
connection from a new one (the fenced transport, the shared TLS context) read ``connections``."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class CountingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.connections = 0

    def get_request(self):  # type: ignore[no-untyped-def]
        conn = super().get_request()
        self.connections += 1
        return conn
