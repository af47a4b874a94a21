"""Admission latency at a sustained request rate: straight to the operator's webhook server (one
AdmissionReview per request over keep-alive TLS connections) and through the real apiserver (dry-run
creates of a DynamoGraphDeployment, which the apiserver sends through the mutating and validating
webhooks)."""

from __future__ import annotations

import copy
import http.client
import json
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from dynamo_localcluster.webhooks import url_webhook, webhook_configuration
from dynamo_operator.api import registry
from dynamo_operator.runtime.client import ResourceClient, custom
from dynamo_operator.webhooks import admission_path

from .graphs import graph

KIND = "DynamoGraphDeployment"
VERSION = "v1beta1"
DGD_V1BETA1 = custom(registry.GROUP, VERSION, registry.KINDS[KIND].plural, KIND)
CONFIGURATIONS = {
    "validatingwebhookconfigurations": custom(
        "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration", namespaced=False,
    ),
    "mutatingwebhookconfigurations": custom(
        "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration", namespaced=False,
    ),
}  # fmt: skip


def webhook_configurations(port: int, operator_namespace: str, namespace: str) -> list[tuple[str, dict]]:
    """(resource plural, body) of a validating and a mutating configuration for DGDs in ``namespace`` only,
    labelled so that the operator injects its CA bundle (as the chart's are)."""
    out = []
    for mode in ("validate", "mutate"):
        path = admission_path(mode, VERSION, KIND)
        hook = url_webhook(
            port, path, mode, KIND, VERSION, name=f"{mode}-dgd.bench.dynamo.nvidia.com", namespace=namespace
        )
        body = webhook_configuration(mode, f"dynamo-bench-{mode}", operator_namespace, [hook])
        out.append((body["kind"].lower() + "s", body))
    return out


def register(
    rc: ResourceClient, configurations: list[tuple[str, dict]], namespace: str, timeout: float = 60
) -> None:
    """Create the webhook ``configurations`` ((resource plural, body) pairs) and wait until the apiserver
    admits a dry-run DGD in ``namespace`` through them (a CA bundle injected, the server reachable)."""
    for plural, body in configurations:
        rc.create(CONFIGURATIONS[plural], body)
    probe = graph("probe", namespace)
    deadline = time.monotonic() + timeout
    while True:
        try:
            rc.request("POST", DGD_V1BETA1.base_path(namespace), [("dryRun", "All")], body=probe)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def review(namespace: str) -> bytes:
    """One AdmissionReview: a user creating the benchmark's graph."""
    obj = graph("admission", namespace)
    return json.dumps(
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": str(uuid.uuid4()),
                "kind": {"group": registry.GROUP, "version": VERSION, "kind": KIND},
                "resource": {
                    "group": registry.GROUP,
                    "version": VERSION,
                    "resource": registry.KINDS[KIND].plural,
                },
                "name": "admission",
                "namespace": namespace,
                "operation": "CREATE",
                "userInfo": {"username": "bench-user", "groups": ["system:authenticated"]},
                "object": obj,
                "oldObject": None,
                "dryRun": False,
            },
        }
    ).encode()


@dataclass
class Sample:
    """The raw latencies of one or more paced runs, summarised only at the end: rounds of two servers taken
    in turn are pooled per server before their percentiles are taken."""

    requests: int = 0
    elapsed: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, other: Sample) -> None:
        self.requests += other.requests
        self.elapsed += other.elapsed
        self.latencies.extend(other.latencies)
        self.errors.extend(other.errors)

    def summary(self) -> dict:
        lat = sorted(self.latencies)
        return {
            "requests": self.requests,
            "errors": len(self.errors),
            "first_error": self.errors[0] if self.errors else None,
            "achieved_rate": round(len(lat) / self.elapsed, 1) if self.elapsed > 0 else 0.0,
            "p50_ms": round(_pct(lat, 0.50) * 1000, 2),
            "p99_ms": round(_pct(lat, 0.99) * 1000, 2),
            "max_ms": round((lat[-1] if lat else 0.0) * 1000, 2),
        }


def paced(send: Callable[[], None], rate: float, seconds: float, threads: int) -> Sample:
    """Calls ``send`` ``rate`` times a second for ``seconds`` from ``threads`` threads (request i is due at
    start + i/rate); latency is measured from the moment the request was sent until its answer."""
    total = int(rate * seconds)
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    counter = iter(range(total))
    start = time.monotonic() + 0.2

    def worker() -> None:
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            due = start + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            t0 = time.perf_counter()
            try:
                send()
            except Exception as e:
                with lock:
                    errors.append(repr(e))
                continue
            dt = time.perf_counter() - t0
            with lock:
                lat.append(dt)

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return Sample(total, time.monotonic() - start, lat, errors)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(q * len(values)))]


def direct(port: int, namespace: str, rate: float, seconds: float, threads: int = 8) -> Sample:
    """Straight to the webhook server (validating path), one keep-alive TLS connection per thread."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = (
        ssl.CERT_NONE
    )  # the point is the server's latency, not the chain (the apiserver checks it)
    path = admission_path("validate", VERSION, KIND)
    body = review(namespace)
    local = threading.local()

    def send() -> None:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
        try:
            conn.request("POST", path, body, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
        except Exception:
            local.conn = None
            conn.close()
            raise
        if resp.status != 200 or not json.loads(data)["response"]["allowed"]:
            raise RuntimeError(f"webhook answered {resp.status}: {data[:200]!r}")

    return paced(send, rate, seconds, threads)


def through_apiserver(
    client: ResourceClient, namespace: str, rate: float, seconds: float, threads: int = 8
) -> Sample:
    """Dry-run creates through the apiserver (authn, authz, mutating + validating webhooks, no storage)."""
    base = graph("admission", namespace)  # v1beta1, the version the webhooks are registered for
    path = DGD_V1BETA1.base_path(namespace)

    def send() -> None:
        body = copy.deepcopy(base)
        body["metadata"]["name"] = f"adm-{uuid.uuid4().hex[:10]}"
        client.request("POST", path, [("dryRun", "All")], body=body)

    return paced(send, rate, seconds, threads)
