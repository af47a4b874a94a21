"""support.order: the modules sharing a costly module fixture run together, and its teardown knows
whether the next module needs it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from support.order import group_modules_using, next_module_uses


@dataclass
class Item:
    path: Path
    name: str
    fixturenames: tuple[str, ...] = ()


def items(*spec: str) -> list[Item]:
    """``"a:x"``: a test of module a; ``"b:y+crds"``: a test of module b using the fixture ``crds``."""
    out = []
    for s in spec:
        module, _, rest = s.partition(":")
        name, _, fixture = rest.partition("+")
        out.append(Item(Path(f"{module}.py"), name, (fixture,) if fixture else ()))
    return out


def order(its: list[Item]) -> list[str]:
    return [f"{i.path.stem}:{i.name}" for i in its]


def test_modules_using_the_fixture_run_together_and_the_rest_keep_their_place():
    its = items("a:1", "h:1", "h:2+crds", "h:3", "k:1", "m:1+crds", "m:2", "z:1")
    group_modules_using(its, "crds")
    assert order(its) == ["a:1", "h:1", "h:2", "h:3", "m:1", "m:2", "k:1", "z:1"]
    assert next_module_uses(its, Path("h.py"), "crds")  # h's teardown leaves them for m
    assert not next_module_uses(its, Path("m.py"), "crds")  # m's removes them: k comes next
    assert not next_module_uses(its, Path("z.py"), "crds")  # the last module


def test_the_next_module_counts_when_a_later_test_of_it_uses_the_fixture():
    its = items("g:1+crds", "h:1", "h:2+crds", "k:1")
    assert next_module_uses(its, Path("g.py"), "crds")  # h's first test does not use it, its second does
    assert not next_module_uses(its, Path("h.py"), "crds")


def test_one_or_no_module_using_it_changes_nothing():
    its = items("b:1", "a:1+crds", "c:1")
    group_modules_using(its, "crds")
    assert order(its) == ["b:1", "a:1", "c:1"]
    assert not next_module_uses(its, Path("a.py"), "crds")
