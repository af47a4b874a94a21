"""The rows of the table, from the models and the values files (never written by hand).

API and configuration rows are keyed ``<module>.<Type>.<jsonName>`` (``v1beta1.DynamoGraphDeploymentSpec.
components``): a type used in many places gets its rows once, with the paths where it appears. A field
whose type is another API type is not a row of its own: its type's fields are (unless the field itself has
an entry that covers its whole subtree: refused, stored only or pending). Kubernetes core types embedded
in the API (pod templates, env vars, resources...) are one row each: the operator passes them through.

Chart rows are keyed ``chart:<chart>:<dotted.path>``: one per leaf of ``values.yaml`` and per leaf of
``values.schema.json`` that ``values.yaml`` leaves unset; a free-form map (``labels: {}``) is one leaf.
"""

from __future__ import annotations

import functools
import json
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from dynamo_operator.api import registry
from dynamo_operator.api.config.types import OperatorConfiguration
from dynamo_operator.api.meta import ApiModel, KubeModel, KubeResource, resolved_fields
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

REPO = Path(__file__).resolve().parents[2]
CHARTS = REPO / "charts" / "platform"
# chart name in row keys -> directory
CHART_DIRS: dict[str, Path] = {"platform": CHARTS} | {
    p.name: p for p in sorted((CHARTS / "components").iterdir()) if (p / "values.yaml").is_file()
}
# umbrella keys that are subcharts' values: passed to that subchart unchanged (Helm)
SUBCHART_KEYS = {"dynamo-operator": "operator", "nats": "nats", "etcd": "etcd", "grove": "grove"} | {
    "kai-scheduler": "kai-scheduler"
}
# Helm's own value shared with subcharts, not a setting of these charts
HELM_KEYS = ("global",)


@dataclass
class Row:
    key: str
    section: str  # "api", "config" or "chart:<name>"
    type_key: str = ""  # API/config: "<module>.<Type>"
    json: str = ""  # the field's JSON name, or the chart value's last segment
    python: str = ""  # the field's Python attribute name
    description: str = ""
    appears: list[str] = field(default_factory=list)  # where the type is reached from
    subtree: list[str] = field(default_factory=list)  # keys of the rows below a struct field
    schema: dict[str, Any] = field(default_factory=dict)  # chart: the value's schema node


def type_key(model: type[BaseModel]) -> str:
    module = model.__module__.split(".")
    short = "config" if "config" in module else module[-2] if module[-1] == "models" else module[-1]
    return f"{short}.{model.__name__}"


def _api_models(annotation: Any) -> list[type[ApiModel]]:
    """The API types (not Kubernetes core types) an annotation holds, through lists, maps and unions."""
    origin = typing.get_origin(annotation)
    if origin is not None:
        return [m for a in typing.get_args(annotation) for m in _api_models(a)]
    if isinstance(annotation, type) and issubclass(annotation, ApiModel):
        return [] if issubclass(annotation, KubeModel) else [annotation]
    return []


def _own_fields(model: type[BaseModel]):
    """Fields of ``model`` except apiVersion/kind/metadata of a top-level kind (the apiserver's)."""
    for name, info in resolved_fields(model).items():
        if issubclass(model, KubeResource) and name in KubeResource.model_fields:
            continue
        yield name, info


def _walk(model: type[BaseModel], where: str, rows: dict[str, Row], section: str, seen: set) -> list[str]:
    """Rows of ``model`` (reached at ``where``) and below; returns the keys of its rows (and subtrees)."""
    tkey = type_key(model)
    keys: list[str] = []
    for name, info in _own_fields(model):
        json_name = info.alias or to_camel(name)
        key = f"{tkey}.{json_name}"
        row = rows.get(key)
        if row is None:
            row = rows[key] = Row(key, section, tkey, json_name, name, (info.description or "").strip())
        if where not in row.appears:
            row.appears.append(where)
        keys.append(key)
        for sub in _api_models(info.annotation):
            marker = (sub, f"{where}.{json_name}")
            if (sub, None) in seen:  # rows already walked: only record where else the type appears
                _appear(sub, f"{where}.{json_name}", rows)
                row.subtree = sorted(set(row.subtree) | _subtree_keys(sub, rows))
                keys += row.subtree
                continue
            seen.add((sub, None))
            sub_keys = _walk(sub, f"{where}.{json_name}", rows, section, seen | {marker})
            row.subtree = sorted(set(row.subtree) | set(sub_keys))
            keys += sub_keys
    return keys


def _subtree_keys(model: type[BaseModel], rows: dict[str, Row]) -> set[str]:
    prefix = type_key(model) + "."
    out = {k for k in rows if k.startswith(prefix)}
    for k in list(out):
        out |= set(rows[k].subtree)
    return out


def _appear(model: type[BaseModel], where: str, rows: dict[str, Row]) -> None:
    prefix = type_key(model) + "."
    for k, row in rows.items():
        if k.startswith(prefix) and k.count(".") == prefix.count(".") and where not in row.appears:
            row.appears.append(where)


def api_rows() -> dict[str, Row]:
    """Every field of every kind in every served version, and of the OperatorConfiguration."""
    rows: dict[str, Row] = {}
    seen: set = set()
    for kind, info in sorted(registry.KINDS.items()):
        for version, model in info.models.items():
            seen.add((model, None))
            _walk(model, f"{kind} {version}", rows, "api", seen)
    seen.add((OperatorConfiguration, None))
    _walk(OperatorConfiguration, "OperatorConfiguration", rows, "config", seen)
    return rows


def struct_field(row: Row) -> bool:
    """A field whose type is an API type: its subtree's rows cover it."""
    return bool(row.subtree)


# ---------------------------------------------------------------------------------------------- chart


def _schema_at(schema: dict[str, Any], path: list[str]) -> dict[str, Any] | None:
    node: dict[str, Any] | None = schema
    for key in path:
        if node is None:
            return None
        node = (node.get("properties") or {}).get(key)
    return node


def _free_form(node: dict[str, Any] | None) -> bool:
    """An object the schema leaves open (a map of labels, resources, a pass-through object)."""
    return bool(node) and "properties" not in node and "object" in _types(node)


def _types(node: dict[str, Any]) -> list[str]:
    t = node.get("type", [])
    return [t] if isinstance(t, str) else list(t)


def _value_leaves(values: Any, schema: dict[str, Any], path: list[str], umbrella: bool = False):
    node = _schema_at(schema, path) if path else schema
    # the umbrella's schema leaves a subchart's key open (the subchart's schema checks it): descend anyway
    open_map = _free_form(node) and not (umbrella and len(path) == 1 and path[0] in SUBCHART_KEYS)
    if isinstance(values, dict) and values and not (path and open_map):
        for key, value in values.items():
            yield from _value_leaves(value, schema, [*path, key], umbrella)
    elif path:
        yield path


def _schema_leaves(node: dict[str, Any], path: list[str]):
    props = node.get("properties")
    if props:
        for key, child in props.items():
            yield from _schema_leaves(child, [*path, key])
    elif path:
        yield path


@functools.cache
def _chart_rows() -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for chart, directory in CHART_DIRS.items():
        values = yaml.safe_load((directory / "values.yaml").read_text()) or {}
        schema = json.loads((directory / "values.schema.json").read_text())
        paths = {tuple(p) for p in _value_leaves(values, schema, [], chart == "platform")}
        for p in _schema_leaves(schema, []):
            if not any(q[: len(p)] == tuple(p) or tuple(p)[: len(q)] == q for q in paths):
                paths.add(tuple(p))
        for p in sorted(paths):
            if p[0] in HELM_KEYS:
                continue
            dotted = ".".join(p)
            key = f"chart:{chart}:{dotted}"
            node = _schema_at(schema, list(p)) or {}
            target = SUBCHART_KEYS.get(p[0])
            if chart == "platform" and target and len(p) > 1:  # the subchart's schema describes it
                sub = json.loads((CHART_DIRS[target] / "values.schema.json").read_text())
                node = _schema_at(sub, list(p[1:])) or {}
            rows[key] = Row(key, f"chart:{chart}", json=p[-1], description=node.get("description", ""))
            rows[key].schema = node
    return rows


def chart_rows() -> dict[str, Row]:
    return dict(_chart_rows())


def subchart_target(row: Row) -> str | None:
    """An umbrella value under a subchart's key: the subchart row it sets (Helm passes it unchanged)."""
    if not row.key.startswith("chart:platform:"):
        return None
    path = row.key.split(":", 2)[2]
    head, _, rest = path.partition(".")
    sub = SUBCHART_KEYS.get(head)
    if not (sub and rest):
        return None
    target = f"chart:{sub}:{rest}"
    known = {k for k in chart_rows() if k.startswith(f"chart:{sub}:")}
    while target not in known and "." in target.split(":", 2)[2]:  # inside a free-form map of the subchart
        target = target.rsplit(".", 1)[0]
    return target


def all_rows() -> dict[str, Row]:
    return api_rows() | chart_rows()


def model_of(tkey: str) -> type[BaseModel] | None:
    """The API or configuration model of a row's type key (``v1beta1.ParetoConfig``)."""
    from dynamo_operator.api import v1alpha1, v1beta1
    from dynamo_operator.api.config import types as config_types

    module, _, name = tkey.partition(".")
    mods = {"v1alpha1": v1alpha1, "v1beta1": v1beta1, "config": config_types}
    for mod in [mods[module]] if module in mods else [v1beta1, v1alpha1, config_types]:
        model = getattr(mod, name, None)
        if isinstance(model, type) and issubclass(model, BaseModel) and type_key(model) == tkey:
            return model
    return None


def type_description(row: Row) -> str:
    """The reference's text about the row's type (the model's docstring): where the seed says a whole
    type is kept only for compatibility, or not written yet."""
    model = model_of(row.type_key) if row.type_key else None
    return " ".join((model.__doc__ or "").split()) if model is not None else ""
