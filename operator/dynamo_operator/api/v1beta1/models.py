"""nvidia.com/v1beta1: the supported API surface of DGD, DCD, DGDR and DGDSA.

Generated once from the API reference and maintained by hand since: field names are the exact JSON
names, descriptions are the reference's (they become ``kubectl explain`` text), and every validation
marker of the reference is a pydantic constraint that :mod:`dynamo_operator.api.crdgen` turns into the
matching OpenAPI keyword.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dynamo_operator.api.meta import (
    ApiModel,
    Condition,
    ContainerName,
    CoreConfigMapKeySelector,
    EmbeddedResource,
    EnvVar,
    KubeObject,
    KubeResource,
    PodTemplateSpec,
    Quantity,
    RawExtension,
    Time,
)
from dynamo_operator.api.shared import (
    CheckpointDeletionPolicy,
    CheckpointMode,
    CheckpointStartupPolicy,
    ComponentKind,
    DGDState,
    DynamoComponentDeploymentStatusBase,
    KvTransferEnforcement,
    PlacementScoreState,
    RestartPhase,
    RestartStrategyType,
    RollingUpdatePhase,
    TopologyDomain,
)

__all__ = [
    "BackendType",
    "CheckpointDeletionPolicy",
    "CheckpointMode",
    "CheckpointStartupPolicy",
    "CompilationCacheConfig",
    "ComponentCheckpointConfig",
    "ComponentCheckpointJobConfig",
    "ComponentCheckpointStatus",
    "ComponentKind",
    "ComponentReplicaStatus",
    "ComponentType",
    "DGDRPhase",
    "DGDState",
    "DeploymentInfoStatus",
    "DynamoCheckpointIdentity",
    "DynamoComponentDeployment",
    "DynamoComponentDeploymentSharedSpec",
    "DynamoComponentDeploymentSpec",
    "DynamoComponentDeploymentStatus",
    "DynamoGraphDeployment",
    "DynamoGraphDeploymentComponentRef",
    "DynamoGraphDeploymentExperimentalSpec",
    "DynamoGraphDeploymentRequest",
    "DynamoGraphDeploymentRequestSpec",
    "DynamoGraphDeploymentRequestStatus",
    "DynamoGraphDeploymentScalingAdapter",
    "DynamoGraphDeploymentScalingAdapterSpec",
    "DynamoGraphDeploymentScalingAdapterStatus",
    "DynamoGraphDeploymentSpec",
    "DynamoGraphDeploymentStatus",
    "EPPConfig",
    "ExperimentalSpec",
    "FailoverSpec",
    "FeaturesSpec",
    "GMSClientPodSpec",
    "GPUMemoryServiceMode",
    "GPUMemoryServiceSpec",
    "GPUSKUType",
    "HardwareSpec",
    "KvTransferEnforcement",
    "KvTransferPolicy",
    "MockerSpec",
    "ModelCacheSpec",
    "ModelReference",
    "MultinodeSpec",
    "OptimizationType",
    "OverridesSpec",
    "ParetoConfig",
    "PlacementScoreState",
    "PlacementStatus",
    "ProfilingPhase",
    "ProfilingResultsStatus",
    "Restart",
    "RestartPhase",
    "RestartStatus",
    "RestartStrategy",
    "RestartStrategyType",
    "RollingUpdatePhase",
    "RollingUpdateStatus",
    "SLASpec",
    "ScalingAdapter",
    "SearchStrategy",
    "SpecTopologyConstraint",
    "TopologyConstraint",
    "TopologyDomain",
    "WorkloadSpec",
]

# BackendType specifies the inference backend.
BackendType = Literal["auto", "sglang", "trtllm", "vllm"]


# ComponentType identifies the role of a Dynamo component within a graph. In v1beta1 this is a strict
# enum. Unlike v1alpha1 (where `subComponentType` was used as a workaround for disaggregated serving),
# `prefill` and `decode` are first-class values: users can set them directly and downstream consumers
# (e.g., the EPP) can filter on the pod label `nvidia.com/dynamo-component-type`.
ComponentType = Literal["frontend", "worker", "prefill", "decode", "planner", "epp"]


# DGDRPhase represents the lifecycle phase of a DynamoGraphDeploymentRequest.
DGDRPhase = Literal["Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed"]


# GPUMemoryServiceMode selects the GMS deployment topology.
GPUMemoryServiceMode = Literal["IntraPod", "InterPod"]


# GPUSKUType is the AIC hardware system identifier for a supported GPU.
GPUSKUType = Literal[
    "gb200_sxm",
    "gb10",
    "b200_sxm",
    "h200_sxm",
    "h100_sxm",
    "h100_pcie",
    "a100_sxm",
    "a100_pcie",
    "a30",
    "l40s",
    "l40",
    "l4",
    "v100_sxm",
    "v100_pcie",
    "t4",
    "mi200",
    "mi300",
]


# OptimizationType defines the optimization target for SLA-based profiling.
OptimizationType = Literal["latency", "throughput"]


# ProfilingPhase represents a sub-phase within the profiling pipeline. When the DGDR Phase is
# "Profiling", this value indicates which step of the profiling pipeline is currently executing.
ProfilingPhase = Literal[
    "Initializing",
    "SweepingPrefill",
    "SweepingDecode",
    "SelectingConfig",
    "BuildingCurves",
    "GeneratingDGD",
    "Done",
]


# SearchStrategy controls the profiling search depth.
SearchStrategy = Literal["rapid", "thorough"]


class CompilationCacheConfig(ApiModel):
    """CompilationCacheConfig configures a PVC-backed compilation cache for a component.
    The operator handles backend-specific mount paths and environment variables so
    users do not need to hand-wire them into the pod template.
    """

    pvc_name: str = Field(
        ...,
        description=(
            "pvcName references a user-created PVC by name. The PVC must exist in\n"
            "the same namespace as the DynamoGraphDeployment."
        ),
        min_length=1,
    )
    mount_path: str | None = Field(
        None,
        description=(
            "mountPath overrides the backend-specific default mount path. When\n"
            "empty, the operator selects a default appropriate for the backend\n"
            "framework."
        ),
    )


class ComponentCheckpointConfig(ApiModel):
    """ComponentCheckpointConfig configures checkpointing for a DGD component."""

    enabled: bool = Field(
        ...,
        description=(
            "enabled indicates whether checkpointing is enabled for this component.\n"
            "When true, omit checkpointRef for a DGD-managed automatic checkpoint or\n"
            "set checkpointRef to restore an existing checkpoint. Omit the checkpoint\n"
            "block, or set enabled=false, to disable checkpointing."
        ),
    )
    mode: CheckpointMode | None = Field(
        None,
        description=(
            "Deprecated: omit mode. Use enabled=true without checkpointRef for a\n"
            "DGD-managed automatic checkpoint, or use checkpointRef to restore the\n"
            "named checkpoint."
        ),
    )
    startup_policy: CheckpointStartupPolicy | None = Field(
        None,
        description=(
            "startupPolicy defines when normal worker replicas are started relative to\n"
            "automatic checkpoint readiness.\n"
            "`Immediate` (default): start workers cold immediately; later Pods restore\n"
            "from the checkpoint once it is Ready.\n"
            "`WaitForCheckpoint`: keep worker replicas at zero until the checkpoint is\n"
            "Ready, then start them from the checkpoint."
        ),
    )
    deletion_policy: CheckpointDeletionPolicy | None = Field(
        None,
        description=(
            "DeletionPolicy defines whether a DGD-managed automatic checkpoint CR and\n"
            "artifact are deleted or retained when the owning DGD is deleted.\n"
            "Explicit checkpointRef checkpoints are never owned or deleted by the DGD."
        ),
    )
    checkpoint_ref: str | None = Field(
        None,
        description=(
            "checkpointRef references an existing DynamoCheckpoint CR by `metadata.name`.\n"
            "When set, this component's `identity` is ignored and the referenced\n"
            "checkpoint is used directly."
        ),
    )
    identity: DynamoCheckpointIdentity | None = Field(
        None,
        description=(
            "Deprecated: omit for DGD-managed checkpoints; no action is needed.\n"
            "Use checkpointRef to restore an existing checkpoint."
        ),
    )
    target_container_name: ContainerName | None = Field(
        None,
        description="targetContainerName is the workload container to snapshot and restore.",
    )
    job: ComponentCheckpointJobConfig | None = Field(
        None,
        description="job customizes the DGD-managed checkpoint Job.",
    )


class ComponentCheckpointJobConfig(ApiModel):
    """ComponentCheckpointJobConfig customizes the checkpoint Job created for a DGD component."""

    gms_client_containers: list[ContainerName] | None = Field(
        None,
        description=(
            "gmsClientContainers lists checkpoint Job containers that should receive\n"
            "GMS client wiring. Requires gpuMemoryService on the component."
        ),
    )
    pod_template: PodTemplateSpec | None = Field(
        None,
        description=(
            "podTemplate customizes the checkpoint Job pod. The operator starts from the\n"
            "selected workload container and merges this template so users can add helper\n"
            "containers such as gms-saver."
        ),
    )


class ComponentCheckpointStatus(ApiModel):
    """ComponentCheckpointStatus contains checkpoint information for a single component."""

    checkpoint_name: str | None = Field(
        None,
        description="checkpointName is the name of the associated DynamoCheckpoint CR.",
    )
    checkpoint_id: str | None = Field(
        None,
        alias="checkpointID",
        description="checkpointID is the artifact ID used by the snapshot protocol.",
    )
    identity_hash: str | None = Field(
        None,
        description=(
            "identityHash is the computed hash of the checkpoint identity.\n"
            "Deprecated: automatic checkpoints use checkpointID. This field is retained\n"
            "for older status consumers."
        ),
    )
    ready: bool | None = Field(
        None,
        description="ready indicates the checkpoint artifact is ready for future pods to restore.",
    )


class ComponentReplicaStatus(ApiModel):
    """ComponentReplicaStatus contains replica information for a single component."""

    component_kind: ComponentKind | None = Field(
        None,
        description=(
            "componentKind is the underlying resource kind (e.g. `PodClique`,\n"
            "`Deployment`, `LeaderWorkerSet`)."
        ),
    )
    component_names: list[str] | None = Field(
        None,
        description=(
            "componentNames is the list of underlying Kubernetes resource names for\n"
            "this Dynamo component. During normal operation this contains a single\n"
            "name; during rolling updates it contains both old and new resource names."
        ),
    )
    runtime_namespace: str | None = Field(
        None,
        description=(
            "runtimeNamespace is the effective Dynamo runtime namespace for this\n"
            "component. Worker components may include a generation suffix; non-workers and\n"
            "Grove-backed workers use the base namespace. During rolling updates, worker\n"
            "status keeps the old active revision namespace until cutover completes."
        ),
    )
    replicas: int | None = Field(
        None,
        description="replicas is the total number of non-terminated replicas.",
        ge=0,
    )
    updated_replicas: int | None = Field(
        None,
        description="updatedReplicas is the number of replicas at the current/desired revision.",
        ge=0,
    )
    ready_replicas: int | None = Field(
        None,
        description=(
            "readyReplicas is the number of ready replicas. Populated for\n"
            "`PodClique`, `Deployment`, and `LeaderWorkerSet`; not available for\n"
            "`PodCliqueScalingGroup`."
        ),
        ge=0,
    )
    available_replicas: int | None = Field(
        None,
        description=(
            "availableReplicas is the number of available replicas. Populated for\n"
            "`Deployment` and `PodCliqueScalingGroup`; not available for\n"
            "`PodClique` or `LeaderWorkerSet`."
        ),
        ge=0,
    )
    scheduled_replicas: int | None = Field(
        None,
        description=(
            "scheduledReplicas is the number of replicas the backend scheduler has\n"
            "scheduled, expressed strictly in Dynamo component-replica units (not\n"
            "raw backend pod counts). It is a diagnostic aid for distinguishing\n"
            "capacity/scheduling shortfalls from runtime readiness.\n"
            "It is optional and omitted (nil) when the active backend cannot derive\n"
            "it reliably in component-replica units — for example before the backing\n"
            "resource's status has been observed, or for backends that do not report\n"
            'a scheduling count. A nil value therefore means "not reported", never\n'
            '"zero scheduled"; consumers must not treat absence as a scheduling\n'
            "failure."
        ),
        ge=0,
    )


class DeploymentInfoStatus(ApiModel):
    """DeploymentInfoStatus tracks the state of the deployed DynamoGraphDeployment."""

    replicas: int | None = Field(
        None,
        description="Replicas is the desired number of replicas.",
    )
    available_replicas: int | None = Field(
        None,
        description="AvailableReplicas is the number of replicas that are available and ready.",
    )


class DynamoCheckpointIdentity(ApiModel):
    """Deprecated: omit in DGD component checkpoint configs. Auto needs no
    replacement; use checkpointRef for explicit restores.
    Duplicated from v1alpha1; DynamoCheckpoint itself remains v1alpha1.
    """

    model: str = Field(
        ...,
        description=(
            'model is the model identifier (e.g. "meta-llama/Llama-3-70B").\n'
            "Deprecated: legacy identity only."
        ),
        min_length=1,
    )
    backend_framework: Literal["vllm", "sglang", "trtllm"] = Field(
        ...,
        description=(
            "backendFramework is the runtime framework (`vllm`, `sglang`, `trtllm`).\n"
            "Deprecated: legacy identity only."
        ),
    )
    dynamo_version: str | None = Field(
        None,
        description=("dynamoVersion is the Dynamo platform version.\nDeprecated: legacy identity only."),
    )
    tensor_parallel_size: int | None = Field(
        None,
        description=(
            "tensorParallelSize is the tensor parallel configuration.\n"
            "Deprecated: checkpoint launch uses the pod template instead."
        ),
        ge=1,
    )
    pipeline_parallel_size: int | None = Field(
        None,
        description=(
            "pipelineParallelSize is the pipeline parallel configuration.\n"
            "Deprecated: checkpoint launch uses the pod template instead."
        ),
        ge=1,
    )
    dtype: str | None = Field(
        None,
        description=(
            "dtype is the data type (`fp16`, `bf16`, `fp8`, etc.).\nDeprecated: legacy identity only."
        ),
    )
    max_model_len: int | None = Field(
        None,
        description=("maxModelLen is the maximum sequence length.\nDeprecated: legacy identity only."),
        ge=1,
    )
    extra_parameters: dict[str, str] | None = Field(
        None,
        description=(
            "extraParameters are additional parameters that affect the checkpoint hash.\n"
            "Deprecated: legacy identity only."
        ),
    )


class DynamoComponentDeployment(KubeResource):
    """DynamoComponentDeployment is the Schema for the dynamocomponentdeployments API.
    v1beta1 is a served version: the API server accepts reads and writes
    against it, and transparently converts to/from v1alpha1 (still the
    storage version until a later MR flips it). Conversion goes through the
    operator's conversion webhook; see api/v1alpha1/\\*\\_conversion.go.
    """

    spec: DynamoComponentDeploymentSpec | None = Field(
        None,
        description="spec defines the desired state for this Dynamo component deployment.",
    )
    status: DynamoComponentDeploymentStatus | None = Field(
        None,
        description="status reflects the current observed state of the component deployment.",
    )


class DynamoComponentDeploymentSharedSpec(ApiModel):
    """DynamoComponentDeploymentSharedSpec is the shared configuration used by both
    standalone DCDs and by the components embedded in a DynamoGraphDeployment.
    In v1beta1 the ten per-component pod-configuration fields that existed in
    v1alpha1 (resources, envs, envFromSecret, livenessProbe, readinessProbe,
    volumeMounts, annotations, labels, extraPodMetadata, extraPodSpec) are
    replaced with a single `podTemplate` field holding a native
    `corev1.PodTemplateSpec`. The operator injects its defaults into the
    container named `"main"` and merges user overrides using strategic-merge-by-name
    semantics. Users can add sidecars, init containers, and pod-level configuration
    directly in `podTemplate` without any `extraPodSpec`-style escape hatch.
    """

    name: str = Field(
        ...,
        description=(
            "name is the stable logical identifier for this component within its\n"
            "DynamoGraphDeployment. It must be unique within the parent's\n"
            "`spec.components` list.\n"
            "For standalone DynamoComponentDeployment objects, the defaulting webhook\n"
            "populates `name` from `metadata.name` on admission, so users\n"
            "typically do not need to set it explicitly.\n"
            "`name` is decoupled from the underlying Kubernetes resource name so that\n"
            "the operator can rename child workloads (e.g. suffixing worker DCDs with\n"
            "a hash during rolling updates) without losing the stable identity that\n"
            "downstream consumers (labels, status maps, DGDSA references, planner\n"
            "RBAC, EPP filters) depend on."
        ),
        max_length=63,
        min_length=1,
        pattern=r"^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$",
    )
    type: ComponentType | None = Field(
        None,
        description=(
            "type indicates the role of this component within a Dynamo graph. Drives\n"
            "port mapping, frontend detection, planner RBAC, and the pod label\n"
            "`nvidia.com/dynamo-component-type`. Because `prefill` and `decode` are\n"
            "first-class values, users can set them directly."
        ),
    )
    global_dynamo_namespace: bool | None = Field(
        None,
        description=(
            "globalDynamoNamespace places the component in the global Dynamo\n"
            "namespace rather than the per-deployment namespace derived from the\n"
            "DGD name."
        ),
    )
    pod_template: PodTemplateSpec | None = Field(
        None,
        description=(
            "podTemplate is the pod template used to create the component's pods.\n"
            "The operator injects its defaults (image, command, env, ports, probes,\n"
            'resources, volume mounts) into the container named `"main"` inside\n'
            "`podTemplate.spec.containers`, merging user overrides by name. If no\n"
            'container named `"main"` is present, the operator auto-generates it\n'
            "with standard defaults. All other containers in `podTemplate.spec.containers`\n"
            "are treated as user-managed sidecars: the operator does not inject\n"
            "defaults into them, so sidecars must specify required fields (e.g. `image`)\n"
            "themselves. The validation webhook rejects pod templates where a\n"
            'non-`"main"` container is missing a required field such as `image`.'
        ),
    )
    replicas: int | None = Field(
        None,
        description=(
            "replicas is the desired number of Pods for this component. When\n"
            "`scalingAdapter` is set on this component, this field is managed by\n"
            "the DynamoGraphDeploymentScalingAdapter and should not be modified\n"
            "directly."
        ),
        ge=0,
    )
    min_available: int | None = Field(
        None,
        description=(
            "minAvailable maps to Grove PodClique minAvailable for single-node and\n"
            "Grove PodCliqueScalingGroup minAvailable for multi-node components.\n"
            "This field determines 1) the minimum number of replicas guaranteed to be\n"
            "gang-scheduled, and 2) when violating minAvailable replicas triggers gang\n"
            "termination.\n"
            "For Grove-backed DynamoGraphDeployment components, minAvailable defaults to\n"
            "1 when omitted and is immutable after creation. Positive replica counts must\n"
            "be greater than or equal to minAvailable. Replicas may be scaled to 0 as a\n"
            "special scale-to-zero state; minAvailable remains configured but is not\n"
            "enforced again until replicas is scaled back to a positive value.\n"
            "For non-Grove deployments, setting this field will result in a validation error."
        ),
        ge=1,
    )
    multinode: MultinodeSpec | None = Field(
        None,
        description="multinode configures multinode components.",
    )
    shared_memory_size: Quantity | None = Field(
        None,
        description=(
            "sharedMemorySize controls the size of the tmpfs mounted at `/dev/shm`.\n"
            "`nil` selects the operator default (8Gi), a positive quantity sets a\n"
            'custom size, and `"0"` disables the shared-memory volume entirely.\n'
            "Simpler replacement for v1alpha1's `SharedMemorySpec` struct with its\n"
            "`disabled bool` + `size Quantity` pattern."
        ),
    )
    model_ref: ModelReference | None = Field(
        None,
        description=(
            "modelRef references a model served by this component. When specified,\n"
            "a headless service is created for endpoint discovery."
        ),
    )
    scaling_adapter: ScalingAdapter | None = Field(
        None,
        description=(
            "scalingAdapter opts this component into using the\n"
            "DynamoGraphDeploymentScalingAdapter. When set (even as an empty object,\n"
            "`scalingAdapter: {}`), a DGDSA is created and owns the `replicas` field\n"
            "so that external autoscalers (HPA/KEDA/Planner) can drive scaling via\n"
            "the Scale subresource. Omit the field to opt out."
        ),
    )
    epp_config: EPPConfig | None = Field(
        None,
        description=(
            "eppConfig holds EPP-specific configuration for Endpoint Picker Plugin\n"
            "components. Only meaningful when `type` is `epp`."
        ),
    )
    frontend_sidecar: str | None = Field(
        None,
        description=(
            "frontendSidecar optionally designates a container in\n"
            "`podTemplate.spec.containers` as the frontend sidecar. The value must\n"
            "match the `name` of a container in that list; the operator merges its\n"
            "frontend-sidecar defaults (auto-generated Dynamo env vars, ports,\n"
            'health probes) into that container the same way it merges into `"main"`.\n'
            "The full container definition (image, args, envFrom, env) lives in\n"
            "`podTemplate` -- this eliminates the redundant `image`, `args`,\n"
            "`envFromSecret`, and `envs` fields from v1alpha1's `FrontendSidecarSpec`.\n"
            "The validation webhook rejects values that do not match any container\n"
            "name in `podTemplate.spec.containers`."
        ),
    )
    compilation_cache: CompilationCacheConfig | None = Field(
        None,
        description=(
            "compilationCache configures a PVC-backed compilation cache. The operator\n"
            "handles backend-specific mount paths and environment variables, so\n"
            "users do not need to hand-wire them into `podTemplate`. Extracted from\n"
            "v1alpha1's `volumeMount.useAsCompilationCache` flag."
        ),
    )
    topology_constraint: TopologyConstraint | None = Field(
        None,
        description=(
            "topologyConstraint applies to this component.\n"
            "`topologyConstraint.packDomain` is required. When both this and\n"
            "`spec.topologyConstraint.packDomain` are set, this field's `packDomain`\n"
            "must be narrower than or equal to the spec-level value."
        ),
    )
    experimental: ExperimentalSpec | None = Field(
        None,
        description=(
            "experimental groups opt-in preview features whose API shape and\n"
            "behavior may change in breaking ways between v1beta1 releases,\n"
            "including disappearing without a name-preserving graduation path.\n"
            "In v1beta1 this block holds `gpuMemoryService` and `failover` (which\n"
            "remain tightly coupled -- failover requires GMS -- and are expected to\n"
            "evolve together as the DRA-based GPU sharing story matures), and\n"
            "`checkpoint` (whose API shape is still settling). Fields here are\n"
            "explicitly NOT covered by the normal v1beta1 deprecation policy; do not\n"
            "depend on them for production workloads."
        ),
    )


class DynamoComponentDeploymentSpec(DynamoComponentDeploymentSharedSpec):
    """DynamoComponentDeploymentSpec defines the desired state of a DynamoComponentDeployment."""

    backend_framework: Literal["sglang", "vllm", "trtllm"] | None = Field(
        None,
        description="backendFramework specifies the backend framework.",
    )


class DynamoGraphDeployment(KubeResource):
    """DynamoGraphDeployment is the Schema for the dynamographdeployments API.
    v1beta1 is a served version: the API server accepts reads and writes
    against it, and transparently converts to/from v1alpha1 (still the
    storage version until a later MR flips it). Conversion goes through the
    operator's conversion webhook; see api/v1alpha1/\\*\\_conversion.go.
    """

    spec: DynamoGraphDeploymentSpec | None = Field(
        None,
        description="spec defines the desired state for this graph deployment.",
    )
    status: DynamoGraphDeploymentStatus | None = Field(
        None,
        description="status reflects the current observed state of this graph deployment.",
    )


class DynamoGraphDeploymentComponentRef(ApiModel):
    """DynamoGraphDeploymentComponentRef identifies a specific component within a
    DynamoGraphDeployment. Renamed from v1alpha1's `DynamoGraphDeploymentServiceRef`
    to align with the v1beta1 `services -> components` and
    `serviceName -> componentName` renames.
    """

    name: str = Field(
        ...,
        description="name is the `metadata.name` of the target DynamoGraphDeployment.",
        min_length=1,
    )
    component_name: str = Field(
        ...,
        description=(
            "componentName is the `componentName` of the entry within the target\n"
            "DGD's `spec.components` list to scale."
        ),
        min_length=1,
    )


class DynamoGraphDeploymentExperimentalSpec(ApiModel):
    """DynamoGraphDeploymentExperimentalSpec groups graph-level opt-in preview
    features whose API shape and behavior may change in breaking ways between
    v1beta1 releases. Component-level experimental features live under
    `spec.components[*].experimental`.
    """

    kv_transfer_policy: KvTransferPolicy | None = Field(
        None,
        description=(
            "kvTransferPolicy configures topology-aware routing for KV-cache\n"
            "transfers between prefill and decode workers."
        ),
    )


class DynamoGraphDeploymentRequest(KubeResource):
    """DynamoGraphDeploymentRequest is the Schema for the dynamographdeploymentrequests API.
    It provides a simplified, SLA-driven interface for deploying inference models on Dynamo.
    Users specify a model and optional performance targets; the controller handles profiling,
    configuration selection, and deployment.
    Lifecycle:
    1. Pending: Spec validated, preparing for profiling
    2. Profiling: Profiling job is running to discover optimal configurations
    3. Ready: Profiling complete, generated DGD spec available in status
    4. Deploying: DGD is being created and rolled out (when autoApply=true)
    5. Deployed: DGD is running and healthy
    6. Failed: An unrecoverable error occurred
    """

    spec: DynamoGraphDeploymentRequestSpec | None = Field(
        None,
        description="Spec defines the desired state for this deployment request.",
    )
    status: DynamoGraphDeploymentRequestStatus | None = Field(
        None,
        description="Status reflects the current observed state of this deployment request.",
    )


class DynamoGraphDeploymentRequestSpec(ApiModel):
    """DynamoGraphDeploymentRequestSpec defines the desired state of a DynamoGraphDeploymentRequest.
    Only the Model field is required; all other fields are optional and have sensible defaults.
    """

    model: str = Field(
        ...,
        description=(
            'Model specifies the model to deploy (e.g., "Qwen/Qwen3-0.6B", "meta-llama/Llama-3-70b").\n'
            "Can be a HuggingFace ID or a private model name."
        ),
        min_length=1,
    )
    backend: BackendType | None = Field(
        None,
        description="Backend specifies the inference backend to use for profiling and deployment.",
    )
    image: str | None = Field(
        None,
        description=(
            "Image is the container image reference for the profiling job (planner image).\n"
            'Example: "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1".\n'
            "For Dynamo < 1.1.0, use dynamo-frontend."
        ),
    )
    model_cache: ModelCacheSpec | None = Field(
        None,
        description=(
            "ModelCache provides optional PVC configuration for pre-downloaded model weights.\n"
            "When provided, weights are loaded from the PVC instead of downloading from HuggingFace."
        ),
    )
    hardware: HardwareSpec | None = Field(
        None,
        description=(
            "Hardware describes the hardware resources available for profiling and deployment.\n"
            "Typically auto-filled by the operator from cluster discovery."
        ),
    )
    workload: WorkloadSpec | None = Field(
        None,
        description="Workload defines the expected workload characteristics for SLA-based profiling.",
    )
    sla: SLASpec | None = Field(
        None,
        description="SLA defines service-level agreement targets that drive profiling optimization.",
    )
    overrides: OverridesSpec | None = Field(
        None,
        description="Overrides allows customizing the profiling job and the generated DynamoGraphDeployment.",
    )
    features: FeaturesSpec | None = Field(
        None,
        description="Features controls optional Dynamo platform features in the generated deployment.",
    )
    search_strategy: SearchStrategy | None = Field(
        None,
        description=(
            "SearchStrategy controls the profiling search depth.\n"
            '"rapid" performs a fast sweep; "thorough" explores more configurations.'
        ),
    )
    auto_apply: bool | None = Field(
        None,
        description=(
            "AutoApply indicates whether to automatically create a DynamoGraphDeployment\n"
            "after profiling completes. If false, the generated spec is stored in status\n"
            "for manual review and application."
        ),
    )


class DynamoGraphDeploymentRequestStatus(ApiModel):
    """DynamoGraphDeploymentRequestStatus represents the observed state of a DynamoGraphDeploymentRequest."""

    phase: DGDRPhase | None = Field(
        None,
        description="Phase is the high-level lifecycle phase of the deployment request.",
    )
    profiling_phase: ProfilingPhase | None = Field(
        None,
        description=(
            "ProfilingPhase indicates the current sub-phase of the profiling pipeline.\n"
            'Only meaningful when Phase is "Profiling". Cleared when profiling completes or fails.'
        ),
    )
    dgd_name: str | None = Field(
        None,
        description="DGDName is the name of the generated or created DynamoGraphDeployment.",
    )
    profiling_job_name: str | None = Field(
        None,
        description="ProfilingJobName is the name of the Kubernetes Job running the profiler.",
    )
    conditions: list[Condition] | None = Field(
        None,
        description=(
            "Conditions contains the latest observed conditions of the deployment request.\n"
            "Standard condition types include: Succeeded, Validation, Profiling, SpecGenerated, "
            "DeploymentReady."
        ),
    )
    profiling_results: ProfilingResultsStatus | None = Field(
        None,
        description=(
            "ProfilingResults contains the selected deployment configuration produced by profiling.\n"
            "Deprecated compatibility fields may remain on objects created by older releases."
        ),
    )
    deployment_info: DeploymentInfoStatus | None = Field(
        None,
        description=(
            "DeploymentInfo tracks the state of the deployed DynamoGraphDeployment.\n"
            "Populated when a DGD has been created (either via autoApply or manually)."
        ),
    )
    observed_generation: int | None = Field(
        None,
        description="ObservedGeneration is the most recent generation observed by the controller.",
    )


class DynamoGraphDeploymentScalingAdapter(KubeResource):
    """DynamoGraphDeploymentScalingAdapter provides a scaling interface for individual
    components within a DynamoGraphDeployment. It implements the Kubernetes scale
    subresource, enabling integration with HPA, KEDA, and custom autoscalers.
    The adapter acts as an intermediary between autoscalers and the DGD,
    ensuring that only the adapter controller modifies the DGD's component replicas.
    This prevents conflicts when multiple autoscaling mechanisms are in play.
    v1alpha1 remains the storage version; conversion between served versions is
    handled by the operator's conversion webhook
    (see api/v1alpha1/dynamographdeploymentscalingadapter\\_conversion.go).
    """

    spec: DynamoGraphDeploymentScalingAdapterSpec | None = Field(
        None,
        description="Desired state of this DynamoGraphDeploymentScalingAdapter.",
    )
    status: DynamoGraphDeploymentScalingAdapterStatus | None = Field(
        None,
        description="Observed state of this DynamoGraphDeploymentScalingAdapter, written by the operator.",
    )


class DynamoGraphDeploymentScalingAdapterSpec(ApiModel):
    """DynamoGraphDeploymentScalingAdapterSpec defines the desired state of a
    DynamoGraphDeploymentScalingAdapter.
    """

    replicas: int = Field(
        ...,
        description=(
            "replicas is the desired number of replicas for the target component.\n"
            "This field is modified by external autoscalers (HPA/KEDA/Planner) or\n"
            "manually by users."
        ),
        ge=0,
    )
    dgd_ref: DynamoGraphDeploymentComponentRef = Field(
        ...,
        description="dgdRef references the DynamoGraphDeployment and the specific component to scale.",
    )


class DynamoGraphDeploymentScalingAdapterStatus(ApiModel):
    """DynamoGraphDeploymentScalingAdapterStatus defines the observed state of a
    DynamoGraphDeploymentScalingAdapter.
    """

    replicas: int | None = Field(
        None,
        description=(
            "replicas is the current number of replicas for the target component.\n"
            "This is synced from the DGD's component replicas and is required for\n"
            "the scale subresource."
        ),
    )
    selector: str | None = Field(
        None,
        description=(
            "selector is a label selector string for the pods managed by this\n"
            "adapter. Required for HPA compatibility via the scale subresource."
        ),
    )
    last_scale_time: Time | None = Field(
        None,
        description="lastScaleTime is the last time the adapter scaled the target component.",
    )


class DynamoGraphDeploymentSpec(ApiModel):
    """DynamoGraphDeploymentSpec defines the desired state of a DynamoGraphDeployment."""

    annotations: dict[str, str] | None = Field(
        None,
        description=(
            "annotations to propagate to all child resources (PCS, DCD, Deployments,\n"
            "and pod templates). Component-level (`podTemplate`) values take precedence\n"
            "on conflict."
        ),
    )
    labels: dict[str, str] | None = Field(
        None,
        description="labels to propagate to all child resources. Same precedence rules as `annotations`.",
    )
    priority_class_name: str | None = Field(
        None,
        description=(
            "priorityClassName is the name of the PriorityClass to use for Grove PodCliqueSets.\n"
            "Requires the Grove pathway."
        ),
    )
    components: list[DynamoComponentDeploymentSharedSpec] | None = Field(
        None,
        description=(
            "components are the components deployed as part of this graph. Each entry\n"
            "carries its own stable logical `name`, and names must be unique within\n"
            "the list. Component types are generally repeatable, except `type: epp`\n"
            "which may appear at most once."
        ),
        max_length=25,
        json_schema_extra={
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "x-kubernetes-validations": [
                {
                    "rule": "self.filter(c, has(c.type) && c.type == 'epp').size() <= 1",
                    "message": "at most one component may have type epp",
                },
                {
                    "rule": "self.all(c1, self.filter(c2, c2.name.lowerAscii() == c1.name.lowerAscii())"
                    ".size() == 1)",
                    "message": "component names must be unique case-insensitively",
                },
            ],
        },
    )
    env: list[EnvVar] | None = Field(
        None,
        description=(
            "env is prepended to every component's environment. Component-specific\n"
            "env entries with the same name take precedence and may reference values\n"
            "from this list."
        ),
    )
    backend_framework: Literal["sglang", "vllm", "trtllm"] | None = Field(
        None,
        description='backendFramework specifies the backend framework (e.g. "sglang", "vllm", "trtllm").',
    )
    restart: Restart | None = Field(
        None,
        description="restart specifies the restart policy for the graph deployment.",
    )
    topology_constraint: SpecTopologyConstraint | None = Field(
        None,
        description=(
            "topologyConstraint is the deployment-level topology constraint. When\n"
            "set, `spec.topologyConstraint.clusterTopologyName` names the ClusterTopology\n"
            "CR to use. `spec.topologyConstraint.packDomain` is optional at this\n"
            "level and can be omitted when only components carry constraints.\n"
            "Components without their own `topologyConstraint` inherit from this value."
        ),
    )
    experimental: DynamoGraphDeploymentExperimentalSpec | None = Field(
        None,
        description=(
            "experimental groups graph-level preview features whose API shape and\n"
            "behavior may change in breaking ways between v1beta1 releases."
        ),
    )


class DynamoGraphDeploymentStatus(ApiModel):
    """DynamoGraphDeploymentStatus defines the observed state of a DynamoGraphDeployment.
    Unchanged between v1alpha1 and v1beta1.
    """

    observed_generation: int | None = Field(
        None,
        description="observedGeneration is the most recent generation observed by the controller.",
    )
    state: DGDState | None = Field(
        None,
        description="state is a high-level textual status of the graph deployment lifecycle.",
    )
    conditions: list[Condition] | None = Field(
        None,
        description=(
            "conditions contains the latest observed conditions of the graph deployment.\n"
            "Merged by type on patch updates."
        ),
    )
    components: dict[str, ComponentReplicaStatus] | None = Field(
        None,
        description="components contains per-component replica status information, keyed by component name.",
    )
    restart: RestartStatus | None = Field(
        None,
        description="restart contains the status of a graph-level restart.",
    )
    checkpoints: dict[str, ComponentCheckpointStatus] | None = Field(
        None,
        description="checkpoints contains per-component checkpoint status, keyed by component name.",
    )
    rolling_update: RollingUpdateStatus | None = Field(
        None,
        description=(
            "rollingUpdate tracks the progress of operator-managed rolling updates.\n"
            "Currently only supported for single-node, non-Grove deployments (DCD/Deployment)."
        ),
    )
    placement: PlacementStatus | None = Field(
        None,
        description=(
            "placement groups DGD-level scheduler placement signals (score, reporting\n"
            "state, and any future placement fields)."
        ),
    )


class EPPConfig(ApiModel):
    """EPPConfig contains configuration for EPP (Endpoint Picker Plugin) components."""

    config_map_ref: CoreConfigMapKeySelector | None = Field(
        None,
        description=(
            "configMapRef references a user-provided ConfigMap containing EPP\n"
            "configuration. Mutually exclusive with `config`."
        ),
    )
    config: KubeObject | None = Field(
        None,
        description=(
            "config allows specifying EPP `EndpointPickerConfig` directly as a\n"
            "structured object. The operator marshals this to YAML and creates a\n"
            "ConfigMap automatically. Mutually exclusive with `configMapRef`. One of\n"
            "`configMapRef` or `config` must be specified."
        ),
    )


class ExperimentalSpec(ApiModel):
    """ExperimentalSpec groups opt-in preview features whose API shape and behavior
    may change in breaking ways between v1beta1 releases (including disappearing
    without a name-preserving graduation path). Fields placed under
    `experimental` are explicitly NOT covered by the normal v1beta1 deprecation
    policy and should not be relied on for production workloads. Features
    graduate out of this block (and become first-class fields on the shared
    spec) once their API is considered stable.
    """

    gpu_memory_service: GPUMemoryServiceSpec | None = Field(
        None,
        description=(
            "gpuMemoryService configures the GPU Memory Service (GMS). When set, GPU\n"
            "access for GMS clients is managed via DRA."
        ),
    )
    failover: FailoverSpec | None = Field(
        None,
        description=(
            "failover configures active-passive GPU failover for this component.\n"
            "Requires `gpuMemoryService` to also be set, and `failover.mode` must\n"
            "match `gpuMemoryService.mode` (enforced by the validation webhook)."
        ),
    )
    checkpoint: ComponentCheckpointConfig | None = Field(
        None,
        description=(
            "checkpoint configures container-image snapshotting and restore for\n"
            "this component. Set `checkpoint.enabled: true` to opt in. Without\n"
            "checkpointRef, the DGD controller creates a DGD-scoped DynamoCheckpoint\n"
            "CR and later restores pods in the same DGD generation from that\n"
            "checkpoint. With checkpointRef, the DGD restores from that existing\n"
            "checkpoint instead. The user-facing shape of this field is still settling,\n"
            "which is why it lives under `experimental` in v1beta1 instead of at the\n"
            "top level."
        ),
    )


class FailoverSpec(ApiModel):
    """FailoverSpec configures active-passive failover for a worker component.
    The main container is cloned into two engine containers (active + standby)
    sharing GPUs via DRA, and the standby acquires the flock when the active
    engine fails. Failover requires that gpuMemoryService is also set, and that
    failover.mode matches gpuMemoryService.mode. Also requires the
    `nvidia.com/dynamo-kube-discovery-mode: container` annotation on the DGD.
    See ExperimentalSpec for the stability caveat.
    """

    mode: GPUMemoryServiceMode | None = Field(
        None,
        description=(
            "mode selects the failover deployment topology. Must match\n"
            "`spec.experimental.gpuMemoryService.mode` (or\n"
            "`spec.components[*].experimental.gpuMemoryService.mode` inside a\n"
            "DynamoGraphDeployment)."
        ),
    )
    num_shadows: int | None = Field(
        None,
        description=(
            "numShadows is the number of shadow (standby) engine containers per\n"
            "rank. Reserved for future use; the operator currently creates exactly\n"
            "one shadow."
        ),
        le=1,
        ge=1,
    )


class FeaturesSpec(ApiModel):
    """FeaturesSpec controls optional Dynamo platform features in the generated deployment."""

    planner: KubeObject | None = Field(
        None,
        description=(
            "Planner contains the raw Planner configuration passed to the Planner service.\n"
            "Its schema is defined by dynamo.planner.config.planner_config.PlannerConfig.\n"
            "DGDR passes this object through without field-level validation; the Planner\n"
            "service validates it at startup.\n"
            "The presence of this field (non-null) enables the planner in the generated DGD."
        ),
    )
    mocker: MockerSpec | None = Field(
        None,
        description="Mocker configures the simulated (mocker) backend for testing without GPUs.",
    )


class GMSClientPodSpec(ApiModel):
    """GMSClientPodSpec declares an additional GMS client pod for inter-pod GMS."""

    name: str | None = Field(
        None,
        description="name identifies this client pod.",
        max_length=63,
        min_length=1,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    )
    pod_template: PodTemplateSpec | None = Field(
        None,
        description="podTemplate configures the pod to run as a GMS client.",
    )


class GPUMemoryServiceSpec(ApiModel):
    """GPUMemoryServiceSpec configures the GPU Memory Service (GMS) for a
    worker component. The operator injects GMS wiring and replaces the main
    container's GPU resources with a DRA `ResourceClaim` for shared GPU access.
    See ExperimentalSpec for the stability caveat.
    """

    mode: GPUMemoryServiceMode | None = Field(
        None,
        description="mode selects the GMS deployment topology.",
    )
    device_class_name: str | None = Field(
        None,
        description="deviceClassName is the DRA `DeviceClass` to request GPUs from.",
    )
    extra_client_containers: list[ContainerName] | None = Field(
        None,
        description=(
            "extraClientContainers lists additional user-declared containers that should\n"
            "be wired as GMS clients in service pods. Checkpoint Job clients are declared\n"
            "under checkpoint.job.gmsClientContainers. In each rendered pod, only\n"
            "matching container names are wired; absent names are ignored."
        ),
    )
    extra_client_pods: list[GMSClientPodSpec] | None = Field(
        None,
        description=(
            "extraClientPods declares additional GMS client pods for inter-pod GMS. This field is\n"
            "reserved for future use and is rejected until inter-pod client orchestration is wired."
        ),
    )


class HardwareSpec(ApiModel):
    """HardwareSpec describes the GPU hardware for profiling and deployment.
    All fields are auto-detected from cluster GPU nodes when omitted
    (requires cluster-wide mode with GPU discovery enabled).
    gpuSku is a selector (restricts which nodes are considered);
    the other fields are pure overrides passed to the profiler.
    If all four fields are set, discovery is skipped.
    """

    gpu_sku: GPUSKUType | None = Field(
        None,
        description=(
            "GPUSKU selects the GPU type to target.\n"
            "When omitted, auto-detected by selecting the GPU with the highest\n"
            "node count, then highest VRAM. In mixed-GPU clusters, set this to\n"
            "choose which GPU type to use. Discovery and totalGpus are then\n"
            "restricted to nodes matching this SKU."
        ),
    )
    vram_mb: float | None = Field(
        None,
        description=(
            "VRAMMB is the VRAM per GPU in MiB.\nWhen omitted, auto-detected from cluster GPU nodes."
        ),
    )
    total_gpus: int | None = Field(
        None,
        description=(
            "TotalGPUs is the GPU budget for profiling and deployment.\n"
            "The profiler uses this to determine parallelism and replica count.\n"
            "When omitted, computed by counting GPUs on discovered nodes\n"
            "(filtered by gpuSku when set), temporarily capped at 32 to\n"
            "limit profiler search space. This cap may be removed in a future\n"
            "release. Set this field explicitly to override."
        ),
    )
    num_gpus_per_node: int | None = Field(
        None,
        description=(
            "NumGPUsPerNode is the number of GPUs per node.\n"
            "When omitted, auto-detected from cluster GPU nodes."
        ),
    )
    interconnect: str | None = Field(
        None,
        description=(
            "Interconnect describes the primary GPU-to-GPU interconnect *within a node*.\n"
            "Semantics / usage:\n"
            "- This is capability metadata used for profiling, planning, and deployment decisions.\n"
            "- It does NOT configure or enable any GPU interconnect; it only describes what is "
            "available/assumed.\n"
            "- When omitted, the operator may attempt best-effort discovery (currently distinguishes "
            '"nvlink"\n'
            'vs "pcie" based on DCGM NVLink link count). If discovery is unavailable, it may remain '
            "empty.\n"
            "Impact of wrong / missing values:\n"
            '- If set more optimistically than reality (e.g., "nvlink" when only PCIe is present), '
            "performance\n"
            "models may overestimate intra-node bandwidth and choose overly aggressive parallelism or"
            " layouts,\n"
            "resulting in degraded performance compared to expectations.\n"
            '- If set more pessimistically than reality (e.g., "pcie" when NVLink is present), the '
            "system may\n"
            "choose conservative plans and leave performance on the table.\n"
            "- If unset and undiscovered, consumers should treat the interconnect as unknown and fall"
            " back to\n"
            "conservative assumptions.\n"
            'Example values: "pcie", "nvlink". Other values may be accepted but may not be auto-'
            "detected."
        ),
    )
    rdma: bool | None = Field(
        None,
        description=(
            "RDMA indicates whether the cluster has RDMA-capable networking available for Dynamo data"
            " movement.\n"
            "Semantics / usage:\n"
            "- This is capability metadata used for profiling, planning, and deployment decisions.\n"
            "- It does NOT install, enable, or configure RDMA (e.g., drivers, SR-IOV, NVIDIA network "
            "operator,\n"
            "GPUDirect settings). It only expresses availability/intent.\n"
            "- When omitted, the operator may attempt best-effort discovery (e.g., via node labels "
            "indicating\n"
            "RDMA/SR-IOV capability and/or presence of NVIDIA network-operator RDMA components). If "
            "discovery\n"
            "is unavailable, it may remain unset.\n"
            "Impact of wrong / missing values:\n"
            "- False positive (set true when RDMA is not actually usable end-to-end) may cause plans "
            "or\n"
            "deployments to assume RDMA is available; depending on the runtime transport selection "
            "and\n"
            "fallback behavior, this can lead to connection/setup failures or performance "
            "regressions.\n"
            "- False negative (set false when RDMA is available) will typically avoid RDMA-optimized "
            "paths and\n"
            "fall back to non-RDMA transports, usually remaining functional but potentially slower.\n"
            "- If unset and undiscovered, consumers should treat RDMA availability as unknown and use\n"
            "conservative defaults / fallback transports."
        ),
    )


class KvTransferPolicy(ApiModel):
    """KvTransferPolicy configures topology-aware routing for KV-cache transfers
    between prefill and decode workers. This is a graph-wide concern placed
    under `spec.experimental` while the API is incubating.
    """

    cluster_topology_name: str | None = Field(
        None,
        description=(
            "clusterTopologyName references a Grove ClusterTopology CR. The operator\n"
            "reads the CR's topology levels and projects them through Dynamo-owned pod\n"
            "labels for worker topology metadata."
        ),
        min_length=1,
    )
    label_key: str | None = Field(
        None,
        description=(
            "labelKey is a Kubernetes node label key (e.g.\n"
            '"topology.kubernetes.io/zone") whose value identifies the topology\n'
            "domain for each worker. The operator copies the node label onto worker\n"
            "pods so the runtime can publish it as worker metadata. The label\n"
            "should correspond to the topology level named in `domain`."
        ),
        max_length=317,
        min_length=1,
        pattern=r"^(([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$",
    )
    domain: TopologyDomain | None = Field(
        None,
        description=(
            "domain is the logical name for the topology level to enforce\n"
            '(e.g. "zone", "rack"). The router uses this to match workers that\n'
            "share the same value for the label identified by `labelKey`."
        ),
    )
    enforcement: KvTransferEnforcement | None = Field(
        None,
        description=(
            "enforcement controls how the selected prefill worker's topology is\n"
            'applied to decode routing. "required" only allows decode workers in the\n'
            'same topology domain as the selected prefill worker. "preferred" keeps\n'
            "all decode workers eligible, but biases selection toward workers in the\n"
            'same topology domain. Defaults to "required".'
        ),
    )
    preferred_weight: float | None = Field(
        None,
        description=(
            "preferredWeight is required and used only when enforcement is\n"
            '"preferred". Higher values create a stronger same-domain routing\n'
            "preference, but do not guarantee same-domain selection. The value is not\n"
            "a probability; worker selection still depends on load and other routing\n"
            "inputs. A value of 0 disables the topology preference; 1 is the strongest\n"
            "supported preference."
        ),
        le=1,
        ge=0,
    )


class MockerSpec(ApiModel):
    """MockerSpec configures the simulated (mocker) backend."""

    enabled: bool | None = Field(
        None,
        description=(
            "Enabled indicates whether to deploy mocker workers instead of real inference workers.\n"
            "Useful for large-scale testing without GPUs."
        ),
    )


class ModelCacheSpec(ApiModel):
    """ModelCacheSpec references a PVC containing pre-downloaded model weights."""

    pvc_name: str | None = Field(
        None,
        description=(
            "PVCName is the name of the PersistentVolumeClaim containing model weights.\n"
            "The PVC must exist in the same namespace as the DGDR."
        ),
    )
    pvc_model_path: str | None = Field(
        None,
        description=(
            "PVCModelPath is the path to the model checkpoint directory within the PVC\n"
            '(e.g. "deepseek-r1" or "models/Llama-3.1-405B-FP8").'
        ),
    )
    pvc_mount_path: str | None = Field(
        None,
        description="PVCMountPath is the mount path for the PVC inside the container.",
    )


class ModelReference(ApiModel):
    """ModelReference identifies a model served by a component.
    When specified, a headless service is created for endpoint discovery.
    """

    name: str = Field(
        ...,
        description='name is the base model identifier (e.g. "llama-3-70b-instruct-v1").',
        min_length=1,
    )
    revision: str | None = Field(
        None,
        description="revision is the model revision/version.",
    )


class MultinodeSpec(ApiModel):
    """MultinodeSpec configures a multinode component."""

    node_count: int | None = Field(
        None,
        description=(
            "nodeCount is the number of nodes to deploy for the multinode component.\n"
            "Total GPUs used is `nodeCount * container GPU request`."
        ),
        ge=2,
    )


class OverridesSpec(ApiModel):
    """OverridesSpec allows customizing the profiling job and the generated DynamoGraphDeployment."""

    profiling_job: KubeObject | None = Field(
        None,
        description=(
            "ProfilingJob allows overriding the profiling Job specification.\n"
            "Fields set here are merged into the controller-generated Job spec."
        ),
    )
    dgd: EmbeddedResource | None = Field(
        None,
        description=(
            "DGD provides a partial, versioned DynamoGraphDeployment override for the\n"
            "profiler-generated deployment. Set apiVersion to nvidia.com/v1alpha1 or\n"
            "nvidia.com/v1beta1 and kind to DynamoGraphDeployment.\n"
            "The profiler merges the override using the schema for its declared version.\n"
            "If the generated DGD uses another supported version, the complete DGD is\n"
            "converted before the merge and converted back afterward. The final DGD\n"
            "selected or created by a DGDR is nvidia.com/v1beta1.\n"
            "The override can update DGD fields, but topology entries are limited to\n"
            "services or components already present in the generated DGD. Metadata labels\n"
            "and annotations are merged, metadata.name selects the final DGD name, and\n"
            "other identity or runtime metadata is ignored.\n"
            "V1alpha1 worker argument lists retain legacy append behavior. V1beta1 follows\n"
            "structural schema merge behavior, including map-list merging and atomic-list\n"
            "replacement.\n"
            "The raw embedded resource preserves either supported schema. The API server\n"
            "validates that it has apiVersion and kind; override processing validates the\n"
            "DGD kind, supported version, and field schema."
        ),
    )


class ParetoConfig(ApiModel):
    """ParetoConfig is retained for compatibility with status objects produced by
    older profiler releases.
    Deprecated: The profiler no longer generates Pareto configurations.
    """

    config: RawExtension | None = Field(
        None,
        description="Config is the full deployment configuration for this Pareto point.",
    )


class PlacementStatus(ApiModel):
    """PlacementStatus groups DGD-level scheduler placement fields under a single
    status object so future placement signals (e.g. scheduler contract version,
    last-report timestamp, per-unit reports) can be added without a schema break.
    The score source is an open question in DEP #10064 (Grove mirror, typed Grove
    scheduler API, or unstructured provider). Until a source is selected and
    implemented, the DGD controller does not write this field; the schema and
    conversion are landed here so downstream consumers can rely on the shape.
    """

    score: float | None = Field(
        None,
        description=(
            "score is the DGD-level scheduler placement score aggregated from\n"
            "relevant scheduler placement units. Normalized to [0.0, 1.0] where higher\n"
            "is better and 1.0 represents the best possible placement. Aggregation\n"
            "uses the minimum across placement units so the value is a worst-placement\n"
            "signal for the graph. Scores are only comparable across DGDs that share\n"
            "the same scheduler scoring contract and version."
        ),
        le=1,
        ge=0,
    )
    state: PlacementScoreState | None = Field(
        None,
        description=(
            "state indicates placement score reporting state. See PlacementScoreState\n"
            "for the semantics of each value."
        ),
    )


class ProfilingResultsStatus(ApiModel):
    """ProfilingResultsStatus contains the output of the profiling process."""

    pareto: list[ParetoConfig] | None = Field(
        None,
        description=(
            "Pareto is retained for compatibility with existing status objects.\n"
            "Deprecated: The controller no longer populates this field."
        ),
    )
    selected_config: RawExtension | None = Field(
        None,
        description=(
            "SelectedConfig is the recommended configuration chosen by the profiler\n"
            "based on the SLA targets. This is the configuration used for deployment\n"
            "when autoApply is true."
        ),
    )


class Restart(ApiModel):
    """Restart specifies the restart policy for a graph deployment."""

    id: str = Field(
        ...,
        description=(
            "id is an arbitrary string that triggers a restart when changed. Any\n"
            "modification to this value initiates a restart of the graph deployment\n"
            "according to the configured strategy."
        ),
        min_length=1,
    )
    strategy: RestartStrategy | None = Field(
        None,
        description="strategy specifies the restart strategy for the graph deployment.",
    )


class RestartStatus(ApiModel):
    """RestartStatus contains the status of a graph-level restart."""

    observed_id: str | None = Field(
        None,
        alias="observedID",
        description=(
            "observedID is the restart ID currently being processed. Matches `Restart.id` in the spec."
        ),
    )
    phase: RestartPhase | None = Field(
        None,
        description="phase is the phase of the restart.",
    )
    in_progress: list[str] | None = Field(
        None,
        description="inProgress contains the names of the components currently being restarted.",
    )


class RestartStrategy(ApiModel):
    """RestartStrategy defines how components are restarted."""

    type: RestartStrategyType | None = Field(
        None,
        description="type specifies the restart strategy type.",
    )
    order: list[str] | None = Field(
        None,
        description=(
            "order is the complete ordered set of component names for sequential\n"
            "restarts. Omit or leave empty to use the controller's default order.\n"
            "This field must not be set for parallel restarts."
        ),
    )


class RollingUpdateStatus(ApiModel):
    """RollingUpdateStatus tracks the progress of an operator-managed rolling update."""

    phase: RollingUpdatePhase | None = Field(
        None,
        description="phase indicates the current phase of the rolling update.",
    )
    start_time: Time | None = Field(
        None,
        description="startTime is when the rolling update began.",
    )
    end_time: Time | None = Field(
        None,
        description="endTime is when the rolling update completed (successfully or failed).",
    )
    updated_components: list[str] | None = Field(
        None,
        description=("updatedComponents is the list of components that have completed the\nrolling update."),
    )


class SLASpec(ApiModel):
    """SLASpec defines the service-level agreement targets for profiling optimization."""

    ttft: float | None = Field(
        None,
        description="TTFT is the Time To First Token target in milliseconds.",
    )
    itl: float | None = Field(
        None,
        description="ITL is the Inter-Token Latency target in milliseconds.",
    )
    e2e_latency: float | None = Field(
        None,
        alias="e2eLatency",  # upstream's JSON name (the generated camelCase would be e2ELatency)
        description=(
            "E2ELatency is the target end-to-end request latency in milliseconds.\n"
            "Alternative to specifying TTFT + ITL."
        ),
    )
    optimization_type: OptimizationType | None = Field(
        None,
        description=(
            "OptimizationType is the optimization target for SLA profiling.\n"
            "Valid values: latency, throughput."
        ),
    )


class ScalingAdapter(ApiModel):
    """ScalingAdapter opts a component into using the DynamoGraphDeploymentScalingAdapter
    (DGDSA). When `scalingAdapter` is set on a component (even as an empty
    object, `scalingAdapter: {}`), the DGDSA is created and owns the `replicas`
    field so that external autoscalers (HPA/KEDA/Planner) can drive scaling via
    the Scale subresource. Omitting the field opts the component out.
    """


class SpecTopologyConstraint(ApiModel):
    """SpecTopologyConstraint defines deployment-level topology placement requirements."""

    cluster_topology_name: str | None = Field(
        None,
        description=(
            "clusterTopologyName is the name of the ClusterTopology resource that\n"
            "defines the topology hierarchy for this deployment."
        ),
        min_length=1,
    )
    pack_domain: TopologyDomain | None = Field(
        None,
        description=(
            "packDomain is the default topology domain to pack pods within.\n"
            "Optional; omit when only components carry constraints."
        ),
    )


class TopologyConstraint(ApiModel):
    """TopologyConstraint defines component-level topology placement requirements.
    The topology profile is inherited from the deployment-level
    `SpecTopologyConstraint`.
    """

    pack_domain: TopologyDomain | None = Field(
        None,
        description=(
            "packDomain is the topology domain to pack pods within. Must match a\n"
            "domain defined in the referenced ClusterTopology CR."
        ),
    )


class WorkloadSpec(ApiModel):
    """WorkloadSpec defines the workload characteristics for SLA-based profiling."""

    isl: int | None = Field(
        None,
        description="ISL is the Input Sequence Length (number of tokens).",
    )
    osl: int | None = Field(
        None,
        description="OSL is the Output Sequence Length (number of tokens).",
    )
    concurrency: float | None = Field(
        None,
        description=(
            "Concurrency is the target concurrency level.\n"
            "Required (or RequestRate) when the planner is disabled."
        ),
    )
    request_rate: float | None = Field(
        None,
        description=(
            "RequestRate is the target request rate (req/s).\n"
            "Required (or Concurrency) when the planner is disabled."
        ),
    )


class DynamoComponentDeploymentStatus(DynamoComponentDeploymentStatusBase):
    """Observed state of a v1beta1 DynamoComponentDeployment; replica status is per ``component``."""

    component: ComponentReplicaStatus | None = Field(
        None, description="component contains replica status information for this component."
    )
