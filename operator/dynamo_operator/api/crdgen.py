"""Render the CustomResourceDefinitions from the pydantic models.

``python -m dynamo_operator.api.crdgen --out crds`` writes one YAML file per CRD; ``--check`` exits 1
when the files on disk differ from what the models produce, so a model change without ``make crds``
fails CI instead of shipping a schema that disagrees with the code.

The walker is deliberately small and explicit rather than a post-processed ``model_json_schema``: CRDs
need a *structural* schema (every node typed, no ``$ref``, no ``anyOf`` with null), and every validation
marker of the API reference (minimum, maximum, lengths, pattern, required, maxItems, enum, schemaless)
must land on the exact property it belongs to.
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

import annotated_types
import yaml
from pydantic import BaseModel, StringConstraints
from pydantic.fields import FieldInfo

from dynamo_operator.api import registry
from dynamo_operator.api.meta import CrdSchema, KubeModel, resolved_fields

HELM_KEEP = {"helm.sh/resource-policy": "keep"}


def _constraints(meta: list[Any]) -> dict[str, Any]:
    """Length, bound and pattern constraints, kept neutral: the caller maps lengths by JSON type."""
    out: dict[str, Any] = {}
    for m in meta:
        if isinstance(m, annotated_types.Ge):
            out["minimum"] = m.ge
        elif isinstance(m, annotated_types.Le):
            out["maximum"] = m.le
        elif isinstance(m, annotated_types.MinLen):
            out["_min"] = m.min_length
        elif isinstance(m, annotated_types.MaxLen):
            out["_max"] = m.max_length
        elif isinstance(m, StringConstraints):
            if m.min_length is not None:
                out["_min"] = m.min_length
            if m.max_length is not None:
                out["_max"] = m.max_length
            if m.pattern is not None:
                out["pattern"] = m.pattern
        elif getattr(m, "pattern", None) is not None:
            out["pattern"] = m.pattern
        # Pydantic folds ge/max_length/... given to Field() into one general-metadata object.
        for attr, key in (
            ("ge", "minimum"),
            ("le", "maximum"),
            ("min_length", "_min"),
            ("max_length", "_max"),
        ):
            value = getattr(m, attr, None)
            if value is not None and not isinstance(m, annotated_types.BaseMetadata):
                out[key] = value
    return out


def _apply(schema: dict[str, Any], cons: dict[str, Any]) -> dict[str, Any]:
    schema = dict(schema)
    kind = schema.get("type")
    names = {
        "array": ("minItems", "maxItems"),
        "object": ("minProperties", "maxProperties"),
    }.get(kind or "", ("minLength", "maxLength"))
    for key, value in cons.items():
        if key == "_min":
            schema[names[0]] = value
        elif key == "_max":
            schema[names[1]] = value
        else:
            schema[key] = value
    return schema


def schema_for_type(tp: Any, meta: list[Any] | None = None) -> dict[str, Any]:
    """Structural OpenAPI v3 schema of a Python type (an annotation of a model field)."""
    meta = list(meta or [])
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(tp)
        return schema_for_type(base, extra + meta)
    for m in meta:
        if isinstance(m, CrdSchema):
            return _apply(m.schema, _constraints(meta))
    cons = _constraints(meta)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return schema_for_type(args[0], meta)
        raise TypeError(f"unions are not structural: {tp}")
    if origin is Literal:
        values = list(typing.get_args(tp))
        return _apply({"type": "string", "enum": values}, cons)
    if origin is list:
        (item,) = typing.get_args(tp)
        return _apply({"type": "array", "items": schema_for_type(item)}, cons)
    if origin is dict:
        _, value = typing.get_args(tp)
        if value is Any:
            return _apply({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, cons)
        return _apply({"type": "object", "additionalProperties": schema_for_type(value)}, cons)
    if tp is str:
        return _apply({"type": "string"}, cons)
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return _apply({"type": "integer"}, cons)
    if tp is float:
        return _apply({"type": "number"}, cons)
    if tp is Any:
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _apply(schema_for_model(tp), cons)
    raise TypeError(f"no CRD schema for {tp!r}")


def schema_for_field(info: FieldInfo) -> dict[str, Any]:
    schema = schema_for_type(info.annotation, list(info.metadata))
    if info.description:
        schema = {"description": info.description, **schema}
    if isinstance(info.json_schema_extra, dict):
        schema.update(info.json_schema_extra)
    return schema


def schema_for_model(model: type[BaseModel]) -> dict[str, Any]:
    """Object schema of a model; Kubernetes core types use their fixed pass-through schema."""
    if issubclass(model, KubeModel) and model.crd_schema is not None:
        return dict(model.crd_schema)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, info in resolved_fields(model).items():
        key = info.alias or name
        properties[key] = schema_for_field(info)
        if info.is_required():
            required.append(key)
    schema: dict[str, Any] = {"type": "object"}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = required
    rules = getattr(model, "crd_validations", None)
    if rules:
        schema["x-kubernetes-validations"] = list(rules)
    return schema


def _root_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = schema_for_model(model)
    # The apiserver owns metadata's schema and refuses anything but `type: object` there.
    if "metadata" in schema.get("properties", {}):
        schema["properties"]["metadata"] = {"type": "object"}
    doc = (model.__doc__ or "").strip()
    return {"description": doc, **schema} if doc else schema


def render_crd(info: registry.KindInfo) -> dict[str, Any]:
    """The CustomResourceDefinition of one kind (apiextensions.k8s.io/v1)."""
    versions = []
    for version, model in info.models.items():
        subresources: dict[str, Any] = {}
        if info.status_subresource:
            subresources["status"] = {}
        if info.scale is not None:
            subresources["scale"] = {
                "specReplicasPath": info.scale.spec_replicas_path,
                "statusReplicasPath": info.scale.status_replicas_path,
                "labelSelectorPath": info.scale.label_selector_path,
            }
        entry: dict[str, Any] = {
            "name": version,
            "served": True,
            "storage": version == info.storage_version,
        }
        if version in info.deprecated_versions:
            entry["deprecated"] = True
            entry["deprecationWarning"] = info.deprecation_warning(version)
        entry["schema"] = {"openAPIV3Schema": _root_schema(model)}
        entry["subresources"] = subresources
        entry["additionalPrinterColumns"] = [c.to_dict() for c in info.printer_columns[version]]
        versions.append(entry)
    spec: dict[str, Any] = {
        "group": registry.GROUP,
        "names": {
            "kind": info.kind,
            "listKind": f"{info.kind}List",
            "plural": info.plural,
            "singular": info.singular,
            "shortNames": list(info.short_names),
            "categories": list(info.categories),
        },
        "scope": info.scope,
        "versions": versions,
    }
    if info.multi_version:
        spec["conversion"] = {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {
                        "name": registry.CONVERSION_SERVICE_NAME,
                        "namespace": registry.CONVERSION_SERVICE_NAMESPACE,
                        "path": registry.CONVERSION_PATH,
                        "port": registry.CONVERSION_PORT,
                    }
                },
            },
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": info.crd_name,
            "annotations": dict(HELM_KEEP),
            "labels": {"app.kubernetes.io/part-of": "dynamo-platform"},
        },
        "spec": spec,
    }


def render_crds() -> list[dict[str, Any]]:
    """Every CRD of the platform, in a stable order."""
    return [render_crd(info) for _, info in sorted(registry.KINDS.items())]


def dump_yaml(crd: dict[str, Any]) -> str:
    header = "# Generated by `python -m dynamo_operator.api.crdgen` from the API models. Do not edit.\n"
    return header + yaml.safe_dump(crd, sort_keys=False, width=120, allow_unicode=True)


def expected_files() -> dict[str, str]:
    """File name -> content of the generated ``crds/`` directory."""
    return {f"{GROUP_PREFIX}{crd['spec']['names']['plural']}.yaml": dump_yaml(crd) for crd in render_crds()}


GROUP_PREFIX = f"{registry.GROUP}_"


def stale_files(out: Path) -> list[str]:
    """Names of files in ``out`` that are missing, different or no longer generated."""
    want = expected_files()
    stale = [
        name for name, text in want.items() if not (out / name).is_file() or (out / name).read_text() != text
    ]
    if out.is_dir():
        stale += sorted(p.name for p in out.glob("*.yaml") if p.name not in want)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="crds", type=Path, help="directory for the CRD files")
    parser.add_argument("--check", action="store_true", help="exit 1 if --out is not up to date")
    args = parser.parse_args(argv)
    out: Path = args.out
    if args.check:
        stale = stale_files(out)
        if stale:
            print(f"{out} is stale ({', '.join(stale)}); run `make crds`", file=sys.stderr)
            return 1
        return 0
    out.mkdir(parents=True, exist_ok=True)
    want = expected_files()
    for old in out.glob("*.yaml"):
        if old.name not in want:
            old.unlink()
    total = 0
    for name, text in want.items():
        (out / name).write_text(text)
        total += len(text.encode())
        print(f"{out / name}: {len(text.encode())} bytes")
    print(f"total: {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
