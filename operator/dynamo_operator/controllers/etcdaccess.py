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

import datetime as dt
import threading

from dynamo_operator.render import RenderContext
from dynamo_operator.render import etcdaccess as ea
from dynamo_operator.runtime.client import SECRETS
from dynamo_operator.runtime.etcdadmin import AdminCredentials, EtcdAdmin
from dynamo_operator.runtime.log import get_logger

from . import clientcert
from .clientcert import data as _data
from .common import Deps

log = get_logger("etcd-access")
SERVICE = clientcert.Service("etcd", ea.ANN_ISSUED_FOR, ea.user_name, ea.is_ours)


def renewal_reason(secret: dict, namespace: str, ca: bytes, now: dt.datetime | None = None) -> str:
    """Why the operator's Secret needs a new certificate ("" when it does not): ``clientcert``'s rule."""
    return clientcert.renewal_reason(SERVICE, secret, namespace, ca, now)


class EtcdAccessSync:
    def __init__(self, deps: Deps):
        self.deps = deps
        self.secrets = clientcert.ClientSecrets(deps, SERVICE, lambda: deps.etcd_clients)
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

    def apply(self, live: dict, internal: dict, ctx: RenderContext) -> None:
        """Provide the access the graph ``live`` (stored form; ``internal``: v1beta1) needs in its
        namespace, or let go of it when it needs none."""
        if not ea.enabled(ctx):
            return
        namespace = live["metadata"]["namespace"]
        desired = ea.client_secret(namespace, ctx)
        if not ea.graph_uses_etcd(internal, ctx):
            if self.secrets.release(live, namespace, desired["metadata"]["name"]):
                self.forget_namespace(namespace, ctx)
            return
        self._grant(namespace, ctx)
        self.secrets.ensure(live, desired, lambda: self._admin_secret(ctx))
