"""The one way a test waits: a bounded poll on a condition.

A test never sleeps for a guessed time: on a busy machine the guess is too short (a flake), on a quiet one
too long (a slow suite). It names what it waits for, and the failure says what that was and what the
condition last returned. ``stays`` is the same poll turned around, for a claim that something does *not*
happen (no second leader, no write to a converged object): the condition is checked all through the
window, and the test fails the moment it breaks rather than at the end.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    fn: Callable[[], T],
    timeout: float = 30.0,
    what: str | Callable[[], str] | None = None,
    interval: float = 0.1,
    retry_on: tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``fn`` every ``interval`` seconds until it returns a truthy value, and return that value.

    After ``timeout`` seconds an ``AssertionError`` names ``what`` (a string, or a callable evaluated only
    then, for a message quoting the state at the time of failure; by default the condition's own source)
    and the last value. Exceptions of the
    ``retry_on`` types count as "not yet" (the last one is reported): a server that is still starting."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            last: object = fn()
        except retry_on as e:
            last = e
        else:
            if last:
                return last  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            break
        time.sleep(interval)
    described = what() if callable(what) else what or _source(fn)
    raise AssertionError(f"timed out after {timeout}s waiting for {described}; last: {last!r}")


def stays(
    fn: Callable[[], object],
    seconds: float,
    what: str | Callable[[], str] | None = None,
    interval: float = 0.1,
) -> None:
    """Check ``fn`` every ``interval`` seconds for ``seconds``; fail the first time it is falsy, naming
    ``what`` (by default the condition's own source) and the value."""
    deadline = time.monotonic() + seconds
    while True:
        value = fn()
        if not value:
            described = what() if callable(what) else what or _source(fn)
            raise AssertionError(
                f"no longer true after {seconds - (deadline - time.monotonic()):.1f}s: "
                f"{described}; got: {value!r}"
            )
        if time.monotonic() >= deadline:
            return
        time.sleep(interval)


def _source(fn: Callable) -> str:
    """The condition as written (a lambda's line), or its name: what pytest would have shown for an assert."""
    try:
        return " ".join(inspect.getsource(fn).split())[:300]
    except (OSError, TypeError):
        return getattr(fn, "__qualname__", repr(fn))
