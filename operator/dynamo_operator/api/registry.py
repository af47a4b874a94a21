"""What the apiserver must know about each nvidia.com kind, in one place.

The CRD generator renders CRDs from this table, and controllers and webhooks use it to map kinds to
plurals, versions and models, so a kind's name, served versions and storage version are never spelled
twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel

from dynamo_operator.api import v1alpha1, v1beta1

GROUP = "nvidia.com"

# The conversion webhook Service the multi-version CRDs point at. The chart renders these same values and
# the operator patches the CA bundle in; keep them here only.
CONVERSION_SERVICE_NAME = "dynamo-operator-webhook-service"
CONVERSION_SERVICE_NAMESPACE = "dynamo-system"
CONVERSION_PATH = "/convert"
CONVERSION_PORT = 443

CATEGORIES = ("dynamo",)


@dataclass(frozen=True)
class PrinterColumn:
    """One ``kubectl get`` column (additionalPrinterColumns entry)."""

    name: str
    json_path: str
    type: str = "string"
    description: str = ""
    priority: int = 0

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            out["description"] = self.description
        if self.priority:
            out["priority"] = self.priority
        return out


AGE = PrinterColumn("Age", ".metadata.creationTimestamp", "date")


@dataclass(frozen=True)
class ScaleSubresource:
    """JSON paths of the scale subresource (what HPA and KEDA read and write)."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str = ".status.selector"


@dataclass(frozen=True)
class KindInfo:
    """A custom resource kind: names, scope, versions and how each version looks in ``kubectl get``."""

    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...]
    scope: str
    storage_version: str
    models: dict[str, type[BaseModel]]
    printer_columns: dict[str, tuple[PrinterColumn, ...]]
    scale: ScaleSubresource | None = None
    deprecated_versions: tuple[str, ...] = ()
    categories: tuple[str, ...] = CATEGORIES
    status_subresource: bool = True
    # may carry the operator's finalizer (every kind but the runtime's own DynamoWorkerMetadata): the kinds
    # the uninstall hook releases the finalizer of, and so may list and update
    finalizable: bool = True
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def versions(self) -> tuple[str, ...]:
        """Served versions, oldest first."""
        return tuple(self.models)

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{GROUP}"

    @property
    def multi_version(self) -> bool:
        return len(self.models) > 1

    def api_version(self, version: str) -> str:
        return f"{GROUP}/{version}"

    def deprecation_warning(self, version: str) -> str:
        return f"{GROUP}/{version} {self.kind} is deprecated; use {GROUP}/v1beta1 {self.kind}"


def _ready(cond: str = "Ready") -> PrinterColumn:
    return PrinterColumn(
        cond, f'.status.conditions[?(@.type=="{cond}")].status', description=f"{cond} condition"
    )


_VERSION_MODULES = {"v1alpha1": v1alpha1, "v1beta1": v1beta1}


def _kind(
    kind: str,
    short_name: str,
    columns: dict[str, tuple[PrinterColumn, ...]],
    *,
    scope: str = "Namespaced",
    scale: ScaleSubresource | None = None,
    status_subresource: bool = True,
    finalizable: bool = True,
) -> KindInfo:
    """A kind as every nvidia.com kind is laid out; only what differs between kinds is passed in.

    The served versions are the keys of ``columns`` (oldest first), each version's model is the class
    named ``kind`` in that version's module, v1alpha1 is the storage version, every version but the
    newest is deprecated, and the plural and singular are the lower-cased kind.
    """
    versions = tuple(columns)
    return KindInfo(
        kind=kind,
        plural=f"{kind.lower()}s",
        singular=kind.lower(),
        short_names=(short_name,),
        scope=scope,
        storage_version="v1alpha1",
        models={version: getattr(_VERSION_MODULES[version], kind) for version in versions},
        printer_columns=columns,
        scale=scale,
        deprecated_versions=versions[:-1],
        status_subresource=status_subresource,
        finalizable=finalizable,
    )


_BACKEND = PrinterColumn(
    "Backend", ".spec.backendFramework", description="Backend framework (sglang, vllm, trtllm)"
)
_DGD_COLUMNS = (
    _ready(),
    PrinterColumn("State", ".status.state", description="Lifecycle state of the graph deployment"),
    _BACKEND,
    AGE,
)
_DCD_COLUMNS = (_ready("Available"), _BACKEND, AGE)
_DGDSA_REPLICA_COLUMNS = (
    PrinterColumn("Desired", ".spec.replicas", "integer"),
    PrinterColumn("Replicas", ".status.replicas", "integer"),
    AGE,
)

KINDS: dict[str, KindInfo] = {
    info.kind: info
    for info in (
        _kind("DynamoGraphDeployment", "dgd", {"v1alpha1": _DGD_COLUMNS, "v1beta1": _DGD_COLUMNS}),
        _kind(
            "DynamoComponentDeployment",
            "dcd",
            {
                "v1alpha1": (PrinterColumn("Service", ".spec.serviceName"), *_DCD_COLUMNS),
                "v1beta1": (PrinterColumn("Component", ".spec.name"), *_DCD_COLUMNS),
            },
        ),
        _kind(
            "DynamoGraphDeploymentRequest",
            "dgdr",
            {
                "v1alpha1": (
                    PrinterColumn("Model", ".spec.model"),
                    PrinterColumn("Backend", ".spec.backend"),
                    PrinterColumn("State", ".status.state"),
                    PrinterColumn("DGD-State", ".status.deployment.state"),
                    AGE,
                ),
                "v1beta1": (
                    PrinterColumn("Model", ".spec.model"),
                    PrinterColumn("Backend", ".spec.backend"),
                    PrinterColumn("Phase", ".status.phase"),
                    PrinterColumn("Profiling", ".status.profilingPhase"),
                    PrinterColumn("DGD", ".status.dgdName"),
                    AGE,
                ),
            },
        ),
        _kind(
            "DynamoGraphDeploymentScalingAdapter",
            "dgdsa",
            {
                "v1alpha1": (
                    PrinterColumn("DGD", ".spec.dgdRef.name"),
                    PrinterColumn("Service", ".spec.dgdRef.serviceName"),
                    *_DGDSA_REPLICA_COLUMNS,
                ),
                "v1beta1": (
                    PrinterColumn("DGD", ".spec.dgdRef.name"),
                    PrinterColumn("Component", ".spec.dgdRef.componentName"),
                    *_DGDSA_REPLICA_COLUMNS,
                ),
            },
            scale=ScaleSubresource(),
        ),
        _kind(
            "DynamoModel",
            "dm",
            {
                "v1alpha1": (
                    PrinterColumn("BaseModel", ".spec.baseModelName"),
                    PrinterColumn("Type", ".spec.modelType"),
                    PrinterColumn("Ready", ".status.readyEndpoints", "integer"),
                    PrinterColumn("Total", ".status.totalEndpoints", "integer"),
                    AGE,
                )
            },
        ),
        _kind(
            "DynamoCheckpoint",
            "dckpt",
            {
                "v1alpha1": (
                    PrinterColumn("Model", ".spec.identity.model"),
                    PrinterColumn("Backend", ".spec.identity.backendFramework"),
                    PrinterColumn("Phase", ".status.phase"),
                    PrinterColumn("CheckpointID", ".status.checkpointID", priority=1),
                    AGE,
                )
            },
        ),
        _kind(
            "PodSnapshot",
            "psnap",
            {
                "v1alpha1": (
                    PrinterColumn("Pod", ".spec.source.podRef.name"),
                    PrinterColumn("Content", ".status.boundPodSnapshotContentName"),
                    _ready(),
                    AGE,
                )
            },
        ),
        _kind(
            # Written by the Dynamo runtime in worker pods (Kubernetes discovery), read by frontends.
            "DynamoWorkerMetadata",
            "dwm",
            {"v1alpha1": (AGE,)},
            status_subresource=False,
            finalizable=False,  # the runtime's objects: no finalizer of ours to release
        ),
        _kind(
            "PodSnapshotContent",
            "psnapc",
            {
                "v1alpha1": (
                    PrinterColumn("Snapshot", ".spec.podSnapshotRef.name"),
                    PrinterColumn("Node", ".spec.source.nodeName"),
                    _ready(),
                    AGE,
                )
            },
            scope="Cluster",
        ),
    )
}

MULTI_VERSION_KINDS = tuple(k for k, info in KINDS.items() if info.multi_version)


def build_models() -> None:
    """Builds every served version's validator now.

    Why: models are built on first use (``meta.ApiModel``'s ``defer_build``, so that ``render`` starts
    fast); the operator calls this before it serves, so the first admission review or conversion of a
    kind does not pay the 20-50 ms of building its validator.
    """
    for info in KINDS.values():
        for model in info.models.values():
            model.model_rebuild()


def kind_for_plural(plural: str) -> KindInfo:
    """The kind whose resource name is ``plural`` (as in admission and conversion requests)."""
    for info in KINDS.values():
        if info.plural == plural:
            return info
    raise KeyError(plural)
