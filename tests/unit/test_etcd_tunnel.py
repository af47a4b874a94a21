"""``dynamo-operator etcd-tunnel``: plain bytes on the pod's loopback become mutual TLS to etcd with the
namespace's certificate (the Common Name etcd maps to the user), negotiating HTTP/2, with the files read
again for every connection (a renewed certificate is used without a restart). The upstream here is a TLS
server of the test's own on 127.0.0.1 requiring client certificates, standing in for etcd (the tunnel
and etcd together, with the gRPC proxy and RBAC, are proven in tests/integration/test_etcd_access.py)."""

from __future__ import annotations

import asyncio
import datetime as dt
import socket
import ssl
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography import x509
from cryptography.x509.oid import NameOID
from dynamo_operator import pki
from dynamo_operator.etcdtunnel import Tunnel, command

DAY = dt.timedelta(days=1)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pki(tmp: Path) -> tuple[Path, Path]:
    ca_crt, ca_key = pki.issue_ca(DAY, common_name="test-etcd-ca")
    srv_crt, srv_key = pki.issue_serving(ca_crt, ca_key, ["127.0.0.1"], DAY)
    server, client = tmp / "server", tmp / "client"
    for d in (server, client):
        d.mkdir()
        (d / "ca.crt").write_bytes(ca_crt)
    (server / "tls.crt").write_bytes(srv_crt)
    (server / "tls.key").write_bytes(srv_key)
    (server / "ca.key").write_bytes(ca_key)
    _client_cert(server, client, "ns:team-a")
    return server, client


def _client_cert(server: Path, client: Path, cn: str) -> None:
    crt, key = pki.issue_client((server / "ca.crt").read_bytes(), (server / "ca.key").read_bytes(), cn, DAY)
    (client / "tls.crt").write_bytes(crt)
    (client / "tls.key").write_bytes(key)


async def _upstream(server: Path, port: int, seen: list) -> asyncio.Server:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(server / "ca.crt"))
    ctx.load_cert_chain(str(server / "tls.crt"), str(server / "tls.key"))
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.set_alpn_protocols(["h2"])

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tls = writer.get_extra_info("ssl_object")
        cert = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))
        cn = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
        seen.append((cn, tls.selected_alpn_protocol()))
        writer.write(b"echo:" + await reader.read(100))
        await writer.drain()
        writer.close()

    return await asyncio.start_server(echo, "127.0.0.1", port, ssl=ctx)


async def _ask(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(100), 10)
    writer.close()
    return answer


def test_tunnel_presents_the_namespace_certificate_and_rereads_it(tmp_path: Path) -> None:
    server, client = _pki(tmp_path)
    up, local = _port(), _port()

    async def scenario() -> tuple[list, bytes, bytes]:
        seen: list = []
        upstream = await _upstream(server, up, seen)
        started = asyncio.Event()
        task = asyncio.create_task(Tunnel(f"127.0.0.1:{up}", client).serve(f"127.0.0.1:{local}", started))
        await started.wait()
        first = await _ask(local, b"hello")
        _client_cert(server, client, "ns:team-b")  # renewed files: the next connection presents them
        second = await _ask(local, b"again")
        task.cancel()
        upstream.close()
        return seen, first, second

    seen, first, second = asyncio.run(scenario())
    assert (first, second) == (b"echo:hello", b"echo:again")
    assert seen == [("ns:team-a", "h2"), ("ns:team-b", "h2")]


def test_tunnel_closes_a_connection_it_cannot_open_upstream(tmp_path: Path) -> None:
    """Nothing listens upstream: the local client sees its connection closed, the tunnel keeps serving."""
    _, client = _pki(tmp_path)
    local = _port()

    async def scenario() -> bytes:
        started = asyncio.Event()
        tunnel = Tunnel(f"127.0.0.1:{_port()}", client)
        task = asyncio.create_task(tunnel.serve(f"127.0.0.1:{local}", started))
        await started.wait()
        answer = await _ask(local, b"x")
        task.cancel()
        return answer

    assert asyncio.run(scenario()) == b""


@pytest.mark.parametrize(
    "listen,watch", [("0.0.0.0:23791", None), ("10.0.0.1:23791", None), ("127.0.0.1:23791", "0.0.0.0:23790")]
)
def test_tunnel_serves_loopback_only(listen: str, watch: str | None, tmp_path: Path) -> None:
    args = ["--listen", listen, "--upstream", "e:2379", "--tls-dir", str(tmp_path)]
    args += ["--watch-listen", watch, "--watch-upstream", "127.0.0.1:23792"] if watch else []
    result = CliRunner().invoke(command, args)
    assert result.exit_code != 0
    assert "loopback only" in result.output


def test_the_watch_keeper_needs_the_proxys_address(tmp_path: Path) -> None:
    args = ["--upstream", "e:2379", "--tls-dir", str(tmp_path), "--watch-listen", "127.0.0.1:23790"]
    result = CliRunner().invoke(command, args)
    assert result.exit_code != 0 and "--watch-upstream" in result.output, result.output
