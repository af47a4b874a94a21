"""The webhook's TLS certificates, managed by the operator itself.

``auto`` (default): the operator keeps a CA and a serving certificate in the Secret ``webhook-server-cert``
(operator namespace, type ``kubernetes.io/tls``, keys ``tls.crt``, ``tls.key``, ``ca.crt``, ``ca.key``) and
patches the CA bundle into

* its own Validating/MutatingWebhookConfigurations: those labelled
  ``nvidia.com/dynamo-webhook-cabundle-injection=true`` and ``nvidia.com/dynamo-operator-namespace=<ns>``;
* the conversion webhook of every CRD of group ``nvidia.com`` whose conversion strategy is ``Webhook``
  (cluster-wide mode only: a namespace-restricted operator does not own the cluster-scoped CRDs).

Why this is safe across rotations:

* the CA (10 years) outlives serving certificates (1 year, renewed 90 days before expiry), and a serving
  rotation keeps the CA, so the published caBundle stays valid and no admission fails;
* a CA rotation first publishes ``new CA + old CA`` as the bundle while the old serving certificate keeps
  serving; only after ``ca_overlap`` does the serving certificate switch to one signed by the new CA, and only
  after ``2 * ca_overlap`` is the old CA dropped from the bundle;
* the server takes the new certificate for the next TLS connection (:class:`TLSContextHolder` swaps one
  ``SSLContext`` reference atomically): no restart, no dropped connection.

The leader checks all of this once a minute and, through a watch on its labelled webhook configurations,
at once when one appears or loses the bundle (a Helm upgrade re-creating it, a ``kubectl replace``).

Writes (Secret, caBundles) happen on the leader only, with resourceVersion preconditions; every replica
reads the Secret and serves what it holds. ``manual`` mode serves ``tls.crt``/``tls.key`` from ``certDir``
(cert-manager, an administrator), reloads them when the files change, and injects ``ca.crt`` from the same
directory when it exists.

Certificates are issued by ``dynamo_operator.pki`` (ECDSA P-256; IP SANs such as ``127.0.0.1`` when the API
server reaches the webhook by URL, as in local runs and tests). The install hook keeps the same Secret through
:func:`plan`, :class:`Material` and :data:`SECRET_LABELS`, so the two writers agree on its layout and labels.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import ipaddress
import os
import ssl
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization

from dynamo_operator.api.registry import GROUP
from dynamo_operator.labels import (
    LABEL_APP_COMPONENT,
    LABEL_MANAGED_BY,
    LABEL_PART_OF,
    MANAGED_BY,
    PART_OF,
)
from dynamo_operator.pki import _cert_pem, issue_ca, issue_serving, split_hosts
from dynamo_operator.runtime.client import SECRETS, ResourceClient, ResourceDescriptor, is_status
from dynamo_operator.runtime.informer import ClientListWatcher, Informer
from dynamo_operator.runtime.log import get_logger

INJECTION_LABEL = "nvidia.com/dynamo-webhook-cabundle-injection"
NAMESPACE_LABEL = "nvidia.com/dynamo-operator-namespace"
ANN_CA_PUBLISHED = "nvidia.com/webhook-ca-published-at"
SECRET_TYPE = "kubernetes.io/tls"
# The webhook Secret's labels, whoever writes it (this operator, or the install hook before it starts).
SECRET_LABELS = {LABEL_MANAGED_BY: MANAGED_BY, LABEL_APP_COMPONENT: "webhook", LABEL_PART_OF: PART_OF}

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


@dataclass(frozen=True)
class CertPolicy:
    ca_validity: dt.timedelta = dt.timedelta(days=3650)
    # renew the CA this long before it expires; longer than a serving certificate's life, so a serving
    # certificate never outlives its CA
    ca_renew_before: dt.timedelta = dt.timedelta(days=400)
    serving_validity: dt.timedelta = dt.timedelta(days=365)
    serving_renew_before: dt.timedelta = dt.timedelta(days=90)
    # how long a new CA sits in the bundle next to the old one before the serving certificate switches to it
    ca_overlap: dt.timedelta = dt.timedelta(minutes=5)
    check_interval: float = 60.0
    reload_interval: float = 5.0


# -----------------------------------------------------------------------------------------------------------
# issuing (pure)


def _bundles_current(hooks: list[dict], b64: str) -> bool:
    """Every webhook of a configuration trusts the CA bundle ``b64``."""
    return all((h.get("clientConfig") or {}).get("caBundle") == b64 for h in hooks)


def load_bundle(pem: bytes | None) -> list[x509.Certificate]:
    if not pem:
        return []
    try:
        return x509.load_pem_x509_certificates(pem)
    except ValueError:
        return []


def _signed_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    if cert.issuer != ca.subject:
        return False
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _key_matches(cert: x509.Certificate, key_pem: bytes | None) -> bool:
    if not key_pem:
        return False
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError):
        return False
    fmt = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return cert.public_key().public_bytes(*fmt) == key.public_key().public_bytes(*fmt)


def _covers(cert: x509.Certificate, hosts: list[str]) -> bool:
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    dns = set(ext.get_values_for_type(x509.DNSName))
    ips = {str(i) for i in ext.get_values_for_type(x509.IPAddress)}
    want_dns, want_ips = split_hosts(hosts)
    return set(want_dns) <= dns and {str(ipaddress.ip_address(i)) for i in want_ips} <= ips


def _parse_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        t = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


@dataclass
class Material:
    """The Secret's content (PEM bytes) plus when the newest CA entered the bundle."""

    tls_crt: bytes = b""
    tls_key: bytes = b""
    ca_crt: bytes = b""
    ca_key: bytes = b""
    ca_published_at: dt.datetime | None = None

    @classmethod
    def from_secret(cls, secret: dict | None) -> Material:
        secret = secret or {}
        data = secret.get("data") or {}

        def get(k: str) -> bytes:
            try:
                return base64.b64decode(data.get(k) or "")
            except ValueError:
                return b""

        ann = (secret.get("metadata") or {}).get("annotations") or {}
        return cls(
            get("tls.crt"),
            get("tls.key"),
            get("ca.crt"),
            get("ca.key"),
            _parse_time(ann.get(ANN_CA_PUBLISHED)),
        )

    def secret_data(self) -> dict[str, str]:
        return {
            k: base64.b64encode(v).decode()
            for k, v in (
                ("tls.crt", self.tls_crt),
                ("tls.key", self.tls_key),
                ("ca.crt", self.ca_crt),
                ("ca.key", self.ca_key),
            )
        }

    def serving_ok(self) -> bool:
        try:
            cert = x509.load_pem_x509_certificate(self.tls_crt)
        except ValueError:
            return False
        return _key_matches(cert, self.tls_key)


def plan(
    current: Material,
    hosts: list[str],
    policy: CertPolicy,
    now: dt.datetime | None = None,
    force_serving: bool = False,
    force_ca: bool = False,
) -> tuple[Material | None, str]:
    """The next state of the Secret (None: keep it) and why. One step per call; call again for the next."""
    now = now or _now()
    bundle = load_bundle(current.ca_crt)
    ca = bundle[0] if bundle else None
    ca_usable = (
        ca is not None
        and _key_matches(ca, current.ca_key)
        and ca.not_valid_before_utc <= now < ca.not_valid_after_utc
    )

    def serving_from(
        ca_crt: bytes, ca_key: bytes, bundle_pem: bytes, published: dt.datetime | None
    ) -> Material:
        crt, key = issue_serving(ca_crt, ca_key, hosts, policy.serving_validity, now)
        return Material(crt, key, bundle_pem, ca_key, published)

    if not ca_usable:
        ca_crt, ca_key = issue_ca(policy.ca_validity, now)
        return serving_from(
            ca_crt, ca_key, ca_crt, now
        ), "no usable CA: issued a new CA and serving certificate"
    assert ca is not None
    ca_pem = _cert_pem(ca)

    if force_ca or ca.not_valid_after_utc - now <= policy.ca_renew_before:
        # step 1 of a CA rotation: publish new + still-valid old CAs; the serving certificate stays
        new_crt, new_key = issue_ca(policy.ca_validity, now)
        olds = b"".join(_cert_pem(c) for c in bundle if c.not_valid_after_utc > now)
        out = Material(current.tls_crt, current.tls_key, new_crt + olds, new_key, now)
        if not current.serving_ok():
            out.tls_crt, out.tls_key = issue_serving(new_crt, new_key, hosts, policy.serving_validity, now)
        return out, "CA renewal: published the new CA next to the old one"

    try:
        serving = x509.load_pem_x509_certificate(current.tls_crt)
    except ValueError:
        serving = None
    published = current.ca_published_at
    overlap_done = published is None or now - published >= policy.ca_overlap

    reason = ""
    if serving is None or not _key_matches(serving, current.tls_key):
        reason = "serving certificate missing or not matching its key"
    elif not any(_signed_by(serving, c) for c in bundle):
        reason = "serving certificate not signed by a published CA"
    elif not (serving.not_valid_before_utc <= now < serving.not_valid_after_utc):
        reason = "serving certificate not valid now"
    elif not _covers(serving, hosts):
        reason = "serving certificate lacks a required host name"
    elif serving.not_valid_after_utc - now <= policy.serving_renew_before:
        reason = "serving certificate renewal"
    elif force_serving:
        reason = "serving certificate rotation requested"
    elif not _signed_by(serving, ca) and overlap_done:
        reason = "CA renewal: serving certificate switched to the new CA"
    if reason:
        return serving_from(ca_pem, current.ca_key, current.ca_crt, published), reason

    # step 3 of a CA rotation: once the serving certificate has used the new CA for a full overlap, drop the
    # old CAs from the bundle (expired ones go at once)
    if len(bundle) > 1 and _signed_by(serving, ca):
        if published is None or now - published >= 2 * policy.ca_overlap:
            keep: list[x509.Certificate] = []
        else:
            keep = [c for c in bundle[1:] if c.not_valid_after_utc > now]
        if len(keep) < len(bundle) - 1:
            bundle_pem = ca_pem + b"".join(_cert_pem(c) for c in keep)
            out = Material(current.tls_crt, current.tls_key, bundle_pem, current.ca_key, published)
            return out, "CA renewal: dropped old CAs from the bundle"
    return None, "up to date"


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
        self._force_serving = False
        self._force_ca = False
        self._kick = threading.Event()
        self.bundle: bytes = b""
        self.injected: dict[str, str] = {}  # "<kind>/<name>" -> caBundle fingerprint last written
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
        """Serve what the Secret (auto) or certDir (manual) holds; True when a certificate is being served."""
        m = self._read_files() if self.mode == "manual" else Material.from_secret(self._read_secret())
        if m.tls_crt and m.tls_key and self.holder.update(m.tls_crt, m.tls_key):
            self.log.info("serving certificate loaded", serial=self.holder.serial)
        if m.ca_crt:
            self.bundle = m.ca_crt
        return self.holder.ready

    # -- writing (leader) ------------------------------------------------------------------------------------
    def rotate_serving(self) -> None:
        """Issue a new serving certificate on the next reconcile (same CA)."""
        self._force_serving = True
        self._kick.set()

    def rotate_ca(self) -> None:
        """Start a CA rotation on the next reconcile (bundle first, serving certificate after the overlap)."""
        self._force_ca = True
        self._kick.set()

    def reconcile(self) -> str:
        """One pass: bring the Secret up to date (auto), serve it, inject the CA bundle; returns why."""
        if self.mode == "manual":
            self.load()
            self.inject()
            return "manual"
        secret = self._read_secret()
        current = Material.from_secret(secret)
        force_s, force_c = self._force_serving, self._force_ca
        new, reason = plan(
            current, self.hosts, self.policy, now=self.clock(), force_serving=force_s, force_ca=force_c
        )
        if new is not None:
            self._write(secret, new)
            self.log.info("webhook certificate secret updated", reason=reason)
            if force_s:
                self._force_serving = False
            if force_c:
                self._force_ca = False
        elif force_s or force_c:
            self._force_serving = self._force_ca = False
        self.load()
        self.inject()
        return reason

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
        """Patch the CA bundle into our labelled webhook configurations and the nvidia.com CRDs."""
        if not self.bundle:
            return
        b64 = base64.b64encode(self.bundle).decode()
        for res, cfg, hooks in self._webhook_configs():
            if _bundles_current(hooks, b64):
                continue
            for h in hooks:
                h.setdefault("clientConfig", {})["caBundle"] = b64
            self.client.replace(res, cfg)
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
            self.log.info("caBundle injected", kind="CustomResourceDefinition", name=name)

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
        Helm upgrade that re-creates it, a `kubectl replace`), not at the next periodic check a minute later:
        until then every admission it routes fails TLS verification and is refused."""
        if not self.inject_webhooks:
            stop.wait()
            return
        informers = [
            Informer(
                res,
                ClientListWatcher(self.client, res, label_selector=self._webhook_selector),
                name=f"cabundle-{res.kind}",
            )
            for res in (VALIDATING, MUTATING)
        ]
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

    def _kick_if_stale(self, cfg: dict) -> None:
        if self.bundle and not _bundles_current(
            cfg.get("webhooks") or [], base64.b64encode(self.bundle).decode()
        ):
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
