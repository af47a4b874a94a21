"""Registry entries (see the package docstring)."""

from __future__ import annotations

from ..status import Status, StorageOnly, acts, refused  # noqa: F401

TYPES: dict[str, dict[str, Status]] = {}
