"""`dynamo_hooks.crd_delete` on the local cluster: CRDs go in seconds, also when the API server's CRD
finalizer has stalled on a failed list of the CRD's objects (see the module's docstring)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import ssl
import tempfile
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from dynamo_hooks.cluster import CRD_API, CRDS, KubeCluster, object_path
from dynamo_hooks.crd_delete import RETRY_ANNOTATION, delete_crds, nudge, stalled
from dynamo_localcluster.cluster import free_port
from dynamo_operator.pki import issue_ca, issue_serving
from support.crds import wait_established
from support.crs import BackgroundServer
from support.poll import wait_for

pytestmark = [pytest.mark.cluster]


def _crd(group: str) -> dict:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": CRD_API,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}],
        },
    }


class ConversionServer(BackgroundServer):
    """A CRD conversion webhook on 127.0.0.1 that only relabels apiVersion (the schemas are open)."""

    def __init__(self, port: int, crt: bytes, key: bytes) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                req = review["request"]
                objs = [{**o, "apiVersion": req["desiredAPIVersion"]} for o in req["objects"]]
                review["response"] = {
                    "uid": req["uid"],
                    "convertedObjects": objs,
                    "result": {"status": "Success"},
                }
                del review["request"]
                data = json.dumps(review).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "tls.crt").write_bytes(crt)
            (Path(tmp) / "tls.key").write_bytes(key)
            ctx.load_cert_chain(Path(tmp) / "tls.crt", Path(tmp) / "tls.key")
        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        self._serve(server, f"conversion-{port}")


def test_fresh_crds_with_objects_are_deleted_and_leave_discovery(kube_cluster) -> None:
    kc = KubeCluster(kube_cluster.api_client())
    groups = [f"fresh-{uuid.uuid4().hex[:6]}.example.com" for _ in range(3)]
    for g in groups:
        kc.create(f"/apis/{CRD_API}/{CRDS}", _crd(g))
    for g in groups:
        wait_established(kube_cluster.api_client(), f"widgets.{g}")
        obj = {"apiVersion": f"{g}/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}}
        kc.create(f"/apis/{g}/v1/namespaces/default/widgets", obj)

    assert delete_crds(kc, [f"widgets.{g}" for g in groups] + ["widgets.absent.example.com"], 60) == []
    groups_served = {g["name"] for g in kc.get("/apis")["groups"]}
    assert not groups_served & set(groups)


def test_a_finalizer_stalled_on_a_failing_list_is_requeued_at_once(kube_cluster) -> None:
    """Objects stored at v1 behind a v2 storage version need the conversion webhook to be listed; with
    its server down the finalizer's list fails (Terminating: InstanceDeletionFailed) and it backs off.
    Once the server answers, `delete_crds` sees the CRD through: it warms the cache and re-queues the
    finalizer every few seconds instead of waiting out the back-off (which, by itself, took 1 to 21 s
    after the server came back in this test, and minutes for the vendored CRDs on a fresh server)."""
    kc = KubeCluster(kube_cluster.api_client())
    group = f"stall-{uuid.uuid4().hex[:6]}.example.com"
    name = f"widgets.{group}"
    path = object_path(CRD_API, CRDS, name)
    kc.create(f"/apis/{CRD_API}/{CRDS}", _crd(group))
    wait_established(kube_cluster.api_client(), name)
    obj = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}}
    kc.create(f"/apis/{group}/v1/namespaces/default/widgets", obj)

    port = free_port()
    ca_crt, ca_key = issue_ca(dt.timedelta(days=1))
    crt, key = issue_serving(ca_crt, ca_key, ["127.0.0.1"], dt.timedelta(hours=12))
    crd = kc.get(path)
    v1 = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = [{**v1, "storage": False}, {**v1, "name": "v2", "storage": True}]
    crd["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "url": f"https://127.0.0.1:{port}/convert",
                "caBundle": base64.b64encode(ca_crt).decode(),
            },
        },
    }
    kc.replace(path, crd)

    kc.delete(path)
    # The reason `stalled` looks for is the API server's own, and a terminating CRD takes the nudge.
    wait_for(lambda: stalled(kc.get(path) or {}), 30, lambda: kc.get(path), interval=0.2)
    assert nudge(kc, kc.get(path))
    assert RETRY_ANNOTATION in kc.get(path)["metadata"]["annotations"]

    logs: list[str] = []
    with ConversionServer(port, crt, key):
        started = time.monotonic()
        left = delete_crds(kc, [name], 60, log=logs.append)
        took = time.monotonic() - started
    assert left == [], (logs, kc.get(path))
    assert took < 15, f"{took:.1f}s: {logs}"
