"""Dependencies point one way: no package (or module) imports another that imports it back.

The graph is read from the source (every ``import``, also those inside functions: a lazy import is still a
dependency), at every level of the tree: within a package its child modules and subpackages are the nodes,
and an import from ``a.b.x`` of ``a.c.y`` is an edge ``b -> c`` inside ``a``. Each level must be acyclic.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROOTS = {
    "dynamo_operator": REPO / "operator",
    "dynamo_hooks": REPO / "hooks",
    "dynamo_plugin": REPO / "plugin",
}
INIT = "__init__"


def _path(module: str) -> Path:
    head, *rest = module.split(".")
    return ROOTS[head].joinpath(head, *rest)


def _exists(module: str) -> bool:
    if module.split(".")[0] not in ROOTS:
        return False
    p = _path(module)
    return p.is_dir() or p.with_suffix(".py").exists()


def _modules() -> dict[str, Path]:
    out = {}
    for name, base in ROOTS.items():
        for p in (base / name).rglob("*.py"):
            parts = p.relative_to(base).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == INIT else parts)] = p
    return out


def _imports(module: str, path: Path) -> set[str]:
    """The project modules ``module`` imports (``from pkg import sub`` counts as importing ``pkg.sub``)."""
    package = module if path.name == f"{INIT}.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name and not _exists(name):
                    name = name.rpartition(".")[0]
                if name:
                    found.add(name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                if _exists(f"{base}.{alias.name}"):
                    found.add(f"{base}.{alias.name}")
                elif _exists(base):
                    found.add(base)
    found.discard(module)
    return found


def sibling_graph() -> dict[tuple[str, str], set[tuple[str, str]]]:
    """Edges between siblings: ``(parent, child) -> {(parent, other child)}``; a package's own
    ``__init__`` is the child ``__init__``."""
    graph: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for module, path in _modules().items():
        for target in _imports(module, path):
            a, b = module.split("."), target.split(".")
            i = 0
            while i < min(len(a), len(b)) and a[i] == b[i]:
                i += 1
            parent = ".".join(a[:i])
            graph[(parent, a[i] if i < len(a) else INIT)].add((parent, b[i] if i < len(b) else INIT))
    return graph


def cycles(graph: dict) -> list[list]:
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    out: list[list] = []
    counter = 0
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def _edges_within(graph: dict, comp: list) -> list[str]:
    members = set(comp)
    return sorted(f"{a[1]} -> {b[1]}" for a in comp for b in graph.get(a, ()) if b in members)


def test_the_package_import_graph_has_no_cycles():
    graph = sibling_graph()
    found = cycles(graph)
    assert not found, "import cycles (make one side stop importing the other):\n" + "\n".join(
        f"  in {comp[0][0] or '<top>'}: {', '.join(_edges_within(graph, comp))}" for comp in found
    )


def test_the_graph_sees_what_it_must():
    """The checker itself: the known edges are found, and a made-up cycle is reported."""
    graph = sibling_graph()
    assert ("dynamo_operator", "runtime") in graph[("dynamo_operator", "controllers")]
    assert ("", "dynamo_operator") in graph[("", "dynamo_hooks")]
    assert ("dynamo_operator", "webhooks") in graph[("dynamo_operator", "cli")]  # a lazy import counts
    made_up = {
        ("p", "a"): {("p", "b")},
        ("p", "b"): {("p", "c")},
        ("p", "c"): {("p", "a")},
        ("p", "d"): set(),
    }
    assert cycles(made_up) == [[("p", "a"), ("p", "b"), ("p", "c")]]


def test_the_runtime_does_not_read_the_dynamo_configuration():
    """The runtime takes its settings as arguments: it imports nothing of the API or the controllers."""
    graph = sibling_graph()
    allowed = {("dynamo_operator", n) for n in ("runtime", INIT, "labels", "pki")}
    assert graph[("dynamo_operator", "runtime")] <= allowed, graph[("dynamo_operator", "runtime")] - allowed
