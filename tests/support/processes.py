"""``dynamo-operator run`` as a subprocess of the tests, and waiting for it to be ready.

The process binds its health (and, when asked, metrics) endpoint on a free 127.0.0.1 port; its output
goes to a log file that assertion messages quote. Every process is stopped or killed by its test.
"""

from __future__ import annotations

import contextlib
import functools
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

from dynamo_localcluster.cluster import free_port

from support.poll import wait_for

# `python -m dynamo_operator.cli` in this interpreter: the same entry point as the `dynamo-operator` script
OPERATOR = (sys.executable, "-m", "dynamo_operator.cli")


@functools.cache
def _unverified() -> ssl.SSLContext:
    """One client context for every HTTPS poll: a default context loads the system's CA store (25 ms of
    CPU), and a poll of an operator's /readyz every 0.1 s made one per call, plain HTTP or not."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def http_get(url: str, token: str | None = None, timeout: float = 5) -> tuple[int, str]:
    """(status, body) of a GET; status 0 when nothing answered. HTTPS is not verified (test servers)."""
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(
            req, timeout=timeout, context=_unverified() if url.startswith("https") else None
        ) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return 0, str(e)


def run_argv(cluster, *args: str, command: Sequence[str] = OPERATOR) -> list[str]:
    """The argv of ``dynamo-operator run --kubeconfig <the cluster's> ARGS...``."""
    return [*command, "run", "--kubeconfig", cluster.kubeconfig, *args]


class OperatorProcess(subprocess.Popen):
    """A running ``dynamo-operator run``: its health and metrics ports (metrics 0: off) and its log."""

    health: int
    metrics: int
    log: Path
    name: str  # what the test calls it (default: the log file's stem)

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def wait_ready(self, timeout: float = 30) -> None:
        """``/readyz`` answers 200 (caches synced; the webhook server serves, if it runs)."""
        wait_for(
            lambda: http_get(f"http://127.0.0.1:{self.health}/readyz")[0] == 200,
            timeout,
            lambda: f"operator not ready after {timeout}s:\n{self.log_tail()}",
        )

    def stop(self, timeout: float = 20) -> int:
        """SIGTERM and wait for the exit (SIGKILL after ``timeout``); the exit code."""
        self.terminate()
        try:
            self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.wait(10)
        return self.returncode

    def reap(self) -> None:
        """SIGKILL unless it has exited already, and collect it."""
        if self.poll() is None:
            self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.wait(10)


def spawn_operator(
    cluster,
    log: Path,
    *args: str,
    metrics: bool = True,
    env: dict[str, str] | None = None,
    command: Sequence[str] = OPERATOR,
) -> OperatorProcess:
    """Start ``dynamo-operator run`` against ``cluster`` with health on a free port, metrics on another
    (plain HTTP) or off, then ``args``; it does not wait for readiness (``wait_ready``)."""
    health = free_port()
    metrics_port = free_port() if metrics else 0
    argv = run_argv(
        cluster,
        "--health-probe-bind-address",
        f"127.0.0.1:{health}",
        *(
            ("--metrics-bind-address", f"127.0.0.1:{metrics_port}", "--metrics-insecure")
            if metrics
            else ("--metrics-bind-address", "0")
        ),
        *args,
        command=command,
    )
    with open(log, "wb") as out:  # the child keeps its own descriptor
        proc = OperatorProcess(argv, env=env or cluster.env, stdout=out, stderr=subprocess.STDOUT)
    proc.health, proc.metrics, proc.log, proc.name = health, metrics_port, log, log.stem
    return proc


@contextlib.contextmanager
def operator_process(cluster, log: Path, *args: str, **kw) -> Iterator[OperatorProcess]:
    """``spawn_operator``, ready within 30s; stopped with SIGTERM (then SIGKILL) when the block ends."""
    proc = spawn_operator(cluster, log, *args, **kw)
    try:
        proc.wait_ready()
        yield proc
    finally:
        proc.stop()
