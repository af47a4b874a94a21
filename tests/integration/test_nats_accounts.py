"""The mechanics the per-namespace NATS design rests on (docs/security-network.md, "NATS: per-namespace
accounts"), checked against the nats-server the real node's NATS image is built from (the node tools'
``nats-server``, the chart's 2.10 line) before the design is built: the server configuration here is the
design's, written by this test, not yet by the chart or the operator.

* ``tls { verify_and_map: true }``: a client certificate whose subject is ``CN=ns:<namespace>`` (what
  ``pki.issue_client`` makes, as for etcd) logs in as the user of that name, in its namespace's account;
* accounts are separate subject spaces: a subscriber in ``team-a``'s account sees its own namespace's
  messages and none of ``team-b``'s on the same subject, and a JetStream stream of one account (the
  runtime keeps its KV buckets in streams) is not listed in the other's;
* no certificate, or a certificate whose namespace has no account yet, is refused;
* an account added to the included ``accounts.conf`` takes effect on ``SIGHUP`` (what the design's reloader
  sends), without dropping the connections already open.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import socket
import ssl
import subprocess
from pathlib import Path

import pytest
from dynamo_localcluster.cluster import REPO_ROOT, free_port
from dynamo_operator import pki
from support.natsproto import Nats, NatsError, refused
from support.poll import wait_for

pytestmark = pytest.mark.api

DAY = dt.timedelta(days=1)


def _nats_server() -> str:
    found = shutil.which("nats-server", path=str(REPO_ROOT / ".tools" / "node" / "bin"))
    if found is None:
        pytest.skip("no nats-server in .tools/node/bin (the node tools: `make node-tools`)")
    return found


def _accounts(namespaces: list[str]) -> str:
    """The design's accounts.conf: one account per graph namespace, its one user the certificate's DN."""
    blocks = [
        f'  ns-{ns}: {{ jetstream: enabled, users: [ {{ user: "CN=ns:{ns}" }} ] }}' for ns in namespaces
    ]
    return "accounts: {\n" + "\n".join(blocks) + "\n}\n"


class Server:
    def __init__(self, tmp: Path):
        self.tmp, self.port = tmp, free_port()
        self.ca, self.ca_key = pki.issue_ca(DAY, common_name="nats-ca")
        cert, key = pki.issue_serving(self.ca, self.ca_key, ["localhost", "127.0.0.1"], DAY)
        for name, data in (("ca.crt", self.ca), ("tls.crt", cert), ("tls.key", key)):
            (tmp / name).write_bytes(data)
        (tmp / "nats.conf").write_text(
            f"listen: 127.0.0.1:{self.port}\n"
            f'tls {{ cert_file: "{tmp / "tls.crt"}", key_file: "{tmp / "tls.key"}", '
            f'ca_file: "{tmp / "ca.crt"}", verify_and_map: true }}\n'
            f'jetstream: {{ store_dir: "{tmp / "js"}" }}\n'
            "include accounts.conf\n"
        )
        self.proc: subprocess.Popen | None = None

    def accounts(self, namespaces: list[str]) -> None:
        (self.tmp / "accounts.conf").write_text(_accounts(namespaces))

    def start(self) -> None:
        log = (self.tmp / "nats.log").open("w")
        cmd = [_nats_server(), "-c", str(self.tmp / "nats.conf")]
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=self.tmp)
        wait_for(lambda: self._answers(), 30, lambda: (self.tmp / "nats.log").read_text()[-2000:])

    def _answers(self) -> bool:
        """The server greets with its INFO (before any TLS)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                return sock.recv(5) == b"INFO "
        except OSError:
            return False

    def client(self, namespace: str, certificate: bool = True) -> Nats:
        ctx = ssl.create_default_context(cadata=self.ca.decode())
        if certificate:
            cert, key = pki.issue_client(self.ca, self.ca_key, f"ns:{namespace}", DAY)
            directory = self.tmp / f"client-{namespace}"
            directory.mkdir(exist_ok=True)
            (directory / "tls.crt").write_bytes(cert)
            fd = os.open(directory / "tls.key", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(key)
            ctx.load_cert_chain(directory / "tls.crt", directory / "tls.key")
        return Nats("127.0.0.1", self.port).connect(tls=ctx, server_name="localhost")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture
def server(tmp_path: Path):
    s = Server(tmp_path)
    s.accounts(["team-a", "team-b"])
    s.start()
    yield s
    s.stop()


def test_each_namespace_is_an_account_of_its_own(server: Server) -> None:
    with server.client("team-a") as a, server.client("team-a") as a2, server.client("team-b") as b:
        a.subscribe("namespace.dynamo.>")
        b.publish("namespace.dynamo.backend.generate", b"from team-b")
        a2.publish("namespace.dynamo.backend.generate", b"from team-a")
        got = a.messages(1.0)
    assert got == [("namespace.dynamo.backend.generate", b"from team-a")], got  # team-b's never arrives
    with server.client("team-a") as a, server.client("team-b") as b:  # JetStream (the runtime's KV) too
        made = a.request("$JS.API.STREAM.CREATE.KV_team", {"name": "KV_team", "subjects": ["$KV.team.>"]})
        assert "error" not in made, made
        assert a.request("$JS.API.STREAM.NAMES", b"").get("streams") == ["KV_team"]
        assert not b.request("$JS.API.STREAM.NAMES", b"").get("streams")
    assert refused(lambda: server.client("none", certificate=False))
    assert refused(lambda: server.client("team-c"))  # no account yet


def test_an_account_added_by_reload_keeps_the_open_connections(server: Server) -> None:
    with server.client("team-a") as a:
        a.subscribe("namespace.>")
        server.accounts(["team-a", "team-b", "team-c"])
        assert server.proc is not None
        server.proc.send_signal(signal.SIGHUP)

        def joined() -> bool:
            try:
                server.client("team-c").close()
            except NatsError:
                return False
            return True

        wait_for(joined, 20, lambda: (server.tmp / "nats.log").read_text()[-2000:])
        a.ping()  # the connection opened before the reload is still there
        with server.client("team-a") as a2:
            a2.publish("namespace.x", b"after the reload")
        assert a.messages(1.0) == [("namespace.x", b"after the reload")]
