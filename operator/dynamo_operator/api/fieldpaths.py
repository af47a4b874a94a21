"""Field paths of the API's objects: how one prints, and how a v1beta1 path reads in v1alpha1.

A path is a tuple of steps: a field name, a list index, or ``("key", name)`` for a map key. The converted
kinds are validated (and their warnings found, ``render/notices.py``) in v1beta1, and each path is
translated into the shape the user wrote (``spec.components[1].sharedMemorySize`` becomes
``spec.services[Worker].sharedMemory.size``), so admission errors and warnings, ``dynamo-operator render``
and the controllers' Events name a field the way its author wrote it.
"""

from __future__ import annotations

import json
from typing import Any

from . import conversion
from .jsontree import d, lst

Path = tuple[Any, ...]


def format_path(path: Path) -> str:
    """``spec.services[Worker].replicas``: dots between names, brackets around indexes and map keys."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif isinstance(step, tuple):  # a map key: ("key", name)
            out += f"[{step[1]}]"
        else:
            out += ("." if out else "") + str(step)
    return out or "<object>"


def show(value: Any) -> str:
    """A value as a message quotes it: JSON, cut at 80 characters."""
    try:
        text = json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _container_tail(rest: Path, beta_comp: dict, alpha_svc: dict) -> Path:
    """``rest`` = ("spec", "containers", i, ...) of a v1beta1 pod template, in the v1alpha1 service."""
    containers = lst(d(d(beta_comp.get("podTemplate")).get("spec")).get("containers"))
    name = d(containers[rest[2]]).get("name") if rest[2] < len(containers) else None
    after = rest[3:]
    if name == conversion.MAIN_CONTAINER and after[:1] == ("resources",):
        return after  # v1alpha1 keeps the main container's resources on the service
    if name == conversion.MAIN_CONTAINER:
        return ("extraPodSpec", "mainContainer", *after)
    if name == conversion.FRONTEND_SIDECAR and isinstance(alpha_svc.get("frontendSidecar"), dict):
        return ("frontendSidecar", *after)
    alpha_containers = lst(d(alpha_svc.get("extraPodSpec")).get("containers"))
    for k, ctr in enumerate(alpha_containers):
        if d(ctr).get("name") == name:
            return ("extraPodSpec", "containers", k, *after)
    return ("extraPodSpec", "containers", *after)


def _component_tail(tail: Path, beta_comp: dict, alpha_svc: dict) -> Path:
    if not tail:
        return ()
    head, rest = tail[0], tail[1:]
    if head == "name":
        return ()
    if head == "type":
        return ("componentType", *rest)
    if head == "sharedMemorySize":
        return ("sharedMemory", "size", *rest)
    if head == "scalingAdapter":
        return ("scalingAdapter", "enabled", *rest)
    if head == "experimental" and rest:
        return rest
    if head == "podTemplate":
        if len(rest) >= 3 and rest[0] == "spec" and rest[1] == "containers" and isinstance(rest[2], int):
            return _container_tail(rest, beta_comp, alpha_svc)
        if rest and rest[0] == "spec":
            return ("extraPodSpec", *rest[1:])
        return ("extraPodSpec", *rest)
    return tail


def _dgd_path(path: Path, beta: dict, alpha: dict) -> Path:
    if path[:2] == ("spec", "env"):
        return ("spec", "envs", *path[2:])
    if path[:2] != ("spec", "components"):
        return path
    if len(path) == 2:
        return ("spec", "services")
    i = path[2]
    comps = lst(d(beta.get("spec")).get("components"))
    if not isinstance(i, int) or i >= len(comps):
        return ("spec", "services")
    name = d(comps[i]).get("name")
    svc = d(d(d(alpha.get("spec")).get("services")).get(name))
    return ("spec", "services", ("key", name), *_component_tail(path[3:], d(comps[i]), svc))


def to_alpha_path(kind: str, path: Path, beta: dict, alpha: dict) -> Path:
    """A v1beta1 field path of ``beta`` as the matching path of the v1alpha1 object ``alpha``."""
    if kind == "DynamoGraphDeployment":
        return _dgd_path(path, beta, alpha)
    if kind == "DynamoComponentDeployment":
        if path[:2] == ("spec", "name"):
            return ("spec", "serviceName", *path[2:])
        if path[:1] == ("spec",) and len(path) > 1:
            spec_b, spec_a = d(beta.get("spec")), d(alpha.get("spec"))
            return ("spec", *_component_tail(path[1:], spec_b, spec_a))
        return path
    if kind == "DynamoGraphDeploymentScalingAdapter" and path[:3] == ("spec", "dgdRef", "componentName"):
        return ("spec", "dgdRef", "serviceName", *path[3:])
    if kind == "DynamoGraphDeploymentRequest":
        return _dgdr_path(path)
    return path


def _dgdr_path(path: Path) -> Path:
    """A DGDR's typed v1beta1 field as the key of the v1alpha1 profiler blob that holds it. The request's
    conversion (and its models) load here, on a DGDR's first path: ``render`` needs paths, not DGDRs."""
    from .dgdr_conversion import BLOB_FIELDS

    if path == ("spec", "image"):
        return ("spec", "profilingConfig", "profilerImage")
    for alpha_path, beta_path, _ in BLOB_FIELDS:
        if path[1 : 1 + len(beta_path)] == beta_path and path[:1] == ("spec",):
            return ("spec", "profilingConfig", "config", *alpha_path, *path[1 + len(beta_path) :])
    return path
