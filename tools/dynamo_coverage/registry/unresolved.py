"""Registry entries (see the package docstring): drafted with ``python -m dynamo_coverage --draft`` and
held to the strict checks of ``check`` (the code names the field and its context, the test names the
field); an ``acts`` without a test is shown as untested."""

from __future__ import annotations

from ..status import Converted, Rendered, Status, StorageOnly, Unresolved, acts, refused  # noqa: F401

TYPES: dict[str, dict[str, Status]] = {}
