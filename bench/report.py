"""The rows, their targets and pass/miss, from one run's results."""

from __future__ import annotations

TARGETS = {
    "burst": "<= 1.3x floor",
    "writes": "= floor's, <= 1 Event a graph",
    "idle": "0 writes/min",
    "restart": "0 writes, RSS <= +5%",
    "admission": "p99 <= 1.5x no-op direct, <= 1.2x via apiserver",
    "memory": "RSS < 150 MB at N=500, < 400 MB at N=5000",
    "render": "< 0.3 s",
}
# A restarted operator's RSS may exceed the steady state before it by this much (a jump is what it must
# not make; it comes back lower, without the fragmentation a burst leaves behind).
RESTART_RSS = 0.05


def rss_limit(n: int) -> float:
    """The RSS target at N graphs: 150 MB at 500, 400 MB at 5000, in a line between (and past) them."""
    return 150 + (n - 500) * (400 - 150) / (5000 - 500)


def rows(r: dict) -> list[tuple[str, str, str, str]]:
    """(row, measured, target, PASS/MISS/-) for the table."""
    n = r["config"]["n"]
    out: list[tuple[str, str, str, str]] = []
    fl, bu = r.get("floor"), r.get("burst")
    floors = [f["seconds"] for f in (fl, r.get("floor_after")) if f]
    if fl:
        took = " and ".join(f"{s:.1f} s" for s in floors)
        mean = f" (mean {sum(floors) / len(floors):.1f} s)" if len(floors) > 1 else ""
        out.append(("1 floor", f"{took}{mean} for {n} graphs, {fl['writes']} writes", "(reference)", "-"))
    if fl and bu:
        ratio = bu["seconds"] / (sum(floors) / len(floors))
        bu["ratio"] = round(ratio, 2)
        out.append(
            (
                "2 burst",
                f"{bu['seconds']:.1f} s = {ratio:.2f}x floor, {bu['writes']} writes",
                TARGETS["burst"],
                _ok(ratio <= 1.3),
            )
        )
    if bu and not fl:  # BENCH_FLOOR=0: the burst's own numbers, no reference to compare them with
        events = bu.get("events", 0)
        measured = f"{bu['seconds']:.1f} s, {bu['writes']} writes ({events} Events); no floor run"
        out.append(("2 burst", measured, TARGETS["burst"], "-"))
    if fl and bu:
        out.append(_writes_row(n, fl, bu))
    if (idle := r.get("idle")) is not None:
        out.append(
            (
                "3 idle",
                f"{idle['writes_per_minute']:.1f} writes/min over {idle['seconds']:.0f} s "
                f"({idle['objects_changed']} objects changed)",
                TARGETS["idle"],
                _ok(idle["writes"] == 0 and idle["objects_changed"] == 0),
            )
        )
    if (rs := r.get("restart")) is not None:
        out.append(_restart_row(rs))
    if (ad := r.get("admission")) is not None:
        out.append(_admission_row(ad))
    if (mem := r.get("memory")) is not None:
        out.append(_memory_row(n, mem))
    if (rs := r.get("render_start")) is not None:
        out.append(
            (
                "7 render start",
                f"dynamo-operator render: median {rs['median_s']} s (fastest {rs['min_s']} s, CPU "
                f"{rs['cpu_median_s']} s) over {rs['runs']} runs",
                TARGETS["render"],
                _ok(rs["median_s"] < 0.3),
            )
        )
    return out


def _admission_row(ad: dict) -> tuple[str, str, str, str]:
    """The operator's latency against the no-op webhook's in the same run (bench/noop.py)."""
    d, a, noop, ratio = ad["direct"], ad["apiserver"], ad.get("noop"), ad.get("ratios") or {}
    measured = (
        f"direct p50 {d['p50_ms']} / p99 {d['p99_ms']} ms; "
        f"apiserver p50 {a['p50_ms']} / p99 {a['p99_ms']} ms at {ad['rate']:.0f}/s"
    )
    if noop is None:
        return ("5 admission", measured, TARGETS["admission"], "-")
    measured += (
        f"; no-op direct p99 {noop['direct']['p99_ms']} ms ({ratio.get('direct')}x), apiserver p99 "
        f"{noop['apiserver']['p99_ms']} ms ({ratio.get('apiserver')}x); CPU/review "
        f"{ad.get('cpu_ms_per_review')} vs {noop.get('cpu_ms_per_review')} ms"
    )
    errors = d["errors"] + a["errors"]
    ok = errors == 0 and ratio.get("direct", 99) <= 1.5 and ratio.get("apiserver", 99) <= 1.2
    return ("5 admission", measured, TARGETS["admission"], _ok(ok))


def _writes_row(n: int, fl: dict, bu: dict) -> tuple[str, str, str, str]:
    """The burst's writes against the floor's: equal but for the Events, at most one a graph."""
    events = bu.get("events", 0)
    others = bu["writes"] - events
    measured = (
        f"{others} + {events} Events ({others / n:.1f} + {events / n:.1f} a graph); "
        f"floor {fl['writes']} ({fl['writes'] / n:.1f})"
    )
    return "2b writes", measured, TARGETS["writes"], _ok(others == fl["writes"] and events <= n)


def _restart_row(rs: dict) -> tuple[str, str, str, str]:
    measured = f"{rs['writes']} writes; ready {rs['ready_seconds']:.1f} s, idle {rs['idle_seconds']:.1f} s"
    before, after = rs.get("rss_before_mb"), rs.get("rss_after_mb")
    ok = rs["writes"] == 0
    if before and after:
        change = after / before - 1
        measured += f"; RSS {before:.0f} -> {after:.0f} MB ({change:+.1%})"
        ok = ok and change <= RESTART_RSS
    return "4 restart", measured, TARGETS["restart"], _ok(ok)


def _memory_row(n: int, mem: dict) -> tuple[str, str, str, str]:
    """RSS and CPU at each point, RSS a graph from 0 to N, and the target at N."""
    pts = mem["points"]
    shown = ", ".join(f"{k}: {v['rss_mb']:.0f} MB/{v['cpu_seconds']:.0f} cpu-s" for k, v in pts.items())
    at_n, at_0 = pts.get(str(n), {}).get("rss_mb"), pts.get("0", {}).get("rss_mb")
    if at_n is not None and at_0 is not None:
        shown += f"; {(at_n - at_0) * 1024 / n:.0f} KB a graph"
    shown += f"; idle growth {mem['idle_growth_mb']:+.1f} MB"
    verdict = "-" if at_n is None else _ok(at_n < rss_limit(n))
    return "6 memory/cpu", shown, TARGETS["memory"], verdict


def _ok(b: bool) -> str:
    return "PASS" if b else "MISS"


def table(r: dict) -> str:
    body = rows(r)
    head = ("row", "measured", "target", "")
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(4)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(head), sep, *(line(x) for x in body)])
