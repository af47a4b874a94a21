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
import ssl
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support import chart, chartetcd

pytestmark = pytest.mark.api

RELEASE, NAMESPACE = "dp", "dynamo-system"


def _render(tmp: Path) -> list[dict]:
    """``helm template`` with ci/hardened-values.yaml and the shared certificate without RBAC."""
    hardened = (chart.CHART / "ci" / "hardened-values.yaml").read_text()
    proc = chart.template(
        tmp, hardened, "etcd.auth.rbac.create=false", "dynamo-operator.etcdAuth.method=clientCertificate"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return chart.docs(proc)


def _post(url: str, body: dict, context: ssl.SSLContext) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=5, context=context) as r:
        return json.loads(r.read())


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_bundled_etcd_serves_mutual_tls_with_the_charts_certificates(tmp_path):
    docs = _render(tmp_path)
    (sts,) = [d for d in docs if d["kind"] == "StatefulSet" and d["metadata"]["name"] == f"{RELEASE}-etcd"]
    secrets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Secret"}
    workload = chartetcd.write_files(secrets[f"{RELEASE}-etcd-client-tls"]["data"], tmp_path / "client")
    with chartetcd.serve(sts, secrets[f"{RELEASE}-etcd-server-tls"]["data"], tmp_path) as etcd:
        env = etcd.env
        assert env["ETCD_CLIENT_CERT_AUTH"] == "true" and env["ETCD_LISTEN_CLIENT_URLS"].startswith(
            "https://"
        )
        # no client certificate: refused during the handshake
        anonymous = ssl.create_default_context(cafile=str(workload["ca.crt"]))
        with pytest.raises((ssl.SSLError, urllib.error.URLError, ConnectionError)):
            _post(f"{etcd.address}/v3/kv/range", {"key": _b64("k")}, anonymous)
        # the workloads' Secret: the server verifies against its CA, the client certificate is accepted
        workload_ctx = ssl.create_default_context(cafile=str(workload["ca.crt"]))
        workload_ctx.load_cert_chain(str(workload["tls.crt"]), str(workload["tls.key"]))
        _post(f"{etcd.address}/v3/kv/put", {"key": _b64("dynamo"), "value": _b64("ok")}, workload_ctx)
        got = _post(f"{etcd.address}/v3/kv/range", {"key": _b64("dynamo")}, workload_ctx)
        assert base64.b64decode(got["kvs"][0]["value"]) == b"ok"
