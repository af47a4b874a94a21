"""Idempotent Secret writers for the install hooks: the MPI SSH key and the webhook serving certificate.

Both run on every `helm install` and `helm upgrade`, so running them again must change nothing: an existing
SSH key is never rotated (running MPI jobs would lose their peers), and a webhook certificate is reused while
it is valid for more than 30 days and covers the Service names. Writes use the Secret's resourceVersion, so
two hook runs racing each other cannot overwrite one another silently.
"""

from __future__ import annotations

import base64
import datetime as dt
import uuid
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from dynamo_operator import certsecret as webhook_certs
from dynamo_operator import sshkeys
from dynamo_operator.certsecret import service_hosts as webhook_hosts
from dynamo_operator.labels import LABEL_APP_COMPONENT, LABEL_MANAGED_BY, LABEL_PART_OF

from .cluster import Cluster, ClusterError, Obj, object_path

MANAGED_BY = "dynamo-hooks"
TLS_TYPE = webhook_certs.SECRET_TYPE
MAX_ATTEMPTS = 4


class Action(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    REPLACED = "replaced"  # deleted and re-created because the Secret type had to change


@dataclass
class EnsureResult:
    """What a hook did, for the log line and the JSON output."""

    secret: str
    action: Action
    reason: str
    resource_version: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "secret": self.secret,
            "action": self.action.value,
            "reason": self.reason,
            "resourceVersion": self.resource_version,
            **self.details,
        }


class HookError(Exception):
    """A condition the hook refuses to repair on its own; the message names the object, field and fix."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _decoded(secret: Obj, key: str) -> bytes | None:
    raw = (secret.get("data") or {}).get(key)
    if not raw:
        return None
    try:
        return base64.b64decode(raw)
    except ValueError:
        return None


# The MPI SSH Secret is the hooks' own; the webhook Secret carries the operator's labels
# (webhook_certs.SECRET_LABELS), since the operator keeps writing it after the hook.
MPI_SSH_LABELS = {
    LABEL_MANAGED_BY: MANAGED_BY,
    LABEL_PART_OF: "dynamo-platform",
    LABEL_APP_COMPONENT: "mpi-ssh",
}


def _secret_body(
    namespace: str, name: str, data: dict[str, bytes], secret_type: str, labels: dict[str, str]
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "type": secret_type,
        "data": {k: _b64(v) for k, v in data.items()},
    }


def _create(cluster: Cluster, path: str, body: Obj) -> tuple[Obj, bool]:
    """Create the Secret by server-side apply, which the API server authorizes with the Secret's name: the
    hooks' RBAC then allows creating exactly their two Secrets, never another (a token Secret, say).
    The field manager is this run's own, so a Secret another writer created meanwhile with other
    content is a conflict (409), never overwritten."""
    return cluster.apply(path, body, field_manager=f"{MANAGED_BY}-{uuid.uuid4().hex[:8]}")


def _write(
    cluster: Cluster,
    namespace: str,
    name: str,
    decide: Any,
) -> EnsureResult:
    """Read-decide-write loop: `decide(secret_or_None)` returns (action, reason, body_or_None).

    A 409 on create (someone created it meanwhile) or on update (resourceVersion moved) re-reads and decides
    again, so concurrent hook runs converge on one value instead of the last writer winning.
    """
    path = object_path("v1", "secrets", name, namespace)
    ref = f"Secret {namespace}/{name}"
    for _ in range(MAX_ATTEMPTS):
        current = cluster.get(path)
        action, reason, body = decide(current)
        try:
            if action is Action.UNCHANGED:
                rv = str(((current or {}).get("metadata") or {}).get("resourceVersion", ""))
                return EnsureResult(ref, action, reason, rv)
            if action in (Action.CREATED, Action.REPLACED):
                if action is Action.REPLACED:
                    cluster.delete(path)
                created, new = _create(cluster, path, body)
                if not new:
                    continue  # it appeared meanwhile, with the same content: decide again on it
                return EnsureResult(ref, action, reason, str(created["metadata"].get("resourceVersion", "")))
            updated = cluster.replace(path, body)
            return EnsureResult(ref, action, reason, str(updated["metadata"].get("resourceVersion", "")))
        except ClusterError as exc:
            if exc.status == 409:
                continue
            if exc.forbidden:
                raise HookError(
                    f"{ref}: the API refused the write ({exc.message}). Fix: grant the hook's ServiceAccount "
                    f"get, create, patch (create is a server-side apply) and update (delete too, to change a "
                    f"Secret's type) on the secret {name} in namespace {namespace}."
                ) from exc
            raise
    raise HookError(
        f"{ref}: kept changing while being written ({MAX_ATTEMPTS} attempts); run the hook again."
    )


def _unreadable(namespace: str, name: str, key: str, what: str, exc: Exception) -> HookError:
    return HookError(
        f"Secret {namespace}/{name}: field data.{key} is not a readable unencrypted private key ({exc}). "
        f"It is never rotated automatically, because running MPI workers trust {what}. Fix: kubectl -n "
        f"{namespace} delete secret {name}, then re-run the install or upgrade so the hook makes new keys."
    )


def _user_entries(current: Obj, namespace: str, name: str) -> tuple[dict[str, bytes], list[str], str]:
    """The user keypair's entries the Secret should hold, which of them it lacks, and why."""
    private = _decoded(current, sshkeys.PRIVATE_KEY)
    if private is None:
        # Nothing to rotate: an empty placeholder (e.g. made by GitOps) gets its first key.
        pair = sshkeys.generate_keypair()
        return (
            pair.secret_data(),
            list(sshkeys.USER_KEYS),
            f"no {sshkeys.PRIVATE_KEY}: generated an RSA keypair",
        )
    try:
        pair = sshkeys.keypair_from_private(private)
    except (ValueError, TypeError) as exc:
        raise _unreadable(namespace, name, sshkeys.PRIVATE_KEY, "it", exc) from exc
    wanted = pair.secret_data()
    return wanted, [k for k in sshkeys.USER_KEYS if _decoded(current, k) is None], "existing key kept"


def _host_entries(current: Obj, namespace: str, name: str) -> tuple[dict[str, bytes], list[str]]:
    """The sshd host key's entries (a Secret from before host key pinning gets one; an existing host key is
    never replaced) and which of them the Secret lacks."""
    private = _decoded(current, sshkeys.HOST_KEY)
    if private is None:
        return sshkeys.generate_host_key().secret_data(), list(sshkeys.HOST_KEYS)
    try:
        host = sshkeys.host_key_from_private(private)
    except (ValueError, TypeError) as exc:
        raise _unreadable(namespace, name, sshkeys.HOST_KEY, "its public half", exc) from exc
    return host.secret_data(), [k for k in sshkeys.HOST_KEYS if _decoded(current, k) is None]


def ensure_mpi_ssh_secret(cluster: Cluster, namespace: str, name: str) -> EnsureResult:
    """Create the MPI SSH Secret once (user keypair and sshd host key); afterwards only add missing entries
    (a public half, the host key of a Secret made before host key pinning), never rotate a key."""

    def decide(current: Obj | None) -> tuple[Action, str, Obj | None]:
        if current is None:
            pair, host = sshkeys.generate_keypair(), sshkeys.generate_host_key()
            data = {**pair.secret_data(), **host.secret_data()}
            body = _secret_body(namespace, name, data, "Opaque", MPI_SSH_LABELS)
            return Action.CREATED, "no Secret yet: generated an RSA keypair and an ECDSA host key", body
        user, user_missing, reason = _user_entries(current, namespace, name)
        host, host_missing = _host_entries(current, namespace, name)
        wanted, changed = {**user, **host}, user_missing + host_missing
        if not changed:
            return Action.UNCHANGED, reason, None
        data = dict(current.get("data") or {})
        for key in changed:
            data[key] = _b64(wanted[key])
        body = dict(current)
        body["data"] = data
        return Action.UPDATED, f"{reason}; added {', '.join(changed)}", body

    return _write(cluster, namespace, name, decide)


def ensure_webhook_certs(
    cluster: Cluster,
    namespace: str,
    name: str,
    service: str,
    *,
    now: dt.datetime | None = None,
) -> EnsureResult:
    """Keep the webhook Secret the operator serves from valid for the webhook Service.

    Why it delegates to the operator's certificate planner: the hook (pre-install) and the operator
    (at run time) keep the same Secret, so they must agree on its layout (``tls.crt``, ``tls.key``,
    ``ca.crt``, ``ca.key``), on validity and on when to renew; otherwise each would re-issue what the
    other wrote. A valid certificate for the Service's names is reused, never rotated by accident."""
    hosts = webhook_hosts(service, namespace)
    dns_names = hosts

    def decide(current: Obj | None) -> tuple[Action, str, Obj | None]:
        material = webhook_certs.Material.from_secret(current)
        new, why = webhook_certs.plan(material, hosts, webhook_certs.CertPolicy(), now=now)
        right_type = current is not None and current.get("type") == TLS_TYPE
        if new is None and right_type:
            return Action.UNCHANGED, "certificate valid and covers the Service names: reused", None
        if new is None:  # valid material in a Secret of the wrong type: keep the keys, fix the type
            new = material
        body = _secret_body(namespace, name, {}, TLS_TYPE, webhook_certs.SECRET_LABELS)
        body["data"] = new.secret_data()
        if new.ca_published_at:
            body["metadata"]["annotations"] = {
                webhook_certs.ANN_CA_PUBLISHED: new.ca_published_at.isoformat()
            }
        if current is None:
            return Action.CREATED, "no Secret yet: issued a CA and a serving certificate", body
        if not right_type:
            # The type field is immutable: the Secret has to be re-created.
            return (
                Action.REPLACED,
                f"type was {current.get('type', 'Opaque')}, needs {TLS_TYPE}; re-issued",
                body,
            )
        meta = dict(current.get("metadata") or {})
        meta["labels"] = {**(meta.get("labels") or {}), **webhook_certs.SECRET_LABELS}
        meta["annotations"] = {**(meta.get("annotations") or {}), **body["metadata"].get("annotations", {})}
        body["metadata"] = meta
        return Action.UPDATED, f"re-issued: {why}", body

    result = _write(cluster, namespace, name, decide)
    result.details["dnsNames"] = dns_names
    result.details["caConfigMap"] = _publish_ca(cluster, namespace, name)
    return result


def _publish_ca(cluster: Cluster, namespace: str, name: str) -> str:
    """Publish the Secret's CA bundle alone in ``<name>-ca`` (``certsecret.ca_configmap``, owned by the
    Secret), before the operator starts: the ServiceMonitor verifies the operator against that ConfigMap and
    never reads the Secret, which also holds ``ca.key``. Applied server-side under the field manager the
    operator uses too, which the API server authorizes by name (create, patch). Returns what it did."""
    secret = cluster.get(object_path("v1", "secrets", name, namespace))
    bundle = _decoded(secret or {}, webhook_certs.CA_KEY)
    if secret is None or bundle is None:
        raise HookError(
            f"Secret {namespace}/{name}: no data.{webhook_certs.CA_KEY} to publish; run the hook again."
        )
    want = webhook_certs.ca_configmap(secret, bundle)
    cm_name = want["metadata"]["name"]
    path = object_path("v1", "configmaps", cm_name, namespace)
    if webhook_certs.ca_configmap_current(cluster.get(path), want):
        return f"ConfigMap {namespace}/{cm_name}: unchanged"
    try:
        _, new = cluster.apply(path, want, field_manager=webhook_certs.CA_FIELD_MANAGER)
    except ClusterError as exc:
        if exc.forbidden:
            raise HookError(
                f"ConfigMap {namespace}/{cm_name}: the API refused the write ({exc.message}). Fix: grant the "
                f"hook's ServiceAccount get, create and patch on the configmap {cm_name} in namespace "
                f"{namespace}."
            ) from exc
        raise
    return f"ConfigMap {namespace}/{cm_name}: {'created' if new else 'updated'}"
