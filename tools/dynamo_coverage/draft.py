"""Suggest registry entries for rows that have none (``python -m dynamo_coverage --draft``).

A helper for whoever adds fields, never the source of truth: it looks in the function index for code that
mentions the field and a test that mentions it too, and prints entries to review and paste into
``registry``. Rows it finds nothing for are printed as ``# TODO`` lines: those are the fields that do
nothing yet.
"""

from __future__ import annotations

import re

from . import index
from .rows import CHART_DIRS, REPO, Row

# where a consumer is looked for, most specific layer first; validation is the "validated" column
_CODE_ORDER = (
    "render.",
    "controllers.",
    "webhooks.defaulting",
    "webhooks.",
    "settings",
    "runtime.",
    "cli",
    "certsecret",
    "dynamo_hooks",
    "dynamo_plugin",
)
_NEVER = ("api.", "webhooks.validation", "render.validate")
CONVERSIONS = ("api.conversion", "api.dgdr_conversion")  # the api modules that act: v1alpha1 <-> v1beta1


def _layer(ref: str) -> int:
    mod = ref.split(":")[0]
    for i, prefix in enumerate(_CODE_ORDER):
        if mod.startswith(prefix):
            return i
    return len(_CODE_ORDER)


def context(row: Row) -> set[str]:
    """The JSON names of the fields the row's type is reached through (``identity`` for its ``model``)."""
    out = set()
    for where in row.appears:
        parts = where.split(" ", 1)[-1].split(".")
        out.update(p for p in parts[1:] if p not in ("spec", "status"))
    return out


def code_candidates(row: Row) -> list[str]:
    alpha = row.type_key.startswith("v1alpha1.")
    ctx = context(row)
    found = []
    for ref, toks in index.code_index().items():
        if row.json not in toks and row.python not in toks:
            continue
        mod = ref.split(":")[0]
        score = -len(ctx & toks)
        if alpha and mod in CONVERSIONS:
            found.append((-99, score, len(toks), ref))
        elif alpha and row.section == "api" and _converted(row):
            continue  # a converted kind's v1alpha1 field acts through its conversion
        elif mod in CONVERSIONS or not mod.startswith(_NEVER):
            found.append((score, _layer(ref), len(toks), ref))
    return [r for *_, r in sorted(found)]


def _converted(row: Row) -> bool:
    from dynamo_operator.api.conversion import CONVERTIBLE_KINDS

    return any(w.split(" ")[0] in CONVERTIBLE_KINDS for w in row.appears)


def via_guess(row: Row) -> str | None:
    """The v1beta1 row a v1alpha1 field converts to, when a v1beta1 type of the same name has the field."""
    from .rows import all_rows

    if not row.type_key.startswith("v1alpha1."):
        return None
    beta = "v1beta1." + row.type_key.split(".", 1)[1] + "." + row.json
    return beta if beta in all_rows() else None


def test_candidates(row: Row, code: str | None) -> list[str]:
    stem = code.split(":")[0].split(".")[-1] if code else ""
    ctx = context(row) | ({code.split(":")[1].split(".")[-1]} if code else set())
    found = []
    for ref, toks in index.test_index().items():
        if row.json not in toks:
            continue
        unit = ref.startswith("tests/unit/")
        related = bool(stem) and stem in ref.split("::")[0]
        if code and code.startswith(CONVERSIONS):
            related = "conversion" in ref
        found.append((-len(ctx & toks), not related, not unit, len(toks), ref))
    return [r for *_, r in sorted(found)]


def api_entry(row: Row) -> str:
    codes = code_candidates(row)
    code = codes[0] if codes else None
    tests = test_candidates(row, code)
    if not code or not tests:
        return f"        # TODO {row.json!r}: code={code} test={tests[:1]}"
    via = via_guess(row) if code.startswith(CONVERSIONS) else None
    extra = f', via="{via}"' if via else ""
    return f'        "{row.json}": acts("{code}", "{tests[0]}"{extra}),'


def chart_templates(chart: str) -> list[tuple[str, str]]:
    d = CHART_DIRS[chart]
    prefix = "platform" if chart == "platform" else chart
    return [
        (f"tpl:{prefix}/templates/{p.name}", p.read_text())
        for p in sorted((d / "templates").glob("*"))
        if p.is_file()
    ]


def helm_tests(chart: str) -> list[tuple[str, str]]:
    """(``helm:<chart>/tests/<file>::<it>``, the test's text) of a chart's helm-unittest suites."""
    d = CHART_DIRS[chart]
    prefix = "platform" if chart == "platform" else chart
    out = []
    for p in sorted((d / "tests").glob("*.yaml")):
        text = p.read_text()
        parts = re.split(r"^  - it: ", text, flags=re.M)
        for part in parts[1:]:
            name = part.splitlines()[0].strip().strip("\"'")
            out.append((f"helm:{prefix}/tests/{p.name}::{name}", part))
    return out


def chart_entry(row: Row) -> str:
    chart, path = row.key.split(":")[1], row.key.split(":", 2)[2]
    leaf = path.split(".")[-1]
    parent = path.split(".")[-2] if "." in path else ""
    pattern = re.compile(rf"\.{re.escape(leaf)}\b")
    codes = [ref for ref, text in chart_templates(chart) if pattern.search(text)]
    tests = [ref for ref, text in helm_tests(chart) if leaf in text]
    tests.sort(key=lambda t: parent not in dict(helm_tests(chart))[t])
    if not codes or not tests:
        return f'    # TODO "{path}": code={codes[:1]} test={tests[:1]}'
    return f'    "{path}": acts("{codes[0]}", "{tests[0]}"),'


_ = REPO
