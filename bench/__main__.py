"""``python -m bench`` (``make bench``): run every phase, print the table, write the JSON.

Knobs (environment): ``BENCH_N`` graphs (500), ``BENCH_IDLE_SECONDS`` (300), ``BENCH_ADMISSION_SECONDS``
(60) at ``BENCH_ADMISSION_RATE`` reviews/s (200), ``BENCH_GROW=0`` to skip the 2N memory point,
``BENCH_FLOOR_AFTER=0`` to run the floor once (before the operator), ``BENCH_FLOOR=0`` to run no floor (the
burst then has no reference: for memory and restart at scale when the floor's hour cannot be spent),
``BENCH_TIMEOUT`` per wait (1200 s), ``BENCH_DIR`` for clusters and logs (.cache/bench), ``BENCH_OUT``
for the JSON (bench/results).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .run import Config, run, say

OUT = Path(os.environ.get("BENCH_OUT") or Path(__file__).resolve().parent / "results")


def main() -> int:
    cfg = Config.from_env()
    started = time.monotonic()
    say(f"n={cfg.n} idle={cfg.idle_seconds:.0f}s admission={cfg.admission_rate:.0f}/s")
    results, path = run(cfg, OUT)
    print()
    print(results["table"])
    print()
    say(f"results: {path}")
    say(f"total wall time {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
