"""The test suite's own conventions, checked mechanically so that a test landing later from any branch is
held to them (the reading of every file's syntax tree: no tools, no cluster, well under a second).

* **No sleep as a wait.** ``time.sleep`` appears only inside ``support.poll`` (the bounded poll on a
  condition). Where a sleep is not a wait (a load generator's pacing, a stand-in server's simulated latency,
  a retry's backoff) the line says so with a ``# not a wait: <why>`` comment, for a reviewer to judge.
* **One poll helper.** No function named like a poll (``wait_for``, ``wait_until``, ``poll``,
  ``eventually``, ``retry_until``) is defined outside ``support.poll``, or imported from anywhere else.
* **Imports by package, never by path.** No ``sys.path`` edit, no loading a file by its path
  (``importlib.util.spec_from_file_location``, ``SourceFileLoader``, ``runpy.run_path``), no import of a
  test module or a ``conftest``: helpers live in ``tests/support`` (``support.<module>``).
* **One graph builder.** A function outside ``support.graphs`` that writes a DynamoGraphDeployment as a
  dict literal (``"kind": "DynamoGraphDeployment"``) is a second builder: use ``support.graphs.dgd`` and
  ``component``. (A test function's own literal, or a module-level constant, is data, not a builder.)
* **The tiers hold.** A test file that runs ``helm`` (``shutil.which("helm")``, ``support.chart``) carries
  ``pytest.mark.tools``: the unit tier runs with no tools.
* **One operator builder.** ``dynamo_operator.controllers.setup`` is called only by ``support.operator``
  (``Operator``): a test wanting the controllers in-process builds an ``Operator``.

Each rule names the file and line of every breach and the fix; ``ALLOWED`` lists the few deliberate
exceptions, each with its reason, and a test fails when one of them is no longer needed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
POLL = "support/poll.py"
GRAPHS = "support/graphs.py"
OPERATOR = "support/operator.py"
NOT_A_WAIT = "# not a wait:"
POLL_NAMES = re.compile(r"^_?(wait_for|wait_until|wait_until_true|poll|poll_until|eventually|retry_until)$")
PATH_LOADERS = {"spec_from_file_location", "SourceFileLoader", "run_path", "load_source"}
DGD_KIND = "DynamoGraphDeployment"

# (file, rule) -> why the rule does not apply there
ALLOWED: dict[tuple[str, str], str] = {
    ("unit/test_controllers_pure.py", "operator"): "tests controllers.setup itself (the wiring, no cluster)",
    ("support/fuzz.py", "graph"): "Hypothesis strategies draw every field of a DGD, valid and invalid",
    ("unit/test_render_dgdr_output.py", "graph"): "an overrides.dgd document: a partial DGD, no metadata",
    ("support/imagebuild.py", "path"): "image/build.py is a script, not a package",
    ("unit/test_dev_lock.py", "path"): "image/lock.py is a script, not a package",
    ("unit/test_bench_reference.py", "path"): "bench/ is a package at the repository root, off the test path",
}


@dataclass(frozen=True)
class Breach:
    file: str
    line: int
    rule: str
    what: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: [{self.rule}] {self.what}"


def breaches(rel: str, source: str) -> list[Breach]:
    """Every breach of the conventions in one file (``rel``: its path under ``tests/``)."""
    tree = ast.parse(source, filename=rel)
    lines = source.splitlines()
    found: list[Breach] = []
    found += _sleeps(rel, tree, lines)
    found += _poll_helpers(rel, tree)
    found += _path_imports(rel, tree)
    found += _graph_builders(rel, tree)
    found += _operator_builders(rel, tree)
    found += _untiered_helm(rel, tree)
    return [b for b in found if (b.file, b.rule) not in ALLOWED]


def _call_name(node: ast.Call) -> str:
    """``time.sleep`` -> "sleep", ``sleep`` -> "sleep", ``a.b.c(...)`` -> "c"."""
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _sleeps(rel: str, tree: ast.AST, lines: list[str]) -> list[Breach]:
    if rel == POLL:
        return []
    imported_sleep = any(
        isinstance(n, ast.ImportFrom) and n.module == "time" and any(a.name == "sleep" for a in n.names)
        for n in ast.walk(tree)
    )
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        is_sleep = (
            isinstance(func, ast.Attribute)
            and func.attr == "sleep"
            and getattr(func.value, "id", "") == "time"
        ) or (imported_sleep and isinstance(func, ast.Name) and func.id == "sleep")
        if not is_sleep:
            continue
        span = lines[node.lineno - 2 : node.end_lineno]  # the call's lines and the one above it
        if not any(NOT_A_WAIT in line for line in span):
            found.append(
                Breach(
                    rel,
                    node.lineno,
                    "sleep",
                    "time.sleep as a wait: poll the condition with support.poll.wait_for (or stays), "
                    f"or say why it is not a wait with '{NOT_A_WAIT} <why>'",
                )
            )
    return found


def _poll_helpers(rel: str, tree: ast.AST) -> list[Breach]:
    if rel == POLL:
        return []
    found = [
        Breach(rel, n.lineno, "poll", f"a second poll helper '{n.name}': use support.poll.wait_for")
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and POLL_NAMES.match(n.name)
    ]
    found += [
        Breach(rel, n.lineno, "poll", f"'{a.name}' imported from {n.module}: use support.poll.wait_for")
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module != "support.poll"
        for a in n.names
        if POLL_NAMES.match(a.name)
    ]
    return found


def _path_imports(rel: str, tree: ast.AST) -> list[Breach]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys":
            found.append(Breach(rel, node.lineno, "path", "sys.path edited: import support.<module> instead"))
        elif isinstance(node, ast.Call) and _call_name(node) in PATH_LOADERS:
            found.append(Breach(rel, node.lineno, "path", f"a module loaded by path ({_call_name(node)})"))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            for name in names:
                leaf = name.rpartition(".")[2]
                if leaf.startswith("test_") or leaf == "conftest":
                    found.append(
                        Breach(
                            rel,
                            node.lineno,
                            "path",
                            f"imports the test module '{name}': move the shared part into tests/support",
                        )
                    )
    return found


def _is_dgd_literal(node: ast.AST) -> bool:
    if not isinstance(node, ast.Dict):
        return False
    pairs = {k.value: v for k, v in zip(node.keys, node.values, strict=True) if isinstance(k, ast.Constant)}
    kind = pairs.get("kind")
    return isinstance(kind, ast.Constant) and kind.value == DGD_KIND and "spec" in pairs


def _graph_builders(rel: str, tree: ast.AST) -> list[Breach]:
    if rel == GRAPHS:
        return []
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or fn.name.startswith("test_"):
            continue
        for node in ast.walk(fn):
            if _is_dgd_literal(node):
                found.append(
                    Breach(rel, node.lineno, "graph", f"'{fn.name}' builds a DGD by hand: use support.graphs")
                )
                break
    return found


def _operator_builders(rel: str, tree: ast.AST) -> list[Breach]:
    if rel == OPERATOR:
        return []
    imports_setup = any(
        isinstance(n, ast.ImportFrom)
        and n.module == "dynamo_operator.controllers"
        and any(a.name == "setup" for a in n.names)
        for n in ast.walk(tree)
    )
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        direct = imports_setup and isinstance(func, ast.Name) and func.id == "setup"
        qualified = (
            isinstance(func, ast.Attribute)
            and func.attr == "setup"
            and getattr(func.value, "id", "") == "controllers"
        )
        if direct or qualified:
            found.append(
                Breach(
                    rel,
                    node.lineno,
                    "operator",
                    "controllers.setup outside support.operator: build an Operator",
                )
            )
    return found


def _untiered_helm(rel: str, tree: ast.AST) -> list[Breach]:
    if rel.startswith("support/"):
        return []
    runs_helm = [
        n.lineno
        for n in ast.walk(tree)
        if (
            isinstance(n, ast.Call)
            and _call_name(n) == "which"
            and any(isinstance(a, ast.Constant) and a.value == "helm" for a in n.args)
        )
        or (isinstance(n, ast.ImportFrom) and n.module == "support.chart")
    ]
    marked = any(
        isinstance(n, ast.Attribute) and n.attr == "tools" and getattr(n.value, "attr", "") == "mark"
        for n in ast.walk(tree)
    )
    if not runs_helm or marked:
        return []
    return [Breach(rel, runs_helm[0], "tier", "runs helm without pytest.mark.tools: make unit has no tools")]


def all_breaches() -> list[Breach]:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(TESTS).as_posix()
        if "/." in f"/{rel}" or "__pycache__" in rel:
            continue
        found += breaches(rel, path.read_text())
    return found


def test_the_tests_keep_the_conventions():
    found = all_breaches()
    assert not found, "test conventions broken (see tests/unit/test_test_conventions.py):\n  " + "\n  ".join(
        str(b) for b in found
    )


def test_every_allowed_exception_is_still_needed():
    """An exception whose file no longer breaks its rule is dropped, so none outlives its reason."""
    stale = []
    for (file, rule), why in ALLOWED.items():
        path = TESTS / file
        source = path.read_text() if path.exists() else ""
        raw = [b for b in _unfiltered(file, source) if b.rule == rule]
        if not raw:
            stale.append(f"{file} [{rule}]: {why}")
    assert not stale, f"no longer needed, drop from ALLOWED: {stale}"


def _unfiltered(rel: str, source: str) -> list[Breach]:
    saved = dict(ALLOWED)
    ALLOWED.clear()
    try:
        return breaches(rel, source) if source else []
    finally:
        ALLOWED.update(saved)


# -- the checker itself: each rule fails on a breach and passes the accepted form ---------------------------

BAD = """import sys
import time
from time import sleep

from dynamo_operator.controllers import setup
from test_other import helper

sys.path.insert(0, "x")


def wait_until(fn, timeout):
    while not fn():
        time.sleep(0.1)


def test_x(mgr):
    sleep(1)
    setup(mgr)


def graph(ns):
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "spec": {"components": []}}


from dynamo_operator.runtime.informer import wait_until
"""

GOOD = """import time

from support.graphs import dgd
from support.poll import wait_for

MANIFEST = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "spec": {}}


def pace(rate):
    time.sleep(1 / rate)  # not a wait: the load generator's pacing


def test_x(op):
    wait_for(lambda: op.ready(), 5, "ready")
    return dgd()
"""


def test_the_checker_finds_each_breach():
    got = {(b.line, b.rule) for b in breaches("integration/test_bad.py", BAD)}
    assert got == {
        (6, "path"),  # ``from test_other import``
        (8, "path"),  # sys.path
        (11, "poll"),  # def wait_until
        (13, "sleep"),  # inside the helper
        (17, "sleep"),  # ``from time import sleep``
        (18, "operator"),  # setup(mgr)
        (22, "graph"),  # graph(ns)
        (25, "poll"),  # a poll helper imported from elsewhere
    }, got


def test_the_checker_wants_helm_users_in_the_tools_tier():
    helm = "import shutil\n\ndef test_x():\n    shutil.which('helm')\n"
    assert [(b.line, b.rule) for b in breaches("unit/test_h.py", helm)] == [(4, "tier")]
    marked = "import pytest\n\npytestmark = pytest.mark.tools\n" + helm
    assert breaches("unit/test_h.py", marked) == []


def test_the_checker_accepts_the_conventions():
    assert breaches("integration/test_good.py", GOOD) == []
    # the poll helper itself may sleep and be called wait_for
    assert breaches(POLL, "import time\n\ndef wait_for(fn):\n    time.sleep(0.1)\n") == []
