"""The real node's custom metrics pipeline: Prometheus scrapes the Dynamo pods' own ``/metrics``, and
prometheus-adapter serves them as ``custom.metrics.k8s.io`` (an aggregated API), so a HorizontalPodAutoscaler
scales a component on what its workers really export (docs/scaling.md, "Autoscaling on Dynamo's metrics").

Both run as processes of the local cluster on this machine (``make node-tools`` builds them: Prometheus is
Debian's binary, prometheus-adapter is built from its Go module), like the control plane:

- Prometheus listens on 127.0.0.1 only and scrapes each container port named ``system`` or ``http`` of the
  pods of the given namespaces, at the pod's IP on the node's bridge (our own pods: the network rule holds).
  Debian builds Prometheus without its Kubernetes service discovery (``kubernetes_sd_configs``: "field not
  found in type config.ScrapeConfig"), so the pods are found here instead: a thread lists them through the
  API server every ``SCRAPE_SECONDS`` and writes them as a ``file_sd_configs`` target file, which Prometheus
  watches (``targets``: the same selection and ``namespace``/``pod`` labels its pod role would give);
- prometheus-adapter listens on the node's bridge address (the only non-loopback address an EndpointSlice
  may name), behind a Service without a selector and an ``APIService`` for ``custom.metrics.k8s.io``; the API
  server reaches it with its front-proxy certificate (``cluster._aggregation_args``), and it checks callers
  through the API server (TokenReview, SubjectAccessReview) with the admin kubeconfig.

``stop`` removes the APIService before the adapter goes: an aggregated API that no longer answers makes
API discovery fail, which blocks namespace deletion cluster-wide.
"""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
import subprocess
import threading
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .. import pki as pki_mod
from ..cluster import LocalCluster, free_port
from . import layout
from .preflight import node_bin

NAMESPACE = "custom-metrics"
SERVICE = "prometheus-adapter"
GROUP = "custom.metrics.k8s.io"
VERSIONS = ("v1beta2", "v1beta1")
SCRAPE_SECONDS = 2
PORT_NAMES = ("system", "http")


def prometheus_config(targets_file: Path) -> dict:
    """Scrape what ``targets_file`` names (``CustomMetrics._discover`` writes it), every few seconds."""
    return {
        "global": {"scrape_interval": f"{SCRAPE_SECONDS}s", "scrape_timeout": f"{SCRAPE_SECONDS}s"},
        "scrape_configs": [
            {
                "job_name": "dynamo-pods",
                "file_sd_configs": [{"files": [str(targets_file)], "refresh_interval": f"{SCRAPE_SECONDS}s"}],
            }
        ],
    }


def targets(pods: list[dict]) -> list[dict]:
    """``file_sd`` target groups for ``pods`` (API objects as dicts): each container port named ``system`` or
    ``http`` of a pod that has an IP and is not being deleted, labelled with its ``namespace`` and ``pod``
    (what the adapter's rules map to resources)."""
    groups = []
    for pod in pods:
        meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
        ip = status.get("podIP")
        if not ip or meta.get("deletionTimestamp"):
            continue
        ports = [
            p["containerPort"]
            for c in spec.get("containers") or []
            for p in c.get("ports") or []
            if p.get("name") in PORT_NAMES
        ]
        if ports:
            labels = {"namespace": meta.get("namespace", ""), "pod": meta.get("name", "")}
            groups.append({"targets": [f"{ip}:{port}" for port in sorted(ports)], "labels": labels})
    return groups


@dataclass
class CustomMetrics:
    """Prometheus and prometheus-adapter for ``namespaces``, with the adapter's ``rules`` (its config file's
    ``rules``: which series become which custom metrics)."""

    cluster: LocalCluster
    namespaces: list[str]
    rules: list[dict]
    ports: dict[str, int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def dir(self) -> Path:
        return self.cluster.dir / "custom-metrics"

    @property
    def prometheus_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['prometheus']}"

    @property
    def targets_file(self) -> Path:
        return self.dir / "targets.json"

    def start(self, timeout: float = 120.0) -> CustomMetrics:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._write_targets()
        self._thread = threading.Thread(target=self._discover, name="metrics-discovery", daemon=True)
        self._thread.start()
        self._start_prometheus(timeout)
        self._start_adapter(timeout)
        self._register()
        return self

    def _start_prometheus(self, timeout: float) -> None:
        cfg = self.dir / "prometheus.yml"
        cfg.write_text(yaml.safe_dump(prometheus_config(self.targets_file)))
        self.ports["prometheus"] = free_port()
        argv = [
            str(node_bin() / "prometheus"),
            f"--config.file={cfg}",
            f"--storage.tsdb.path={self.dir / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{self.ports['prometheus']}",
            "--storage.tsdb.retention.time=1h",
        ]
        ready = f"{self.prometheus_url}/-/ready"
        self.cluster.add_component("prometheus", argv, lambda: _get(ready), "Prometheus /-/ready", timeout)

    def _discover(self) -> None:
        """Prometheus's service discovery, which Debian's build lacks: the namespaces' pods, every scrape."""
        while not self._stop.wait(SCRAPE_SECONDS):
            with contextlib.suppress(Exception):  # a slow API server: the next round writes them
                self._write_targets()

    def _write_targets(self) -> None:
        pods = []
        for ns in self.namespaces:
            pods += json.loads(self._kubectl("get", "pods", "-n", ns, "-o", "json"))["items"]
        tmp = self.targets_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(targets(pods)))
        tmp.replace(self.targets_file)  # Prometheus never reads half a file

    def _start_adapter(self, timeout: float) -> None:
        pki = self.cluster.pki
        crt, key = pki_mod.issue(
            pki,
            "prometheus-adapter",
            "prometheus-adapter",
            server=True,
            dns=[f"{SERVICE}.{NAMESPACE}.svc"],
            ips=[layout.NODE_IP],
        )
        config = self.dir / "adapter.yaml"
        config.write_text(yaml.safe_dump({"rules": self.rules}))
        self.ports["adapter"] = free_port(layout.NODE_IP)
        kubeconfig = self.cluster.kubeconfig
        argv = [
            str(node_bin() / "prometheus-adapter"),
            f"--lister-kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            f"--prometheus-url={self.prometheus_url}",
            f"--config={config}",
            f"--bind-address={layout.NODE_IP}",
            f"--secure-port={self.ports['adapter']}",
            f"--tls-cert-file={crt}",
            f"--tls-private-key-file={key}",
            f"--cert-dir={self.dir / 'certs'}",
            "--metrics-relist-interval=5s",
            "--v=2",
        ]
        ctx = ssl.create_default_context(cafile=str(pki.ca_crt))
        url = f"https://{layout.NODE_IP}:{self.ports['adapter']}/readyz"
        self.cluster.add_component(
            "prometheus-adapter", argv, lambda: _get(url, ctx), "adapter /readyz", timeout
        )

    def _register(self) -> None:
        """The Service (no selector: its EndpointSlice names the adapter on the node's address) and the
        APIServices the API server forwards ``custom.metrics.k8s.io`` to."""
        ca = base64.b64encode(self.cluster.pki.ca_crt.read_bytes()).decode()
        port = self.ports["adapter"]
        docs: list[dict] = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": SERVICE, "namespace": NAMESPACE},
                "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]},
            },
            {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "name": SERVICE,
                    "namespace": NAMESPACE,
                    "labels": {"kubernetes.io/service-name": SERVICE},
                },
                "addressType": "IPv4",
                "endpoints": [{"addresses": [layout.NODE_IP], "conditions": {"ready": True}}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
            },
        ]
        docs += [
            {
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {"name": f"{version}.{GROUP}"},
                "spec": {
                    "group": GROUP,
                    "version": version,
                    "service": {"name": SERVICE, "namespace": NAMESPACE, "port": 443},
                    "caBundle": ca,
                    "groupPriorityMinimum": 100,
                    "versionPriority": 200 - i,
                },
            }
            for i, version in enumerate(VERSIONS)
        ]
        path = self.dir / "register.json"
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
        self._kubectl("apply", "-f", str(path))

    def available(self) -> bool:
        """Whether the API server reports the APIServices Available (it reached the adapter)."""
        out = self._kubectl("get", "apiservice", *(f"{v}.{GROUP}" for v in VERSIONS), "-o", "json")
        items = json.loads(out).get("items") or []
        return len(items) == len(VERSIONS) and all(
            any(
                c["type"] == "Available" and c["status"] == "True"
                for c in i.get("status", {}).get("conditions", [])
            )
            for i in items
        )

    def stop(self) -> None:
        """The APIServices first (an unanswering aggregated API breaks discovery), then the processes."""
        with contextlib.suppress(Exception):
            self._kubectl(
                "delete",
                "apiservice",
                *(f"{v}.{GROUP}" for v in VERSIONS),
                "--ignore-not-found",
                "--wait=true",
            )
        with contextlib.suppress(Exception):
            self._kubectl("delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=false")
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
        for name in ("prometheus-adapter", "prometheus"):
            with contextlib.suppress(Exception):
                self.cluster.remove_component(name)

    def _kubectl(self, *args: str) -> str:
        r = subprocess.run(
            ["kubectl", *args], env=self.cluster.env, capture_output=True, text=True, timeout=120
        )
        if r.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)} failed: {r.stderr}{r.stdout}")
        return r.stdout


def _get(url: str, ctx: ssl.SSLContext | None = None) -> bool:
    with urllib.request.urlopen(url, context=ctx, timeout=3) as r:
        return r.status == 200
