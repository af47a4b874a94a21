"""The webhook certificate Secret: its layout, its labels, the hosts it must cover, and the one planner that
decides its next state. Pure (no I/O, no Kubernetes client).

Why a module of its own, outside ``webhooks`` and ``runtime``: two writers keep the same Secret, the
operator's certificate manager (``webhooks.certs``) and the install hook (``dynamo_hooks.secrets``), and they
must agree on its keys (``tls.crt``, ``tls.key``, ``ca.crt``, ``ca.key``), its labels, validity and renewal,
or each re-issues what the other wrote. The hook Job imports only this and ``pki`` (a handful of modules),
not the operator's webhooks, controllers and renderer.

Rotation, one step per :func:`plan` call:

* the CA (10 years) outlives serving certificates (1 year, renewed 90 days before expiry), and a serving
  rotation keeps the CA, so the published caBundle stays valid;
* a CA rotation first publishes ``new CA + old CA`` as the bundle while the old serving certificate keeps
  serving; only after ``ca_overlap`` does the serving certificate switch to one signed by the new CA (the
  certificate manager also waits until every caller carries the new bundle); only after ``2 * ca_overlap``
  is the old CA dropped from the bundle.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization

from dynamo_operator.labels import LABEL_APP_COMPONENT, LABEL_MANAGED_BY, LABEL_PART_OF, MANAGED_BY, PART_OF
from dynamo_operator.pki import _cert_pem, issue_ca, issue_serving, split_hosts

ANN_CA_PUBLISHED = "nvidia.com/webhook-ca-published-at"
SECRET_TYPE = "kubernetes.io/tls"
# The webhook Secret's labels, whoever writes it (the operator, or the install hook before it starts).
SECRET_LABELS = {LABEL_MANAGED_BY: MANAGED_BY, LABEL_APP_COMPONENT: "webhook", LABEL_PART_OF: PART_OF}
# What a pod may mount from the Secret: never ``ca.key`` (only the certificate manager issues, and it
# reads the Secret through the API).
SERVING_KEYS = ("tls.crt", "tls.key", "ca.crt")
# The CA bundle alone, published beside the Secret in a ConfigMap for whoever verifies the serving
# certificate without needing the Secret (the ServiceMonitor's Prometheus): the Secret also holds ``ca.key``,
# and a reader of ``ca.crt`` must not be a reader of the key that signs for every webhook caller. Both writers
# (the install hook and the certificate manager) apply it server-side under one field manager, so neither
# conflicts with the other, and it is owned by the Secret: it goes when the Secret goes.
CA_KEY = "ca.crt"
CA_FIELD_MANAGER = "dynamo-webhook-ca"


def ca_configmap_name(secret_name: str) -> str:
    """``<secret>-ca``: the chart's ServiceMonitor names the same ConfigMap (servicemonitor.yaml)."""
    return f"{secret_name}-ca"


def ca_configmap(secret: dict, bundle: bytes) -> dict:
    """The ConfigMap publishing ``bundle`` (PEM) for ``secret`` (the live webhook Secret: its namespace,
    name and uid), owned by that Secret."""
    md = secret["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": ca_configmap_name(md["name"]),
            "namespace": md["namespace"],
            "labels": dict(SECRET_LABELS),
            "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": md["name"], "uid": md["uid"]}],
        },
        "data": {CA_KEY: bundle.decode()},
    }


def ca_configmap_current(live: dict | None, want: dict) -> bool:
    """Whether ``live`` already publishes ``want``'s bundle, labels and owner (nothing to apply)."""
    if live is None:
        return False
    md, wmd = live.get("metadata") or {}, want["metadata"]
    labels = md.get("labels") or {}
    owners = {r.get("uid") for r in md.get("ownerReferences") or []}
    return (
        (live.get("data") or {}).get(CA_KEY) == want["data"][CA_KEY]
        and all(labels.get(k) == v for k, v in wmd["labels"].items())
        and wmd["ownerReferences"][0]["uid"] in owners
    )


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


def service_dns_names(service: str, namespace: str) -> list[str]:
    """The names a client may use for a Service: ``svc.ns.svc`` first (the API server's)."""
    return [
        f"{service}.{namespace}.svc",
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc.cluster.local",
    ]


def service_hosts(
    service: str, namespace: str, url_base: str | None = None, extra_services: tuple[str, ...] = ()
) -> list[str]:
    """Serving-certificate hosts: the webhook Service's DNS names, then those of ``extra_services`` (the
    metrics Service, whose scrapes verify the same certificate), plus the URL's host (and localhost) when
    the API server reaches the webhook by URL."""
    import urllib.parse

    hosts = service_dns_names(service, namespace)
    for extra in extra_services:
        hosts += service_dns_names(extra, namespace)
    if url_base:
        host = urllib.parse.urlsplit(url_base).hostname
        if host:
            hosts.append(host)
        if host in ("127.0.0.1", "::1", "localhost"):
            hosts += ["localhost", "127.0.0.1"]
    return list(dict.fromkeys(hosts))


# -----------------------------------------------------------------------------------------------------------
# reading certificates


def load_bundle(pem: bytes | None) -> list[x509.Certificate]:
    if not pem:
        return []
    try:
        return x509.load_pem_x509_certificates(pem)
    except ValueError:
        return []


def signed_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    if cert.issuer != ca.subject:
        return False
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def key_matches(cert: x509.Certificate, key_pem: bytes | None) -> bool:
    if not key_pem:
        return False
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError):
        return False
    fmt = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return cert.public_key().public_bytes(*fmt) == key.public_key().public_bytes(*fmt)


def covers(cert: x509.Certificate, hosts: list[str]) -> bool:
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
        return key_matches(cert, self.tls_key)

    def serving_cert(self) -> x509.Certificate | None:
        try:
            return x509.load_pem_x509_certificate(self.tls_crt)
        except ValueError:
            return None


# -----------------------------------------------------------------------------------------------------------
# the planner


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
    if ca is None or not (
        key_matches(ca, current.ca_key) and ca.not_valid_before_utc <= now < ca.not_valid_after_utc
    ):
        ca_crt, ca_key = issue_ca(policy.ca_validity, now)
        crt, key = issue_serving(ca_crt, ca_key, hosts, policy.serving_validity, now)
        return Material(
            crt, key, ca_crt, ca_key, now
        ), "no usable CA: issued a new CA and serving certificate"
    if force_ca or ca.not_valid_after_utc - now <= policy.ca_renew_before:
        return _publish_new_ca(current, bundle, hosts, policy, now)
    reason = _serving_reason(current, bundle, hosts, policy, now, force_serving)
    if reason:
        crt, key = issue_serving(_cert_pem(ca), current.ca_key, hosts, policy.serving_validity, now)
        return Material(crt, key, current.ca_crt, current.ca_key, current.ca_published_at), reason
    return _drop_old_cas(current, bundle, policy, now)


def _publish_new_ca(
    current: Material, bundle: list[x509.Certificate], hosts: list[str], policy: CertPolicy, now: dt.datetime
) -> tuple[Material, str]:
    """Step 1 of a CA rotation: publish new + still-valid old CAs; the serving certificate stays."""
    new_crt, new_key = issue_ca(policy.ca_validity, now)
    olds = b"".join(_cert_pem(c) for c in bundle if c.not_valid_after_utc > now)
    out = Material(current.tls_crt, current.tls_key, new_crt + olds, new_key, now)
    if not current.serving_ok():
        out.tls_crt, out.tls_key = issue_serving(new_crt, new_key, hosts, policy.serving_validity, now)
    return out, "CA renewal: published the new CA next to the old one"


def _serving_reason(
    current: Material,
    bundle: list[x509.Certificate],
    hosts: list[str],
    policy: CertPolicy,
    now: dt.datetime,
    force_serving: bool,
) -> str:
    """Why the serving certificate must be re-issued from the newest CA ("" when it need not)."""
    ca = bundle[0]
    serving = current.serving_cert()
    published = current.ca_published_at
    overlap_done = published is None or now - published >= policy.ca_overlap
    if serving is None or not key_matches(serving, current.tls_key):
        return "serving certificate missing or not matching its key"
    if not any(signed_by(serving, c) for c in bundle):
        return "serving certificate not signed by a published CA"
    if not (serving.not_valid_before_utc <= now < serving.not_valid_after_utc):
        return "serving certificate not valid now"
    if not covers(serving, hosts):
        return "serving certificate lacks a required host name"
    if serving.not_valid_after_utc - now <= policy.serving_renew_before:
        return "serving certificate renewal"
    if force_serving:
        return "serving certificate rotation requested"
    if not signed_by(serving, ca) and overlap_done:
        return SWITCH_REASON
    return ""


SWITCH_REASON = "CA renewal: serving certificate switched to the new CA"


def _drop_old_cas(
    current: Material, bundle: list[x509.Certificate], policy: CertPolicy, now: dt.datetime
) -> tuple[Material | None, str]:
    """Step 3 of a CA rotation: once the serving certificate has used the new CA for a full overlap, drop
    the old CAs from the bundle (expired ones go at once)."""
    serving = current.serving_cert()
    published = current.ca_published_at
    if len(bundle) < 2 or serving is None or not signed_by(serving, bundle[0]):
        return None, "up to date"
    if published is None or now - published >= 2 * policy.ca_overlap:
        keep: list[x509.Certificate] = []
    else:
        keep = [c for c in bundle[1:] if c.not_valid_after_utc > now]
    if len(keep) == len(bundle) - 1:
        return None, "up to date"
    bundle_pem = _cert_pem(bundle[0]) + b"".join(_cert_pem(c) for c in keep)
    out = Material(current.tls_crt, current.tls_key, bundle_pem, current.ca_key, published)
    return out, "CA renewal: dropped old CAs from the bundle"
