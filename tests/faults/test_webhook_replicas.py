"""Two operator replicas, as the chart now runs by default (issue 23, item 5): both serve the admission and
conversion webhooks and turn ready once they serve, the leader's and the other's alike; one holds the
leader Lease; when the leader goes, the other takes the Lease and keeps serving, and the API server's
admissions never stop.

A fresh control plane of its own (``bare_plane``): the URL webhook configurations point at replica A's
port, and each replica serves the one certificate the leader keeps in the Secret (every replica reads it).
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl

import pytest
from dynamo_localcluster.cluster import free_port
from dynamo_operator.runtime.client import SECRETS
from plane import LEASE, LEASE_NS, OPNS, Plane
from support.poll import wait_for
from support.processes import OperatorProcess, http_get, spawn_operator

pytestmark = [pytest.mark.api, pytest.mark.slow]

VALIDATE = "/validate-nvidia-com-v1beta1-dynamographdeployment"


def replica(plane: Plane, name: str, port: int) -> OperatorProcess:
    """``dynamo-operator run`` serving webhooks on ``port`` with leader election on short leases. The API
    server reaches replica A's port (the URL in the webhook configurations and, injected by whichever
    replica leads, in the CRDs' conversion), as it would reach the Service."""
    env = dict(plane.cluster.env, POD_NAMESPACE=OPNS, POD_NAME=name)
    proc = spawn_operator(
        plane.cluster,
        plane.logs / f"{name}.log",
        "--no-default-controllers",
        "--webhooks",
        "--leader-elect",
        "--leader-election-namespace",
        LEASE_NS,
        "--leader-elect-lease-duration",
        str(LEASE["duration"]),
        "--leader-elect-renew-deadline",
        str(LEASE["renew"]),
        "--leader-elect-retry-period",
        str(LEASE["retry"]),
        "--webhook-host",
        "127.0.0.1",
        "--webhook-port",
        str(port),
        "--webhook-url-base",
        f"https://127.0.0.1:{plane.webhook_port}",
        metrics=False,
        env=env,
    )
    proc.name = name
    plane.processes.append(proc)
    return proc


def review_allowed(port: int, ca: bytes) -> bool:
    """A direct AdmissionReview, verifying the server against the CA the Secret publishes (as the API
    server does through the Service)."""
    ctx = ssl.create_default_context(cadata=ca.decode())
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "operation": "DELETE",
            "kind": {"group": "nvidia.com", "version": "v1beta1", "kind": "DynamoGraphDeployment"},
        },
    }
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
    try:
        conn.request("POST", VALIDATE, json.dumps(body), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status == 200 and json.loads(resp.read())["response"]["allowed"] is True
    except (OSError, ValueError):
        return False
    finally:
        conn.close()


def ready(proc: OperatorProcess) -> bool:
    return http_get(f"http://127.0.0.1:{proc.health}/readyz")[0] == 200


def test_both_replicas_serve_webhooks_and_one_leads(bare_plane: Plane):
    plane = bare_plane
    b_port = free_port()
    b = replica(plane, "replica-b", b_port)  # first: it leads
    assert plane.wait_leader(60).startswith("replica-b"), plane.lease_holder()
    a = replica(plane, "replica-a", plane.webhook_port)
    wait_for(
        lambda: ready(a) and ready(b),
        90,
        lambda: f"not both ready:\n{a.log_tail()}\n{b.log_tail()}",
        interval=0.5,
    )
    assert plane.lease_holder().startswith("replica-b")  # A is ready without leading
    ca = base64.b64decode(plane.client.get(SECRETS, "webhook-server-cert", OPNS)["data"]["ca.crt"])
    assert review_allowed(b_port, ca) and review_allowed(plane.webhook_port, ca)
    # the API server's admissions and conversions go to A, which does not lead
    wait_for(plane.admission_works, 30, lambda: a.log_tail(), interval=0.5)

    # the leader goes: A takes the Lease and goes on serving; the API server's admissions never stop
    b.stop()
    wait_for(lambda: plane.lease_holder().startswith("replica-a"), 30, interval=0.2)
    assert ready(a) and review_allowed(plane.webhook_port, ca) and plane.admission_works()
