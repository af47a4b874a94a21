"""The one poll helper every test waits with: it returns the first truthy value, fails after its timeout
naming what it waited for and the last value, and retries only the exceptions it is told to."""

from __future__ import annotations

import time

import pytest
from support.poll import stays, wait_for


def test_returns_the_first_truthy_value():
    calls = []

    def third_time() -> str:
        calls.append(1)
        return "ready" if len(calls) >= 3 else ""

    assert wait_for(third_time, 5, interval=0.01) == "ready"
    assert len(calls) == 3


def test_times_out_naming_the_condition_and_the_last_value():
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"waiting for the pod; last: 0"):
        wait_for(lambda: 0, 0.2, "the pod", interval=0.01)
    assert time.monotonic() - started < 2


def test_an_unnamed_condition_is_described_by_its_source():
    with pytest.raises(AssertionError, match=r"lambda: 1 > 2"):
        wait_for(lambda: 1 > 2, 0.05, interval=0.01)


def test_a_callable_message_is_built_only_on_failure():
    built = []
    wait_for(lambda: True, 1, lambda: built.append(1) or "never")
    assert built == []
    with pytest.raises(AssertionError, match="state now"):
        wait_for(lambda: False, 0.05, lambda: "state now", interval=0.01)


def test_only_the_named_exceptions_are_retried():
    with pytest.raises(ZeroDivisionError):
        wait_for(lambda: 1 / 0, 1, interval=0.01)
    with pytest.raises(AssertionError, match="ZeroDivisionError"):
        wait_for(lambda: 1 / 0, 0.05, interval=0.01, retry_on=(ZeroDivisionError,))


def test_stays_checks_all_through_the_window_and_fails_the_moment_it_breaks():
    calls = []
    stays(lambda: calls.append(1) or True, 0.2, interval=0.02)
    assert len(calls) >= 5  # checked all along, not once at the end
    broken_at = time.monotonic() + 0.1
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"no longer true .*the leader count"):
        stays(lambda: time.monotonic() < broken_at, 5, "the leader count", interval=0.01)
    assert time.monotonic() - started < 2  # not at the end of the window
