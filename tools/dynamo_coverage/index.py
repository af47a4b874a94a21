"""Which functions mention which names: the index the reference checks and the draft helper read.

A function "mentions" a field when one of its string literals is the field's JSON name (or has it as a
dotted segment: ``"checkpoint.storage.pvc.basePath"``), or it reads an attribute or passes a keyword of the
field's Python name. Tokens are collected per function (nested functions included in their parent). For
code (``mentions``), prose does not count: a literal with whitespace in it (a message, a docstring) that
names a field tells the reader what to set, it does not read it; a test's assertion on such a message
does name the field it is about.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
from pathlib import Path

from .rows import REPO

TEST_ROOTS = ("tests/unit", "tests/integration", "tests/faults")


def tokens_of(node: ast.AST, prose: bool = True) -> set[str]:
    """Names in ``node``: string literals (and their dotted or slashed segments; without ``prose``, none of
    a literal with whitespace in it), attributes, keywords and variable names."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            text = n.value
            if not prose and any(c.isspace() for c in text):
                continue
            out.add(text)
            for part in text.replace("[", ".").replace("]", ".").replace("/", ".").split("."):
                out.update(w for w in part.replace("=", " ").replace(",", " ").split() if w)
                if part:
                    out.add(part)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.keyword) and n.arg:
            out.add(n.arg)
        elif isinstance(n, ast.Name):
            out.add(n.id)
    return out


def functions_of(tree: ast.AST, prefix: str = ""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name, node
        elif isinstance(node, ast.ClassDef):
            yield from functions_of(node, f"{prefix}{node.name}.")


@functools.cache
def module_functions(path: Path) -> dict[str, ast.AST]:
    return dict(functions_of(ast.parse(path.read_text())))


@functools.cache
def module_constants(path: Path, prose: bool = True) -> dict[str, set[str]]:
    """Tokens of each module-level assignment (``_SHARED_SAME = ("replicas", ...)``): a function that uses
    the constant mentions what it holds."""
    out: dict[str, set[str]] = {}
    for node in ast.parse(path.read_text()).body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        for t in targets:
            if isinstance(t, ast.Name) and getattr(node, "value", None) is not None:
                out[t.id] = tokens_of(node.value, prose)
    return out


def function_tokens(path: Path, func: ast.AST, prose: bool = True) -> set[str]:
    toks = tokens_of(func, prose)
    consts = module_constants(path, prose)
    for name in [t for t in toks if t in consts]:
        toks |= consts[name]
    return toks


def resolve_code(ref: str) -> tuple[ast.AST | None, str]:
    """(file, AST) of ``module:qualname`` (``dynamo_operator.`` implied for a bare module path), or an
    error."""
    module, _, qual = ref.partition(":")
    if not module.startswith("dynamo_"):
        module = f"dynamo_operator.{module}"
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        return None, f"{ref}: module {module} cannot be imported ({exc})"
    path = Path(inspect.getsourcefile(mod) or "")
    func = module_functions(path).get(qual)
    if func is None:
        return None, f"{ref}: no function {qual} in {module}"
    return (path, func), ""


def resolve_test(ref: str) -> tuple[tuple[Path, ast.AST] | None, str]:
    """(file, AST) of ``tests/....py::test_name`` (``Class::test`` allowed), or an error."""
    file, _, name = ref.partition("::")
    path = REPO / file
    if not path.is_file():
        return None, f"{ref}: no file {file}"
    func = module_functions(path).get(name.replace("::", "."))
    if func is None or not name.rpartition(".")[2].startswith("test"):
        return None, f"{ref}: no test {name} in {file}"
    return (path, func), ""


def mentions(found: tuple[Path, ast.AST], json_name: str, python_name: str = "") -> bool:
    """The code reads the field: its name outside prose (``tokens_of``)."""
    toks = function_tokens(*found, prose=False)
    return json_name in toks or bool(python_name and python_name in toks)


def in_context(
    found: tuple[Path, ast.AST], context: set[str], siblings: set[str], json_name: str = ""
) -> bool:
    """The function is about the field's type: it names a field the type is reached through, or another
    of the type's fields, or it is handed the struct and reads the field off it (``device_class(gms)``
    reads ``gms.get("deviceClassName")`` and names nothing else). A top-level field (no context, no
    siblings) passes."""
    if not context and not siblings:
        return True
    return bool(function_tokens(*found) & (context | siblings)) or reads_off_parameter(found[1], json_name)


def reads_off_parameter(func: ast.AST, json_name: str) -> bool:
    """``param.get("<json_name>")`` or ``param["<json_name>"]`` where ``param`` is one of the function's
    own parameters."""
    if not json_name or not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    args = func.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            owner, key = node.func.value, node.args[0] if node.args else None
        elif isinstance(node, ast.Subscript):
            owner, key = node.value, node.slice
        else:
            continue
        named = isinstance(owner, ast.Name) and owner.id in params
        if named and isinstance(key, ast.Constant) and key.value == json_name:
            return True
    return False


def mentions_test(found: tuple[Path, ast.AST], json_name: str, python_name: str = "") -> bool:
    """The test names the field: in its body or in a module constant it uses (``ON = {"mpi":
    {"sshNetworkPolicy": True}}``), as code is read (``function_tokens``)."""
    toks = function_tokens(*found)
    return json_name in toks or bool(python_name and python_name in toks)


@functools.cache
def code_index() -> dict[str, set[str]]:
    """``module:qualname`` -> tokens, for the operator, the hooks and the plugin."""
    out: dict[str, set[str]] = {}
    for root, package in (
        ("operator/dynamo_operator", "dynamo_operator"),
        ("hooks/dynamo_hooks", "dynamo_hooks"),
        ("plugin/dynamo_plugin", "dynamo_plugin"),
    ):
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO / root).with_suffix("").as_posix().replace("/", ".")
            module = package if rel == "__init__" else f"{package}.{rel.removesuffix('.__init__')}"
            short = module.removeprefix("dynamo_operator.") if package == "dynamo_operator" else module
            for qual, func in module_functions(path).items():
                out[f"{short}:{qual}"] = function_tokens(path, func)
    return out


@functools.cache
def test_index() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for root in TEST_ROOTS:
        for path in sorted((REPO / root).glob("test_*.py")):
            rel = path.relative_to(REPO).as_posix()
            for qual, func in module_functions(path).items():
                if qual.rpartition(".")[2].startswith("test"):
                    out[f"{rel}::{qual}"] = function_tokens(path, func)
    return out
