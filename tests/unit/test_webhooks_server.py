"""The webhook HTTPS server in-process: routes, AdmissionReview/ConversionReview handling, TLS, certificate
hot swap, timeouts and limits, and a hypothesis property test that random and malformed reviews never get a
5xx or a hang."""

from __future__ import annotations

import base64
import datetime as dt
import http.client
import json
import socket
import ssl
import time

import pytest
from cryptography import x509
from dynamo_operator.api.registry import KINDS
from dynamo_operator.runtime.httpserver import Limits
from dynamo_operator.webhooks.certs import TLSContextHolder, issue_ca, issue_serving
from dynamo_operator.webhooks.server import (
    AdmissionSettings,
    WebhookApp,
    WebhookServer,
    admission_path,
    admission_routes,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import graphs
from support.admission import MUTATE, VALIDATE, app_call, review

YEAR = dt.timedelta(days=365)


def dgd(components):
    return graphs.dgd(*components, namespace="team", backendFramework="vllm")


# ------------------------------------------------------------------------------------------------------------
# routes and the application


def test_routes_are_the_charts_paths():
    routes = admission_routes()
    validated = (
        "DynamoGraphDeployment",
        "DynamoComponentDeployment",
        "DynamoGraphDeploymentRequest",
        "DynamoGraphDeploymentScalingAdapter",
        "DynamoModel",
        "DynamoCheckpoint",
    )
    for kind in validated:
        for version in KINDS[kind].versions:
            assert f"/validate-nvidia-com-{version}-{kind.lower()}" in routes
    for kind in validated[:3]:
        for version in ("v1alpha1", "v1beta1"):
            assert f"/mutate-nvidia-com-{version}-{kind.lower()}" in routes
    assert admission_path("validate", "v1beta1", "DynamoGraphDeployment") == (
        "/validate-nvidia-com-v1beta1-dynamographdeployment"
    )


@pytest.mark.parametrize(
    "path,payload,status",
    [
        (VALIDATE, b"{not json", 400),
        (VALIDATE, b"\xff\xfe", 400),
        (VALIDATE, [], 400),
        (VALIDATE, {"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {}}, 400),
        (VALIDATE, {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, 400),
        (
            VALIDATE,
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": ""}},
            400,
        ),
        (VALIDATE, review({}, operation="PATCH"), 400),
        ("/convert", {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}, 400),
        ("/nope", review({}), 404),
    ],
)
def test_malformed_requests_get_4xx(path, payload, status):
    code, out = app_call(WebhookApp(), path, payload)
    assert code == status and "error" in out


def test_validate_denies_with_status_and_causes():
    code, out = app_call(WebhookApp(), VALIDATE, review(dgd([])))
    assert code == 200
    resp = out["response"]
    assert out["kind"] == "AdmissionReview" and resp["uid"] == "u-1" and resp["allowed"] is False
    assert resp["status"]["code"] == 422 and resp["status"]["reason"] == "Invalid"
    assert resp["status"]["message"].startswith(
        'DynamoGraphDeployment.nvidia.com "g" is invalid: spec.components: Required value'
    )
    assert resp["status"]["details"]["causes"][0]["field"] == "spec.components"


def test_validate_allows_and_warns():
    _, out = app_call(WebhookApp(), VALIDATE, review(dgd([{"name": "w", "eppConfig": {"config": {}}}])))
    assert out["response"]["allowed"] is True
    (warning,) = out["response"]["warnings"]
    assert warning.startswith("spec.components[0].eppConfig: has no effect unless type is epp")


def test_mutate_returns_a_json_patch():
    app = WebhookApp(AdmissionSettings(operator_version="1.0.0"))
    _, out = app_call(app, MUTATE, review(dgd([{"name": "w"}])))
    resp = out["response"]
    assert resp["allowed"] is True and resp["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(resp["patch"]))
    assert {"op": "add", "path": "/spec/components/0/replicas", "value": 1} in patch
    _, out = app_call(
        app, "/mutate-nvidia-com-v1alpha1-dynamomodel", review({}, kind="DynamoModel", version="v1alpha1")
    )
    assert out["response"] == {"allowed": True, "uid": "u-1"}


def test_delete_excluded_namespaces_and_kind_mismatch():
    app = WebhookApp(AdmissionSettings(is_namespace_excluded=lambda ns: ns == "held"))
    assert app_call(app, VALIDATE, review(dgd([]), operation="DELETE"))[1]["response"]["allowed"]
    assert app_call(app, VALIDATE, review(dgd([]), namespace="held"))[1]["response"]["allowed"]
    resp = app_call(app, VALIDATE, review(dgd([]), kind="DynamoModel"))[1]["response"]
    assert resp["allowed"] is False and resp["status"]["code"] == 400


def test_metrics_are_observed():
    from dynamo_operator.runtime.metrics import OperatorMetrics

    m = OperatorMetrics()
    app = WebhookApp(AdmissionSettings(metrics=m))
    app_call(app, VALIDATE, review(dgd([])))
    app_call(app, VALIDATE, review(dgd([{"name": "w"}])))
    labels = {"resource_type": "DynamoGraphDeployment", "operation": "create"}
    assert (
        m.registry.get_sample_value("dynamo_operator_webhook_requests_total", {**labels, "result": "denied"})
        == 1
    )
    assert (
        m.registry.get_sample_value("dynamo_operator_webhook_requests_total", {**labels, "result": "allowed"})
        == 1
    )
    assert (
        m.registry.get_sample_value("dynamo_operator_webhook_denials_total", {**labels, "reason": "Invalid"})
        == 1
    )


def test_metrics_count_every_review_after_the_first():
    """The label children are looked up once: later reviews of the same kind, operation and outcome
    must still be counted (a cache keyed too loosely would count a denial as an allowance)."""
    from dynamo_operator.runtime.metrics import OperatorMetrics

    m = OperatorMetrics()
    app = WebhookApp(AdmissionSettings(metrics=m))
    for _ in range(3):
        app_call(app, VALIDATE, review(dgd([{"name": "w"}])))
    app_call(app, VALIDATE, review(dgd([])))
    app_call(app, VALIDATE, review(dgd([{"name": "w"}]), operation="UPDATE", old=dgd([{"name": "w"}])))
    sample = m.registry.get_sample_value
    create = {"resource_type": "DynamoGraphDeployment", "operation": "create"}
    assert sample("dynamo_operator_webhook_requests_total", {**create, "result": "allowed"}) == 3
    assert sample("dynamo_operator_webhook_requests_total", {**create, "result": "denied"}) == 1
    assert sample("dynamo_operator_webhook_duration_seconds_count", create) == 4
    update = {"resource_type": "DynamoGraphDeployment", "operation": "update", "result": "allowed"}
    assert sample("dynamo_operator_webhook_requests_total", update) == 1


def test_a_review_is_parsed_without_json_loads(monkeypatch):
    """Reviews are read by pydantic's parser (half json.loads's time a review); json.loads only sees what
    that parser refuses."""
    from dynamo_operator.webhooks import server as webhook_server

    def refuse(*args, **kwargs):
        raise AssertionError("json.loads called for a review pydantic's parser reads")

    monkeypatch.setattr(webhook_server.json, "loads", refuse)
    code, body = WebhookApp().respond(VALIDATE, json.dumps(review(dgd([{"name": "w"}]))).encode())
    assert code == 200 and b'"allowed":true' in body


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(review(dgd([{"name": "w", "replicas": 2}]))).encode(),
        b'{"a": NaN, "b": Infinity, "c": -Infinity, "d": 1e400, "e": -0.0, "f": 5e-324}',
        b'{"big": 123456789012345678901234567890, "dup": 1, "dup": 2, "f": 0.1, "g": 1.7976931348623157e308}',
        b'{"s": "\\u00e9\\ud83d\\ude00 \\/ \\u0000", "raw": "\xc3\xa9", "ctl": "\x7f"}',
        b'\xef\xbb\xbf{"bom": true}',  # UTF-8 BOM: json.loads takes it, jiter does not
        '{"utf16": [1, 2]}'.encode("utf-16"),
        b'{"lone": "\\ud800"}',  # a lone surrogate escape: json.loads keeps it
        b"[" * 300 + b"]" * 300,  # deeper than jiter's nesting limit
    ],
)
def test_review_bodies_read_as_json_loads_reads_them(text):
    """Whatever parser reads a body, the tree is json.loads's (values and types), so no rule sees other
    input than before."""
    from dynamo_operator.webhooks.server import _parse

    got, want = _parse(text), json.loads(text)
    assert repr(got) == repr(want)  # values, int or float, key order (NaN compares unequal to itself)


@pytest.mark.parametrize(
    "text", [b"{not json", b"[1] x", b"", b"\xff\xfe", b'{"a": tru}', b'{"a": "\xff"}', b"[1,]"]
)
def test_bad_bodies_get_json_loads_error(text):
    from dynamo_operator.webhooks.server import BadRequest, _parse

    with pytest.raises(BadRequest) as got:
        _parse(text)
    try:
        json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        assert str(got.value) == f"body is not JSON: {e}"
    else:
        pytest.fail(f"json.loads accepts {text!r}")


def conversion_review(objects, desired="nvidia.com/v1beta1"):
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "c-1", "desiredAPIVersion": desired, "objects": objects},
    }


def test_convert_success_and_failure():
    alpha = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g"},
        "spec": {"services": {"W": {"replicas": 2}}},
    }
    code, out = app_call(WebhookApp(), "/convert", conversion_review([alpha]))
    resp = out["response"]
    assert code == 200 and resp["uid"] == "c-1" and resp["result"] == {"status": "Success"}
    (beta,) = resp["convertedObjects"]
    assert beta["apiVersion"] == "nvidia.com/v1beta1" and beta["spec"]["components"][0]["replicas"] == 2
    code, out = app_call(WebhookApp(), "/convert", conversion_review([alpha], desired="apps/v1"))
    assert code == 200 and out["response"]["result"]["status"] == "Failure"
    assert out["response"]["convertedObjects"] == []


# ------------------------------------------------------------------------------------------------------------
# the HTTPS server


@pytest.fixture(scope="module")
def pki():
    ca_crt, ca_key = issue_ca(10 * YEAR)
    return ca_crt, ca_key


def serving(pki):
    return issue_serving(pki[0], pki[1], ["localhost", "127.0.0.1"], YEAR)


def client_ctx(pki, **kw) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=pki[0].decode())
    for k, v in kw.items():
        setattr(ctx, k, v)
    return ctx


@pytest.fixture(scope="module")
def server(pki):
    holder = TLSContextHolder()
    holder.update(*serving(pki))
    srv = WebhookServer(
        WebhookApp(),
        host="127.0.0.1",
        port=0,
        tls=holder,
        # 5 s: long enough that a CPU-starved CI machine never hits the deadline by accident (a review cut
        # off at 2 s failed the property test once under load), short enough to test the drop below
        limits=Limits(request_timeout=5.0, idle_timeout=5.0),
        max_body=64 * 1024,
    )
    srv.start()
    yield srv
    srv.stop()


def post(server, pki, path, body: bytes, conn=None, timeout=5.0):
    own = conn is None
    conn = conn or http.client.HTTPSConnection(
        "127.0.0.1", server.port, context=client_ctx(pki), timeout=timeout
    )
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        if own:
            conn.close()


def test_https_admission_roundtrip(server, pki):
    status, body = post(server, pki, VALIDATE, json.dumps(review(dgd([{"name": "w"}]))).encode())
    assert status == 200 and json.loads(body)["response"]["allowed"] is True
    assert server.ready()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_tls_versions_and_alpn(server, pki):
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        ctx = client_ctx(pki)
        ctx.set_alpn_protocols(["h2", "http/1.1"])
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            assert tls.version() in ("TLSv1.2", "TLSv1.3")
            assert tls.selected_alpn_protocol() == "http/1.1"
    old = client_ctx(pki, maximum_version=ssl.TLSVersion.TLSv1_1)
    old.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw, pytest.raises(ssl.SSLError):
        old.wrap_socket(raw, server_hostname="127.0.0.1")


def _serial(server, pki) -> int:
    with (
        socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw,
        client_ctx(pki).wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        return x509.load_der_x509_certificate(tls.getpeercert(binary_form=True)).serial_number


def test_certificate_hot_swap_keeps_open_connections(server, pki):
    before = _serial(server, pki)
    keep = http.client.HTTPSConnection("127.0.0.1", server.port, context=client_ctx(pki), timeout=5)
    body = json.dumps(review(dgd([{"name": "w"}]))).encode()
    assert post(server, pki, VALIDATE, body, conn=keep)[0] == 200
    assert server.tls.update(*serving(pki))
    after = _serial(server, pki)
    assert after != before
    assert post(server, pki, VALIDATE, body, conn=keep)[0] == 200  # the old connection still works
    keep.close()
    assert not server.tls.update(b"garbage", b"garbage")  # a bad pair never replaces a good one
    assert _serial(server, pki) == after


def test_no_certificate_yet_refuses_connections():
    srv = WebhookServer(WebhookApp(), host="127.0.0.1", port=0, tls=TLSContextHolder())
    srv.start()
    try:
        assert not srv.ready()
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as raw:
            raw.settimeout(5)
            assert raw.recv(10) == b""
    finally:
        srv.stop()


def _raw_exchange(server, pki, request: bytes, timeout: float = 10.0) -> bytes:
    """Send raw bytes over TLS and read until the server answers or drops the connection."""
    with (
        socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as raw,
        client_ctx(pki).wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        tls.sendall(request)
        try:
            return tls.recv(1000)
        except (ssl.SSLEOFError, ConnectionResetError):
            return b""  # dropped without a TLS close_notify: also "closed"


def test_limits_and_timeouts(server, pki):
    head = f"POST {VALIDATE} HTTP/1.1\r\nHost: x\r\n".encode()
    assert _raw_exchange(server, pki, head + b"Content-Length: 999999\r\n\r\n").startswith(b"HTTP/1.1 413")
    assert _raw_exchange(server, pki, head + b"Content-Length: -1\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert _raw_exchange(server, pki, head + b"\r\n").startswith(b"HTTP/1.1 411")
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=client_ctx(pki), timeout=5)
    conn.request("GET", VALIDATE)
    assert conn.getresponse().status == 405
    conn.close()
    # a client that stops mid-request is dropped after the read timeout, not held forever
    started = time.monotonic()
    data = _raw_exchange(server, pki, head + b"Content-Length: 100\r\n\r\n{", timeout=30.0)
    assert 4.5 < time.monotonic() - started < 25
    assert data == b"" or data.startswith(b"HTTP/1.1 4")


def test_connection_cap_closes_the_idle_first_and_readiness_ignores_saturation(pki):
    """At the cap the idle connection goes first; a refusal (every slot busy) is counted but does not
    take the replica out of the Service: whoever fills the slots would otherwise decide readiness."""
    holder = TLSContextHolder()
    holder.update(*serving(pki))
    limits = Limits(max_connections=1, saturation_memory=0.5, evict_receiving_after=60)
    srv = WebhookServer(WebhookApp(), host="127.0.0.1", port=0, tls=holder, limits=limits)
    srv.start()
    try:
        first = client_ctx(pki).wrap_socket(
            socket.create_connection(("127.0.0.1", srv.port), timeout=5), server_hostname="localhost"
        )  # handshaken, then silent: idle
        body = json.dumps(review(dgd([{"name": "w"}]))).encode()
        assert post(srv, pki, VALIDATE, body)[0] == 200  # takes the idle connection's slot
        first.settimeout(5)
        assert first.recv(10) == b""
        assert srv.stats()["evicted_idle"] == 1 and srv.ready()
        # the one slot busy with a request that has not finished arriving (and is younger than a second):
        # a new connection is refused, and readiness stays true
        busy = client_ctx(pki).wrap_socket(
            socket.create_connection(("127.0.0.1", srv.port), timeout=5), server_hostname="localhost"
        )
        busy.sendall(f"POST {VALIDATE} HTTP/1.1\r\nContent-Length: 10\r\n\r\n".encode())
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as refused:
            refused.settimeout(5)
            assert refused.recv(10) == b""
        assert srv._srv.saturated() and srv.stats()["refused"] == 1
        assert srv.ready()
        busy.close()
        first.close()
    finally:
        srv.stop()


# ------------------------------------------------------------------------------------------------------------
# property: random and malformed reviews never get a 5xx or a hang

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_any = st.recursive(
    json_leaf,
    lambda ch: st.lists(ch, max_size=3) | st.dictionaries(st.text(max_size=8), ch, max_size=3),
    max_leaves=12,
)
container = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["main", "side", ""]) | json_any,
        "image": st.text(max_size=5) | json_any,
    },
)
component = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["a", "A", "b"]) | json_any,
        "type": st.sampled_from(["frontend", "worker", "epp", "planner"]) | json_any,
        "componentType": st.sampled_from(["frontend", "worker", "epp"]) | json_any,
        "replicas": st.integers(-3, 3) | json_any,
        "minAvailable": st.integers(-1, 3) | json_any,
        "sharedMemorySize": st.sampled_from(["-1Gi", "0", "8Gi", "x", "1e3"]) | json_any,
        "sharedMemory": st.fixed_dictionaries({}, optional={"size": json_any, "disabled": json_any})
        | json_any,
        "eppConfig": st.fixed_dictionaries({}, optional={"configMapRef": json_any, "config": json_any})
        | json_any,
        "multinode": st.fixed_dictionaries({}, optional={"nodeCount": json_any}) | json_any,
        "scalingAdapter": json_any,
        "frontendSidecar": json_any,
        "podTemplate": st.fixed_dictionaries(
            {},
            optional={
                "spec": st.fixed_dictionaries({}, optional={"containers": st.lists(container, max_size=3)})
            },
        )
        | json_any,
        "extraPodSpec": json_any,
    },
)
spec = st.fixed_dictionaries(
    {},
    optional={
        "components": st.lists(component, max_size=3) | json_any,
        "services": st.dictionaries(st.text(max_size=5), component | json_any, max_size=3) | json_any,
        "backendFramework": st.sampled_from(["vllm", "sglang"]) | json_any,
        "model": json_any,
        "modelName": json_any,
        "modelType": st.sampled_from(["lora", "base"]) | json_any,
        "source": json_any,
        "identity": json_any,
        "job": json_any,
        "dgdRef": json_any,
        "replicas": json_any,
    },
)
kinds = st.sampled_from([*KINDS, "Pod"])
obj = st.fixed_dictionaries(
    {},
    optional={
        "apiVersion": st.sampled_from(["nvidia.com/v1alpha1", "nvidia.com/v1beta1", "v1"]) | json_any,
        "kind": kinds | json_any,
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "name": json_any,
                "namespace": json_any,
                "annotations": json_any,
                "deletionTimestamp": st.sampled_from(["2026-01-01T00:00:00Z"]) | json_any,
            },
        )
        | json_any,
        "spec": spec | json_any,
        "status": json_any,
    },
)
request = st.fixed_dictionaries(
    {},
    optional={
        "uid": st.sampled_from(["u"]) | json_any,
        "operation": st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT", "X"]) | json_any,
        "kind": st.fixed_dictionaries(
            {}, optional={"kind": kinds, "version": st.sampled_from(["v1alpha1", "v1beta1"])}
        )
        | json_any,
        "namespace": json_any,
        "userInfo": st.fixed_dictionaries({}, optional={"username": json_any}) | json_any,
        "object": obj | json_any,
        "oldObject": obj | json_any,
        "desiredAPIVersion": st.sampled_from(["nvidia.com/v1beta1", "nvidia.com/v1alpha1", "x"]) | json_any,
        "objects": st.lists(obj, max_size=2) | json_any,
    },
)
reviews = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["admission.k8s.io/v1", "apiextensions.k8s.io/v1", "v1"]),
        "kind": st.sampled_from(["AdmissionReview", "ConversionReview", "Other"]),
    },
    optional={"request": request | json_any},
)
bodies = (
    reviews.map(lambda r: json.dumps(r).encode())
    | json_any.map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=64)
)
paths = st.sampled_from([*sorted(admission_routes()), "/convert", "/nope", "/convert?x=1"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=paths, body=bodies)
def test_property_random_reviews_never_5xx_or_hang(server, pki, path, body):
    started = time.monotonic()
    status, out = post(server, pki, path, body, timeout=15.0)
    assert time.monotonic() - started < 15  # bounded by the server's 5 s deadline, with room for a busy CPU
    assert status < 500
    if status == 200:
        payload = json.loads(out)
        resp = payload["response"]
        assert (resp.get("status") or {}).get("code") != 500, resp  # no rule crashed on this input
        assert resp["uid"] == json.loads(body)["request"]["uid"]
