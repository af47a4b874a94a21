"""The DGD controller's per-namespace NATS accounts (``render/natsaccess.py``): for each namespace with a
graph, the account ``ns-<namespace>`` in the accounts file the bundled NATS includes, and the Secret
``natsAuth.secretName`` there with a certificate mapped to that account's user, signed by the platform's
NATS CA (``clientcert``: issued, renewed and let go as etcd's).

Order, on the graph's pass before any child is applied: the account first (so a certificate never names
an account NATS does not know), then the Secret (the pods mount it).

The accounts ConfigMap (``natsAuth.accountsConfigMap``, in the release namespace) is written only when its
content changes: a namespace gains its first graph, or its Secret is gone with the last graph
(``forget_namespace``, from the Secret cache's delete event). A graph in a namespace already listed costs
no read and no write of it (this process remembers what it saw listed). The NATS pod's reloader
(``dynamo-operator nats-reload``) sends the server ``SIGHUP`` when the mounted file changes: accounts
appear and go without a restart, and the connections already open stay.
"""

from __future__ import annotations

import threading

from kubernetes.client.exceptions import ApiException

from dynamo_operator.render import RenderContext
from dynamo_operator.render import natsaccess as na
from dynamo_operator.runtime.client import CONFIGMAPS, SECRETS
from dynamo_operator.runtime.log import get_logger

from . import clientcert
from .common import Deps
from .sync import Conflict

log = get_logger("nats-access")
SERVICE = clientcert.Service("NATS", na.ANN_ISSUED_FOR, na.common_name, na.is_ours)


class NatsAccessSync:
    def __init__(self, deps: Deps):
        self.deps = deps
        self.secrets = clientcert.ClientSecrets(deps, SERVICE, lambda: deps.nats_clients)
        self._listed: set[str] = set()  # namespaces this process saw in the accounts file
        self._lock = threading.Lock()

    # -- the accounts file -----------------------------------------------------------------------------

    def _update_accounts(self, ctx: RenderContext, change) -> bool:
        """Apply ``change`` (set of namespaces -> set) to the accounts ConfigMap; write only when the list
        changes. True when it wrote. A concurrent write is a Conflict (the pass is retried)."""
        namespace, name = na.accounts_config_map(ctx)
        cm = self.deps.client.get(CONFIGMAPS, name, namespace)
        have = na.listed_namespaces(((cm.get("data") or {}).get(na.ACCOUNTS_KEY)) or "")
        want = change(set(have))
        with self._lock:
            self._listed = set(want)
        if want == have:
            return False
        md = {k: v for k, v in cm["metadata"].items() if k != "managedFields"}
        data = {**(cm.get("data") or {}), na.ACCOUNTS_KEY: na.accounts_conf(want)}
        body = {**cm, "metadata": md, "data": data}
        try:
            self.deps.client.replace(CONFIGMAPS, body)
        except ApiException as e:
            if e.status == 409:
                raise Conflict("the accounts ConfigMap changed meanwhile") from e
            raise
        return True

    def _list(self, namespace: str, ctx: RenderContext) -> None:
        with self._lock:
            if namespace in self._listed:
                return
        if self._update_accounts(ctx, lambda have: have | {namespace}):
            log.info("added a NATS account", namespace=namespace, account=na.account_name(namespace))

    def forget_namespace(self, namespace: str, ctx: RenderContext) -> None:
        """The namespace's account out of the accounts file (its last graph is gone)."""
        if self._update_accounts(ctx, lambda have: have - {namespace}):
            log.info("removed a namespace's NATS account", namespace=namespace)

    # -- the Secret ------------------------------------------------------------------------------------

    def _admin_secret(self, ctx: RenderContext) -> dict:
        namespace, name = na.admin_secret(ctx)
        return self.deps.client.get(SECRETS, name, namespace)

    def apply(self, live: dict, internal: dict, ctx: RenderContext) -> None:
        """The account and certificate the graph ``live`` (stored form) needs in its namespace: every
        graph's components talk to NATS (``NATS_SERVER`` goes into each)."""
        if not na.enabled(ctx):
            return
        namespace = live["metadata"]["namespace"]
        self._list(namespace, ctx)
        self.secrets.ensure(live, na.client_secret(namespace, ctx), lambda: self._admin_secret(ctx))
