"""The generated CRDs (``crds/*.yaml``, the files the chart installs) on a local cluster."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.controllers import store
from dynamo_operator.runtime.client import ResourceClient, custom, load_api_client
from dynamo_operator.webhooks.certs import CRDS
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from support import yamlc
from support.poll import wait_for

CRD_DIR = REPO_ROOT / "crds"
# DGDs as v1beta1 on the wire (the served, non-storage version: every read and write goes through conversion)
DGD_BETA = custom(store.GROUP, "v1beta1", store.DGD.plural, store.DGD.kind)


def crd_docs() -> list[dict]:
    """crds/*.yaml exactly as generated."""
    return [yamlc.load(p.read_text()) for p in sorted(CRD_DIR.glob("*.yaml"))]


def established(rc: ResourceClient, name: str) -> bool:
    try:
        conditions = rc.get(CRDS, name).get("status", {}).get("conditions") or []
    except ApiException:
        return False
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def wait_established(api_client, name: str, timeout: float = 60) -> None:
    rc = ResourceClient(api_client)
    wait_for(
        lambda: established(rc, name),
        timeout,
        lambda: f"CRD {name} not Established after {timeout}s",
        interval=0.2,
    )


def _put_once(rc: ResourceClient, crd: dict) -> None:
    """Create ``crd``, or replace the live one with it whole. Not an apply: an apply merges with the
    fields other managers own (an earlier test's conversion webhook URL, patched in and restored), and the
    merge can be a CRD the apiserver refuses ("exactly one of url or service is required")."""
    name = crd["metadata"]["name"]
    for _ in range(5):
        try:
            live = rc.get(CRDS, name)
        except ApiException as e:
            if e.status != 404:
                raise
            rc.create(CRDS, crd)
            return
        body = {
            **crd,
            "metadata": {**crd["metadata"], "resourceVersion": live["metadata"]["resourceVersion"]},
        }
        try:
            rc.replace(CRDS, body)
            return
        except ApiException as e:
            if e.status != 409:
                raise
    raise AssertionError(f"CRD {name}: five conflicting replaces in a row")


def install_crds(cluster, timeout: float = 60) -> list[dict]:
    """Every generated CRD exactly as generated (``put_crd``: what an earlier test changed is put back),
    then wait until each one is Established."""
    docs = crd_docs()
    _put_all(cluster, docs, timeout)
    return docs


# What a loaded API server answers now and not a moment later: too many requests, etcd's "request timed
# out", a handler's deadline. A CRD's put is retried on those (a fixture's setup failed on one in CI).
TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})


def put_crd(rc: ResourceClient, crd: dict, timeout: float = 60) -> None:
    """``_put_once``, tried again on a transient answer or a dropped connection until ``timeout``; any other
    refusal is raised at once."""
    errors: list[str] = []

    def attempt() -> bool:
        try:
            _put_once(rc, crd)
        except ApiException as e:
            if e.status not in TRANSIENT_STATUSES:
                raise
            errors.append(f"{e.status} {e.reason}: {str(e.body)[:300]}")
            return False
        except (HTTPError, OSError) as e:
            errors.append(repr(e)[:300])
            return False
        return True

    wait_for(
        attempt, timeout, lambda: f"CRD {crd['metadata']['name']} put; answers: {errors[-3:]}", interval=0.5
    )


def _put_all(cluster, docs: list[dict], timeout: float) -> None:
    api_client = cluster.api_client()
    rc = ResourceClient(api_client)
    for doc in docs:
        put_crd(rc, doc, timeout)
    for doc in docs:
        wait_established(api_client, doc["metadata"]["name"], timeout)


# The LeaderWorkerSet API (CRD only, for tests: its controller's image is not reachable here); the real-node
# tier serves it before the operator starts, so multinode components render as LeaderWorkerSets.
LWS_CRD_FILES = sorted((REPO_ROOT / "tests/fixtures/crds/lws").glob("leaderworkerset*.yaml"))
# Third-party CRDs the platform vendors (Grove and Kai ship in their subcharts; LWS for tests only).
THIRD_PARTY_CRD_FILES = [
    *sorted((REPO_ROOT / "charts/platform/components/grove/crds").glob("*.yaml")),
    *sorted((REPO_ROOT / "charts/platform/components/kai-scheduler/crds").glob("*.yaml")),
    *LWS_CRD_FILES,
]
THIRD_PARTY_GROUPS = ("grove.io", "leaderworkerset.x-k8s.io", "scheduling.run.ai")


@functools.cache
def _crd_doc(path: Path) -> dict:
    return yamlc.load(path.read_text())


def third_party_crd_names() -> list[str]:
    return [_crd_doc(p)["metadata"]["name"] for p in THIRD_PARTY_CRD_FILES]


def install_third_party_crds(cluster, timeout: float = 60) -> list[str]:
    """Each vendored CRD put whole (a create or a replace: no last-applied annotation, which these are too
    large for), then Established."""
    _put_all(cluster, [_crd_doc(p) for p in THIRD_PARTY_CRD_FILES], timeout)
    return third_party_crd_names()


def _groups_served(api_client) -> list[str]:
    """The third-party API groups the apiserver's discovery still lists (a request, not a kubectl process:
    polled every half second while the groups go away)."""
    served = {g.name for g in k8s.ApisApi(api_client).get_api_versions().groups or []}
    return [g for g in THIRD_PARTY_GROUPS if g in served]


def remove_third_party_crds(env: dict, timeout: float = 90) -> None:
    """Delete the vendored third-party CRDs (Helm never removes a chart's crds/) and wait until their API
    groups are no longer served: operators started by later tests auto-detect Grove and LWS, and must find
    the shared cluster as it was. Deleted the way `helm dynamo uninstall --crds` deletes Dynamo's, so a
    finalizer stalled on a cold watch cache is re-queued rather than left for minutes."""
    from dynamo_hooks.cluster import connect
    from dynamo_hooks.crd_delete import delete_crds, describe_left

    cluster = connect(env["KUBECONFIG"])
    left = delete_crds(cluster, third_party_crd_names(), timeout)
    assert not left, f"CRDs still present {timeout}s after their deletion: {describe_left(cluster, left)}"
    api_client = load_api_client(env["KUBECONFIG"])
    wait_for(
        lambda: not _groups_served(api_client),
        timeout,
        lambda: f"API groups still served after deleting their CRDs: {_groups_served(api_client)}",
        interval=0.5,
    )


def serve_crds(cluster) -> Iterator[list[str]]:
    """Every generated CRD applied with its conversion served by the operator's own webhook server on
    127.0.0.1 (a self-signed CA in the caBundle); yields the CRD names and stops the server at the end."""
    import base64
    import datetime as dt

    from dynamo_operator.api import registry
    from dynamo_operator.pki import issue_ca, issue_serving
    from dynamo_operator.runtime.client import ResourceClient
    from dynamo_operator.webhooks.certs import TLSContextHolder
    from dynamo_operator.webhooks.server import AdmissionSettings, WebhookApp, WebhookServer

    client = ResourceClient(cluster.api_client())
    ca_crt, ca_key = issue_ca(dt.timedelta(days=1))
    crt, key = issue_serving(ca_crt, ca_key, ["127.0.0.1"], dt.timedelta(hours=12))
    tls = TLSContextHolder()
    tls.update(crt, key)
    server = WebhookServer(WebhookApp(AdmissionSettings()), host="127.0.0.1", port=0, tls=tls)
    server.start()
    conversion = {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "url": f"https://127.0.0.1:{server.port}{registry.CONVERSION_PATH}",
                "caBundle": base64.b64encode(ca_crt).decode(),
            },
        },
    }
    names = []
    for crd in crd_docs():
        if crd["spec"].get("conversion", {}).get("strategy") == "Webhook":
            crd["spec"]["conversion"] = conversion
        names.append(crd["metadata"]["name"])
        put_crd(client, crd)
    for name in names:
        wait_established(client.api_client, name, 60)
    try:
        yield names
    finally:
        server.stop()


# Optional integrations the operator detects (EPP's InferencePool, Istio's DestinationRule and
# VirtualService, served together as Istio serves them): vendored, minimal, installed only where a test
# wants the operator to see them.
INTEGRATION_CRD_FILES = [
    REPO_ROOT / "tests/fixtures/crds/gaie/inference.networking.k8s.io_inferencepools.yaml",
    REPO_ROOT / "tests/fixtures/crds/istio-destinationrule/networking.istio.io_destinationrules.yaml",
    REPO_ROOT / "tests/fixtures/crds/istio/networking.istio.io_virtualservices.yaml",
]


def install_integration_crds(cluster, timeout: float = 60) -> None:
    """The InferencePool and DestinationRule CRDs, put and Established."""
    _put_all(cluster, [_crd_doc(p) for p in INTEGRATION_CRD_FILES], timeout)
