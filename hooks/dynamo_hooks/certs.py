"""Webhook TLS material as pure functions: issue a CA, issue a serving certificate, decide on renewal.

Pure (no cluster access, injectable clock) so the install hook and the operator's own certificate manager
share one implementation and tests can move time. Keys are RSA 2048 by default: every API server and Go
TLS stack accepts them and they generate in milliseconds, which matters in a hook Job on a small node.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_VALIDITY = dt.timedelta(days=3650)
SERVING_VALIDITY = dt.timedelta(days=365)
RENEW_BEFORE = dt.timedelta(days=30)
# Backdating absorbs clock skew between the node that issues and the API server that verifies.
BACKDATE = dt.timedelta(hours=1)
CA_COMMON_NAME = "Dynamo Webhook CA"
ORGANIZATION = "NVIDIA"


@dataclass(frozen=True)
class Issued:
    """A certificate and its private key, both PEM."""

    cert_pem: bytes
    key_pem: bytes

    @property
    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.cert_pem)


def _now(now: dt.datetime | None) -> dt.datetime:
    return now or dt.datetime.now(dt.UTC)


def _new_key(key_size: int) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=key_size)


def _key_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def webhook_dns_names(service: str, namespace: str, cluster_domain: str = "cluster.local") -> list[str]:
    """The names an API server may use to reach a webhook Service: `<svc>`, `.<ns>`, `.svc`, "
    "`.svc.<domain>`."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.{cluster_domain}",
    ]


def issue_ca(
    common_name: str = CA_COMMON_NAME,
    *,
    validity: dt.timedelta = CA_VALIDITY,
    now: dt.datetime | None = None,
    key_size: int = 2048,
) -> Issued:
    """A self-signed CA that may only sign leaf certificates (path length 0)."""
    key = _new_key(key_size)
    start = _now(now) - BACKDATE
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ski, critical=False)
        .sign(key, hashes.SHA256())
    )
    return Issued(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def issue_serving_cert(
    ca: Issued,
    dns_names: list[str],
    *,
    validity: dt.timedelta = SERVING_VALIDITY,
    now: dt.datetime | None = None,
    key_size: int = 2048,
) -> Issued:
    """A TLS server certificate for `dns_names`, signed by `ca`, never outliving the CA."""
    if not dns_names:
        raise ValueError("a serving certificate needs at least one DNS name")
    ca_cert = ca.certificate
    ca_key = serialization.load_pem_private_key(ca.key_pem, password=None)
    if not isinstance(ca_key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
        raise ValueError("the CA key must be RSA or ECDSA")
    key = _new_key(key_size)
    start = _now(now) - BACKDATE
    end = min(start + validity, ca_cert.not_valid_after_utc)
    # The CN is informational only (clients use SANs) and is capped at 64 bytes by X.509.
    common_name = dns_names[0] if len(dns_names[0]) <= 64 else dns_names[0][:64]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in dns_names]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    return Issued(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def _signed_by(cert: x509.Certificate, ca_cert: x509.Certificate) -> bool:
    if cert.issuer != ca_cert.subject:
        return False
    public_key = ca_cert.public_key()
    try:
        if isinstance(public_key, rsa.RSAPublicKey):
            public_key.verify(
                cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), cert.signature_hash_algorithm
            )  # type: ignore[arg-type]
        elif isinstance(public_key, ec.EllipticCurvePublicKey):
            public_key.verify(
                cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm)
            )  # type: ignore[arg-type]
        else:
            return False
    except InvalidSignature:
        return False
    return True


def cert_needs_renewal(
    cert_pem: bytes | None,
    key_pem: bytes | None,
    ca_pem: bytes | None,
    dns_names: list[str],
    *,
    renew_before: dt.timedelta = RENEW_BEFORE,
    now: dt.datetime | None = None,
) -> str | None:
    """Why the stored serving certificate must be re-issued, or None when it can be reused.

    Reused only when all hold: it parses, its key matches, it is signed by the stored CA, the CA and the
    certificate both stay valid for more than `renew_before`, and its SANs cover every `dns_names` entry.
    """
    if not cert_pem or not key_pem or not ca_pem:
        missing = [n for n, v in (("tls.crt", cert_pem), ("tls.key", key_pem), ("ca.crt", ca_pem)) if not v]
        return f"missing {', '.join(missing)}"
    try:
        cert = x509.load_pem_x509_certificate(cert_pem)
        ca_cert = x509.load_pem_x509_certificate(ca_pem)
        key = serialization.load_pem_private_key(key_pem, password=None)
    except ValueError as exc:
        return f"unreadable PEM data ({exc})"
    cert_pub = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    key_pub = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    if cert_pub != key_pub:
        return "tls.key does not match tls.crt"
    if not _signed_by(cert, ca_cert):
        return "tls.crt is not signed by ca.crt"
    current = _now(now)
    for label, c in (("tls.crt", cert), ("ca.crt", ca_cert)):
        if c.not_valid_before_utc > current:
            return f"{label} is not valid before {c.not_valid_before_utc.isoformat()}"
        if c.not_valid_after_utc - current <= renew_before:
            days = (c.not_valid_after_utc - current).days
            return (
                f"{label} expires {c.not_valid_after_utc.isoformat()} "
                f"(in {days} days, renewal window {renew_before.days} days)"
            )
    try:
        sans = set(
            cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
                x509.DNSName
            )
        )
    except x509.ExtensionNotFound:
        sans = set()
    missing_names = [n for n in dns_names if n not in sans]
    if missing_names:
        return f"tls.crt lacks DNS names {', '.join(missing_names)}"
    return None
