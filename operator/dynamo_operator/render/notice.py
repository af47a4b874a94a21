"""What a rule of ``render/notices.py`` returns, and the walk over a DGD's or DCD's components most rules
use: a module apart, so a rule can live beside the code that ignores its field without importing the
registry that lists it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from dynamo_operator.api.fieldpaths import Path
from dynamo_operator.api.jsontree import d, lst

from . import names

KINDS = (names.DGD_KIND, names.DCD_KIND)


@dataclass(frozen=True)
class Notice:
    """One field that is accepted and has no effect: ``path`` (v1beta1) and ``text``, which says why and
    what to do, written to follow ``<path>: ``."""

    path: Path
    text: str


def components(kind: str, beta: dict) -> Iterator[tuple[Path, dict]]:
    """(path, component) of a v1beta1 DGD's components, or a DCD's spec (the same component shape)."""
    spec = d(beta.get("spec"))
    if kind == names.DCD_KIND:
        yield ("spec",), spec
        return
    for i, comp in enumerate(lst(spec.get("components"))):
        if isinstance(comp, dict):
            yield ("spec", "components", i), comp


__all__ = ["KINDS", "Notice", "components"]
