"""The integration detector admission asks on every review: only the first answer waits for discovery."""

from __future__ import annotations

import threading
import time

import pytest
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


class Served:
    """Answers ``GET /apis/<group>/<version>`` with the resources listed per path (404 for others)."""

    def __init__(self, resources: dict[str, list[str]]) -> None:
        self.resources = resources

    def request(self, method: str, path: str) -> dict:
        group = path.removeprefix("/apis/")
        if group not in self.resources:
            raise NotFound(path)
        return {"kind": "APIResourceList", "resources": [{"name": r} for r in self.resources[group]]}


def test_a_resource_counts_only_when_its_group_lists_it():
    api = Served({"networking.istio.io/v1beta1": ["virtualservices"]})
    assert ApiGroupDetector(api, "networking.istio.io/v1beta1", None, resource="virtualservices")() is True
    assert ApiGroupDetector(api, "networking.istio.io/v1beta1", None, resource="destinationrules")() is False
    assert ApiGroupDetector(api, "networking.istio.io/v1beta1", None)() is True  # the group itself is served


def test_istio_kinds_are_detected_one_by_one():
    """Only VirtualService installed: VirtualServices render and are cached, DestinationRules are not
    (their cache would never sync); ``istio`` (both) is reported only when both kinds are served."""
    from dynamo_operator.controllers.discovery import check_required_integrations, detect_integrations
    from dynamo_operator.render.context import (
        ISTIO,
        ISTIO_DESTINATION_RULE,
        ISTIO_VIRTUAL_SERVICE,
        RenderContext,
    )

    group = "networking.istio.io/v1beta1"
    only_vs = detect_integrations(Served({group: ["virtualservices"]}))
    assert only_vs == {ISTIO_VIRTUAL_SERVICE}
    mesh = {"serviceMesh": {"provider": "istio"}}
    ctx = RenderContext(operator_config=mesh, detected=only_vs)
    assert ctx.virtual_services_served and not ctx.istio_mesh
    only_dr = detect_integrations(Served({group: ["destinationrules"]}))
    assert only_dr == {ISTIO_DESTINATION_RULE}
    ctx = RenderContext(operator_config=mesh, detected=only_dr)
    assert ctx.istio_mesh and not ctx.virtual_services_served
    both = detect_integrations(Served({group: ["virtualservices", "destinationrules"]}))
    assert both == {ISTIO, ISTIO_VIRTUAL_SERVICE, ISTIO_DESTINATION_RULE}
    pretend = RenderContext(operator_config=mesh, detected={ISTIO})  # render --detected istio
    assert pretend.virtual_services_served and pretend.istio_mesh
    on = {"serviceMesh": {"enabled": True, "provider": "istio"}}
    check_required_integrations(on, only_dr)  # the mesh needs DestinationRules, not VirtualServices
    with pytest.raises(ValueError, match=r"does not serve destinationrules in networking\.istio\.io/v1beta1"):
        check_required_integrations(on, only_vs)
