"""The DGD controller's per-namespace etcd access (``render/etcdaccess.py``): for each namespace with a graph
on etcd discovery, the etcd user ``ns:<namespace>`` whose role covers ``ns/<namespace>/`` alone, and the
Secret ``etcdAuth.secretName`` there with a certificate for that user, signed by the platform's etcd CA.

Issued, renewed, let go:

* **issued** on the first graph's pass, before its pods are applied (they mount the Secret); the etcd user
  and role first, so a certificate never names a user etcd does not know;
* **renewed** when a third of its validity is left, when the CA changed (``ca.crt`` differs from the admin
  Secret's) or when it names another namespace or user: the Secret is rewritten in place, the kubelet
  updates the files and the tunnels present the new certificate from their next connection (no restart;
  the identity, the Common Name, stays the same);
* **let go** with the last graph of the namespace that needs it (plain owner references: the garbage
  collector deletes the Secret after the last graph; a graph that stops needing it drops its reference),
  and then the user, its role and the namespace's keys are removed from etcd (``forget_namespace``, from
  the Secret cache's delete event: a deleted graph no longer has a pass).

A Secret of that name the operator did not make is used as it is and never written. Deleting the Secret
by hand makes a new key at the next pass (a forced rotation); the old certificate stays valid until it
expires (etcd has no revocation list): to cut it off at once, rotate the CA (docs/security-network.md).
"""

from __future__ import annotations

import base64
import datetime as dt
import threading

from cryptography import x509
from cryptography.x509.oid import NameOID
from kubernetes.client.exceptions import ApiException

from dynamo_operator import pki
from dynamo_operator.render import RenderContext
from dynamo_operator.render import etcdaccess as ea
from dynamo_operator.runtime.client import SECRETS
from dynamo_operator.runtime.etcdadmin import AdminCredentials, EtcdAdmin
from dynamo_operator.runtime.log import get_logger

from .common import Deps, read_secret, release_secret, replace_secret
from .sync import Conflict, owner_reference

log = get_logger("etcd-access")
VALIDITY = dt.timedelta(days=90)
RENEW_BEFORE = VALIDITY / 3


def _data(secret: dict, key: str) -> bytes:
    value = ((secret or {}).get("data") or {}).get(key)
    return base64.b64decode(value) if value else b""


def _encode(values: dict[str, bytes]) -> dict[str, str]:
    return {k: base64.b64encode(v).decode("ascii") for k, v in sorted(values.items())}


def renewal_reason(secret: dict, namespace: str, ca: bytes, now: dt.datetime | None = None) -> str:
    """Why the operator's Secret needs a new certificate ("" when it does not)."""
    md = secret.get("metadata") or {}
    if (md.get("annotations") or {}).get(ea.ANN_ISSUED_FOR) != namespace:
        return f"the certificate was not issued for {namespace}"
    if _data(secret, "ca.crt") != ca:
        return "the etcd CA changed"
    try:
        cert = x509.load_pem_x509_certificate(_data(secret, "tls.crt"))
    except ValueError:
        return "the certificate is missing or unreadable"
    if not _data(secret, "tls.key"):
        return "the key is missing"
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not names or names[0].value != ea.user_name(namespace):
        return f"the certificate does not name the user {ea.user_name(namespace)}"
    if cert.not_valid_after_utc - (now or dt.datetime.now(dt.UTC)) < RENEW_BEFORE:
        return f"the certificate expires on {cert.not_valid_after_utc:%Y-%m-%d}"
    return ""


class EtcdAccessSync:
    def __init__(self, deps: Deps):
        self.deps = deps
        self._admin: EtcdAdmin | None = None
        self._granted: set[str] = set()  # namespaces whose user and role this process has ensured
        self._lock = threading.Lock()

    # -- etcd ------------------------------------------------------------------------------------------

    def _admin_secret(self, ctx: RenderContext) -> dict:
        namespace, name = ea.admin_secret(ctx)
        return self.deps.client.get(SECRETS, name, namespace)

    def admin(self, ctx: RenderContext) -> EtcdAdmin:
        """The etcd administrator, built once from the admin Secret (authentication turned on first)."""
        with self._lock:
            if self._admin is None:
                secret = self._admin_secret(ctx)
                creds = AdminCredentials(
                    ca=_data(secret, "ca.crt"),
                    cert=_data(secret, "tls.crt"),
                    key=_data(secret, "tls.key"),
                    password=_data(secret, "password").decode(),
                )
                admin = EtcdAdmin(str(ctx.config("infrastructure", "etcdAddress")), creds)
                admin.ensure_auth()
                self._admin = admin
            return self._admin

    def _grant(self, namespace: str, ctx: RenderContext) -> None:
        if namespace in self._granted:
            return
        try:
            self.admin(ctx).ensure_namespace(ea.user_name(namespace), ea.key_root(namespace))
        except Exception:
            with self._lock:
                self._admin = None  # read the admin Secret again next time (rotated password, new CA)
            raise
        self._granted.add(namespace)

    def forget_namespace(self, namespace: str, ctx: RenderContext) -> None:
        """The namespace's user, role and keys out of etcd (its last graph is gone)."""
        self._granted.discard(namespace)
        self.admin(ctx).remove_namespace(ea.user_name(namespace), ea.key_root(namespace))
        log.info("removed etcd access of a namespace", namespace=namespace)

    # -- the Secret ------------------------------------------------------------------------------------

    def _get(self, namespace: str, name: str) -> dict | None:
        return read_secret(self.deps, self.deps.etcd_clients, namespace, name)

    def apply(self, live: dict, internal: dict, ctx: RenderContext) -> None:
        """Provide the access the graph ``live`` (stored form; ``internal``: v1beta1) needs in its
        namespace, or let go of it when it needs none."""
        if not ea.enabled(ctx):
            return
        namespace = live["metadata"]["namespace"]
        desired = ea.client_secret(namespace, ctx)
        name = desired["metadata"]["name"]
        if not ea.graph_uses_etcd(internal, ctx):
            self._release(live, namespace, name, ctx)
            return
        self._grant(namespace, ctx)
        have = self._get(namespace, name)
        if have is not None and not ea.is_ours(have):
            return  # the user's Secret of that name: theirs to keep
        ca_secret = self._admin_secret(ctx)
        ca, ca_key = _data(ca_secret, "ca.crt"), _data(ca_secret, "ca.key")
        why = renewal_reason(have, namespace, ca) if have is not None else "new"
        self._write(live, desired, have, (ca, ca_key) if why else None, why)

    def _issue(self, namespace: str, ca: bytes, ca_key: bytes) -> dict[str, str]:
        cert, key = pki.issue_client(ca, ca_key, ea.user_name(namespace), VALIDITY)
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
                owner, "SuccessfulCreate", f"Created Secret {md['namespace']}/{md['name']}: etcd access"
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
        data = self._issue(md["namespace"], *ca) if ca is not None else have.get("data")
        replace_secret(self.deps, have, {**have, "metadata": meta, "data": data})
        if ca is not None:
            self._event(
                owner, "UpdateSecret", f"Secret {md['namespace']}/{md['name']}: new certificate ({why})"
            )

    def _event(self, owner: dict, reason: str, message: str) -> None:
        self.deps.recorder.normal(owner, reason, message)

    def _release(self, owner: dict, namespace: str, name: str, ctx: RenderContext) -> None:
        have = self._get(namespace, name)
        if (
            have is None
            or not ea.is_ours(have)
            or not release_secret(self.deps, have, owner["metadata"]["uid"])
        ):
            return
        self._event(owner, "DeleteSecret", f"Deleted Secret {namespace}/{name}: no graph here uses etcd")
        self.forget_namespace(namespace, ctx)
