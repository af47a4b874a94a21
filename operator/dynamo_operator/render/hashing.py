"""Content hash of a desired child, stamped as an annotation so controllers write only on change."""

from __future__ import annotations

import hashlib
import json

from .names import ANN_SPEC_HASH

_SKIP = {"apiVersion", "kind", "metadata", "status"}


def content_hash(obj: dict) -> str:
    """SHA-256 over the content (``spec``, or every top-level field but apiVersion/kind/metadata/status)
    plus the object's labels and annotations (the hash annotation itself excluded)."""
    meta = obj.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != ANN_SPEC_HASH}
    content = {"spec": obj["spec"]} if "spec" in obj else {k: v for k, v in obj.items() if k not in _SKIP}
    doc = {"content": content, "labels": meta.get("labels") or {}, "annotations": annotations}
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def stamp(obj: dict) -> dict:
    """Set ``nvidia.com/dynamo-spec-hash`` on ``obj`` (in place) and return it."""
    meta = obj.setdefault("metadata", {})
    annotations = meta.setdefault("annotations", {})
    annotations.pop(ANN_SPEC_HASH, None)
    annotations[ANN_SPEC_HASH] = content_hash(obj)
    return obj
