"""The PersistentVolumeClaims a graph asks the operator to create (v1alpha1 ``spec.pvcs[]`` with
``create: true``); components mount them by name (``volumeMounts``, ``render/pod.py``).

Why the claims carry no owner reference: a claim holds data (model weights, compilation caches) that the
API reference never says to delete, and an owner reference would let the garbage collector delete it with
the graph (a ``kubectl delete -f`` and re-apply would download every model again). So the operator creates
a claim when it is missing, marks it as its own (the managed-by label and the graph's name), grows it when
``size`` grows, and never deletes it: neither when the entry goes nor with the graph. A claim that already
exists and is not the operator's (the user's, or another graph's) is used as it is and never written.
``docs/storage.md`` says how to remove one.

``pvc_problems`` holds the rules admission applies (names, the fields ``create: true`` needs, access
modes, sizes, and what cannot change once the claim exists).
"""

from __future__ import annotations

import re

from dynamo_operator.api.alpha import alpha_spec

from . import names
from .context import RenderContext
from .hashing import stamp
from .quantity import parse_quantity

ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
REQUIRED_WITH_CREATE = ("storageClass", "size", "volumeAccessMode")


def graph_pvc_entries(dgd: dict) -> list[dict]:
    """The graph's ``spec.pvcs`` (its v1alpha1 spec, wherever it lives)."""
    pvcs = alpha_spec(dgd).get("pvcs")
    return [p for p in pvcs if isinstance(p, dict)] if isinstance(pvcs, list) else []


def build_pvc(dgd: dict, entry: dict, ctx: RenderContext) -> dict:
    meta = dgd["metadata"]
    spec: dict = {
        "accessModes": [entry["volumeAccessMode"]],
        "resources": {"requests": {"storage": str(entry["size"])}},
    }
    if entry.get("storageClass") is not None:
        spec["storageClassName"] = entry["storageClass"]
    return stamp(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": entry["name"],
                "namespace": meta.get("namespace") or "default",
                "labels": {names.LABEL_DGD_NAME: meta["name"], names.LABEL_MANAGED_BY: names.MANAGED_BY},
                "annotations": {names.ANN_OPERATOR_VERSION: ctx.operator_version},
            },
            "spec": spec,
        }
    )


def graph_pvcs(dgd: dict, ctx: RenderContext) -> list[dict]:
    """The claims to create for a (v1beta1 or v1alpha1) graph: its ``create: true`` entries."""
    return [build_pvc(dgd, e, ctx) for e in graph_pvc_entries(dgd) if e.get("create")]


def created_by(pvc: dict, graph: str) -> bool:
    """The operator created ``pvc`` for the graph ``graph`` (only those claims are ever written)."""
    labels = (pvc.get("metadata") or {}).get("labels") or {}
    return (
        labels.get(names.LABEL_MANAGED_BY) == names.MANAGED_BY and labels.get(names.LABEL_DGD_NAME) == graph
    )


def pvc_problems(entries: list, old_entries: list | None) -> list[tuple[tuple, str, str]]:
    """(path under ``spec.pvcs``, error type, message) for a graph's ``pvcs``; ``old_entries`` on UPDATE."""
    out: list[tuple[tuple, str, str]] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            out.append(((i,), "Invalid", "must be an object with a name"))
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not _DNS_SUBDOMAIN.match(name) or len(name) > 253:
            out.append(((i, "name"), "Invalid", "must be a PVC name: lowercase letters, digits, '-' and '.'"))
        elif name in seen:
            out.append(
                ((i, "name"), "Duplicate", f"repeats spec.pvcs[{seen[name]}]; give each PVC one entry")
            )
        else:
            seen[name] = i
        if entry.get("create"):
            out += _create_problems(i, entry)
    if old_entries:
        out += _update_problems(entries, old_entries)
    return out


def _create_problems(i: int, entry: dict) -> list[tuple[tuple, str, str]]:
    out: list[tuple[tuple, str, str]] = []
    for key in REQUIRED_WITH_CREATE:
        if entry.get(key) is None:
            out.append(
                (
                    (i, key),
                    "Required",
                    "required when create is true (the operator creates the claim with it)",
                )
            )
    mode = entry.get("volumeAccessMode")
    if mode is not None and mode not in ACCESS_MODES:
        out.append(((i, "volumeAccessMode"), "NotSupported", f"use one of {', '.join(ACCESS_MODES)}"))
    size = entry.get("size")
    if size is not None:
        try:
            ok = parse_quantity(size) > 0
        except ValueError:
            ok = False
        if not ok:
            out.append(((i, "size"), "Invalid", "must be a positive quantity such as 50Gi"))
    return out


def _update_problems(entries: list, old_entries: list) -> list[tuple[tuple, str, str]]:
    """A created claim's class and access mode cannot change and its size cannot shrink: the operator
    would have to delete the claim and its data, which it never does."""
    old = {e.get("name"): e for e in old_entries if isinstance(e, dict) and e.get("create")}
    out: list[tuple[tuple, str, str]] = []
    for i, entry in enumerate(entries):
        before = old.get(entry.get("name")) if isinstance(entry, dict) and entry.get("create") else None
        if before is None:
            continue
        for key in ("storageClass", "volumeAccessMode"):
            if entry.get(key) != before.get(key):
                out.append(
                    (
                        (i, key),
                        "Forbidden",
                        f"cannot change once the claim exists (was {before.get(key)!r}): the operator never "
                        "re-creates a claim, that would delete its data; delete the PVC yourself first, or "
                        "use a new name",
                    )
                )
        try:
            shrinks = parse_quantity(entry.get("size")) < parse_quantity(before.get("size"))
        except ValueError:
            shrinks = False
        if shrinks:
            out.append(
                (
                    (i, "size"),
                    "Forbidden",
                    f"a claim cannot shrink (was {before.get('size')}); keep or grow it",
                )
            )
    return out
