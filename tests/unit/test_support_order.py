"""support.order: the modules sharing a costly module fixture run together, and its teardown knows
whether the next module needs it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from support.order import group_modules_using, later_modules_use, next_module_uses


@dataclass
class Item:
    path: Path
    name: str
    fixturenames: tuple[str, ...] = ()
    module: SimpleNamespace = field(default_factory=SimpleNamespace)


def items(*spec: str, leads: tuple[str, ...] = ()) -> list[Item]:
    """``"a:x"``: a test of module a; ``"b:y+crds"``: a test of module b using the fixture ``crds``; the
    modules in ``leads`` declare they lead the ``crds`` group."""
    out = []
    for s in spec:
        module, _, rest = s.partition(":")
        name, _, fixture = rest.partition("+")
        declared = SimpleNamespace(LEADS_CARRIED=("crds",)) if module in leads else SimpleNamespace()
        out.append(Item(Path(f"{module}.py"), name, (fixture,) if fixture else (), declared))
    return out


def order(its: list[Item]) -> list[str]:
    return [f"{i.path.stem}:{i.name}" for i in its]


def test_modules_using_the_fixture_run_together_last_and_the_rest_keep_their_place():
    its = items("a:1", "h:1", "h:2+crds", "h:3", "k:1", "m:1+crds", "m:2", "z:1")
    group_modules_using(its, "crds")
    assert order(its) == ["a:1", "k:1", "z:1", "h:1", "h:2", "h:3", "m:1", "m:2"]
    assert next_module_uses(its, Path("h.py"), "crds")  # h's teardown leaves them for m
    assert not next_module_uses(its, Path("m.py"), "crds")  # the last module
    assert not later_modules_use(its, Path("m.py"), "crds")


def test_a_module_that_leads_the_group_runs_first_in_it():
    its = items("g:1+crds", "h:1", "h:2+crds", "m:1+crds", "z:1", leads=("h",))
    group_modules_using(its, "crds")
    assert order(its) == ["z:1", "h:1", "h:2", "g:1", "m:1"]


def test_later_modules_use_sees_past_the_next_module():
    its = items("a:1+cluster", "b:1", "c:1+cluster", "d:1")
    assert later_modules_use(its, Path("a.py"), "cluster")  # b does not, c does
    assert not later_modules_use(its, Path("c.py"), "cluster")
    assert not later_modules_use(its, Path("d.py"), "cluster")  # nothing after the last module


def test_the_next_module_counts_when_a_later_test_of_it_uses_the_fixture():
    its = items("g:1+crds", "h:1", "h:2+crds", "k:1")
    assert next_module_uses(its, Path("g.py"), "crds")  # h's first test does not use it, its second does
    assert not next_module_uses(its, Path("h.py"), "crds")


def test_one_module_using_it_moves_last_and_none_changes_nothing():
    its = items("b:1", "a:1+crds", "c:1")
    group_modules_using(its, "crds")
    assert order(its) == ["b:1", "c:1", "a:1"]
    assert not next_module_uses(its, Path("a.py"), "crds")
    its = items("b:1", "a:1", "c:1")
    group_modules_using(its, "crds")
    assert order(its) == ["b:1", "a:1", "c:1"]
