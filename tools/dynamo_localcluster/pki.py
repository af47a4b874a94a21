"""Certificates and keys for a throwaway local control plane.

One CA signs everything: the apiserver's serving certificate, one `system:masters` client certificate
shared by the admin kubeconfig and every component, and kwok's fake-kubelet server. etcd has a CA of its
own: it accepts only clients holding a certificate from that CA, which only the API server has (the
cluster's CA also signs the real node's kubelet and kube-proxy, which must not reach etcd). EC P-256 keys
because they are generated in milliseconds, which keeps a cold cluster start fast.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

APISERVER_DNS = [
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
]


@dataclass(frozen=True)
class Pki:
    """Paths of the files a control plane needs; all under one directory."""

    dir: Path

    @property
    def ca_crt(self) -> Path:
        return self.dir / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.dir / "ca.key"

    @property
    def serving_crt(self) -> Path:
        return self.dir / "apiserver.crt"

    @property
    def serving_key(self) -> Path:
        return self.dir / "apiserver.key"

    @property
    def admin_crt(self) -> Path:
        return self.dir / "admin.crt"

    @property
    def admin_key(self) -> Path:
        return self.dir / "admin.key"

    @property
    def etcd_ca_crt(self) -> Path:
        return self.dir / "etcd-ca.crt"

    @property
    def etcd_server_crt(self) -> Path:
        """etcd's serving certificate, for its client and peer listeners (both on 127.0.0.1)."""
        return self.dir / "etcd-server.crt"

    @property
    def etcd_server_key(self) -> Path:
        return self.dir / "etcd-server.key"

    @property
    def etcd_client_crt(self) -> Path:
        """The API server's (and the health check's) client certificate for etcd."""
        return self.dir / "etcd-client.crt"

    @property
    def etcd_client_key(self) -> Path:
        return self.dir / "etcd-client.key"

    @property
    def sa_key(self) -> Path:
        return self.dir / "sa.key"

    @property
    def sa_pub(self) -> Path:
        return self.dir / "sa.pub"


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def _name(cn: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _issue(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate | None,
    ca_key: ec.EllipticCurvePrivateKey,
    *,
    is_ca: bool = False,
    server: bool = False,
    client: bool = False,
    dns: list[str] | None = None,
    ips: list[str] | None = None,
) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject if ca_cert else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True)
    )
    if is_ca:
        builder = builder.add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
    else:
        usages = []
        if server:
            usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
        if client:
            usages.append(ExtendedKeyUsageOID.CLIENT_AUTH)
        builder = builder.add_extension(
            x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True
        ).add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns or []]
    sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips or []]
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def generate(directory: Path, service_ip: str = "127.96.0.1", extra_ips: tuple[str, ...] = ()) -> Pki:
    """Writes a complete PKI for one cluster into ``directory`` (created, mode 0700). ``extra_ips`` are more
    addresses the apiserver serves on (the real node's bridge address)."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    pki = Pki(directory)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _issue(_name("dynamo-localcluster-ca"), ca_key, None, ca_key, is_ca=True)

    srv_key = ec.generate_private_key(ec.SECP256R1())
    srv_cert = _issue(
        _name("kube-apiserver"),
        srv_key,
        ca_cert,
        ca_key,
        server=True,
        dns=APISERVER_DNS,
        ips=["127.0.0.1", service_ip, *extra_ips],
    )
    adm_key = ec.generate_private_key(ec.SECP256R1())
    # Serving too: kwok's fake kubelet server presents this certificate on 127.0.0.1.
    adm_cert = _issue(
        _name("dynamo-admin", "system:masters"),
        adm_key,
        ca_cert,
        ca_key,
        server=True,
        client=True,
        dns=["localhost"],
        ips=["127.0.0.1"],
    )
    # Service-account tokens are signed with RSA: the apiserver's JWKS and every client accept it.
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    etcd = _etcd_files(pki)

    pem = serialization.Encoding.PEM
    files = {
        pki.ca_crt: ca_cert.public_bytes(pem),
        pki.ca_key: _key_pem(ca_key),
        pki.serving_crt: srv_cert.public_bytes(pem),
        pki.serving_key: _key_pem(srv_key),
        pki.admin_crt: adm_cert.public_bytes(pem),
        pki.admin_key: _key_pem(adm_key),
        pki.sa_key: _key_pem(sa_key),
        pki.sa_pub: sa_key.public_key().public_bytes(pem, serialization.PublicFormat.SubjectPublicKeyInfo),
        **etcd,
    }
    for path, data in files.items():
        path.write_bytes(data)
        path.chmod(0o600)
    return pki


def _etcd_files(pki: Pki) -> dict[Path, bytes]:
    """etcd's own CA, its serving (and peer) certificate for 127.0.0.1, and the one client certificate."""
    pem = serialization.Encoding.PEM
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _issue(_name("dynamo-localcluster-etcd-ca"), ca_key, None, ca_key, is_ca=True)
    srv_key, cli_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    local = {"dns": ["localhost"], "ips": ["127.0.0.1"]}
    srv = _issue(_name("etcd"), srv_key, ca_cert, ca_key, server=True, client=True, **local)
    cli = _issue(_name("kube-apiserver-etcd-client"), cli_key, ca_cert, ca_key, client=True)
    return {
        pki.etcd_ca_crt: ca_cert.public_bytes(pem),
        pki.etcd_server_crt: srv.public_bytes(pem),
        pki.etcd_server_key: _key_pem(srv_key),
        pki.etcd_client_crt: cli.public_bytes(pem),
        pki.etcd_client_key: _key_pem(cli_key),
    }


def issue(
    pki: Pki,
    name: str,
    cn: str,
    org: str | None = None,
    *,
    server: bool = False,
    client: bool = False,
    dns: list[str] | None = None,
    ips: list[str] | None = None,
) -> tuple[Path, Path]:
    """Another certificate from the cluster's CA (the real node's kubelet and kube-proxy): writes
    ``<name>.crt`` and ``<name>.key`` beside the others and returns their paths."""
    ca_cert = x509.load_pem_x509_certificate(pki.ca_crt.read_bytes())
    ca_key = serialization.load_pem_private_key(pki.ca_key.read_bytes(), password=None)
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = _issue(_name(cn, org), key, ca_cert, ca_key, server=server, client=client, dns=dns, ips=ips)
    crt_path, key_path = pki.dir / f"{name}.crt", pki.dir / f"{name}.key"
    crt_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(_key_pem(key))
    for path in (crt_path, key_path):
        path.chmod(0o600)
    return crt_path, key_path
