"""Values files as a new user writes them, through the real `helm template` (the same schema validation and
coalescing `helm install` runs, without a cluster): garbage is refused with a message naming the file or
the offending key, and every accepted render prints no Helm warning at all.

Needs the pinned helm on PATH (the Makefile puts .tools/bin there); no cluster: the ``tools`` tier, which
`make charts-check` runs beside helm lint and helm unittest.
"""

from __future__ import annotations

import subprocess

import pytest
import yaml
from support.chart import CHART, REPO_ROOT, docs, template, warnings

pytestmark = pytest.mark.tools


GARBAGE = [
    pytest.param("- a\n- b\n", "my-values.yaml", id="not-a-mapping"),
    pytest.param("nats: [\n", "my-values.yaml", id="broken-yaml"),
    pytest.param("foo: 1\n", "additional properties 'foo' not allowed", id="unknown-top-level-key"),
    pytest.param(
        "dynamo-operator:\n  controllerManger: {}\n",
        "additional properties 'controllerManger' not allowed",
        id="typo-in-subchart-key",
    ),
    pytest.param('nats:\n  enabled: "yes"\n', "at '/enabled': got string, want boolean", id="wrong-type"),
    pytest.param(
        "dynamo-operator:\n  webhook:\n    timeoutSeconds: 90\n",
        "at '/webhook/timeoutSeconds': maximum: got 90, want 30",
        id="out-of-range",
    ),
    pytest.param(
        "dynamo-operator:\n  natsAddr: http://nats:4222\n", "at '/natsAddr'", id="address-with-wrong-scheme"
    ),
    pytest.param(
        "dynamo-operator:\n  discoveryBackend: consul\n",
        "at '/discoveryBackend': value must be one of 'kubernetes', 'etcd'",
        id="unknown-enum",
    ),
    pytest.param(
        "dynamo-operator:\n  controllerManager:\n    affinity: [zone-a]\n",
        "at '/controllerManager/affinity'",
        id="affinity-as-a-list",
    ),
    pytest.param("etcd:\n  replicaCount: 2\n", "at '/replicaCount': value must be one of", id="even-etcd"),
    pytest.param(
        "etcd:\n  enabled: false\ndynamo-operator:\n  discoveryBackend: etcd\n",
        "discoveryBackend=etcd needs etcd",
        id="etcd-discovery-without-etcd",
    ),
    pytest.param(
        "dynamo-operator:\n  controllerManager:\n    manager:\n      args: [--metrics-bind-address=:8080]\n",
        "must stay on loopback",
        id="public-plain-metrics",
    ),
]


@pytest.mark.parametrize(("values", "message"), GARBAGE)
def test_garbage_values_are_refused_with_a_message_naming_the_key(tmp_path, values, message) -> None:
    proc = template(tmp_path, values)
    assert proc.returncode != 0, f"rendered although the values are wrong:\n{values}"
    assert message in proc.stderr, proc.stderr
    assert proc.stdout.strip() == "", "nothing may be rendered from refused values"


@pytest.mark.parametrize(
    "values",
    [
        pytest.param(None, id="defaults"),
        pytest.param("", id="empty-file"),
        pytest.param(
            "dynamo-operator:\n  controllerManager:\n    affinity:\n      nodeAffinity:\n"
            "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
            "            - matchExpressions: [{key: kubernetes.io/os, operator: In, values: [linux]}]\n",
            id="affinity-object",
        ),
        pytest.param(
            "dynamo-operator:\n  controllerManager:\n    affinity: []\n", id="affinity-upstream-list"
        ),
        pytest.param(
            "dynamo-operator:\n  controllerManager:\n    affinity: {}\n", id="affinity-empty-object"
        ),
        pytest.param((CHART / "ci" / "namespace-restricted-values.yaml").read_text(), id="ci-restricted"),
        pytest.param((REPO_ROOT / "examples" / "demo-values.yaml").read_text(), id="demo"),
        pytest.param("grove:\n  enabled: true\nkai-scheduler:\n  enabled: true\n", id="grove-and-kai"),
        pytest.param("nats:\n  enabled: false\netcd:\n  enabled: false\n", id="no-nats-no-etcd"),
    ],
)
def test_accepted_values_render_without_any_helm_warning(tmp_path, values) -> None:
    proc = template(tmp_path, values)
    assert proc.returncode == 0, proc.stderr
    assert warnings(proc) == []


def _operator_config(proc: subprocess.CompletedProcess[str]) -> dict:
    cm = next(d for d in docs(proc) if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-config"))
    return yaml.safe_load(cm["data"]["config.yaml"])


def test_without_nats_and_etcd_kubernetes_discovery_gets_no_addresses(tmp_path) -> None:
    proc = template(tmp_path, None, "nats.enabled=false", "etcd.enabled=false")
    assert proc.returncode == 0, proc.stderr
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs(proc)}
    assert not any(kind == "StatefulSet" for kind, _ in kinds), kinds
    config = _operator_config(proc)
    assert config["discovery"]["backend"] == "kubernetes"
    assert "natsAddress" not in (config.get("infrastructure") or {})
    assert "etcdAddress" not in (config.get("infrastructure") or {})


def test_each_bundled_store_alone_gives_only_its_address(tmp_path) -> None:
    """``nats.enabled`` and ``etcd.enabled`` are the umbrella's conditions on the bundled stores: the one
    switched off renders no StatefulSet, and the operator is given only the other's address."""

    def statefulsets(proc) -> set[str]:
        return {d["metadata"]["name"] for d in docs(proc) if d["kind"] == "StatefulSet"}

    no_etcd = template(tmp_path, None, "etcd.enabled=false")
    only_nats = _operator_config(no_etcd)["infrastructure"]
    # the bundled NATS's defaults: each graph namespace's own account (its natsAuth)
    assert only_nats["natsAddress"] == "nats://dp-nats.dynamo-system.svc.cluster.local:4222"
    assert set(only_nats) == {"natsAddress", "natsAuth"}, only_nats
    assert only_nats["natsAuth"]["method"] == "namespaceAccount"
    assert statefulsets(no_etcd) == {"dp-nats"}
    no_nats = template(tmp_path, None, "nats.enabled=false")
    only_etcd = _operator_config(no_nats)["infrastructure"]
    # the bundled etcd's defaults: mutual TLS, and each graph namespace's own access (its etcdAuth)
    assert only_etcd["etcdAddress"] == "https://dp-etcd.dynamo-system.svc.cluster.local:2379"
    assert set(only_etcd) == {"etcdAddress", "etcdAuth"}, only_etcd
    assert only_etcd["etcdAuth"]["method"] == "namespaceCertificate", only_etcd
    assert statefulsets(no_nats) == {"dp-etcd"}


def test_grove_and_kai_scheduler_enabled_each_render_their_operator_only_when_true(tmp_path) -> None:
    """``grove.enabled`` and ``kai-scheduler.enabled`` are the umbrella's conditions on those subcharts (off
    by default): each brings its own operator Deployment and nothing of the other's."""
    grove, kai = ("Deployment", "dp-grove-operator"), ("Deployment", "dp-kai-operator")

    def rendered(*sets: str) -> set[tuple[str, str]]:
        proc = template(tmp_path, None, *sets)
        assert proc.returncode == 0, proc.stderr
        return {(d["kind"], d["metadata"]["name"]) for d in docs(proc)}

    default = rendered()
    assert grove not in default and kai not in default
    only_grove = rendered("grove.enabled=true")
    assert grove in only_grove and kai not in only_grove
    only_kai = rendered("kai-scheduler.enabled=true")
    assert kai in only_kai and grove not in only_kai


def test_the_dgdr_profiler_image_reaches_the_operator_configuration(tmp_path) -> None:
    """``dgdr.profilerImage`` becomes ``images.profiler`` (a request naming no profiler gets it); unset, the
    operator's own default stands (absent from the configuration)."""
    from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE, effective, lookup

    config = _operator_config(
        template(tmp_path, None, "dynamo-operator.dgdr.profilerImage=reg.local/planner:1")
    )
    assert config["images"]["profiler"] == "reg.local/planner:1"
    default = _operator_config(template(tmp_path, None))
    assert "profiler" not in default["images"]
    assert lookup(effective(default), "images.profiler") == DEFAULT_PROFILER_IMAGE


def test_metrics_follow_the_reference_layout(tmp_path) -> None:
    """127.0.0.1:8080 for the manager (plain, inside the pod); the Service reaches 8443 `https`."""
    rendered = docs(template(tmp_path))
    deploy = next(
        d for d in rendered if d["kind"] == "Deployment" and "controller-manager" in d["metadata"]["name"]
    )
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert "--metrics-bind-address=127.0.0.1:8080" in container["args"]
    assert "--metrics-service-bind-address=:8443" in container["args"]
    assert {"name": "https", "containerPort": 8443, "protocol": "TCP"} in container["ports"]
    svc = next(d for d in rendered if d["kind"] == "Service" and d["metadata"]["name"].endswith("-metrics"))
    assert svc["spec"]["ports"] == [{"name": "https", "port": 8443, "targetPort": "https", "protocol": "TCP"}]


def test_the_operator_refuses_what_the_chart_refuses() -> None:
    """The chart's metrics layout, as the operator enforces it: with a service listener, the plain
    listener must stay on loopback."""
    from dynamo_operator.runtime.servers import MetricsServer
    from prometheus_client import CollectorRegistry

    with pytest.raises(ValueError, match=r"bind metrics to 127\.0\.0\.1"):
        MetricsServer(":8080", CollectorRegistry(), secure=False, service_bind_address="127.0.0.1:0")


def test_plain_loopback_listener_and_service_listener_serve_the_same_registry() -> None:
    import urllib.request

    from dynamo_operator.runtime.servers import MetricsServer
    from prometheus_client import CollectorRegistry, Counter

    registry = CollectorRegistry()
    Counter("layout_probe", "a probe", registry=registry).inc()
    server = MetricsServer("127.0.0.1:0", registry, secure=False, service_bind_address="127.0.0.1:0")
    server.start()
    try:
        assert server.service is not None and server.scheme == "http"
        for url in (server.url, server.service.url):
            with urllib.request.urlopen(f"{url}/metrics", timeout=5) as r:
                assert "layout_probe_total 1.0" in r.read().decode()
    finally:
        server.stop()
    assert server.service.port is None  # stopped with its parent
