"""Certificate issuing shared by the webhook certificate manager, the metrics server and the install hooks.

Pure functions (no I/O): EC P-256 keys, a CA with path length 0, serverAuth leaves that never outlive
their CA. Why one module: the webhook Secret is written by the install hook and by the operator, and the
metrics server needs a throwaway certificate; three issuers would drift apart.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_COMMON_NAME = "Dynamo-Webhook-CA"
ORGANIZATION = "NVIDIA"
# certificates start this long in the past, so a client whose clock is a little behind accepts them
BACKDATE = dt.timedelta(hours=1)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: Any) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def issue_ca(
    validity: dt.timedelta, now: dt.datetime | None = None, common_name: str = CA_COMMON_NAME
) -> tuple[bytes, bytes]:
    """A self-signed CA (path length 0): (cert PEM, key PEM)."""
    key = _key()
    start = (now or _now()) - BACKDATE
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )
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
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return _cert_pem(cert), _key_pem(key)


def split_hosts(hosts: list[str]) -> tuple[list[str], list[str]]:
    """(DNS names, IP addresses) of ``hosts``."""
    dns, ips = [], []
    for h in hosts:
        try:
            ipaddress.ip_address(h)
            ips.append(h)
        except ValueError:
            dns.append(h)
    return dns, ips


def _issue(
    ca_cert_pem: bytes,
    ca_key_pem: bytes,
    common_name: str,
    validity: dt.timedelta,
    now: dt.datetime | None,
    extensions: list[tuple[x509.ExtensionType, bool]],
) -> tuple[bytes, bytes]:
    """A leaf certificate for a new key, signed by the CA, backdated by ``BACKDATE`` and never outliving the
    CA, with ``extensions`` (value, critical) beside the basic constraints and the authority key id that
    every leaf carries: (cert PEM, key PEM)."""
    ca = x509.load_pem_x509_certificate(ca_cert_pem)
    ca_key = serialization.load_pem_private_key(ca_key_pem, password=None)
    key = _key()
    start = (now or _now()) - BACKDATE
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(min(start + validity, ca.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
    )
    for value, critical in extensions:
        builder = builder.add_extension(value, critical=critical)
    cert = builder.sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    return _cert_pem(cert), _key_pem(key)


def issue_serving(
    ca_cert_pem: bytes,
    ca_key_pem: bytes,
    hosts: list[str],
    validity: dt.timedelta,
    now: dt.datetime | None = None,
) -> tuple[bytes, bytes]:
    """A serverAuth certificate for ``hosts`` (DNS names and IPs) signed by the CA, never outliving it."""
    if not hosts:
        raise ValueError("a serving certificate needs at least one host")
    dns, ips = split_hosts(hosts)
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    usage = x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=True,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=False,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )
    extensions: list[tuple[x509.ExtensionType, bool]] = [
        (x509.SubjectAlternativeName(sans), False),
        (usage, True),
        (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False),
    ]
    return _issue(ca_cert_pem, ca_key_pem, hosts[0][:64], validity, now, extensions)


def issue_client(
    ca_cert_pem: bytes,
    ca_key_pem: bytes,
    common_name: str,
    validity: dt.timedelta,
    now: dt.datetime | None = None,
) -> tuple[bytes, bytes]:
    """A clientAuth certificate whose subject is ``common_name`` alone (etcd maps a client certificate to
    the user named by its Common Name), signed by the CA, never outliving it: (cert PEM, key PEM)."""
    extensions: list[tuple[x509.ExtensionType, bool]] = [
        (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False)
    ]
    return _issue(ca_cert_pem, ca_key_pem, common_name, validity, now, extensions)


def self_signed_serving(hosts: list[str], validity: dt.timedelta, common_name: str) -> tuple[bytes, bytes]:
    """A serving certificate for ``hosts`` from a throwaway CA (PEM cert, PEM key): for servers whose
    clients do not verify against a published CA (e.g. a metrics endpoint scraped with TLS skip-verify)."""
    ca_crt, ca_key = issue_ca(validity, common_name=common_name)
    return issue_serving(ca_crt, ca_key, hosts, validity)
