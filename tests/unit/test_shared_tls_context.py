"""One TLS context for all of a client's connections (``share_tls_context``), against a real HTTPS server on
loopback that asks for a client certificate: every connection is new (the server closes each), none builds a
context or reloads the CA and the client key, and verification still refuses what it refused before (a
server from another CA, a certificate for another host)."""

from __future__ import annotations

import datetime as dt
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import urllib3.connection
import yaml
from dynamo_operator.pki import issue_ca, issue_client, issue_serving
from dynamo_operator.runtime.client import CONFIGMAPS, ResourceClient, load_api_client, share_tls_context
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.exceptions import ApiException
from support.countingserver import CountingServer

DAY = dt.timedelta(days=1)


class _Server(CountingServer):
    def __init__(self, ctx: ssl.SSLContext) -> None:
        super().__init__(_Handler)
        self.socket = ctx.wrap_socket(self.socket, server_side=True)  # the handshake runs on accept
        self.client_names: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        peer = self.connection.getpeercert() or {}
        subject = peer.get("subject", ())
        self.server.client_names += [v for rdn in subject for k, v in rdn if k == "commonName"]
        out = json.dumps({"kind": "ConfigMap", "metadata": {"name": self.path.rsplit("/", 1)[-1]}}).encode()
        self.close_connection = True  # every request below opens a connection of its own
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args) -> None:
        pass


def _pki(tmp: Path, serving_host: str) -> dict[str, Path]:
    ca, ca_key = issue_ca(DAY)
    crt, key = issue_serving(ca, ca_key, [serving_host], DAY)
    cli, cli_key = issue_client(ca, ca_key, "tester", DAY)
    files = {"ca": ca, "crt": crt, "key": key, "cli": cli, "cli_key": cli_key}
    tmp.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, pem in files.items():
        (tmp / name).write_bytes(pem)
        out[name] = tmp / name
    return out


@pytest.fixture
def pki(tmp_path: Path) -> dict[str, Path]:
    return _pki(tmp_path / "pki", "127.0.0.1")


def _serve(pki: dict[str, Path]) -> Iterator[_Server]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki["crt"], pki["key"])
    ctx.load_verify_locations(pki["ca"])
    ctx.verify_mode = ssl.CERT_REQUIRED  # a client without the CA's client certificate is refused
    srv = _Server(ctx)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def server(pki: dict[str, Path]) -> Iterator[_Server]:
    yield from _serve(pki)


@pytest.fixture
def contexts_built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the contexts urllib3 builds for new connections (``create_urllib3_context`` as
    ``urllib3.connection`` calls it)."""
    built: list[int] = []
    real = urllib3.connection.create_urllib3_context

    def counting(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(urllib3.connection, "create_urllib3_context", counting)
    return built


def _kubeconfig(tmp: Path, port: int, pki: dict[str, Path]) -> Path:
    ca, cert, key, server = str(pki["ca"]), str(pki["cli"]), str(pki["cli_key"]), f"https://127.0.0.1:{port}"
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, "certificate-authority": ca}}],
        "users": [{"name": "u", "user": {"client-certificate": cert, "client-key": key}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp / "kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _config(port: int, pki: dict[str, Path]) -> Configuration:
    cfg = Configuration()
    cfg.host = f"https://127.0.0.1:{port}"
    cfg.ssl_ca_cert, cfg.cert_file, cfg.key_file = str(pki["ca"]), str(pki["cli"]), str(pki["cli_key"])
    cfg.retries = False
    return cfg


def test_new_connections_reuse_the_clients_one_context(
    tmp_path: Path, pki: dict[str, Path], server: _Server, contexts_built: list[int]
) -> None:
    api = load_api_client(str(_kubeconfig(tmp_path, server.server_address[1], pki)))
    client = ResourceClient(api, request_timeout=10)
    for i in range(5):
        assert client.get(CONFIGMAPS, f"cm-{i}", "default")["metadata"]["name"] == f"cm-{i}"
    assert server.connections == 5  # five handshakes, each with the client certificate
    assert server.client_names == ["tester"] * 5
    assert contexts_built == []


def test_without_it_urllib3_builds_a_context_per_connection(
    pki: dict[str, Path], server: _Server, contexts_built: list[int]
) -> None:
    """The negative control: the library's own client, untouched."""
    client = ResourceClient(ApiClient(_config(server.server_address[1], pki)), request_timeout=10)
    for i in range(3):
        client.get(CONFIGMAPS, f"cm-{i}", "default")
    assert server.connections == 3
    assert len(contexts_built) == 3


def test_it_is_idempotent(pki: dict[str, Path], server: _Server) -> None:
    api = ApiClient(_config(server.server_address[1], pki))
    share_tls_context(api)
    first = api.rest_client.pool_manager.connection_pool_kw["ssl_context"]
    share_tls_context(api)
    assert api.rest_client.pool_manager.connection_pool_kw["ssl_context"] is first


def test_a_server_of_another_ca_is_still_refused(tmp_path: Path, pki: dict[str, Path]) -> None:
    other = _pki(tmp_path / "other", "127.0.0.1")
    for srv in _serve(other):
        api = ApiClient(_config(srv.server_address[1], pki))
        share_tls_context(api)
        with pytest.raises(ApiException, match="CERTIFICATE_VERIFY_FAILED"):
            ResourceClient(api, request_timeout=10).get(CONFIGMAPS, "cm", "default")
        assert srv.client_names == []


def test_a_certificate_for_another_host_is_still_refused(tmp_path: Path) -> None:
    elsewhere = _pki(tmp_path / "elsewhere", "dynamo.example")
    for srv in _serve(elsewhere):
        api = ApiClient(_config(srv.server_address[1], elsewhere))
        share_tls_context(api)
        with pytest.raises(ApiException, match=r"not valid for .127\.0\.0\.1"):
            ResourceClient(api, request_timeout=10).get(CONFIGMAPS, "cm", "default")
        assert srv.client_names == []


def test_a_manager_gives_a_client_handed_to_it_its_pool_and_one_context(
    pki: dict[str, Path], server: _Server
) -> None:
    """A client built elsewhere (a test's, with the library's default of 5 a CPU) runs the manager's informers
    and workers: it gets the manager's pool size and the shared context, as the manager's own client does."""
    from dynamo_operator.runtime.manager import Manager
    from dynamo_operator.runtime.settings import RuntimeSettings

    api = ApiClient(_config(server.server_address[1], pki))
    settings = RuntimeSettings(metrics_bind_address="0", health_probe_bind_address="0", leader_elect=False)
    size = settings.tunables.connection_pool_size
    kw = api.rest_client.pool_manager.connection_pool_kw
    assert kw["maxsize"] != size and "ssl_context" not in kw
    Manager(settings, api)
    assert kw["maxsize"] == size and kw["ssl_context"] is not None
    ResourceClient(api, request_timeout=10).get(CONFIGMAPS, "cm", "default")
    pool = api.rest_client.pool_manager.connection_from_url(f"https://127.0.0.1:{server.server_address[1]}")
    assert pool.pool.maxsize == size and pool.num_connections == 1  # the pool the request above went through
