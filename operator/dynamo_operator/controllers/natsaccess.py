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
import time
import urllib.error
import urllib.request

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
# How long a namespace's first graph waits for its new account to be loaded (the kubelet's update of the
# mounted ConfigMap takes up to its sync period, a minute by default, then the reloader signals); past it
# the pods are created anyway and retry until the account is there. And how often it looks.
LOAD_WAIT, LOAD_POLL = 90.0, 2.0


def account_loaded(monitor: str, namespace: str) -> bool | None:
    """Whether the server's monitoring endpoint serves the namespace's account (``/accountz?acc=``: 200
    with its detail once loaded, 400 "does not exist" before); None when the endpoint does not answer (no
    NATS pod yet, a network between): then nothing is known and nothing is waited for."""
    url = f"{monitor}/accountz?acc={na.account_name(namespace)}"
    try:
        with urllib.request.urlopen(url, timeout=3) as r:
            return r.status == 200
    except urllib.error.HTTPError as e:
        return False if e.code == 400 else None
    except (urllib.error.URLError, OSError):
        return None


class NatsAccessSync:
    def __init__(self, deps: Deps):
        self.deps = deps
        self.secrets = clientcert.ClientSecrets(deps, SERVICE, lambda: deps.nats_clients)
        self._listed: set[str] = set()  # namespaces this process saw in the accounts file
        self._loaded: set[str] = set()  # ... and saw served by NATS (or stopped waiting for)
        self._waiting: dict[str, float] = {}  # namespace -> when its pass first found the account not loaded
        self._lock = threading.Lock()

    # -- the accounts file -----------------------------------------------------------------------------

    def _update_accounts(self, ctx: RenderContext, change) -> bool:
        """Apply ``change`` (set of namespaces -> set) to the accounts ConfigMap; write only when the list
        changes. True when it wrote. A concurrent write is a Conflict (the pass is retried)."""
        namespace, name = na.accounts_config_map(ctx)
        cm = self.deps.client.get(CONFIGMAPS, name, namespace)
        have = na.listed_namespaces(((cm.get("data") or {}).get(na.ACCOUNTS_KEY)) or "")
        want = change(set(have))
        if want == have:
            self._remember(want)
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
        self._remember(want)  # only what is written: a refused write is tried again on the next pass
        return True

    def _remember(self, listed: set[str]) -> None:
        with self._lock:
            self._listed = set(listed)

    def _list(self, namespace: str, ctx: RenderContext) -> None:
        with self._lock:
            if namespace in self._listed:
                return
        if self._update_accounts(ctx, lambda have: have | {namespace}):
            log.info("added a NATS account", namespace=namespace, account=na.account_name(namespace))

    def forget_namespace(self, namespace: str, ctx: RenderContext) -> None:
        """The namespace's account out of the accounts file (its last graph is gone)."""
        self._loaded.discard(namespace)
        if self._update_accounts(ctx, lambda have: have - {namespace}):
            log.info("removed a namespace's NATS account", namespace=namespace)

    # -- the Secret ------------------------------------------------------------------------------------

    def _admin_secret(self, ctx: RenderContext) -> dict:
        namespace, name = na.admin_secret(ctx)
        return self.deps.client.get(SECRETS, name, namespace)

    def apply(self, live: dict, internal: dict, ctx: RenderContext) -> float | None:
        """The account and certificate the graph ``live`` (stored form) needs in its namespace: every
        graph's components talk to NATS (``NATS_SERVER`` goes into each). Seconds to wait before the pods
        while the server has not loaded a new account yet (the runtime gives up on a refused login)."""
        if not na.enabled(ctx):
            return None
        namespace = live["metadata"]["namespace"]
        self._list(namespace, ctx)
        self.secrets.ensure(live, na.client_secret(namespace, ctx), lambda: self._admin_secret(ctx))
        return self._load_wait(namespace, ctx)

    def _load_wait(self, namespace: str, ctx: RenderContext) -> float | None:
        monitor = na.monitor_url(ctx)
        if not monitor or namespace in self._loaded:
            return None
        loaded = account_loaded(monitor, namespace)
        if loaded is None:
            log.info("the NATS monitor does not answer; not waiting for the account", monitor=monitor)
        if loaded is not False:
            self._loaded.add(namespace)
            self._waiting.pop(namespace, None)
            return None
        since = self._waiting.setdefault(namespace, time.monotonic())
        if time.monotonic() - since < LOAD_WAIT:
            return LOAD_POLL
        log.warning(
            "the NATS account is not served yet; creating the pods anyway (they retry)",
            namespace=namespace,
            monitor=monitor,
            waited=LOAD_WAIT,
        )
        self._loaded.add(namespace)
        return None
