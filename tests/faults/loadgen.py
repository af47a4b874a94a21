"""Admission load in a process of its own (a second core, no GIL shared with the webhook under test).

``python loadgen.py KUBECONFIG STATE_FILE RATE THREADS MAX_SECONDS``: dry-run DGD creates paced to RATE per
second from THREADS threads, until STATE_FILE + ".stop" exists or MAX_SECONDS pass. Every 0.2 s (and at
the end) it writes ``{"ok": n, "failed": n, "failures": [first 20], "seconds": s}`` to STATE_FILE.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from dynamo_localcluster.graphs import AGGREGATED, graph
from dynamo_operator.runtime.client import ResourceClient, load_api_client
from kubernetes.client.exceptions import ApiException
from support.crds import DGD_BETA
from urllib3.exceptions import HTTPError


def main(kubeconfig: str, state: str, rate: float, threads: int, max_seconds: float) -> None:
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
                time.sleep(at - time.monotonic())
            i += 1
            try:
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
        time.sleep(0.2)
    for t in pool:
        t.join(30)
    write()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
