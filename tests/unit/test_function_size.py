"""Small rooms: no function in the operator, the hooks, the helm plugin, the benchmarks, the image builder,
the project's tools or the tests is longer than 80 lines (from its ``def`` to its last line; decorators such
as click options do not count). A long test is split into named steps like any other function, so a failure
says which step broke.

Exclusions are explicit: the generated API models (pydantic classes whose size is the API's), and files
another part of the project is changing at the same time (each named with why; remove the entry once its
function is split)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("operator", "hooks", "plugin", "bench", "image", "tools", "tests")
LIMIT = 80

EXCLUDED_FILES = {
    # generated from the CRD API reference: models, not logic
    "operator/dynamo_operator/api/v1alpha1/models.py",
    "operator/dynamo_operator/api/v1beta1/models.py",
}
# file -> functions still over the limit, owned by another change in flight; the lead removes each entry
# once that change has split them (the test fails if an entry is no longer needed, so none goes stale)
PENDING: dict[str, set[str]] = {}


def long_functions() -> dict[str, dict[str, int]]:
    """file -> {qualified function name: lines} for every function over ``LIMIT``."""
    found: dict[str, dict[str, int]] = {}
    for root in ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in EXCLUDED_FILES or "/." in rel:
                continue
            tree = ast.parse(path.read_text(), filename=rel)
            for node, qualname in _functions(tree):
                lines = node.end_lineno - node.lineno + 1
                if lines > LIMIT:
                    found.setdefault(rel, {})[qualname] = lines
    return found


def _functions(tree: ast.AST, prefix: str = ""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, prefix + node.name
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")


def test_no_function_is_longer_than_80_lines():
    found = long_functions()
    unexpected = {
        f"{file}:{name} ({lines} lines)"
        for file, funcs in found.items()
        for name, lines in funcs.items()
        if name.rpartition(".")[2] not in PENDING.get(file, set())
    }
    assert not unexpected, (
        f"functions over {LIMIT} lines (split them into steps named for what they do):\n  "
        + "\n  ".join(sorted(unexpected))
    )


def test_every_pending_exclusion_is_still_needed():
    found = long_functions()
    stale = {
        f"{file}:{name}"
        for file, names in PENDING.items()
        for name in names
        if not any(q.rpartition(".")[2] == name for q in found.get(file, {}))
    }
    assert not stale, f"these functions are no longer over {LIMIT} lines: drop them from PENDING: {stale}"


def test_the_measure_finds_a_long_function(tmp_path):
    """The checker itself: a 81-line function is found, methods and nested functions by qualified name."""
    body = "\n".join(f"    x{i} = {i}" for i in range(79))
    tree = ast.parse(f"class C:\n  def m(self):\n{body}\n    return 0\n")
    (node, name), *_ = _functions(tree)
    assert name == "C.m" and node.end_lineno - node.lineno + 1 == 81
