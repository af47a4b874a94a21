"""``make unit`` runs under coverage for one reader, the coverage table's proof (``dynamo_coverage
--prove``): it measures only the tests the table names, and each test's lines once.

* The tests no "acts" row names run with coverage paused (pytest-cov's ``no_cover``): the proof reads
  nothing of theirs, and tracing the fuzz and property tests nearly doubled the tier's CPU time.
  ``DYNAMO_COVERAGE_ALL=1`` measures every test (to look for a row's test among all of them).
* In a pytest-xdist worker pytest-cov starts a second coverage before the worker's own (its early plugin
  reads the worker's ``-n`` as the controller's: pytest-cov issue 667's cause). That one is never saved,
  and it resumes tracing whenever the worker's own is paused, so a paused test was traced all the same.
  It is stopped before the worker's own starts.

Registered by ``tests/conftest.py`` when ``--cov`` is given.
"""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    if getattr(session.config, "workerinput", None) is None:
        return
    plugin = session.config.pluginmanager.getplugin("_cov")
    early = getattr(plugin, "cov_controller", None)
    if early is not None and type(early).__name__ == "DistMaster":
        early.cov.stop()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("DYNAMO_COVERAGE_ALL"):
        return
    from dynamo_coverage.proof import named_unit_tests

    named = named_unit_tests()
    for item in items:
        if item.nodeid.split("[", 1)[0] not in named:
            item.add_marker(pytest.mark.no_cover)
