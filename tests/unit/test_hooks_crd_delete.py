"""Which terminating CRDs `delete_crds` re-queues, and where it looks for their objects (pure parts)."""

from __future__ import annotations

from dynamo_hooks.crd_delete import instances_path, stalled


def _crd(deleting: bool, reason: str | None, status: str = "True") -> dict:
    conditions = [{"type": "Established", "status": "True", "reason": "InitialNamesAccepted"}]
    if reason:
        conditions.append({"type": "Terminating", "status": status, "reason": reason})
    meta: dict = {"name": "widgets.example.com"}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-01T20:00:00Z"
    return {"metadata": meta, "status": {"conditions": conditions}}


def test_only_a_deleting_crd_whose_instance_list_failed_counts_as_stalled() -> None:
    assert stalled(_crd(True, "InstanceDeletionFailed"))
    assert not stalled(_crd(False, "InstanceDeletionFailed"))  # not deleting: nothing to re-queue
    assert not stalled(_crd(True, "InstanceDeletionInProgress"))  # working: leave it be
    assert not stalled(_crd(True, "InstanceDeletionCheck"))  # waiting on objects' own finalizers
    assert not stalled(_crd(True, "InstanceDeletionFailed", status="False"))
    assert not stalled(_crd(True, None))
    assert not stalled({})


def test_instances_are_listed_at_the_storage_version() -> None:
    crd = {
        "spec": {
            "group": "nvidia.com",
            "names": {"plural": "dynamographdeployments"},
            "versions": [{"name": "v1alpha1", "storage": False}, {"name": "v1beta1", "storage": True}],
        }
    }
    assert instances_path(crd) == "/apis/nvidia.com/v1beta1/dynamographdeployments"
