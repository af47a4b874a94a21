"""The session's order of modules: the modules that use a costly cluster-wide module fixture (the
third-party CRDs, whose removal waits until the apiserver stops serving their groups) run one after another,
so its state carries from one module to the next instead of being torn down and built again between them.

Items are anything with ``path`` and ``fixturenames`` (pytest items), so the unit tier tests this directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def group_modules_using(items: list, fixture: str) -> None:
    """Move the modules any of whose tests use ``fixture`` next to the first of them, in place; each module
    keeps the order of its tests and every other module keeps its place."""
    first: dict[Path, int] = {}
    for index, item in enumerate(items):
        first.setdefault(item.path, index)
    group = {item.path for item in items if fixture in getattr(item, "fixturenames", ())}
    if len(group) < 2:
        return
    anchor = min(first[path] for path in group)
    items.sort(key=lambda item: (anchor, first[item.path]) if item.path in group else (first[item.path], -1))


def next_module_uses(items: Sequence, module: Path, fixture: str) -> bool:
    """Whether the module that runs after ``module`` (in ``items``, the session's order) uses ``fixture`` in
    any of its tests (not only its first: a module fixture lives from its first user to the module's end)."""
    mine = [i for i, item in enumerate(items) if item.path == module]
    after = items[mine[-1] + 1 :] if mine else []
    following = [item for item in after if after and item.path == after[0].path]
    return any(fixture in getattr(item, "fixturenames", ()) for item in following)
