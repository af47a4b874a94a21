"""Which Events a pass of ``ChildSyncer.apply`` records: one ``SuccessfulCreate`` naming every child it
created, also when the pass fails part way (the children created before the failure exist and are named)."""

from __future__ import annotations

import pytest
from dynamo_operator.controllers.sync import REASON_CREATED, ChildSyncer
from dynamo_operator.render import names
from kubernetes.client.exceptions import ApiException

OWNER = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoComponentDeployment",
    "metadata": {"name": "g-frontend", "namespace": "ns", "uid": "u-1", "resourceVersion": "1"},
}


def config_map(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "annotations": {names.ANN_SPEC_HASH: "h"}},
        "data": {"k": name},
    }


class Client:
    """Creates succeed, except for the names in ``refuse``; nothing exists before."""

    def __init__(self, refuse: set[str] | None = None) -> None:
        self.refuse = refuse or set()
        self.created: list[str] = []

    def get(self, res, name, namespace=None):
        raise ApiException(status=404)

    def create(self, res, body, namespace=None):
        if body["metadata"]["name"] in self.refuse:
            raise ApiException(status=500, reason="etcd is unhappy")
        self.created.append(body["metadata"]["name"])
        return {**body, "metadata": {**body["metadata"], "uid": f"uid-{body['metadata']['name']}"}}


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def normal(self, obj, reason, message):
        self.events.append((obj["metadata"]["name"], reason, message))

    def warning(self, obj, reason, message):
        self.events.append((obj["metadata"]["name"], reason, message))


def test_one_event_names_every_child_a_pass_created():
    rec = Recorder()
    ChildSyncer(Client(), rec).apply(OWNER, [config_map("a"), config_map("b")])
    assert rec.events == [("g-frontend", REASON_CREATED, "Created ConfigMap ns/a, ConfigMap ns/b")]


def test_children_created_before_a_failure_are_announced():
    rec = Recorder()
    client = Client(refuse={"b"})
    with pytest.raises(ApiException):
        ChildSyncer(client, rec).apply(OWNER, [config_map("a"), config_map("b"), config_map("c")])
    assert client.created == ["a"]
    assert rec.events == [("g-frontend", REASON_CREATED, "Created ConfigMap ns/a")]


def test_a_quiet_pass_creates_without_an_event():
    rec = Recorder()
    client = Client()
    ChildSyncer(client, rec).apply(OWNER, [config_map("a")], announce=False)
    assert client.created == ["a"] and rec.events == []
