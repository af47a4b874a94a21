"""Defaulting (mutating admission) as RFC 6902 JSON Patch operations against the object as sent.

Works directly on the request's version (the patch must address the object the API server holds):

* every component's ``replicas`` is 1 when unset (v1beta1 ``spec.components[*]``, v1alpha1
  ``spec.services.*``, and a DynamoComponentDeployment's ``spec``);
* on the Grove pathway a DGD component's ``minAvailable`` is 1 when unset (the API reference default);
* CREATE stamps ``nvidia.com/dynamo-operator-origin-version`` with the operator version when absent
  (DynamoGraphDeployment and DynamoComponentDeployment), so version-dependent behaviour stays fixed for the
  object's life;
* a standalone DynamoComponentDeployment gets its component name from ``metadata.name`` (v1beta1
  ``spec.name``, v1alpha1 ``spec.serviceName``);
* a DynamoGraphDeploymentRequest created without a profiler image gets the operator's (``images.profiler``;
  v1beta1 ``spec.image``, v1alpha1 ``spec.profilingConfig.profilerImage``), as upstream's defaulter does:
  the seed makes ``model`` the one required field, so the rest has defaults, and the request shows which.

Terminating objects are never patched. Malformed input yields no patch (validation reports it).
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.render.names import ANN_ORIGIN_VERSION

from .validation import Context, grove_pathway

STAMPED_KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment")

Patch = list[dict[str, Any]]


def escape(token: str) -> str:
    """A JSON Pointer reference token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def _component_defaults(comp: Any, pointer: str, patch: Patch, *, min_available: bool) -> None:
    if not isinstance(comp, dict):
        return
    if comp.get("replicas") is None:
        patch.append({"op": "add", "path": f"{pointer}/replicas", "value": 1})
    if min_available and comp.get("minAvailable") is None:
        patch.append({"op": "add", "path": f"{pointer}/minAvailable", "value": 1})


def default_patch(
    kind: str,
    version: str,
    obj: Any,
    ctx: Context | None = None,
    operator_version: str | None = None,
) -> Patch:
    """The JSON Patch that applies the defaults to ``obj`` (empty when nothing to do)."""
    ctx = ctx or Context()
    patch: Patch = []
    if not isinstance(obj, dict):
        return patch
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        return patch
    metadata = metadata or {}
    if metadata.get("deletionTimestamp"):
        return patch
    spec = obj.get("spec")

    if kind == "DynamoGraphDeployment" and isinstance(spec, dict):
        grove = grove_pathway(obj, ctx)
        if version == "v1alpha1":
            services = spec.get("services")
            if isinstance(services, dict):
                for name, svc in services.items():
                    pointer = f"/spec/services/{escape(str(name))}"
                    _component_defaults(svc, pointer, patch, min_available=grove)
        else:
            comps = spec.get("components")
            if isinstance(comps, list):
                for i, comp in enumerate(comps):
                    _component_defaults(comp, f"/spec/components/{i}", patch, min_available=grove)

    if kind == "DynamoComponentDeployment" and isinstance(spec, dict):
        _component_defaults(spec, "/spec", patch, min_available=False)
        key = "serviceName" if version == "v1alpha1" else "name"
        name = metadata.get("name")
        if not spec.get(key) and isinstance(name, str) and name:
            patch.append({"op": "add", "path": f"/spec/{key}", "value": name})

    if kind == "DynamoGraphDeploymentRequest" and isinstance(spec, dict) and ctx.operation == "CREATE":
        patch += _profiler_image(version, spec, ctx.profiler_image)

    if kind in STAMPED_KINDS and ctx.operation == "CREATE" and operator_version:
        annotations = metadata.get("annotations")
        if not isinstance(obj.get("metadata"), dict):
            patch.append(
                {
                    "op": "add",
                    "path": "/metadata",
                    "value": {"annotations": {ANN_ORIGIN_VERSION: operator_version}},
                }
            )
        elif not isinstance(annotations, dict):
            patch.append(
                {
                    "op": "add",
                    "path": "/metadata/annotations",
                    "value": {ANN_ORIGIN_VERSION: operator_version},
                }
            )
        elif ANN_ORIGIN_VERSION not in annotations:
            patch.append(
                {
                    "op": "add",
                    "path": f"/metadata/annotations/{escape(ANN_ORIGIN_VERSION)}",
                    "value": operator_version,
                }
            )
    return patch


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


def _profiler_image(version: str, spec: dict, image: str) -> Patch:
    """The profiler image of a request that names none."""
    if version == "v1beta1":
        return [{"op": "add", "path": "/spec/image", "value": image}] if _blank(spec.get("image")) else []
    prof = spec.get("profilingConfig")
    if prof is None:
        return [{"op": "add", "path": "/spec/profilingConfig", "value": {"profilerImage": image}}]
    if isinstance(prof, dict) and _blank(prof.get("profilerImage")):
        return [{"op": "add", "path": "/spec/profilingConfig/profilerImage", "value": image}]
    return []


def apply_patch(obj: Any, patch: Patch) -> Any:
    """Apply ``add`` operations (all this module emits) to a copy of ``obj``; for tests and dry runs."""
    import copy

    out = copy.deepcopy(obj)
    for op in patch:
        if op["op"] != "add":
            raise ValueError(f"unsupported op {op['op']}")
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        node = out
        for t in tokens[:-1]:
            node = node[int(t)] if isinstance(node, list) else node[t]
        last = tokens[-1]
        if isinstance(node, list):
            node.insert(len(node) if last == "-" else int(last), copy.deepcopy(op["value"]))
        else:
            node[last] = copy.deepcopy(op["value"])
    return out
