"""NATS / etcd credentials the operator passes to every component (infrastructure.natsAuth, natsTLS,
etcdAuth): the Dynamo runtime's variable names, Secret references in the component's namespace, files
mounted read-only, and nothing at all while the configuration names none."""

from __future__ import annotations

import copy

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.api.config import ConfigError, parse_operator_config
from dynamo_operator.render import RenderContext, render_all

EXAMPLE = yaml.safe_load((REPO_ROOT / "examples" / "vllm-agg.yaml").read_text())
BASE = {"infrastructure": {"natsAddress": "nats://n:4222", "etcdAddress": "http://e:2379"}}


def ctx(**infra) -> RenderContext:
    cfg = copy.deepcopy(BASE)
    cfg["infrastructure"].update(infra)
    return RenderContext(operator_config=parse_operator_config(cfg))


def pods(context: RenderContext, dgd: dict | None = None) -> list[dict]:
    obj = copy.deepcopy(dgd or EXAMPLE)
    obj["metadata"]["namespace"] = "team"
    return [o["spec"]["template"]["spec"] for o in render_all(obj, context) if o["kind"] == "Deployment"]


def env_of(pod: dict) -> dict:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in pod["containers"][0]["env"]}


def ref(secret: str, key: str) -> dict:
    return {"secretKeyRef": {"name": secret, "key": key}}


def test_nothing_is_added_without_credentials_and_addresses_keep_their_form():
    for pod in pods(ctx()):
        env = env_of(pod)
        assert env["NATS_SERVER"] == "nats://n:4222" and env["ETCD_ENDPOINTS"] == "http://e:2379"
        assert not [k for k in env if k.startswith(("NATS_AUTH", "NATS_TLS", "ETCD_AUTH"))]
        assert not [v for v in pod.get("volumes", []) if v["name"].startswith("dynamo-nats")]


def test_user_password_for_nats_and_client_certificates_for_etcd():
    context = ctx(
        natsAuth={"method": "userPassword", "secretName": "nats-client"},
        etcdAuth={"method": "clientCertificate", "secretName": "etcd-client-tls"},
    )
    found = pods(context)
    assert len(found) == 2  # Frontend and the worker: every component gets them
    for pod in found:
        env = env_of(pod)
        assert env["NATS_AUTH_USERNAME"] == ref("nats-client", "username")
        assert env["NATS_AUTH_PASSWORD"] == ref("nats-client", "password")
        # PEM text, not paths: the runtime's etcd client parses the variables' values
        assert env["ETCD_AUTH_CA"] == ref("etcd-client-tls", "ca.crt")
        assert env["ETCD_AUTH_CLIENT_CERT"] == ref("etcd-client-tls", "tls.crt")
        assert env["ETCD_AUTH_CLIENT_KEY"] == ref("etcd-client-tls", "tls.key")
        assert "NATS_AUTH_TOKEN" not in env and "ETCD_AUTH_USERNAME" not in env


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("token", {"NATS_AUTH_TOKEN": ref("s", "token")}),
        ("credentialsFile", {"NATS_AUTH_CREDENTIALS_FILE": "/etc/dynamo/nats-auth/nats.creds"}),
    ],
)
def test_other_nats_methods(method, expected):
    pod = pods(ctx(natsAuth={"method": method, "secretName": "s"}))[0]
    env = env_of(pod)
    assert {k: env[k] for k in env if k.startswith("NATS_AUTH")} == expected
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    if method == "credentialsFile":
        assert volumes["dynamo-nats-auth"]["secret"] == {
            "secretName": "s",
            "items": [{"key": "nats.creds", "path": "nats.creds", "mode": 0o440}],
        }
        mount = next(m for m in pod["containers"][0]["volumeMounts"] if m["name"] == "dynamo-nats-auth")
        assert mount == {"name": "dynamo-nats-auth", "mountPath": "/etc/dynamo/nats-auth", "readOnly": True}
    else:
        assert "dynamo-nats-auth" not in volumes


@pytest.mark.parametrize("client_cert", [False, True])
def test_nats_tls_mounts_the_ca_and_the_client_certificate_when_asked(client_cert):
    pod = pods(ctx(natsTLS={"secretName": "nats-client-tls", "clientCertificate": client_cert}))[1]
    env = env_of(pod)
    assert env["NATS_TLS_CA_CERT_PATH"] == "/etc/dynamo/nats-tls/ca.crt"
    # the runtime 1.6.1 refuses TLS files with a nats:// address ("NATS TLS is configured ... but NATS_SERVER
    # does not use the 'tls://' scheme"), so the scheme follows
    assert env["NATS_SERVER"] == "tls://n:4222"
    items = next(v for v in pod["volumes"] if v["name"] == "dynamo-nats-tls")["secret"]["items"]
    if client_cert:
        assert env["NATS_TLS_CLIENT_CERT_PATH"] == "/etc/dynamo/nats-tls/tls.crt"
        assert env["NATS_TLS_CLIENT_KEY_PATH"] == "/etc/dynamo/nats-tls/tls.key"
        assert {i["key"]: i["mode"] for i in items} == {"ca.crt": 0o444, "tls.crt": 0o444, "tls.key": 0o440}
    else:
        assert "NATS_TLS_CLIENT_KEY_PATH" not in env
        assert items == [{"key": "ca.crt", "path": "ca.crt", "mode": 0o444}]


def test_user_env_still_wins_over_the_injected_credentials():
    dgd = copy.deepcopy(EXAMPLE)
    main = dgd["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]
    main["env"] = [{"name": "NATS_AUTH_TOKEN", "value": "mine"}]
    pod = pods(ctx(natsAuth={"method": "token", "secretName": "s"}), dgd)[0]
    assert env_of(pod)["NATS_AUTH_TOKEN"] == "mine"


@pytest.mark.parametrize(
    ("infra", "fragment"),
    [
        (
            {"natsAuth": {"method": "token"}},
            "infrastructure.natsAuth.secretName: is required with method token",
        ),
        ({"etcdAuth": {"secretName": "x"}}, "infrastructure.etcdAuth.method: is required with secretName"),
        ({"etcdAuth": {"method": "password", "secretName": "x"}}, "infrastructure.etcdAuth.method: Input"),
        ({"natsTLS": {"secretName": "Bad_Name"}}, "infrastructure.natsTLS.secretName: 'Bad_Name' is not"),
    ],
)
def test_incomplete_references_are_refused_naming_the_field(infra, fragment):
    with pytest.raises(ConfigError) as e:
        parse_operator_config({"infrastructure": infra})
    assert fragment in str(e.value)


@pytest.mark.parametrize(
    ("infra", "key", "address"),
    [
        ({"natsAuth": {"method": "token", "secretName": "s"}}, "natsAuth", "natsAddress"),
        ({"natsTLS": {"secretName": "nats-client-tls"}}, "natsTLS", "natsAddress"),
        ({"etcdAuth": {"method": "clientCertificate", "secretName": "s"}}, "etcdAuth", "etcdAddress"),
        (  # the per-namespace method would issue no account at all (natsaccess.enabled)
            {
                "natsAuth": {
                    "method": "namespaceAccount",
                    "secretName": "dynamo-nats-client",
                    "adminSecretName": "dp-nats-admin",
                    "adminSecretNamespace": "dynamo-system",
                    "accountsConfigMap": "dp-nats-accounts",
                }
            },
            "natsAuth",
            "natsAddress",
        ),
    ],
)
def test_credentials_without_the_address_they_are_for_are_refused(infra, key, address):
    """Without the address the workloads get no NATS_SERVER / ETCD_ENDPOINTS: the credentials would be
    inert, so the configuration is refused naming the section and the address that fixes it."""
    cfg = copy.deepcopy(BASE)
    del cfg["infrastructure"][address]
    cfg["infrastructure"].update(infra)
    with pytest.raises(ConfigError) as e:
        parse_operator_config(cfg)
    assert f"infrastructure.{key}: is set but infrastructure.{address} is empty" in str(e.value)
    assert f"set infrastructure.{address} to the" in str(e.value)
    assert len(e.value.errors) == 1, e.value.errors
    cfg["infrastructure"][address] = BASE["infrastructure"][address]  # the fix named
    parse_operator_config(cfg)


def test_an_empty_credentials_section_asks_for_nothing_and_is_accepted():
    parse_operator_config({"infrastructure": {"natsAuth": {}, "natsTLS": {}, "etcdAuth": {}}})


@pytest.mark.parametrize(
    ("infra", "fragment"),
    [
        (  # read by namespaceAccount only (render/natsaccess.py)
            {"natsAuth": {"method": "token", "secretName": "s", "monitorURL": "http://n:8222"}},
            "infrastructure.natsAuth.monitorURL: is read only with method namespaceAccount (method is token)",
        ),
        (
            {"natsAuth": {"method": "userPassword", "secretName": "s", "accountsConfigMap": "a"}},
            "infrastructure.natsAuth.accountsConfigMap: is read only with method namespaceAccount",
        ),
        (  # read by namespaceCertificate only (render/etcdaccess.py)
            {"etcdAuth": {"method": "clientCertificate", "secretName": "s", "proxyImage": "etcd:v3.5.21"}},
            "infrastructure.etcdAuth.proxyImage: is read only with method namespaceCertificate",
        ),
        (
            {"natsTLS": {"clientCertificate": True}},
            "infrastructure.natsTLS.secretName: is required with clientCertificate",
        ),
    ],
)
def test_fields_no_method_reads_are_refused(infra, fragment):
    cfg = copy.deepcopy(BASE)
    cfg["infrastructure"].update(infra)
    with pytest.raises(ConfigError) as e:
        parse_operator_config(cfg)
    assert fragment in str(e.value)
