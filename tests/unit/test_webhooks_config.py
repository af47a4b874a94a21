"""What ``setup_webhooks`` takes from the OperatorConfiguration and what it does with it, in-process,
without a cluster: ``server.webhook.certDir`` is where a manual-mode replica reads the certificate it
serves, and ``security.enableHTTP2`` is accepted with a warning while the server keeps speaking HTTP/1.1
(the standard library has no HTTP/2 server)."""

from __future__ import annotations

import logging
import socket
import ssl

import pytest
from cryptography import x509
from dynamo_operator.runtime.settings import RuntimeSettings
from dynamo_operator.webhooks import setup_webhooks
from support.fakecerts import FakeManager, write_cert_dir

HTTP2_WARNING = "security.enableHTTP2 is set, but the webhook server speaks HTTP/1.1 only"


def test_cert_dir_is_where_a_manual_replica_reads_the_certificate_it_serves(tmp_path):
    chosen = tmp_path / "chosen"
    files = write_cert_dir(chosen, ["dynamo-operator-webhook-service.ns.svc"])
    config = {"server": {"webhook": {"certProvisionMode": "manual", "certDir": str(chosen)}}}

    wh = setup_webhooks(FakeManager(RuntimeSettings(pod_namespace="ns")), config, port=0)

    assert wh.certs.mode == "manual" and wh.certs.cert_dir == str(chosen)
    assert wh.certs.load() is True
    assert wh.tls.serial == x509.load_pem_x509_certificate(files["tls.crt"]).serial_number
    assert wh.certs.bundle == files["ca.crt"]
    empty = {"server": {"webhook": {"certProvisionMode": "manual", "certDir": str(tmp_path / "empty")}}}
    assert (
        setup_webhooks(FakeManager(RuntimeSettings(pod_namespace="ns")), empty, port=0).certs.load() is False
    )


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_enable_http2_is_accepted_with_a_warning_and_the_server_keeps_http1(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="webhook-server")
    setup_webhooks(
        FakeManager(RuntimeSettings(pod_namespace="ns")), {"security": {"enableHTTP2": False}}, port=0
    )
    assert HTTP2_WARNING not in caplog.text

    wh = setup_webhooks(
        FakeManager(RuntimeSettings(pod_namespace="ns")),
        {"security": {"enableHTTP2": True}},
        host="127.0.0.1",
        port=0,
    )

    assert HTTP2_WARNING in caplog.text
    assert wh.tls.enable_http2 is True
    files = write_cert_dir(tmp_path, ["127.0.0.1"])
    wh.tls.update(files["tls.crt"], files["tls.key"])
    wh.server.start()
    try:
        client = ssl.create_default_context(cadata=files["ca.crt"].decode())
        client.set_alpn_protocols(["h2", "http/1.1"])
        with (
            socket.create_connection(("127.0.0.1", wh.server.port), timeout=5) as raw,
            client.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            assert tls.selected_alpn_protocol() == "http/1.1"
    finally:
        wh.server.stop()


def test_host_port_mode_secret_and_service_come_from_the_configuration(monkeypatch):
    """``server.webhook.{host,port}`` are where the server listens, ``certProvisionMode`` and
    ``secretName`` what the certificate manager does and where it keeps the certificate, ``serviceName``
    the names the serving certificate is issued for. Nothing is started: the server is only built."""
    monkeypatch.delenv("METRICS_SERVICE_NAME", raising=False)
    webhook = {
        "host": "127.0.0.1",
        "port": 19443,
        "certProvisionMode": "auto",
        "secretName": "team-webhook-tls",
        "serviceName": "team-webhook",
    }
    manager = FakeManager(RuntimeSettings(pod_namespace="ns"))
    wh = setup_webhooks(manager, {"server": {"webhook": webhook}})
    assert (wh.server.host, wh.server.requested_port) == ("127.0.0.1", 19443)
    assert (wh.certs.mode, wh.certs.secret_name) == ("auto", "team-webhook-tls")
    assert "team-webhook.ns.svc" in wh.certs.hosts
    assert not [h for h in wh.certs.hosts if h.startswith("dynamo-operator-webhook")]
    with pytest.raises(ValueError, match="certProvisionMode is 'sometimes'"):
        setup_webhooks(manager, {"server": {"webhook": {**webhook, "certProvisionMode": "sometimes"}}})
