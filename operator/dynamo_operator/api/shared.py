"""nvidia.com types that v1alpha1 and v1beta1 define identically, defined once.

Both version modules import these and list them in their ``__all__``, so ``v1alpha1.DGDState`` and
``v1beta1.DGDState`` are the same object and keep working under both names.

Why a neutral module rather than v1beta1 importing from v1alpha1 (or the reverse): neither version is
the other's source. v1alpha1 is deprecated but still the storage version; v1beta1 is the supported
surface. A shared module lets either one be removed or changed without the other noticing, and says
plainly that what lives here is a fact of the group, not of one version.

What may live here: only what both versions define the same to the letter, meaning the same values,
pattern and, for models, the same fields, JSON names, descriptions, markers and defaults. That is
deliberately little. Most types the reference lists in both versions (RestartStatus, PlacementStatus,
FailoverSpec, KvTransferPolicy, TopologyConstraint...) have the same shape but different
descriptions (v1beta1 starts each one with the JSON name: ``phase is...`` against ``Phase is...``, and
often rewrites the text). Those descriptions become ``kubectl explain`` text and CRD schema, so those
types stay in their version modules. The enums below are the values the lossless conversion copies as
they are: they must be the same in both versions, and one definition makes that a guarantee rather
than a coincidence. When a version has to change one (as ``GPUMemoryServiceMode`` did: ``intraPod``
in v1alpha1, ``IntraPod`` in v1beta1), give that version its own definition again.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from dynamo_operator.api.meta import ApiModel, Condition

__all__ = [
    "CheckpointDeletionPolicy",
    "CheckpointMode",
    "CheckpointStartupPolicy",
    "ComponentKind",
    "DGDState",
    "DynamoComponentDeploymentStatusBase",
    "KvTransferEnforcement",
    "PlacementScoreState",
    "RestartPhase",
    "RestartStrategyType",
    "RollingUpdatePhase",
    "TopologyDomain",
]

# CheckpointDeletionPolicy defines what happens to DGD-managed automatic checkpoint resources when the
# owning DGD is deleted.
CheckpointDeletionPolicy = Literal["Delete", "Retain"]


# Deprecated: use checkpoint.enabled instead. enabled=true without checkpointRef creates a DGD-managed
# automatic checkpoint; checkpointRef restores the named checkpoint.
CheckpointMode = Literal["Auto", "Manual"]


# CheckpointStartupPolicy defines when worker pods should wait for a checkpoint.
CheckpointStartupPolicy = Literal["Immediate", "WaitForCheckpoint"]


# ComponentKind represents the type of underlying Kubernetes resource backing a DGD component.
ComponentKind = Literal["PodClique", "PodCliqueScalingGroup", "Deployment", "LeaderWorkerSet"]


# DGDState is the high-level lifecycle state of a DynamoGraphDeployment (the v1alpha1 reference gives
# no description).
DGDState = Literal["initializing", "pending", "successful", "failed"]


# KvTransferEnforcement controls how the selected prefill worker's topology is applied to decode
# routing.
KvTransferEnforcement = Literal["required", "preferred"]


# PlacementScoreState describes whether placement score is available and how complete the reported
# score is for a graph deployment. Every backend must set this field after the first reconciliation: *
# Reported: a score is available for every scored placement unit. * Partial: a score is available for
# some but not all placement units. * Unsupported: the backend does not surface a placement score at
# all. * Unknown: the backend supports scores but the current value is indeterminate (e.g. read
# failure, not yet populated by the scheduler). When set, PlacementStatus.Score must be cleared.
PlacementScoreState = Literal["Reported", "Partial", "Unsupported", "Unknown"]


# RestartPhase enumerates phases of a graph-level restart (the v1alpha1 reference gives no
# description).
RestartPhase = Literal["Pending", "Restarting", "Completed", "Failed", "Superseded"]


# RestartStrategyType enumerates restart strategies (the v1alpha1 reference gives no description).
RestartStrategyType = Literal["Sequential", "Parallel"]


# RollingUpdatePhase represents the current phase of a rolling update.
RollingUpdatePhase = Literal["Pending", "InProgress", "Completed", "Failed", ""]


# TopologyDomain is a free-form topology level identifier. Common examples: "region", "zone",
# "datacenter", "block", "rack", "host", "numa". When used with a ClusterTopology CR, domain names are
# defined in the CR's hierarchy; when used with `spec.experimental.kvTransferPolicy.labelKey` alone,
# the value is a user-chosen logical name for the topology level. Must match
# `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$` (lowercase alphanumeric, may contain hyphens but must not start or
# end with one).
TopologyDomain = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")]


class DynamoComponentDeploymentStatusBase(ApiModel):
    """Observed state of a DynamoComponentDeployment: the fields both versions share.

    The API reference does not list this type; its shape follows upstream's public Go type so the
    operator can report availability (the ``Available`` printer column reads these conditions). Each
    version adds its replica status last: ``service`` in v1alpha1, ``component`` in v1beta1.
    """

    observed_generation: int | None = Field(
        None, description="ObservedGeneration is the most recent generation observed by the controller."
    )
    conditions: list[Condition] | None = Field(
        None,
        description=(
            "Conditions captures the latest observed state of the component (including\n"
            "availability and readiness) using standard Kubernetes condition types."
        ),
    )
    pod_selector: dict[str, str] | None = Field(
        None,
        description=(
            "PodSelector contains the labels that can be used to select Pods belonging to\n"
            "this component deployment."
        ),
    )
