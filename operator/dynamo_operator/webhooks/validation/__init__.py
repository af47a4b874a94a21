"""Admission validation for every nvidia.com kind: one rule set, all errors of a request at once.

One module per kind (``dgd``, ``dcd``, ``dgdr``, ``dgdsa``, ``model``, ``checkpoint``), the rules they share
in ``shared`` (the request ``Context`` and the component rules of DGDs and DCDs), errors accumulated as field
paths in ``field.ErrorList``.

DynamoGraphDeployment, DynamoComponentDeployment, DynamoGraphDeploymentRequest and
DynamoGraphDeploymentScalingAdapter are validated in v1beta1: a v1alpha1 object (and its old object) is
converted first with :func:`dynamo_operator.api.conversion.convert`, the v1beta1 rules run, and each error's
field path is translated back into the v1alpha1 shape (``api.fieldpaths``) so the user reads it in the version
they wrote. DynamoModel and DynamoCheckpoint exist only in v1alpha1.

Every error names its field path, what is wrong and what to do, in the apimachinery style
``<path>: <Type>: <value>: <detail>``. :func:`validate` never raises: input of any shape (the webhook also
receives requests the API server never sends) yields errors, not exceptions.

A terminating object (``metadata.deletionTimestamp`` set) is never blocked, so finalizers can always come
off; DELETE and CONNECT are not validated.
"""

from __future__ import annotations

import contextlib
from typing import Any

from dynamo_operator.api import conversion
from dynamo_operator.api.fieldpaths import to_alpha_path
from dynamo_operator.api.registry import GROUP
from dynamo_operator.render import notices

from .alpha_only import validate_alpha_only
from .checkpoint import validate_checkpoint
from .dcd import validate_dcd
from .dgd import validate_dgd
from .dgdr import validate_dgdr
from .dgdsa import validate_dgdsa
from .field import CAUSE_TYPES, INVALID, NOT_SUPPORTED, ErrorList, FieldError, Result, format_path
from .gms_alpha import check_alpha_gms
from .model import validate_model
from .pod_privileges import PodTemplatePolicy, check_pod_templates
from .podsnapshot import validate_pod_snapshot
from .shared import Context, d, grove_pathway

CONVERTED_KINDS = conversion.CONVERTIBLE_KINDS  # validated as v1beta1 whichever version they came in

__all__ = [
    "CAUSE_TYPES",
    "Context",
    "FieldError",
    "PodTemplatePolicy",
    "Result",
    "denial_message",
    "format_path",
    "grove_pathway",
    "to_alpha_path",
    "validate",
]


def validate(
    kind: str,
    version: str,
    obj: Any,
    old: Any = None,
    ctx: Context | None = None,
) -> Result:
    """Validate ``obj`` (the request's ``object``) of ``kind`` in ``version``; ``old`` is set on UPDATE."""
    ctx = ctx or Context()
    c = ErrorList()
    if not isinstance(obj, dict):
        c.add((), INVALID, "the object must be a JSON object")
        return c.result()
    if d(obj.get("metadata")).get("deletionTimestamp"):
        return Result()  # terminating: finalizers must always be able to come off
    if old is not None and not isinstance(old, dict):
        old = None
    for key in ("metadata", "spec"):
        if obj.get(key) is not None and not isinstance(obj[key], dict):
            c.add((key,), INVALID, "must be a JSON object", obj[key])
    if c.errors:
        return c.result()
    if kind in CONVERTED_KINDS:
        _validate_converted(c, kind, version, obj, old, ctx)
    elif kind == "DynamoModel":
        validate_model(c, obj, old)
    elif kind == "DynamoCheckpoint":
        validate_checkpoint(c, obj, old, ctx)
    elif kind in ("PodSnapshot", "PodSnapshotContent"):
        validate_pod_snapshot(c, kind, obj, old)
    else:
        c.add(("kind",), NOT_SUPPORTED, "this webhook does not validate that kind", kind)
    return c.result()


def _as_v1beta1(obj: dict, version: str) -> dict:
    if version == "v1beta1":
        return obj
    return conversion.convert(obj, "v1beta1")


def _validate_converted(
    c: ErrorList, kind: str, version: str, obj: dict, old: dict | None, ctx: Context
) -> None:
    """A kind with two versions: validate its v1beta1 form, report paths in the version it came in."""
    try:
        beta = _as_v1beta1(obj, version)
    except Exception as exc:
        c.add((), INVALID, f"cannot be read as a {kind} ({exc}); fix the object's structure")
        return
    try:
        beta_old = _as_v1beta1(old, version) if old is not None else None
    except Exception:
        beta_old = None
    if kind == "DynamoGraphDeployment":
        validate_dgd(c, beta, beta_old, ctx)
    elif kind == "DynamoComponentDeployment":
        validate_dcd(c, beta, beta_old, ctx)
    elif kind == "DynamoGraphDeploymentRequest":
        validate_dgdr(c, beta, obj, old, version)
    else:
        validate_dgdsa(c, beta)
    if version != "v1beta1":
        for err in c.errors:
            with contextlib.suppress(Exception):  # an unmappable path stays in v1beta1 terms
                err.path = to_alpha_path(kind, err.path, beta, obj)
        check_alpha_gms(c, kind, obj)  # what conversion keeps aside, in v1alpha1 paths already
    check_pod_templates(c, kind, version, beta, obj, beta_old, ctx)  # paths translated there
    if kind in ("DynamoGraphDeployment", "DynamoComponentDeployment"):
        validate_alpha_only(c, kind, obj, old, beta, ctx)
    if ctx.username is None or ctx.username not in ctx.operator_usernames:  # its DCDs carry the graph's
        for text in notices.warnings(obj, beta):  # accepted, with a field that has no effect
            c.warn(text)


def denial_message(kind: str, name: str | None, errors: list[FieldError]) -> str:
    """``<Kind>.nvidia.com "<name>" is invalid: [<error>, <error>...]``, as the API server words it."""
    what = f'{kind}.{GROUP} "{name}"' if name else f"{kind}.{GROUP}"
    if len(errors) == 1:
        return f"{what} is invalid: {errors[0]}"
    return f"{what} is invalid: [{', '.join(str(e) for e in errors)}]"
