"""Resolve the registry against the rows: every row covered, every reference real, every refusal real.

``problems()`` returns one line per problem (empty when the table is sound); the unit test asserts it is
empty and ``python -m dynamo_coverage --check`` prints it.
"""

from __future__ import annotations

import copy
import functools
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from typing import Any

from . import index
from .registry import entries, pending
from .rows import CHART_DIRS, REPO, Row, all_rows, subchart_target, type_description
from .samples import base_object
from .status import Acts, Converted, Pending, Refused, Rendered, Status, StorageOnly, Unresolved, Warned

KNOWN_OWNERS: tuple[str, ...] = ()  # branches in flight: none (p2ingress, p2ckpt, harden2 have merged)


def covering_parents(rows: dict[str, Row], table: dict[str, Status]) -> dict[str, str]:
    """Row key -> the struct field whose entry covers it (refused, stored only or pending as a whole)."""
    out: dict[str, str] = {}
    for key, status in table.items():
        row = rows.get(key)
        if row is not None and row.subtree and (not isinstance(status, Acts) or status.whole):
            for sub in row.subtree:
                out.setdefault(sub, key)
    return out


def coverage(rows: dict[str, Row]) -> dict[str, tuple[str, Any]]:
    """Row key -> (how it is covered, its entry): ``entry``, ``pending``, ``parent``, ``subchart``,
    ``struct`` (a field covered by its type's rows) or ``missing``."""
    table, wait = entries(), pending()
    parents = covering_parents(rows, {**table, **wait})
    out: dict[str, tuple[str, Any]] = {}
    for key, row in rows.items():
        if key in table:
            out[key] = ("entry", table[key])
        elif key in wait:
            out[key] = ("pending", wait[key])
        elif key in parents:
            out[key] = ("parent", parents[key])
        elif subchart_target(row):
            out[key] = ("subchart", subchart_target(row))
        elif row.subtree:
            out[key] = ("struct", None)
        else:
            out[key] = ("missing", None)
    return out


# Where a refusal happens, and so what running its sample needs: admission and configuration checks are our
# own code (the unit tier runs them); an install refusal needs the pinned helm, so only the `tools` tier
# (tests/unit/test_api_coverage_helm.py) runs those, after the tools are built.
EVERY_CHECK = frozenset({"admission", "config", "install"})
NO_TOOLS = frozenset({"admission", "config"})


def problems(run_refusals: bool | frozenset[str] = True) -> list[str]:
    """Every problem of the registry; ``run_refusals`` is True (run every refusal's sample), False (none), or
    the set of places whose refusals to run."""
    run = EVERY_CHECK if run_refusals is True else frozenset() if run_refusals is False else run_refusals
    rows = all_rows()
    table, wait = entries(), pending()
    found: list[str] = []
    for key, (how, what) in coverage(rows).items():
        if how == "missing":
            found.append(f"{key}: no entry (acts, refused, storage-only, or pending on its owner)")
        elif how == "subchart" and what not in rows:
            found.append(f"{key}: sets {what}, which the subchart does not have")
    for key in sorted(set(table) | set(wait)):
        if key not in rows:
            found.append(f"{key}: entry for a field or value that does not exist (remove it)")
    for key, status in sorted(table.items()):
        if key in rows:
            found += [f"{key}: {p}" for p in _entry_problems(rows[key], status, rows, run)]
    for key, status in sorted(wait.items()):
        if key in table:
            found.append(f"{key}: has a real entry now; drop it from PENDING")
        if status.owner not in KNOWN_OWNERS:
            found.append(f"{key}: PENDING owner {status.owner!r} is not a helper in flight")
    return found


def _entry_problems(
    row: Row, status: Status, rows: dict[str, Row], run: bool | frozenset[str]
) -> Iterator[str]:
    if isinstance(status, Acts):
        yield from _acts_problems(row, status, rows)
    elif isinstance(status, Warned):
        yield from _warned_problems(row, status, run)
    elif isinstance(status, Refused):
        yield from _code_problems(row, status.code)
        if run is True or (run and (status.where in run or status.where not in EVERY_CHECK)):
            yield from refusal_problems(row, status)
    elif isinstance(status, StorageOnly):
        if status.quote not in " ".join(row.description.split()) and status.quote not in type_description(
            row
        ):
            yield (
                f"storage-only quote {status.quote!r} is in neither the field's description nor its type's "
                "(the seed's text)"
            )
    elif isinstance(status, Converted):
        from . import converted

        yield from converted.problems(row, status.context)
        if status.via not in rows:
            yield f"via {status.via}: no such row"
        elif not _acts_or_pending(status.via, rows) and not isinstance(
            entries().get(status.via), StorageOnly
        ):
            yield f"via {status.via}: that row neither acts nor is stored only by the seed's word"
    elif isinstance(status, Rendered):
        from . import converted

        func, err = index.resolve_code(status.code)
        if func is None:
            yield err
        yield from converted.rendered_problems(row, status.context)
    elif isinstance(status, Unresolved):
        yield from ()
    elif isinstance(status, Pending):
        yield "is both pending and listed as a real entry"


def _warned_problems(row: Row, status: Warned, run: bool | frozenset[str]) -> Iterator[str]:
    if not status.code or not status.tests:
        yield "warned needs the code that warns and a test that shows the warning"
    yield from _code_problems(row, status.code)
    for ref in status.tests:
        yield from _test_problems(ref, row)
    if status.sample and (run is True or (run and "admission" in run)):
        yield from admission_warning_problems(status)


def _acts_or_pending(key: str, rows: dict[str, Row]) -> bool:
    """A ``Converted`` row's target acts (or its owner's branch is about to make it act)."""
    table = entries()
    status = table.get(key) or pending().get(key)
    return isinstance(status, Acts | Converted | Rendered | Pending) or key in covering_parents(rows, table)


def _acts_problems(row: Row, status: Acts, rows: dict[str, Row]) -> Iterator[str]:
    if not status.code:
        yield "acts needs the code that reads it (a test is optional: without one the table says untested)"
    yield from _code_problems(row, status.code)
    for ref in status.tests:
        yield from _test_problems(ref, row)
    if status.via is not None and status.via not in rows:
        yield f"via {status.via}: no such row"


def _code_problems(row: Row, refs: tuple[str, ...]) -> Iterator[str]:
    for ref in refs:
        if ref.startswith("tpl:"):
            yield from _template_problems(row, ref)
            continue
        func, err = index.resolve_code(ref)
        if func is None:
            yield err
        elif not index.mentions(func, row.json, row.python):
            yield f"{ref} does not mention {row.json!r}"
        elif not index.in_context(func, context(row), siblings(row), row.json):
            yield (
                f"{ref} mentions {row.json!r} but none of the names it is reached through "
                f"({', '.join(sorted(context(row))[:4])}) nor another field of its type"
            )


def _template_path(ref: str):
    rel = ref.removeprefix("tpl:")
    chart, _, rest = rel.partition("/")
    base = CHART_DIRS["platform"] if chart == "platform" else CHART_DIRS.get(chart)
    return (base / rest) if base is not None else None


def _template_problems(row: Row, ref: str) -> Iterator[str]:
    path = _template_path(ref)
    if path is None or not path.is_file():
        yield f"{ref}: no such template"
    elif not _template_reads(row, path):
        yield f"{ref} does not read .{row.json}"
    elif dead_env(row, path):
        yield f"{ref} only passes it as env {dead_env(row, path)}, which no operator code reads"


_ENV_VALUE = re.compile(r"- name: (\w+)\s*\n\s*value: \{\{-? \$?\.Values\.([\w.]+)")


@functools.cache
def _operator_source() -> str:
    return "\n".join(p.read_text() for p in (REPO / "operator").rglob("*.py"))


def dead_env(row: Row, path) -> str | None:
    """The env var a template writes the value into when no operator code reads that variable."""
    dotted = row.key.split(":", 2)[2] if row.key.startswith("chart:") else ""
    if "components/operator/" not in path.as_posix():  # etcd, NATS... read their own env
        return None
    for name, value_path in _ENV_VALUE.findall(path.read_text()):
        if value_path == dotted and f'"{name}"' not in _operator_source():
            return name
    return None


def _template_reads(row: Row, path) -> bool:
    """The template reads the value: ``.name``; a map above it passed whole (``toYaml .Values.a.b``); or, in
    Chart.yaml, a table the umbrella imports (``import-values: child: exports.platform``)."""
    text = path.read_text()
    if path.name == "Chart.yaml":
        return bool(re.search(rf"\b{re.escape(row.json)}\b", text))
    if re.search(rf"\.{re.escape(row.json)}\b", text):
        return True
    parts = row.key.split(":", 2)[2].split(".") if row.key.startswith("chart:") else []
    for i in range(len(parts) - 1, 0, -1):  # ``toYaml .Values.a.resources |`` or ``toYaml $h.resources |``
        if re.search(rf"toYaml \$?[\w.$]*\.{re.escape(parts[i - 1])}\s*\|", text):
            return True
    return False


# names too common to tell one type's field from another's
GENERIC = frozenset(
    {"name", "namespace", "type", "enabled", "spec", "status", "items", "value", "key", "kind"}
)


def context(row: Row) -> set[str]:
    """The JSON names of the fields the row's type is reached through (``services``, ``restart``...)."""
    out: set[str] = set()
    for where in row.appears:
        parts = where.split(" ", 1)[-1].split(".")
        out.update(p for p in parts[1:] if p not in ("spec", "status"))
    return out - GENERIC


@functools.cache
def _siblings(type_key: str) -> frozenset[str]:
    same = [r for r in all_rows().values() if r.type_key == type_key]
    return frozenset([r.json for r in same] + [r.python for r in same if r.python])


def siblings(row: Row) -> set[str]:
    """The other fields of the row's type (a function handed the struct reads several of them)."""
    return set(_siblings(row.type_key)) - {row.json, row.python} - GENERIC if row.type_key else set()


def _test_problems(ref: str, row: Row | None = None) -> Iterator[str]:
    if ref.startswith("helm:"):
        file, _, name = ref.removeprefix("helm:").partition("::")
        chart, _, rest = file.partition("/")
        base = CHART_DIRS["platform"] if chart == "platform" else CHART_DIRS.get(chart)
        path = base / rest if base is not None else None
        if path is None or not path.is_file():
            yield f"{ref}: no such helm-unittest file"
        elif not re.search(rf"^  - it: [\"']?{re.escape(name)}[\"']?\s*$", path.read_text(), re.M):
            yield f"{ref}: no test named {name!r}"
        return
    func, err = index.resolve_test(ref)
    if func is None:
        yield err
    elif row is not None and row.type_key and not index.mentions_test(func, row.json, row.python):
        yield f"{ref} never names {row.json!r}: not a test of this field"


# ------------------------------------------------------------------------------------------- refusals


def refusal_problems(row: Row, status: Refused) -> Iterator[str]:
    """Run the refusal's sample through the real check and require its message."""
    if status.where == "admission":
        yield from _admission_refusal(status)
    elif status.where == "config":
        yield from _config_refusal(status)
    elif status.where == "install":
        yield from _install_refusal(status)
    else:
        yield f"refused where {status.where!r}? (admission, config or install)"


def set_path(obj: dict, dotted: str, value: Any) -> None:
    """Set ``a.b[0].c``-style paths (list indexes in brackets; a missing dict is created)."""
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", dotted)
    node: Any = obj
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        key: Any = int(part[1:-1]) if part.startswith("[") else part
        if last:
            node[key] = copy.deepcopy(value)
        else:
            if isinstance(key, str) and key not in node:
                node[key] = {}
            node = node[key]


def _admission_refusal(status: Refused) -> Iterator[str]:
    from dynamo_operator.webhooks.validation import Context, validate

    base = base_object(status.kind, status.version)
    ctx = Context(operation="CREATE")
    before = validate(status.kind, status.version, base, None, ctx)
    if before.errors:
        yield f"the minimal {status.kind} {status.version} is refused already: {before.errors[0]}"
        return
    obj = copy.deepcopy(base)
    for path, value in status.sample.items():
        set_path(obj, path, value)
    result = validate(status.kind, status.version, obj, None, ctx)
    text = " ".join(str(e) for e in result.errors)
    if status.message not in text:
        yield f"admission did not refuse the sample with {status.message!r} (got: {text or 'allowed'})"


def admission_warning_problems(status: Warned) -> Iterator[str]:
    """The sample is admitted with the warning, and ``render.notices`` (which ``render`` prints and the
    controllers record as Events) says the same."""
    from dynamo_operator.render import notices
    from dynamo_operator.webhooks.validation import Context, validate

    obj = base_object(status.kind, status.version)
    for path, value in status.sample.items():
        set_path(obj, path, value)
    result = validate(status.kind, status.version, obj, None, Context(operation="CREATE"))
    if result.errors:
        yield f"admission refused the warned sample: {result.errors[0]}"
        return
    said = [w for w in result.warnings if status.message in w]
    if not said:
        yield f"admission gave no warning with {status.message!r} (got: {result.warnings or 'none'})"
    elif not [w for w in notices.warnings(obj) if status.message in w]:
        yield f"render.notices.warnings lacks {status.message!r}: render and the Event would not say it"


def _config_refusal(status: Refused) -> Iterator[str]:
    from dynamo_operator.api.config import ConfigError, parse_operator_config

    try:
        parse_operator_config(copy.deepcopy(status.sample))
    except ConfigError as exc:
        if status.message not in str(exc):
            yield f"the configuration was refused, but not with {status.message!r}: {exc}"
        return
    yield f"the configuration sample {status.sample} was accepted"


def helm_template(*sets: str) -> subprocess.CompletedProcess[str]:
    helm = shutil.which("helm") or str(REPO / ".tools" / "bin" / "helm")
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HELM_CONFIG_HOME": home, "HELM_CACHE_HOME": home}
        args = [helm, "template", "dp", str(CHART_DIRS["platform"]), "--namespace", "dynamo-system"]
        for s in sets:
            args += ["--set", s]
        return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env, check=False)


def _install_refusal(status: Refused) -> Iterator[str]:
    proc = helm_template(*(f"{k}={v}" for k, v in status.sample.items()))
    if proc.returncode == 0:
        yield f"helm template accepted {status.sample}"
    elif status.message not in proc.stderr:
        tail = proc.stderr.strip()[-300:]
        yield f"helm template refused {status.sample} without {status.message!r}: {tail}"
