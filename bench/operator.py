"""``dynamo-operator run`` as a separate process against the local cluster (as ``make demo`` runs it), so its
memory and CPU can be read from /proc, plus what its metrics endpoint says about its work queues."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from dynamo_localcluster.cluster import LocalCluster, free_port
from prometheus_client.parser import text_string_to_metric_families

from . import procstat

OPERATOR_NAMESPACE = "bench-system"


class OperatorProcess:
    """One operator process: leader election off (a single replica; no Lease renewals in the write counts),
    health, plain-HTTP metrics and the webhook server on free loopback ports."""

    def __init__(
        self,
        cluster: LocalCluster,
        log: Path,
        ports: tuple[int, int, int] | None = None,
        webhooks_only: bool = False,
    ):
        """``ports`` (health, metrics, webhook): a restarted operator keeps its predecessor's, as a pod
        does (a new webhook URL would make it re-point the CRDs' conversion, a write a restart never
        makes in a cluster). ``webhooks_only``: no controllers, only the webhook server and its
        certificates (the floor's cluster needs the CRDs' conversion webhook as much as the operator's)."""
        self.cluster = cluster
        self.webhooks_only = webhooks_only
        self.log = log
        self.health, self.metrics, self.webhook = ports or (free_port(), free_port(), free_port())
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = 0.0

    @property
    def ports(self) -> tuple[int, int, int]:
        return self.health, self.metrics, self.webhook

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> None:
        argv = [
            sys.executable,
            "-m",
            "dynamo_operator.cli",
            "run",
            "--kubeconfig",
            self.cluster.kubeconfig,
            "--no-leader-elect",
            "--health-probe-bind-address",
            f"127.0.0.1:{self.health}",
            "--metrics-bind-address",
            f"127.0.0.1:{self.metrics}",
            "--metrics-insecure",
            "--webhook-host",
            "127.0.0.1",
            "--webhook-port",
            str(self.webhook),
            "--webhook-url-base",
            f"https://127.0.0.1:{self.webhook}",
        ]
        if self.webhooks_only:
            argv += ["--no-default-controllers", "--webhooks"]
        env = {**self.cluster.env, "POD_NAMESPACE": OPERATOR_NAMESPACE}
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
        self.started = time.monotonic()

    def _get(self, port: int, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except OSError:
            return 0, ""

    def ready(self) -> bool:
        return self._get(self.health, "/readyz")[0] == 200

    def wait_ready(self, timeout: float = 120) -> float:
        """Seconds from ``start`` until ``/readyz`` answers 200."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            if self.ready():
                return time.monotonic() - self.started
            time.sleep(0.1)
        raise RuntimeError(f"operator not ready after {timeout}s; log {self.log}")

    def check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            tail = self.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"operator exited with {self.proc.returncode}; log {self.log}:\n{tail}")

    def samples(self) -> dict[str, float]:
        """Selected metric values summed over their labels (keyed "name{label=value}" where split)."""
        status, text = self._get(self.metrics, "/metrics")
        if status != 200:
            return {}
        out: dict[str, float] = {"up": 1.0}
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                if s.name == "workqueue_depth" or s.name == "controller_runtime_active_workers":
                    out[s.name] = out.get(s.name, 0.0) + s.value
                elif s.name == "controller_runtime_reconcile_total":
                    key = f"reconciles{{{s.labels.get('controller')}}}"
                    out[key] = out.get(key, 0.0) + s.value
        return out

    def quiet(self) -> bool:
        """Work queues empty and no worker busy."""
        s = self.samples()  # a gauge never set (nothing queued yet) has no sample: 0
        return "up" in s and not s.get("workqueue_depth") and not s.get("controller_runtime_active_workers")

    def rss_mb(self) -> float:
        return procstat.rss_mb(self.pid)

    def cpu_seconds(self) -> float:
        return procstat.cpu_seconds(self.pid)

    def stop(self, timeout: float = 30) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
