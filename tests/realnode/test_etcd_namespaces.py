"""Each graph namespace's own etcd access, on the real node with the chart's defaults (the bundled etcd with
mutual TLS and RBAC; ``dynamo-operator.etcdAuth.method`` namespaceCertificate): two namespaces each run the
etcd-discovery mocker graph, and

* both answer a chat completion through their pods' sidecars, the runtime holding no credential at all
  (``ETCD_ENDPOINTS`` the pod's loopback proxy, no ``ETCD_AUTH_*``);
* etcd holds each graph's registrations under its namespace's root only (root's view, the operator's
  ``<release>-etcd-admin`` credentials);
* from this machine, through the etcd Service: a client without a certificate is refused at the
  handshake; ``team-a``'s certificate (its namespace's Secret, as the operator issued it) reads its own
  root and is refused ``team-b``'s, the top-level ``v1/`` and ``ns/``, and a write into ``team-b``'s.

tests/integration/test_etcd_access.py shows the same against a local etcd, with a namespace's removal.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from dynamo_localcluster.demo_real import ETCD_SERVICE_NAME, etcd_keys
from dynamo_operator.render import etcdaccess as ea
from realnode_helpers import (
    Platform,
    deploy,
    first_completion,
    is_completion,
    main_env,
    platform_service_ip,
    pod_list,
    scratch_namespace,
    start,
)
from support import etcdgrpc

ETCD = "dynamo-platform-etcd"
SECRET = "dynamo-etcd-client"  # etcdAuth.secretName's default
GRAPH = "mocker-etcd.yaml"


# started as soon as the platform is installed (conftest's ``platform``: realnode_helpers.start_ahead)
AHEAD = {"etcd-a": [GRAPH], "etcd-b": [GRAPH]}


@pytest.fixture(scope="module")
def team_a(platform: Platform):
    yield from scratch_namespace(platform, "etcd-a")


@pytest.fixture(scope="module")
def team_b(platform: Platform):
    yield from scratch_namespace(platform, "etcd-b")


def _client_tls(platform: Platform, ns: str, directory: Path) -> tuple[Path, Path, Path]:
    """The namespace's certificate files, from the Secret the operator wrote there."""
    secret = json.loads(platform.kubectl("get", "secret", SECRET, "-n", ns, "-o", "json"))
    assert secret["type"] == "kubernetes.io/tls", secret["type"]
    directory.mkdir(parents=True)
    files = []
    for key in ("ca.crt", "tls.crt", "tls.key"):
        (directory / key).write_bytes(base64.b64decode(secret["data"][key]))
        (directory / key).chmod(0o600)
        files.append(directory / key)
    return files[0], files[1], files[2]


def _graph_answers_without_credentials(platform: Platform, ns: str) -> None:
    name, _ = deploy(platform, ns, GRAPH)  # started in both namespaces first: one start-up minute, not two
    doc, _ = first_completion(platform, ns, name)
    assert is_completion(doc), doc
    for component in ("Frontend", "MockerWorker"):
        (pod,) = pod_list(platform, ns, component, name)
        env = main_env(pod)
        assert env["ETCD_ENDPOINTS"] == ea.PROXY_ADDRESS, env
        main = next(c for c in pod["spec"]["containers"] if c["name"] == "main")
        names = {e["name"] for e in main.get("env", [])}
        assert not [n for n in names if n.startswith("ETCD_AUTH")], names
        sidecars = [c["name"] for c in pod["spec"].get("initContainers") or []]
        assert {ea.TUNNEL_CONTAINER, ea.PROXY_CONTAINER} <= set(sidecars), sidecars


def test_each_namespace_reaches_only_its_own_keys(platform: Platform, team_a, team_b, tmp_path) -> None:
    for ns in (team_a, team_b):
        start(platform, ns, GRAPH)
    for ns in (team_a, team_b):
        _graph_answers_without_credentials(platform, ns)
    keys = etcd_keys(platform.cluster)
    for ns in (team_a, team_b):
        assert [k for k in keys if k.startswith(f"{ea.key_root(ns)}v1/instances/")], (ns, keys)
    assert not [k for k in keys if k.startswith("v1/")], keys  # nothing outside a namespace's root

    ip = platform_service_ip(platform, ETCD)
    url = f"https://{ETCD_SERVICE_NAME}:2379"
    a = _client_tls(platform, team_a, tmp_path / "team-a")
    anonymous = etcdgrpc.range_prefix(url, "ns/", (a[0],), connect_to=ip)
    assert anonymous.status is None, anonymous  # no gRPC answer at all: the handshake was refused
    own = etcdgrpc.range_prefix(url, ea.key_root(team_a), a, connect_to=ip)
    assert own.status == etcdgrpc.OK and own.keys(), own  # the negative control: the same path works
    for prefix in (ea.key_root(team_b), "v1/", "ns/"):
        denied = etcdgrpc.range_prefix(url, prefix, a, connect_to=ip)
        assert denied.status == etcdgrpc.PERMISSION_DENIED, (prefix, denied)
    forged = etcdgrpc.put(url, f"{ea.key_root(team_b)}v1/instances/forged", "{}", a, connect_to=ip)
    assert forged.status == etcdgrpc.PERMISSION_DENIED, forged
