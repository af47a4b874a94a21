"""Proof that each "acts" row's named test runs its named code, not merely that both mention the field.

The static checks (``check``) accept a row when its function and its test name the field; read by hand, some
rows cited a function of another kind of object, or a test whose parameter happened to share the field's
name. This module holds every "acts" row to what the tests really did:

- **Python code, unit tests.** The unit tier runs under coverage.py with one context per test (pytest-cov's
  ``--cov-context=test``: the test's node id, in every thread it starts). Each unit test a row names must have
  run at least one line of the body of at least one Python function the row names. A row with Python code
  must name at least one unit test (tests of other tiers may be named beside it; they are held to the static
  check only: the operator they drive runs in another process).
- **Templates, helm-unittest.** A ``helm:`` test must set the value (in its ``set``, its suite's, or a values
  file either names) and render the named template: itself, or for a ``_*.tpl`` partial a rendered template
  that includes one of its ``define``s.
- **Kind.** Code in a module that belongs to one kind (the DGDR's, the DynamoModel's...) proves nothing about
  a field of another kind.
- **Status.** A row whose Python code is admission checks only is checked, not acted on: it is "refused" or
  "warned", never "acts". A "warned" row's tests are held as an "acts" row's: they must run the code that
  warns (or set the value and render the template that does).

``problems(data_file)`` reads the coverage data the unit tier wrote (``make unit``: ``DATA``).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import yaml

from . import index
from .registry import entries
from .rows import CHART_DIRS, REPO, SUBCHART_KEYS, Row, all_rows
from .status import Acts, Warned

DATA = REPO / ".cache" / "coverage" / "unit"
UNIT = "tests/unit/"
# Modules that hold one kind's code (render, controller, admission), by the kind's name as rows name it.
KIND_MODULES: dict[str, tuple[str, ...]] = {
    "DynamoGraphDeploymentRequest": (
        "render.dgdr",
        "controllers.dgdr",
        "webhooks.validation.dgdr",
        "api.dgdr_",
    ),
    "DynamoModel": ("render.model", "controllers.dynamomodel", "webhooks.validation.model"),
    "DynamoCheckpoint": ("render.checkpoint:", "controllers.checkpoint", "webhooks.validation.checkpoint"),
    "DynamoGraphDeploymentScalingAdapter": ("controllers.dgdsa", "webhooks.validation.dgdsa"),
}
# A kind whose controller creates objects of another kind: its fields may act through that kind's code
# (a graph's component with a scaling adapter gets an adapter; with a checkpoint, a DynamoCheckpoint).
CREATES: dict[str, frozenset[str]] = {
    "DynamoGraphDeployment": frozenset({"DynamoGraphDeploymentScalingAdapter", "DynamoCheckpoint"}),
    "DynamoComponentDeployment": frozenset({"DynamoGraphDeploymentScalingAdapter", "DynamoCheckpoint"}),
}
CHECK_ONLY = ("webhooks.validation",)


class Runs:
    """Which tests ran which lines, from a coverage data file with per-test contexts."""

    def __init__(self, data_file: Path):
        import coverage

        self.data = coverage.CoverageData(str(data_file))
        self.data.read()
        self.files = set(self.data.measured_files())

    @functools.cache  # noqa: B019 - one Runs per check run
    def _by_line(self, path: str) -> dict[int, list[str]]:
        return self.data.contexts_by_lineno(path) if path in self.files else {}

    def tests_running(self, ref: str) -> set[str] | None:
        """The node ids (parameters dropped) of the tests that ran a line of ``ref``'s body; None when the
        reference does not resolve."""
        found, _ = index.resolve_code(ref)
        if found is None:
            return None
        path, func = found
        by_line = self._by_line(str(Path(path).resolve()))
        ran: set[str] = set()
        for line in body_lines(func):
            ran.update(test_id(c) for c in by_line.get(line, ()) if c)
        return ran


def test_id(context: str) -> str:
    """``tests/unit/test_x.py::test_y[param]|run`` -> ``tests/unit/test_x.py::test_y``."""
    return re.sub(r"\[.*$", "", context.split("|", 1)[0])


def body_lines(func: ast.AST) -> set[int]:
    """The lines of a function's body past its docstring (its ``def`` line runs at import)."""
    body = list(func.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return set(range(body[0].lineno, func.end_lineno + 1)) if body else set()


def kinds_of(row: Row) -> set[str]:
    """The API kinds whose objects hold the field (empty for the configuration and the charts)."""
    if row.section != "api":
        return set()
    return {where.split(" ", 1)[0] for where in row.appears}


def named_unit_tests() -> frozenset[str]:
    """The unit tests (node ids, parameters dropped) the "acts" and "warned" rows name: the only tests
    whose coverage the proof reads (``make unit`` measures these alone, see ``tests/unit/conftest.py``)."""
    return frozenset(
        test
        for status in entries().values()
        if isinstance(status, Acts | Warned)
        for test in status.tests
        if test.startswith(UNIT)
    )


def problems(data_file: Path = DATA) -> list[str]:
    runs = Runs(data_file)
    rows = all_rows()
    found: list[str] = []
    for key, status in sorted(entries().items()):
        if isinstance(status, Acts | Warned) and key in rows:
            found += [f"{key}: {p}" for p in row_problems(rows[key], status, runs)]
    return found


def row_problems(row: Row, status: Acts | Warned, runs: Runs) -> Iterator[str]:
    python = [c for c in status.code if not c.startswith("tpl:")]
    templates = [c for c in status.code if c.startswith("tpl:")]
    yield from kind_problems(row, python)
    only_checks = python and all(c.startswith(CHECK_ONLY) for c in python)
    if row.section == "api" and isinstance(status, Acts) and only_checks:
        yield "only admission checks read it: the row is refused or warned, not acts"
    units = [t for t in status.tests if t.startswith(UNIT)]
    if python and status.tests and not units:
        yield f"names no unit test that runs {', '.join(python)} (tests of other tiers are not proof)"
    for test in units:
        if python and not any(test in (runs.tests_running(c) or ()) for c in python):
            yield f"{test} never ran {' or '.join(python)}"
    for test in (t for t in status.tests if t.startswith("helm:")):
        yield from helm_problems(row, test, templates)


def kind_problems(row: Row, python: list[str]) -> Iterator[str]:
    kinds = kinds_of(row)
    for ref in python:
        owner = next((k for k, mods in KIND_MODULES.items() if ref.startswith(mods)), None)
        reach = kinds | {made for kind in kinds for made in CREATES.get(kind, ())}
        if owner is not None and kinds and owner not in reach:
            yield f"{ref} is {owner}'s code; the field belongs to {', '.join(sorted(kinds))}"


# ---- helm-unittest ------------------------------------------------------------------------------------


def helm_problems(row: Row, ref: str, templates: list[str]) -> Iterator[str]:
    file, _, name = ref.removeprefix("helm:").partition("::")
    chart, _, rest = file.partition("/")
    base = CHART_DIRS["platform"] if chart == "platform" else CHART_DIRS.get(chart)
    if base is None or not (base / rest).is_file():
        return  # the static check reports it
    suite = yaml.safe_load((base / rest).read_text())
    test = next((t for t in suite.get("tests") or [] if t.get("it") == name), None)
    if test is None:
        return
    dotted = _row_value_path(row, chart)
    if dotted and not _sets(suite, test, base / rest, dotted):
        yield f"{ref} never sets {dotted}"
    rendered = _rendered(suite, test)
    wanted = [t for t in templates if t.startswith(f"tpl:{chart}/")]
    if wanted and rendered is not None and not any(_renders(base, rendered, t) for t in wanted):
        yield f"{ref} renders {', '.join(sorted(rendered))}, none of {', '.join(wanted)}"


def _row_value_path(row: Row, chart: str) -> str:
    """The value's dotted path in the chart the test belongs to (an umbrella row tested in its subchart
    drops the subchart's key; a subchart row tested in the umbrella gains it)."""
    if not row.key.startswith("chart:"):
        return ""
    _, row_chart, dotted = row.key.split(":", 2)
    if row_chart == "platform" and chart != "platform":
        head, _, tail = dotted.partition(".")
        return tail if head in (chart, "dynamo-operator") else dotted
    if row_chart != "platform" and chart == "platform":
        key = next((k for k, sub in SUBCHART_KEYS.items() if sub == row_chart), row_chart)
        return f"{key}.{dotted}"
    return dotted


def _flatten(tree: object, prefix: str = "") -> set[str]:
    out = {prefix} if prefix else set()
    if isinstance(tree, dict):
        for k, v in tree.items():
            for part in _flatten(v, f"{prefix}.{k}" if prefix else str(k)):
                out.add(part)
    return out


def _set_paths(block: dict, suite_file: Path) -> set[str]:
    paths: set[str] = set()
    for key, value in (block.get("set") or {}).items():
        paths |= _flatten(value, key)
    for values in block.get("values") or []:
        path = (suite_file.parent / values).resolve()
        if path.is_file():
            paths |= _flatten(yaml.safe_load(path.read_text()) or {})
    return paths


def _sets(suite: dict, test: dict, suite_file: Path, dotted: str) -> bool:
    paths = _set_paths(suite, suite_file) | _set_paths(test, suite_file)
    return any(p == dotted or p.startswith(dotted + ".") or dotted.startswith(p + ".") for p in paths)


def _rendered(suite: dict, test: dict) -> set[str] | None:
    """The templates the test renders (None: every template of the chart)."""
    for block in (test, suite):
        if block.get("template"):
            return {block["template"]}
        if block.get("templates"):
            return set(block["templates"])
    return None


@functools.cache
def _defines(path: Path) -> frozenset[str]:
    return frozenset(re.findall(r'define\s+"([^"]+)"', path.read_text()))


def _includes(text: str) -> set[str]:
    return set(re.findall(r'(?:include|template)\s+"([^"]+)"', text))


def _renders(base: Path, rendered: set[str], tpl_ref: str) -> bool:
    """A rendered template is the named one, or reaches a ``define`` of the named partial through includes."""
    rel = tpl_ref.removeprefix("tpl:").partition("/")[2]
    if rel in rendered or rel == "Chart.yaml":  # a dependency's condition applies to every render
        return True
    target = base / rel
    if not target.name.startswith("_") or not target.is_file():
        return False
    wanted = _defines(target)
    partials = {p: _includes(p.read_text()) for p in (base / "templates").rglob("_*.tpl")}
    names_reaching = set(wanted)
    changed = True
    while changed:  # a define that includes a wanted one reaches it too
        changed = False
        for partial, used in partials.items():
            for define in _defines(partial):
                if define not in names_reaching and used & names_reaching:
                    names_reaching.add(define)
                    changed = True
    for name in rendered:
        path = base / name
        if path.is_file() and _includes(path.read_text()) & names_reaching:
            return True
    return False
