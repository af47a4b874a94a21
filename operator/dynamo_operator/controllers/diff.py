"""Semantic comparison of a desired object with the live one (pure).

The apiserver adds defaults to what we write (``protocol: TCP``, ``imagePullPolicy``, ``revisionHistoryLimit``
...), drops empty values (``value: ""``, ``readOnly: false``) and canonicalises quantities (``0.5`` →
``500m``).  So "live equals desired" is decided as **desired ⊆ live**: every field we set is present with an
equal value; fields only the live object has are defaults (or someone else's additions, which the
generation check in ``sync`` catches for kinds that have a generation).  Equality is semantic:

* an empty desired value (``None``, ``""``, ``0``, ``False``, ``{}``, ``[]``) matches an absent live field;
* lists match element by element and must have the same length (a removed or added container, env var,
  port... is a difference);
* quantities under ``resources`` / ``sizeLimit`` / ``storage`` compare by value.

``first_difference`` returns a readable path of the first difference (for logs and events) or None.
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.render.quantity import parse_quantity

_QUANTITY_KEYS = {"resources", "sizeLimit", "storage", "limits", "requests"}


def is_empty(v: Any) -> bool:
    return v is None or v == "" or v is False or (v == 0 and not isinstance(v, bool)) or v == {} or v == []


def _quantity_equal(a: Any, b: Any) -> bool:
    try:
        return parse_quantity(a) == parse_quantity(b)
    except (ValueError, TypeError):
        return False


def _fmt(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


def first_difference(want: Any, have: Any, path: str = "", quantity: bool = False) -> str | None:
    """None when ``want`` ⊆ ``have`` semantically, else ``"<path>: want X, have Y"``."""
    if isinstance(want, dict):
        if have is None and all(is_empty(v) for v in want.values()):
            return None
        if not isinstance(have, dict):
            return f"{path or '<root>'}: want a mapping, have {_fmt(have)}"
        for k, v in want.items():
            sub = f"{path}.{k}" if path else str(k)
            hv = have.get(k)
            if k not in have or hv is None:
                if is_empty(v):
                    continue
                return f"{sub}: missing (want {_fmt(v)})"
            d = first_difference(v, hv, sub, quantity or k in _QUANTITY_KEYS)
            if d:
                return d
        return None
    if isinstance(want, list):
        if have is None and not want:
            return None
        if not isinstance(have, list):
            return f"{path}: want a list, have {_fmt(have)}"
        if len(want) != len(have):
            return f"{path}: want {len(want)} items, have {len(have)}"
        for i, (w, h) in enumerate(zip(want, have, strict=True)):
            d = first_difference(w, h, f"{path}[{i}]", quantity)
            if d:
                return d
        return None
    if want == have and type(want) is type(have):
        return None
    if is_empty(want) and is_empty(have):
        return None
    if isinstance(want, bool) or isinstance(have, bool):
        return f"{path}: want {_fmt(want)}, have {_fmt(have)}"
    if isinstance(want, int | float) and isinstance(have, int | float) and want == have:
        return None
    if quantity and _quantity_equal(want, have):
        return None
    return f"{path}: want {_fmt(want)}, have {_fmt(have)}"


def subset(want: Any, have: Any) -> bool:
    return first_difference(want, have) is None


def same(a: Any, b: Any) -> bool:
    """Semantic equality both ways (for content the apiserver does not default, e.g. ConfigMap data)."""
    return first_difference(a, b) is None and first_difference(b, a) is None
