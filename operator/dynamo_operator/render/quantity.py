"""Quantities are read by ``api.quantity`` (the configuration's checks use it too); the renderer's modules
import it from here."""

from __future__ import annotations

from dynamo_operator.api.quantity import parse_quantity

__all__ = ["parse_quantity"]
