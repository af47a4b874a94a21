"""Row 7 of the table: how long ``dynamo-operator render`` takes, start to finish, on a sample graph.

The CLI is what a user runs to preview a graph, so its start is its latency: the interpreter, the
imports rendering needs (click, PyYAML, the pydantic API models it validates with, the renderer) and no
others (``tests/unit/test_render_imports.py`` keeps out the Kubernetes client and the operator's runtime,
which the profiling copier and the manager need). Measured as the console script a user runs, after one
warm-up run (a cold page cache measures the disk), as the median of ``runs`` runs, wall and CPU.

The runs may write bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped from their environment): an installed
CLI has its modules compiled (pip compiles a wheel's modules at install, the operator image included, and
an interpreter caches them on first run unless told not to), so the warm-up leaves the cache a user's
installation has. A session that sets the variable would otherwise time the compiler on every run: about
60 ms of recompiling the operator's modules, measured here, which no user pays.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from dynamo_localcluster.cluster import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "vllm-agg.yaml"
TARGET_SECONDS = 0.3


def command() -> list[str]:
    script = Path(sys.executable).with_name("dynamo-operator")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "dynamo_operator.cli"]
    return [*head, "render", "-f", str(EXAMPLE)]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(runs: int = 10) -> dict:
    """Median and fastest wall seconds of ``runs`` renders, and their median CPU seconds."""
    argv = command()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, timeout=120, env=env)  # warm-up
    walls, cpus = [], []
    for _ in range(runs):
        cpu, started = _cpu(), time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, timeout=120, env=env)
        walls.append(time.perf_counter() - started)
        cpus.append(_cpu() - cpu)
    return {
        "runs": runs,
        "median_s": round(statistics.median(walls), 3),
        "min_s": round(min(walls), 3),
        "cpu_median_s": round(statistics.median(cpus), 3),
    }
