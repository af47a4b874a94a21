"""Just enough of Kubernetes resource.Quantity: the shared-memory rule, claim sizes, the configuration's
checkpoint claim size (in ``api`` so the configuration's checks and the renderer read quantities alike)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_QTY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


def parse_quantity(value: object) -> Decimal:
    """The numeric value of a quantity (``8Gi``, ``"0"``, ``512Mi``, ``0``); ValueError when malformed."""
    if isinstance(value, bool):
        raise ValueError(f"not a quantity: {value!r}")
    if isinstance(value, int | float):
        return Decimal(str(value))
    m = _QTY.match(str(value).strip())
    if not m:
        raise ValueError(f"not a quantity: {value!r}")
    try:
        number = Decimal(m.group(1))
    except InvalidOperation as exc:
        raise ValueError(f"not a quantity: {value!r}") from exc
    suffix = m.group(2) or ""
    binary = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
    decimal = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "k": 10**3, "M": 10**6}
    decimal |= {"G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
    factor = binary.get(suffix) or decimal.get(suffix) or 1
    return number * Decimal(factor)
