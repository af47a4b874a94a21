"""Seconds per test module (setup, call and teardown summed), printed at the end of a run.

``make integration`` splits the modules over parallel pytest processes so that they end together; this
summary is the measurement that split follows (docs/testing.md), printed by every run, so rebalancing
needs no second run with ``--durations=0``.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

SHOWN = 40  # enough for every module of an integration stream


class ModuleTimes:
    """A pytest plugin: sums each report's duration under the file its test lives in."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid.split("::", 1)[0]] += report.duration

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if len(self.seconds) < 2:
            return
        terminalreporter.write_sep("=", "seconds per module (setup + call + teardown)")
        for line in lines(self.seconds):
            terminalreporter.write_line(line)


def lines(seconds: dict[str, float]) -> list[str]:
    """The summary's lines for a mapping of module to seconds (what the unit test checks)."""
    ranked = sorted(seconds.items(), key=lambda kv: -kv[1])
    return [f"{s:8.1f}  {p}" for p, s in ranked[:SHOWN]] + [f"{sum(seconds.values()):8.1f}  total"]
