"""Pure certificate functions: what the webhook needs, and exactly when a stored certificate is reused."""

import datetime as dt

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID
from dynamo_hooks import certs

NAMES = certs.webhook_dns_names("dynamo-operator-webhook-service", "dynamo-system")
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def pair() -> tuple[certs.Issued, certs.Issued]:
    ca = certs.issue_ca(now=NOW)
    return ca, certs.issue_serving_cert(ca, NAMES, now=NOW)


def test_dns_names() -> None:
    assert NAMES == [
        "dynamo-operator-webhook-service",
        "dynamo-operator-webhook-service.dynamo-system",
        "dynamo-operator-webhook-service.dynamo-system.svc",
        "dynamo-operator-webhook-service.dynamo-system.svc.cluster.local",
    ]


def test_issued_certificates(pair) -> None:
    ca, leaf = pair
    ca_cert, leaf_cert = ca.certificate, leaf.certificate
    assert ca_cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not leaf_cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    sans = leaf_cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == NAMES
    eku = leaf_cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in eku
    assert leaf_cert.issuer == ca_cert.subject
    assert leaf_cert.not_valid_before_utc < NOW  # backdated for clock skew
    assert leaf_cert.not_valid_after_utc <= ca_cert.not_valid_after_utc


def test_reuse_while_valid(pair) -> None:
    ca, leaf = pair
    assert certs.cert_needs_renewal(leaf.cert_pem, leaf.key_pem, ca.cert_pem, NAMES, now=NOW) is None
    later = NOW + dt.timedelta(days=330)  # 34 days left
    assert certs.cert_needs_renewal(leaf.cert_pem, leaf.key_pem, ca.cert_pem, NAMES, now=later) is None


def test_renew_reasons(pair) -> None:
    ca, leaf = pair
    other_ca = certs.issue_ca(now=NOW)
    other_leaf = certs.issue_serving_cert(ca, NAMES, now=NOW)
    near_expiry = NOW + dt.timedelta(days=340)
    cases = {
        "expires": dict(now=near_expiry),
        "lacks DNS names": dict(dns_names=[*NAMES, "extra.svc"]),
        "not signed by": dict(ca_pem=other_ca.cert_pem),
        "does not match": dict(key_pem=other_leaf.key_pem),
        "missing tls.key": dict(key_pem=b""),
        "unreadable": dict(cert_pem=b"garbage"),
    }
    for expected, override in cases.items():
        args = dict(
            cert_pem=leaf.cert_pem, key_pem=leaf.key_pem, ca_pem=ca.cert_pem, dns_names=NAMES, now=NOW
        )
        args.update(override)
        reason = certs.cert_needs_renewal(
            args["cert_pem"], args["key_pem"], args["ca_pem"], args["dns_names"], now=args["now"]
        )
        assert reason is not None and expected in reason, (expected, reason)


def test_serving_cert_needs_a_name(pair) -> None:
    with pytest.raises(ValueError, match="DNS name"):
        certs.issue_serving_cert(pair[0], [])
