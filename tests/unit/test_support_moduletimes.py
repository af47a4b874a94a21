"""The per-module summary the integration split is balanced by: every phase summed under its file."""

from types import SimpleNamespace

from support.moduletimes import ModuleTimes, lines


def test_phases_of_one_module_are_summed_and_the_longest_module_comes_first() -> None:
    times = ModuleTimes()
    for nodeid, duration in [
        ("tests/a.py::test_x", 1.0),  # setup
        ("tests/a.py::test_x", 2.5),  # call
        ("tests/b.py::test_y[1]", 4.0),
        ("tests/a.py::test_z", 0.75),  # teardown of another test of a.py
    ]:
        times.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=duration))
    assert lines(times.seconds) == ["     4.2  tests/a.py", "     4.0  tests/b.py", "     8.2  total"]


def test_the_summary_is_written_only_for_more_than_one_module() -> None:
    written: list[str] = []
    reporter = SimpleNamespace(write_sep=lambda sep, title: written.append(title), write_line=written.append)
    times = ModuleTimes()
    times.pytest_runtest_logreport(SimpleNamespace(nodeid="tests/a.py::t", duration=3.0))
    times.pytest_terminal_summary(reporter)
    assert written == []
    times.pytest_runtest_logreport(SimpleNamespace(nodeid="tests/b.py::t", duration=1.0))
    times.pytest_terminal_summary(reporter)
    assert written[0].startswith("seconds per module") and written[1].endswith("tests/a.py")
