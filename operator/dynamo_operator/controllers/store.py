"""The one seam between the controllers' internal shape and the version spoken on the wire.

Controllers work on **v1beta1** dicts (what ``render`` takes and produces) and talk to the apiserver in
``WIRE_VERSION``: today the storage version **v1alpha1**, which the apiserver stores and serves without
calling the conversion webhook, so the controllers do not depend on the webhook being up.  Switching the
wire to v1beta1 later is this one constant.

Everything that crosses the seam goes through ``to_internal`` (read) and ``to_wire`` (write); status is
converted with its object (``status_to_wire``) because the field names differ (``components`` vs
``services``, ``component`` vs ``service``).

``to_internal`` remembers its recent answers for the live objects it was given (``_Converted``): one pass
converts the same live objects several times (the graph, its components for status, the status writer),
as does every pass that finds them unchanged; in a burst of new graphs conversions were a third of the
operator's CPU.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from dynamo_operator.api.conversion import ANNOTATION_PREFIX, convert
from dynamo_operator.api.jsontree import copy_tree
from dynamo_operator.render import names
from dynamo_operator.render.scaling import DGDSA_KIND
from dynamo_operator.runtime.client import ResourceDescriptor, custom
from dynamo_operator.runtime.informer import PACKED, unpack

GROUP = names.GROUP
WIRE_VERSION = "v1alpha1"
INTERNAL_VERSION = "v1beta1"

DGD = custom(GROUP, WIRE_VERSION, "dynamographdeployments", names.DGD_KIND)
DCD = custom(GROUP, WIRE_VERSION, "dynamocomponentdeployments", names.DCD_KIND)
# scaling adapters are read and written in the storage version like DGDs and DCDs (``dgdsa``)
DGDSA = custom(GROUP, WIRE_VERSION, "dynamographdeploymentscalingadapters", DGDSA_KIND)
# DynamoCheckpoint has one version; the graph family reads them (restores, WaitForCheckpoint) and creates
# the automatic ones, the checkpoint controller runs their Jobs
CHECKPOINTS = custom(GROUP, "v1alpha1", "dynamocheckpoints", "DynamoCheckpoint")


def _version(obj: dict) -> str:
    return str(obj.get("apiVersion", "")).rpartition("/")[2]


class _Converted:
    """A bounded LRU of internal-version conversions of the very dicts the caches and write responses hold
    (128: the objects the workers' passes have in hand; a pass converts its graph and components several
    times, a pass an hour later finds them evicted either way, and each entry is a whole object).

    A hit needs the same dict (``is``), not only its uid and resourceVersion: a copy changed locally (a
    status body about to be written) keeps the resourceVersion it was read at, and must be converted
    afresh. The operator never changes the objects its caches hold."""

    def __init__(self, size: int = 128):
        self.size = size
        self._items: OrderedDict[tuple[str, str], tuple[dict, dict]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, obj: dict) -> dict:
        md = obj.get("metadata") or {}
        uid, rv = md.get("uid"), md.get("resourceVersion")
        if not uid or not rv:
            return convert(unpack(obj), INTERNAL_VERSION)
        key = (uid, rv)
        # a lean cache entry (``controllers/caches.py``) is known by its packed whole, which no copy shares
        anchor = obj.get(PACKED, obj)
        with self._lock:
            entry = self._items.get(key)
            hit = entry[1] if entry is not None and entry[0] is anchor else None
            if hit is not None:
                self._items.move_to_end(key)
                self.hits += 1
        if hit is None:
            hit = convert(unpack(obj), INTERNAL_VERSION)
            with self._lock:
                self.misses += 1
                self._items[key] = (anchor, hit)
                self._items.move_to_end(key)
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
        return copy_tree(hit)


_converted = _Converted()


def to_internal(obj: dict) -> dict:
    """A DGD/DCD as read from the API (any served version; a lean cache entry is unpacked) in the internal
    version (a new dict)."""
    if _version(obj) == INTERNAL_VERSION:
        return copy_tree(unpack(obj))
    return _converted.get(obj)


def to_wire(obj: dict) -> dict:
    """An internal-version DGD/DCD in the wire version (a new dict)."""
    if _version(obj) == WIRE_VERSION:
        return copy_tree(obj)
    return convert(obj, WIRE_VERSION)


def status_to_wire(live_wire: dict, status: dict) -> dict:
    """The wire form of an internal-version ``status`` for the object ``live_wire``."""
    internal = to_internal(live_wire)
    internal["status"] = copy_tree(status)
    return to_wire(internal).get("status") or {}


def is_conversion_annotation(key: str) -> bool:
    return key.startswith(ANNOTATION_PREFIX)


def descriptor(kind: str) -> ResourceDescriptor:
    return {names.DGD_KIND: DGD, names.DCD_KIND: DCD}[kind]
