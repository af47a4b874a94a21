"""The real node's custom metrics pipeline, the parts that need no node (realnode/metrics.py): what Prometheus
is told to scrape (the target file its discovery writes), and the API server's front proxy for aggregated APIs
(cluster._aggregation_args)."""

from __future__ import annotations

from pathlib import Path

from cryptography import x509
from dynamo_localcluster import pki as pki_mod
from dynamo_localcluster.cluster import LocalCluster
from dynamo_localcluster.realnode.metrics import prometheus_config, targets


def pod(name: str, ip: str | None, ports: dict[str, int], deleting: bool = False) -> dict:
    meta = {"name": name, "namespace": "scale-1"}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-04T09:00:00Z"
    container = {"name": "main", "ports": [{"name": n, "containerPort": p} for n, p in ports.items()]}
    return {"metadata": meta, "spec": {"containers": [container]}, "status": {"podIP": ip} if ip else {}}


def test_prometheus_scrapes_the_target_file_the_discovery_writes(tmp_path):
    (job,) = prometheus_config(tmp_path / "targets.json")["scrape_configs"]
    assert job["file_sd_configs"] == [{"files": [str(tmp_path / "targets.json")], "refresh_interval": "2s"}]
    assert "kubernetes_sd_configs" not in job  # Debian's Prometheus is built without it


def test_targets_are_the_system_and_http_ports_of_live_pods_labelled_with_namespace_and_pod():
    pods = [
        pod("worker-0", "10.85.0.7", {"system": 9090, "nixl": 19090}),
        pod("frontend-0", "10.85.0.8", {"http": 8000}),
        pod("pending-0", None, {"system": 9090}),  # no IP yet: nothing to scrape
        pod("leaving-0", "10.85.0.9", {"system": 9090}, deleting=True),
        pod("other-0", "10.85.0.10", {"metrics": 8080}),  # no port of ours
    ]
    assert targets(pods) == [
        {"targets": ["10.85.0.7:9090"], "labels": {"namespace": "scale-1", "pod": "worker-0"}},
        {"targets": ["10.85.0.8:8000"], "labels": {"namespace": "scale-1", "pod": "frontend-0"}},
    ]


def test_the_front_proxy_certificate_is_a_client_certificate_of_the_cluster_ca_named_as_allowed(tmp_path):
    pki = pki_mod.generate(tmp_path / "pki")
    args = dict(a.removeprefix("--").split("=", 1) for a in LocalCluster._aggregation_args(pki))
    assert args["requestheader-client-ca-file"] == str(pki.ca_crt)
    assert args["requestheader-allowed-names"] == "front-proxy-client"
    cert = x509.load_pem_x509_certificate(Path(args["proxy-client-cert-file"]).read_bytes())
    assert cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value == "front-proxy-client"
    ca = x509.load_pem_x509_certificate(pki.ca_crt.read_bytes())
    assert cert.issuer == ca.subject
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [x509.ExtendedKeyUsageOID.CLIENT_AUTH]
