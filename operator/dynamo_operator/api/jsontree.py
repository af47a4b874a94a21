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


def put(dst: dict, key: str, value: Any) -> None:
    """Set ``key`` unless ``value`` is empty: a conversion must not tell absent and empty apart."""
    if value is not None and value != {} and value != []:
        dst[key] = value


def copy_keys(src: dict, dst: dict, keys: tuple[str, ...]) -> None:
    """Copy each of ``keys`` that ``src`` has into ``dst``."""
    for key in keys:
        if key in src:
            dst[key] = copy_tree(src[key])


def get_path(tree: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` in nested dicts, or None where a step is missing or not a dict."""
    node = tree
    for step in path:
        if not isinstance(node, dict) or step not in node:
            return None
        node = node[step]
    return node


def set_path(tree: dict, path: tuple[str, ...], value: Any) -> None:
    """Set ``value`` at ``path``, creating the dicts on the way (an existing non-dict step is replaced)."""
    node = tree
    for step in path[:-1]:
        if not isinstance(node.get(step), dict):
            node[step] = {}
        node = node[step]
    node[path[-1]] = value


def d(value: Any) -> dict:
    """A tolerant accessor: ``value`` when it is an object, else an empty one (a wrong type reads as
    absent; the rule that needs the field reports its type)."""
    return value if isinstance(value, dict) else {}


def lst(value: Any) -> list:
    """``value`` when it is a list, else an empty one (as :func:`d`)."""
    return value if isinstance(value, list) else []
