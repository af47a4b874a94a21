"""The webhook's TLS certificates, managed by the operator itself.

``auto`` (default): the operator keeps a CA and a serving certificate in the Secret ``webhook-server-cert``
(operator namespace, type ``kubernetes.io/tls``, keys ``tls.crt``, ``tls.key``, ``ca.crt``, ``ca.key``; the
layout and the rotation plan live in :mod:`dynamo_operator.certsecret`, shared with the install hook) and
patches the CA bundle into

* its own Validating/MutatingWebhookConfigurations: those labelled
  ``nvidia.com/dynamo-webhook-cabundle-injection=true`` and ``nvidia.com/dynamo-operator-namespace=<ns>``;
* the conversion webhook of every CRD of group ``nvidia.com`` whose conversion strategy is ``Webhook``
  (cluster-wide mode only: a namespace-restricted operator does not own the cluster-scoped CRDs).

and publishes the bundle alone in the ConfigMap ``<secret>-ca`` (``certsecret.ca_configmap``), which the
ServiceMonitor reads: whoever verifies the serving certificate needs ``ca.crt``, never the ``ca.key`` beside
it in the Secret.

No caller may meet a certificate it does not trust:

* a serving rotation keeps the CA, so the published caBundle stays valid;
* a CA rotation publishes ``new CA + old CA`` first; the serving certificate switches to the new CA only
  after ``ca_overlap`` **and** once every caller (each labelled configuration, each conversion CRD) has
  carried that bundle for ``ca_overlap`` without a break (a configuration re-created meanwhile restarts the
  clock), so an injection that failed or was undone never turns into a window of "unknown authority";
* a read of the Secret and the use of what it held are one step (a lock shared by the loader and the
  leader's reconcile), so a loader's read from before a rotation can never replace the newer certificate
  or bundle the leader just loaded; rotation requests from other threads are counted under the same lock;
* the server takes the new certificate for the next TLS connection (:class:`TLSContextHolder` swaps one
  ``SSLContext`` reference atomically): no restart, no dropped connection.

The leader checks all of this once a minute and, through watches on its labelled webhook configurations and
on the CRDs, at once when one appears or loses the bundle (a Helm upgrade re-creating it, a ``kubectl
replace``, a CRD re-applied).

Writes (Secret, caBundles) happen on the leader only, with resourceVersion preconditions; every replica
reads the Secret through the API and serves what it holds, keeping only the serving pair and the bundle in
memory (``ca.key`` is never mounted and never kept by a replica that does not lead). ``manual`` mode serves
``tls.crt``/``tls.key`` from ``certDir`` (cert-manager, an administrator), reloads them when the files change,
and injects ``ca.crt`` from the same directory when it exists.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import os
import ssl
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509

from dynamo_operator.api.registry import GROUP
from dynamo_operator.certsecret import (
    ANN_CA_PUBLISHED,
    CA_FIELD_MANAGER,
    SECRET_LABELS,
    SECRET_TYPE,
    CertPolicy,
    Material,
    ca_configmap,
    ca_configmap_current,
    ca_configmap_name,
    load_bundle,
    plan,
    signed_by,
)
from dynamo_operator.labels import WEBHOOK_INJECTION_LABEL, WEBHOOK_NAMESPACE_LABEL
from dynamo_operator.pki import issue_ca, issue_serving
from dynamo_operator.runtime.client import CONFIGMAPS, SECRETS, ResourceClient, ResourceDescriptor, is_status
from dynamo_operator.runtime.informer import ClientListWatcher, Informer
from dynamo_operator.runtime.log import get_logger

__all__ = [
    "ANN_CA_PUBLISHED",
    "CRDS",
    "INJECTION_LABEL",
    "MUTATING",
    "NAMESPACE_LABEL",
    "SECRET_LABELS",
    "SECRET_TYPE",
    "VALIDATING",
    "CertManager",
    "CertPolicy",
    "Material",
    "TLSContextHolder",
    "issue_ca",
    "issue_serving",
    "load_bundle",
    "plan",
]

INJECTION_LABEL = WEBHOOK_INJECTION_LABEL
NAMESPACE_LABEL = WEBHOOK_NAMESPACE_LABEL

VALIDATING = ResourceDescriptor(
    "admissionregistration.k8s.io",
    "v1",
    "validatingwebhookconfigurations",
    "ValidatingWebhookConfiguration",
    namespaced=False,
)
MUTATING = ResourceDescriptor(
    "admissionregistration.k8s.io",
    "v1",
    "mutatingwebhookconfigurations",
    "MutatingWebhookConfiguration",
    namespaced=False,
)
CRDS = ResourceDescriptor(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False
)


def _monotonic() -> float:
    import time

    return time.monotonic()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _bundles_current(hooks: list[dict], b64: str) -> bool:
    """Every webhook of a configuration trusts the CA bundle ``b64``."""
    return all((h.get("clientConfig") or {}).get("caBundle") == b64 for h in hooks)


def _serving_ca_changes(current: Material, new: Material) -> bool:
    """Whether ``new`` serves a certificate from another CA than ``current`` does, out of a CA ``current``
    already publishes (a switch the callers' bundles must be ready for)."""
    old, nxt = current.serving_cert(), new.serving_cert()
    bundle = load_bundle(current.ca_crt)
    if old is None or nxt is None or not bundle:
        return False
    issuer = next((c for c in bundle if signed_by(nxt, c)), None)
    return issuer is not None and not signed_by(old, issuer)


# -----------------------------------------------------------------------------------------------------------
# serving side


class TLSContextHolder:
    """The server's current ``SSLContext``; ``update`` swaps it for new connections, atomically."""

    def __init__(self, enable_http2: bool = False) -> None:
        self._ctx: ssl.SSLContext | None = None
        self._fingerprint = ""
        self._lock = threading.Lock()
        self.enable_http2 = enable_http2
        self.serial: int | None = None

    def context(self) -> ssl.SSLContext | None:
        return self._ctx

    @property
    def ready(self) -> bool:
        return self._ctx is not None

    def update(self, cert_pem: bytes, key_pem: bytes) -> bool:
        """Load a new certificate/key; False (keeping the old context) when they do not load."""
        fp = hashlib.sha256(cert_pem + b"\0" + key_pem).hexdigest()
        with self._lock:
            if fp == self._fingerprint:
                return False
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            # The standard-library server speaks HTTP/1.1 only: advertise nothing else even when HTTP/2 is
            # enabled in the configuration (the API server then uses HTTP/1.1).
            ctx.set_alpn_protocols(["http/1.1"])
            with tempfile.TemporaryDirectory(prefix="dynamo-webhook-tls-") as d:
                cert_file, key_file = Path(d) / "tls.crt", Path(d) / "tls.key"
                cert_file.write_bytes(cert_pem)
                fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(key_pem)
                try:
                    ctx.load_cert_chain(str(cert_file), str(key_file))
                except (ssl.SSLError, OSError, ValueError):
                    return False
            try:
                self.serial = x509.load_pem_x509_certificate(cert_pem).serial_number
            except ValueError:
                self.serial = None
            self._ctx = ctx
            self._fingerprint = fp
            return True


# -----------------------------------------------------------------------------------------------------------
# the manager


@dataclass
class CertManager:
    client: ResourceClient
    namespace: str
    hosts: list[str]
    holder: TLSContextHolder
    mode: str = "auto"
    secret_name: str = "webhook-server-cert"
    cert_dir: str | None = None
    policy: CertPolicy = field(default_factory=CertPolicy)
    inject_webhooks: bool = True
    inject_crds: bool = True
    # Out-of-cluster runs: the CRDs' conversion webhook is called at this URL instead of the Service
    # (the chart's CRDs name the Service, which an operator on the host is not behind).
    conversion_url: str | None = None
    clock: Callable[[], dt.datetime] = _now

    def __post_init__(self) -> None:
        self.log = get_logger("webhook-certs", namespace=self.namespace, secret=self.secret_name)
        # One lock for every step that reads the Secret and acts on it: a read and its use, the leader's
        # write and the load after it. Rotation requests are counted under a lock of their own, so asking
        # never waits for an API call.
        self._lock = threading.RLock()
        self._asks = threading.Lock()
        self._requested = {"serving": 0, "ca": 0}  # rotation requests made (rotate_serving, rotate_ca)
        self._handled = {"serving": 0, "ca": 0}  # ... and consumed by a reconcile
        self._kick = threading.Event()
        self.bundle: bytes = b""
        # (bundle, since when every caller has carried it without a break)
        self._everywhere: tuple[str, dt.datetime | None] = ("", None)
        self._trust_memo: tuple[bool, float] = (False, float("-inf"))

    # -- reading (every replica) -----------------------------------------------------------------------------
    def _read_secret(self) -> dict | None:
        try:
            return self.client.get(SECRETS, self.secret_name, self.namespace)
        except Exception as e:
            if is_status(e, 404):
                return None
            raise

    def _read_files(self) -> Material:
        d = Path(self.cert_dir or "")

        def read(name: str) -> bytes:
            with contextlib.suppress(OSError):
                return (d / name).read_bytes()
            return b""

        return Material(read("tls.crt"), read("tls.key"), read("ca.crt"))

    def load(self) -> bool:
        """Serve what the Secret (auto) or certDir (manual) holds; True when a certificate is being served.

        The read and its use are one step under the lock: a read from before the leader's latest write can
        never be applied after the write's own load (it would serve the older certificate and bundle)."""
        with self._lock:
            m = self._read_files() if self.mode == "manual" else Material.from_secret(self._read_secret())
            self._apply(m)
        return self.holder.ready

    def _apply(self, m: Material) -> None:
        """Serve ``m``'s pair and keep its bundle; its CA key is not kept (only a reconcile issues)."""
        if m.tls_crt and m.tls_key and self.holder.update(m.tls_crt, m.tls_key):
            self.log.info("serving certificate loaded", serial=self.holder.serial)
        if m.ca_crt:
            self.bundle = m.ca_crt

    # -- writing (leader) ------------------------------------------------------------------------------------
    def rotate_serving(self) -> None:
        """Issue a new serving certificate on the next reconcile (same CA)."""
        with self._asks:
            self._requested["serving"] += 1
        self._kick.set()

    def rotate_ca(self) -> None:
        """Start a CA rotation on the next reconcile (bundle first, serving certificate after the overlap)."""
        with self._asks:
            self._requested["ca"] += 1
        self._kick.set()

    def reconcile(self) -> str:
        """One pass: bring the Secret up to date (auto), serve it, inject the CA bundle; returns why."""
        if self.mode == "manual":
            self.load()
            self.inject()
            return "manual"
        with self._asks:
            asked = dict(self._requested)
        with self._lock:
            force = {k: asked[k] > self._handled[k] for k in asked}
            secret = self._read_secret()
            current = Material.from_secret(secret)
            new, reason = plan(
                current,
                self.hosts,
                self.policy,
                now=self.clock(),
                force_serving=force["serving"],
                force_ca=force["ca"],
            )
            if new is not None and _serving_ca_changes(current, new) and not self._bundle_settled(current):
                new, reason = None, "waiting until every caller has trusted the new CA for the overlap"
                asked["serving"] = self._handled["serving"]  # a forced rotation waits for the switch too
            if new is not None:
                self._write(secret, new)
                self.log.info("webhook certificate secret updated", reason=reason)
                secret = self._read_secret()
            self._handled.update(asked)
            self._apply(Material.from_secret(secret))
        self.inject()
        self._publish_ca(secret)
        return reason

    def _publish_ca(self, secret: dict | None) -> None:
        """Keep ``<secret>-ca`` (``certsecret.ca_configmap``) publishing the bundle the Secret holds, in step
        with every rotation: whoever verifies the serving certificate (the ServiceMonitor) reads the CA
        there, never the Secret with ``ca.key``. A failure is logged, never raised: admission does not
        depend on it."""
        if not secret or not self.bundle:
            return
        name = ca_configmap_name(self.secret_name)
        try:
            want = ca_configmap(secret, self.bundle)
            try:
                live = self.client.get(CONFIGMAPS, name, self.namespace)
            except Exception as e:
                if not is_status(e, 404):
                    raise
                live = None
            if ca_configmap_current(live, want):
                return
            self.client.apply(CONFIGMAPS, want, CA_FIELD_MANAGER)
            self.log.info("CA bundle published", configmap=name)
        except Exception as e:
            self.log.warning(
                "publishing the CA bundle failed; the ServiceMonitor verifies against a stale CA until it "
                "succeeds (grant get, create and patch on this ConfigMap by name: the chart does)",
                configmap=name,
                error=str(e)[:300],
            )

    def _bundle_settled(self, current: Material) -> bool:
        """Every caller has carried ``current``'s bundle, without a break, for at least ``ca_overlap``."""
        b64 = base64.b64encode(current.ca_crt).decode()
        bundle, since = self._everywhere
        return bundle == b64 and since is not None and self.clock() - since >= self.policy.ca_overlap

    def _write(self, secret: dict | None, m: Material) -> None:
        labels = dict(SECRET_LABELS)
        annotations = {ANN_CA_PUBLISHED: m.ca_published_at.isoformat()} if m.ca_published_at else {}
        if secret is None:
            body = {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {
                    "name": self.secret_name,
                    "namespace": self.namespace,
                    "labels": labels,
                    "annotations": annotations,
                },
                "type": SECRET_TYPE,
                "data": m.secret_data(),
            }
            self.client.create(SECRETS, body, self.namespace)
            return
        md = secret.setdefault("metadata", {})
        md["labels"] = {**(md.get("labels") or {}), **labels}
        ann = {k: v for k, v in (md.get("annotations") or {}).items() if k != ANN_CA_PUBLISHED}
        md["annotations"] = {**ann, **annotations}
        secret["data"] = {**(secret.get("data") or {}), **m.secret_data()}
        if secret.get("type") not in (None, SECRET_TYPE):
            self.log.warning("secret has an unexpected type; keeping it", type=secret.get("type"))
        self.client.replace(SECRETS, secret)  # carries resourceVersion: a concurrent writer gets a 409

    @property
    def _webhook_selector(self) -> str:
        """This operator's webhook configurations, the ones it injects (never another release's)."""
        return f"{INJECTION_LABEL}=true,{NAMESPACE_LABEL}={self.namespace}"

    def _webhook_configs(self) -> Iterator[tuple[ResourceDescriptor, dict, list[dict]]]:
        """Our labelled webhook configurations (resource, object, its webhooks), when we inject them."""
        if not self.inject_webhooks:
            return
        for res in (VALIDATING, MUTATING):
            items, _ = self.client.list_all(res, label_selector=self._webhook_selector)
            for cfg in items:
                yield res, cfg, cfg.get("webhooks") or []

    def _conversion_crds(self) -> Iterator[tuple[str, dict]]:
        """(name, conversion clientConfig) of each nvidia.com CRD converted by webhook, if we inject them."""
        if not self.inject_crds:
            return
        items, _ = self.client.list_all(CRDS)
        for crd in items:
            spec = crd.get("spec") or {}
            conv = spec.get("conversion") or {}
            cc = (conv.get("webhook") or {}).get("clientConfig")
            if spec.get("group") == GROUP and conv.get("strategy") == "Webhook" and isinstance(cc, dict):
                yield crd["metadata"]["name"], cc

    def _crd_current(self, cc: dict, b64: str) -> bool:
        return cc.get("caBundle") == b64 and (not self.conversion_url or cc.get("url") == self.conversion_url)

    def inject(self) -> None:
        """Patch the CA bundle into our labelled webhook configurations and the nvidia.com CRDs; note since
        when every caller has carried it (a caller that had lost it restarts that clock)."""
        if not self.bundle:
            return
        b64 = base64.b64encode(self.bundle).decode()
        wrote = False
        for res, cfg, hooks in self._webhook_configs():
            if _bundles_current(hooks, b64):
                continue
            for h in hooks:
                h.setdefault("clientConfig", {})["caBundle"] = b64
            self.client.replace(res, cfg)
            wrote = True
            self.log.info("caBundle injected", kind=res.kind, name=cfg["metadata"]["name"])
        for name, cc in self._conversion_crds():
            if self._crd_current(cc, b64):
                continue
            client_config: dict[str, Any] = {"caBundle": b64}
            if self.conversion_url:
                client_config.update(url=self.conversion_url, service=None)
            self.client.patch(
                CRDS, name, {"spec": {"conversion": {"webhook": {"clientConfig": client_config}}}}
            )
            wrote = True
            self.log.info("caBundle injected", kind="CustomResourceDefinition", name=name)
        if wrote or self._everywhere[0] != b64:
            self._everywhere = (b64, self.clock())

    def callers_trust_us(self) -> bool:
        """Readiness: the apiserver can call this server, i.e. every labelled webhook configuration and (when
        injected) every nvidia.com conversion webhook carries the CA bundle we serve under, and names our URL
        when we run out of cluster.

        Serving a certificate is not enough: until the leader has injected the bundle (and, out of cluster,
        pointed the CRDs' conversion at us), a write that needs a webhook fails. Every replica reads the same
        API state, so standbys turn ready with the leader. A positive answer is cached for 10 s, a negative
        one for 1 s, so probes stay cheap."""
        now = _monotonic()
        ok, at = self._trust_memo
        if now - at < (10.0 if ok else 1.0):
            return ok
        try:
            ok = self._trusted()
        except Exception as e:
            self.log.info("cannot confirm the webhook callers' CA bundle yet", error=str(e)[:300])
            ok = False
        self._trust_memo = (ok, now)
        return ok

    def _trusted(self) -> bool:
        if not self.bundle:
            return False
        b64 = base64.b64encode(self.bundle).decode()
        for _res, _cfg, hooks in self._webhook_configs():
            if not _bundles_current(hooks, b64):
                return False
        return all(self._crd_current(cc, b64) for _name, cc in self._conversion_crds())

    # -- loops -----------------------------------------------------------------------------------------------
    def run_loader(self, stop: threading.Event) -> None:
        """Every replica: keep serving what the Secret / certDir holds."""
        while not stop.is_set():
            try:
                self.load()
            except Exception as e:
                self.log.warning("loading the webhook certificate failed", error=str(e))
            stop.wait(self.policy.reload_interval if self.holder.ready else 0.5)

    def run_leader(self, stop: threading.Event) -> None:
        """Leader only: keep the Secret and the CA bundles right; errors retry with a short backoff."""
        backoff = 0.5
        while not stop.is_set():
            try:
                self.reconcile()
                backoff = 0.5
                delay = self.policy.check_interval
            except Exception as e:
                self.log.warning("webhook certificate reconcile failed; retrying", error=str(e))
                delay = backoff
                backoff = min(backoff * 2, max(self.policy.check_interval, 1.0))
            self._sleep(stop, delay)

    def run_watcher(self, stop: threading.Event) -> None:
        """Leader only: inject at once when a labelled webhook configuration appears or loses our bundle (a
        Helm upgrade that re-creates it, a `kubectl replace`), or a Dynamo CRD's conversion does (a CRD
        re-applied), not at the next periodic check a minute later: until then every admission or
        conversion it routes fails TLS verification."""
        informers = []
        if self.inject_webhooks:
            informers += [
                Informer(
                    res,
                    ClientListWatcher(self.client, res, label_selector=self._webhook_selector),
                    name=f"cabundle-{res.kind}",
                )
                for res in (VALIDATING, MUTATING)
            ]
        if self.inject_crds:
            informers.append(Informer(CRDS, ClientListWatcher(self.client, CRDS), name="cabundle-crds"))
        for informer in informers:
            informer.add_event_handler(
                on_add=self._kick_if_stale, on_update=lambda _old, new: self._kick_if_stale(new)
            )
            informer.start()
        try:
            stop.wait()
        finally:
            for informer in informers:
                informer.stop()

    def _kick_if_stale(self, obj: dict) -> None:
        if not self.bundle:
            return
        b64 = base64.b64encode(self.bundle).decode()
        if obj.get("kind") == CRDS.kind or "spec" in obj:
            spec = obj.get("spec") or {}
            conv = spec.get("conversion") or {}
            cc = (conv.get("webhook") or {}).get("clientConfig")
            stale = (
                spec.get("group") == GROUP
                and conv.get("strategy") == "Webhook"
                and isinstance(cc, dict)
                and not self._crd_current(cc, b64)
            )
        else:
            stale = not _bundles_current(obj.get("webhooks") or [], b64)
        if stale:
            self._everywhere = ("", None)  # a caller lost the bundle: the settle clock restarts
            self._kick.set()

    def _sleep(self, stop: threading.Event, seconds: float) -> None:
        """Wait ``seconds``, or less when stopped or kicked (a rotation was requested)."""
        deadline = _monotonic() + seconds
        while not stop.is_set() and not self._kick.is_set():
            left = deadline - _monotonic()
            if left <= 0:
                break
            stop.wait(min(left, 0.1))
        self._kick.clear()
