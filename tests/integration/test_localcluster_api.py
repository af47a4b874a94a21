"""The 'api' profile is a real apiserver: CRDs establish, custom objects persist, watches deliver."""

from __future__ import annotations

import threading

import pytest
from kubernetes import client, watch
from support.poll import wait_for

pytestmark = pytest.mark.api

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.smoke.example.com"},
    "spec": {
        "group": "smoke.example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {"size": {"type": "integer", "minimum": 1}},
                            }
                        },
                    }
                },
            }
        ],
    },
}


def _established(ext: client.ApiextensionsV1Api, name: str) -> bool:
    crd = ext.read_custom_resource_definition(name)
    return any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or [])


def test_version_is_stamped(api_cluster):
    info = client.VersionApi(api_cluster.api_client()).get_code()
    assert info.git_version.startswith("v1.36."), info.git_version
    assert (info.major, info.minor) == ("1", "36")


def test_crd_object_and_watch(api_cluster):
    api = api_cluster.api_client()
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(CRD)
    wait_for(lambda: _established(ext, CRD["metadata"]["name"]), 30, "the Widget CRD Established")
    co = client.CustomObjectsApi(api)

    seen: list[tuple[str, str]] = []
    # watching from the list's resourceVersion, the watch gets every later event whenever it connects
    listed = co.list_namespaced_custom_object("smoke.example.com", "v1", "default", "widgets")
    since = listed["metadata"]["resourceVersion"]

    def watcher() -> None:
        w = watch.Watch()
        for ev in w.stream(
            co.list_namespaced_custom_object,
            "smoke.example.com",
            "v1",
            "default",
            "widgets",
            resource_version=since,
            timeout_seconds=20,
        ):
            seen.append((ev["type"], ev["object"]["metadata"]["name"]))
            if ev["type"] == "DELETED":
                w.stop()

    t = threading.Thread(target=watcher, daemon=True)
    t.start()
    body = {
        "apiVersion": "smoke.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w1"},
        "spec": {"size": 3},
    }
    co.create_namespaced_custom_object("smoke.example.com", "v1", "default", "widgets", body)
    co.patch_namespaced_custom_object(
        "smoke.example.com", "v1", "default", "widgets", "w1", {"spec": {"size": 4}}
    )
    co.delete_namespaced_custom_object("smoke.example.com", "v1", "default", "widgets", "w1")
    t.join(25)
    assert ("ADDED", "w1") in seen and ("MODIFIED", "w1") in seen and ("DELETED", "w1") in seen, seen

    # The schema is enforced by the real apiserver, not by us.
    bad = {**body, "metadata": {"name": "w2"}, "spec": {"size": 0}}
    with pytest.raises(client.ApiException) as e:
        co.create_namespaced_custom_object("smoke.example.com", "v1", "default", "widgets", bad)
    assert e.value.status == 422 and "spec.size" in e.value.body


def test_etcd_answers_only_the_api_servers_certificate(api_cluster):
    """A root kubelet runs beside this etcd on the real node; one that answered anyone on 127.0.0.1 (it did,
    over plain HTTP) let any local user write a privileged pod. Plain HTTP, TLS without a certificate and a
    certificate from the cluster's own CA (the kubelet's kind) are all refused; the API server's is served."""
    import ssl
    import urllib.error
    import urllib.request

    url = f"{api_cluster.etcd_url}/v3/kv/range"
    body = b'{"key": "L3JlZ2lzdHJ5"}'  # /registry: everything the cluster stores

    def post(target: str, ctx: ssl.SSLContext | None) -> int:
        req = urllib.request.Request(target, data=body, method="POST")
        with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
            return r.status

    with pytest.raises((urllib.error.URLError, ConnectionError)):
        post(url.replace("https://", "http://"), None)
    no_cert = ssl.create_default_context(cafile=str(api_cluster.pki.etcd_ca_crt))
    wrong_ca = ssl.create_default_context(cafile=str(api_cluster.pki.etcd_ca_crt))
    wrong_ca.load_cert_chain(str(api_cluster.pki.admin_crt), str(api_cluster.pki.admin_key))  # system:masters
    for ctx in (no_cert, wrong_ca):
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            post(url, ctx)
    assert post(url, api_cluster.etcd_tls()) == 200
