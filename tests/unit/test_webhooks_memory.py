"""The webhook's memory budget (issue 30, item 2): what parsing and converting a request may cost, measured
with ``tracemalloc``: an object already in the desired version is answered with itself, a page is held
about once while it converts, the parse estimate bounds ``json.loads``, bodies and objects over the budget
are refused unparsed / unconverted, and large bodies are parsed one at a time while small reviews run on
the server's loop."""

from __future__ import annotations

import gc
import http.client
import json
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from dynamo_localcluster.graphs import DISAGGREGATED, graph
from dynamo_operator.api.conversion import convert
from dynamo_operator.runtime.httpserver import INLINE, LARGE, POOL, MiB, Request
from dynamo_operator.webhooks.server import (
    AdmissionSettings,
    WebhookApp,
    WebhookServer,
    parse_cost,
)
from support.admission import VALIDATE, review
from support.poll import wait_for

BETA = graph("g", "default", DISAGGREGATED)
ALPHA = convert(BETA, "v1alpha1")


def conversion_review(objects: list, desired: str = "nvidia.com/v1beta1") -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "c-1", "desiredAPIVersion": desired, "objects": objects},
    }


def page(obj: dict, n: int) -> list[dict]:
    return [dict(obj, metadata={**obj["metadata"], "name": f"g{i}"}) for i in range(n)]


def measured(fn: Callable[[], Any]) -> tuple[Any, int, int]:
    """(``fn()``, bytes it left allocated, its peak over what was allocated before)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, current - base, peak - base


def test_objects_already_in_the_desired_version_are_answered_with_themselves():
    objects = page(BETA, 3)
    out = WebhookApp().convert(conversion_review(list(objects)))
    converted = out["response"]["convertedObjects"]
    assert out["response"]["result"] == {"status": "Success"}
    assert all(a is b for a, b in zip(converted, objects, strict=True))  # no copy
    alpha = WebhookApp().convert(conversion_review(page(ALPHA, 1)))["response"]["convertedObjects"][0]
    assert alpha["apiVersion"] == "nvidia.com/v1beta1" and alpha["spec"] == BETA["spec"]


def test_a_page_is_held_about_once_while_it_converts():
    """Each source object goes as its conversion is made: converting 400 graphs to the other version
    grows memory by a fifth of the parsed page (before: by four fifths, both trees held to the end)."""
    body = json.dumps(conversion_review(page(ALPHA, 400))).encode()
    parsed, tree, _ = measured(lambda: json.loads(body))
    out, _, peak = measured(lambda: WebhookApp().convert(parsed))
    assert out["response"]["result"] == {"status": "Success"}
    assert len(out["response"]["convertedObjects"]) == 400
    assert peak < 0.5 * tree, f"converting took {peak / tree:.2f}x the parsed page"


@pytest.mark.parametrize(
    "value",
    [
        page(BETA, 300),
        [{} for _ in range(50_000)],
        [[] for _ in range(50_000)],
        [{"a": {"b": {"c": 1}}} for _ in range(20_000)],
        list(range(1000, 60_000)),
        [1.5] * 50_000,
        [f"s{i}" for i in range(50_000)],
        ["ab"] * 50_000,
        [{"name": f"A{i}", "value": str(i)} for i in range(20_000)],
        ["\u00e9\U0001f600" * 3] * 20_000,  # non-ASCII: the decoded text takes 4 bytes a character
    ],
    ids=["dgds", "dicts", "lists", "nested", "ints", "floats", "strings", "short", "envs", "emoji"],
)
def test_the_parse_estimate_bounds_what_json_loads_takes(value):
    for text in (json.dumps(value).encode(), json.dumps(value, separators=(",", ":")).encode()):
        _, _, peak = measured(lambda t=text: json.loads(t))
        assert peak <= parse_cost(text) <= 6 * peak + 4 * len(text), (peak, parse_cost(text), len(text))


def test_a_body_over_the_parse_budget_is_answered_413_unparsed():
    body = json.dumps(conversion_review([{"apiVersion": "nvidia.com/v1beta1", "x": [{}] * 60_000}])).encode()
    app = WebhookApp(parse_budget=4 * MiB)
    (status, out), _, peak = measured(lambda: app.handle("/convert", body))
    assert status == 413 and "over the webhook's budget of 4 MiB" in out["error"], out
    assert peak < len(body)  # nothing parsed
    assert WebhookApp().handle("/convert", body)[0] == 200  # within the default budget


def test_an_object_too_large_to_convert_fails_its_conversion_by_name():
    big = dict(ALPHA, metadata={"name": "huge", "namespace": "team"})
    big["spec"] = dict(big["spec"], envs=[{"name": f"E{i}", "value": "v"} for i in range(20_000)])
    body = json.dumps(conversion_review([big])).encode()
    status, out = WebhookApp(convert_budget=8 * MiB).handle("/convert", body)
    assert status == 200 and out["response"]["result"]["status"] == "Failure"
    assert "DynamoGraphDeployment team/huge would take about" in out["response"]["result"]["message"]
    same = json.dumps(conversion_review([big], desired="nvidia.com/v1alpha1")).encode()
    status, out = WebhookApp(convert_budget=8 * MiB).handle("/convert", same)  # nothing to convert
    assert out["response"]["result"] == {"status": "Success"}


def _answers(body: bytes) -> tuple[tuple[int, bytes], tuple[int, bytes]]:
    """(streamed, parsed whole) answers of the webhook to ``body`` at /convert."""
    status, payload = WebhookApp().handle("/convert", body)
    return WebhookApp().respond("/convert", body), (
        status,
        json.dumps(payload, separators=(",", ":")).encode(),
    )


def _text(objects: list, desired: str = "nvidia.com/v1beta1", order: str = "desired first") -> bytes:
    req = {"uid": "c-1", "desiredAPIVersion": desired, "objects": objects}
    if order != "desired first":
        req = {"objects": objects, "uid": "c-1", "desiredAPIVersion": desired}
    return json.dumps(
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "request": req}
    ).encode()


@pytest.mark.parametrize(
    "body",
    [
        _text(page(ALPHA, 5)),
        _text(page(BETA, 5)),
        _text([*page(ALPHA, 2), *page(BETA, 2)], "nvidia.com/v1alpha1"),
        _text([]),
        _text(page(ALPHA, 2), "apps/v1"),
        _text([], "apps/v1"),
        _text([ALPHA, 7, BETA]),
        _text([ALPHA, {"apiVersion": "nvidia.com/v9", "kind": "DynamoGraphDeployment"}]),
        _text(page(ALPHA, 3), order="objects first"),
        _text(page(ALPHA, 2))[:-3] + b"]}}",  # not JSON after the objects
        _text(page(ALPHA, 2)) + b" x",
        b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u",'
        b'"desiredAPIVersion":"nvidia.com/v1beta1","objects":[],"objects":[{"kind":"x"}]}}',
        b'{"request":{"uid":"u","desiredAPIVersion":"nvidia.com/v1beta1","objects":[]},"kind":"ConversionReview",'
        b'"apiVersion":"apiextensions.k8s.io/v1"}',
        b' \n{ "apiVersion" : "apiextensions.k8s.io/v1" , "kind":"ConversionReview","request" : {'
        b' "uid" : "\\u00e9", "desiredAPIVersion":"nvidia.com/v1alpha1" , "objects" : [ ] } } \n',
        b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":[]}',
        b'{"apiVersion":"apiextensions.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}',
        b"[1, 2]",
        b"",
        b"\xff\xfe",
        b'{"a" 1}',
    ],
)
def test_a_streamed_conversion_answers_as_a_whole_parse_would(body):
    streamed, whole = _answers(body)
    assert streamed == whole


def test_a_streamed_conversion_holds_one_object_at_a_time():
    """2.1 times the body (its text and the answer) against 7.3 for the same page parsed whole."""
    body = _text(page(ALPHA, 3000))
    (status, out), _, peak = measured(lambda: WebhookApp().respond("/convert", body))
    assert status == 200 and json.loads(out)["response"]["result"] == {"status": "Success"}
    assert peak < 3 * len(body), f"{peak / len(body):.1f}x the body"


class _CountingApp(WebhookApp):
    """Records how many conversions ran at once, each taking a moment."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.running = self.most = 0

    def respond(self, path: str, body: bytes | bytearray) -> tuple[int, bytes]:
        if path != "/convert":
            return super().respond(path, body)
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(0.3)  # not a wait: a conversion that takes a while, so they could overlap
            return super().respond(path, body)
        finally:
            with self.lock:
                self.running -= 1


def test_large_bodies_are_parsed_one_at_a_time_beside_small_reviews():
    app = _CountingApp()
    server = WebhookServer(app, host="127.0.0.1", port=0, tls=None)
    server.start()
    try:
        large = json.dumps(conversion_review(page(ALPHA, 400))).encode()
        assert len(large) > 256 * 1024
        results: list[int] = []

        def post(body: bytes, path: str = "/convert") -> int:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            conn.request("POST", path, body, {"Content-Type": "application/json"})
            status = conn.getresponse().status
            conn.close()
            return status

        threads = [threading.Thread(target=lambda: results.append(post(large))) for _ in range(3)]
        for t in threads:
            t.start()
        wait_for(lambda: app.running, 10)
        started = time.monotonic()
        assert post(json.dumps(review(BETA)).encode(), VALIDATE) == 200  # not queued behind them
        assert time.monotonic() - started < 0.3 * 3
        for t in threads:
            t.join(30)
        assert results == [200, 200, 200] and app.most == 1
    finally:
        server.stop()


def test_small_reviews_run_on_the_loop_once_the_detectors_have_answered():
    answered = threading.Event()

    def grove() -> bool:  # API discovery, slow the first time
        answered.wait(10)
        return False

    app = WebhookApp(AdmissionSettings(grove_enabled=grove))
    server = WebhookServer(app, host="127.0.0.1", port=0, tls=None)
    small = Request("POST", VALIDATE, {}, json.dumps(review(BETA)).encode(), "127.0.0.1")
    big = Request("POST", "/convert", {}, b"[" + b"{}," * 100_000 + b"{}]", "127.0.0.1")
    server.start()
    try:
        assert server.route(small) == POOL  # a review might wait for discovery: not on the loop
        answered.set()
        wait_for(app.warmed.is_set, 5)
        assert server.route(small) == INLINE
        assert server.route(big) == LARGE
        assert server.route(Request("POST", "/convert", {}, small.body, "127.0.0.1")) == POOL
    finally:
        server.stop()
