"""Metrics names and labels, error classes, metrics authn/authz, health probes, settings, CLI."""

from __future__ import annotations

import io
import json
import ssl
import urllib.error
import urllib.request

import pytest
from click.testing import CliRunner
from dynamo_operator.api.config import effective, lookup, parse_duration
from dynamo_operator.cli import main
from dynamo_operator.runtime.log import JSONFormatter, get_logger, setup_logging
from dynamo_operator.runtime.metrics import OperatorMetrics, classify_error
from dynamo_operator.runtime.servers import HealthServer, MetricsServer, parse_bind_address
from dynamo_operator.settings import settings_from_config
from kubernetes.client.exceptions import ApiException

UPSTREAM = {
    "dynamo_operator_reconcile_duration_seconds": ("histogram", ["resource_type", "namespace", "result"]),
    "dynamo_operator_reconcile_total": ("counter", ["resource_type", "namespace", "result"]),
    "dynamo_operator_reconcile_errors_total": ("counter", ["resource_type", "namespace", "error_type"]),
    "dynamo_operator_resources_total": ("gauge", ["resource_type", "namespace", "status"]),
    "dynamo_operator_managed_pods_total": ("gauge", ["component_type", "namespace"]),
    "dynamo_operator_webhook_duration_seconds": ("histogram", ["resource_type", "operation"]),
    "dynamo_operator_webhook_requests_total": ("counter", ["resource_type", "operation", "result"]),
    "dynamo_operator_webhook_denials_total": ("counter", ["resource_type", "operation", "reason"]),
}


def _families(m: OperatorMetrics) -> dict:
    out = {}
    for fam in m.registry.collect():
        name = fam.name + ("_total" if fam.type == "counter" else "")
        out[name] = fam
    return out


def test_upstream_metric_names_types_and_labels():
    m = OperatorMetrics()
    m.observe_reconcile("DynamoGraphDeployment", "ns", "success", 0.01)
    m.observe_reconcile("DynamoGraphDeployment", "ns", "error", 0.01, ApiException(status=409))
    m.set_resource_counts("DynamoGraphDeployment", {("ns", "ready"): 2})
    m.set_managed_pods({("worker", "ns"): 3})
    m.observe_webhook("DynamoGraphDeployment", "CREATE", True, 0.002)
    m.observe_webhook("DynamoGraphDeployment", "UPDATE", False, 0.002, "validation")
    fams = _families(m)
    for name, (typ, labels) in UPSTREAM.items():
        assert name in fams, name
        assert fams[name].type == typ
        sample = next(s for s in fams[name].samples if not s.name.endswith(("_created", "_bucket")))
        assert sorted(sample.labels) == sorted(labels), name
    r = m.registry
    assert (
        r.get_sample_value(
            "dynamo_operator_reconcile_errors_total",
            {"resource_type": "DynamoGraphDeployment", "namespace": "ns", "error_type": "conflict"},
        )
        == 1
    )
    assert (
        r.get_sample_value(
            "dynamo_operator_webhook_denials_total",
            {"resource_type": "DynamoGraphDeployment", "operation": "UPDATE", "reason": "validation"},
        )
        == 1
    )
    buckets = [
        s.labels["le"] for s in fams["dynamo_operator_reconcile_duration_seconds"].samples if "le" in s.labels
    ]
    assert buckets[:3] == ["0.005", "0.01", "0.025"] and "60.0" in buckets
    for q in [
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "workqueue_retries_total",
    ]:
        assert q in fams


def test_gauge_replacement_drops_stale_series():
    m = OperatorMetrics()
    m.set_resource_counts("DynamoGraphDeployment", {("a", "ready"): 1, ("b", "not_ready"): 1})
    m.set_resource_counts("DynamoComponentDeployment", {("a", "ready"): 5})
    m.set_resource_counts("DynamoGraphDeployment", {("a", "ready"): 2})
    r = m.registry
    get = r.get_sample_value
    assert (
        get(
            "dynamo_operator_resources_total",
            {"resource_type": "DynamoGraphDeployment", "namespace": "b", "status": "not_ready"},
        )
        is None
    )
    assert (
        get(
            "dynamo_operator_resources_total",
            {"resource_type": "DynamoGraphDeployment", "namespace": "a", "status": "ready"},
        )
        == 2
    )
    assert (
        get(
            "dynamo_operator_resources_total",
            {"resource_type": "DynamoComponentDeployment", "namespace": "a", "status": "ready"},
        )
        == 5
    )


def test_registries_are_per_manager():
    a, b = OperatorMetrics(), OperatorMetrics()  # would raise "Duplicated timeseries" on a shared registry
    a.observe_reconcile("X", "ns", "success", 0.1)
    assert (
        b.registry.get_sample_value(
            "dynamo_operator_reconcile_total", {"resource_type": "X", "namespace": "ns", "result": "success"}
        )
        is None
    )


@pytest.mark.parametrize(
    "exc,want",
    [
        (ApiException(status=404), "not_found"),
        (ApiException(status=409), "conflict"),
        (ApiException(status=422), "validation"),
        (ApiException(status=400), "bad_request"),
        (ApiException(status=401), "unauthorized"),
        (ApiException(status=403), "forbidden"),
        (ApiException(status=429), "rate_limited"),
        (ApiException(status=503), "unavailable"),
        (ApiException(status=504), "server_timeout"),
        (TimeoutError(), "timeout"),
        (RuntimeError(), "internal"),
    ],
)
def test_classify_error(exc, want):
    assert classify_error(exc) == want


def test_classify_already_exists_by_reason():
    e = ApiException(status=409)
    e.body = json.dumps({"kind": "Status", "reason": "AlreadyExists"})
    assert classify_error(e) == "already_exists"


def test_parse_bind_address():
    assert parse_bind_address(":8081") == ("0.0.0.0", 8081)
    assert parse_bind_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_bind_address("[::1]:9") == ("::1", 9)
    assert parse_bind_address("0") is None and parse_bind_address("") is None
    with pytest.raises(ValueError):
        parse_bind_address("localhost")


def _get(url, token=None):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=5, context=ctx if url.startswith("https") else None) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


class FakeReviewClient:
    def __init__(self):
        self.calls = []

    def create_raw(self, path, body):
        self.calls.append(path)
        if body["kind"] == "TokenReview":
            tok = body["spec"]["token"]
            if tok in ("reader", "nobody"):
                return {
                    "status": {"authenticated": True, "user": {"username": f"system:serviceaccount:x:{tok}"}}
                }
            return {"status": {"authenticated": False}}
        attrs = body["spec"]["nonResourceAttributes"]
        assert attrs == {"path": "/metrics", "verb": "get"}
        return {"status": {"allowed": body["spec"]["user"].endswith(":reader")}}


def test_metrics_server_secure_authn_authz():
    m = OperatorMetrics()
    m.observe_reconcile("ConfigMap", "ns", "success", 0.01)
    fake = FakeReviewClient()
    srv = MetricsServer("127.0.0.1:0", m.registry, secure=True, client=fake)
    srv.start()
    try:
        assert srv.url.startswith("https://127.0.0.1:")
        assert _get(srv.url + "/metrics")[0] == 401  # anonymous
        assert _get(srv.url + "/metrics", "garbage")[0] == 401  # unauthenticated token
        assert _get(srv.url + "/metrics", "nobody")[0] == 403  # authenticated, not authorized
        status, body = _get(srv.url + "/metrics", "reader")
        assert status == 200
        assert "dynamo_operator_reconcile_total{" in body
        n = len(fake.calls)
        assert _get(srv.url + "/metrics", "reader")[0] == 200
        assert len(fake.calls) == n  # cached decision
        assert _get(srv.url + "/other", "reader")[0] == 404
    finally:
        srv.stop()


def test_metrics_server_insecure_plain_http():
    m = OperatorMetrics()
    srv = MetricsServer("127.0.0.1:0", m.registry, secure=False)
    srv.start()
    try:
        status, body = _get(srv.url + "/metrics")
        assert status == 200
        assert "# HELP workqueue_depth" in body
    finally:
        srv.stop()
    with pytest.raises(ValueError):
        MetricsServer("127.0.0.1:0", m.registry, secure=True, client=None)


def test_health_server_readyz_checks():
    hs = HealthServer("127.0.0.1:0")
    ready = {"v": False}
    hs.ready_checks["informers-synced"] = lambda: ready["v"]
    hs.start()
    try:
        assert _get(hs.url + "/healthz") == (200, "ok")
        status, body = _get(hs.url + "/readyz")
        assert status == 500 and "[-]informers-synced" in body
        ready["v"] = True
        assert _get(hs.url + "/readyz") == (200, "ok")
        hs.ready_checks["webhook-server"] = lambda: (_ for _ in ()).throw(RuntimeError("not serving"))
        status, body = _get(hs.url + "/readyz?verbose")
        assert status == 500 and "[+]informers-synced ok" in body and "not serving" in body
        assert _get(hs.url + "/nope")[0] == 404
    finally:
        hs.stop()


# -- settings and CLI ----------------------------------------------------------------------------------------


def test_settings_read_the_defaulted_configuration_document():
    """A partial document gets the configuration's own defaults; nothing is defaulted twice."""
    o = settings_from_config({"server": {"metrics": {"port": 8443}}, "namespace": {"restricted": "x"}})
    s = o.runtime
    defaults = effective(None)
    assert s.metrics_bind_address == f"{defaults['server']['metrics']['bindAddress']}:8443"
    assert s.health_probe_bind_address.endswith(f":{defaults['server']['healthProbe']['port']}")
    assert o.config["server"]["webhook"]["port"] == defaults["server"]["webhook"]["port"]
    assert s.restricted_namespace == "x"
    assert s.scope_lease_duration == parse_duration(defaults["namespace"]["scope"]["leaseDuration"])
    assert lookup(o.config, "server.webhook.secretName") == "webhook-server-cert"
    assert lookup(o.config, "rbac.plannerClusterRoleName", "none") == "none"
    with pytest.raises(ValueError):
        parse_duration("30 parsecs")


def test_settings_defaults_and_precedence():
    s = settings_from_config(None).runtime
    assert (s.metrics_bind_address, s.health_probe_bind_address, s.metrics_secure) == (
        "0.0.0.0:8080",
        "0.0.0.0:8081",
        True,
    )
    assert s.resolved_leader_election_namespace() == "kube-system"
    assert s.leader_election_id == "dynamo.nvidia.com"
    assert (s.scope_lease_duration, s.scope_lease_renew_interval) == (30, 10)
    cfg = {
        "server": {
            "metrics": {"bindAddress": "0.0.0.0", "port": 8443, "secure": False},
            "healthProbe": {"port": 9000},
        },
        "leaderElection": {"enabled": True, "id": "custom"},
        "namespace": {"restricted": "team-a", "scope": {"leaseDuration": "20s", "leaseRenewInterval": "5s"}},
        "logging": {"level": "debug", "format": "text"},
    }
    s = settings_from_config(cfg, health_probe_bind_address="127.0.0.1:1234", leader_elect=None).runtime
    assert s.leader_election_id == "custom" and s.log_format == "text"
    assert s.metrics_bind_address == "0.0.0.0:8443" and s.metrics_secure is False
    assert s.health_probe_bind_address == "127.0.0.1:1234"  # flag wins
    assert s.leader_elect is True  # flag not given: the file's value
    assert s.resolved_leader_election_namespace() == "team-a"
    assert (s.scope_lease_duration, s.scope_lease_renew_interval) == (20, 5)
    assert s.log_level == "debug" and s.watch_namespace == "team-a" and not s.cluster_wide
    s = settings_from_config(cfg, leader_elect=False, leader_election_namespace="ops").runtime
    assert s.leader_elect is False and s.resolved_leader_election_namespace() == "ops"
    assert s.health_probe_bind_address == "0.0.0.0:9000"  # no flag: the file's port
    with pytest.raises(ValueError):
        settings_from_config({"namespace": {"restricted": "x", "scope": {"leaseDuration": "5s"}}})


def test_json_logs_one_object_per_line():
    buf = io.StringIO()
    setup_logging("debug", "json", stream=buf)
    try:
        get_logger("controller", controller="dgd").bind(namespace="ns", reconcileID="r1").info(
            "hello", name="x"
        )
        get_logger("quiet").debug("dbg")
    finally:
        setup_logging("info", "json")
    lines = [json.loads(line) for line in buf.getvalue().splitlines()]
    assert lines[0]["msg"] == "hello" and lines[0]["level"] == "info" and lines[0]["logger"] == "controller"
    assert {k: lines[0][k] for k in ("controller", "namespace", "name", "reconcileID")} == {
        "controller": "dgd",
        "namespace": "ns",
        "name": "x",
        "reconcileID": "r1",
    }
    assert "ts" in lines[0] and lines[1]["level"] == "debug"
    assert JSONFormatter  # exported for reuse


def test_cli_help_and_bad_config(tmp_path):
    r = CliRunner().invoke(main, ["run", "--help"])
    assert r.exit_code == 0
    for flag in [
        "--kubeconfig",
        "--config",
        "--health-probe-bind-address",
        "--metrics-bind-address",
        "--leader-elect / --no-leader-elect",
        "--namespace-restricted",
    ]:
        assert flag in r.output
    bad = tmp_path / "c.yaml"
    bad.write_text(
        "namespace:\n  restricted: x\n  scope:\n    leaseDuration: 1s\n    leaseRenewInterval: 2s\n"
    )
    r = CliRunner().invoke(main, ["run", "--config", str(bad)])
    assert r.exit_code == 2
