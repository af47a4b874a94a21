"""The cleanup finalizer of automatic DynamoCheckpoints (``controllers/checkpoint_storage.CheckpointCleanup``)
on a dict client: a pass on a stale copy starts no Job that no checkpoint waits for."""

from __future__ import annotations

from dynamo_operator.controllers.checkpoint_storage import CheckpointCleanup
from dynamo_operator.controllers.lifecycle import CHECKPOINTS, FINALIZER, JOBS
from dynamo_operator.render.checkpoint_ids import LABEL_CHECKPOINT_ID
from dynamo_operator.render.graph_checkpoint import ANN_AUTO
from dynamo_operator.runtime.client import PVCS
from support.fakecerts import FakeClient

CID = "0123456789abcdef0123456789abcdef"


class Recorder:
    def __init__(self):
        self.events: list[tuple[str, str]] = []

    def normal(self, obj, reason, message):
        self.events.append((reason, message))

    warning = normal


def deleted_checkpoint() -> dict:
    """An automatic checkpoint being deleted, held by the cleanup finalizer."""
    return {
        "apiVersion": CHECKPOINTS.api_version,
        "kind": "DynamoCheckpoint",
        "metadata": {
            "name": f"checkpoint-{CID}",
            "namespace": "ns",
            "uid": "cp-uid",
            "labels": {LABEL_CHECKPOINT_ID: CID},
            "annotations": {ANN_AUTO: "true"},
            "finalizers": [FINALIZER],
            "deletionTimestamp": "2026-12-04T10:00:00Z",
        },
        "spec": {"identity": {"model": "m", "backendFramework": "vllm"}},
    }


def cleanup(client: FakeClient) -> CheckpointCleanup:
    client.create(PVCS, {"metadata": {"name": "chrek-pvc", "namespace": "ns"}}, "ns")
    return CheckpointCleanup(client, Recorder(), {"checkpoint": {"enabled": True}})


def test_a_stale_copy_of_a_released_checkpoint_starts_no_cleanup_job():
    """The Job's deletion wakes a pass that may still read the checkpoint from before its release: the
    apiserver no longer holds it, so no second Job is created (it would stay until its TTL)."""
    client = FakeClient()
    cleanup(client).finalize(deleted_checkpoint())
    assert not [k for k in client.objs if k[0] == JOBS.plural]


def test_a_checkpoint_waiting_for_its_cleanup_gets_its_job():
    client = FakeClient()
    live = deleted_checkpoint()
    client.objs[(CHECKPOINTS.plural, "ns", live["metadata"]["name"])] = live
    cleanup(client).finalize(live)
    assert (JOBS.plural, "ns", f"checkpoint-cleanup-{CID}") in client.objs
