"""A condition as the pure status computations of ``render/`` return it.

``render`` does not import the controllers package (which pulls in the runtime), so it hands conditions
back as ``Cond`` and the controllers upsert them with ``controllers.status.set_condition``, the one place
that decides when ``lastTransitionTime`` moves.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cond:
    """A condition to set: its type, whether it holds, a typed CamelCase reason and a message for people."""

    type: str
    ok: bool
    reason: str
    message: str
