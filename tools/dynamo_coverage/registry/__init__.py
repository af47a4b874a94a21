"""The registry: for each row, what reads it and which test proves it (or why it is refused or stored
only). One module per area, each a dict ``type key -> {JSON name: status}`` (API and configuration) or
``chart -> {dotted value path: status}``; ``PENDING`` lists the rows other helpers are implementing now.
"""

from __future__ import annotations

from ..status import Pending, Status
from . import api_alpha, api_beta, api_common, chart, config, unresolved
from .pending import PENDING

_TYPES = (api_beta.TYPES, api_alpha.TYPES, api_common.TYPES, config.TYPES, unresolved.TYPES)


def entries() -> dict[str, Status]:
    """Row key -> status, for every row with a real entry."""
    out: dict[str, Status] = {}
    for types in _TYPES:
        for tkey, fields in types.items():
            for json_name, status in fields.items():
                out[f"{tkey}.{json_name}"] = status
    for chart_name, values in chart.VALUES.items():
        for path, status in values.items():
            out[f"chart:{chart_name}:{path}"] = status
    return out


def pending() -> dict[str, Pending]:
    return dict(PENDING)
