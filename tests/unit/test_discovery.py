"""The integration detector admission asks on every review: only the first answer waits for discovery."""

from __future__ import annotations

import threading
import time

from dynamo_operator.runtime.discovery import ApiGroupDetector
from support.poll import wait_for


class NotFound(Exception):
    status = 404


class Discovery:
    """Answers ``GET /apis/<group>`` as told; ``gate`` holds a request until released."""

    def __init__(self) -> None:
        self.served = True
        self.fail: Exception | None = None
        self.calls = 0
        self.gate = threading.Event()
        self.gate.set()

    def request(self, method: str, path: str) -> None:
        self.calls += 1
        assert self.gate.wait(10)
        if self.fail is not None:
            raise self.fail
        if not self.served:
            raise NotFound(path)


def test_first_answer_asks_then_caches_within_ttl():
    api = Discovery()
    d = ApiGroupDetector(api, "grove.io", None, ttl=60)
    assert d() is True and d() is True
    assert api.calls == 1


def test_configuration_wins_without_asking():
    api = Discovery()
    assert ApiGroupDetector(api, "grove.io", False)() is False
    assert ApiGroupDetector(api, "grove.io", True)() is True
    assert api.calls == 0


def test_stale_answer_is_served_while_discovery_is_slow():
    api = Discovery()
    d = ApiGroupDetector(api, "grove.io", None, ttl=0.0)
    assert d() is True
    api.served = False
    api.gate.clear()  # the apiserver is slow to answer the re-check
    started = time.monotonic()
    assert d() is True  # the previous answer, at once
    assert d() is True
    assert time.monotonic() - started < 1.0
    wait_for(lambda: api.calls == 2)  # one background re-check, not one per caller
    api.gate.set()
    wait_for(lambda: d() is False)  # the re-check's answer replaces the old one


def test_errors_other_than_not_found_keep_the_previous_answer():
    api = Discovery()
    d = ApiGroupDetector(api, "grove.io", None, ttl=0.0)
    assert d() is True
    api.fail = RuntimeError("apiserver restarting")
    calls = api.calls
    assert d() is True
    wait_for(lambda: api.calls > calls and not d._refreshing)
    assert d() is True
    api.fail = NotFound("/apis/grove.io")
    wait_for(lambda: d() is False)
