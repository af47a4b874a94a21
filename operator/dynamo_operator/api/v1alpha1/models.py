"""nvidia.com/v1alpha1: the deprecated API surface, still the storage version of every kind.

Generated once from the API reference and maintained by hand since: field names are the exact JSON
names, descriptions are the reference's (they become ``kubectl explain`` text), and every validation
marker of the reference is a pydantic constraint that :mod:`dynamo_operator.api.crdgen` turns into the
matching OpenAPI keyword.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from dynamo_operator.api.meta import (
    ApiModel,
    Condition,
    Container,
    ContainerName,
    CoreConfigMapKeySelector,
    EmbeddedResource,
    EnvVar,
    KubeObject,
    KubeResource,
    PodSpec,
    PodTemplateSpec,
    Probe,
    Quantity,
    ResourceClaim,
    ResourceRequirements,
    Time,
    Toleration,
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
    "PVC",
    "Autoscaling",
    "CheckpointDeletionPolicy",
    "CheckpointMode",
    "CheckpointStartupPolicy",
    "ComponentKind",
    "ConfigMapKeySelector",
    "DGDRState",
    "DGDState",
    "DeploymentOverridesSpec",
    "DeploymentStatus",
    "DynamoCheckpoint",
    "DynamoCheckpointIdentity",
    "DynamoCheckpointJobConfig",
    "DynamoCheckpointPhase",
    "DynamoCheckpointSpec",
    "DynamoCheckpointStatus",
    "DynamoCheckpointStorageType",
    "DynamoComponentDeployment",
    "DynamoComponentDeploymentSharedSpec",
    "DynamoComponentDeploymentSpec",
    "DynamoComponentDeploymentStatus",
    "DynamoGraphDeployment",
    "DynamoGraphDeploymentExperimentalSpec",
    "DynamoGraphDeploymentRequest",
    "DynamoGraphDeploymentRequestSpec",
    "DynamoGraphDeploymentRequestStatus",
    "DynamoGraphDeploymentScalingAdapter",
    "DynamoGraphDeploymentScalingAdapterSpec",
    "DynamoGraphDeploymentScalingAdapterStatus",
    "DynamoGraphDeploymentServiceRef",
    "DynamoGraphDeploymentSpec",
    "DynamoGraphDeploymentStatus",
    "DynamoModel",
    "DynamoModelSpec",
    "DynamoModelStatus",
    "DynamoWorkerMetadata",
    "DynamoWorkerMetadataSpec",
    "EPPConfig",
    "EndpointInfo",
    "ExtraPodMetadata",
    "ExtraPodSpec",
    "FailoverSpec",
    "FrontendSidecarSpec",
    "GMSClientPodSpec",
    "GPUMemoryServiceMode",
    "GPUMemoryServiceSpec",
    "IngressSpec",
    "IngressTLSSpec",
    "KvTransferEnforcement",
    "KvTransferPolicy",
    "ModelReference",
    "ModelSource",
    "MultinodeSpec",
    "PlacementScoreState",
    "PlacementStatus",
    "PodReference",
    "PodSnapshot",
    "PodSnapshotContent",
    "PodSnapshotContentSource",
    "PodSnapshotContentSpec",
    "PodSnapshotContentStatus",
    "PodSnapshotReference",
    "PodSnapshotSource",
    "PodSnapshotSpec",
    "PodSnapshotStatus",
    "ProfilingConfigSpec",
    "ResourceItem",
    "Resources",
    "Restart",
    "RestartPhase",
    "RestartStatus",
    "RestartStrategy",
    "RestartStrategyType",
    "RollingUpdatePhase",
    "RollingUpdateStatus",
    "ScalingAdapter",
    "ServiceCheckpointConfig",
    "ServiceCheckpointJobConfig",
    "ServiceCheckpointStatus",
    "ServiceReplicaStatus",
    "SharedMemorySpec",
    "SpecTopologyConstraint",
    "TopologyConstraint",
    "TopologyDomain",
    "VolumeMount",
]

# DGDRState (no description in the API reference).
DGDRState = Literal[
    "Initializing", "Pending", "Profiling", "Deploying", "Ready", "DeploymentDeleted", "Failed"
]


# DynamoCheckpointPhase represents the current phase of the checkpoint lifecycle
DynamoCheckpointPhase = Literal["Pending", "Creating", "Ready", "Failed"]


# Deprecated: StorageType is retained for compatibility with older DynamoCheckpoint status consumers.
# The current checkpoint flow publishes PVC-backed artifacts discovered from the snapshot-agent
# DaemonSet.
DynamoCheckpointStorageType = Literal["pvc", "s3", "oci"]


# GPUMemoryServiceMode selects the GMS deployment topology.
GPUMemoryServiceMode = Literal["intraPod", "interPod"]


class Autoscaling(ApiModel):
    """Deprecated: This field is deprecated and ignored. Use DynamoGraphDeploymentScalingAdapter
    with HPA, KEDA, or Planner for autoscaling instead. See docs/kubernetes/autoscaling.md
    for migration guidance. This field will be removed in a future API version.
    """

    enabled: bool | None = Field(
        None,
        description="Deprecated: This field is ignored.",
    )
    min_replicas: int | None = Field(
        None,
        description="Deprecated: This field is ignored.",
    )
    max_replicas: int | None = Field(
        None,
        description="Deprecated: This field is ignored.",
    )
    behavior: KubeObject | None = Field(
        None,
        description="Deprecated: This field is ignored.",
    )
    metrics: list[KubeObject] | None = Field(
        None,
        description="Deprecated: This field is ignored.",
    )


class ConfigMapKeySelector(ApiModel):
    """ConfigMapKeySelector selects a specific key from a ConfigMap.
    Used to reference external configuration data stored in ConfigMaps.
    """

    name: str = Field(
        ...,
        description="Name of the ConfigMap containing the desired data.",
    )
    key: str | None = Field(
        None,
        description='Key in the ConfigMap to select. If not specified, defaults to "disagg.yaml".',
    )


class DeploymentOverridesSpec(ApiModel):
    """DeploymentOverridesSpec allows users to customize metadata for auto-created DynamoGraphDeployments.
    When autoApply is enabled, these overrides are applied to the generated DGD resource.
    """

    name: str | None = Field(
        None,
        description=(
            "Name is the desired name for the created DynamoGraphDeployment.\n"
            "If not specified, defaults to the DGDR name."
        ),
    )
    namespace: str | None = Field(
        None,
        description=(
            "Namespace is the desired namespace for the created DynamoGraphDeployment.\n"
            "If not specified, defaults to the DGDR namespace."
        ),
    )
    labels: dict[str, str] | None = Field(
        None,
        description=(
            "Labels are additional labels to add to the DynamoGraphDeployment metadata.\n"
            "These are merged with auto-generated labels from the profiling process."
        ),
    )
    annotations: dict[str, str] | None = Field(
        None,
        description="Annotations are additional annotations to add to the DynamoGraphDeployment metadata.",
    )
    workers_image: str | None = Field(
        None,
        description=(
            "WorkersImage specifies the container image to use for DynamoGraphDeployment worker "
            "components.\n"
            "This image is used for both temporary DGDs created during online profiling and the final"
            " DGD.\n"
            "If omitted, the image from the base config file (e.g., disagg.yaml) is used.\n"
            'Example: "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.2.1"'
        ),
    )


class DeploymentStatus(ApiModel):
    """DeploymentStatus tracks the state of an auto-created DynamoGraphDeployment.
    This status is populated when autoApply is enabled and a DGD is created.
    """

    name: str | None = Field(
        None,
        description="Name is the name of the created DynamoGraphDeployment.",
    )
    namespace: str | None = Field(
        None,
        description="Namespace is the namespace of the created DynamoGraphDeployment.",
    )
    state: DGDState | None = Field(
        None,
        description=(
            "State is the current state of the DynamoGraphDeployment.\n"
            "This value is mirrored from the DGD's status.state field."
        ),
    )
    created: bool | None = Field(
        None,
        description=(
            "Created indicates whether the DGD has been successfully created.\n"
            "Used to prevent recreation if the DGD is manually deleted by users."
        ),
    )


class DynamoCheckpoint(KubeResource):
    """DynamoCheckpoint is the Schema for the dynamocheckpoints API
    It represents a container checkpoint that can be used to restore pods to a warm state
    """

    spec: DynamoCheckpointSpec | None = Field(
        None,
        description="Desired state of this DynamoCheckpoint.",
    )
    status: DynamoCheckpointStatus | None = Field(
        None,
        description="Observed state of this DynamoCheckpoint, written by the operator.",
    )


class DynamoCheckpointIdentity(ApiModel):
    """Deprecated: legacy identity metadata. Keep it only where v1alpha1 still
    requires spec.identity; omit DGD-managed identity and use checkpointRef for
    explicit restores.
    """

    model: str = Field(
        ...,
        description=(
            'Model is the model identifier (e.g., "meta-llama/Llama-3-70B")\n'
            "Deprecated: legacy spec.identity only."
        ),
    )
    backend_framework: Literal["vllm", "sglang", "trtllm"] = Field(
        ...,
        description=(
            "BackendFramework is the runtime framework (vllm, sglang, trtllm)\n"
            "Deprecated: legacy spec.identity only."
        ),
    )
    dynamo_version: str | None = Field(
        None,
        description=(
            "DynamoVersion is the Dynamo platform version (optional).\nDeprecated: legacy spec.identity only."
        ),
    )
    tensor_parallel_size: int | None = Field(
        None,
        description=(
            "TensorParallelSize is the tensor parallel configuration.\n"
            "Deprecated: checkpoint launch uses the pod template instead."
        ),
        ge=1,
    )
    pipeline_parallel_size: int | None = Field(
        None,
        description=(
            "PipelineParallelSize is the pipeline parallel configuration.\n"
            "Deprecated: checkpoint launch uses the pod template instead."
        ),
        ge=1,
    )
    dtype: str | None = Field(
        None,
        description=(
            "Dtype is the data type (fp16, bf16, fp8, etc.).\nDeprecated: legacy spec.identity only."
        ),
    )
    max_model_len: int | None = Field(
        None,
        description=("MaxModelLen is the maximum sequence length.\nDeprecated: legacy spec.identity only."),
        ge=1,
    )
    extra_parameters: dict[str, str] | None = Field(
        None,
        description=(
            "ExtraParameters are additional parameters that affect the checkpoint hash.\n"
            "Use for any framework-specific or custom parameters not covered above.\n"
            "Deprecated: legacy spec.identity only."
        ),
    )


class DynamoCheckpointJobConfig(ApiModel):
    """DynamoCheckpointJobConfig defines the configuration for the checkpoint creation Job"""

    pod_template_spec: PodTemplateSpec = Field(
        ...,
        description=(
            "PodTemplateSpec allows customizing the checkpoint Job pod\n"
            "This should include the container that runs the workload to be checkpointed\n"
            "and any workload/runtime env, service account, GMS, or DRA wiring needed\n"
            "by that container. Auto-created checkpoints from DynamoGraphDeployment\n"
            "render Dynamo defaults before creating the DynamoCheckpoint."
        ),
    )
    target_container_name: ContainerName | None = Field(
        None,
        description="TargetContainerName is the container in PodTemplateSpec to snapshot.",
    )
    shared_memory: SharedMemorySpec | None = Field(
        None,
        description=(
            "SharedMemory controls the tmpfs mounted at /dev/shm for the checkpoint Job pod.\n"
            "When omitted, checkpoint Jobs use the same default 8Gi tmpfs as Dynamo components."
        ),
    )
    active_deadline_seconds: int | None = Field(
        None,
        description="ActiveDeadlineSeconds specifies the maximum time the Job can run",
        ge=1,
    )
    backoff_limit: int | None = Field(
        None,
        description="Deprecated: BackoffLimit is ignored. Checkpoint Jobs never retry.",
        ge=0,
    )
    ttl_seconds_after_finished: int | None = Field(
        None,
        description=(
            "Deprecated: TTLSecondsAfterFinished is ignored. The operator deletes checkpoint\n"
            "Jobs after recording their terminal outcome."
        ),
        ge=0,
    )


class DynamoCheckpointSpec(ApiModel):
    """DynamoCheckpointSpec defines the desired state of DynamoCheckpoint"""

    identity: DynamoCheckpointIdentity = Field(
        ...,
        description=(
            "Deprecated: required by v1alpha1 for standalone checkpoints. Auto\n"
            "checkpoints synthesize it; checkpointRef restores use the referenced CR."
        ),
    )
    gpu_memory_service: GPUMemoryServiceSpec | None = Field(
        None,
        description=(
            "GPUMemoryService records checkpoint-time GPU Memory Service metadata for\n"
            "a prepared checkpoint Job pod. The DynamoCheckpoint controller does not\n"
            "inject GMS/DRA resources; auto-created checkpoints from\n"
            "DynamoGraphDeployment prepare the pod template before creating this object.\n"
            "Manual GMS-enabled checkpoints must provide the prepared pod template; the\n"
            "controller fails the checkpoint if the required GMS/DRA wiring is missing.\n"
            "This field is intentionally outside spec.identity, so it does not affect\n"
            "the checkpoint identity hash or deduplication."
        ),
    )
    job: DynamoCheckpointJobConfig = Field(
        ...,
        description="Job defines the configuration for the checkpoint creation Job",
    )


class DynamoCheckpointStatus(ApiModel):
    """DynamoCheckpointStatus defines the observed state of DynamoCheckpoint"""

    phase: DynamoCheckpointPhase | None = Field(
        None,
        description="Phase represents the current phase of the checkpoint lifecycle",
    )
    checkpoint_id: str | None = Field(
        None,
        alias="checkpointID",
        description="CheckpointID is the artifact ID used by the snapshot protocol.",
    )
    identity_hash: str | None = Field(
        None,
        description=(
            "IdentityHash is the computed hash of the checkpoint identity.\n"
            "Deprecated: use CheckpointID. This field is retained for compatibility\n"
            "with older status consumers."
        ),
    )
    location: str | None = Field(
        None,
        description=(
            "Deprecated: Location is ignored and no longer populated. It is retained\n"
            "only so older objects continue to validate."
        ),
    )
    storage_type: DynamoCheckpointStorageType | None = Field(
        None,
        description=(
            "Deprecated: StorageType is ignored and no longer populated. It is retained\n"
            "only so older objects continue to validate."
        ),
    )
    job_name: str | None = Field(
        None,
        description="JobName is the name of the checkpoint creation Job",
    )
    pod_snapshot_name: str | None = Field(
        None,
        description=(
            "PodSnapshotName is the name of the PodSnapshot this checkpoint created to drive capture."
            " It is\n"
            "the authoritative pointer to the snapshot (which is otherwise located by label, not by\n"
            "reconstructing its name) and lets the controller distinguish a never-created snapshot "
            "(empty)\n"
            "from one that was created and later went missing (set, but no longer found)."
        ),
    )
    created_at: Time | None = Field(
        None,
        description="CreatedAt is the timestamp when the checkpoint became ready",
    )
    message: str | None = Field(
        None,
        description="Message provides additional information about the current state",
    )
    conditions: list[Condition] | None = Field(
        None,
        description="DEPRECATED: Conditions are deprecated. Use status.phase instead.",
    )


class DynamoComponentDeployment(KubeResource):
    """DynamoComponentDeployment is the Schema for the dynamocomponentdeployments API"""

    spec: DynamoComponentDeploymentSpec | None = Field(
        None,
        description="Spec defines the desired state for this Dynamo component deployment.",
    )
    status: DynamoComponentDeploymentStatus | None = Field(
        None,
        description="Status reflects the current observed state of the component deployment.",
    )


class DynamoComponentDeploymentSharedSpec(ApiModel):
    """DynamoComponentDeploymentSharedSpec (no description in the API reference)."""

    annotations: dict[str, str] | None = Field(
        None,
        description=(
            "Annotations to add to generated Kubernetes resources for this component\n"
            "(such as Pod, Service, and Ingress when applicable)."
        ),
    )
    labels: dict[str, str] | None = Field(
        None,
        description="Labels to add to generated Kubernetes resources for this component.",
    )
    service_name: str | None = Field(
        None,
        description="The name of the component",
    )
    component_type: str | None = Field(
        None,
        description='ComponentType indicates the role of this component (for example, "main").',
    )
    sub_component_type: str | None = Field(
        None,
        description='SubComponentType indicates the sub-role of this component (for example, "prefill").',
    )
    dynamo_namespace: str | None = Field(
        None,
        description=(
            "Deprecated: not used; the Dynamo namespace is derived from the Kubernetes namespace and "
            "the DynamoGraphDeployment name. Accepted so manifests written for older upstream "
            "releases still apply."
        ),
    )
    global_dynamo_namespace: bool | None = Field(
        None,
        description=(
            "GlobalDynamoNamespace indicates that the Component will be placed in the global Dynamo namespace"
        ),
    )
    resources: Resources | None = Field(
        None,
        description=(
            "Resources requested and limits for this component, including CPU, memory,\n"
            "GPUs/devices, and any runtime-specific resources."
        ),
    )
    autoscaling: Autoscaling | None = Field(
        None,
        description=(
            "Deprecated: This field is deprecated and ignored. Use "
            "DynamoGraphDeploymentScalingAdapter\n"
            "with HPA, KEDA, or Planner for autoscaling instead. See docs/kubernetes/autoscaling.md\n"
            "for migration guidance. This field will be removed in a future API version."
        ),
    )
    envs: list[EnvVar] | None = Field(
        None,
        description="Envs defines additional environment variables to inject into the component containers.",
    )
    env_from_secret: str | None = Field(
        None,
        description=(
            "EnvFromSecret references a Secret whose key/value pairs will be exposed as\n"
            "environment variables in the component containers."
        ),
    )
    volume_mounts: list[VolumeMount] | None = Field(
        None,
        description=(
            "VolumeMounts references PVCs defined at the top level for volumes to be mounted by the "
            "component."
        ),
    )
    ingress: IngressSpec | None = Field(
        None,
        description="Ingress config to expose the component outside the cluster (or through a service mesh).",
    )
    model_ref: ModelReference | None = Field(
        None,
        description=(
            "ModelRef references a model that this component serves\n"
            "When specified, a headless service will be created for endpoint discovery"
        ),
    )
    shared_memory: SharedMemorySpec | None = Field(
        None,
        description="SharedMemory controls the tmpfs mounted at /dev/shm (enable/disable and size).",
    )
    extra_pod_metadata: ExtraPodMetadata | None = Field(
        None,
        description="ExtraPodMetadata adds labels/annotations to the created Pods.",
    )
    extra_pod_spec: ExtraPodSpec | None = Field(
        None,
        description=(
            "ExtraPodSpec allows to override the main pod spec configuration.\n"
            "It is a k8s standard PodSpec. It also contains a MainContainer (standard k8s Container) "
            "field\n"
            "that allows overriding the main container configuration."
        ),
    )
    liveness_probe: Probe | None = Field(
        None,
        description="LivenessProbe to detect and restart unhealthy containers.",
    )
    readiness_probe: Probe | None = Field(
        None,
        description="ReadinessProbe to signal when the container is ready to receive traffic.",
    )
    replicas: int | None = Field(
        None,
        description=(
            "Replicas is the desired number of Pods for this component.\n"
            "When scalingAdapter is enabled, this field is managed by the\n"
            "DynamoGraphDeploymentScalingAdapter and should not be modified directly."
        ),
        ge=0,
    )
    min_available: int | None = Field(
        None,
        description=(
            "MinAvailable maps to Grove PodClique minAvailable for single-node and\n"
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
        description="Multinode is the configuration for multinode components.",
    )
    scaling_adapter: ScalingAdapter | None = Field(
        None,
        description=(
            "ScalingAdapter configures whether this service uses the "
            "DynamoGraphDeploymentScalingAdapter.\n"
            "When enabled, replicas are managed via DGDSA and external autoscalers can scale\n"
            "the service using the Scale subresource. When disabled, replicas can be modified "
            "directly."
        ),
    )
    epp_config: EPPConfig | None = Field(
        None,
        description=(
            "EPPConfig defines EPP-specific configuration options for Endpoint Picker Plugin "
            "components.\n"
            'Only applicable when ComponentType is "epp".'
        ),
    )
    frontend_sidecar: FrontendSidecarSpec | None = Field(
        None,
        description=(
            "FrontendSidecar configures an auto-generated frontend sidecar container.\n"
            "When specified, the operator injects a fully configured frontend container\n"
            "with all standard Dynamo environment variables, health probes, and ports.\n"
            "This eliminates the need to manually specify these in extraPodSpec.containers. (GAIE)"
        ),
    )
    checkpoint: ServiceCheckpointConfig | None = Field(
        None,
        description=(
            "Checkpoint configures container checkpointing for this service.\n"
            "When enabled, pods can be restored from a checkpoint files for faster cold start."
        ),
    )
    topology_constraint: TopologyConstraint | None = Field(
        None,
        description=(
            "TopologyConstraint for this service. packDomain is required.\n"
            "When both this and spec.topologyConstraint.packDomain are set, packDomain\n"
            "must be narrower than or equal to the spec-level packDomain."
        ),
    )
    gpu_memory_service: GPUMemoryServiceSpec | None = Field(
        None,
        description=(
            "GPUMemoryService configures the GPU Memory Service (GMS) sidecar.\n"
            "When enabled, a GMS sidecar is injected and GPU access is managed via DRA."
        ),
    )
    failover: FailoverSpec | None = Field(
        None,
        description=(
            "Failover configures GMS (GPU Memory Service) failover for this service.\n"
            "For intraPod mode: the main container is cloned into two engine containers (active + "
            "standby).\n"
            "For interPod mode: the operator creates a dedicated GMS weight server pod and\n"
            "multiple engine pods per rank that share GPUs via DRA resource claims."
        ),
    )


class DynamoComponentDeploymentSpec(DynamoComponentDeploymentSharedSpec):
    """DynamoComponentDeploymentSpec defines the desired state of DynamoComponentDeployment"""

    backend_framework: Literal["sglang", "vllm", "trtllm"] | None = Field(
        None,
        description='BackendFramework specifies the backend framework (e.g., "sglang", "vllm", "trtllm")',
    )


class DynamoGraphDeployment(KubeResource):
    """DynamoGraphDeployment is the Schema for the dynamographdeployments API."""

    spec: DynamoGraphDeploymentSpec | None = Field(
        None,
        description="Spec defines the desired state for this graph deployment.",
    )
    status: DynamoGraphDeploymentStatus | None = Field(
        None,
        description="Status reflects the current observed state of this graph deployment.",
    )


class DynamoGraphDeploymentExperimentalSpec(ApiModel):
    """DynamoGraphDeploymentExperimentalSpec groups graph-level opt-in preview
    features. Component-level experimental features are represented separately
    on component specs.
    """

    kv_transfer_policy: KvTransferPolicy | None = Field(
        None,
        description=(
            "KvTransferPolicy configures topology-aware routing for KV-cache\n"
            "transfers between prefill and decode workers."
        ),
    )


class DynamoGraphDeploymentRequest(KubeResource):
    """DynamoGraphDeploymentRequest is the Schema for the dynamographdeploymentrequests API.
    It serves as the primary interface for users to request model deployments with
    specific performance and resource constraints, enabling SLA-driven deployments.
    Lifecycle:
    1. Initializing → Pending: Validates spec and prepares for profiling
    2. Pending → Profiling: Creates and runs profiling job (online or AIC)
    3. Profiling → Ready/Deploying: Generates DGD spec after profiling completes
    4. Deploying → Ready: When autoApply=true, monitors DGD until Ready
    5. Ready: Terminal state when DGD is operational or spec is available
    6. DeploymentDeleted: Terminal state when auto-created DGD is manually deleted
    The spec becomes immutable once profiling starts. Users must delete and recreate
    the DGDR to modify configuration after this point.
    DEPRECATION NOTICE: v1alpha1 DynamoGraphDeploymentRequest is deprecated.
    Please migrate to nvidia.com/v1beta1 DynamoGraphDeploymentRequest.
    v1alpha1 will be removed in a future release.
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
    This CRD serves as the primary interface for users to request model deployments with
    specific performance constraints and resource requirements, enabling SLA-driven deployments.
    """

    model: str = Field(
        ...,
        description=(
            'Model specifies the model to deploy (e.g., "Qwen/Qwen3-0.6B", "meta-llama/Llama-3-70b").\n'
            "This is a high-level identifier for easy reference in kubectl output and logs.\n"
            "The controller automatically sets this value in profilingConfig.config.deployment.model."
        ),
    )
    backend: Literal["auto", "vllm", "sglang", "trtllm"] = Field(
        ...,
        description=(
            "Backend specifies the inference backend for profiling.\n"
            "The controller automatically sets this value in profilingConfig.config.engine.backend.\n"
            "Profiling runs on real GPUs or via AIC simulation to collect performance data."
        ),
    )
    use_mocker: bool | None = Field(
        None,
        description=(
            "UseMocker indicates whether to deploy a mocker DynamoGraphDeployment instead of\n"
            "a real backend deployment. When true, the deployment uses simulated engines that\n"
            "don't require GPUs, using the profiling data to simulate realistic timing behavior.\n"
            "Mocker is available in all backend images and useful for large-scale experiments.\n"
            "Profiling still runs against the real backend (specified above) to collect performance "
            "data."
        ),
    )
    profiling_config: ProfilingConfigSpec = Field(
        ...,
        description=(
            "ProfilingConfig provides the complete configuration for the profiling job.\n"
            "Note: GPU discovery is automatically attempted to detect GPU resources from Kubernetes\n"
            "cluster nodes. If the operator has node read permissions (cluster-wide or explicitly "
            "granted),\n"
            "discovered GPU configuration is used as defaults when hardware configuration is not "
            "manually\n"
            "specified (minNumGpusPerEngine, maxNumGpusPerEngine, numGpusPerNode). User-specified "
            "values\n"
            "always take precedence over auto-discovered values. If GPU discovery fails (e.g.,\n"
            "namespace-restricted operator without node permissions), manual hardware config is "
            "required.\n"
            "This configuration is passed directly to the profiler.\n"
            "The structure matches the profile_sla config format exactly (see ProfilingConfigSpec for"
            " schema).\n"
            "Note: deployment.model and engine.backend are automatically set from the high-level\n"
            "modelName and backend fields and should not be specified in this config."
        ),
    )
    enable_gpu_discovery: bool | None = Field(
        None,
        description=(
            "EnableGPUDiscovery controls whether the operator attempts to discover GPU hardware from "
            "cluster nodes.\n"
            "DEPRECATED: This field is deprecated and will be removed in v1beta1. GPU discovery is "
            "now always\n"
            "attempted automatically. Setting this field has no effect - the operator will always try"
            " to discover\n"
            "GPU hardware when node read permissions are available. If discovery is unavailable "
            "(e.g., namespace-scoped\n"
            "operator without permissions), manual hardware configuration is required regardless of "
            "this setting."
        ),
    )
    auto_apply: bool | None = Field(
        None,
        description=(
            "AutoApply indicates whether to automatically create a DynamoGraphDeployment\n"
            "after profiling completes. If false, only the spec is generated and stored in status.\n"
            "Users can then manually create a DGD using the generated spec."
        ),
    )
    deployment_overrides: DeploymentOverridesSpec | None = Field(
        None,
        description=(
            "DeploymentOverrides allows customizing metadata for the auto-created DGD.\n"
            "Only applicable when AutoApply is true."
        ),
    )


class DynamoGraphDeploymentRequestStatus(ApiModel):
    """DynamoGraphDeploymentRequestStatus represents the observed state of a DynamoGraphDeploymentRequest.
    The controller updates this status as the DGDR progresses through its lifecycle.
    """

    state: DGDRState | None = Field(
        None,
        description="State is a high-level textual status of the deployment request lifecycle.",
    )
    backend: str | None = Field(
        None,
        description=(
            "Backend is extracted from profilingConfig.config.engine.backend for display purposes.\n"
            "This field is populated by the controller and shown in kubectl output."
        ),
    )
    observed_generation: int | None = Field(
        None,
        description=(
            "ObservedGeneration reflects the generation of the most recently observed spec.\n"
            "Used to detect spec changes and enforce immutability after profiling starts."
        ),
    )
    conditions: list[Condition] | None = Field(
        None,
        description=(
            "Conditions contains the latest observed conditions of the deployment request.\n"
            "Standard condition types include: Validation, Profiling, SpecGenerated, DeploymentReady.\n"
            "Conditions are merged by type on patch updates."
        ),
    )
    profiling_results: str | None = Field(
        None,
        description=(
            "ProfilingResults contains a reference to the ConfigMap holding profiling data.\n"
            'Format: "configmap/<name>"'
        ),
    )
    generated_deployment: EmbeddedResource | None = Field(
        None,
        description=(
            "GeneratedDeployment contains the full generated DynamoGraphDeployment specification\n"
            "including metadata, based on profiling results. Users can extract this to create\n"
            "a DGD manually, or it's used automatically when autoApply is true.\n"
            "Stored as RawExtension to preserve all fields including metadata.\n"
            "For mocker backends, this contains the mocker DGD spec."
        ),
    )
    deployment: DeploymentStatus | None = Field(
        None,
        description=(
            "Deployment tracks the auto-created DGD when AutoApply is true.\n"
            "Contains name, namespace, state, and creation status of the managed DGD."
        ),
    )


class DynamoGraphDeploymentScalingAdapter(KubeResource):
    """DynamoGraphDeploymentScalingAdapter provides a scaling interface for individual services
    within a DynamoGraphDeployment. It implements the Kubernetes scale
    subresource, enabling integration with HPA, KEDA, and custom autoscalers.
    The adapter acts as an intermediary between autoscalers and the DGD,
    ensuring that only the adapter controller modifies the DGD's service replicas.
    This prevents conflicts when multiple autoscaling mechanisms are in play.
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
    """DynamoGraphDeploymentScalingAdapterSpec defines the desired state of
    DynamoGraphDeploymentScalingAdapter
    """

    replicas: int = Field(
        ...,
        description=(
            "Replicas is the desired number of replicas for the target service.\n"
            "This field is modified by external autoscalers (HPA/KEDA/Planner) or manually by users."
        ),
        ge=0,
    )
    dgd_ref: DynamoGraphDeploymentServiceRef = Field(
        ...,
        description="DGDRef references the DynamoGraphDeployment and the specific service to scale.",
    )


class DynamoGraphDeploymentScalingAdapterStatus(ApiModel):
    """DynamoGraphDeploymentScalingAdapterStatus defines the observed state of
    DynamoGraphDeploymentScalingAdapter
    """

    replicas: int | None = Field(
        None,
        description=(
            "Replicas is the current number of replicas for the target service.\n"
            "This is synced from the DGD's service replicas and is required for the scale "
            "subresource."
        ),
    )
    selector: str | None = Field(
        None,
        description=(
            "Selector is a label selector string for the pods managed by this adapter.\n"
            "Required for HPA compatibility via the scale subresource."
        ),
    )
    last_scale_time: Time | None = Field(
        None,
        description="LastScaleTime is the last time the adapter scaled the target service.",
    )


class DynamoGraphDeploymentServiceRef(ApiModel):
    """DynamoGraphDeploymentServiceRef identifies a specific service within a DynamoGraphDeployment"""

    name: str = Field(
        ...,
        description="Name of the DynamoGraphDeployment",
        min_length=1,
    )
    service_name: str = Field(
        ...,
        description="ServiceName is the key name of the service within the DGD's spec.services map to scale",
        min_length=1,
    )


class DynamoGraphDeploymentSpec(ApiModel):
    """DynamoGraphDeploymentSpec defines the desired state of DynamoGraphDeployment."""

    annotations: dict[str, str] | None = Field(
        None,
        description=(
            "Annotations to propagate to all child resources (PCS, DCD, Deployments, and pod "
            "templates).\n"
            "Service-level annotations take precedence over these values."
        ),
    )
    labels: dict[str, str] | None = Field(
        None,
        description=(
            "Labels to propagate to all child resources (PCS, DCD, Deployments, and pod templates).\n"
            "Service-level labels take precedence over these values."
        ),
    )
    priority_class_name: str | None = Field(
        None,
        description=(
            "PriorityClassName is the name of the PriorityClass to use for Grove PodCliqueSets.\n"
            "Requires the Grove pathway."
        ),
    )
    pvcs: list[PVC] | None = Field(
        None,
        description=(
            "PVCs defines a list of persistent volume claims that can be referenced by components.\n"
            "Each PVC must have a unique name that can be referenced in component specifications."
        ),
        max_length=100,
    )
    services: dict[str, DynamoComponentDeploymentSharedSpec] | None = Field(
        None,
        description="Services are the services to deploy as part of this deployment.",
        max_length=25,
    )
    envs: list[EnvVar] | None = Field(
        None,
        description=(
            "Envs are environment variables applied to all services in the deployment unless\n"
            "overridden by service-specific configuration."
        ),
    )
    backend_framework: Literal["sglang", "vllm", "trtllm"] | None = Field(
        None,
        description='BackendFramework specifies the backend framework (e.g., "sglang", "vllm", "trtllm").',
    )
    restart: Restart | None = Field(
        None,
        description="Restart specifies the restart policy for the graph deployment.",
    )
    topology_constraint: SpecTopologyConstraint | None = Field(
        None,
        description=(
            "TopologyConstraint is the deployment-level topology constraint.\n"
            "When set, topologyProfile is required and names the ClusterTopology CR to use.\n"
            "packDomain is optional here — it can be omitted when only services carry constraints.\n"
            "Services without their own topologyConstraint inherit from this value."
        ),
    )
    experimental: DynamoGraphDeploymentExperimentalSpec | None = Field(
        None,
        description=(
            "Experimental groups graph-level preview features whose API shape and\n"
            "behavior may change in breaking ways between releases."
        ),
    )


class DynamoGraphDeploymentStatus(ApiModel):
    """DynamoGraphDeploymentStatus defines the observed state of DynamoGraphDeployment."""

    observed_generation: int | None = Field(
        None,
        description="ObservedGeneration is the most recent generation observed by the controller.",
    )
    state: DGDState | None = Field(
        None,
        description="State is a high-level textual status of the graph deployment lifecycle.",
    )
    conditions: list[Condition] | None = Field(
        None,
        description=(
            "Conditions contains the latest observed conditions of the graph deployment.\n"
            "The slice is merged by type on patch updates."
        ),
    )
    services: dict[str, ServiceReplicaStatus] | None = Field(
        None,
        description=(
            "Services contains per-service replica status information.\n"
            "The map key is the service name from spec.services."
        ),
    )
    restart: RestartStatus | None = Field(
        None,
        description="Restart contains the status of the restart of the graph deployment.",
    )
    checkpoints: dict[str, ServiceCheckpointStatus] | None = Field(
        None,
        description=(
            "Checkpoints contains per-service checkpoint status information.\n"
            "The map key is the service name from spec.services."
        ),
    )
    rolling_update: RollingUpdateStatus | None = Field(
        None,
        description=(
            "RollingUpdate tracks the progress of operator manged rolling updates.\n"
            "Currently only supported for singl-node, non-Grove deployments (DCD/Deployment)."
        ),
    )
    placement: PlacementStatus | None = Field(
        None,
        description=(
            "Placement groups DGD-level scheduler placement signals (score, reporting\n"
            "state, and any future placement fields)."
        ),
    )


class DynamoModel(KubeResource):
    """DynamoModel is the Schema for the dynamo models API"""

    spec: DynamoModelSpec | None = Field(
        None,
        description="Desired state of this DynamoModel.",
    )
    status: DynamoModelStatus | None = Field(
        None,
        description="Observed state of this DynamoModel, written by the operator.",
    )


class DynamoModelSpec(ApiModel):
    """DynamoModelSpec defines the desired state of DynamoModel"""

    model_name: str = Field(
        ...,
        description='ModelName is the full model identifier (e.g., "meta-llama/Llama-3.3-70B-Instruct-lora")',
    )
    base_model_name: str = Field(
        ...,
        description=(
            "BaseModelName is the base model identifier that matches the service label\n"
            "This is used to discover endpoints via headless services"
        ),
    )
    model_type: Literal["base", "lora", "adapter"] | None = Field(
        None,
        description='ModelType specifies the type of model (e.g., "base", "lora", "adapter")',
    )
    source: ModelSource | None = Field(
        None,
        description="Source specifies the model source location (only applicable for lora model type)",
    )


class DynamoModelStatus(ApiModel):
    """DynamoModelStatus defines the observed state of DynamoModel"""

    endpoints: list[EndpointInfo] | None = Field(
        None,
        description="Endpoints is the current list of all endpoints for this model",
    )
    ready_endpoints: int | None = Field(
        None,
        description="ReadyEndpoints is the count of endpoints that are ready",
    )
    lora_fallback_covered_endpoints: int | None = Field(
        None,
        description=(
            "LoRAFallbackCoveredEndpoints is the count of legacy prefill endpoints\n"
            "covered by a capable prefill during a rolling upgrade. These endpoints are\n"
            "excluded from ReadyEndpoints because they cannot serve the adapter directly."
        ),
    )
    total_endpoints: int | None = Field(
        None,
        description="TotalEndpoints is the total count of endpoints",
    )
    conditions: list[Condition] | None = Field(
        None,
        description="Conditions represents the latest available observations of the model's state",
    )


class EPPConfig(ApiModel):
    """EPPConfig contains configuration for EPP (Endpoint Picker Plugin) components.
    EPP is responsible for intelligent endpoint selection and KV-aware routing.
    """

    config_map_ref: CoreConfigMapKeySelector | None = Field(
        None,
        description=(
            "ConfigMapRef references a user-provided ConfigMap containing EPP configuration.\n"
            "The ConfigMap should contain EndpointPickerConfig YAML.\n"
            "Mutually exclusive with Config."
        ),
    )
    config: KubeObject | None = Field(
        None,
        description=(
            "Config allows specifying EPP EndpointPickerConfig directly as a structured object.\n"
            "The operator will marshal this to YAML and create a ConfigMap automatically.\n"
            "Mutually exclusive with ConfigMapRef.\n"
            "One of ConfigMapRef or Config must be specified (no default configuration).\n"
            "Uses the upstream type from github.com/kubernetes-sigs/gateway-api-inference-extension"
        ),
    )


class EndpointInfo(ApiModel):
    """EndpointInfo represents a single endpoint (pod) serving the model"""

    address: str | None = Field(
        None,
        description=(
            "Address is the full address of the endpoint (e.g., "
            '"[http://10.0.1.5:9090](http://10.0.1.5:9090)")'
        ),
    )
    pod_name: str | None = Field(
        None,
        description="PodName is the name of the pod serving this endpoint",
    )
    ready: bool | None = Field(
        None,
        description=(
            "Ready indicates whether this endpoint is ready to serve traffic.\n"
            "For LoRA models: true only if this endpoint's lifecycle request succeeded.\n"
            "For base models: always false (no probing performed)."
        ),
    )
    lora_fallback_covered: bool | None = Field(
        None,
        description=(
            "LoRAFallbackCovered indicates a legacy prefill endpoint that cannot manage\n"
            "LoRAs itself is covered by a capable prefill in the same topology during a\n"
            "rolling upgrade. It does not make this endpoint ready to serve the adapter."
        ),
    )


class ExtraPodMetadata(ApiModel):
    """ExtraPodMetadata (no description in the API reference)."""

    annotations: dict[str, str] | None = Field(
        None,
        description="Annotations added to the created Pods.",
    )
    labels: dict[str, str] | None = Field(
        None,
        description="Labels added to the created Pods.",
    )


class ExtraPodSpec(PodSpec):
    """A standard Kubernetes PodSpec merged over the generated pod, plus ``mainContainer``.

    Kept as a pass-through object in the CRD (the apiserver validates the pods the operator renders).
    """

    main_container: Container | None = Field(
        None,
        description="MainContainer overrides fields of the main container (a standard Kubernetes Container).",
    )


class FailoverSpec(ApiModel):
    """FailoverSpec configures active-passive failover for a worker component.
    For intraPod mode: requires gpuMemoryService.enabled; the main container is cloned
    into engine containers (active + standby) within the same pod.
    For interPod mode: the operator creates a dedicated GMS weight server pod and
    multiple engine pods per rank that share GPUs via DRA resource claims.
    """

    enabled: bool | None = Field(
        None,
        description="Enabled activates failover mode.",
    )
    mode: GPUMemoryServiceMode | None = Field(
        None,
        description=(
            "Mode selects the failover deployment topology.\n"
            "intraPod: engine containers run within the same pod (requires gpuMemoryService.enabled).\n"
            "interPod: a dedicated GMS weight server pod + engine pods per rank (requires Grove)."
        ),
    )
    num_shadows: int | None = Field(
        None,
        description=(
            "NumShadows is the number of shadow (standby) engine pods per rank.\n"
            "Total engine pods per rank = NumShadows + 1 (1 primary + NumShadows shadows).\n"
            "NumShadows is only meaningful for mode=interPod; intraPod uses a fixed\n"
            "1 primary + 1 shadow sidecar layout and any value other than 1 is\n"
            "rejected at admission time."
        ),
        ge=1,
    )


class FrontendSidecarSpec(ApiModel):
    """FrontendSidecarSpec configures the auto-generated frontend sidecar container.
    The operator uses these fields together with built-in frontend defaults (command, probes, ports,
    and Dynamo env vars) to produce a fully configured sidecar container.
    """

    image: str = Field(
        ...,
        description="Image is the container image for the frontend sidecar.",
    )
    args: list[str] | None = Field(
        None,
        description=(
            "Args overrides the default frontend arguments. When specified, these replace\n"
            'the default ["-m", "dynamo.frontend"] entirely.\n'
            'For example, ["-m", "dynamo.frontend", "--router-mode", "direct"] for GAIE deployments.'
        ),
    )
    env_from_secret: str | None = Field(
        None,
        description=(
            "EnvFromSecret references a Secret whose key/value pairs will be exposed as\n"
            "environment variables in the frontend sidecar container."
        ),
    )
    envs: list[EnvVar] | None = Field(
        None,
        description=(
            "Envs defines additional environment variables for the frontend sidecar.\n"
            "These are merged with (and can override) the auto-generated Dynamo env vars."
        ),
    )


class GMSClientPodSpec(ApiModel):
    """GMSClientPodSpec declares an additional GMS client pod for inter-pod GMS."""

    name: str | None = Field(
        None,
        description="Name identifies this client pod.",
        max_length=63,
        min_length=1,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    )
    pod_template: PodTemplateSpec | None = Field(
        None,
        description="PodTemplate configures the pod to run as a GMS client.",
    )


class GPUMemoryServiceSpec(ApiModel):
    """GPUMemoryServiceSpec configures the GPU Memory Service (GMS) for a worker component."""

    enabled: bool | None = Field(
        None,
        description=(
            "Enabled activates GMS wiring. GPU resources on client containers are\n"
            "replaced with a DRA ResourceClaim for shared GPU access."
        ),
    )
    mode: GPUMemoryServiceMode | None = Field(
        None,
        description="Mode selects the GMS deployment topology.",
    )
    device_class_name: str | None = Field(
        None,
        description="DeviceClassName is the DRA DeviceClass to request GPUs from.",
    )
    extra_client_containers: list[ContainerName] | None = Field(
        None,
        description=(
            "ExtraClientContainers lists additional user-declared containers that should\n"
            "be wired as GMS clients in pods rendered from the enclosing spec.\n"
            "DGD/DCD services apply this to service pods. Auto-created checkpoints\n"
            "apply checkpoint job clients before creating the DynamoCheckpoint; manual\n"
            "DynamoCheckpoint users must provide an already-prepared pod template.\n"
            "In each rendered pod, only matching container names are wired; absent\n"
            "names are ignored."
        ),
    )
    extra_client_pods: list[GMSClientPodSpec] | None = Field(
        None,
        description=(
            "ExtraClientPods declares additional GMS client pods for inter-pod GMS. This field is\n"
            "reserved for future use and is rejected until inter-pod client orchestration is wired."
        ),
    )


class IngressSpec(ApiModel):
    """IngressSpec (no description in the API reference)."""

    enabled: bool | None = Field(
        None,
        description="Enabled exposes the component through an ingress or virtual service when true.",
    )
    host: str | None = Field(
        None,
        description="Host is the base host name to route external traffic to this component.",
    )
    use_virtual_service: bool | None = Field(
        None,
        description=(
            "UseVirtualService indicates whether to configure a service-mesh VirtualService instead "
            "of a standard Ingress."
        ),
    )
    virtual_service_gateway: str | None = Field(
        None,
        description=(
            "VirtualServiceGateway optionally specifies the gateway name to attach the VirtualService to."
        ),
    )
    host_prefix: str | None = Field(
        None,
        description="HostPrefix is an optional prefix added before the host.",
    )
    annotations: dict[str, str] | None = Field(
        None,
        description="Annotations to set on the generated Ingress/VirtualService resources.",
    )
    labels: dict[str, str] | None = Field(
        None,
        description="Labels to set on the generated Ingress/VirtualService resources.",
    )
    tls: IngressTLSSpec | None = Field(
        None,
        description="TLS holds the TLS configuration used by the Ingress/VirtualService.",
    )
    host_suffix: str | None = Field(
        None,
        description="HostSuffix is an optional suffix appended after the host.",
    )
    ingress_controller_class_name: str | None = Field(
        None,
        description='IngressControllerClassName selects the ingress controller class (e.g., "nginx").',
    )


class IngressTLSSpec(ApiModel):
    """IngressTLSSpec (no description in the API reference)."""

    secret_name: str | None = Field(
        None,
        description="SecretName is the name of a Kubernetes Secret containing the TLS certificate and key.",
    )


class KvTransferPolicy(ApiModel):
    """KvTransferPolicy configures topology-aware routing for KV-cache transfers
    between prefill and decode workers. This graph-wide policy lives under
    `spec.experimental` while the API is incubating.
    """

    cluster_topology_name: str | None = Field(
        None,
        description=(
            "ClusterTopologyName references a Grove ClusterTopology CR. The operator\n"
            "reads the CR's topology levels and projects them through Dynamo-owned pod\n"
            "labels for worker topology metadata."
        ),
        min_length=1,
    )
    label_key: str | None = Field(
        None,
        description=(
            "LabelKey is a Kubernetes node label key (e.g.\n"
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
            "Domain is the logical name for the topology level to enforce\n"
            '(e.g. "zone", "rack"). The router uses this to match workers that\n'
            "share the same value for the label identified by `labelKey`."
        ),
    )
    enforcement: KvTransferEnforcement | None = Field(
        None,
        description=(
            "Enforcement controls how the selected prefill worker's topology is\n"
            'applied to decode routing. "required" only allows decode workers in the\n'
            'same topology domain as the selected prefill worker. "preferred" keeps\n'
            "all decode workers eligible, but biases selection toward workers in the\n"
            'same topology domain. Defaults to "required".'
        ),
    )
    preferred_weight: float | None = Field(
        None,
        description=(
            "PreferredWeight is required and used only when enforcement is\n"
            '"preferred". Higher values create a stronger same-domain routing\n'
            "preference, but do not guarantee same-domain selection. The value is not\n"
            "a probability; worker selection still depends on load and other routing\n"
            "inputs. A value of 0 disables the topology preference; 1 is the strongest\n"
            "supported preference."
        ),
        le=1,
        ge=0,
    )


class ModelReference(ApiModel):
    """ModelReference identifies a model served by this component"""

    name: str = Field(
        ...,
        description='Name is the base model identifier (e.g., "llama-3-70b-instruct-v1")',
    )
    revision: str | None = Field(
        None,
        description="Revision is the model revision/version (optional)",
    )


class ModelSource(ApiModel):
    """ModelSource defines the source location of a model"""

    uri: str = Field(
        ...,
        description=(
            "URI is the model source URI\n"
            "Supported formats:\n"
            "- S3: s3://bucket/path/to/model\n"
            "- HuggingFace: hf://org/model@revision_sha\n"
            "- Local filesystem: file:///path/to/model"
        ),
    )


class MultinodeSpec(ApiModel):
    """MultinodeSpec (no description in the API reference)."""

    node_count: int | None = Field(
        None,
        description=(
            "Indicates the number of nodes to deploy for multinode components.\n"
            "Total number of GPUs is NumberOfNodes * GPU limit.\n"
            "Must be greater than 1."
        ),
        ge=2,
    )


class PVC(ApiModel):
    """A persistent volume claim components can mount; the operator creates it when ``create`` is true."""

    crd_validations: ClassVar[list[dict[str, str]]] = [
        {
            "rule": "!has(self.create) || self.create == false || "
            "(has(self.size) && has(self.storageClass) && has(self.volumeAccessMode))",
            "message": "When create is true, size, storageClass, and volumeAccessMode are required",
        }
    ]

    create: bool | None = Field(
        None,
        description="Create indicates to create a new PVC",
    )
    name: str = Field(
        ...,
        description="Name is the name of the PVC",
    )
    storage_class: str | None = Field(
        None,
        description="StorageClass to be used for PVC creation. Required when create is true.",
    )
    size: Quantity | None = Field(
        None,
        description="Size of the volume in Gi, used during PVC creation. Required when create is true.",
    )
    volume_access_mode: str | None = Field(
        None,
        description="VolumeAccessMode is the volume access mode of the PVC. Required when create is true.",
    )


class PlacementStatus(ApiModel):
    """PlacementStatus groups DGD-level scheduler placement fields under a single
    status object so future placement signals can be added without a schema
    break. See the v1beta1 PlacementStatus for the authoritative field docs.
    """

    score: float | None = Field(
        None,
        description=(
            "Score is the DGD-level scheduler placement score. Normalized to [0.0, 1.0]\n"
            "where higher is better and 1.0 is the best possible placement."
        ),
        le=1,
        ge=0,
    )
    state: PlacementScoreState | None = Field(
        None,
        description="State indicates placement score reporting state.",
    )


class PodReference(ApiModel):
    """PodReference names a pod in the same namespace as the referencing PodSnapshot."""

    name: str = Field(
        ...,
        description="Name of the source pod.",
        min_length=1,
    )
    uid: str | None = Field(
        None,
        description=(
            "UID of the source pod, recorded so the node agent dumps that specific\n"
            "pod and not a same-named recreation."
        ),
    )


class PodSnapshot(KubeResource):
    """PodSnapshot is the Schema for the snapshots API. It is the namespaced binding
    for a captured container checkpoint and is consumed by restore paths.
    No conversion: this type exists only in v1alpha1 (no other API version), so it
    is not part of any conversion scheme.
    """

    spec: PodSnapshotSpec | None = Field(
        None,
        description="Desired state of this PodSnapshot.",
    )
    status: PodSnapshotStatus | None = Field(
        None,
        description="Observed state of this PodSnapshot, written by the operator.",
    )


class PodSnapshotContent(KubeResource):
    """PodSnapshotContent is the Schema for the snapshotcontents API. It is the
    cluster-scoped artifact-of-record for a captured container checkpoint.
    No conversion: this type exists only in v1alpha1 (no other API version), so it
    is not part of any conversion scheme.
    """

    spec: PodSnapshotContentSpec | None = Field(
        None,
        description="Desired state of this PodSnapshotContent.",
    )
    status: PodSnapshotContentStatus | None = Field(
        None,
        description="Observed state of this PodSnapshotContent, written by the operator.",
    )


class DynamoWorkerMetadataSpec(ApiModel):
    """DynamoWorkerMetadataSpec holds what one worker publishes for Kubernetes discovery."""

    data: dict[str, Any] = Field(
        ...,
        description=(
            "Data is the worker's discovery record as the Dynamo runtime writes it (its endpoints, model\n"
            "cards and event channels), keyed by the runtime; the operator does not interpret it."
        ),
    )


class DynamoWorkerMetadata(KubeResource):
    """DynamoWorkerMetadata is published by each worker pod of a graph on the Kubernetes discovery
    backend (one object per pod, owned by it) and watched by frontends and routers, which join it with
    the ready EndpointSlices (or Pods) of the graph. Written by the runtime, not by the operator.
    No conversion: this type exists only in v1alpha1 and has no status.
    """

    spec: DynamoWorkerMetadataSpec | None = Field(None, description="The worker's discovery record.")


class PodSnapshotContentSource(ApiModel):
    """PodSnapshotContentSource is the immutable source descriptor: what to dump
    (PodRef) and where it runs (NodeName).
    """

    pod_ref: PodReference = Field(
        ...,
        description=(
            "PodRef identifies the pod to dump. Its UID guards against dumping a\n"
            "same-named recreation of the pod."
        ),
    )
    node_name: str = Field(
        ...,
        description=(
            "NodeName is the node the source pod runs on, denormalized from the live\n"
            "pod so it travels with PodRef as one immutable unit and selects the node\n"
            "agent that performs the dump."
        ),
        min_length=1,
    )


class PodSnapshotContentSpec(ApiModel):
    """PodSnapshotContentSpec defines the desired state of PodSnapshotContent. It is
    populated by the PodSnapshotReconciler (operator) at creation time and is
    immutable thereafter.
    """

    pod_snapshot_ref: PodSnapshotReference = Field(
        ...,
        description=(
            "PodSnapshotRef is the back-pointer to the bound PodSnapshot. It may span\n"
            "namespaces because PodSnapshotContent is cluster-scoped."
        ),
    )
    source: PodSnapshotContentSource = Field(
        ...,
        description="Source describes what to capture: the source pod and the node it runs on.",
    )


class PodSnapshotContentStatus(ApiModel):
    """PodSnapshotContentStatus defines the observed state of PodSnapshotContent."""

    conditions: list[Condition] | None = Field(
        None,
        description=(
            "Conditions reflect the latest observations of the PodSnapshotContent's state.\n"
            "Standard types are Ready and Failed."
        ),
    )


class PodSnapshotReference(ApiModel):
    """PodSnapshotReference is a cross-namespace reference to a PodSnapshot."""

    namespace: str = Field(
        ...,
        description="Namespace of the referenced PodSnapshot.",
    )
    name: str = Field(
        ...,
        description="Name of the referenced PodSnapshot.",
    )
    uid: str | None = Field(
        None,
        description=(
            "UID of the referenced PodSnapshot, recorded at binding time to detect a\n"
            "stale reference after a delete and recreate."
        ),
    )


class PodSnapshotSource(ApiModel):
    """PodSnapshotSource identifies the workload captured by a PodSnapshot."""

    pod_ref: PodReference = Field(
        ...,
        description=(
            "PodRef references the pod, in the PodSnapshot's namespace, that is captured.\n"
            "The operator prepares the pod (control volume, target-container annotation,\n"
            "checkpoint storage mount) before creating the PodSnapshot."
        ),
    )


class PodSnapshotSpec(ApiModel):
    """PodSnapshotSpec defines the desired state of PodSnapshot."""

    source: PodSnapshotSource = Field(
        ...,
        description=(
            "Source identifies the captured workload. It is a struct (rather than an\n"
            "inlined reference) so future source variants can be added additively."
        ),
    )


class PodSnapshotStatus(ApiModel):
    """PodSnapshotStatus defines the observed state of PodSnapshot."""

    bound_pod_snapshot_content_name: str | None = Field(
        None,
        description=(
            "BoundPodSnapshotContentName is the name of the cluster-scoped PodSnapshotContent\n"
            "this PodSnapshot is bound to. It is nil until the agent has created the\n"
            "content and recorded the binding."
        ),
    )
    conditions: list[Condition] | None = Field(
        None,
        description=(
            "Conditions reflect the latest observations of the PodSnapshot's state.\n"
            "Standard types are Ready and Failed."
        ),
    )


class ProfilingConfigSpec(ApiModel):
    """ProfilingConfigSpec defines configuration for the profiling process.
    This structure maps directly to the profile\\_sla.py config format.
    See dynamo/profiler/utils/profiler\\_argparse.py for the complete schema.
    """

    config: KubeObject | None = Field(
        None,
        description=(
            "Config is the profiling configuration as arbitrary JSON/YAML. This will be passed "
            "directly to the profiler.\n"
            "The profiler will validate the configuration and report any errors."
        ),
    )
    config_map_ref: ConfigMapKeySelector | None = Field(
        None,
        description=(
            "ConfigMapRef is an optional reference to a ConfigMap containing the "
            "DynamoGraphDeployment\n"
            "base config file (disagg.yaml). This is separate from the profiling config above.\n"
            "The path to this config will be set as engine.config in the profiling config."
        ),
    )
    profiler_image: str = Field(
        ...,
        description=(
            "ProfilerImage specifies the container image to use for profiling jobs.\n"
            "This image contains the profiler code and dependencies needed for SLA-based profiling.\n"
            'Example: "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1"'
        ),
    )
    output_pvc: str | None = Field(
        None,
        alias="outputPVC",
        description=(
            "OutputPVC is an optional PersistentVolumeClaim name for storing profiling output.\n"
            "If specified, all profiling artifacts (logs, plots, configs, raw data) will be written\n"
            "to this PVC instead of an ephemeral emptyDir volume. This allows users to access\n"
            "complete profiling results after the job completes by mounting the PVC.\n"
            "The PVC must exist in the same namespace as the DGDR.\n"
            "If not specified, profiling uses emptyDir and only essential data is saved to "
            "ConfigMaps.\n"
            "Note: ConfigMaps are still created regardless of this setting for planner integration."
        ),
    )
    resources: ResourceRequirements | None = Field(
        None,
        description=(
            "Resources specifies the compute resource requirements for the profiling job container.\n"
            "If not specified, no resource requests or limits are set."
        ),
    )
    tolerations: list[Toleration] | None = Field(
        None,
        description=(
            "Tolerations allows the profiling job to be scheduled on nodes with matching taints.\n"
            "For example, to schedule on GPU nodes, add a toleration for the nvidia.com/gpu taint."
        ),
    )
    node_selector: dict[str, str] | None = Field(
        None,
        description=(
            "NodeSelector is a selector which must match a node's labels for the profiling pod to be "
            "scheduled on that node.\n"
            'For example, to schedule on ARM64 nodes, use {"kubernetes.io/arch": "arm64"}.'
        ),
    )


class ResourceItem(ApiModel):
    """ResourceItem (no description in the API reference)."""

    cpu: str | None = Field(
        None,
        description='CPU specifies the CPU resource request/limit (e.g., "1000m", "2")',
    )
    memory: str | None = Field(
        None,
        description='Memory specifies the memory resource request/limit (e.g., "4Gi", "8Gi")',
    )
    gpu: str | None = Field(
        None,
        description=(
            "GPU indicates the number of GPUs to request.\n"
            "Total number of GPUs is NumberOfNodes * GPU in case of multinode deployment."
        ),
    )
    gpu_type: str | None = Field(
        None,
        description=(
            'GPUType can specify a custom GPU type, e.g. "gpu.intel.com/xe"\n'
            'By default if not specified, the GPU type is "nvidia.com/gpu"'
        ),
    )
    custom: dict[str, str] | None = Field(
        None,
        description="Custom specifies additional custom resource requests/limits",
    )


class Resources(ApiModel):
    """Resources defines requested and limits for a component, including CPU, memory,
    GPUs/devices, and any runtime-specific resources.
    """

    requests: ResourceItem | None = Field(
        None,
        description="Requests specifies the minimum resources required by the component",
    )
    limits: ResourceItem | None = Field(
        None,
        description="Limits specifies the maximum resources allowed for the component",
    )
    claims: list[ResourceClaim] | None = Field(
        None,
        description="Claims specifies resource claims for dynamic resource allocation",
    )


class Restart(ApiModel):
    """Restart (no description in the API reference)."""

    id: str = Field(
        ...,
        description=(
            "ID is an arbitrary string that triggers a restart when changed.\n"
            "Any modification to this value will initiate a restart of the graph deployment according"
            " to the strategy."
        ),
        min_length=1,
    )
    strategy: RestartStrategy | None = Field(
        None,
        description="Strategy specifies the restart strategy for the graph deployment.",
    )


class RestartStatus(ApiModel):
    """RestartStatus contains the status of the restart of the graph deployment."""

    observed_id: str | None = Field(
        None,
        alias="observedID",
        description=(
            "ObservedID is the restart ID that has been observed and is being processed.\n"
            "Matches the Restart.ID field in the spec."
        ),
    )
    phase: RestartPhase | None = Field(
        None,
        description="Phase is the phase of the restart.",
    )
    in_progress: list[str] | None = Field(
        None,
        description="InProgress contains the names of the services that are currently being restarted.",
    )


class RestartStrategy(ApiModel):
    """RestartStrategy (no description in the API reference)."""

    type: RestartStrategyType | None = Field(
        None,
        description="Type specifies the restart strategy type.",
    )
    order: list[str] | None = Field(
        None,
        description="Order specifies the order in which the services should be restarted.",
    )


class RollingUpdateStatus(ApiModel):
    """RollingUpdateStatus tracks the progress of a rolling update."""

    phase: RollingUpdatePhase | None = Field(
        None,
        description="Phase indicates the current phase of the rolling update.",
    )
    start_time: Time | None = Field(
        None,
        description="StartTime is when the rolling update began.",
    )
    end_time: Time | None = Field(
        None,
        description="EndTime is when the rolling update completed (successfully or failed).",
    )
    updated_services: list[str] | None = Field(
        None,
        description=(
            "UpdatedServices is the list of services that have completed the rolling update.\n"
            "A service is considered updated when its new replicas are all ready and old replicas are"
            " fully scaled down.\n"
            "Only services of componentType Worker (or Prefill/Decode) are considered."
        ),
    )


class ScalingAdapter(ApiModel):
    """ScalingAdapter configures whether a service uses the DynamoGraphDeploymentScalingAdapter
    for replica management. When enabled, the DGDSA owns the replicas field and
    external autoscalers (HPA, KEDA, Planner) can control scaling via the Scale subresource.
    """

    enabled: bool | None = Field(
        None,
        description=(
            "Enabled indicates whether the ScalingAdapter should be enabled for this service.\n"
            "When true, a DGDSA is created and owns the replicas field.\n"
            "When false (default), no DGDSA is created and replicas can be modified directly in the "
            "DGD."
        ),
    )


class ServiceCheckpointConfig(ApiModel):
    """ServiceCheckpointConfig configures checkpointing for a DGD service"""

    enabled: bool | None = Field(
        None,
        description="Enabled indicates whether checkpointing is enabled for this service",
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
            "StartupPolicy defines when normal worker replicas are started relative to\n"
            "automatic checkpoint readiness.\n"
            "- Immediate: start workers cold immediately; later Pods restore from the\n"
            "checkpoint once it is Ready.\n"
            "- WaitForCheckpoint: keep worker replicas at zero until the checkpoint is\n"
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
            "CheckpointRef references an existing DynamoCheckpoint CR by metadata.name.\n"
            "If specified, this service's Identity is ignored and the referenced checkpoint is used "
            "directly."
        ),
    )
    identity: DynamoCheckpointIdentity | None = Field(
        None,
        description=(
            "Deprecated: omit for DGD-managed checkpoints; no action is needed.\n"
            "Use CheckpointRef to restore an existing checkpoint."
        ),
    )
    target_container_name: ContainerName | None = Field(
        None,
        description="TargetContainerName is the workload container to snapshot and restore.",
    )
    job: ServiceCheckpointJobConfig | None = Field(
        None,
        description="Job customizes the DGD-managed checkpoint Job.",
    )


class ServiceCheckpointJobConfig(ApiModel):
    """ServiceCheckpointJobConfig customizes the checkpoint Job created for a DGD service."""

    gms_client_containers: list[ContainerName] | None = Field(
        None,
        description=(
            "GMSClientContainers lists checkpoint Job containers that should receive\n"
            "GMS client wiring. Requires gpuMemoryService on the service."
        ),
    )
    pod_template: PodTemplateSpec | None = Field(
        None,
        description=(
            "PodTemplate customizes the checkpoint Job pod. The operator starts from the\n"
            "selected workload container and merges this template so users can add helper\n"
            "containers such as gms-saver."
        ),
    )


class ServiceCheckpointStatus(ApiModel):
    """ServiceCheckpointStatus contains checkpoint information for a single service."""

    checkpoint_name: str | None = Field(
        None,
        description="CheckpointName is the name of the associated Checkpoint CR",
    )
    checkpoint_id: str | None = Field(
        None,
        alias="checkpointID",
        description="CheckpointID is the artifact ID used by the snapshot protocol",
    )
    identity_hash: str | None = Field(
        None,
        description=(
            "IdentityHash is the computed hash of the checkpoint identity\n"
            "Deprecated: automatic checkpoints use CheckpointID. This field is retained\n"
            "for older status consumers."
        ),
    )
    ready: bool | None = Field(
        None,
        description="Ready indicates the checkpoint artifact is ready for future pods to restore.",
    )


class ServiceReplicaStatus(ApiModel):
    """ServiceReplicaStatus contains replica information for a single service."""

    component_kind: ComponentKind | None = Field(
        None,
        description=(
            'ComponentKind is the underlying resource kind (e.g., "PodClique", '
            '"PodCliqueScalingGroup", "Deployment", "LeaderWorkerSet").'
        ),
    )
    component_name: str | None = Field(
        None,
        description=(
            "ComponentName is the name of the primary underlying resource.\n"
            "DEPRECATED: Use ComponentNames instead. This field will be removed in a future release.\n"
            "During rolling updates, this reflects the new (target) component name."
        ),
    )
    component_names: list[str] | None = Field(
        None,
        description=(
            "ComponentNames is the list of underlying resource names for this service.\n"
            "During normal operation, this contains a single name.\n"
            "During rolling updates, this contains both old and new component names."
        ),
    )
    runtime_namespace: str | None = Field(
        None,
        description=(
            "RuntimeNamespace is the effective Dynamo runtime namespace for this\n"
            "component. Worker components may include a generation suffix; non-workers and\n"
            "Grove-backed workers use the base namespace. During rolling updates, worker\n"
            "status keeps the old active revision namespace until cutover completes."
        ),
    )
    replicas: int | None = Field(
        None,
        description=(
            "Replicas is the total number of non-terminated replicas.\nRequired for all component kinds."
        ),
        ge=0,
    )
    updated_replicas: int | None = Field(
        None,
        description=(
            "UpdatedReplicas is the number of replicas at the current/desired revision.\n"
            "Required for all component kinds."
        ),
        ge=0,
    )
    ready_replicas: int | None = Field(
        None,
        description=(
            "ReadyReplicas is the number of ready replicas.\n"
            "Populated for PodClique, Deployment, and LeaderWorkerSet.\n"
            "Not available for PodCliqueScalingGroup.\n"
            "When nil, the field is omitted from the API response."
        ),
        ge=0,
    )
    available_replicas: int | None = Field(
        None,
        description=(
            "AvailableReplicas is the number of available replicas.\n"
            "For Deployment: replicas ready for >= minReadySeconds.\n"
            "For PodCliqueScalingGroup: replicas where all constituent PodCliques have >= "
            "MinAvailable ready pods.\n"
            "Not available for PodClique or LeaderWorkerSet.\n"
            "When nil, the field is omitted from the API response."
        ),
        ge=0,
    )
    scheduled_replicas: int | None = Field(
        None,
        description=(
            "ScheduledReplicas is the number of replicas the backend scheduler has\n"
            "scheduled, in Dynamo component-replica units. Optional; omitted (nil)\n"
            'when the backend cannot derive it reliably. A nil value means "not\n'
            'reported", never "zero scheduled".'
        ),
        ge=0,
    )


class SharedMemorySpec(ApiModel):
    """SharedMemorySpec (no description in the API reference)."""

    disabled: bool | None = Field(
        None,
        description=(
            "Disabled, when true, opts out of mounting a shared-memory medium for the\n"
            "component. When false (or unset), shared memory is enabled and Size is\n"
            "required (enforced by the validating webhook). Size is ignored when\n"
            "Disabled is true."
        ),
    )
    size: Quantity | None = Field(
        None,
        description=(
            'Size of the tmpfs mounted at /dev/shm (for example "8Gi"). Required unless disabled is true.'
        ),
    )


class SpecTopologyConstraint(ApiModel):
    """SpecTopologyConstraint defines deployment-level topology placement requirements.
    It carries both the topology profile (which ClusterTopology CR to use) and an
    optional default pack domain that services without their own constraint inherit.
    """

    topology_profile: str | None = Field(
        None,
        description=(
            "TopologyProfile is the name of the ClusterTopology CR that defines the\n"
            "topology hierarchy for this deployment."
        ),
        min_length=1,
    )
    pack_domain: TopologyDomain | None = Field(
        None,
        description=(
            "PackDomain is the default topology domain to pack pods within.\n"
            "Optional — omit when only services carry constraints."
        ),
    )


class TopologyConstraint(ApiModel):
    """TopologyConstraint defines service-level topology placement requirements.
    The topology profile is inherited from the deployment-level SpecTopologyConstraint;
    only the pack domain is specified here.
    """

    pack_domain: TopologyDomain | None = Field(
        None,
        description=(
            "PackDomain is the topology domain to pack pods within. Must match a\n"
            "domain defined in the referenced ClusterTopology CR."
        ),
    )


class VolumeMount(ApiModel):
    """VolumeMount references a PVC defined at the top level for volumes to be mounted by the component"""

    name: str = Field(
        ...,
        description="Name references a PVC name defined in the top-level PVCs map",
    )
    mount_point: str | None = Field(
        None,
        description=(
            "MountPoint specifies where to mount the volume.\n"
            "If useAsCompilationCache is true and mountPoint is not specified,\n"
            "a backend-specific default will be used."
        ),
    )
    use_as_compilation_cache: bool | None = Field(
        None,
        description=(
            "UseAsCompilationCache indicates this volume should be used as a compilation cache.\n"
            "When true, backend-specific environment variables will be set and default mount points "
            "may be used."
        ),
    )


class DynamoComponentDeploymentStatus(DynamoComponentDeploymentStatusBase):
    """Observed state of a v1alpha1 DynamoComponentDeployment; replica status is per ``service``."""

    service: ServiceReplicaStatus | None = Field(
        None, description="Service contains replica status information for this service."
    )
