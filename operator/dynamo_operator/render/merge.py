"""Merging user input over operator defaults: env by name, named lists by name, containers by field."""

from __future__ import annotations

import copy
from collections.abc import Iterable

from .probes import PROBE_KINDS


def dedupe_by_name(items: Iterable[dict]) -> list[dict]:
    """Keep one entry per ``name``: the last value wins, at the position of the last occurrence."""
    items = list(items)
    last = {item.get("name"): i for i, item in enumerate(items)}
    return [item for i, item in enumerate(items) if last[item.get("name")] == i]


def merge_env(defaults: Iterable[dict], *user_lists: Iterable[dict] | None) -> list[dict]:
    """Operator defaults the user did not set, then the user's lists in order (later lists win).

    Every variable appears once. User entries keep their own order, so an entry may reference
    (``$(VAR)``) any default and any earlier user entry.
    """
    user: list[dict] = []
    for lst in user_lists:
        for item in lst or []:
            user = [u for u in user if u.get("name") != item.get("name")]
            user.append(copy.deepcopy(item))
    user = dedupe_by_name(user)
    names = {u.get("name") for u in user}
    return [copy.deepcopy(d) for d in defaults if d.get("name") not in names] + user


def merge_named(defaults: Iterable[dict], user: Iterable[dict] | None, key: str = "name") -> list[dict]:
    """Named-list merge: a user item replaces the default with the same key in place; new ones follow."""
    out = [copy.deepcopy(d) for d in defaults]
    index = {d.get(key): i for i, d in enumerate(out)}
    for item in user or []:
        k = item.get(key)
        if k in index:
            out[index[k]] = copy.deepcopy(item)
        else:
            index[k] = len(out)
            out.append(copy.deepcopy(item))
    return out


def merge_container(base: dict, user: dict | None) -> dict:
    """Field-wise merge of the user's ``main`` container over the operator's base container.

    Set user fields win; ``env`` merges by name (user wins, once), ``ports`` by name, ``volumeMounts`` by
    mount path; a user probe replaces the default probe of that kind wholesale.
    """
    out = copy.deepcopy(base)
    if not user:
        return out
    for key, value in user.items():
        if value is None:
            continue
        if key == "env":
            out["env"] = merge_env(base.get("env") or [], value)
        elif key == "ports":
            out["ports"] = merge_named(base.get("ports") or [], value)
        elif key == "volumeMounts":
            out["volumeMounts"] = merge_named(base.get("volumeMounts") or [], value, key="mountPath")
        elif key in PROBE_KINDS:
            out[key] = copy.deepcopy(value)
        elif key == "resources" and isinstance(value, dict) and isinstance(out.get("resources"), dict):
            merged = copy.deepcopy(out["resources"])
            merged.update(copy.deepcopy(value))
            out["resources"] = merged
        else:
            out[key] = copy.deepcopy(value)
    return out


def deep_merge(base: dict, override: dict) -> dict:
    """Recursive dict merge; ``override`` wins, lists are replaced."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out
