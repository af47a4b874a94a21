"""Admission load in a process of its own (a second core, no GIL shared with the webhook under test).

``python loadgen.py KUBECONFIG STATE_FILE RATE THREADS MAX_SECONDS [read:NAMESPACE/NAME]``: dry-run DGD
creates (mutate, validate, convert to the storage version and back) paced to RATE per second from THREADS
threads, until STATE_FILE + ".stop" exists or MAX_SECONDS pass; with ``read:NS/NAME``, reads of that stored
DGD in v1beta1 instead (a conversion each, no admission). Every 0.2 s (and at
the end) it writes ``{"ok": n, "failed": n, "failures": [first 20], "seconds": s}`` to STATE_FILE.
:class:`Load` starts it from a test and reads it back.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from dynamo_localcluster.graphs import AGGREGATED, graph
from dynamo_operator.runtime.client import ResourceClient, load_api_client
from kubernetes.client.exceptions import ApiException
from support.crds import DGD_BETA
from urllib3.exceptions import HTTPError

TESTS = Path(__file__).resolve().parents[1]  # the load process imports `support` from here


def main(kubeconfig: str, state: str, rate: float, threads: int, max_seconds: float, mode: str = "") -> None:
    client = ResourceClient(load_api_client(kubeconfig, pool_maxsize=threads * 2))
    state_path, stop_path = Path(state), Path(state + ".stop")
    lock = threading.Lock()
    counts = {"ok": 0, "failed": 0, "failures": []}
    started = time.monotonic()
    next_slot = [started]

    def done() -> bool:
        return stop_path.exists() or time.monotonic() - started > max_seconds

    def worker(n: int) -> None:
        i = 0
        while not done():
            with lock:
                at = next_slot[0] = max(next_slot[0] + 1.0 / rate, time.monotonic() - 0.5)
            if at > time.monotonic():
                time.sleep(at - time.monotonic())  # not a wait: pacing to the requested rate
            i += 1
            try:
                if mode.startswith("read:"):
                    ns, _, name = mode[5:].partition("/")
                    client.request("GET", f"{DGD_BETA.base_path(ns)}/{name}")
                else:
                    client.request(
                        "POST",
                        DGD_BETA.base_path("default"),
                        [("dryRun", "All")],
                        body=graph(f"l{n}-{i}", "default", AGGREGATED),
                    )
                with lock:
                    counts["ok"] += 1
            except (ApiException, OSError, HTTPError) as e:
                with lock:
                    counts["failed"] += 1
                    if len(counts["failures"]) < 20:
                        counts["failures"].append(f"{getattr(e, 'status', '')} {getattr(e, 'body', e)}"[:300])

    def write() -> None:
        with lock:
            snap = dict(counts, seconds=time.monotonic() - started)
        tmp = state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(snap))
        tmp.replace(state_path)

    pool = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(threads)]
    for t in pool:
        t.start()
    while not done():
        write()
        time.sleep(0.2)  # not a wait: the state file's write interval
    for t in pool:
        t.join(30)
    write()


class Load:
    """This generator in a process of its own, started by a test; ``read`` is its latest count."""

    def __init__(
        self, cluster, state: Path, rate: float, threads: int = 8, max_seconds: float = 120, mode: str = ""
    ):
        self.state = state
        argv = [cluster.kubeconfig, str(state), str(rate), str(threads), str(max_seconds), mode]
        self.proc = subprocess.Popen(
            [sys.executable, __file__, *argv],
            env={**cluster.env, "PYTHONPATH": str(TESTS)},
            stdout=subprocess.DEVNULL,
            stderr=open(state.with_suffix(".log"), "wb"),  # noqa: SIM115 - the child keeps it
        )

    def read(self) -> dict:
        with contextlib.suppress(OSError, ValueError):
            return json.loads(self.state.read_text())
        return {"ok": 0, "failed": 0, "failures": [], "seconds": 0.0}

    def count(self) -> int:
        got = self.read()
        return got["ok"] + got["failed"]

    def finish(self) -> dict:
        Path(str(self.state) + ".stop").touch()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        return self.read()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), *sys.argv[6:7])
