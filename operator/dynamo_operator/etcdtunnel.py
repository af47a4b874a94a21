"""``dynamo-operator etcd-tunnel``: the TLS leg of a graph pod's path to etcd (``render/etcdaccess.py``).

A graph pod reaches the platform's etcd as ``runtime -> watch keeper -> etcd-proxy -> etcd-tunnel -> etcd``
(the watch keeper, ``etcdwatch.py``, runs in this process: ``--watch-listen``). etcd's own
gRPC proxy prefixes every key with the namespace's root (``ns/<namespace>/``), so the Dynamo runtime's
global reads (1.6.1 ranges all of ``v1/instances/`` and ``v1/mdc/``) stay inside the namespace; but it
refuses a client certificate with a Common Name, and etcd maps a certificate to a user only by its Common
Name. This tunnel closes that gap: it accepts plain connections on the pod's loopback only and opens each
one as mutual TLS to etcd with the namespace's certificate (CN ``ns:<namespace>``, the etcd user whose
role covers ``ns/<namespace>/`` alone), forwarding the bytes as they are (HTTP/2, ALPN ``h2``).

The certificate and key are read again for every connection: a renewed certificate (the operator rewrites
the Secret, the kubelet the files) is used from the next connection on, with no restart. Nothing here
authenticates the local side: loopback is the pod's own (every container of the pod shares the Secret).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from pathlib import Path

import click

from dynamo_operator.etcdwatch import WatchKeeper, serve_loopback
from dynamo_operator.runtime.log import get_logger, setup_logging

log = get_logger("etcd-tunnel")
CHUNK = 64 * 1024


def client_context(ca: Path, cert: Path, key: Path) -> ssl.SSLContext:
    """Mutual TLS to etcd: the CA it is verified against, the namespace's certificate, HTTP/2 (etcd serves
    gRPC over TLS only to connections that negotiated ``h2``)."""
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(ca))
    ctx.load_cert_chain(str(cert), str(key))
    ctx.set_alpn_protocols(["h2"])
    return ctx


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


class Tunnel:
    """Plain on ``listen``, mutual TLS to ``upstream`` (``host:port``) with the files under ``tls_dir``."""

    def __init__(self, upstream: str, tls_dir: Path, server_name: str | None = None):
        host, _, port = upstream.rpartition(":")
        self.host, self.port = host.strip("[]"), int(port)
        self.tls_dir = tls_dir
        self.server_name = server_name or self.host

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        d = self.tls_dir
        try:
            ctx = client_context(d / "ca.crt", d / "tls.crt", d / "tls.key")
            up_reader, up_writer = await asyncio.open_connection(
                self.host, self.port, ssl=ctx, server_hostname=self.server_name
            )
        except (OSError, ssl.SSLError) as e:
            log.warning("cannot reach etcd", host=self.host, port=self.port, error=str(e))
            writer.close()
            return
        await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))

    async def serve(self, listen: str, started: asyncio.Event | None = None) -> None:
        await serve_loopback(self.handle, listen, started, log, "etcd tunnel serving", self.host, self.port)


def _loopback(address: str, option: str) -> None:
    host = address.rpartition(":")[0].strip("[]")
    if host not in ("127.0.0.1", "::1", "localhost"):
        raise click.BadParameter("the tunnel serves the pod's loopback only", param_hint=option)


async def _serve(
    listen: str, upstream: str, tls_dir: Path, watch_listen: str | None, watch_upstream: str | None
) -> None:
    servers = [Tunnel(upstream, tls_dir).serve(listen)]
    if watch_listen and watch_upstream:
        servers.append(WatchKeeper(watch_upstream).serve(watch_listen))
    await asyncio.gather(*servers)


@click.command("etcd-tunnel")
@click.option("--listen", default="127.0.0.1:23791", show_default=True, help="loopback address to serve")
@click.option("--upstream", required=True, help="etcd's client address, host:port")
@click.option(
    "--tls-dir", required=True, type=click.Path(path_type=Path), help="holds ca.crt, tls.crt, tls.key"
)
@click.option(
    "--watch-listen",
    default=None,
    help="also serve the runtime here (loopback), keeping its watches open through the proxy (etcdwatch.py)",
)
@click.option(
    "--watch-upstream",
    default=None,
    help="the etcd gRPC proxy the watch keeper forwards to, host:port (required with --watch-listen)",
)
def command(
    listen: str, upstream: str, tls_dir: Path, watch_listen: str | None, watch_upstream: str | None
) -> None:
    """Forward plain connections on the pod's loopback to etcd over mutual TLS (and, with
    ``--watch-listen``, the runtime's connections to the namespace's proxy, watches kept open)."""
    _loopback(listen, "--listen")
    if watch_listen:
        _loopback(watch_listen, "--watch-listen")
        if not watch_upstream:
            raise click.BadParameter(
                "--watch-listen needs the etcd gRPC proxy's address (the pod's etcd-proxy, host:port)",
                param_hint="--watch-upstream",
            )
    setup_logging()
    asyncio.run(_serve(listen, upstream, tls_dir, watch_listen, watch_upstream))
