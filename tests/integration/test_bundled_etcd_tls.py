"""The bundled etcd's mutual TLS, run for real: the test bed's pinned etcd binary (the chart ships the
v3.5 image; both read the same ETCD_* variables) started with exactly the ETCD_* settings and the
certificates ``helm template`` renders for ``ci/hardened-values.yaml`` (addresses moved to free 127.0.0.1
ports, files to a temporary directory). kwok runs no container, so this is where the chart's etcd
configuration meets an etcd. This is the shared certificate without RBAC (``etcd.auth.rbac.create=false``,
``dynamo-operator.etcdAuth.method=clientCertificate``); the default, a certificate and a key root per
namespace, is tests/integration/test_etcd_access.py.

* ``/health`` answers on the plain metrics port, which the chart's probes use;
* a client without a certificate is refused at the TLS handshake;
* a client with the workloads' Secret (``<release>-etcd-client-tls``: the CA and the client
  certificate the operator passes as ETCD_AUTH_CA / _CLIENT_CERT / _CLIENT_KEY) writes and reads a key,
  verifying the server certificate against that CA under the name ``localhost``.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT, free_port
from support.poll import wait_for

pytestmark = pytest.mark.api

CHART = REPO_ROOT / "charts" / "platform"
RELEASE, NAMESPACE = "dp", "dynamo-system"


def _etcd_binary() -> str:
    found = shutil.which("etcd", path=os.environ.get("DYNAMO_TOOLS_BIN") or str(REPO_ROOT / ".tools" / "bin"))
    if found is None:
        pytest.fail("no etcd in .tools/bin: run `make tools` (tools/build-tools.sh)")
    return found


def _render() -> list[dict]:
    r = subprocess.run(
        [
            "helm",
            "template",
            RELEASE,
            str(CHART),
            "-n",
            NAMESPACE,
            "--values",
            str(CHART / "ci" / "hardened-values.yaml"),
            "--set",
            "etcd.auth.rbac.create=false,dynamo-operator.etcdAuth.method=clientCertificate",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def _secret_files(doc: dict, directory: Path) -> dict[str, Path]:
    directory.mkdir()
    out = {}
    for key, value in doc["data"].items():
        path = directory / key
        path.write_bytes(base64.b64decode(value))
        path.chmod(0o600)
        out[key] = path
    return out


def _etcd_env(statefulset: dict, tmp: Path, server: dict[str, Path], ports: dict[str, int]) -> dict:
    """The chart's container env with the pod's names and addresses replaced by loopback ones."""
    container = statefulset["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"] if "value" in e}
    client, peer, metrics = ports["client"], ports["peer"], ports["metrics"]
    scheme = env["ETCD_LISTEN_CLIENT_URLS"].split("://", 1)[0]
    env.update(
        ETCD_NAME="member-0",
        ETCD_DATA_DIR=str(tmp / "data"),
        ETCD_LISTEN_CLIENT_URLS=f"{scheme}://127.0.0.1:{client}",
        ETCD_ADVERTISE_CLIENT_URLS=f"{scheme}://127.0.0.1:{client}",
        ETCD_LISTEN_METRICS_URLS=env["ETCD_LISTEN_METRICS_URLS"].replace(
            "0.0.0.0:2381", f"127.0.0.1:{metrics}"
        ),
        ETCD_LISTEN_PEER_URLS=f"http://127.0.0.1:{peer}",
        ETCD_INITIAL_ADVERTISE_PEER_URLS=f"http://127.0.0.1:{peer}",
        ETCD_INITIAL_CLUSTER=f"member-0=http://127.0.0.1:{peer}",
        ETCD_CERT_FILE=str(server["tls.crt"]),
        ETCD_KEY_FILE=str(server["tls.key"]),
        ETCD_TRUSTED_CA_FILE=str(server["ca.crt"]),
    )
    return {"PATH": os.environ.get("PATH", ""), **env}


def _post(url: str, body: dict, context: ssl.SSLContext) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=5, context=context) as r:
        return json.loads(r.read())


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_bundled_etcd_serves_mutual_tls_with_the_charts_certificates(tmp_path):
    docs = _render()
    (sts,) = [d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"] == f"{RELEASE}-etcd"]
    secrets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Secret"}
    server = _secret_files(secrets[f"{RELEASE}-etcd-server-tls"], tmp_path / "server")
    workload = _secret_files(secrets[f"{RELEASE}-etcd-client-tls"], tmp_path / "client")
    ports = {"client": free_port(), "peer": free_port(), "metrics": free_port()}
    env = _etcd_env(sts, tmp_path, server, ports)
    assert env["ETCD_CLIENT_CERT_AUTH"] == "true" and env["ETCD_LISTEN_CLIENT_URLS"].startswith("https://")
    log = (tmp_path / "etcd.log").open("w")
    proc = subprocess.Popen([_etcd_binary()], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        health = f"http://127.0.0.1:{ports['metrics']}/health"

        def healthy() -> bool:
            try:
                with urllib.request.urlopen(health, timeout=2) as r:
                    return r.status == 200 and json.loads(r.read()).get("health") == "true"
            except (OSError, ValueError):
                return False

        wait_for(healthy, 30, lambda: (tmp_path / "etcd.log").read_text()[-3000:])
        base = f"https://localhost:{ports['client']}"
        # no client certificate: refused during the handshake
        anonymous = ssl.create_default_context(cafile=str(workload["ca.crt"]))
        with pytest.raises((ssl.SSLError, urllib.error.URLError, ConnectionError)):
            _post(f"{base}/v3/kv/range", {"key": _b64("k")}, anonymous)
        # the workloads' Secret: the server verifies against its CA, the client certificate is accepted
        workload_ctx = ssl.create_default_context(cafile=str(workload["ca.crt"]))
        workload_ctx.load_cert_chain(str(workload["tls.crt"]), str(workload["tls.key"]))
        _post(f"{base}/v3/kv/put", {"key": _b64("dynamo"), "value": _b64("ok")}, workload_ctx)
        got = _post(f"{base}/v3/kv/range", {"key": _b64("dynamo")}, workload_ctx)
        assert base64.b64decode(got["kvs"][0]["value"]) == b"ok"
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()
