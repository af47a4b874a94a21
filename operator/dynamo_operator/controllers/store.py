"""The one seam between the controllers' internal shape and the version spoken on the wire.

Controllers work on **v1beta1** dicts (what ``render`` takes and produces) and talk to the apiserver in
``WIRE_VERSION``: today the storage version **v1alpha1**, which the apiserver stores and serves without
calling the conversion webhook, so the controllers do not depend on the webhook being up.  Switching the
wire to v1beta1 later is this one constant.

Everything that crosses the seam goes through ``to_internal`` (read) and ``to_wire`` (write); status is
converted with its object (``status_to_wire``) because the field names differ (``components`` vs
``services``, ``component`` vs ``service``).
"""

from __future__ import annotations

import copy

from dynamo_operator.api.conversion import ANNOTATION_PREFIX, convert
from dynamo_operator.render import names
from dynamo_operator.runtime.client import ResourceDescriptor, custom

GROUP = names.GROUP
WIRE_VERSION = "v1alpha1"
INTERNAL_VERSION = "v1beta1"

DGD = custom(GROUP, WIRE_VERSION, "dynamographdeployments", names.DGD_KIND)
DCD = custom(GROUP, WIRE_VERSION, "dynamocomponentdeployments", names.DCD_KIND)


def _version(obj: dict) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[2]


def to_internal(obj: dict) -> dict:
    """A DGD/DCD as read from the API (any served version) in the internal version (a new dict)."""
    if _version(obj) == INTERNAL_VERSION:
        return copy.deepcopy(obj)
    return convert(obj, INTERNAL_VERSION)


def to_wire(obj: dict) -> dict:
    """An internal-version DGD/DCD in the wire version (a new dict)."""
    if _version(obj) == WIRE_VERSION:
        return copy.deepcopy(obj)
    return convert(obj, WIRE_VERSION)


def status_to_wire(live_wire: dict, status: dict) -> dict:
    """The wire form of an internal-version ``status`` for the object ``live_wire``."""
    internal = to_internal(live_wire)
    internal["status"] = copy.deepcopy(status)
    return to_wire(internal).get("status") or {}


def is_conversion_annotation(key: str) -> bool:
    return key.startswith(ANNOTATION_PREFIX)


def descriptor(kind: str) -> ResourceDescriptor:
    return {names.DGD_KIND: DGD, names.DCD_KIND: DCD}[kind]
