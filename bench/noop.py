"""The admission reference: a minimal no-op TLS webhook in Python, run in the same benchmark as the operator.

It answers every AdmissionReview with ``allowed`` (the request's uid echoed, nothing else looked at), over the
same TLS settings as the operator's webhook server (the context comes from ``TLSContextHolder``: TLS 1.2+,
ALPN ``http/1.1``), with the standard library's threading HTTP server: a thread per connection blocked in
the TLS socket's C read, the answer in one write, ``TCP_NODELAY``. That is the least a Python webhook can
do per review, so the operator's latency over this one's is what its own server, bounds and rules cost.

``python -m bench.noop PORT CERT KEY``: serve on 127.0.0.1:PORT until terminated. :class:`NoopWebhook`
starts it as a process with a throwaway CA (the benchmark registers it with that CA bundle) and builds the
webhook configurations that send one namespace's DGD admissions to it; :func:`compare` measures the
operator against it (row 5 of the table: direct p99 within 1.5x of the no-op's, through the apiserver
within 1.2x).
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import socket
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from dynamo_localcluster.cluster import REPO_ROOT, free_port
from dynamo_localcluster.webhooks import LOOPBACK, url_webhook, webhook_configuration

from . import admission, procstat

KIND = "DynamoGraphDeployment"
VERSION = "v1beta1"
NOOP_PATH = "/noop"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        uid = json.loads(body)["request"]["uid"]
        out = json.dumps(
            {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {"uid": uid, "allowed": True},
            }
        ).encode()
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(out)}\r\n\r\n"
        self.wfile.write(head.encode() + out)  # one write: one TLS record, as the operator's server

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(port: int, cert: str, key: str) -> None:
    from dynamo_operator.webhooks.certs import TLSContextHolder

    holder = TLSContextHolder()
    if not holder.update(Path(cert).read_bytes(), Path(key).read_bytes()):
        raise SystemExit(f"cannot load {cert} / {key}")
    ctx = holder.context()
    assert ctx is not None

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def get_request(self):  # type: ignore[no-untyped-def]
            sock, addr = super().get_request()
            return ctx.wrap_socket(sock, server_side=True), addr

    Server((LOOPBACK, port), _Handler).serve_forever()


class NoopWebhook:
    """The no-op webhook as a process of its own on a free loopback port, with its own CA."""

    def __init__(self, workdir: Path):
        from dynamo_operator.pki import issue_ca, issue_serving

        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        ca, ca_key = issue_ca(dt.timedelta(days=1))
        cert, key = issue_serving(ca, ca_key, [LOOPBACK, "localhost"], dt.timedelta(days=1))
        self.ca = ca
        (self.dir / "tls.crt").write_bytes(cert)
        (self.dir / "tls.key").write_bytes(key)
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 30) -> None:
        argv = [
            sys.executable,
            "-m",
            "bench.noop",
            str(self.port),
            *(str(self.dir / f) for f in ("tls.crt", "tls.key")),
        ]
        with open(self.dir / "noop.log", "ab") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=REPO_ROOT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"no-op webhook exited {self.proc.returncode}; log {self.dir / 'noop.log'}"
                )
            with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, self.port), timeout=1):
                return
            time.sleep(0.1)
        raise RuntimeError(f"no-op webhook not listening after {timeout}s")

    def configurations(self, namespace: str) -> list[tuple[str, dict]]:
        """(resource plural, body) of a validating and a mutating configuration sending ``namespace``'s DGD
        admissions to the no-op, with its CA bundle (no injection labels: the operator leaves them alone)."""
        bundle = base64.b64encode(self.ca).decode()
        out = []
        for mode in ("validate", "mutate"):
            hook = url_webhook(
                self.port,
                NOOP_PATH,
                mode,
                KIND,
                VERSION,
                name=f"{mode}-noop.bench.dynamo.nvidia.com",
                namespace=namespace,
            )
            hook["clientConfig"]["caBundle"] = bundle
            body = webhook_configuration(mode, f"dynamo-bench-noop-{mode}", "none", [hook])
            body["metadata"].pop("labels")
            out.append((body["kind"].lower() + "s", body))
        return out

    def stop(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2], sys.argv[3])


# Each server's minute is taken in rounds, the two servers in turn (operator first in even rounds, the no-op
# first in odd ones), and each server's rounds are pooled: a machine that slows down for a while (another
# process, a collection in the apiserver) then moves both servers' figures, not only the one measured then.
ROUNDS = 6


def compare(
    rc: Any, operator: tuple[int, int, str], noop: NoopWebhook, namespace: str, rate: float, seconds: float
) -> dict:
    """The operator's webhook (``operator``: its port, pid and the namespace its configurations select)
    against the no-op in the same minutes: both straight (with each server's CPU per review), then both
    through the apiserver, in interleaved rounds (``ROUNDS``). The operator's figures stay where they were
    (``direct``, ``apiserver``), the no-op's go under ``noop``, and ``ratios`` are the operator's p99 over
    the no-op's."""
    servers = {"operator": operator, "noop": (noop.port, noop.pid, namespace)}
    names = list(servers)
    runs: dict[str, dict] = {name: {} for name in servers}
    measures = {
        "direct": lambda port, ns, s: admission.direct(port, ns, rate, s),
        "apiserver": lambda port, ns, s: admission.through_apiserver(rc, ns, rate, s),
    }
    for where, measure in measures.items():
        pooled = {name: admission.Sample() for name in servers}
        cpu = dict.fromkeys(servers, 0.0)
        for r in range(ROUNDS):
            for name in names if r % 2 == 0 else names[::-1]:
                port, pid, ns = servers[name]
                before = procstat.cpu_seconds(pid)
                pooled[name].add(measure(port, ns, seconds / ROUNDS))
                cpu[name] += procstat.cpu_seconds(pid) - before
        for name in servers:
            runs[name][where] = pooled[name].summary()
            if where == "direct":
                runs[name]["cpu_ms_per_review"] = round(cpu[name] / max(1, pooled[name].requests) * 1000, 3)
    ratios = {
        where: round(runs["operator"][where]["p99_ms"] / runs["noop"][where]["p99_ms"], 2)
        for where in measures
        if runs["noop"][where]["p99_ms"]
    }
    return {**runs["operator"], "noop": runs["noop"], "ratios": ratios, "rounds": ROUNDS}
