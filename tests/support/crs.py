"""Helpers shared by the DynamoModel, DGDR and DynamoCheckpoint cluster tests: an in-process operator
with a chosen configuration, reading conditions and Events, and stand-in worker HTTP servers.

``FakeWorker`` plays a worker's system port for the DynamoModel controller: kwok pods run no container,
so the test binds a small HTTP server on the pod's own IP (from 127.1.0.0/16: loopback, nothing leaves
the machine) and the port the pod declares as ``system``; the operator then calls exactly the address it
derived from the pod, as it would in a real cluster.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

from dynamo_operator.runtime.client import EVENTS
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.tunables import ControllerTunables

from support.operator import Operator
from support.poll import wait_for


@contextlib.contextmanager
def running_operator(
    kube_cluster, config: dict | None = None, controller_tunables: ControllerTunables | None = None
) -> Iterator[Manager]:
    """The Manager of an ``Operator`` (support.operator, the one builder), for the tests that want only it."""
    with Operator(kube_cluster, config, controller_tunables=controller_tunables) as op:
        yield op.mgr


def condition(obj: dict | None, type_: str) -> dict:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return c
    return {}


def events_of(client, ns: str, name: str, kind: str | None = None) -> list[tuple[str, str, str]]:
    """(type, reason, message) of the Events about the object ``name`` (of ``kind``) in ``ns``."""
    items = client.list(EVENTS, ns).get("items") or []
    return [
        (e.get("type"), e.get("reason"), e.get("message") or "")
        for e in items
        if (e.get("involvedObject") or {}).get("name") == name
        and kind in (None, (e.get("involvedObject") or {}).get("kind"))
    ]


def wait_event_reasons(client, ns: str, name: str, reasons: set[str], kind: str | None = None) -> set[str]:
    """Wait until Events with every one of ``reasons`` exist about ``name``; the reasons seen. The operator's
    Event recorder sends in the background, so an Event may still be on its way after what caused it."""
    seen: set[str] = set()

    def arrived() -> bool:
        seen.clear()
        seen.update(e[1] for e in events_of(client, ns, name, kind))
        return reasons <= seen

    wait_for(arrived, 60, f"Events {sorted(reasons)} about {name} in {ns}")
    return seen


def describe(kube_cluster, kind: str, name: str, ns: str) -> str:
    """``kubectl describe`` output, as a user reads it."""
    r = subprocess.run(
        ["kubectl", "describe", kind, name, "-n", ns],
        env=kube_cluster.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


class BackgroundServer:
    """An HTTP server on a daemon thread for the length of a ``with`` block."""

    server: ThreadingHTTPServer
    thread: threading.Thread

    def _serve(self, server: ThreadingHTTPServer, name: str) -> None:
        self.server = server
        self.server.daemon_threads = True
        self.server.handle_error = lambda request, address: None  # a client that timed out and left
        self.thread = threading.Thread(target=self.server.serve_forever, name=name, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


class FakeWorker(BackgroundServer):
    """A worker's LoRA management API on ``host:port``.

    ``mode``: ``ok`` (200), ``legacy`` (404: a worker without the API), ``flaky:N`` (503 for the first N
    POSTs, then 200), ``slow:S`` (answers 200 after S seconds)."""

    def __init__(self, host: str, port: int, mode: str = "ok"):
        self.host, self.port, self.mode = host, port, mode
        self.calls: list[tuple[str, str, dict | None]] = []
        self._lock = threading.Lock()
        worker = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def _answer(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                code = worker.record("POST", self.path, body)
                self._answer(code, {"status": "success" if code == 200 else "error"})

            def do_DELETE(self):
                self._answer(worker.record("DELETE", self.path, None), {"status": "success"})

        self._serve(ThreadingHTTPServer((host, port), Handler), f"fake-worker-{port}")

    def record(self, method: str, path: str, body: dict | None) -> int:
        with self._lock:
            self.calls.append((method, path, body))
            posts = sum(1 for m, *_ in self.calls if m == "POST")
        kind, _, arg = self.mode.partition(":")
        if kind == "legacy" and path.startswith("/v1/loras"):
            return 404
        if kind == "flaky" and method == "POST" and posts <= int(arg):
            return 503
        if kind == "slow":
            time.sleep(float(arg))  # not a wait: the stand-in worker's simulated latency
        return 200

    def posts(self) -> list[dict | None]:
        with self._lock:
            return [b for m, _, b in self.calls if m == "POST"]

    def deletes(self) -> list[str]:
        with self._lock:
            return [p for m, p, _ in self.calls if m == "DELETE"]
