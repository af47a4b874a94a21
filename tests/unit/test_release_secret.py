"""``controllers.common.release_secret``: how the MPI-key and etcd-client controllers let go of a namespace's
Secret (one owner reference per graph) on a dict client."""

from __future__ import annotations

import copy
from types import SimpleNamespace

from dynamo_operator.controllers.common import release_secret
from dynamo_operator.controllers.sync import RecentWrites
from dynamo_operator.runtime.client import SECRETS
from support.fakecerts import FakeClient


def owned_by(client: FakeClient, *uids: str) -> dict:
    refs = [{"kind": "DynamoGraphDeployment", "name": u, "uid": u} for u in uids]
    body = {"metadata": {"name": "s", "namespace": "ns", "ownerReferences": refs}, "type": "Opaque"}
    return client.create(SECRETS, body, "ns")


def test_a_graph_among_others_drops_its_reference_and_the_secret_stays():
    client = FakeClient()
    have = owned_by(client, "g1", "g2")
    deps = SimpleNamespace(client=client, recent=RecentWrites())
    assert release_secret(deps, have, "g1") is False
    refs = client.get(SECRETS, "s", "ns")["metadata"]["ownerReferences"]
    assert [r["uid"] for r in refs] == ["g2"]


def test_the_last_graph_deletes_it_and_a_stranger_changes_nothing():
    client = FakeClient()
    have = owned_by(client, "g1")
    deps = SimpleNamespace(client=client, recent=RecentWrites())
    assert release_secret(deps, have, "other") is False and client.writes == [("create", "s")]
    assert release_secret(deps, have, "g1") is True
    assert ("secrets", "ns", "s") not in client.objs


def test_a_secret_made_again_meanwhile_is_not_deleted():
    """The delete is by uid: a Secret re-created since ``have`` was read (another uid) stays."""
    client = FakeClient()
    have = copy.deepcopy(owned_by(client, "g1"))
    client.objs[("secrets", "ns", "s")]["metadata"]["uid"] = "a-new-one"
    deps = SimpleNamespace(client=client, recent=RecentWrites())
    assert release_secret(deps, have, "g1") is False
    assert ("secrets", "ns", "s") in client.objs
