"""A graph namespace's client-certificate Secret, one rule for etcd's (``etcdaccess.py``) and NATS's
(``natsaccess.py``): issued on the namespace's first graph, owned by every graph that needs it, renewed in
place, let go with the last one.

* **issued** with ``pki.issue_client`` for the namespace's Common Name, signed by the service's CA (its
  admin Secret's ``ca.crt`` / ``ca.key``), valid 90 days;
* **renewed** when a third of its validity is left, when the CA changed (``ca.crt`` differs from the admin
  Secret's) or when it names another namespace: the Secret is rewritten in place and the kubelet updates
  the mounted files (the identity, the Common Name, stays the same);
* **let go**: plain owner references, so the garbage collector deletes the Secret after the last graph; a
  graph that stops needing it drops its reference (``common.release_secret``).

A Secret of that name the operator did not make is used as it is and never written.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from cryptography import x509
from cryptography.x509.oid import NameOID
from kubernetes.client.exceptions import ApiException

from dynamo_operator import pki
from dynamo_operator.runtime.client import SECRETS

from .common import Deps, read_secret, release_secret, replace_secret
from .sync import Conflict, owner_reference

VALIDITY = dt.timedelta(days=90)
RENEW_BEFORE = VALIDITY / 3


def data(secret: dict | None, key: str) -> bytes:
    value = ((secret or {}).get("data") or {}).get(key)
    return base64.b64decode(value) if value else b""


def _encode(values: dict[str, bytes]) -> dict[str, str]:
    return {k: base64.b64encode(v).decode("ascii") for k, v in sorted(values.items())}


@dataclass(frozen=True)
class Service:
    """What differs between the services: the name in messages, the annotation naming the namespace a
    certificate was issued for, the namespace's Common Name, and which Secrets are the operator's."""

    what: str
    issued_for: str
    common_name: Callable[[str], str]
    is_ours: Callable[[dict], bool]


def renewal_reason(
    svc: Service, secret: dict, namespace: str, ca: bytes, now: dt.datetime | None = None
) -> str:
    """Why the operator's Secret needs a new certificate ("" when it does not)."""
    md = secret.get("metadata") or {}
    if (md.get("annotations") or {}).get(svc.issued_for) != namespace:
        return f"the certificate was not issued for {namespace}"
    if data(secret, "ca.crt") != ca:
        return f"the {svc.what} CA changed"
    try:
        cert = x509.load_pem_x509_certificate(data(secret, "tls.crt"))
    except ValueError:
        return "the certificate is missing or unreadable"
    if not data(secret, "tls.key"):
        return "the key is missing"
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names or names[0].value != svc.common_name(namespace):
        return f"the certificate does not name {svc.common_name(namespace)}"
    if cert.not_valid_after_utc - (now or dt.datetime.now(dt.UTC)) < RENEW_BEFORE:
        return f"the certificate expires on {cert.not_valid_after_utc:%Y-%m-%d}"
    return ""


class ClientSecrets:
    """The Secrets of one service in the graphs' namespaces; ``cache`` gives the name-scoped Secret cache
    (None: read from the API server)."""

    def __init__(self, deps: Deps, svc: Service, cache: Callable[[], object | None]):
        self.deps, self.svc, self._cache = deps, svc, cache

    def get(self, namespace: str, name: str) -> dict | None:
        return read_secret(self.deps, self._cache(), namespace, name)

    def ensure(self, owner: dict, desired: dict, ca_secret: Callable[[], dict]) -> None:
        """The Secret ``desired`` (without data) exists, is owned by ``owner`` and holds a valid certificate
        from the CA in the admin Secret ``ca_secret()`` reads; at most one write."""
        md = desired["metadata"]
        have = self.get(md["namespace"], md["name"])
        if have is not None and not self.svc.is_ours(have):
            return  # the user's Secret of that name: theirs to keep
        admin = ca_secret()
        ca, ca_key = data(admin, "ca.crt"), data(admin, "ca.key")
        why = renewal_reason(self.svc, have, md["namespace"], ca) if have is not None else "new"
        self._write(owner, desired, have, (ca, ca_key) if why else None, why)

    def _issue(self, namespace: str, ca: bytes, ca_key: bytes) -> dict[str, str]:
        cert, key = pki.issue_client(ca, ca_key, self.svc.common_name(namespace), VALIDITY)
        return _encode({"ca.crt": ca, "tls.crt": cert, "tls.key": key})

    def _write(self, owner: dict, desired: dict, have: dict | None, ca: tuple | None, why: str) -> None:
        md = desired["metadata"]
        ref = owner_reference(owner, controller=False)
        if have is None:
            body = {
                **desired,
                "metadata": {**md, "ownerReferences": [ref]},
                "data": self._issue(md["namespace"], *ca),
            }
            try:
                self.deps.client.create(SECRETS, body, md["namespace"])
            except ApiException as e:
                if e.status != 409:
                    raise
                raise Conflict("made meanwhile") from e
            self._event(
                owner,
                "SuccessfulCreate",
                f"Created Secret {md['namespace']}/{md['name']}: {self.svc.what} access",
            )
            return
        refs = have["metadata"].get("ownerReferences") or []
        if ca is None and any(r.get("uid") == ref["uid"] for r in refs):
            return
        meta = {
            **have["metadata"],
            "annotations": {**(have["metadata"].get("annotations") or {}), **md["annotations"]},
        }
        meta["ownerReferences"] = [*(r for r in refs if r.get("uid") != ref["uid"]), ref]
        meta.pop("managedFields", None)
        body_data = self._issue(md["namespace"], *ca) if ca is not None else have.get("data")
        replace_secret(self.deps, have, {**have, "metadata": meta, "data": body_data})
        if ca is not None:
            self._event(
                owner, "UpdateSecret", f"Secret {md['namespace']}/{md['name']}: new certificate ({why})"
            )

    def _event(self, owner: dict, reason: str, message: str) -> None:
        self.deps.recorder.normal(owner, reason, message)

    def release(self, owner: dict, namespace: str, name: str) -> bool:
        """``owner`` lets go of the namespace's Secret; True when that deleted it (the last owner)."""
        have = self.get(namespace, name)
        if (
            have is None
            or not self.svc.is_ours(have)
            or not release_secret(self.deps, have, owner["metadata"]["uid"])
        ):
            return False
        self._event(
            owner, "DeleteSecret", f"Deleted Secret {namespace}/{name}: no graph here uses {self.svc.what}"
        )
        return True
