"""Hook Secret writers are idempotent (same resourceVersion on a second run) and never rotate an SSH key."""

import base64
import datetime as dt

import pytest
from cryptography.hazmat.primitives import serialization
from dynamo_hooks import certs, sshkeys
from dynamo_hooks.fake import FakeCluster
from dynamo_hooks.secrets import Action, HookError, ensure_mpi_ssh_secret, ensure_webhook_certs

NS = "dynamo-system"
SECRETS = f"/api/v1/namespaces/{NS}/secrets"


def data(fake: FakeCluster, name: str) -> dict[str, bytes]:
    obj = fake.objects[f"{SECRETS}/{name}"]
    return {k: base64.b64decode(v) for k, v in obj["data"].items()}


def test_mpi_secret_created_once_and_kept() -> None:
    fake = FakeCluster()
    first = ensure_mpi_ssh_secret(fake, NS, "mpi-run-ssh-secret")
    assert first.action is Action.CREATED
    keys = data(fake, "mpi-run-ssh-secret")
    assert set(keys) == {"private.key", "private.key.pub", "authorized_keys"}
    assert keys["private.key"].startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----")
    assert (
        keys["private.key.pub"].startswith(b"ssh-rsa ") and keys["authorized_keys"] == keys["private.key.pub"]
    )
    loaded = serialization.load_ssh_private_key(keys["private.key"], password=None)
    pub = loaded.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    assert keys["private.key.pub"].startswith(pub)

    second = ensure_mpi_ssh_secret(fake, NS, "mpi-run-ssh-secret")
    assert second.action is Action.UNCHANGED
    assert second.resource_version == first.resource_version
    assert data(fake, "mpi-run-ssh-secret") == keys


def test_mpi_secret_completes_missing_public_key_without_rotation() -> None:
    fake = FakeCluster()
    pair = sshkeys.generate_keypair(key_size=2048)
    fake.add(
        SECRETS,
        {
            "metadata": {"name": "s"},
            "type": "Opaque",
            "data": {"private.key": base64.b64encode(pair.private_openssh).decode()},
        },
    )
    result = ensure_mpi_ssh_secret(fake, NS, "s")
    assert result.action is Action.UPDATED and "existing key kept" in result.reason
    keys = data(fake, "s")
    assert keys["private.key"] == pair.private_openssh
    assert keys["private.key.pub"] == pair.public_openssh


def test_mpi_secret_placeholder_gets_a_key_and_garbage_is_refused() -> None:
    fake = FakeCluster()
    fake.add(SECRETS, {"metadata": {"name": "empty"}, "type": "Opaque", "data": {}})
    assert ensure_mpi_ssh_secret(fake, NS, "empty").action is Action.UPDATED
    fake.add(
        SECRETS, {"metadata": {"name": "bad"}, "type": "Opaque", "data": {"private.key": "Z2FyYmFnZQ=="}}
    )
    with pytest.raises(
        HookError, match=r"Secret dynamo-system/bad: field data.private.key .* delete secret bad"
    ):
        ensure_mpi_ssh_secret(fake, NS, "bad")


def test_webhook_certs_idempotent_and_renewed() -> None:
    fake = FakeCluster()
    svc = "dynamo-operator-webhook-service"
    first = ensure_webhook_certs(fake, NS, "webhook-server-cert", svc)
    assert first.action is Action.CREATED
    obj = fake.objects[f"{SECRETS}/webhook-server-cert"]
    assert obj["type"] == "kubernetes.io/tls" and set(obj["data"]) == {"tls.crt", "tls.key", "ca.crt"}
    second = ensure_webhook_certs(fake, NS, "webhook-server-cert", svc)
    assert second.action is Action.UNCHANGED and second.resource_version == first.resource_version

    # Another Service name: the SANs no longer match, so re-issued for the new name.
    third = ensure_webhook_certs(fake, NS, "webhook-server-cert", "renamed-svc")
    assert third.action is Action.UPDATED and "lacks DNS names" in third.reason

    # Within 30 days of expiry (the serving cert lives a year): re-issued.
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=340)
    fourth = ensure_webhook_certs(fake, NS, "webhook-server-cert", "renamed-svc", now=later)
    assert fourth.action is Action.UPDATED and "expires" in fourth.reason
    assert (
        ensure_webhook_certs(fake, NS, "webhook-server-cert", "renamed-svc", now=later).action
        is Action.UNCHANGED
    )
    stored = data(fake, "webhook-server-cert")
    names = certs.webhook_dns_names("renamed-svc", NS)
    reason = certs.cert_needs_renewal(
        stored["tls.crt"], stored["tls.key"], stored["ca.crt"], names, now=later
    )
    assert reason is None


def test_webhook_certs_replace_an_opaque_secret() -> None:
    fake = FakeCluster()
    fake.add(SECRETS, {"kind": "Secret", "metadata": {"name": "w"}, "type": "Opaque", "data": {}})
    result = ensure_webhook_certs(fake, NS, "w", "svc")
    assert result.action is Action.REPLACED
    assert fake.objects[f"{SECRETS}/w"]["type"] == "kubernetes.io/tls"


def test_forbidden_write_names_the_fix() -> None:
    fake = FakeCluster()
    fake.forbidden_paths = {SECRETS}
    with pytest.raises(Exception, match="forbidden"):
        ensure_mpi_ssh_secret(fake, NS, "x")
