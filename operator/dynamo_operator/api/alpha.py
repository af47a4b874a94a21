"""What only v1alpha1 can say, read where it lives: through the conversion, never from its record.

A DGD or DCD written in v1alpha1 may hold fields v1beta1 has no place for (a component's ``ingress``,
``componentType: main``, the graph's ``pvcs``). The operator works on v1beta1 (``controllers.store``), where
those fields travel in the conversion record (``nvidia.com/conversion-from-v1alpha1``, see ``conversion``).
Reading that record here would be a second, drifting reading of it; converting the object back to v1alpha1
is the one reading that restores exactly what the user wrote (and lets an edit made in v1beta1 win, as the
converter does). Every renderer that acts on such a field asks this module.

``with_alpha_fields`` is the other direction: a DCD the graph builds (v1beta1) gets its component's
v1alpha1-only fields the way a v1alpha1 DCD would hold them, so the stored (v1alpha1) DCD shows them and
the DCD's own renderer acts on them as for a DCD a user wrote.
"""

from __future__ import annotations

from typing import Any

from .conversion import annotation_for, convert
from .jsontree import copy_tree

ALPHA = "v1alpha1"
BETA = "v1beta1"
RECORD = annotation_for(ALPHA)  # on a v1beta1 object: what its v1alpha1 original held beyond v1beta1


def _version(obj: dict) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[2]


def may_hold_alpha_fields(obj: dict) -> bool:
    """``obj`` is v1alpha1, or v1beta1 with a conversion record: only then can it hold v1alpha1-only
    fields (an object written in v1beta1 cannot), so the others skip the conversion."""
    if _version(obj) == ALPHA:
        return True
    return RECORD in (((obj.get("metadata") or {}).get("annotations")) or {})


def alpha_spec(obj: dict) -> dict:
    """The v1alpha1 spec of a DGD or DCD given in either version; {} for a v1beta1 object without a
    conversion record (it holds nothing v1alpha1-only; callers read only such fields here)."""
    if _version(obj) == ALPHA:
        return obj.get("spec") or {}
    if not may_hold_alpha_fields(obj):
        return {}
    return convert(obj, ALPHA).get("spec") or {}


def alpha_service(dgd: dict, name: str) -> dict:
    """``spec.services[name]`` of a DGD's v1alpha1 form ({} when none)."""
    services = alpha_spec(dgd).get("services") or {}
    svc = services.get(name) if isinstance(services, dict) else None
    return svc if isinstance(svc, dict) else {}


def with_alpha_fields(obj: dict, fields: dict[str, Any]) -> dict:
    """A copy of the v1beta1 DGD/DCD ``obj`` whose v1alpha1 spec also has ``fields`` (top-level spec keys;
    None removes one). They ride in the conversion record, so writing the object stores them in its
    v1alpha1 spec, and reading it back (``alpha_spec``) returns them."""
    if not fields:
        return copy_tree(obj)
    alpha = convert(obj, ALPHA)
    spec = alpha.setdefault("spec", {})
    for key, value in fields.items():
        if value is None:
            spec.pop(key, None)
        else:
            spec[key] = copy_tree(value)
    return convert(alpha, BETA)
