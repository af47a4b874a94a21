"""Entry-point normalisation: v1alpha1 -> v1beta1 conversion, then validation through the API models."""

from __future__ import annotations

import copy
import importlib
from typing import Any

from . import names
from .errors import RenderError, object_ref

SUPPORTED_KINDS = (names.DGD_KIND, names.DCD_KIND)


def _api(module: str) -> Any | None:
    try:
        return importlib.import_module(f"dynamo_operator.api.{module}")
    except ImportError:
        return None


def _loc_to_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "<object>"


def _validate_model(obj: dict, kind: str) -> dict:
    """Validate with ``dynamo_operator.api.v1beta1.<kind>`` when the API package is present."""
    mod = _api("v1beta1")
    model = getattr(mod, kind, None) if mod else None
    if model is None:
        return obj
    try:
        import pydantic
    except ImportError:  # pragma: no cover - pydantic is a dependency
        return obj
    try:
        validated = model.model_validate(obj)
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(x for x in err.get("loc", ()) if not (isinstance(x, str) and x.startswith("function-")))
        got = err.get("input")
        problem = err.get("msg", "invalid")
        if isinstance(got, str | int | float | bool):
            problem += f" (got {got!r})"
        raise RenderError(
            obj,
            _loc_to_path(loc),
            problem,
            "correct the field (see the API reference for its type and allowed values)",
        ) from exc
    except (ValueError, TypeError) as exc:
        raise RenderError(obj, "<object>", str(exc), "correct the object") from exc
    dumped = validated.model_dump(by_alias=True, exclude_none=True, mode="json")
    # Keep metadata exactly as given (models may not round-trip unknown metadata keys).
    dumped["metadata"] = copy.deepcopy(obj.get("metadata") or {})
    dumped.setdefault("apiVersion", obj.get("apiVersion"))
    dumped.setdefault("kind", kind)
    return dumped


def to_v1beta1(obj: dict) -> dict:
    """Convert (when v1alpha1) and validate one DGD or DCD; returns a new v1beta1 dict."""
    if not isinstance(obj, dict):
        raise RenderError(
            "<document>",
            "<root>",
            f"expected a mapping, got {type(obj).__name__}",
            f"give a {' or '.join(SUPPORTED_KINDS)} (a YAML mapping with apiVersion, kind, metadata, spec)",
        )
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if kind not in SUPPORTED_KINDS:
        raise RenderError(
            obj, "kind", f"cannot render kind {kind!r}", f"give a {' or '.join(SUPPORTED_KINDS)}"
        )
    if not isinstance(obj.get("metadata"), dict) or not obj["metadata"].get("name"):
        raise RenderError(obj, "metadata.name", "missing", f"give the {kind} a name")
    if api_version == names.V1ALPHA1:
        conv = _api("conversion")
        if conv is None:
            raise RenderError(
                obj, "apiVersion", "v1alpha1 conversion is not available", "use nvidia.com/v1beta1"
            )
        try:
            obj = conv.convert(copy.deepcopy(obj), "v1beta1")
        except RenderError:
            raise
        except Exception as exc:
            raise RenderError(
                obj, "<object>", f"cannot convert to v1beta1: {exc}", "fix the v1alpha1 object"
            ) from exc
    elif api_version != names.V1BETA1:
        raise RenderError(
            obj, "apiVersion", f"unsupported {api_version!r}", f"use {names.V1BETA1} or {names.V1ALPHA1}"
        )
    return _validate_model(copy.deepcopy(obj), kind)


__all__ = ["object_ref", "to_v1beta1"]
