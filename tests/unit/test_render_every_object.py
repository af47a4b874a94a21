"""``dynamo-operator render`` shows every object the controllers would create, from the same functions.

No list of kinds is written here. The controllers' source says which rendering functions produce what they
create: every ``dynamo_operator.render`` function called in a controller function that creates or applies
objects (``create_child``, ``client.create``, ``ChildSyncer.apply``, directly or through the controller's
own helpers), keeping those whose return annotation is an object or a list of objects, and following the
ones that return a plan (the DGDR phase machine's ``Step``) into the render functions they call. Then
``render_all`` is run on a corpus (the examples, the upstream fixtures, and graphs using each feature
with a child of its own) under a profiler: every producer must be called by ``render_all``, and every
object a producer returns during a run must be in that run's output (render drops nothing the controllers'
functions build; a producer called inside another builds an intermediate, and on the Grove pathway the
DCDs built become the PodCliqueSet's cliques). A controller that starts creating objects from a new
function fails the first check until ``render_all`` calls it too.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from collections.abc import Iterator
from pathlib import Path
from types import CodeType, FunctionType

import pytest
from dynamo_operator import controllers
from dynamo_operator.render import RenderContext, ours, render_all
from support import yamlc
from support.graphs import FULL_INGRESS as FULL
from support.graphs import epp_graph, gms_graph
from support.graphs import exposed_alpha_graph as alpha_graph

VS = {k: v for k, v in FULL.items() if k not in ("ingressControllerClassName", "tls")}  # no class, no cert

REPO = Path(__file__).resolve().parents[2]
CONTROLLERS = Path(controllers.__file__).parent
SINKS = {"apply", "_apply", "create", "create_child"}
RENDER = "dynamo_operator.render"
ALL_DETECTED = frozenset({"dra", "inferencePool", "istio", "lws"})  # multinode needs an orchestrator
DCD = "DynamoComponentDeployment"
GROVE = "__grove__"  # a corpus entry rendered on the Grove pathway as well
CONFIG = {
    "checkpoint": {"enabled": True},
    "security": {"workloads": {"restrictedSecurityContext": True}},
    "mpi": {
        "sshSecretName": "mpi-run-ssh-secret",
        "sshSecretNamespace": "dynamo-system",
        "sshNetworkPolicy": True,
    },
    "rbac": {"dgdrProfilingClusterRoleName": "dynamo-profiling"},
    "serviceMesh": {"enabled": True, "provider": "istio"},
    # each graph namespace's own etcd access (the chart's default with its bundled etcd)
    "infrastructure": {
        "etcdAddress": "https://dp-etcd.dynamo-system.svc.cluster.local:2379",
        "etcdAuth": {"method": "namespaceCertificate", "secretName": "dynamo-etcd-client"},
    },
}
# Producers render cannot call offline, each with why (a stale entry fails
# test_every_exemption_is_still_a_producer): keep this small.
AFTER_PROFILING = {
    "dynamo_operator.render.dgdr_output._config_map": "the ConfigMaps hold the profiler's output, which "
    "exists only after the profiling Job ran; render previews a request before profiling",
    "dynamo_operator.render.checkpoint_storage.cleanup_job": "the cleanup Job runs when a checkpoint is "
    "deleted; render previews what creating an object makes",
}


# ------------------------------------------------------------------------------ what the controllers call


def _render_imports(tree: ast.Module) -> tuple[dict[str, FunctionType], dict[str, str]]:
    """(local name -> render function, local name -> render module) of a controller module."""
    funcs: dict[str, FunctionType] = {}
    mods: dict[str, str] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(RENDER)):
            continue
        module = importlib.import_module(node.module)
        for alias in node.names:
            value = getattr(module, alias.name, None)
            if inspect.ismodule(value):
                mods[alias.asname or alias.name] = value.__name__
            elif inspect.isfunction(value):
                funcs[alias.asname or alias.name] = value
    return funcs, mods


def _call_name(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _called(fn: ast.AST, funcs: dict, mods: dict) -> Iterator[FunctionType]:
    for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
        f = call.func
        if isinstance(f, ast.Name) and f.id in funcs:
            yield funcs[f.id]
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in mods:
            value = getattr(importlib.import_module(mods[f.value.id]), f.attr, None)
            if inspect.isfunction(value):
                yield value


def _sink_holders(tree: ast.Module) -> list[ast.AST]:
    """Functions that create/apply objects, directly or through a helper of the same module."""
    defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    holders = {name for name, fn in defs.items() if any(_call_name(c) in SINKS for c in _calls(fn))}
    grew = True
    while grew:
        more = {
            n for n, fn in defs.items() if n not in holders and {_call_name(c) for c in _calls(fn)} & holders
        }
        grew, holders = bool(more), holders | more
    return [defs[n] for n in sorted(holders)]


def _calls(fn: ast.AST) -> list[ast.Call]:
    return [c for c in ast.walk(fn) if isinstance(c, ast.Call)]


def _returns_objects(func: FunctionType) -> bool:
    ret = str(inspect.signature(func).return_annotation)
    return not ret.startswith("tuple") and ("dict" in ret or "list" in ret)  # a (urls, problems) report


def _builds_object(func: FunctionType) -> bool:
    """The function writes an object literal (``{"apiVersion": ..., "kind": ...}``): not a helper that
    returns a fragment or a status field."""
    tree = ast.parse(inspect.getsource(func).lstrip() if func.__code__.co_firstlineno else "")
    return any(
        isinstance(n, ast.Dict)
        and any(isinstance(k, ast.Constant) and k.value == "apiVersion" for k in n.keys)
        for n in ast.walk(tree)
    )


def _through_plan(func: FunctionType, seen: set) -> Iterator[FunctionType]:
    """The object-returning render functions a plan-returning one calls (transitively, through plans)."""
    if func in seen:
        return
    seen.add(func)
    tree = ast.parse(Path(inspect.getsourcefile(func) or "").read_text())
    module = sys.modules[func.__module__]
    local = {
        n: v for n, v in vars(module).items() if inspect.isfunction(v) and v.__module__.startswith(RENDER)
    }
    mods = {
        n: v.__name__
        for n, v in vars(module).items()
        if inspect.ismodule(v) and v.__name__.startswith(RENDER)
    }
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == func.__name__)
    for callee in _called(node, local, mods):
        if _returns_objects(callee) and _builds_object(callee):
            yield callee
        else:
            yield from _through_plan(callee, seen)


def controller_producers() -> dict[FunctionType, str]:
    """Render function -> the controller function that creates what it returns."""
    out: dict[FunctionType, str] = {}
    for path in sorted(CONTROLLERS.glob("*.py")):
        tree = ast.parse(path.read_text())
        funcs, mods = _render_imports(tree)
        for holder in _sink_holders(tree):
            for func in _called(holder, funcs, mods):
                where = f"controllers/{path.name}:{holder.name}"
                targets = [func] if _returns_objects(func) else list(_through_plan(func, set()))
                for target in targets:
                    out.setdefault(target, where)
    return out


# ---------------------------------------------------------------------------------------- the corpus


def _docs(path: Path) -> list[dict]:
    """The objects of a file, with the namespace ``render`` gives those that name none."""
    docs = [d for d in yamlc.load_all(path.read_text()) if isinstance(d, dict) and ours(d)]
    for d in docs:
        d.setdefault("metadata", {}).setdefault("namespace", "default")
    return docs


def corpus() -> list[tuple[str, dict]]:
    files = [
        p
        for p in sorted((REPO / "examples").glob("*.yaml"))
        if p.name != "demo-values.yaml" and not p.name.startswith("hpa-")
    ] + sorted((REPO / "tests" / "fixtures" / "upstream").glob("*.yaml"))
    out = [(f"{p.name}#{i}", d) for p in files for i, d in enumerate(_docs(p))]
    checkpoint = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "ckpt", "namespace": "team"},
        "spec": {
            "identity": {"model": "m", "backendFramework": "vllm"},
            "job": {"podTemplateSpec": {"spec": {"containers": [{"name": "main", "image": "runtime:1"}]}}},
        },
    }
    ckpt_graph = gms_graph()  # a component with a graph-managed checkpoint (p2ckpt)
    ckpt_graph["spec"]["components"][1]["experimental"] = {"checkpoint": {"enabled": True}}
    grove = [(f"{n} (grove)", {**d, GROVE: True}) for n, d in out if "multinode" in str(d.get("spec"))]
    extra = [
        ("gms", gms_graph()),
        ("epp", epp_graph()),
        ("checkpoint", checkpoint),
        ("graph-ckpt", ckpt_graph),
        ("ingress", alpha_graph(FULL)),  # an Ingress, and a VirtualService under istio
        ("virtualservice", alpha_graph({**VS, "useVirtualService": True, "virtualServiceGateway": "g"})),
    ]
    return [*out, *grove, *extra]


def _is_object(value: object) -> bool:
    return isinstance(value, dict) and "kind" in value and "metadata" in value


def _identity(obj: dict) -> tuple:
    return obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]


def render_traced(doc: dict, watched: dict[CodeType, FunctionType]) -> tuple[list[dict], dict]:
    """render_all's output, and per watched function the objects it returned during the run."""
    returned: dict[FunctionType, list[dict]] = {}
    depth = [0]  # watched frames active: a producer called inside another builds an intermediate

    def profile(frame, event, arg):
        if frame.f_code not in watched:
            return
        if event == "call":
            depth[0] += 1
        elif event == "return":
            depth[0] -= 1
            values = arg if isinstance(arg, list) else [arg]
            found = [v for v in values if _is_object(v)] if depth[0] == 0 else []
            returned.setdefault(watched[frame.f_code], []).extend(found)

    detected = ALL_DETECTED | ({"grove"} if doc.pop(GROVE, False) else set())
    ctx = RenderContext(operator_config=CONFIG, detected=frozenset(detected))
    sys.setprofile(profile)
    try:
        out = render_all(doc, ctx)
    finally:
        sys.setprofile(None)
    return out, returned


@pytest.fixture(scope="module")
def traced() -> tuple[dict[FunctionType, str], list[tuple[str, list[dict], dict]]]:
    producers = controller_producers()
    watched = {f.__code__: f for f in producers}
    runs = []
    for name, doc in corpus():
        out, returned = render_traced(doc, watched)
        runs.append((name, out, returned))
    return producers, runs


def test_the_controllers_producers_are_found(traced):
    """The analysis sees what the controllers create from (so the checks below are not vacuous)."""
    producers, _ = traced
    found = {f"{f.__module__}.{f.__name__}" for f in producers}
    assert len(found) >= 6, found
    assert any(n.endswith("scaling.render_adapters") for n in found), found
    assert any(n.endswith("checkpoint.checkpoint_job") for n in found), found


def test_render_calls_every_function_the_controllers_create_objects_from(traced):
    producers, runs = traced
    called = {f for _, _, returned in runs for f in returned}
    missing = {f"{f.__module__}.{f.__name__} (created by {where})" for f, where in producers.items()}
    missing -= {f"{f.__module__}.{f.__name__} (created by {producers[f]})" for f in called}
    missing = {m for m in missing if m.split(" ")[0] not in AFTER_PROFILING}
    assert not missing, f"render_all never renders what these controller producers build: {sorted(missing)}"


def test_every_exemption_is_still_a_producer(traced):
    producers, _ = traced
    found = {f"{f.__module__}.{f.__name__}" for f in producers}
    assert set(AFTER_PROFILING) <= found, set(AFTER_PROFILING) - found


def test_render_drops_nothing_a_producer_built(traced):
    _, runs = traced
    lost = []
    for name, out, returned in runs:
        shown = {_identity(o) for o in out}
        if any(o["kind"] == "PodCliqueSet" for o in out):  # Grove: the DCDs built become its cliques
            shown |= {_identity(o) for objs in returned.values() for o in objs if o["kind"] == DCD}
        for func, objs in returned.items():
            lost += [f"{name}: {func.__name__} -> {_identity(o)}" for o in objs if _identity(o) not in shown]
    assert not lost, lost


def test_the_corpus_reaches_each_kind_of_child(traced):
    """Adapters, claims, pool, rule, checkpoint Job, DGDR Job: each appears in some run's output."""
    _, runs = traced
    kinds = {o["kind"] for _, out, _ in runs for o in out}
    assert {
        "DynamoGraphDeploymentScalingAdapter",
        "ResourceClaimTemplate",
        "InferencePool",
        "DestinationRule",
        "Job",
        "Ingress",
        "VirtualService",
        "NetworkPolicy",
    } <= kinds, kinds
