"""The session's order of modules: the modules that use a costly cluster-wide module fixture (the
third-party CRDs, whose removal waits until the apiserver stops serving their groups) run one after another
at the end of the session, so its state carries from one module to the next instead of being torn down and
built again between them, and the last of them need not tear it down at all: the session's cluster stops
right after it.

Items are anything with ``path`` and ``fixturenames`` (pytest items), so the unit tier tests this directly;
a module that must run first among them (its first tests need the state absent, before the fixture is
built) says so with ``LEADS_CARRIED = ("<fixture>",)``, read from the item's ``module``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def group_modules_using(items: list, fixture: str) -> None:
    """Move the modules any of whose tests use ``fixture`` to the end, in place: those leading it first,
    then the others in their order; each module keeps the order of its tests and every other module keeps
    its place."""
    first: dict[Path, int] = {}
    for index, item in enumerate(items):
        first.setdefault(item.path, index)
    group = {item.path for item in items if fixture in getattr(item, "fixturenames", ())}
    leads = {item.path for item in items if item.path in group and _leads(item, fixture)}

    def key(item) -> tuple[int, int, int]:
        if item.path not in group:
            return (0, 0, first[item.path])
        return (1, 0 if item.path in leads else 1, first[item.path])

    items.sort(key=key)


def _leads(item, fixture: str) -> bool:
    return fixture in getattr(getattr(item, "module", None), "LEADS_CARRIED", ())


def next_module_uses(items: Sequence, module: Path, fixture: str) -> bool:
    """Whether the module that runs after ``module`` (in ``items``, the session's order) uses ``fixture`` in
    any of its tests (not only its first: a module fixture lives from its first user to the module's end)."""
    following = _after(items, module)
    following = [item for item in following if item.path == following[0].path] if following else []
    return any(fixture in getattr(item, "fixturenames", ()) for item in following)


def later_modules_use(items: Sequence, module: Path, fixture: str) -> bool:
    """Whether any test after ``module`` uses ``fixture``: when none uses the session's cluster, what a
    module changed on it needs no undoing, since the cluster stops next."""
    return any(fixture in getattr(item, "fixturenames", ()) for item in _after(items, module))


def _after(items: Sequence, module: Path) -> list:
    mine = [i for i, item in enumerate(items) if item.path == module]
    return list(items[mine[-1] + 1 :]) if mine else []
