"""The benchmark's verdicts from one run's numbers (``bench/report.py``): writes equal to the floor's with
at most one Event a graph, a restart at most 5% above the RSS before it, and the RSS target at N graphs."""

from __future__ import annotations

import pytest

from bench import report


def results(burst_writes: int, events: int, rss_after: float, n: int = 10) -> dict:
    return {
        "config": {"n": n},
        "floor": {"seconds": 10.0, "writes": 15 * n},
        "burst": {"seconds": 11.0, "writes": burst_writes, "events": events},
        "restart": {
            "writes": 0,
            "ready_seconds": 1.0,
            "idle_seconds": 2.0,
            "rss_before_mb": 100.0,
            "rss_after_mb": rss_after,
        },
        "memory": {
            "points": {"0": {"rss_mb": 80.0, "cpu_seconds": 1}, str(n): {"rss_mb": 81.0, "cpu_seconds": 2}},
            "idle_growth_mb": 0.0,
        },
    }


def verdicts(r: dict) -> dict[str, str]:
    return {row: verdict for row, _, _, verdict in report.rows(r)}


def test_writes_equal_to_the_floor_pass_and_one_more_misses():
    assert verdicts(results(16 * 10, 10, 100.0))["2b writes"] == "PASS"
    assert verdicts(results(16 * 10 + 1, 10, 100.0))["2b writes"] == "MISS"  # a write the floor does not make
    assert verdicts(results(17 * 10, 20, 100.0))["2b writes"] == "MISS"  # two Events a graph


@pytest.mark.parametrize("after,verdict", [(104.9, "PASS"), (95.1, "PASS"), (105.1, "MISS"), (80.0, "PASS")])
def test_a_restart_does_not_raise_its_rss_by_more_than_five_percent(after, verdict):
    """A jump is what a restart must not make; lower is the burst's fragmentation gone."""
    assert verdicts(results(160, 10, after))["4 restart"] == verdict


def test_the_rss_target_follows_n():
    assert report.rss_limit(500) == 150 and report.rss_limit(5000) == 400
    (memory,) = [m for row, m, _, _ in report.rows(results(160, 10, 100.0)) if row == "6 memory/cpu"]
    assert "102 KB a graph" in memory  # (81 - 80) MB over 10 graphs


def test_without_a_floor_the_burst_is_reported_without_a_verdict():
    """BENCH_FLOOR=0 (memory at scale when the floor's hour cannot be spent): the burst's numbers are shown,
    and nothing claims a ratio or a write count against a reference that was not measured."""
    r = results(160, 10, 100.0)
    del r["floor"]
    rows = {row: (measured, verdict) for row, measured, _, verdict in report.rows(r)}
    assert rows["2 burst"] == ("11.0 s, 160 writes (10 Events); no floor run", "-")
    assert "1 floor" not in rows and "2b writes" not in rows
    assert rows["4 restart"][1] == "PASS"
