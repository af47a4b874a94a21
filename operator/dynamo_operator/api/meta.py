"""Base models and Kubernetes core types shared by every nvidia.com API version.

Two model families live here:

* :class:`ApiModel` is the base of every type the API reference defines. Unknown fields are rejected so a
  typo in a manifest is reported instead of silently dropped, and every field is optional unless the
  reference marks it ``Required`` so that ``model_dump(by_alias=True, exclude_none=True)`` gives back exactly
  what was read: the operator must be able to read an object and write it back without adding defaults
  the user never asked for (defaulting belongs to the webhook, not to deserialisation).
* :class:`KubeModel` covers Kubernetes core types (PodTemplateSpec, Container, EnvVar, Probe...). The
  fields the operator reads are typed; everything else is kept verbatim (``extra="allow"``) because the
  operator only passes it through to the pods it renders.

Each type can carry a fixed CRD schema (``crd_schema``) so that embedded core types become small
pass-through schemas in the CRDs instead of the multi-megabyte expanded PodSpec upstream ships.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

__all__ = [
    "ApiModel",
    "Condition",
    "Container",
    "ContainerName",
    "ContainerPort",
    "CoreConfigMapKeySelector",
    "CoreVolumeMount",
    "CrdSchema",
    "Duration",
    "EmbeddedResource",
    "EnvVar",
    "KubeModel",
    "KubeObject",
    "KubeResource",
    "ObjectMeta",
    "PodSpec",
    "PodTemplateSpec",
    "Probe",
    "Quantity",
    "RawExtension",
    "ResourceClaim",
    "ResourceRequirements",
    "Time",
    "Toleration",
    "resolved_fields",
]

PRESERVE: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


class CrdSchema:
    """Annotation marker giving the exact OpenAPI schema a type has in a CRD.

    Used for types whose Python shape and CRD shape differ on purpose: pass-through core objects and
    Kubernetes scalars such as Quantity (int-or-string) or Time (RFC 3339 string).
    """

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema

    def __repr__(self) -> str:
        return f"CrdSchema({self.schema!r})"


# Kubernetes resource.Quantity serialisation (same regex the apiserver's OpenAPI uses).
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_QUANTITY_RE = re.compile(QUANTITY_PATTERN)


def _check_quantity(value: int | float | str) -> int | float | str:
    if isinstance(value, str) and not _QUANTITY_RE.match(value):
        raise ValueError(f"{value!r} is not a Kubernetes quantity (for example 8Gi, 500m, 2)")
    return value


Quantity = Annotated[
    int | float | str,
    AfterValidator(_check_quantity),
    CrdSchema(
        {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": True,
        }
    ),
]
"""A Kubernetes quantity; kept in the form it was written (``8Gi`` stays a string, ``2`` an int)."""

Time = Annotated[str, CrdSchema({"type": "string", "format": "date-time"})]
"""metav1.Time: RFC 3339 string, kept as text so it round-trips byte-for-byte."""

Duration = Annotated[str, CrdSchema({"type": "string"})]
"""metav1.Duration in Go syntax (``30s``, ``15m``)."""

KubeObject = Annotated[dict[str, Any], CrdSchema(PRESERVE)]
"""Free-form object passed through untouched (apiextensions JSON, HPA behavior, JobSpec...)."""

RawExtension = Annotated[dict[str, Any], CrdSchema(PRESERVE)]
"""runtime.RawExtension holding an arbitrary object."""

EmbeddedResource = Annotated[
    dict[str, Any],
    CrdSchema({**PRESERVE, "x-kubernetes-embedded-resource": True}),
]
"""A whole Kubernetes object (apiVersion, kind, metadata) embedded in a field."""

ContainerName = Annotated[
    str, StringConstraints(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
]
"""A DNS-1123 label naming a container."""


class ApiModel(BaseModel):
    """Base of every nvidia.com and operator-config type."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        protected_namespaces=(),
        validate_assignment=False,
        # built on first use, not at import: building every class's validator took most of the time
        # ``dynamo-operator render`` spent importing the API (issue 34), for ~200 classes of which a render
        # validates with two kinds; validation is the same either way (see ``resolved_fields``)
        defer_build=True,
    )

    def to_dict(self) -> dict[str, Any]:
        """camelCase JSON-compatible dict with unset fields left out (what the apiserver expects)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


def resolved_fields(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """``model.model_fields`` with every annotation resolved to its type.

    Why not ``model_fields`` itself: models are built on first use (``defer_build`` above), and until then a
    field typed with a class defined further down its module (annotations are strings under ``from
    __future__ import annotations``) still holds a ForwardRef. Code that reads field types (CRD generation,
    the configuration's key suggestions, the coverage tools) reads them through here; building the model
    also raises at once on a name its module does not define.
    """
    model.model_rebuild()
    return model.model_fields


class KubeModel(ApiModel):
    """Base of Kubernetes core types: typed where the operator reads them, verbatim elsewhere."""

    model_config = ConfigDict(extra="allow")
    crd_schema: ClassVar[dict[str, Any] | None] = PRESERVE


class ObjectMeta(KubeModel):
    """metav1.ObjectMeta; the apiserver validates it, so the CRD only declares ``type: object``."""

    crd_schema: ClassVar[dict[str, Any] | None] = {"type": "object"}

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    finalizers: list[str] | None = None
    owner_references: list[dict[str, Any]] | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None


class EnvVar(KubeModel):
    """corev1.EnvVar. Typed in the CRD too: env lists are small and worth validating."""

    crd_schema: ClassVar[dict[str, Any] | None] = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "description": "Name of the environment variable."},
            "value": {"type": "string", "description": "Literal value of the variable."},
            "valueFrom": {**PRESERVE, "description": "Source for the variable's value (secret, field...)."},
        },
    }

    name: str
    value: str | None = None
    value_from: dict[str, Any] | None = None


class ResourceRequirements(KubeModel):
    """corev1.ResourceRequirements."""

    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None
    claims: list[dict[str, Any]] | None = None


class Probe(KubeModel):
    """corev1.Probe; the handler (httpGet, exec, tcpSocket, grpc) is passed through."""

    http_get: dict[str, Any] | None = None
    exec: dict[str, Any] | None = None
    tcp_socket: dict[str, Any] | None = None
    grpc: dict[str, Any] | None = None
    initial_delay_seconds: int | None = None
    period_seconds: int | None = None
    timeout_seconds: int | None = None
    success_threshold: int | None = None
    failure_threshold: int | None = None
    termination_grace_period_seconds: int | None = None


class CoreVolumeMount(KubeModel):
    """corev1.VolumeMount (not to be confused with the v1alpha1 PVC reference of the same name)."""

    name: str
    mount_path: str
    read_only: bool | None = None
    sub_path: str | None = None


class ContainerPort(KubeModel):
    """corev1.ContainerPort."""

    container_port: int
    name: str | None = None
    protocol: str | None = None


class Container(KubeModel):
    """corev1.Container; ``name`` is optional because v1alpha1 ``mainContainer`` may omit it."""

    name: str | None = None
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    working_dir: str | None = None
    env: list[EnvVar] | None = None
    env_from: list[dict[str, Any]] | None = None
    ports: list[ContainerPort] | None = None
    resources: ResourceRequirements | None = None
    volume_mounts: list[CoreVolumeMount] | None = None
    liveness_probe: Probe | None = None
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None
    image_pull_policy: str | None = None
    security_context: dict[str, Any] | None = None


class PodSpec(KubeModel):
    """corev1.PodSpec; containers are typed, the rest (volumes, affinity...) passes through."""

    containers: list[Container] | None = None
    init_containers: list[Container] | None = None
    volumes: list[dict[str, Any]] | None = None
    service_account_name: str | None = None
    security_context: dict[str, Any] | None = None
    termination_grace_period_seconds: int | None = None
    restart_policy: str | None = None
    image_pull_secrets: list[dict[str, Any]] | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[dict[str, Any]] | None = None


class PodTemplateMetadata(KubeModel):
    """The metadata part of a pod template (labels and annotations are what matter)."""

    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class PodTemplateSpec(KubeModel):
    """corev1.PodTemplateSpec; a pass-through schema in CRDs (the apiserver validates the pods)."""

    metadata: PodTemplateMetadata | None = None
    spec: PodSpec | None = None


class Toleration(KubeModel):
    """corev1.Toleration."""


class ResourceClaim(KubeModel):
    """corev1.ResourceClaim (a DRA claim reference)."""

    name: str | None = None


class CoreConfigMapKeySelector(KubeModel):
    """corev1.ConfigMapKeySelector."""

    crd_schema: ClassVar[dict[str, Any] | None] = {
        "type": "object",
        "required": ["key"],
        "properties": {
            "name": {"type": "string", "description": "Name of the ConfigMap."},
            "key": {"type": "string", "description": "The key to select."},
            "optional": {"type": "boolean", "description": "Whether the ConfigMap or its key must exist."},
        },
        "x-kubernetes-map-type": "atomic",
    }

    name: str | None = None
    key: str
    optional: bool | None = None


class Condition(KubeModel):
    """metav1.Condition."""

    crd_schema: ClassVar[dict[str, Any] | None] = {
        "type": "object",
        "required": ["type", "status"],
        "properties": {
            "type": {"type": "string", "maxLength": 316, "description": "Type of condition in CamelCase."},
            "status": {"type": "string", "enum": ["True", "False", "Unknown"], "description": "Status."},
            "reason": {"type": "string", "maxLength": 1024, "description": "Machine-readable reason."},
            "message": {"type": "string", "maxLength": 32768, "description": "Human-readable message."},
            "lastTransitionTime": {"type": "string", "format": "date-time"},
            "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
        },
    }

    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None
    observed_generation: int | None = None


class KubeResource(ApiModel):
    """Base of top-level kinds: apiVersion, kind and metadata around a spec and a status."""

    api_version: str | None = Field(None, description="APIVersion of this representation of the object.")
    kind: str | None = Field(None, description="Kind is the REST resource this object represents.")
    metadata: ObjectMeta | None = Field(None, description="Standard object metadata.")
