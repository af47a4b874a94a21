"""The smallest object of each kind the validating webhook admits: the base a refusal's sample is set on,
so a refusal is shown to come from the field and nothing else."""

from __future__ import annotations

import copy

_BETA_DGD = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "ns"},
    "spec": {
        "components": [
            {
                "name": "Frontend",
                "type": "frontend",
                "replicas": 1,
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": "runtime:1"}]}},
            }
        ]
    },
}
_ALPHA_DGD = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "ns"},
    "spec": {
        "services": {
            "Frontend": {
                "componentType": "frontend",
                "replicas": 1,
                "extraPodSpec": {"mainContainer": {"image": "runtime:1"}},
            }
        }
    },
}
_BETA_DCD = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoComponentDeployment",
    "metadata": {"name": "c", "namespace": "ns"},
    "spec": {
        "name": "c",
        "type": "frontend",
        "replicas": 1,
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": "runtime:1"}]}},
    },
}
_ALPHA_DCD = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoComponentDeployment",
    "metadata": {"name": "c", "namespace": "ns"},
    "spec": {
        "serviceName": "c",
        "componentType": "frontend",
        "replicas": 1,
        "extraPodSpec": {"mainContainer": {"image": "runtime:1"}},
    },
}
_ALPHA_DGDR = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeploymentRequest",
    "metadata": {"name": "r", "namespace": "ns"},
    "spec": {"model": "Qwen/Qwen3-0.6B", "backend": "vllm"},
}
_ALPHA_DGDSA = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeploymentScalingAdapter",
    "metadata": {"name": "a", "namespace": "ns"},
    "spec": {"replicas": 1, "dgdRef": {"name": "g", "serviceName": "Frontend"}},
}
_BETA_DGDR = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeploymentRequest",
    "metadata": {"name": "r", "namespace": "ns"},
    "spec": {"model": "Qwen/Qwen3-0.6B", "backend": "vllm"},
}
_ALPHA_CHECKPOINT = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoCheckpoint",
    "metadata": {"name": "c", "namespace": "ns"},
    "spec": {
        "identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"},
        "job": {"podTemplateSpec": {"spec": {"containers": [{"name": "main", "image": "runtime:1"}]}}},
    },
}
# a PodSnapshot / content without its (CRD-required) source: the smallest object the webhook looks at
_ALPHA_POD_SNAPSHOT = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "PodSnapshot",
    "metadata": {"name": "s", "namespace": "ns"},
    "spec": {},
}
_ALPHA_POD_SNAPSHOT_CONTENT = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "PodSnapshotContent",
    "metadata": {"name": "c"},
    "spec": {"podSnapshotRef": {"namespace": "ns", "name": "s"}},
}
BASES = {
    ("DynamoGraphDeployment", "v1beta1"): _BETA_DGD,
    ("DynamoGraphDeployment", "v1alpha1"): _ALPHA_DGD,
    ("DynamoComponentDeployment", "v1beta1"): _BETA_DCD,
    ("DynamoComponentDeployment", "v1alpha1"): _ALPHA_DCD,
    ("DynamoGraphDeploymentRequest", "v1alpha1"): _ALPHA_DGDR,
    ("DynamoGraphDeploymentRequest", "v1beta1"): _BETA_DGDR,
    ("DynamoCheckpoint", "v1alpha1"): _ALPHA_CHECKPOINT,
    ("DynamoGraphDeploymentScalingAdapter", "v1alpha1"): _ALPHA_DGDSA,
    ("PodSnapshot", "v1alpha1"): _ALPHA_POD_SNAPSHOT,
    ("PodSnapshotContent", "v1alpha1"): _ALPHA_POD_SNAPSHOT_CONTENT,
}


def base_object(kind: str, version: str) -> dict:
    try:
        return copy.deepcopy(BASES[(kind, version)])
    except KeyError:
        raise KeyError(f"no minimal {kind} {version} in dynamo_coverage.samples; add one") from None
