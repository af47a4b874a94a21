"""Registry entries (see the package docstring): drafted with ``python -m dynamo_coverage --draft`` and
held to the strict checks of ``check`` (the code names the field and its context, the test names the
field); an ``acts`` without a test is shown as untested."""

from __future__ import annotations

from ..status import Converted, Rendered, Status, StorageOnly, Unresolved, acts, refused  # noqa: F401

TYPES: dict[str, dict[str, Status]] = {
    "v1alpha1.DeploymentStatus": {
        "namespace": Unresolved("converted, but no v1beta1 field of the same type is named to act on it"),
    },
    "v1alpha1.DynamoCheckpointStatus": {
        "podSnapshotName": Unresolved("the field is not reached from a v1alpha1 kind the conversion handles"),
    },
    "v1alpha1.DynamoGraphDeploymentRequestStatus": {
        "backend": Unresolved("converted, but no v1beta1 field of the same type is named to act on it"),
    },
    "v1alpha1.DynamoModelSpec": {
        "modelType": Unresolved("the field is not reached from a v1alpha1 kind the conversion handles"),
    },
    "v1alpha1.PlacementStatus": {
        "score": Unresolved("converted to v1beta1.PlacementStatus.score, which is unresolved itself"),
    },
    "v1alpha1.PodSnapshotContentSource": {
        "nodeName": Unresolved("the field is not reached from a v1alpha1 kind the conversion handles"),
    },
    "v1alpha1.PodSnapshotReference": {
        "uid": Unresolved("the field is not reached from a v1alpha1 kind the conversion handles"),
    },
    "v1alpha1.PodSnapshotStatus": {
        "boundPodSnapshotContentName": Unresolved(
            "the field is not reached from a v1alpha1 kind the conversion handles"
        ),
        "conditions": Unresolved("the field is not reached from a v1alpha1 kind the conversion handles"),
    },
    "v1alpha1.ServiceCheckpointJobConfig": {
        "gmsClientContainers": Unresolved(
            "converted to v1beta1.ComponentCheckpointJobConfig.gmsClientContainers, which is unresolved itself"
        ),
    },
    "v1alpha1.ServiceReplicaStatus": {
        "scheduledReplicas": Unresolved(
            "converted to v1beta1.ComponentReplicaStatus.scheduledReplicas, which is unresolved itself"
        ),
    },
    "v1beta1.ComponentCheckpointJobConfig": {
        "gmsClientContainers": Unresolved(
            "no code found that reads it (nor a refusal, nor a seed quote saying it is ignored)"
        ),
    },
    "v1beta1.ComponentReplicaStatus": {
        "scheduledReplicas": Unresolved(
            "no code found that reads it (nor a refusal, nor a seed quote saying it is ignored)"
        ),
    },
    "v1beta1.ParetoConfig": {
        "config": Unresolved(
            "no code found that reads it (nor a refusal, nor a seed quote saying it is ignored)"
        ),
    },
    "v1beta1.PlacementStatus": {
        "score": Unresolved(
            "no code found that reads it (nor a refusal, nor a seed quote saying it is ignored)"
        ),
    },
}
