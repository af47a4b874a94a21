"""Per-namespace NATS accounts as built (docs/security-network.md), run against the real nats-server the real
node's NATS image is built from: the server configuration, its certificate and the accounts file are what
``helm template`` renders with the chart's **default** values (only the listen addresses and file paths
moved to loopback and a temporary directory); the accounts are what the operator's controller writes
(``NatsAccessSync`` on a dict client) and the client certificates what it issues into each namespace's
Secret, signed with the chart's ``<release>-nats-admin`` CA; the reload is ``dynamo-operator nats-reload``'s.

* a namespace's certificate logs in as its account's user (``/connz?auth=1``), over TLS to the Service's
  name the operator puts in ``NATS_SERVER``;
* another namespace's messages never reach it;
* no certificate is refused, and a certificate of a namespace without an account yet is refused until the
  controller lists it and the reloader signals the server; the connection opened before stays;
* an account added after the server read the file but before the reloader's first look (the two containers
  start side by side) is loaded all the same: the reloader signals the server once when it finds it.

tests/integration/test_nats_accounts.py checked the mechanics before this was built; the real node
(tests/realnode/test_nats_namespaces.py) runs graphs over it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT, free_port
from dynamo_operator.api.config import parse_operator_config
from dynamo_operator.controllers.natsaccess import NatsAccessSync, account_loaded
from dynamo_operator.controllers.sync import RecentWrites
from dynamo_operator.natsreload import watch
from dynamo_operator.render import RenderContext
from dynamo_operator.render import natsaccess as na
from dynamo_operator.runtime.client import CONFIGMAPS, SECRETS
from support import chart
from support.fakecerts import FakeClient
from support.natsproto import Nats, NatsError, refused
from support.poll import wait_for

pytestmark = pytest.mark.api

RELEASE, NAMESPACE = "dp", "dynamo-system"
SERVICE = f"{RELEASE}-nats.{NAMESPACE}.svc.cluster.local"
DGD = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment"}


def _nats_server() -> str:
    found = shutil.which("nats-server", path=str(REPO_ROOT / ".tools" / "node" / "bin"))
    if found is None:
        pytest.skip("no nats-server in .tools/node/bin (the node tools: `make node-tools`)")
    return found


class Recorder:
    def normal(self, obj: dict, reason: str, message: str) -> None:
        pass


class Bed:
    """The chart's NATS on loopback, and the operator's controller keeping its accounts file."""

    def __init__(self, tmp: Path):
        proc = chart.template(tmp)
        assert proc.returncode == 0, proc.stderr[-3000:]
        docs = chart.docs(proc)
        by = {(d["kind"], d["metadata"]["name"]): d for d in docs}
        self.tmp, self.port, self.monitor = tmp, free_port(), free_port()
        conf = by[("ConfigMap", f"{RELEASE}-nats-config")]["data"]["nats.conf"]
        (op_cm,) = [d for d in docs if d["kind"] == "ConfigMap" and "config.yaml" in (d.get("data") or {})]
        op_config = parse_operator_config(yaml.safe_load(op_cm["data"]["config.yaml"]))
        (cfg := tmp / "config").mkdir()
        tls = tmp / "tls"
        tls.mkdir()
        for key, value in by[("Secret", f"{RELEASE}-nats-server-tls")]["data"].items():
            (tls / key).write_bytes(base64.b64decode(value))
        conf = conf.replace("/etc/nats-tls", str(tls)).replace("/var/run/nats", str(tmp))
        conf = re.sub(r"^port: \d+", f"listen: 127.0.0.1:{self.port}", conf, flags=re.M)
        conf = re.sub(r"^http_port: \d+", f"http: 127.0.0.1:{self.monitor}", conf, flags=re.M)
        conf = conf.replace('"/data"', f'"{tmp / "js"}"').replace("$SERVER_NAME", "nats-0")
        (cfg / "nats.conf").write_text(conf)
        self.accounts_file = cfg / "accounts.conf"
        initial = by[("ConfigMap", f"{RELEASE}-nats-accounts")]
        self.accounts_file.write_text(initial["data"]["accounts.conf"])
        # the operator's side: the admin Secret and accounts ConfigMap as installed, on a dict client
        self.client = FakeClient()
        admin = by[("Secret", f"{RELEASE}-nats-admin")]
        self.ca = base64.b64decode(admin["data"]["ca.crt"])
        for res, obj in ((SECRETS, admin), (CONFIGMAPS, initial)):
            self.client.create(res, obj, NAMESPACE)
        deps = SimpleNamespace(
            client=self.client, recent=RecentWrites(), recorder=Recorder(), nats_clients=None
        )
        self.sync = NatsAccessSync(deps)
        self.ctx = RenderContext(operator_config=op_config)  # the chart's: natsAuth namespaceAccount
        assert na.enabled(self.ctx)
        self.proc: subprocess.Popen | None = None
        self.stop = threading.Event()

    def start(self) -> None:
        self.start_server()
        self.start_reloader()

    def start_server(self) -> None:
        log = (self.tmp / "nats.log").open("w")
        cmd = [_nats_server(), "-c", str(self.tmp / "config" / "nats.conf")]
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=self.tmp)
        wait_for(self._answers, 30, lambda: self.log())

    def start_reloader(self) -> None:
        """The reloader container: the mounted file (written by ``graph_in``), the server's pid file."""
        args = (self.accounts_file, self.tmp / "nats.pid", 0.2, self.stop)
        threading.Thread(target=watch, args=args, daemon=True).start()

    def log(self) -> str:
        return (self.tmp / "nats.log").read_text()[-3000:]

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                return sock.recv(5) == b"INFO "
        except OSError:
            return False

    def graph_in(self, namespace: str) -> None:
        """The controller's pass for a graph there; then the kubelet's part: the file as the ConfigMap."""
        dgd = {**DGD, "metadata": {"name": "g", "namespace": namespace, "uid": f"uid-{namespace}"}}
        self.sync.apply(dgd, {}, self.ctx)
        cm = self.client.get(CONFIGMAPS, f"{RELEASE}-nats-accounts", NAMESPACE)
        self.accounts_file.write_text(cm["data"]["accounts.conf"])

    def certificate(self, namespace: str) -> tuple[Path, Path, Path]:
        """The files a pod of ``namespace`` mounts, from the Secret the controller wrote there."""
        secret = self.client.get(SECRETS, na.secret_name(self.ctx), namespace)
        directory = self.tmp / f"client-{namespace}"
        directory.mkdir(exist_ok=True)
        paths = []
        for key in ("ca.crt", "tls.crt", "tls.key"):
            fd = os.open(directory / key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(base64.b64decode(secret["data"][key]))
            paths.append(directory / key)
        return paths[0], paths[1], paths[2]

    def client_of(self, files: tuple[Path, Path, Path] | None) -> Nats:
        ctx = ssl.create_default_context(
            cafile=str(files[0]) if files else None, cadata=None if files else self.ca.decode()
        )
        if files:
            ctx.load_cert_chain(files[1], files[2])
        return Nats("127.0.0.1", self.port).connect(tls=ctx, server_name=SERVICE)

    def admits(self, files: tuple[Path, Path, Path]) -> bool:
        """The server lets this certificate in (now)."""
        try:
            self.client_of(files).close()
        except (NatsError, ssl.SSLError, OSError):
            return False
        return True

    def connections(self) -> list[dict]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor}/connz?auth=1", timeout=5) as r:
            return json.loads(r.read())["connections"] or []

    def close(self) -> None:
        self.stop.set()
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture
def bed(tmp_path: Path):
    b = Bed(tmp_path)
    b.graph_in("team-a")
    b.graph_in("team-b")
    b.start()
    yield b
    b.close()


def test_each_namespace_logs_in_to_its_own_account(bed: Bed) -> None:
    a, b = bed.certificate("team-a"), bed.certificate("team-b")
    with bed.client_of(a) as ca, bed.client_of(a) as ca2, bed.client_of(b) as cb:
        ca.subscribe("namespace.dynamo.>")
        cb.publish("namespace.dynamo.backend.generate", b"from team-b")
        ca2.publish("namespace.dynamo.backend.generate", b"from team-a")
        got = ca.messages(1.0)
        seen = {(c.get("account"), c.get("authorized_user")) for c in bed.connections()}
    assert got == [("namespace.dynamo.backend.generate", b"from team-a")], got
    assert seen == {("ns-team-a", "CN=ns:team-a"), ("ns-team-b", "CN=ns:team-b")}, seen
    assert refused(lambda: bed.client_of(None)), "a client without a certificate"


def test_a_new_namespace_joins_by_reload_and_open_connections_stay(bed: Bed) -> None:
    a = bed.certificate("team-a")
    bed.sync.secrets.ensure(  # team-c's certificate issued before its account exists (the negative control)
        {**DGD, "metadata": {"name": "g", "namespace": "team-c", "uid": "uid-team-c"}},
        na.client_secret("team-c", bed.ctx),
        lambda: bed.client.get(SECRETS, f"{RELEASE}-nats-admin", NAMESPACE),
    )
    c = bed.certificate("team-c")
    assert refused(lambda: bed.client_of(c)), "no account for team-c yet"
    monitor = f"http://127.0.0.1:{bed.monitor}"
    assert account_loaded(monitor, "team-c") is False  # what holds the namespace's first pods back
    assert account_loaded(monitor, "team-a") is True
    assert account_loaded(f"http://127.0.0.1:{free_port()}", "team-a") is None  # no server: unknown
    with bed.client_of(a) as ca:
        ca.subscribe("namespace.>")
        bed.graph_in("team-c")  # the controller lists it; the reloader sees the file change

        wait_for(lambda: bed.admits(c), 20, bed.log)
        # /accountz answered 400 for team-c once just after its certificate was let in (make test, load
        # 18): the server's reload is not one step for its monitor, so the test waits as the operator does
        wait_for(lambda: account_loaded(monitor, "team-c") is True, 10, bed.log)
        assert "Reloaded server configuration" in bed.log()
        ca.ping()  # opened before the reload, still there
        with bed.client_of(a) as ca2:
            ca2.publish("namespace.x", b"after the reload")
        assert ca.messages(1.0) == [("namespace.x", b"after the reload")]


def test_an_account_listed_before_the_reloader_looks_is_loaded(tmp_path: Path) -> None:
    """team-c's account is written after the server read the file and before the reloader first reads it:
    the reloader sees no change from then on, so only its start-up ``SIGHUP`` loads the account (without
    it, team-c stays refused until some other namespace's change)."""
    bed = Bed(tmp_path)
    bed.graph_in("team-a")
    try:
        bed.start_server()
        bed.graph_in("team-c")  # the file changes; the server has not read it
        c = bed.certificate("team-c")
        assert refused(lambda: bed.client_of(c)), "the server has not loaded team-c's account yet"
        bed.start_reloader()

        wait_for(lambda: bed.admits(c), 20, bed.log)
        assert account_loaded(f"http://127.0.0.1:{bed.monitor}", "team-c") is True
        # the server applies a reload before it logs it: a client can be admitted in between (CI saw it)
        wait_for(lambda: "Reloaded server configuration" in bed.log(), 10, bed.log)
        assert bed.log().count("Reloaded server configuration") == 1, bed.log()
    finally:
        bed.close()
