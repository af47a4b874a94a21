"""Each graph namespace's own NATS account (``infrastructure.natsAuth.method: namespaceAccount``, the chart's
default with its bundled NATS): what the pods get (``render/natsaccess.py``), the accounts file, and the
controller's writes (``controllers/natsaccess.py``) on a dict client: the account before the certificate,
the accounts ConfigMap written only when its list changes, the certificate as etcd's (``clientcert``).
(tests/integration/test_nats_access.py runs the chart's server configuration with these certificates.)"""

from __future__ import annotations

import base64
import copy
import datetime as dt
import functools
import logging
from types import SimpleNamespace

import pytest
import yaml
from cryptography import x509
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator import pki
from dynamo_operator.api.config import ConfigError, parse_operator_config
from dynamo_operator.controllers import dgd
from dynamo_operator.controllers.natsaccess import NatsAccessSync
from dynamo_operator.controllers.sync import RecentWrites
from dynamo_operator.render import RenderContext, render_all
from dynamo_operator.render import natsaccess as na
from dynamo_operator.runtime.client import CONFIGMAPS, SECRETS
from kubernetes.client.exceptions import ApiException
from support.fakecerts import FakeClient

GRAPH = yaml.safe_load((REPO_ROOT / "examples" / "mocker-kv-router.yaml").read_text())
NATS = "nats://dp-nats.dynamo-system.svc.cluster.local:4222"
# what the chart writes with its defaults (charts/platform/components/operator/templates/_infrastructure.tpl)
NATS_AUTH = {
    "method": "namespaceAccount",
    "secretName": "dynamo-nats-client",
    "adminSecretName": "dp-nats-admin",
    "adminSecretNamespace": "dynamo-system",
    "accountsConfigMap": "dp-nats-accounts",
}


def context(**nats_auth) -> RenderContext:
    infra = {"natsAddress": NATS, "natsAuth": {**NATS_AUTH, **nats_auth}}
    return RenderContext(operator_config=parse_operator_config({"infrastructure": infra}))


def graph(namespace: str = "team-a", name: str = "g") -> dict:
    g = copy.deepcopy(GRAPH)
    g["metadata"].update(namespace=namespace, name=name, uid=f"uid-{namespace}-{name}")
    return g


def pods(objs: list[dict]) -> list[dict]:
    return [o["spec"]["template"]["spec"] for o in objs if o["kind"] == "Deployment"]


def test_every_runtime_container_gets_the_namespaces_certificate_as_files_and_a_tls_address() -> None:
    objs = render_all(graph(), context(secretName="team-nats"))
    found = pods(objs)
    assert len(found) == 2  # the frontend (its KV router subscribes) and the worker (it publishes)
    for pod in found:
        main = pod["containers"][0]
        env = {e["name"]: e for e in main["env"]}
        # the runtime 1.6.1 refuses TLS files with nats://; the host and port stay
        assert env["NATS_SERVER"]["value"] == "tls://dp-nats.dynamo-system.svc.cluster.local:4222"
        assert env["NATS_TLS_CA_CERT_PATH"]["value"] == f"{na.TLS_DIR}/ca.crt"
        assert env["NATS_TLS_CLIENT_CERT_PATH"]["value"] == f"{na.TLS_DIR}/tls.crt"
        assert env["NATS_TLS_CLIENT_KEY_PATH"]["value"] == f"{na.TLS_DIR}/tls.key"
        # empty: the runtime's default user (user/user) would be refused by the certificate-mapped server
        assert env["NATS_AUTH_USERNAME"] == {"name": "NATS_AUTH_USERNAME", "value": ""}
        assert env["NATS_AUTH_PASSWORD"] == {"name": "NATS_AUTH_PASSWORD", "value": ""}
        assert "NATS_AUTH_TOKEN" not in env and not any(
            "valueFrom" in e for n, e in env.items() if "NATS" in n
        )
        assert {"name": na.TLS_VOLUME, "mountPath": na.TLS_DIR, "readOnly": True} in main["volumeMounts"]
        (volume,) = [v for v in pod["volumes"] if v["name"] == na.TLS_VOLUME]
        assert volume["secret"]["secretName"] == "team-nats"
        modes = {i["key"]: i["mode"] for i in volume["secret"]["items"]}
        assert modes == {"ca.crt": 0o444, "tls.crt": 0o444, "tls.key": 0o440}
    (secret,) = [o for o in objs if o["kind"] == "Secret" and o["metadata"]["name"] == "team-nats"]
    assert secret["type"] == "kubernetes.io/tls" and "data" not in secret  # issued by the controller
    assert secret["metadata"]["namespace"] == "team-a" and na.is_ours(secret)


def test_a_frontend_sidecar_shares_the_main_containers_certificate() -> None:
    g = graph()
    comp = next(c for c in g["spec"]["components"] if c["type"] == "worker")
    containers = comp["podTemplate"]["spec"]["containers"]
    comp["frontendSidecar"] = "fe"
    containers.append({"name": "fe", "image": containers[0]["image"]})
    worker = [p for p in pods(render_all(g, context())) if any(c["name"] == "fe" for c in p["containers"])]
    (pod,) = worker
    fe = next(c for c in pod["containers"] if c["name"] == "fe")
    env = {e["name"]: e.get("value") for e in fe["env"]}
    assert (
        env["NATS_SERVER"].startswith("tls://") and env["NATS_TLS_CLIENT_KEY_PATH"] == f"{na.TLS_DIR}/tls.key"
    )
    assert any(m["name"] == na.TLS_VOLUME for m in fe["volumeMounts"])


def test_without_the_method_nothing_changes() -> None:
    ctx = RenderContext(operator_config=parse_operator_config({"infrastructure": {"natsAddress": NATS}}))
    for pod in pods(render_all(graph(), ctx)):
        env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
        assert env["NATS_SERVER"] == NATS and not [k for k in env if k.startswith(("NATS_TLS", "NATS_AUTH"))]


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"adminSecretName": None}, "infrastructure.natsAuth.adminSecretName: is required"),
        ({"accountsConfigMap": None}, "infrastructure.natsAuth.accountsConfigMap: is required"),
        (
            {"secretName": None},
            "infrastructure.natsAuth.secretName: is required with method namespaceAccount",
        ),
    ],
)
def test_the_configuration_refuses_a_half_configured_method(change: dict, fragment: str) -> None:
    auth = {k: v for k, v in {**NATS_AUTH, **change}.items() if v is not None}
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.")):
        parse_operator_config({"infrastructure": {"natsAddress": NATS, "natsAuth": auth}})


def test_a_shared_tls_secret_beside_the_namespaces_own_is_refused() -> None:
    infra = {"natsAddress": NATS, "natsAuth": NATS_AUTH, "natsTLS": {"secretName": "shared"}}
    with pytest.raises(ConfigError, match=r"infrastructure\.natsTLS\.secretName: must be empty"):
        parse_operator_config({"infrastructure": infra})


def test_the_accounts_file_lists_what_it_was_given_and_reads_back() -> None:
    text = na.accounts_conf(["team-b", "team-a", "team-a"])
    assert text.splitlines()[1:] == [
        "accounts: {",
        "  SYS: {}",
        '  ns-team-a: { jetstream: enabled, users: [ { user: "CN=ns:team-a" } ] }',
        '  ns-team-b: { jetstream: enabled, users: [ { user: "CN=ns:team-b" } ] }',
        "}",
    ]
    assert na.listed_namespaces(text) == {"team-a", "team-b"}
    assert na.listed_namespaces(na.accounts_conf([])) == set()
    # a line whose user is not its account's own namespace is not taken as that namespace's account
    assert na.listed_namespaces('  ns-a: { jetstream: enabled, users: [ { user: "CN=ns:b" } ] }') == set()


def test_the_chart_installs_the_same_empty_accounts_file() -> None:
    """The chart's ConfigMap before any graph (nats.initialAccounts) is this module's accounts_conf([]): the
    operator's first write changes only the account lines."""
    helpers = (REPO_ROOT / "charts/platform/components/nats/templates/_helpers.tpl").read_text()
    body = helpers.split('{{- define "nats.initialAccounts" -}}\n', 1)[1].split("{{- end }}", 1)[0]
    assert body == na.accounts_conf([])


class Recorder:
    def __init__(self):
        self.events: list[tuple[str, str]] = []

    def normal(self, obj: dict, reason: str, message: str) -> None:
        self.events.append((reason, message))


@pytest.fixture
def cluster():
    client = FakeClient()
    ca, ca_key = pki.issue_ca(dt.timedelta(days=365), common_name="dp-nats-ca")
    data = {"ca.crt": base64.b64encode(ca).decode(), "ca.key": base64.b64encode(ca_key).decode()}
    client.create(
        SECRETS, {"metadata": {"name": "dp-nats-admin", "namespace": "dynamo-system"}, "data": data}
    )
    cm = {"metadata": {"name": "dp-nats-accounts", "namespace": "dynamo-system"}}
    client.create(CONFIGMAPS, {**cm, "data": {"accounts.conf": na.accounts_conf([])}})
    client.writes.clear()
    deps = SimpleNamespace(client=client, recent=RecentWrites(), recorder=Recorder(), nats_clients=None)
    return SimpleNamespace(client=client, deps=deps, ca=ca)


def accounts(client: FakeClient) -> set[str]:
    return na.listed_namespaces(
        client.get(CONFIGMAPS, "dp-nats-accounts", "dynamo-system")["data"]["accounts.conf"]
    )


def test_the_first_graph_of_a_namespace_adds_its_account_then_its_certificate(cluster) -> None:
    sync = NatsAccessSync(cluster.deps)
    sync.apply(graph("team-a", "g1"), {}, context())
    assert cluster.client.writes == [("replace", "dp-nats-accounts"), ("create", "dynamo-nats-client")]
    assert accounts(cluster.client) == {"team-a"}
    secret = cluster.client.get(SECRETS, "dynamo-nats-client", "team-a")
    cert = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    assert cert.subject.rfc4514_string() == "CN=ns:team-a"  # verify_and_map's user of ns-team-a
    assert base64.b64decode(secret["data"]["ca.crt"]) == cluster.ca
    assert [r["uid"] for r in secret["metadata"]["ownerReferences"]] == ["uid-team-a-g1"]
    cluster.client.writes.clear()

    sync.apply(graph("team-a", "g1"), {}, context())  # its next pass: nothing to write
    assert cluster.client.writes == []
    sync.apply(graph("team-a", "g2"), {}, context())  # another graph there: no accounts write, an owner
    assert cluster.client.writes == [("replace", "dynamo-nats-client")]
    sync.apply(graph("team-b", "g1"), {}, context())
    assert accounts(cluster.client) == {"team-a", "team-b"}


def test_the_accounts_file_is_read_back_not_trusted_from_memory(cluster) -> None:
    """Another operator process (a restart, a new leader) finds the namespace already listed: no write;
    a namespace listed by no one is added to what is there, never over it."""
    NatsAccessSync(cluster.deps).apply(graph("team-a"), {}, context())
    cluster.client.writes.clear()
    NatsAccessSync(cluster.deps).apply(graph("team-a", "g2"), {}, context())
    assert ("replace", "dp-nats-accounts") not in cluster.client.writes
    NatsAccessSync(cluster.deps).apply(graph("team-c"), {}, context())
    assert accounts(cluster.client) == {"team-a", "team-c"}


def test_forgetting_a_namespace_removes_its_account_and_only_when_listed(cluster) -> None:
    sync = NatsAccessSync(cluster.deps)
    for ns in ("team-a", "team-b"):
        sync.apply(graph(ns), {}, context())
    cluster.client.writes.clear()
    sync.forget_namespace("team-a", context())
    assert accounts(cluster.client) == {"team-b"}
    sync.forget_namespace("team-a", context())  # already gone: no write
    assert cluster.client.writes == [("replace", "dp-nats-accounts")]
    cluster.client.writes.clear()
    sync.apply(graph("team-a", "again"), {}, context())  # a graph there again: listed again
    assert accounts(cluster.client) == {"team-a", "team-b"}


def test_a_forget_is_tried_again_then_logged_by_its_thread(cluster, monkeypatch, caplog) -> None:
    """The forget threads (NATS and etcd, dgd.in_background) run once, on the delete of the namespace's
    Secret: a conflicting write of the accounts file (another namespace's pass, seen in a busy main stream)
    is read again and tried again; past FORGET_ATTEMPTS the failure is logged with what was not removed
    (the handler once raised instead: it called log.warning on the logger's factory)."""
    monkeypatch.setattr(dgd.time, "sleep", lambda s: None)
    sync = NatsAccessSync(cluster.deps)
    for ns in ("team-a", "team-b"):
        sync.apply(graph(ns), {}, context())
    real, tries = cluster.client.replace, []

    def conflict_first(res, body, subresource=None):
        tries.append(body["metadata"]["name"])
        if len(tries) == 1:
            raise ApiException(status=409, reason="Conflict")
        return real(res, body, subresource)

    def forget(namespace: str):
        return functools.partial(sync.forget_namespace, namespace, context())

    cluster.client.replace = conflict_first
    with caplog.at_level(logging.WARNING, logger="controllers"):
        dgd.in_background(
            "nats-forget-team-a", "a namespace's NATS account", "team-a", forget("team-a")
        ).join(10)
    assert accounts(cluster.client) == {"team-b"} and tries == ["dp-nats-accounts"] * 2
    assert not [r for r in caplog.records if r.name == "controllers"]

    def conflict(res, body, subresource=None):
        tries.append(body["metadata"]["name"])
        raise ApiException(status=409, reason="Conflict")

    cluster.client.replace, tries[:] = conflict, []
    with caplog.at_level(logging.WARNING, logger="controllers"):
        dgd.in_background(
            "nats-forget-team-b", "a namespace's NATS account", "team-b", forget("team-b")
        ).join(10)
    assert len(tries) == dgd.FORGET_ATTEMPTS and accounts(cluster.client) == {"team-b"}
    (record,) = [r for r in caplog.records if r.name == "controllers"]
    assert record.getMessage() == "could not remove a namespace's NATS account"
    assert record.kv == {
        "namespace": "team-b",
        "attempts": dgd.FORGET_ATTEMPTS,
        "error": "the accounts ConfigMap changed meanwhile",
    }


def test_a_secret_of_that_name_the_operator_did_not_make_is_left_alone(cluster) -> None:
    mine = {"metadata": {"name": "dynamo-nats-client", "namespace": "team-a"}, "type": "kubernetes.io/tls"}
    cluster.client.create(SECRETS, mine)
    cluster.client.writes.clear()
    NatsAccessSync(cluster.deps).apply(graph("team-a"), {}, context())
    assert cluster.client.writes == [("replace", "dp-nats-accounts")]


def test_a_refused_accounts_write_is_tried_again_and_no_certificate_comes_before_it(cluster) -> None:
    """An admission policy or RBAC refusing the ConfigMap's update fails the pass before the certificate is
    issued; the next pass tries the account again (nothing is remembered as listed that was not written)."""
    real = cluster.client.replace

    def refuse(res, body, subresource=None):
        raise ApiException(status=403, reason="Forbidden")

    cluster.client.replace = refuse
    sync = NatsAccessSync(cluster.deps)
    with pytest.raises(Exception, match="403"):
        sync.apply(graph("team-a"), {}, context())
    cluster.client.replace = real
    with pytest.raises(Exception, match="404"):
        cluster.client.get(SECRETS, "dynamo-nats-client", "team-a")
    sync.apply(graph("team-a"), {}, context())
    assert accounts(cluster.client) == {"team-a"}


def test_a_new_account_holds_the_pods_until_the_server_serves_it(cluster, monkeypatch) -> None:
    """With monitorURL (the chart sets it) the first graph's pass asks for a requeue until /accountz serves
    the namespace's account, then never asks again; past the bound, or with a monitor that does not answer
    (no NATS pod: the kwok clusters), it goes on (the pods retry)."""
    from dynamo_operator.controllers import natsaccess

    served: set[str] = set()
    asked: list[str] = []

    def loaded(monitor: str, namespace: str) -> bool | None:
        asked.append(f"{monitor} {namespace}")
        return None if namespace == "team-d" else namespace in served

    monkeypatch.setattr(natsaccess, "account_loaded", loaded)
    ctx = context(monitorURL="http://dp-nats.dynamo-system.svc.cluster.local:8222/")
    sync = NatsAccessSync(cluster.deps)
    assert sync.apply(graph("team-a"), {}, ctx) == natsaccess.LOAD_POLL
    assert asked == ["http://dp-nats.dynamo-system.svc.cluster.local:8222 team-a"]
    served.add("team-a")
    assert sync.apply(graph("team-a"), {}, ctx) is None
    assert sync.apply(graph("team-a", "g2"), {}, ctx) is None and len(asked) == 2  # remembered
    assert NatsAccessSync(cluster.deps).apply(graph("team-b"), {}, context()) is None  # no monitor: no wait
    assert sync.apply(graph("team-d"), {}, ctx) is None  # a monitor that does not answer: no wait either
    monkeypatch.setattr(natsaccess, "LOAD_WAIT", 0.0)
    assert sync.apply(graph("team-c"), {}, ctx) is None  # never served: the bound passed, the pods go on


def test_the_operator_reads_the_admin_secret_and_accounts_config_map_the_configuration_names(cluster) -> None:
    """``natsAuth.adminSecretName`` / ``adminSecretNamespace`` name the CA the certificates are signed with,
    ``accountsConfigMap`` the accounts file: named otherwise, the pass reads those (here missing: 404)."""
    sync = NatsAccessSync(cluster.deps)
    with pytest.raises(ApiException, match="404"):
        sync.apply(graph("team-a"), {}, context(accountsConfigMap="elsewhere"))
    with pytest.raises(ApiException, match="404"):
        sync.apply(graph("team-a"), {}, context(adminSecretName="another-admin"))
    with pytest.raises(ApiException, match="404"):
        NatsAccessSync(cluster.deps).apply(graph("team-b"), {}, context(adminSecretNamespace="other-ns"))
    sync.apply(graph("team-a"), {}, context())  # the names the chart writes
    assert cluster.client.get(SECRETS, "dynamo-nats-client", "team-a")["type"] == "kubernetes.io/tls"
