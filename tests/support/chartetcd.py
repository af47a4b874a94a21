"""The chart's bundled etcd run on loopback for tests: the test bed's pinned etcd binary (it reads the same
ETCD_* variables as the chart's v3.5 image and has the same ``grpc-proxy``) with exactly the environment
the rendered StatefulSet gives its container, addresses moved to free 127.0.0.1 ports and the server's
Secret written to a temporary directory. Used where the operator's per-namespace etcd access must meet a
real etcd (tests/integration/test_etcd_access.py, test_rbac_cluster.py).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from dynamo_localcluster.cluster import REPO_ROOT, free_port

from support.poll import wait_for


def etcd_binary() -> str:
    found = shutil.which("etcd", path=os.environ.get("DYNAMO_TOOLS_BIN") or str(REPO_ROOT / ".tools" / "bin"))
    if found is None:
        pytest.fail("no etcd in .tools/bin: run `make tools` (tools/build-tools.sh)")
    return found


def write_files(data: dict[str, str], directory: Path) -> dict[str, Path]:
    """A Secret's ``data`` as files (0600) in ``directory``, by key."""
    directory.mkdir(parents=True)
    out = {}
    for key, value in data.items():
        (directory / key).write_bytes(base64.b64decode(value))
        (directory / key).chmod(0o600)
        out[key] = directory / key
    return out


def etcd_env(sts: dict, tmp: Path, server: dict[str, Path], ports: dict[str, int]) -> dict:
    """The chart's container env with the pod's names, addresses and files replaced by loopback ones."""
    container = sts["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    client, peer, metrics = ports["client"], ports["peer"], ports["metrics"]
    scheme = env["ETCD_LISTEN_CLIENT_URLS"].split("://", 1)[0]
    env.update(
        ETCD_NAME="member-0",
        ETCD_DATA_DIR=str(tmp / "data"),
        ETCD_LISTEN_CLIENT_URLS=f"{scheme}://127.0.0.1:{client}",
        ETCD_ADVERTISE_CLIENT_URLS=f"{scheme}://127.0.0.1:{client}",
        ETCD_LISTEN_METRICS_URLS=f"http://127.0.0.1:{metrics}",
        ETCD_LISTEN_PEER_URLS=f"http://127.0.0.1:{peer}",
        ETCD_INITIAL_ADVERTISE_PEER_URLS=f"http://127.0.0.1:{peer}",
        ETCD_INITIAL_CLUSTER=f"member-0=http://127.0.0.1:{peer}",
        ETCD_CERT_FILE=str(server["tls.crt"]),
        ETCD_KEY_FILE=str(server["tls.key"]),
        ETCD_TRUSTED_CA_FILE=str(server["ca.crt"]),
    )
    if "jwt.key" in server:  # with RBAC: signed tokens, the key beside the server's certificate
        env["ETCD_AUTH_TOKEN"] = env["ETCD_AUTH_TOKEN"].replace(
            "/etc/etcd/tls/jwt.key", str(server["jwt.key"])
        )
    return {"PATH": os.environ.get("PATH", ""), **env}


class Processes:
    def __init__(self, tmp: Path):
        self.tmp, self.procs = tmp, []

    def start(self, name: str, cmd: list[str], env: dict | None = None) -> None:
        log = (self.tmp / f"{name}.log").open("w")
        self.procs.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT), log))

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text()[-3000:]

    def stop(self) -> None:
        for proc, log in reversed(self.procs):
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
            log.close()


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
            return json.loads(r.read()).get("health") == "true"
    except (OSError, ValueError):
        return False


@dataclass
class Served:
    port: int  # the client port (https, mutual TLS) on 127.0.0.1; the certificate names localhost
    procs: Processes
    env: dict  # the environment etcd was started with

    @property
    def address(self) -> str:
        return f"https://localhost:{self.port}"


@contextlib.contextmanager
def serve(sts: dict, server_tls: dict[str, str], tmp: Path) -> Iterator[Served]:
    """The etcd of the rendered StatefulSet ``sts`` with the data of its server Secret ``server_tls``."""
    tmp.mkdir(parents=True, exist_ok=True)
    server = write_files(server_tls, tmp / "server")
    ports = {"client": free_port(), "peer": free_port(), "metrics": free_port()}
    procs = Processes(tmp)
    env = etcd_env(sts, tmp, server, ports)
    procs.start("etcd", [etcd_binary()], env)
    try:
        # the health endpoint on the plain metrics port, as the chart's probes use it
        wait_for(lambda: healthy(ports["metrics"]), 30, lambda: procs.log("etcd"))
        yield Served(ports["client"], procs, env)
    finally:
        procs.stop()
