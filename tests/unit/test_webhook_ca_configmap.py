"""The webhook CA bundle published where its key is not (issue 30, item 7): the ConfigMap ``<secret>-ca``,
written by the install hook and kept in step by the certificate manager through every rotation, is what the
ServiceMonitor reads (charts/.../servicemonitor.yaml); the Secret, which also holds ``ca.key``, is read by
nobody else. Fakes: the certificate manager's client (support.fakecerts) and, for the hook, a dict-backed
Cluster below; tests/integration/test_rbac_cluster.py runs both writers on a real API server under the
chart's RBAC."""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any

import pytest
from dynamo_hooks.secrets import ensure_webhook_certs
from dynamo_operator.certsecret import CA_FIELD_MANAGER, CA_KEY, ca_configmap_name
from dynamo_operator.runtime.client import CONFIGMAPS, SECRETS
from dynamo_operator.webhooks.certs import MUTATING, VALIDATING, CertManager, CertPolicy, TLSContextHolder
from kubernetes.client.exceptions import ApiException
from support.fakecerts import HOSTS, FakeClient, webhook_config

SECRET = "webhook-server-cert"
NS = "op"
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def fake() -> FakeClient:
    f = FakeClient()
    f.objs[("validatingwebhookconfigurations", None, "ours")] = webhook_config(VALIDATING, "ours", NS)
    f.objs[("mutatingwebhookconfigurations", None, "ours-m")] = webhook_config(MUTATING, "ours-m", NS)
    return f


def manager(fake: FakeClient, clock: Clock) -> CertManager:
    policy = CertPolicy(ca_overlap=dt.timedelta(minutes=5))
    return CertManager(
        client=fake,
        namespace=NS,
        hosts=HOSTS,
        holder=TLSContextHolder(),
        policy=policy,
        inject_crds=False,
        clock=clock,
    )


def published(fake: FakeClient) -> tuple[dict, dict]:
    """(the Secret, the CA ConfigMap) as the fake holds them."""
    return fake.get(SECRETS, SECRET, NS), fake.get(CONFIGMAPS, ca_configmap_name(SECRET), NS)


def assert_in_step(secret: dict, cm: dict) -> None:
    """The ConfigMap holds exactly the Secret's CA bundle: no key of any kind, owned by the Secret."""
    assert cm["data"] == {CA_KEY: base64.b64decode(secret["data"][CA_KEY]).decode()}
    assert "PRIVATE KEY" not in str(cm)
    (owner,) = cm["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("Secret", SECRET, secret["metadata"]["uid"])
    assert cm["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "dynamo-operator"


def test_the_manager_publishes_the_ca_bundle_alone_beside_the_secret(fake):
    cm = manager(fake, Clock())
    cm.reconcile()
    assert_in_step(*published(fake))
    fake.writes.clear()
    cm.reconcile()
    assert fake.writes == []  # converged: nothing rewritten


def test_every_step_of_a_ca_rotation_reaches_the_configmap(fake):
    clock = Clock()
    cm = manager(fake, clock)
    cm.reconcile()
    first = published(fake)[0]["data"][CA_KEY]
    cm.rotate_ca()
    bundles = []
    for minutes in (0, 6, 12):  # publish new + old; switch serving after the overlap; drop the old CA
        clock.now = T0 + dt.timedelta(minutes=minutes)
        cm.reconcile()
        secret, config = published(fake)
        assert_in_step(secret, config)
        bundles.append(secret["data"][CA_KEY])
    assert bundles[0] != first and len(set(bundles)) == 2  # new+old, then the new CA alone


def test_a_configmap_edited_or_deleted_is_put_back(fake):
    cm = manager(fake, Clock())
    cm.reconcile()
    key = ("configmaps", NS, ca_configmap_name(SECRET))
    fake.objs[key]["data"][CA_KEY] = "-----BEGIN CERTIFICATE-----\nforged\n"
    cm.reconcile()
    assert_in_step(*published(fake))
    del fake.objs[key]
    cm.reconcile()
    assert_in_step(*published(fake))


def test_a_refused_publication_never_blocks_the_ca_injection(fake):
    def refuse(*_a: Any, **_k: Any) -> dict:
        raise ApiException(status=403)

    fake.apply = refuse
    cm = manager(fake, Clock())
    cm.reconcile()
    secret = fake.get(SECRETS, SECRET, NS)
    hooks = fake.objs[("validatingwebhookconfigurations", None, "ours")]["webhooks"]
    assert all(h["clientConfig"]["caBundle"] == secret["data"][CA_KEY] for h in hooks)
    assert ("configmaps", NS, ca_configmap_name(SECRET)) not in fake.objs


class DictCluster:
    """The hooks' ``Cluster`` on a dict of object paths: what ensure_webhook_certs calls."""

    def __init__(self) -> None:
        self.objs: dict[str, dict] = {}
        self.managers: dict[str, str] = {}
        self.uid = 0

    def get(self, path: str) -> dict | None:
        return self.objs.get(path)

    def apply(self, path: str, body: dict, field_manager: str) -> tuple[dict, bool]:
        new = path not in self.objs
        obj = dict(body)
        self.uid += 1
        obj["metadata"] = {**body["metadata"], "uid": f"uid-{self.uid}", "resourceVersion": str(self.uid)}
        self.objs[path] = obj
        self.managers[path] = field_manager
        return obj, new

    def replace(self, path: str, body: dict) -> dict:
        self.uid += 1
        self.objs[path] = {**body, "metadata": {**body["metadata"], "resourceVersion": str(self.uid)}}
        return self.objs[path]

    def delete(self, path: str) -> None:
        self.objs.pop(path, None)


def test_the_install_hook_publishes_the_ca_before_the_operator_starts():
    cluster = DictCluster()
    result = ensure_webhook_certs(cluster, NS, SECRET, "svc", now=T0)
    secret = cluster.get(f"/api/v1/namespaces/{NS}/secrets/{SECRET}")
    cm_path = f"/api/v1/namespaces/{NS}/configmaps/{ca_configmap_name(SECRET)}"
    assert_in_step(secret, cluster.get(cm_path))
    assert cluster.managers[cm_path] == CA_FIELD_MANAGER  # the manager the operator applies with too
    assert result.details["caConfigMap"].endswith(": created")
    again = ensure_webhook_certs(cluster, NS, SECRET, "svc", now=T0)
    assert again.details["caConfigMap"].endswith(": unchanged")
