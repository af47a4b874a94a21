"""Each graph namespace's own NATS account, on the real node with the chart's defaults (the bundled NATS with
``nats.auth.method`` accounts; ``dynamo-operator.natsAuth.method`` namespaceAccount): two namespaces each
run the KV-router graph, whose workers publish their KV events over NATS and whose frontend's router
subscribes to them, and

* both answer a chat completion through the KV router, the Dynamo runtime 1.6.1 connected with its
  namespace's certificate as files (``NATS_SERVER`` ``tls://``, ``NATS_TLS_*`` paths, no credential value in
  its environment);
* NATS (``/connz?auth=1``) shows every connection of a namespace's pods logged in as that namespace's user in
  its own account, and the routes' KV-event subscriptions are there;
* from this machine, through the NATS Service: a client without a certificate is refused (the negative
  control: ``team-a``'s certificate, from its namespace's Secret, is accepted on the same path), and
  ``team-a``'s client sees none of ``team-b``'s messages.

tests/integration/test_nats_access.py shows the same server configuration against a local nats-server, with a
namespace joining by reload.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.request
from pathlib import Path

import pytest
from dynamo_localcluster.demo import RELEASE
from dynamo_operator.render import natsaccess as na
from realnode_helpers import (
    NATS_CLIENT_SECRET,
    NATS_SERVER_NAME,
    SLOW,
    Platform,
    chat_completion,
    deploy,
    first_completion,
    is_completion,
    main_env,
    nats_client_tls,
    platform_service_ip,
    pod_list,
    scratch_namespace,
)
from support.natsproto import Nats, NatsError
from support.poll import wait_for

NATS = f"{RELEASE}-nats"
GRAPH = "mocker-kv-router.yaml"


# started as soon as the platform is installed (conftest's ``platform``: realnode_helpers.start_ahead)
AHEAD = {"nats-a": [GRAPH], "nats-b": [GRAPH]}


@pytest.fixture(scope="module")
def team_a(platform: Platform):
    yield from scratch_namespace(platform, "nats-a")


@pytest.fixture(scope="module")
def team_b(platform: Platform):
    yield from scratch_namespace(platform, "nats-b")


def _monitor(platform: Platform, path: str) -> dict:
    with urllib.request.urlopen(f"http://{platform_service_ip(platform, NATS)}:8222{path}", timeout=10) as r:
        return json.loads(r.read())


def _graph_answers_over_its_account(platform: Platform, ns: str) -> str:
    name, _ = deploy(platform, ns, GRAPH)
    doc, url = first_completion(platform, ns, name)
    assert is_completion(doc), doc
    prompt = "The same long prefix, so the router sees the cache the first request left. " * 4
    for _ in range(2):
        assert is_completion(chat_completion(url, content=prompt)), "a completion through the KV router"
    for component in ("Frontend", "MockerWorker"):
        for pod in pod_list(platform, ns, component, name):
            env = main_env(pod)
            assert env["NATS_SERVER"] == f"tls://{NATS_SERVER_NAME}:4222", env
            assert env["NATS_TLS_CLIENT_CERT_PATH"] == f"{na.TLS_DIR}/tls.crt", env
            (main,) = [c for c in pod["spec"]["containers"] if c["name"] == "main"]
            refs = [e["name"] for e in main.get("env", []) if "valueFrom" in e and "NATS" in e["name"]]
            assert not refs, refs  # the certificate is files; no credential travels as a value
    return name


def test_each_namespace_talks_to_nats_in_its_own_account(
    platform: Platform, team_a, team_b, tmp_path
) -> None:
    for ns in (team_a, team_b):
        _graph_answers_over_its_account(platform, ns)

    def by_account() -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for c in _monitor(platform, "/connz?auth=1&subs=1")["connections"] or []:
            out.setdefault(c.get("account") or "", set()).add(c.get("authorized_user") or "")
        return out

    accounts = wait_for(
        lambda: (lambda got: got if {na.account_name(team_a), na.account_name(team_b)} <= set(got) else None)(
            by_account()
        ),
        60,
        "both namespaces' accounts connected",
        **SLOW,
    )
    for ns in (team_a, team_b):
        assert accounts[na.account_name(ns)] == {na.user_name(ns)}, accounts
    # every client connection is in a namespace's account (none in the global account: no anonymous user)
    assert not [a for a in accounts if not a.startswith("ns-")], accounts

    ip = platform_service_ip(platform, NATS)
    anonymous = ssl.create_default_context(cafile=str(_ca_file(platform, team_a, tmp_path)))
    try:
        Nats(ip, 4222).connect(tls=anonymous, server_name=NATS_SERVER_NAME).close()
        refused = False
    except (NatsError, ssl.SSLError, OSError):
        refused = True
    assert refused, "a client without a certificate connected"
    a = nats_client_tls(platform, team_a, tmp_path / "team-a")
    b = nats_client_tls(platform, team_b, tmp_path / "team-b")
    with (
        Nats(ip, 4222).connect(tls=a, server_name=NATS_SERVER_NAME) as ca,  # the negative control: same path
        Nats(ip, 4222).connect(tls=a, server_name=NATS_SERVER_NAME) as ca2,
        Nats(ip, 4222).connect(tls=b, server_name=NATS_SERVER_NAME) as cb,
    ):
        ca.subscribe("probe.>")
        cb.publish("probe.x", b"from team-b")
        ca2.publish("probe.x", b"from team-a")  # another connection: a publisher's own PING reads its echo
        assert ca.messages(1.0) == [("probe.x", b"from team-a")]


def _ca_file(platform: Platform, ns: str, tmp_path: Path) -> Path:
    secret = json.loads(platform.kubectl("get", "secret", NATS_CLIENT_SECRET, "-n", ns, "-o", "json"))
    path = tmp_path / "ca.crt"
    path.write_bytes(base64.b64decode(secret["data"]["ca.crt"]))
    return path
