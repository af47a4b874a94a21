"""A minimal NATS client over a socket (the text protocol: INFO, CONNECT, PING/PONG, SUB, PUB, MSG), enough
for the tests to talk to a NATS server as a Dynamo pod would: connect with or without credentials or a
client certificate, publish, subscribe, request-reply to the JetStream API. No client library: the tests
check the server, and the protocol is a few lines."""

from __future__ import annotations

import json
import socket
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field


class NatsError(RuntimeError):
    """The server answered ``-ERR``; the message is the server's."""


@dataclass
class Nats:
    host: str
    port: int = 4222
    timeout: float = 10.0
    sock: socket.socket | None = None
    buf: bytes = b""
    info: dict = field(default_factory=dict)
    sid: int = 0

    def connect(self, tls: ssl.SSLContext | None = None, server_name: str = "", **credentials: str) -> Nats:
        """CONNECT (``user``/``pass``, ``auth_token``...) and a PING; raises NatsError when refused. ``tls``:
        upgrade after the server's INFO, as NATS clients do (``server_name``: the name its certificate is
        checked against, the host by default)."""
        self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        line = self._line()
        assert line.startswith("INFO "), line
        self.info = json.loads(line[5:])
        if tls is not None:
            self.sock = tls.wrap_socket(self.sock, server_hostname=server_name or self.host)
        options = {"verbose": False, "pedantic": False, "protocol": 1, "headers": False, **credentials}
        self._send(f"CONNECT {json.dumps(options)}\r\nPING\r\n".encode())
        self._expect_pong()
        return self

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def __enter__(self) -> Nats:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def request(self, subject: str, payload: dict | bytes) -> dict:
        """Publishes with a fresh inbox as the reply subject and returns the JSON of the first reply."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        inbox = f"_INBOX.{uuid.uuid4().hex}"
        self.sid += 1
        self._send(f"SUB {inbox} {self.sid}\r\n".encode())
        self._send(f"PUB {subject} {inbox} {len(body)}\r\n".encode() + body + b"\r\n")
        while True:
            line = self._line()
            if line.startswith("MSG "):
                size = int(line.split()[-1])
                data = self._read(size + 2)[:-2]
                self._send(f"UNSUB {self.sid}\r\n".encode())
                return json.loads(data)
            if line == "PING":
                self._send(b"PONG\r\n")
            elif line.startswith("-ERR"):
                raise NatsError(line)

    def subscribe(self, subject: str) -> None:
        self.sid += 1
        self._send(f"SUB {subject} {self.sid}\r\n".encode())
        self.ping()

    def publish(self, subject: str, body: bytes) -> None:
        self._send(f"PUB {subject} {len(body)}\r\n".encode() + body + b"\r\n")
        self.ping()

    def ping(self) -> None:
        """A round trip: everything sent before it was processed by the server (or NatsError)."""
        self._send(b"PING\r\n")
        self._expect_pong()

    def messages(self, wait: float) -> list[tuple[str, bytes]]:
        """(subject, payload) of the messages delivered within ``wait`` seconds."""
        assert self.sock is not None
        out = []
        self.sock.settimeout(wait)
        try:
            while True:
                line = self._line()
                if line.startswith("MSG "):
                    size = int(line.split()[-1])
                    out.append((line.split()[1], self._read(size + 2)[:-2]))
                elif line == "PING":
                    self._send(b"PONG\r\n")
        except TimeoutError:
            return out
        finally:
            self.sock.settimeout(self.timeout)

    # -- the wire ------------------------------------------------------------------------------------------
    def _send(self, data: bytes) -> None:
        assert self.sock is not None
        self.sock.sendall(data)

    def _fill(self) -> None:
        assert self.sock is not None
        chunk = self.sock.recv(65536)
        if not chunk:
            raise NatsError("connection closed by the server")
        self.buf += chunk

    def _line(self) -> str:
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line.decode()

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def _expect_pong(self) -> None:
        while True:
            line = self._line()
            if line == "PONG":
                return
            if line.startswith("-ERR"):
                raise NatsError(line)


def refused(connect: Callable[[], Nats]) -> bool:
    """Whether the server refuses the connection ``connect`` makes (at the TLS handshake or at CONNECT);
    a connection it accepts is closed again."""
    try:
        connect().close()
    except (NatsError, ssl.SSLError, OSError):
        return True
    return False
