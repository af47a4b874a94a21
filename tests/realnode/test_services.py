"""The bundled NATS and etcd run for real (the chart's defaults: on, with persistence), from the images built
here from their Go modules, on claims the node's local-path-provisioner binds; NATS's JetStream data
survives deleting its pod. (etcd's data surviving its pod's deletion is proven with the bundled graphs'
etcd deletion, ``test_bundled_graphs.py``: one restart for both; a claim nobody can serve:
``test_storage_claims.py``.)"""

from __future__ import annotations

import json
import time
import uuid

import pytest
from dynamo_localcluster.realnode import layout, storage
from realnode_helpers import (
    NAMESPACE,
    NATS_SERVER_NAME,
    SLOW,
    config_digest,
    deploy,
    nats_client_tls,
    platform_service_ip,
    pod_ready,
    scratch_namespace,
)
from support.natsproto import Nats
from support.poll import wait_for

RELEASE = "dynamo-platform"
SERVICES = {"nats": f"{RELEASE}-nats", "etcd": f"{RELEASE}-etcd"}


def _pod(platform, name: str) -> dict:
    return json.loads(platform.kubectl("get", "pod", name, "-n", NAMESPACE, "-o", "json"))


def _restart(platform, pod_name: str) -> float:
    """Deletes the pod, waits for its StatefulSet's replacement (same name, new UID) to be Ready; seconds."""
    old = _pod(platform, pod_name)["metadata"]["uid"]
    started = time.monotonic()
    platform.kubectl("delete", "pod", pod_name, "-n", NAMESPACE, "--wait=false")

    def replaced() -> bool:
        pod = _pod(platform, pod_name)
        return pod["metadata"]["uid"] != old and pod_ready(pod)

    wait_for(replaced, 240, f"{pod_name} replaced and Ready", **SLOW)
    return time.monotonic() - started


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_the_bundled_service_runs_from_our_image_on_a_bound_claim(platform, service):
    from dynamo_localcluster.realnode.node import built_image

    pod = _pod(platform, f"{SERVICES[service]}-0")
    assert pod["spec"]["nodeName"] == layout.NODE_NAME
    # the server's container (NATS's pod also runs the accounts reloader, from the operator's image)
    (status,) = [s for s in pod["status"]["containerStatuses"] if s["name"] == service]
    assert status["ready"] and status["restartCount"] == 0, status
    assert status["imageID"] == config_digest(built_image(service)), status["imageID"]
    claim = json.loads(
        platform.kubectl("get", "pvc", f"data-{SERVICES[service]}-0", "-n", NAMESPACE, "-o", "json")
    )
    assert claim["status"]["phase"] == "Bound", claim["status"]
    assert claim["spec"]["storageClassName"] == storage.STORAGE_CLASS  # the default class, set by admission
    volume = json.loads(platform.kubectl("get", "pv", claim["spec"]["volumeName"], "-o", "json"))
    assert volume["spec"]["hostPath"]["path"].startswith(str(storage.STORAGE_DIR)), volume["spec"]


# a graph, so that the operator gives its namespace a NATS account (started with the platform: AHEAD)
AHEAD = {"jetstream": ["mocker-agg.yaml"]}


@pytest.fixture(scope="module")
def account_ns(platform):
    yield from scratch_namespace(platform, "jetstream")


def test_nats_jetstream_data_survives_deleting_its_pod(platform, account_ns, tmp_path):
    """In a graph namespace's own account (the chart's default: a client logs in with its namespace's
    certificate; JetStream is on in every namespace's account), a stream written before the pod's deletion
    is listed with its message after: the server's store and the accounts file both outlive the pod."""
    deploy(platform, account_ns, "mocker-agg.yaml")  # its pods connected: the account is served
    host = platform_service_ip(platform, SERVICES["nats"])
    tls = nats_client_tls(platform, account_ns, tmp_path / "tls")

    def connect() -> Nats:
        return Nats(host).connect(tls=tls, server_name=NATS_SERVER_NAME)

    stream = f"REALNODE{uuid.uuid4().hex[:8].upper()}"
    with connect() as nc:
        made = nc.request(f"$JS.API.STREAM.CREATE.{stream}", {"name": stream, "subjects": [f"{stream}.>"]})
        assert made.get("config", {}).get("storage") == "file", made
        ack = nc.request(f"{stream}.one", b"kept across restarts")
        assert ack.get("stream") == stream and ack.get("seq") == 1, ack
    _restart(platform, f"{SERVICES['nats']}-0")

    def info() -> dict:
        with connect() as nc:
            return nc.request(f"$JS.API.STREAM.INFO.{stream}", b"")

    state = wait_for(lambda: info().get("state"), 120, "JetStream to list the stream again", **SLOW)
    assert state["messages"] == 1, state
