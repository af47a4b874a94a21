"""Graphs that use the platform's bundled etcd and NATS for real (the chart's defaults): one finds its worker
through etcd discovery, one routes with the KV-aware router fed by KV events over NATS; both answer a chat
completion. Deleting the etcd pod: the etcd-discovery graph answers again within a measured bound, and what
was written to etcd before is read after."""

from __future__ import annotations

import base64
import json
import time
import urllib.request
import uuid

import pytest
from dynamo_localcluster.demo import RELEASE
from dynamo_localcluster.demo_real import etcd_admin, etcd_keys
from dynamo_operator.render.etcdaccess import PROXY_ADDRESS, key_root
from realnode_helpers import (
    NAMESPACE,
    SLOW,
    Platform,
    chat_completion,
    deploy,
    first_completion,
    is_completion,
    main_env,
    main_log,
    platform_service_ip,
    pod_list,
    pod_ready,
    scratch_namespace,
    start,
)
from support.poll import wait_for

ETCD = f"{RELEASE}-etcd"  # the bundled etcd StatefulSet of the tier's release
NATS = "dynamo-platform-nats"
# The longest the etcd-discovery graph may go without answering while its etcd pod is deleted and replaced
# (measured: it keeps answering throughout, 0 s: the frontend routes from what it already discovered, the
# worker's lease outlives the ~10-20 s the replacement takes, its data on the claim; docs/realnode.md).
OUTAGE_BOUND_SECONDS = 15.0
# and how long after the replacement is Ready the graph is watched
WATCH_AFTER_SECONDS = 30.0


# started as soon as the platform is installed (conftest's ``platform``: realnode_helpers.start_ahead)
AHEAD = {"bundled": ["mocker-etcd.yaml", "mocker-kv-router.yaml"]}


@pytest.fixture(scope="module")
def graph_ns(platform: Platform):
    """Both graphs start at once (``start``): each test then waits for its own."""
    for ns in scratch_namespace(platform, "bundled"):
        start(platform, ns, "mocker-etcd.yaml", "mocker-kv-router.yaml")
        yield ns


def test_a_graph_finds_its_worker_through_the_bundled_etcd(platform, graph_ns):
    name, _ = deploy(platform, graph_ns, "mocker-etcd.yaml")
    doc, _ = first_completion(platform, graph_ns, name)
    assert is_completion(doc), doc
    (worker,) = pod_list(platform, graph_ns, "MockerWorker", name)
    env = main_env(worker)
    assert env["DYN_DISCOVERY_BACKEND"] == "etcd", env
    # the chart's defaults: the namespace's own etcd access through the pod's sidecars (test_etcd_namespaces)
    assert env["ETCD_ENDPOINTS"] == PROXY_ADDRESS, env
    # the worker's registration is in etcd (under its namespace's root and its Dynamo namespace), not in
    # DynamoWorkerMetadata
    keys = etcd_keys(platform.cluster)
    root = key_root(graph_ns)
    assert any(k.startswith(root) and env["DYN_NAMESPACE"] in k for k in keys), (env["DYN_NAMESPACE"], keys)
    dwm = json.loads(platform.kubectl("get", "dynamoworkermetadatas", "-n", graph_ns, "-o", "json"))["items"]
    assert not [d for d in dwm if d["metadata"]["name"].startswith(name)], dwm
    # the runtime's watches stay open on that path (the watch keeper, etcdwatch.py): etcd's gRPC proxy alone
    # ended each at once, and the runtime re-listed and re-watched in a loop, about 500 times a second
    for pod in (*pod_list(platform, graph_ns, "Frontend", name), worker):
        log = main_log(platform, graph_ns, pod["metadata"]["name"])
        ended = [line for line in log.splitlines() if "Error watching stream" in line]
        assert not ended, f"{pod['metadata']['name']}: {len(ended)} watches ended, e.g. {ended[:3]}"


def _nats_monitor(platform: Platform, path: str) -> dict:
    with urllib.request.urlopen(f"http://{platform_service_ip(platform, NATS)}:8222{path}", timeout=10) as r:
        return json.loads(r.read())


def test_the_kv_router_routes_on_kv_events_over_the_bundled_nats(platform, graph_ns):
    name, _ = deploy(platform, graph_ns, "mocker-kv-router.yaml")
    doc, url = first_completion(platform, graph_ns, name)
    assert is_completion(doc), doc
    (frontend,) = pod_list(platform, graph_ns, "Frontend", name)
    # the chart's defaults: the namespace's own NATS account over TLS (test_nats_namespaces)
    assert main_env(frontend)["NATS_SERVER"].startswith(f"tls://{NATS}."), main_env(frontend)
    before = _nats_monitor(platform, "/varz")["in_msgs"]
    prompt = "The same long prefix, so the router sees the cache the first request left. " * 4
    for _ in range(3):
        assert is_completion(chat_completion(url, content=prompt)), "a completion through the KV router"
    # the workers publish their KV events to NATS as they serve; the frontend's router subscribes to them
    wait_for(
        lambda: _nats_monitor(platform, "/varz")["in_msgs"] > before, 30, "KV events reaching NATS", **SLOW
    )
    subjects = [
        s["subject"]
        for c in _nats_monitor(platform, "/connz?subs=detail")["connections"] or []
        for s in c.get("subscriptions_list_detail") or []
    ]
    assert any("kv" in s.lower() for s in subjects), subjects


def _answers(url: str) -> bool:
    try:
        return is_completion(chat_completion(url, max_tokens=2))
    except Exception:
        return False


def test_deleting_the_etcd_pod_the_graph_keeps_answering(platform, graph_ns, record_property):
    """The graph is asked about once a second from the deletion until 30 s after the replacement etcd pod
    is Ready; the longest run of failed requests stays under the bound, and the worker is still registered
    in etcd (its data on the claim) and answers after. A key written through the etcd Service as root
    before the deletion (mutual TLS and RBAC are the chart's defaults: the operator's credentials,
    ``<release>-etcd-admin``) is read after: the store outlives the pod. One deletion proves both (each
    costs the tier a replacement's start), and it is the tier's only etcd restart."""
    name = "mocker-etcd"
    url = first_completion(platform, graph_ns, name)[1]
    admin = etcd_admin(platform.cluster)
    key, value = f"/realnode/{uuid.uuid4().hex}", uuid.uuid4().hex
    admin.call("/v3/kv/put", {"key": _b64(key), "value": _b64(value)})
    pod_name = f"{ETCD}-0"
    pod = json.loads(platform.kubectl("get", "pod", pod_name, "-n", NAMESPACE, "-o", "json"))
    old = pod["metadata"]["uid"]
    (worker,) = pod_list(platform, graph_ns, "MockerWorker", name)
    dyn_ns = main_env(worker)["DYN_NAMESPACE"]
    started = time.monotonic()
    platform.kubectl("delete", "pod", f"{ETCD}-0", "-n", NAMESPACE, "--wait=false")
    failing_since, longest, etcd_ready = None, 0.0, None

    def watched() -> bool:
        nonlocal failing_since, longest, etcd_ready
        now = time.monotonic()
        if _answers(url):
            failing_since = None
        else:
            failing_since = failing_since or now
            longest = max(longest, now - failing_since)
        if etcd_ready is None:
            replacement = json.loads(
                platform.kubectl("get", "pod", f"{ETCD}-0", "-n", NAMESPACE, "-o", "json")
            )
            if replacement["metadata"]["uid"] != old and pod_ready(replacement):
                etcd_ready = now - started
        return etcd_ready is not None and now - started > etcd_ready + WATCH_AFTER_SECONDS

    wait_for(watched, 300, "the etcd pod replaced and the graph watched after", **SLOW)
    record_property("etcd_pod_ready_seconds", round(etcd_ready or 0, 1))
    record_property("graph_longest_outage_seconds", round(longest, 1))
    assert longest <= OUTAGE_BOUND_SECONDS, f"the graph did not answer for {longest:.1f}s"
    keys = etcd_keys(platform.cluster)
    assert [k for k in keys if k.startswith(f"{key_root(graph_ns)}v1/instances/") and dyn_ns in k], (
        dyn_ns,
        keys,
    )
    (after,) = pod_list(platform, graph_ns, "MockerWorker", name)
    assert after["metadata"]["uid"] == worker["metadata"]["uid"] and pod_ready(after)
    assert _answers(url)
    kvs = wait_for(
        lambda: admin.call("/v3/kv/range", {"key": _b64(key)}).get("kvs"), 60, "etcd to answer", **SLOW
    )
    assert base64.b64decode(kvs[0]["value"]).decode() == value, kvs


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
