"""operator.config.dynamo.nvidia.com/v1alpha1: the OperatorConfiguration file format.

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
    Duration,
    KubeResource,
)

__all__ = [
    "CertProvisionMode",
    "CheckpointConfiguration",
    "CheckpointOCIConfig",
    "CheckpointPVCConfig",
    "CheckpointS3Config",
    "CheckpointSeccompConfiguration",
    "CheckpointStorageConfiguration",
    "DRAConfiguration",
    "DiscoveryBackend",
    "DiscoveryConfiguration",
    "ETCDAuthConfiguration",
    "ETCDAuthMethod",
    "GPUConfiguration",
    "GroveConfiguration",
    "ImagesConfiguration",
    "InfrastructureConfiguration",
    "IngressConfiguration",
    "IstioMeshConfiguration",
    "KaiSchedulerConfiguration",
    "LWSConfiguration",
    "LeaderElectionConfiguration",
    "LoggingConfiguration",
    "MPIConfiguration",
    "MetricsServer",
    "NATSAuthConfiguration",
    "NATSAuthMethod",
    "NATSTLSConfiguration",
    "NamespaceConfiguration",
    "NamespaceScopeConfiguration",
    "OperatorConfiguration",
    "OrchestratorConfiguration",
    "RBACConfiguration",
    "SecurityConfiguration",
    "Server",
    "ServerConfiguration",
    "ServiceMeshConfiguration",
    "VolcanoSchedulerConfiguration",
    "WebhookServer",
    "WorkloadPodTemplateConfiguration",
    "WorkloadSecurityConfiguration",
]

# CertProvisionMode controls how webhook TLS certificates are managed.
CertProvisionMode = Literal["auto", "manual"]


# DiscoveryBackend is the type for the discovery backend.
DiscoveryBackend = Literal["kubernetes", "etcd"]

# dynamo-platform extensions (not in the upstream reference): how workloads authenticate to NATS and
# etcd. Each method is one way the Dynamo runtime reads credentials from its environment.
NATSAuthMethod = Literal["userPassword", "token", "credentialsFile", "namespaceAccount"]
ETCDAuthMethod = Literal["userPassword", "clientCertificate", "namespaceCertificate"]
# dynamo-platform extensions: what admission does with a pod template that asks for host access or
# privileges, and the kinds of request that may pass without a word (docs/security.md)
PodTemplateAction = Literal["Warn", "Deny"]
PodTemplatePrivilege = Literal[
    "privileged",
    "hostPath",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "addedCapabilities",
    "serviceAccountName",
]


# Base classes come first: MetricsServer and WebhookServer extend Server (as the Go types embed it), and
# the orchestrator and scheduler integrations share the auto-detection override.
class Server(ApiModel):
    """Server holds a bind address and port."""

    bind_address: str | None = Field(
        None,
        description="BindAddress is the address the server binds to",
    )
    port: int | None = Field(
        None,
        description="Port is the port the server listens on",
    )


class _AutoDetected(ApiModel):
    """An integration the operator detects on the cluster; ``enabled`` overrides what it detected."""

    enabled: bool | None = Field(
        None,
        description="Enabled overrides auto-detection. nil = auto-detect.",
    )


class CheckpointConfiguration(ApiModel):
    """CheckpointConfiguration holds checkpoint/restore settings."""

    enabled: bool | None = Field(
        None,
        description="Enabled indicates if checkpoint functionality is enabled",
    )
    seccomp: CheckpointSeccompConfiguration | None = Field(
        None,
        description=(
            "Seccomp controls the localhost seccomp profile applied to checkpoint and\n"
            'restore pods. A nil value means "use the default profile"; set\n'
            "Seccomp.Disabled=true to disable seccomp injection entirely."
        ),
    )
    storage: CheckpointStorageConfiguration | None = Field(
        None,
        description=(
            "Storage optionally configures the namespace-local checkpoint PVC that\n"
            "workload pods mount. When omitted, the operator preserves the legacy\n"
            "behavior of discovering storage from a snapshot-agent DaemonSet in the\n"
            "workload namespace."
        ),
    )
    cleanup_image: str | None = Field(
        None,
        description=(
            "CleanupImage is the image used by best-effort artifact cleanup Jobs for\n"
            "automatically-created checkpoints. It must provide a POSIX shell and `rm`."
        ),
    )


class CheckpointOCIConfig(ApiModel):
    """Deprecated: CheckpointOCIConfig is retained for compatibility and ignored by
    the current snapshot flow.
    """

    uri: str | None = Field(
        None,
        description="URI is the legacy OCI URI (oci://registry/repository).",
    )
    credentials_secret_ref: str | None = Field(
        None,
        description="CredentialsSecretRef is the legacy docker config secret name.",
    )


class CheckpointPVCConfig(ApiModel):
    """CheckpointPVCConfig configures the namespace-local PVC mounted into
    checkpoint and restore workload pods.
    """

    pvc_name: str | None = Field(
        None,
        description="PVCName is the PVC name in each workload namespace.",
    )
    base_path: str | None = Field(
        None,
        description="BasePath is the mount path inside checkpoint and restore workload pods.",
    )
    create: bool | None = Field(
        None,
        description=(
            "Create tells the operator to create the PVC in workload namespaces when\n"
            "it is missing. When false, the PVC must already exist."
        ),
    )
    size: str | None = Field(
        None,
        description="Size is the storage request used when Create is true.",
    )
    storage_class_name: str | None = Field(
        None,
        description="StorageClassName is the optional StorageClass name used when Create is true.",
    )
    access_mode: str | None = Field(
        None,
        description="AccessMode is the PVC access mode used when Create is true.",
    )


class CheckpointS3Config(ApiModel):
    """Deprecated: CheckpointS3Config is retained for compatibility and ignored by
    the current snapshot flow.
    """

    uri: str | None = Field(
        None,
        description="URI is the legacy S3 URI (s3://[endpoint/]bucket/prefix).",
    )
    credentials_secret_ref: str | None = Field(
        None,
        description="CredentialsSecretRef is the legacy credentials secret name.",
    )


class CheckpointSeccompConfiguration(ApiModel):
    """CheckpointSeccompConfiguration controls the localhost seccomp profile applied
    to checkpoint and restore pods. The profile blocks io\\_uring syscalls (which
    CRIU cannot dump). Default behavior (zero-value substruct, or absent
    substruct) applies DefaultSeccompProfile. Set Disabled=true on OpenShift
    (custom localhost profiles require privileged SCC) or when using a CRIU
    build with io\\_uring support. Set Profile to override the default path.
    """

    disabled: bool | None = Field(
        None,
        description=(
            "Disabled, when true, suppresses seccomp profile injection entirely.\n"
            "Use this for clusters where custom localhost profiles are not allowed\n"
            "(e.g. OpenShift's restricted-v2 SCC) or for CRIU builds that handle\n"
            "io_uring natively."
        ),
    )
    profile: str | None = Field(
        None,
        description=(
            "Profile is the localhost seccomp profile path. Empty falls back to\n"
            "DefaultSeccompProfile. Ignored when Disabled is true."
        ),
    )


class CheckpointStorageConfiguration(ApiModel):
    """CheckpointStorageConfiguration configures checkpoint storage for operator
    pod mutations. Only PVC storage is implemented today.
    """

    type: str | None = Field(
        None,
        description="Type is the storage backend type. Only pvc is implemented today.",
    )
    pvc: CheckpointPVCConfig | None = Field(
        None,
        description="PVC configuration for pvc-based settings.",
    )
    s3: CheckpointS3Config | None = Field(
        None,
        description="Deprecated: S3 is retained for compatibility and ignored.",
    )
    oci: CheckpointOCIConfig | None = Field(
        None,
        description="Deprecated: OCI is retained for compatibility and ignored.",
    )


class DRAConfiguration(ApiModel):
    """DRAConfiguration holds Dynamic Resource Allocation (resource.k8s.io/v1) settings.
    NOTE: auto-detection here only verifies that the resource.k8s.io/v1 API is
    registered on the apiserver (Kubernetes 1.34+). It does NOT verify that a
    GPU-specific DRA resource driver (e.g. nvidia/k8s-dra-driver-gpu) is
    installed, that its DeviceClass exists, or that node-level GPU drivers are
    compatible. An admin can use `enabled: false` to force-off DRA integration
    on clusters where the API is present but the GPU driver stack is not wired
    up — this makes the operator fail GMS / inter-pod failover admissions early
    with a clear error instead of letting pods Pend with a confusing
    "resourceclaim not found" at schedule time.
    """

    enabled: bool | None = Field(
        None,
        description=(
            "Enabled overrides auto-detection of the resource.k8s.io/v1 API.\n"
            "nil = auto-detect. Setting true requires detection to also succeed (the\n"
            "operator will exit at startup otherwise)."
        ),
    )


class DiscoveryConfiguration(ApiModel):
    """DiscoveryConfiguration holds discovery backend settings."""

    backend: DiscoveryBackend | None = Field(
        None,
        description='Backend is the discovery backend: "kubernetes" or "etcd"',
    )


class GPUConfiguration(ApiModel):
    """GPUConfiguration holds GPU discovery settings."""

    discovery_enabled: bool | None = Field(
        None,
        description="DiscoveryEnabled indicates whether GPU discovery is enabled",
    )


class GroveConfiguration(_AutoDetected):
    """GroveConfiguration holds Grove orchestrator settings."""

    termination_delay: Duration | None = Field(
        None,
        description="TerminationDelay configures the termination delay for Grove PodCliqueSets",
    )


class InfrastructureConfiguration(ApiModel):
    """InfrastructureConfiguration holds service mesh and backend addresses."""

    nats_address: str | None = Field(
        None,
        description="NATSAddress is the address of the NATS server",
    )
    etcd_address: str | None = Field(
        None,
        description="ETCDAddress is the address of the etcd server",
    )
    model_express_url: str | None = Field(
        None,
        alias="modelExpressURL",
        description="ModelExpressURL is the URL of the Model Express server to inject into all pods",
    )
    prometheus_endpoint: str | None = Field(
        None,
        description="PrometheusEndpoint is the URL of the Prometheus endpoint to use for metrics",
    )
    nats_auth: NATSAuthConfiguration | None = Field(
        None,
        description=(
            "NATSAuth (dynamo-platform extension) names the Secret, in each workload namespace, whose\n"
            "credentials every component presents to NATS (NATS_AUTH_* env vars)."
        ),
    )
    nats_tls: NATSTLSConfiguration | None = Field(
        None,
        alias="natsTLS",
        description=(
            "NATSTLS (dynamo-platform extension) names the Secret, in each workload namespace, with the CA\n"
            "(and client certificate) every component uses for TLS to NATS (NATS_TLS_* env vars)."
        ),
    )
    etcd_auth: ETCDAuthConfiguration | None = Field(
        None,
        description=(
            "ETCDAuth (dynamo-platform extension) names the Secret, in each workload namespace, whose\n"
            "credentials every component presents to etcd (ETCD_AUTH_* env vars)."
        ),
    )


class IngressConfiguration(ApiModel):
    """IngressConfiguration holds ingress settings."""

    virtual_service_gateway: str | None = Field(
        None,
        description="VirtualServiceGateway is the name of the Istio virtual service gateway",
    )
    controller_class_name: str | None = Field(
        None,
        description="ControllerClassName is the ingress controller class name",
    )
    controller_tls_secret_name: str | None = Field(
        None,
        alias="controllerTLSSecretName",
        description="ControllerTLSSecretName is the TLS secret for the ingress controller",
    )
    host_suffix: str | None = Field(
        None,
        description="HostSuffix is the suffix for ingress hostnames",
    )
    virtual_service_supports_https: bool | None = Field(
        None,
        alias="virtualServiceSupportsHTTPS",
        description=(
            "VirtualServiceSupportsHTTPS (dynamo-platform extension; the chart's\n"
            "dynamo.virtualServiceSupportsHTTPS): the Istio gateway serves the VirtualServices' hosts over\n"
            "HTTPS, so the endpoints the operator reports (the Exposed condition) are https:// URLs."
        ),
    )
    allowed_annotations: list[str] | None = Field(
        None,
        description=(
            "AllowedAnnotations (dynamo-platform extension; the chart's dynamo.ingress.allowedAnnotations):\n"
            "annotations a component's ingress may set although ingress controllers read them as raw\n"
            "configuration or as references outside the graph's namespace (*-snippet, HAProxy config-*,\n"
            'ingress-nginx Secret references into another namespace), refused otherwise; "*" allows all.'
        ),
    )
    allowed_host_suffixes: list[str] | None = Field(
        None,
        description=(
            "AllowedHostSuffixes (dynamo-platform extension; the chart's\n"
            "dynamo.ingress.allowedHostSuffixes): with hostSuffix, the domains a component's ingress host\n"
            "may end in; when either is set, a host outside them is refused. Neither: any host."
        ),
    )
    allowed_gateways: list[str] | None = Field(
        None,
        description=(
            "AllowedGateways (dynamo-platform extension; the chart's dynamo.istio.allowedGateways): with\n"
            "virtualServiceGateway, the Istio gateways (namespace/name) a component's ingress may attach\n"
            "its VirtualService to; when either is set, another gateway is refused. Neither: any gateway."
        ),
    )


class IstioMeshConfiguration(ApiModel):
    """IstioMeshConfiguration holds Istio-specific mesh settings."""

    tls_mode: str | None = Field(
        None,
        description=(
            "TLSMode is the Istio TLS mode for DestinationRules.\n"
            'Supported values: "DISABLE", "SIMPLE", "ISTIO_MUTUAL", "MUTUAL".\n'
            'Defaults to "SIMPLE".'
        ),
    )
    insecure_skip_verify: bool | None = Field(
        None,
        description=(
            "InsecureSkipVerify skips TLS certificate verification in DestinationRules.\n"
            "Defaults to true (matching upstream GAIE behavior with self-signed certs)."
        ),
    )
    client_certificate: str | None = Field(
        None,
        description=(
            "ClientCertificate is the path (in the istio-proxy sidecar's filesystem)\n"
            "to the file holding the client-side TLS certificate used for mTLS.\n"
            'REQUIRED when TLSMode is "MUTUAL"; ignored for other modes.'
        ),
    )
    private_key: str | None = Field(
        None,
        description=(
            "PrivateKey is the path (in the istio-proxy sidecar's filesystem) to the\n"
            "file holding the client-side TLS private key used for mTLS.\n"
            'REQUIRED when TLSMode is "MUTUAL"; ignored for other modes.'
        ),
    )
    ca_certificates: str | None = Field(
        None,
        description=(
            "CaCertificates is the optional path (in the istio-proxy sidecar's\n"
            "filesystem) to the file holding CA certificates used to verify the\n"
            'server certificate. Used only when TLSMode is "MUTUAL"; for other modes\n'
            "the field is ignored."
        ),
    )


class KaiSchedulerConfiguration(_AutoDetected):
    """KaiSchedulerConfiguration holds Kai-scheduler settings."""


class LWSConfiguration(_AutoDetected):
    """LWSConfiguration holds LWS orchestrator settings."""


class LeaderElectionConfiguration(ApiModel):
    """LeaderElectionConfiguration holds leader election settings."""

    enabled: bool | None = Field(
        None,
        description="Enabled enables leader election for controller manager",
    )
    id: str | None = Field(
        None,
        description="ID is the leader election resource identity",
    )
    namespace: str | None = Field(
        None,
        description="Namespace is the namespace for the leader election resource",
    )


class LoggingConfiguration(ApiModel):
    """LoggingConfiguration holds logging settings."""

    level: str | None = Field(
        None,
        description='Level is the log level (e.g., "info", "debug")',
    )
    format: str | None = Field(
        None,
        description='Format is the log format (e.g., "json", "text")',
    )


class MPIConfiguration(ApiModel):
    """MPIConfiguration holds MPI SSH secret settings."""

    ssh_secret_name: str | None = Field(
        None,
        description="SSHSecretName is the name of the secret containing the SSH key for MPI",
    )
    ssh_secret_namespace: str | None = Field(
        None,
        description="SSHSecretNamespace is the namespace where the MPI SSH secret is located",
    )
    ssh_secret_copy: bool | None = Field(
        None,
        description=(
            "SSHSecretCopy (dynamo-platform extension, default true): give every namespace with multinode\n"
            "TensorRT-LLM graphs, but SSHSecretNamespace, a Secret SSHSecretName with SSH keys the operator\n"
            "generates for that namespace (its pods mount it; no two namespaces share a key). Needs create\n"
            "on Secrets in those namespaces (the chart grants it with this switch); false leaves providing\n"
            "the Secret there to you."
        ),
    )
    ssh_network_policy: bool | None = Field(
        None,
        description=(
            "SSHNetworkPolicy (dynamo-platform extension, default true): render one NetworkPolicy per\n"
            "graph with multinode TensorRT-LLM components, admitting their sshd port (2222) only from pods\n"
            "of the same graph. Needs write access to NetworkPolicies (the chart grants it with this\n"
            "switch)."
        ),
    )


class MetricsServer(Server):
    """MetricsServer extends Server with secure serving option."""

    secure: bool | None = Field(
        None,
        description=(
            "Secure enables secure serving for the metrics endpoint.\n"
            "nil = default to true (secure by default)."
        ),
    )


class NamespaceConfiguration(ApiModel):
    """NamespaceConfiguration determines operator namespace mode."""

    restricted: str | None = Field(
        None,
        description=(
            "Restricted enables namespace-restricted mode for development and testing.\n"
            "Namespace-restricted mode is not supported for production."
        ),
    )
    scope: NamespaceScopeConfiguration | None = Field(
        None,
        description="Scope configures the namespace ownership claim in namespace-restricted mode.",
    )


class NamespaceScopeConfiguration(ApiModel):
    """NamespaceScopeConfiguration configures the development/test namespace ownership claim."""

    lease_duration: Duration | None = Field(
        None,
        description="LeaseDuration is the duration of namespace scope marker lease before expiration",
    )
    lease_renew_interval: Duration | None = Field(
        None,
        description="LeaseRenewInterval is the interval for renewing namespace scope marker lease",
    )


class OperatorConfiguration(KubeResource):
    """OperatorConfiguration is the Schema for the operator configuration."""

    server: ServerConfiguration | None = Field(
        None,
        description="Server configuration (metrics, health probes, webhooks)",
    )
    leader_election: LeaderElectionConfiguration | None = Field(
        None,
        description="Leader election configuration",
    )
    namespace: NamespaceConfiguration | None = Field(
        None,
        description="Namespace configuration (restricted vs cluster-wide)",
    )
    orchestrators: OrchestratorConfiguration | None = Field(
        None,
        description="Orchestrator configuration with optional overrides",
    )
    dra: DRAConfiguration | None = Field(
        None,
        description="DRA (Dynamic Resource Allocation) settings with optional override",
    )
    infrastructure: InfrastructureConfiguration | None = Field(
        None,
        description="Service mesh and infrastructure addresses",
    )
    ingress: IngressConfiguration | None = Field(
        None,
        description="Ingress configuration",
    )
    service_mesh: ServiceMeshConfiguration | None = Field(
        None,
        description=(
            "ServiceMesh configures automatic generation of service-mesh resources\n"
            "(e.g., Istio DestinationRules) for EPP components."
        ),
    )
    rbac: RBACConfiguration | None = Field(
        None,
        description="RBAC configuration for cross-namespace resource management (cluster-wide mode)",
    )
    mpi: MPIConfiguration | None = Field(
        None,
        description="MPI SSH secret configuration",
    )
    checkpoint: CheckpointConfiguration | None = Field(
        None,
        description="Checkpoint/restore configuration",
    )
    discovery: DiscoveryConfiguration | None = Field(
        None,
        description="Discovery backend configuration",
    )
    gpu: GPUConfiguration | None = Field(
        None,
        description="GPU discovery configuration",
    )
    logging: LoggingConfiguration | None = Field(
        None,
        description="Logging configuration",
    )
    security: SecurityConfiguration | None = Field(
        None,
        description="HTTP/2 and TLS settings",
    )
    images: ImagesConfiguration | None = Field(
        None,
        description="Images (dynamo-platform extension) the operator runs in the Jobs it creates",
    )


class OrchestratorConfiguration(ApiModel):
    """OrchestratorConfiguration holds orchestrator override settings."""

    grove: GroveConfiguration | None = Field(
        None,
        description="Grove orchestrator configuration",
    )
    lws: LWSConfiguration | None = Field(
        None,
        description="LWS orchestrator configuration",
    )
    kai_scheduler: KaiSchedulerConfiguration | None = Field(
        None,
        description="KaiScheduler configuration",
    )
    volcano_scheduler: VolcanoSchedulerConfiguration | None = Field(
        None,
        description="VolcanoScheduler configuration",
    )


class RBACConfiguration(ApiModel):
    """RBACConfiguration holds RBAC settings for cluster-wide mode."""

    planner_cluster_role_name: str | None = Field(
        None,
        description="PlannerClusterRoleName is the ClusterRole for planner",
    )
    dgdr_profiling_cluster_role_name: str | None = Field(
        None,
        description="DGDRProfilingClusterRoleName is the ClusterRole for DGDR profiling jobs",
    )
    epp_cluster_role_name: str | None = Field(
        None,
        description="EPPClusterRoleName is the ClusterRole for EPP",
    )
    discovery_cluster_role_name: str | None = Field(
        None,
        description=(
            "DiscoveryClusterRoleName is the ClusterRole bound to each graph's Kubernetes-discovery "
            "ServiceAccount (<dgd>-k8s-service-discovery): EndpointSlices and Pods read, "
            "DynamoWorkerMetadata written (an extension of this project; render/discovery.py)"
        ),
    )
    discovery_role_name: str | None = Field(
        None,
        description=(
            "DiscoveryRoleName is, in namespace-restricted mode, the Role in the restricted namespace bound\n"
            "to each graph's Kubernetes-discovery ServiceAccount instead of a ClusterRole (the chart ships\n"
            "it with the discovery rules and grants the operator bind on it by name; an extension of this\n"
            "project; render/discovery.py)"
        ),
    )


class SecurityConfiguration(ApiModel):
    """SecurityConfiguration holds HTTP/2 and TLS settings."""

    enable_http2: bool | None = Field(
        None,
        alias="enableHTTP2",
        description="EnableHTTP2 enables HTTP/2 for metrics and webhook servers",
    )
    workloads: WorkloadSecurityConfiguration | None = Field(
        None,
        description=(
            "Workloads (dynamo-platform extension): the security context of the pods the operator\n"
            "renders, and what admission says about pod templates that ask for privileges."
        ),
    )


class ServerConfiguration(ApiModel):
    """ServerConfiguration holds server bind addresses and ports."""

    metrics: MetricsServer | None = Field(
        None,
        description="Metrics server configuration",
    )
    health_probe: Server | None = Field(
        None,
        description="Health probe server configuration",
    )
    webhook: WebhookServer | None = Field(
        None,
        description="Webhook server configuration",
    )


class ServiceMeshConfiguration(ApiModel):
    """ServiceMeshConfiguration holds service mesh integration settings.
    The operator uses this to generate mesh-specific resources (e.g., Istio
    DestinationRules) for EPP components so that sidecar proxies connect
    correctly without double-TLS issues.
    """

    enabled: bool | None = Field(
        None,
        description="Enabled overrides service mesh auto-detection. nil = auto-detect.",
    )
    provider: str | None = Field(
        None,
        description=(
            'Provider selects the service mesh implementation. Supported: "istio", "".\n'
            "Empty string disables service mesh resource generation."
        ),
    )
    istio: IstioMeshConfiguration | None = Field(
        None,
        description='Istio holds Istio-specific settings. Only used when Provider is "istio".',
    )


class ETCDAuthConfiguration(ApiModel):
    """ETCDAuthConfiguration (dynamo-platform extension): the etcd credentials of the workloads.

    ``userPassword``: ETCD_AUTH_USERNAME / ETCD_AUTH_PASSWORD from the Secret's ``username`` and
    ``password`` keys. ``clientCertificate``: mutual TLS, ETCD_AUTH_CA / ETCD_AUTH_CLIENT_CERT /
    ETCD_AUTH_CLIENT_KEY carry the PEM text of ``ca.crt``, ``tls.crt`` and ``tls.key`` (the Dynamo runtime
    parses these variables as PEM, not as paths). The runtime uses one or the other, never both.
    ``namespaceCertificate``: each graph namespace gets its own etcd user, key root and certificate, issued
    by the operator and reached through two sidecars (``render/etcdaccess.py``); the runtime gets none.
    """

    method: ETCDAuthMethod | None = Field(
        None,
        description="Method is userPassword, clientCertificate or namespaceCertificate",
    )
    secret_name: str | None = Field(
        None,
        description=(
            "SecretName is the Secret, in each workload namespace, holding the credentials (with\n"
            "namespaceCertificate: the Secret the operator writes there)"
        ),
    )
    admin_secret_name: str | None = Field(
        None,
        description=(
            "AdminSecretName (namespaceCertificate) is the Secret, in adminSecretNamespace, with the CA\n"
            "that signs each namespace's certificate (ca.crt, ca.key), the operator's own client\n"
            "certificate without a Common Name (tls.crt, tls.key) and etcd's root password (password)"
        ),
    )
    admin_secret_namespace: str | None = Field(
        None,
        description="AdminSecretNamespace is the namespace of adminSecretName (the platform's)",
    )
    proxy_image: str | None = Field(
        None,
        description=(
            "ProxyImage (namespaceCertificate) is an etcd image whose `etcd grpc-proxy` prefixes a graph\n"
            "pod's keys with its namespace's root (the etcd-proxy sidecar)"
        ),
    )


class ImagesConfiguration(ApiModel):
    """ImagesConfiguration (dynamo-platform extension): images of the helper containers the operator
    creates, each pinned to a version (the chart passes its own operator image)."""

    operator: str | None = Field(
        None,
        description=(
            "Operator is the operator's own image; the DGDR profiling Job's output-copier runs it\n"
            "(dynamo-operator publish-profiling-output)."
        ),
    )
    profiler: str | None = Field(
        None,
        description=(
            "Profiler is the DGDR profiling Job's profiler image when a request names none\n"
            "(v1beta1 spec.image, v1alpha1 spec.profilingConfig.profilerImage); admission writes it\n"
            "into the request (upstream's --dgdr-default-image)."
        ),
    )


class NATSAuthConfiguration(ApiModel):
    """NATSAuthConfiguration (dynamo-platform extension): the NATS credentials of the workloads.

    ``userPassword``: NATS_AUTH_USERNAME / NATS_AUTH_PASSWORD from the Secret's ``username`` and
    ``password`` keys; ``token``: NATS_AUTH_TOKEN from ``token``; ``credentialsFile``: the Secret mounted
    read-only and NATS_AUTH_CREDENTIALS_FILE pointing at its ``nats.creds`` key. ``namespaceAccount``: each
    graph namespace gets its own NATS account and a certificate mapped to it, issued by the operator and
    mounted as files (``render/natsaccess.py``).
    """

    method: NATSAuthMethod | None = Field(
        None,
        description="Method is userPassword, token, credentialsFile or namespaceAccount",
    )
    secret_name: str | None = Field(
        None,
        description=(
            "SecretName is the Secret, in each workload namespace, holding the credentials (with\n"
            "namespaceAccount: the Secret the operator writes there)"
        ),
    )
    admin_secret_name: str | None = Field(
        None,
        description=(
            "AdminSecretName (namespaceAccount) is the Secret, in adminSecretNamespace, with the NATS CA\n"
            "that signs each namespace's certificate (ca.crt, ca.key)"
        ),
    )
    admin_secret_namespace: str | None = Field(
        None,
        description=(
            "AdminSecretNamespace is the namespace of adminSecretName and accountsConfigMap (the\nplatform's)"
        ),
    )
    accounts_config_map: str | None = Field(
        None,
        description=(
            "AccountsConfigMap (namespaceAccount) is the ConfigMap, in adminSecretNamespace, whose\n"
            "accounts.conf the NATS server includes: one account per graph namespace, kept by the operator"
        ),
    )
    monitor_url: str | None = Field(
        None,
        alias="monitorURL",
        description=(
            "MonitorURL (namespaceAccount) is the NATS server's monitoring endpoint (http://host:8222):\n"
            "a namespace's first graph waits there, up to a minute and a half, until its new account is\n"
            "loaded (empty: no wait; the pods retry until it is)"
        ),
    )


class NATSTLSConfiguration(ApiModel):
    """NATSTLSConfiguration (dynamo-platform extension): TLS to NATS. The Secret is mounted read-only;
    NATS_TLS_CA_CERT_PATH points at its ``ca.crt``, and with ``clientCertificate`` NATS_TLS_CLIENT_CERT_PATH
    / NATS_TLS_CLIENT_KEY_PATH at ``tls.crt`` / ``tls.key``."""

    secret_name: str | None = Field(
        None,
        description=(
            "SecretName is the Secret, in each workload namespace, holding ca.crt (and tls.crt/tls.key)"
        ),
    )
    client_certificate: bool | None = Field(
        None,
        description="ClientCertificate presents tls.crt/tls.key to NATS (servers that verify clients)",
    )


class VolcanoSchedulerConfiguration(ApiModel):
    """VolcanoSchedulerConfiguration holds Volcano scheduler settings."""

    enabled: bool | None = Field(
        None,
        description="EXPERIMENTAL: Enabled controls Volcano scheduler integration for Grove PodCliqueSets.",
    )


class WorkloadPodTemplateConfiguration(ApiModel):
    """WorkloadPodTemplateConfiguration (dynamo-platform extension): the admission check of the pod templates
    in DynamoGraphDeployments and DynamoComponentDeployments. A pod template that asks for a privileged or
    host-access setting, an added capability or a ServiceAccount other than the one the operator would
    give the component gets an admission warning (``Warn``) or is refused (``Deny``), unless listed here."""

    action: PodTemplateAction | None = Field(
        None,
        description=(
            "Action is Warn (admit with an AdmissionReview warning, the default) or Deny (refuse a\n"
            "request that adds such a setting; one already in the old object is only warned about)."
        ),
    )
    allow: list[PodTemplatePrivilege] | None = Field(
        None,
        description=(
            "Allow lists the settings admitted without a word: privileged, hostPath, hostNetwork,\n"
            "hostPID, hostIPC, addedCapabilities (any), serviceAccountName (any)."
        ),
    )
    allowed_capabilities: list[str] | None = Field(
        None,
        description=(
            "AllowedCapabilities are capability names (IPC_LOCK, SYS_PTRACE; without CAP_) a container\n"
            "may add without a word; NET_BIND_SERVICE (allowed by the restricted profile) always may."
        ),
    )
    allowed_service_accounts: list[str] | None = Field(
        None,
        description=(
            "AllowedServiceAccounts are ServiceAccount names a pod template may name besides the\n"
            "operator's own for the component (planner-serviceaccount, epp-serviceaccount, default)."
        ),
    )


class WorkloadSecurityConfiguration(ApiModel):
    """WorkloadSecurityConfiguration (dynamo-platform extension): hardening of the workloads the operator
    renders (components on every pathway, DGDR profiling Jobs, checkpoint Jobs)."""

    restricted_security_context: bool | None = Field(
        None,
        description=(
            "RestrictedSecurityContext gives every rendered pod the restricted Pod Security profile's\n"
            "settings where the pod template leaves them unset: pod runAsNonRoot and seccompProfile\n"
            "RuntimeDefault, containers allowPrivilegeEscalation false and capabilities drop ALL. A pod\n"
            "template with a securityContext of its own gets no injected settings at all (the documented\n"
            "rule of the fsGroup default). Helm: dynamo-operator.dynamo.enableRestrictedSecurityContext."
        ),
    )
    pod_templates: WorkloadPodTemplateConfiguration | None = Field(
        None,
        description="PodTemplates configures the admission check of privileged pod template settings.",
    )
    image_pull_secret_discovery: bool | None = Field(
        None,
        description=(
            "ImagePullSecretDiscovery (default true) gives each component the\n"
            "kubernetes.io/dockerconfigjson Secrets of its namespace whose registries its images are pulled\n"
            "from. Off, the operator reads no Secret and the chart grants no Secret list (Helm:\n"
            "dynamo-operator.imagePullSecretDiscovery.enabled); pods name their imagePullSecrets themselves."
        ),
    )


class WebhookServer(Server):
    """WebhookServer extends Server with host and certificate directory."""

    host: str | None = Field(
        None,
        description="Host is the address the webhook server binds to",
    )
    cert_dir: str | None = Field(
        None,
        description="CertDir is the directory containing TLS certificates",
    )
    cert_provision_mode: CertProvisionMode | None = Field(
        None,
        description=(
            'CertProvisionMode controls certificate management: "auto" (built-in cert-controller) or '
            '"manual" (external)'
        ),
    )
    secret_name: str | None = Field(
        None,
        description="SecretName is the name of the Kubernetes Secret holding webhook TLS certificates",
    )
    service_name: str | None = Field(
        None,
        description=(
            "ServiceName is the name of the Kubernetes Service fronting the webhook server.\n"
            "Used to generate certificate SANs. Set by the Helm chart."
        ),
    )
