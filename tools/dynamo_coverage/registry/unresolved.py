"""Registry entries (see the package docstring): drafted with ``python -m dynamo_coverage --draft`` and
held to the strict checks of ``check`` (the code names the field and its context, the test names the
field); an ``acts`` without a test is shown as untested."""

from __future__ import annotations

from ..status import Converted, Rendered, Status, StorageOnly, Unresolved, acts, refused  # noqa: F401

TYPES: dict[str, dict[str, Status]] = {
    "v1alpha1.DynamoCheckpointStatus": {
        "podSnapshotName": Unresolved("the field is not reached from a v1alpha1 kind the conversion handles"),
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
}
