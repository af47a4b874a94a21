"""The rows, their targets and pass/miss, from one run's results."""

from __future__ import annotations

TARGETS = {
    "burst": "<= 1.3x floor",
    "idle": "0 writes/min",
    "restart": "0 writes",
    "admission": "p99 <= 1.5x no-op direct, <= 1.2x via apiserver",
    "memory": "RSS < 150 MB at N=500",
    "render": "< 0.3 s",
}


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
        out.append(
            (
                "4 restart",
                f"{rs['writes']} writes; ready {rs['ready_seconds']:.1f} s, idle {rs['idle_seconds']:.1f} s",
                TARGETS["restart"],
                _ok(rs["writes"] == 0),
            )
        )
    if (ad := r.get("admission")) is not None:
        out.append(_admission_row(ad))
    if (mem := r.get("memory")) is not None:
        pts = ", ".join(
            f"{k}: {v['rss_mb']:.0f} MB/{v['cpu_seconds']:.0f} cpu-s" for k, v in mem["points"].items()
        )
        at_500 = mem["points"].get("500", {}).get("rss_mb")
        verdict = "-" if at_500 is None else _ok(at_500 < 150)
        out.append(
            (
                "6 memory/cpu",
                f"{pts}; idle growth {mem['idle_growth_mb']:+.1f} MB",
                TARGETS["memory"],
                verdict,
            )
        )
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


def _ok(b: bool) -> str:
    return "PASS" if b else "MISS"


def table(r: dict) -> str:
    body = rows(r)
    head = ("row", "measured", "target", "")
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(4)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(head), sep, *(line(x) for x in body)])
