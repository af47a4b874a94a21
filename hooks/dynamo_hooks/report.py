"""Preflight reports as text for people and as JSON for CI.

The JSON layout is versioned (`apiVersion`) and ordered (registry order, then finding order) so a CI job can
diff two runs or pick results by `id`; a change to the layout bumps the version.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from .checks import CheckContext, Result, Severity, Status

REPORT_API_VERSION = "preflight.dynamo.nvidia.com/v1"
EXIT_OK = 0
EXIT_BLOCKED = 1
EXIT_USAGE = 2


def summarize(results: list[Result]) -> dict[str, Any]:
    failed = [r for r in results if r.status is Status.FAIL]
    return {
        "blocked": any(r.blocking for r in results),
        "errors": sum(1 for r in failed if r.severity is Severity.ERROR),
        "warnings": sum(1 for r in failed if r.severity is Severity.WARNING),
        "infos": sum(1 for r in failed if r.severity is Severity.INFO),
        "passed": sum(1 for r in results if r.status is Status.PASS),
        "skipped": sum(1 for r in results if r.status is Status.SKIP),
    }


def exit_code(results: list[Result]) -> int:
    return EXIT_BLOCKED if any(r.blocking for r in results) else EXIT_OK


def to_json(ctx: CheckContext, results: list[Result]) -> str:
    s = ctx.settings
    version = (ctx.cache.get("version") or {}).get("gitVersion")
    doc = {
        "apiVersion": REPORT_API_VERSION,
        "kind": "PreflightReport",
        "release": {
            "name": s.release_name,
            "namespace": s.release_namespace,
            "operatorMode": s.mode.value,
            "targetNamespace": s.target_namespace or None,
        },
        "chart": {
            "path": str(ctx.chart.path) if ctx.chart.path else None,
            "version": ctx.chart.version,
            "kubeVersion": ctx.chart.kube_version,
        },
        "cluster": {
            "server": ctx.cluster.server_url() if ctx.cluster else None,
            "kubernetesVersion": version,
        },
        "summary": summarize(results),
        "results": [r.to_dict() for r in results],
    }
    return json.dumps(doc, indent=2, sort_keys=False)


_MARK = {
    (Status.PASS, None): "PASS",
    (Status.SKIP, None): "SKIP",
    (Status.FAIL, Severity.ERROR): "FAIL",
    (Status.FAIL, Severity.WARNING): "WARN",
    (Status.FAIL, Severity.INFO): "INFO",
}


def _mark(result: Result) -> str:
    if result.status is Status.FAIL:
        return _MARK[(Status.FAIL, result.severity)]
    return _MARK[(result.status, None)]


def to_text(ctx: CheckContext, results: list[Result], *, verbose: bool = False, width: int = 110) -> str:
    s = ctx.settings
    scope = f"namespace-restricted to {s.target_namespace}" if s.restricted else "cluster-wide"
    chart = (
        f"{ctx.chart.name} {ctx.chart.version}" if ctx.chart.version else "chart defaults (no chart found)"
    )
    lines = [
        f"Dynamo preflight: release {s.release_name} in namespace {s.release_namespace} ({scope}), {chart}",
        "",
    ]
    id_width = max((len(r.id) for r in results), default=0)
    for r in results:
        if r.status is Status.SKIP and not verbose:
            continue
        head = f"  {_mark(r):4}  {r.id:<{id_width}}  "
        body = textwrap.wrap(r.found, width=max(40, width - len(head)), break_on_hyphens=False) or [""]
        lines.append(head + body[0])
        lines += [" " * len(head) + b for b in body[1:]]
        if r.fix and r.status is Status.FAIL:
            fix = textwrap.wrap("fix: " + r.fix, width=max(40, width - len(head)), break_on_hyphens=False)
            lines += [" " * len(head) + f for f in fix]
    summary = summarize(results)
    verdict = "BLOCKED" if summary["blocked"] else "OK"
    lines += [
        "",
        f"Result: {verdict}: {summary['errors']} error(s), {summary['warnings']} warning(s), "
        f"{summary['passed']} passed, {summary['skipped']} skipped"
        + ("" if verbose or not summary["skipped"] else " (-v shows skipped checks)"),
    ]
    return "\n".join(lines)
