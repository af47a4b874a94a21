"""Copying JSON trees (dicts, lists and scalars, as the API serves objects).

``copy.deepcopy`` keeps a memo of every node to preserve shared references and cycles, which JSON cannot
have; on the objects the operator converts and compares on every pass it was a third of the conversion's
time. ``copy_tree`` copies containers and shares the immutable leaves."""

from __future__ import annotations

from typing import Any


def copy_tree(value: Any) -> Any:
    """A copy of a JSON tree: new dicts and lists all the way down, the same (immutable) leaves."""
    if isinstance(value, dict):
        return {k: copy_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_tree(v) for v in value]
    return value
