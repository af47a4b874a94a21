"""A fake client for the certificate manager's unit tests (the Secret, the webhook configurations and the
CRDs it injects its CA into), the objects they start from, and the few Manager calls ``setup_webhooks``
makes; the controllers' one-pass tests (``test_controllers_status.py``) extend the client. The cluster
tiers use the real apiserver."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

from dynamo_operator.certsecret import SERVING_KEYS
from dynamo_operator.pki import issue_ca, issue_serving
from dynamo_operator.webhooks import service_hosts
from kubernetes.client.exceptions import ApiException

HOSTS = service_hosts("dynamo-operator-webhook-service", "dynamo-system", "https://127.0.0.1:9443")


class FakeClient:
    """The few ``ResourceClient`` calls the certificate manager makes, on a dict: optimistic concurrency
    (a stale resourceVersion is a 409), label selectors, and a record of every write."""

    def __init__(self):
        self.objs: dict[tuple[str, str | None, str], dict] = {}
        self.writes: list[tuple[str, str]] = []
        self.rv = 1

    def _key(self, res, name, ns):
        return (res.plural, ns if res.namespaced else None, name)

    def get(self, res, name, namespace=None):
        try:
            return copy.deepcopy(self.objs[self._key(res, name, namespace)])
        except KeyError:
            raise ApiException(status=404) from None

    def create(self, res, body, namespace=None):
        key = self._key(res, body["metadata"]["name"], namespace or body["metadata"].get("namespace"))
        if key in self.objs:
            raise ApiException(status=409)
        self.rv += 1
        body = copy.deepcopy(body)
        body["metadata"]["resourceVersion"] = str(self.rv)
        body["metadata"].setdefault("uid", f"uid-{self.rv}")
        self.objs[key] = body
        self.writes.append(("create", key[2]))
        return body

    def apply(self, res, body, field_manager, subresource=None):
        """Server-side apply by one field manager: the applied fields replace what it applied before."""
        key = self._key(res, body["metadata"]["name"], body["metadata"].get("namespace"))
        cur = self.objs.get(key)
        if cur is None:
            return self.create(res, body, key[1])
        merged = copy.deepcopy(cur)
        for field, value in body.items():
            if field == "metadata":
                merged["metadata"].update(copy.deepcopy(value))
            else:
                merged[field] = copy.deepcopy(value)
        self.rv += 1
        merged["metadata"]["resourceVersion"] = str(self.rv)
        self.objs[key] = merged
        self.writes.append(("apply", key[2]))
        return merged

    def delete(self, res, name, namespace=None, preconditions=None):
        key = self._key(res, name, namespace)
        cur = self.objs.get(key)
        if cur is None:
            raise ApiException(status=404)
        if preconditions and preconditions.get("uid") not in (None, cur["metadata"].get("uid")):
            raise ApiException(status=409)
        del self.objs[key]
        self.writes.append(("delete", name))

    def replace(self, res, body, subresource=None):
        key = self._key(res, body["metadata"]["name"], body["metadata"].get("namespace"))
        cur = self.objs.get(key)
        if cur is None:
            raise ApiException(status=404)
        if body["metadata"].get("resourceVersion") != cur["metadata"].get("resourceVersion"):
            raise ApiException(status=409)
        self.rv += 1
        body = copy.deepcopy(body)
        body["metadata"]["resourceVersion"] = str(self.rv)
        self.objs[key] = body
        self.writes.append(("replace", key[2]))
        return body

    def patch(self, res, name, patch, namespace=None, **kw):
        key = self._key(res, name, namespace)
        cc = self.objs[key]["spec"]["conversion"]["webhook"]["clientConfig"]
        cc.update(patch["spec"]["conversion"]["webhook"]["clientConfig"])
        self.writes.append(("patch", name))
        return self.objs[key]

    def list_all(self, res, namespace=None, label_selector=None, **kw):
        want = dict(p.split("=", 1) for p in label_selector.split(",")) if label_selector else {}
        items = [
            copy.deepcopy(o)
            for (plural, _, _), o in self.objs.items()
            if plural == res.plural
            and all((o["metadata"].get("labels") or {}).get(k) == v for k, v in want.items())
        ]
        return items, "1"


def webhook_config(res, name, ns, injected=True):
    """A webhook configuration of operator namespace ``ns``; for caBundle injection if ``injected``."""
    labels = {"nvidia.com/dynamo-operator-namespace": ns}
    if injected:
        labels["nvidia.com/dynamo-webhook-cabundle-injection"] = "true"
    return {
        "metadata": {"name": name, "labels": labels, "resourceVersion": "1"},
        "webhooks": [{"name": "a", "clientConfig": {"url": "https://127.0.0.1/x"}}, {"name": "b"}],
    }


def crd(name, group="nvidia.com", strategy="Webhook"):
    """A CRD with its conversion strategy (a service clientConfig for ``Webhook``)."""
    conv = {"strategy": strategy}
    if strategy == "Webhook":
        conv["webhook"] = {"clientConfig": {"service": {"name": "s", "namespace": "n", "path": "/convert"}}}
    return {"metadata": {"name": name, "resourceVersion": "1"}, "spec": {"group": group, "conversion": conv}}


class FakeManager:
    """What ``setup_webhooks`` needs from a Manager, without a cluster: it records the runnables and
    readiness checks it is given and runs none of them."""

    def __init__(self, settings: Any, client: Any = None, metrics_server: Any = None) -> None:
        self.settings = settings
        self.client = client
        self.metrics_server = metrics_server
        self.metrics = None
        self.runnables: list[str] = []
        self.checks: list[str] = []

    def is_namespace_excluded(self, ns: str | None) -> bool:
        return False

    def add_runnable(self, fn, needs_leader: bool, name: str) -> None:
        self.runnables.append(name)

    def add_readiness_check(self, name: str, fn) -> None:
        self.checks.append(name)


def write_cert_dir(directory, hosts: list[str], ca: tuple[bytes, bytes] | None = None) -> dict[str, bytes]:
    """A serving certificate for ``hosts`` (signed by ``ca``, a new CA when None) written as a manual-mode
    ``certDir`` holds it: the files ``tls.crt``, ``tls.key`` and ``ca.crt``. Returns them by name, with the
    CA's key as ``ca.key``."""
    ca_crt, ca_key = ca or issue_ca(dt.timedelta(days=3650))
    crt, key = issue_serving(ca_crt, ca_key, hosts, dt.timedelta(days=365))
    files = dict(zip(SERVING_KEYS, (crt, key, ca_crt), strict=True))
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return {**files, "ca.key": ca_key}
