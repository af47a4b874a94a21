"""Certificate management: the rotation state machine with a moving clock, the Secret and caBundle writes
through a fake client, and manual mode (files in certDir, reloaded when they change)."""

from __future__ import annotations

import base64
import copy
import datetime as dt

import pytest
from cryptography import x509
from dynamo_operator.runtime.client import SECRETS
from dynamo_operator.webhooks import service_hosts
from dynamo_operator.webhooks.certs import (
    MUTATING,
    VALIDATING,
    CertManager,
    CertPolicy,
    Material,
    TLSContextHolder,
    issue_ca,
    issue_serving,
    load_bundle,
    plan,
)
from kubernetes.client.exceptions import ApiException
from support.fakecerts import HOSTS, FakeClient, crd, webhook_config, write_cert_dir

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
POLICY = CertPolicy(ca_overlap=dt.timedelta(minutes=5))


def cert(pem: bytes) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem)


def signed_by(leaf: bytes, ca: x509.Certificate) -> bool:
    try:
        cert(leaf).verify_directly_issued_by(ca)
        return True
    except Exception:
        return False


def test_hosts_cover_service_names_and_the_url():
    assert HOSTS == [
        "dynamo-operator-webhook-service.dynamo-system.svc",
        "dynamo-operator-webhook-service",
        "dynamo-operator-webhook-service.dynamo-system",
        "dynamo-operator-webhook-service.dynamo-system.svc.cluster.local",
        "127.0.0.1",
        "localhost",
    ]
    assert service_hosts("s", "n") == ["s.n.svc", "s", "s.n", "s.n.svc.cluster.local"]


def test_bootstrap_then_stable():
    m, reason = plan(Material(), HOSTS, POLICY, now=T0)
    assert m is not None and reason.startswith("no usable CA")
    leaf = cert(m.tls_crt)
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "dynamo-operator-webhook-service.dynamo-system.svc" in sans.get_values_for_type(x509.DNSName)
    assert [str(i) for i in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    (ca,) = load_bundle(m.ca_crt)
    assert signed_by(m.tls_crt, ca)
    assert ca.not_valid_after_utc - leaf.not_valid_after_utc > dt.timedelta(days=3000)  # CA outlives serving
    assert plan(m, HOSTS, POLICY, now=T0 + DAY) == (None, "up to date")


def test_serving_renewal_keeps_the_ca():
    m, _ = plan(Material(), HOSTS, POLICY, now=T0)
    later = T0 + dt.timedelta(days=365 - 89)
    new, reason = plan(m, HOSTS, POLICY, now=later)
    assert reason == "serving certificate renewal" and new.ca_crt == m.ca_crt and new.ca_key == m.ca_key
    assert cert(new.tls_crt).not_valid_after_utc > cert(m.tls_crt).not_valid_after_utc
    forced, reason = plan(m, HOSTS, POLICY, now=T0 + DAY, force_serving=True)
    assert reason == "serving certificate rotation requested" and forced.ca_crt == m.ca_crt


def test_missing_san_reissues():
    m, _ = plan(Material(), ["a.svc"], POLICY, now=T0)
    new, reason = plan(m, ["a.svc", "127.0.0.1"], POLICY, now=T0)
    assert reason == "serving certificate lacks a required host name" and new.ca_crt == m.ca_crt


def test_ca_rotation_publishes_both_then_switches_then_prunes():
    m, _ = plan(Material(), HOSTS, POLICY, now=T0)
    (old_ca,) = load_bundle(m.ca_crt)
    late = old_ca.not_valid_after_utc - dt.timedelta(days=399)  # inside the CA renewal window
    assert plan(m, HOSTS, POLICY, now=late)[1].startswith("CA renewal: published")
    t = T0 + DAY
    step1, reason = plan(m, HOSTS, POLICY, now=t, force_ca=True)
    assert reason.startswith("CA renewal: published")
    new_ca, kept = load_bundle(step1.ca_crt)
    assert kept.serial_number == old_ca.serial_number and step1.tls_crt == m.tls_crt  # still serving old
    assert step1.ca_published_at == t
    assert plan(step1, HOSTS, POLICY, now=t + dt.timedelta(minutes=1)) == (None, "up to date")  # overlap
    step2, reason = plan(step1, HOSTS, POLICY, now=t + dt.timedelta(minutes=6))
    assert reason == "CA renewal: serving certificate switched to the new CA"
    assert signed_by(step2.tls_crt, new_ca) and len(load_bundle(step2.ca_crt)) == 2
    assert plan(step2, HOSTS, POLICY, now=t + dt.timedelta(minutes=7)) == (None, "up to date")
    step3, reason = plan(step2, HOSTS, POLICY, now=t + dt.timedelta(minutes=11))
    assert reason == "CA renewal: dropped old CAs from the bundle"
    assert [c.serial_number for c in load_bundle(step3.ca_crt)] == [new_ca.serial_number]
    assert plan(step3, HOSTS, POLICY, now=t + dt.timedelta(minutes=12)) == (None, "up to date")


def test_broken_material_is_replaced():
    m, _ = plan(Material(), HOSTS, POLICY, now=T0)
    other_ca = issue_ca(dt.timedelta(days=3650), T0)
    broken = copy.copy(m)
    broken.ca_key = other_ca[1]  # key does not match the CA
    assert plan(broken, HOSTS, POLICY, now=T0)[1].startswith("no usable CA")
    foreign = copy.copy(m)
    foreign.tls_crt, foreign.tls_key = issue_serving(*other_ca, HOSTS, dt.timedelta(days=365), T0)
    assert plan(foreign, HOSTS, POLICY, now=T0)[1] == "serving certificate not signed by a published CA"


# ------------------------------------------------------------------------------------------------------------
# CertManager against a fake client


@pytest.fixture
def fake():
    f = FakeClient()
    f.objs[("validatingwebhookconfigurations", None, "ours")] = webhook_config(VALIDATING, "ours", "op")
    f.objs[("mutatingwebhookconfigurations", None, "ours-m")] = webhook_config(MUTATING, "ours-m", "op")
    f.objs[("validatingwebhookconfigurations", None, "theirs")] = webhook_config(
        VALIDATING, "theirs", "other"
    )
    f.objs[("validatingwebhookconfigurations", None, "unlabelled")] = webhook_config(
        VALIDATING, "unlabelled", "op", injected=False
    )
    f.objs[("customresourcedefinitions", None, "dgd")] = crd("dgd")
    f.objs[("customresourcedefinitions", None, "other")] = crd("other", group="example.com")
    f.objs[("customresourcedefinitions", None, "none")] = crd("none", strategy="None")
    return f


def manager(fake, **kw) -> CertManager:
    return CertManager(client=fake, namespace="op", hosts=HOSTS, holder=TLSContextHolder(), **kw)


def test_auto_creates_secret_serves_and_injects(fake):
    cm = manager(fake)
    assert cm.reconcile().startswith("no usable CA")
    secret = fake.get(SECRETS, "webhook-server-cert", "op")
    assert secret["type"] == "kubernetes.io/tls"
    assert set(secret["data"]) == {"tls.crt", "tls.key", "ca.crt", "ca.key"}
    assert secret["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "dynamo-operator"
    assert (
        cm.holder.ready
        and cm.holder.serial == cert(base64.b64decode(secret["data"]["tls.crt"])).serial_number
    )
    bundle = secret["data"]["ca.crt"]
    for name, res in (
        ("ours", "validatingwebhookconfigurations"),
        ("ours-m", "mutatingwebhookconfigurations"),
    ):
        assert all(h["clientConfig"]["caBundle"] == bundle for h in fake.objs[(res, None, name)]["webhooks"])
    for name in ("theirs", "unlabelled"):
        hooks = fake.objs[("validatingwebhookconfigurations", None, name)]["webhooks"]
        assert all("caBundle" not in (h.get("clientConfig") or {}) for h in hooks)
    assert (
        fake.objs[("customresourcedefinitions", None, "dgd")]["spec"]["conversion"]["webhook"][
            "clientConfig"
        ]["caBundle"]
        == bundle
    )
    assert "webhook" not in fake.objs[("customresourcedefinitions", None, "none")]["spec"]["conversion"]
    assert "caBundle" not in str(fake.objs[("customresourcedefinitions", None, "other")])

    fake.writes.clear()
    assert cm.reconcile() == "up to date"
    assert fake.writes == []  # converged: no writes at all


def test_restricted_mode_leaves_crds_alone(fake):
    cm = manager(fake, inject_crds=False)
    cm.reconcile()
    assert "caBundle" not in str(fake.objs[("customresourcedefinitions", None, "dgd")])


def test_non_leader_only_reads(fake):
    leader, follower = manager(fake), manager(fake)
    assert not follower.load()
    leader.reconcile()
    writes = len(fake.writes)
    assert follower.load() and follower.holder.serial == leader.holder.serial
    assert len(fake.writes) == writes
    leader.rotate_serving()
    leader.reconcile()
    assert follower.holder.serial != leader.holder.serial
    follower.load()
    assert follower.holder.serial == leader.holder.serial


def test_concurrent_writer_conflict_is_an_error_for_retry(fake):
    cm = manager(fake)
    cm.reconcile()
    secret = fake.get(SECRETS, "webhook-server-cert", "op")
    stale = copy.deepcopy(secret)
    fake.replace(SECRETS, secret)  # someone else wrote in between
    with pytest.raises(ApiException) as ei:
        cm._write(stale, Material.from_secret(stale))
    assert ei.value.status == 409


def test_manual_mode_reads_files_and_reloads_on_change(fake, tmp_path):
    files = write_cert_dir(tmp_path, HOSTS)
    ca_crt, ca_key = files["ca.crt"], files["ca.key"]
    cm = manager(fake, mode="manual", cert_dir=str(tmp_path))
    cm.reconcile()
    assert cm.holder.serial == cert(files["tls.crt"]).serial_number
    assert ("secrets", "op", "webhook-server-cert") not in fake.objs  # manual never writes the Secret
    b64 = base64.b64encode(ca_crt).decode()
    assert (
        fake.objs[("customresourcedefinitions", None, "dgd")]["spec"]["conversion"]["webhook"][
            "clientConfig"
        ]["caBundle"]
        == b64
    )
    renewed = write_cert_dir(tmp_path, HOSTS, ca=(ca_crt, ca_key))
    cm.load()
    assert cm.holder.serial == cert(renewed["tls.crt"]).serial_number


def test_manual_mode_without_files_is_not_ready(tmp_path, fake):
    cm = manager(fake, mode="manual", cert_dir=str(tmp_path / "missing"))
    assert not cm.load()
