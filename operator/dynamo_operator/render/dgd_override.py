"""``spec.overrides.dgd`` of a DynamoGraphDeploymentRequest: a partial DynamoGraphDeployment merged into the
graph the profiler generated, with the rules the seed gives it:

* ``apiVersion`` ``nvidia.com/v1alpha1`` or ``nvidia.com/v1beta1`` and ``kind`` DynamoGraphDeployment; the
  override is merged in the schema of its own version (the generated graph is converted to that version
  first and back afterwards), and the result is v1beta1;
* v1beta1: structural merge: objects merge key by key, ``null`` deletes a key, lists of named objects merge
  item by item on their key (``name``; ``mountPath`` for ``volumeMounts``, ``containerPort`` for ``ports``),
  any other list is replaced whole;
* v1alpha1: objects merge key by key, ``null`` deletes (a service too), lists are replaced, except a
  worker service's ``extraPodSpec.mainContainer.args``, which keeps the legacy append (skipped when the
  generated args already end with them, so merging twice, here and in the profiler, changes nothing);
* topology is the profiler's: an override may change components (services) the generated graph has, not
  add new ones;
* ``metadata.labels`` and ``metadata.annotations`` are merged, ``metadata.name`` names the final graph; any
  other metadata is refused at admission (``override_errors``), since nothing would apply it.

Applying an override twice gives the same graph as applying it once: the profiler (upstream's merges
``overrides.dgd`` itself) and the operator may both apply it.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import ValidationError

from dynamo_operator.api import v1alpha1, v1beta1
from dynamo_operator.api.conversion import convert

from . import names

VERSIONS = (names.V1ALPHA1, names.V1BETA1)
METADATA_KEYS = ("name", "labels", "annotations")
LIST_KEYS = {"volumeMounts": "mountPath", "ports": "containerPort"}
_MODELS = {names.V1ALPHA1: v1alpha1.DynamoGraphDeployment, names.V1BETA1: v1beta1.DynamoGraphDeployment}


class OverrideError(ValueError):
    """The override cannot be applied to the generated graph; the message says why."""


# --------------------------------------------------------------------------------------------------
# what admission checks (the shape of the override alone)


def _schema_errors(override: dict) -> list[tuple[str, str]]:
    """Fields the override's own version does not have, or values of the wrong type (a partial graph:
    required fields may be missing)."""
    try:
        _MODELS[override["apiVersion"]].model_validate(_without_nulls(override))
    except ValidationError as e:
        return [
            (".".join(str(p) for p in err["loc"]), f"{err['msg']} (the {override['apiVersion']} schema)")
            for err in e.errors()
            if err["type"] != "missing"
        ]
    return []


def _without_nulls(tree: Any) -> Any:
    """``tree`` without its ``null`` members (deletions in a merge, not values the schema judges)."""
    if isinstance(tree, dict):
        return {k: _without_nulls(v) for k, v in tree.items() if v is not None}
    if isinstance(tree, list):
        return [_without_nulls(v) for v in tree]
    return tree


def _topology_shape_errors(override: dict) -> list[tuple[str, str]]:
    spec = override.get("spec") or {}
    if override["apiVersion"] == names.V1BETA1:
        comps = spec.get("components", [])
        if not isinstance(comps, list) or not all(isinstance(c, dict) and c.get("name") for c in comps):
            return [
                ("spec.components", "each entry must be an object with the name of a generated component")
            ]
    elif not isinstance(spec.get("services", {}), dict):
        return [("spec.services", "must map generated service names to their overrides")]
    return []


def override_errors(override: Any) -> list[tuple[str, str]]:
    """Why ``override`` cannot be an override, as (path relative to it, what to do); empty when it can."""
    if not isinstance(override, dict):
        return [("", "must be a DynamoGraphDeployment object (apiVersion, kind, metadata, spec)")]
    errors = []
    if override.get("kind") != names.DGD_KIND:
        errors.append(("kind", f"must be {names.DGD_KIND}, not {override.get('kind')!r}"))
    if override.get("apiVersion") not in VERSIONS:
        errors.append(("apiVersion", f"must be {' or '.join(VERSIONS)}, not {override.get('apiVersion')!r}"))
    md = override.get("metadata") or {}
    for key in sorted(set(md) - set(METADATA_KEYS) if isinstance(md, dict) else ()):
        errors.append(
            (
                f"metadata.{key}",
                "not applied (an override sets only the graph's name, labels and annotations; the graph "
                "lives in the request's namespace): remove it",
            )
        )
    name = md.get("name") if isinstance(md, dict) else None
    if name is not None and (not isinstance(name, str) or names.dns_label(name) != name):
        errors.append(("metadata.name", f"{name!r} is not a valid name (lower-case letters, digits, '-')"))
    if "status" in override:
        errors.append(("status", "not applied (the graph's status is its own): remove it"))
    if not isinstance(override.get("spec", {}), dict):
        errors.append(("spec", "must be an object"))
    if errors:
        return errors
    return _topology_shape_errors(override) or _schema_errors(override)


# --------------------------------------------------------------------------------------------------
# merging


def _list_key(field: str | None) -> str:
    return LIST_KEYS.get(field or "", "name")


def _keyed(items: list, key: str) -> bool:
    return all(isinstance(i, dict) and key in i for i in items)


def merge_structural(base: Any, patch: Any, field: str | None = None) -> Any:
    """The v1beta1 merge of ``patch`` into ``base`` (neither is modified)."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = copy.deepcopy(base)
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = merge_structural(out.get(key), value, key)
        return out
    key = _list_key(field)
    if isinstance(base, list) and isinstance(patch, list) and _keyed(base, key) and _keyed(patch, key):
        out = copy.deepcopy(base)
        index = {item[key]: i for i, item in enumerate(out)}
        for item in patch:
            if item[key] in index:
                out[index[item[key]]] = merge_structural(out[index[item[key]]], item, field)
            else:
                out.append(copy.deepcopy(item))
        return out
    if isinstance(patch, dict):
        return merge_structural({}, patch, field)
    return copy.deepcopy(patch)


def _merge_patch(base: Any, patch: Any) -> Any:
    """JSON merge patch (RFC 7386): objects merge, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


def _is_worker(service: dict) -> bool:
    return service.get("componentType") == "worker" or service.get("subComponentType") in (
        "prefill",
        "decode",
    )


def _merge_alpha_service(base: dict, patch: dict) -> dict:
    """One v1alpha1 service: merge patch, with a worker's args appended (once)."""
    patch = copy.deepcopy(patch)
    main_patch = ((patch.get("extraPodSpec") or {}).get("mainContainer")) or {}
    extra_args = main_patch.pop("args", None) if _is_worker(base) else None
    out = _merge_patch(base, patch)
    if isinstance(extra_args, list):
        main = out.setdefault("extraPodSpec", {}).setdefault("mainContainer", {})
        args = list(main.get("args") or [])
        if not extra_args or args[len(args) - len(extra_args) :] != extra_args:
            args += extra_args
        main["args"] = args
    return out


def _check_topology(present: list[str], wanted: list[str], what: str) -> None:
    unknown = [n for n in wanted if n not in present]
    if unknown:
        raise OverrideError(
            f"spec.overrides.dgd names {what} {', '.join(sorted(unknown))} that the generated graph does not "
            f"have (it has {', '.join(present) or 'none'}): an override can only change what the profiler "
            "generated"
        )


def _merge_beta(dgd: dict, spec_patch: dict) -> dict:
    present = [c.get("name") for c in (dgd.get("spec") or {}).get("components") or []]
    _check_topology(present, [c["name"] for c in spec_patch.get("components") or []], "components")
    out = copy.deepcopy(dgd)
    out["spec"] = merge_structural(out.get("spec") or {}, spec_patch)
    return out


def _merge_alpha(dgd: dict, spec_patch: dict) -> dict:
    alpha = convert(dgd, "v1alpha1")
    spec = alpha.setdefault("spec", {})
    services = spec.get("services") or {}
    patch_services = spec_patch.get("services") or {}
    _check_topology(list(services), list(patch_services), "services")
    rest = {k: v for k, v in spec_patch.items() if k != "services"}
    alpha["spec"] = _merge_patch(spec, rest)
    for name, svc_patch in patch_services.items():
        if svc_patch is None:  # merge-patch null: the service goes
            alpha["spec"]["services"].pop(name, None)
        else:
            alpha["spec"]["services"][name] = _merge_alpha_service(services[name], svc_patch)
    return convert(alpha, "v1beta1")


def _merge_metadata(dgd: dict, md: dict) -> None:
    out = dgd.setdefault("metadata", {})
    if md.get("name"):
        out["name"] = md["name"]
    for key in ("labels", "annotations"):
        if md.get(key):
            out[key] = {**(out.get(key) or {}), **md[key]}


def apply_override(dgd: dict, override: dict) -> dict:
    """``dgd`` (v1beta1, the generated graph) with ``override`` merged; raises ``OverrideError``."""
    errors = override_errors(override)
    if errors:
        raise OverrideError(
            "; ".join(f"spec.overrides.dgd.{path}: {what}".replace(". ", " ") for path, what in errors)
        )
    spec_patch = override.get("spec") or {}
    merge = _merge_beta if override["apiVersion"] == names.V1BETA1 else _merge_alpha
    out = merge(dgd, spec_patch)
    _merge_metadata(out, override.get("metadata") or {})
    return out
