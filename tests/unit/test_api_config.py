"""OperatorConfiguration: YAML loading, defaults, validation errors naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from dynamo_operator.api.config import (
    ConfigError,
    load_operator_config,
    parse_duration,
    parse_operator_config,
)


def test_defaults_without_a_file() -> None:
    cfg = load_operator_config(None)
    server = cfg.server
    assert (server.metrics.port, server.metrics.secure) == (8080, True)
    assert server.health_probe.port == 8081
    assert server.webhook.port == 9443
    assert server.webhook.cert_dir == "/tmp/k8s-webhook-server/serving-certs"
    assert server.webhook.cert_provision_mode == "auto"
    assert server.webhook.secret_name == "webhook-server-cert"
    assert (cfg.namespace.scope.lease_duration, cfg.namespace.scope.lease_renew_interval) == ("30s", "10s")
    assert cfg.discovery.backend == "kubernetes"
    assert (cfg.logging.level, cfg.logging.format) == ("info", "json")
    assert cfg.orchestrators.grove.termination_delay == "15m"
    assert cfg.gpu.discovery_enabled is True
    assert cfg.security.enable_http2 is False
    assert cfg.leader_election.enabled is False


def test_file_values_override_defaults_and_keep_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "apiVersion: operator.config.dynamo.nvidia.com/v1alpha1\n"
        "kind: OperatorConfiguration\n"
        "server:\n  webhook:\n    certProvisionMode: manual\n    serviceName: dp-webhook\n"
        "leaderElection:\n  enabled: true\n  id: dynamo.nvidia.com\n"
        "serviceMesh:\n  provider: istio\n"
        "infrastructure:\n  natsAddress: nats://nats:4222\n"
        "logging:\n  level: debug\n"
    )
    cfg = load_operator_config(path)
    assert cfg.server.webhook.cert_provision_mode == "manual"
    assert cfg.server.webhook.service_name == "dp-webhook"
    assert cfg.server.webhook.port == 9443
    assert cfg.leader_election.id == "dynamo.nvidia.com"
    assert cfg.service_mesh.istio.tls_mode == "SIMPLE"
    assert cfg.service_mesh.istio.insecure_skip_verify is True
    assert cfg.infrastructure.nats_address == "nats://nats:4222"
    assert (cfg.logging.level, cfg.logging.format) == ("debug", "json")


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"server": {"webhook": {"port": 70000}}}, "server.webhook.port"),
        ({"server": {"metrics": {"port": "eighty"}}}, "server.metrics.port"),
        ({"discovery": {"backend": "zookeeper"}}, "discovery.backend"),
        ({"server": {"webhook": {"certProvisionMode": "magic"}}}, "server.webhook.certProvisionMode"),
        ({"leaderElection": {"enabled": True}}, "leaderElection.id"),
        ({"namespace": {"scope": {"leaseDuration": "soon"}}}, "namespace.scope.leaseDuration"),
        (
            {"namespace": {"scope": {"leaseDuration": "10s", "leaseRenewInterval": "30s"}}},
            "namespace.scope.leaseRenewInterval",
        ),
        ({"infrastructure": {"modelExpressURL": "not a url"}}, "infrastructure.modelExpressURL"),
        ({"logging": {"format": "xml"}}, "logging.format"),
        (
            {"serviceMesh": {"provider": "istio", "istio": {"tlsMode": "MUTUAL"}}},
            "serviceMesh.istio.clientCertificate",
        ),
        ({"unknownSection": {}}, "unknownSection"),
        ({"kind": "Deployment"}, "kind"),
    ],
)
def test_errors_name_the_field(raw: dict, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_operator_config(raw)
    assert field in [path for path, _ in info.value.errors]
    assert field in str(info.value)


def test_bad_yaml_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("server: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_operator_config(path)


def test_parse_duration() -> None:
    assert parse_duration("30s") == 30
    assert parse_duration("1m30s") == 90
    assert parse_duration("15m") == 900
    with pytest.raises(ValueError):
        parse_duration("30")


@pytest.mark.parametrize(
    ("fragment", "path", "says"),
    [
        ({"orchestrators": {"volcanoScheduler": {"enabled": True}}}, "volcanoScheduler.enabled", "KAI"),
        ({"checkpoint": {"seccomp": {"profile": "p.json"}}}, "checkpoint.seccomp.profile", "seccompProfile"),
        ({"checkpoint": {"seccomp": {"disabled": False}}}, "checkpoint.seccomp.disabled", "seccompProfile"),
    ],
)
def test_keys_nothing_acts_on_are_refused_with_what_to_do(fragment, path, says):
    with pytest.raises(ConfigError) as err:
        parse_operator_config(fragment)
    assert any(p == path or p.endswith(path) for p, _ in err.value.errors), err.value.errors
    assert "not" in str(err.value) and says in str(err.value)


def test_values_asking_for_what_happens_anyway_are_accepted():
    cfg = parse_operator_config(
        {
            "orchestrators": {"volcanoScheduler": {"enabled": False}},
            "checkpoint": {"seccomp": {"disabled": True}, "storage": {"pvc": {"create": False}}},
        }
    )
    assert cfg.checkpoint.cleanup_image == "busybox:1.36"  # upstream's default: cleanup Jobs run it


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"rbac": {"discoveryRoleName": "dp-discovery"}}, "namespace.restricted"),
        (
            {
                "namespace": {"restricted": "tenant"},
                "rbac": {"discoveryRoleName": "dp-discovery", "discoveryClusterRoleName": "dp-discovery"},
            },
            "not both",
        ),
        ({"namespace": {"restricted": "tenant"}, "rbac": {"discoveryRoleName": "Dp_Discovery"}}, "Role name"),
    ],
)
def test_a_discovery_role_is_for_a_restricted_operator_alone(raw: dict, says: str) -> None:
    """A Role exists in one namespace: a cluster-wide operator would bind a missing Role in every other."""
    with pytest.raises(ConfigError) as err:
        parse_operator_config(raw)
    assert [p for p, _ in err.value.errors] == ["rbac.discoveryRoleName"]
    assert says in str(err.value)


def test_a_restricted_operator_takes_a_discovery_role() -> None:
    raw = {"namespace": {"restricted": "tenant"}, "rbac": {"discoveryRoleName": "dp-d"}}
    cfg = parse_operator_config(raw)
    assert cfg.rbac.discovery_role_name == "dp-d"
