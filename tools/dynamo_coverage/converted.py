"""The proof behind a ``Converted`` entry: a v1alpha1 field of a converted kind acts when the conversion
carries it into the v1beta1 object the renderer and the controllers read.

The check sets a sample value at the field's path on the kind's minimal v1alpha1 object, converts both
objects with the real conversion (``api.conversion.convert``) and requires the v1beta1 results to differ
outside ``metadata.annotations`` (a field parked in the annotation that nothing reads does not count).
"""

from __future__ import annotations

import copy
import typing
from collections.abc import Iterator
from typing import Any

from dynamo_operator.api import registry
from dynamo_operator.api.meta import resolved_fields
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from .rows import Row
from .samples import base_object

SENTINEL = "cov-7919"
CONFIG = "config:"  # a ``Rendered`` context key for the OperatorConfiguration (``config:ingress.hostSuffix``)


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X``."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return args[0] if len(args) == 1 else annotation
    return annotation


def _field(model: type[BaseModel], json_name: str) -> Any:
    for name, info in resolved_fields(model).items():
        if (info.alias or to_camel(name)) == json_name:
            return info.annotation
    raise KeyError(json_name)


def sample_value(annotation: Any) -> Any:
    """A value of the field's type that no default equals."""
    ann = _unwrap(annotation)
    origin = typing.get_origin(ann)
    if origin is typing.Literal:
        return typing.get_args(ann)[-1]
    if origin in (list, tuple):
        (inner,) = typing.get_args(ann)[:1] or (str,)
        return [sample_value(inner)]
    if origin is dict or ann is dict:
        return {"cov": SENTINEL}
    if ann is bool:
        return True
    if ann is int:
        return 7919
    if ann is float:
        return 79.19
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return {"cov": SENTINEL}
    return SENTINEL


def _steps(row: Row, where: str) -> Iterator[tuple[str, Any]]:
    """(JSON key, annotation) from the kind's model down to the row's field, for one place it appears."""
    head, _, path = where.partition(" ")
    version, *parts = path.split(".")
    yield from _path_steps(head, version, [*parts, row.json])


def _path_steps(kind: str, version: str, parts: list[str]) -> Iterator[tuple[str, Any]]:
    """(JSON key, annotation) along ``parts`` (JSON keys from the kind's root) through its models."""
    model: Any = registry.KINDS[kind].models[version]
    for part in parts:
        ann = _field(model, part)
        yield part, ann
        inner = _unwrap(ann)
        while typing.get_origin(inner) in (list, dict):
            inner = _unwrap(typing.get_args(inner)[-1])
        model = inner


def _parent(obj: dict, steps: list[tuple[str, Any]]) -> dict:
    """The dict that holds the field at ``steps``, created on the way (a map of components stands for its
    first entry, a list for its first item)."""
    node: Any = obj
    for key, ann in steps[:-1]:
        inner = _unwrap(ann)
        origin = typing.get_origin(inner)
        if origin is dict:  # a map of components: the base's first entry
            node = node.setdefault(key, {})
            node = node[next(iter(node))] if node else node.setdefault("Frontend", {})
        elif origin is list:
            items = node.setdefault(key, [])
            if not items:
                items.append({})
            node = items[0]
        else:
            node = node.setdefault(key, {})
    return node


def _set(obj: dict, steps: list[tuple[str, Any]], value: Any) -> None:
    _parent(obj, steps)[steps[-1][0]] = value


def _pair(base: dict, steps: list[tuple[str, Any]]) -> tuple[dict, dict]:
    """(before, after): both the base with the field's parents created, ``after`` with the sample value
    set too. A parent the sample alone creates (a status, a list item, a struct) changes the output by
    itself; comparing against the bare base would count that as the field's effect."""
    before, after = copy.deepcopy(base), copy.deepcopy(base)
    _parent(before, steps)
    _set(after, steps, sample_value(steps[-1][1]))
    return before, after


def _without_annotations(obj: dict) -> dict:
    out = copy.deepcopy(obj)
    out.get("metadata", {}).pop("annotations", None)
    return out


def problems(row: Row, context: dict[str, Any] | None = None) -> Iterator[str]:
    """A ``Converted`` entry's proof (``context``: as a ``Rendered`` entry's, set on both objects)."""
    from dynamo_operator.api.conversion import CONVERTIBLE_KINDS, convert

    context = context or {}
    places = [
        w
        for w in row.appears
        if w.split(" ")[0] in CONVERTIBLE_KINDS and " v1alpha1" in w and _fits(w, context)
    ]
    if not places:
        yield "converted: the field is not reached from a v1alpha1 kind the conversion handles"
        if context:
            yield f"converted: or the context {sorted(context)} is not on the way to {row.appears}"
        return
    where = places[0]
    kind = where.split(" ")[0]
    base = base_object(kind, "v1alpha1")
    for key, value in context.items():
        _set(base, list(_path_steps(kind, "v1alpha1", key.split("."))), value)
    steps = list(_steps(row, where))
    plain, changed = _pair(base, steps)
    before = _without_annotations(convert(plain, "v1beta1"))
    after = _without_annotations(convert(changed, "v1beta1"))
    if before == after:
        path = ".".join(k for k, _ in steps)
        yield f"converted: setting {path} on a {kind} v1alpha1 changes nothing in its v1beta1 form"


def _place_path(where: str) -> list[str]:
    """``DynamoComponentDeployment v1alpha1.spec.ingress`` -> ``["spec", "ingress"]``."""
    return where.split(" ", 1)[1].split(".")[1:]


def _fits(where: str, context: dict[str, Any]) -> bool:
    """Every context path sits on the way to the place (its parent is the place or above it), so the
    context and the field land in the same component, list entry and struct."""
    path = _place_path(where)
    return all(key.split(".")[:-1] == path[: len(key.split(".")) - 1] for key in context)


def rendered_problems(row: Row, context: dict[str, Any] | None = None) -> Iterator[str]:
    """A ``Rendered`` entry's proof: setting the field on the kind's minimal object (plus its ``context``,
    on both sides) changes what ``render_all`` (the controllers' functions) renders for it."""
    from dynamo_operator.render import RenderContext, render_all
    from dynamo_operator.render.context import ISTIO

    from .samples import BASES

    context = context or {}
    config: dict[str, Any] = {"checkpoint": {"enabled": True}}  # a checkpoint's Job shows
    for key, value in context.items():
        if key.startswith(CONFIG):
            *parents, leaf = key.removeprefix(CONFIG).split(".")
            node = config
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = value
    context = {k: v for k, v in context.items() if not k.startswith(CONFIG)}
    places = [
        w
        for w in row.appears
        if (w.split(" ")[0], w.split(" ")[1].split(".")[0]) in BASES and _fits(w, context)
    ]
    if not places:
        yield "rendered: no minimal object of the kinds the field is reached from (add one to samples)"
        if context:
            yield f"rendered: or the context {sorted(context)} is not on the way to {row.appears}"
        return
    where = places[0]
    kind, version = where.split(" ")[0], where.split(" ")[1].split(".")[0]
    base = base_object(kind, version)
    for key, value in context.items():
        _set(base, list(_path_steps(kind, version, key.split("."))), value)
    steps = list(_steps(row, where))
    plain, changed = _pair(base, steps)
    ctx = RenderContext(operator_config=config, detected={ISTIO})  # VirtualServices render
    try:
        before, after = render_all(plain, ctx), render_all(changed, ctx)
    except Exception as exc:
        yield f"rendered: the sample cannot be rendered ({exc})"
        return
    if before == after:
        path = ".".join(k for k, _ in steps)
        yield f"rendered: setting {path} on a {kind} {version} changes nothing render_all renders"
