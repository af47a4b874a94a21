"""DynamoModel (v1alpha1 only): names, a lora model's source, and what may not change."""

from __future__ import annotations

from .field import INVALID, NOT_SUPPORTED, REQUIRED, ErrorList, show
from .shared import d

MODEL_TYPES = ("base", "lora", "adapter")
MODEL_URI_SCHEMES = ("s3://", "hf://", "file://")


def validate_model(c: ErrorList, obj: dict, old: dict | None) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(("spec",), REQUIRED, "a DynamoModel needs spec.modelName and spec.baseModelName")
        return
    if not spec.get("modelName"):
        c.add(
            ("spec", "modelName"),
            REQUIRED,
            'give the full model identifier, e.g. "meta-llama/Llama-3.3-70B-Instruct-lora"',
        )
    if not spec.get("baseModelName"):
        c.add(
            ("spec", "baseModelName"),
            REQUIRED,
            "give the base model name the serving components use in modelRef.name",
        )
    model_type = spec.get("modelType")
    if model_type is not None and model_type not in MODEL_TYPES:
        c.add(("spec", "modelType"), NOT_SUPPORTED, "use one of base, lora, adapter", model_type)
    _check_source(c, spec, model_type)
    if old is not None:
        _check_update(c, spec, d(old.get("spec")))


def _check_source(c: ErrorList, spec: dict, model_type: object) -> None:
    source = spec.get("source")
    if model_type == "lora":
        hint = "use s3://bucket/path, hf://org/model@revision or file:///path"
        if not isinstance(source, dict):
            c.add(("spec", "source"), REQUIRED, f"a lora model needs spec.source.uri; {hint}")
            return
        uri = source.get("uri")
        if not isinstance(uri, str) or not uri:
            c.add(("spec", "source", "uri"), REQUIRED, f"a lora model needs a source URI; {hint}")
        elif not uri.startswith(MODEL_URI_SCHEMES):
            c.add(("spec", "source", "uri"), INVALID, f"unsupported URI scheme; {hint}", uri)
    elif source is not None:
        c.warn("spec.source is ignored unless spec.modelType is lora")


def _check_update(c: ErrorList, spec: dict, old_spec: dict) -> None:
    if (spec.get("modelType") or "base") != (old_spec.get("modelType") or "base"):
        c.add(
            ("spec", "modelType"),
            INVALID,
            f"is immutable (was {show(old_spec.get('modelType') or 'base')}); create a new DynamoModel "
            "instead",
            spec.get("modelType"),
        )
    if spec.get("baseModelName") != old_spec.get("baseModelName"):
        c.add(
            ("spec", "baseModelName"),
            INVALID,
            f"is immutable (was {show(old_spec.get('baseModelName'))}): endpoint discovery is keyed on it; "
            "create a new DynamoModel instead",
            spec.get("baseModelName"),
        )
