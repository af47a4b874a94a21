"""What the builders need to know about one component, read once from a (validated) DCD dict."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from dynamo_operator.api.alpha import alpha_spec
from dynamo_operator.api.conversion import ALPHA_COMPONENT_TYPE_ALIASES

from . import names
from .errors import RenderError

_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


@dataclass(frozen=True)
class ComponentInfo:
    dcd: dict = field(repr=False)
    name: str  # DCD metadata.name (= Deployment / Service name)
    namespace: str
    component_name: str  # spec.name, as written
    component_type: str | None
    backend: str | None
    dgd_name: str | None  # parent DGD, from the graph label
    dynamo_namespace: str
    node_count: int
    annotations: dict  # DCD metadata annotations + pod template annotations (pod template wins)
    discovery_backend: str
    # the nvidia.com/dynamo-component-type label: the type, or a v1alpha1 componentType v1beta1 has no
    # value for (``main``), kept as the user wrote it; "default" when neither is set
    type_label: str = names.DEFAULT_COMPONENT_TYPE

    @property
    def spec(self) -> dict:
        return self.dcd.get("spec") or {}

    @property
    def is_worker(self) -> bool:
        return self.component_type in names.WORKER_TYPES

    @property
    def multinode(self) -> bool:
        return self.node_count > 1

    @property
    def worker_hash(self) -> str | None:
        return ((self.dcd.get("metadata") or {}).get("labels") or {}).get(names.LABEL_WORKER_HASH)

    @property
    def kube_discovery_mode(self) -> str | None:
        """How the component's containers register with Kubernetes discovery: the
        ``nvidia.com/dynamo-kube-discovery-mode`` annotation, else "container" for intra-pod failover (its
        two engines of a pod must register separately; upstream sets the mode for failover itself)."""
        mode = self.annotations.get(names.ANN_KUBE_DISCOVERY_MODE)
        if mode is None and failover_spec(self.spec) is not None:
            return names.KUBE_DISCOVERY_CONTAINER
        return mode

    @property
    def checkpoint(self) -> dict | None:
        cp = (self.spec.get("experimental") or {}).get("checkpoint")
        return cp if isinstance(cp, dict) and cp.get("enabled") else None


def failover_spec(spec: dict) -> dict | None:
    """``experimental.failover`` of a (v1beta1) component spec; present means enabled."""
    value = (spec.get("experimental") or {}).get("failover")
    return value if isinstance(value, dict) else None


def component_info(dcd: dict, discovery_default: str = "kubernetes") -> ComponentInfo:
    meta = dcd.get("metadata") or {}
    spec = dcd.get("spec") or {}
    labels = meta.get("labels") or {}
    name = meta.get("name")
    namespace = meta.get("namespace") or "default"
    if not name:
        raise RenderError(dcd, "metadata.name", "missing", "give the DynamoComponentDeployment a name")
    dgd_name = labels.get(names.LABEL_DGD_NAME)
    pod_meta = (spec.get("podTemplate") or {}).get("metadata") or {}
    annotations = {**(meta.get("annotations") or {}), **(pod_meta.get("annotations") or {})}
    dyn_ns = names.dynamo_namespace(namespace, dgd_name or name, bool(spec.get("globalDynamoNamespace")))
    node_count = int((spec.get("multinode") or {}).get("nodeCount") or 1)
    discovery = annotations.get(names.ANN_DISCOVERY_BACKEND) or discovery_default
    return ComponentInfo(
        type_label=type_label(spec.get("type"), alpha_spec(dcd) if _may_be_aliased(spec.get("type")) else {}),
        dcd=dcd,
        name=name,
        namespace=namespace,
        component_name=spec.get("name") or name,
        component_type=spec.get("type"),
        backend=spec.get("backendFramework"),
        dgd_name=dgd_name,
        dynamo_namespace=dyn_ns,
        node_count=node_count,
        annotations=annotations,
        discovery_backend=discovery,
    )


def _may_be_aliased(component_type: str | None) -> bool:
    """No type, or a type a v1alpha1 ``componentType`` may name by another name (``main``): only then
    can the label differ from the type (the others skip the conversion)."""
    return not component_type or component_type in ALPHA_COMPONENT_TYPE_ALIASES.values()


def type_label(component_type: str | None, alpha: dict) -> str:
    """The nvidia.com/dynamo-component-type label: the v1alpha1 ``componentType`` as the user wrote it when
    v1beta1 has no value for it or knows it by another name (``main``, the frontend: the label stays
    ``main``, as upstream labelled it) and it is a valid label value; else the v1beta1 ``type``; else
    "default". ``alpha``: the v1alpha1 service or DCD spec."""
    value = alpha.get("componentType")
    named_so = not component_type or ALPHA_COMPONENT_TYPE_ALIASES.get(str(value)) == component_type
    if named_so and isinstance(value, str) and _LABEL_VALUE.match(value):
        return value
    return component_type or names.DEFAULT_COMPONENT_TYPE


_FLAG = re.compile(
    r"^(--tensor-parallel-size|--pipeline-parallel-size|--data-parallel-size|-tp|-pp|-dp)(?:=(\d+))?$"
)
_ALIASES = {"-tp": "tensor-parallel-size", "-pp": "pipeline-parallel-size", "-dp": "data-parallel-size"}


def parallel_sizes(container: dict) -> dict[str, int]:
    """``--tensor/pipeline/data-parallel-size`` (or vLLM's ``-tp/-pp/-dp``) from a container's command + args
    (default 1 each)."""
    words: list[str] = []
    for part in (container.get("command") or []) + (container.get("args") or []):
        try:
            words.extend(shlex.split(str(part)))
        except ValueError:
            words.extend(str(part).split())
    sizes = {"tensor-parallel-size": 1, "pipeline-parallel-size": 1, "data-parallel-size": 1}
    for i, word in enumerate(words):
        m = _FLAG.match(word)
        if not m:
            continue
        value = m.group(2) or (words[i + 1] if i + 1 < len(words) else "")
        if value.isdigit():
            sizes[_ALIASES.get(m.group(1), m.group(1)[2:])] = int(value)
    return sizes


def gpus_per_node(container: dict) -> int:
    res = container.get("resources") or {}
    for section in ("limits", "requests"):
        value = (res.get(section) or {}).get("nvidia.com/gpu")
        if value is not None:
            try:
                return int(str(value))
            except ValueError:
                return 0
    return 0


def vllm_multinode_mode(container: dict) -> str | None:
    """ "tp-pp" when TP x PP exceeds the GPUs of a node, "dp" when TP x PP x DP does, else None."""
    sizes = parallel_sizes(container)
    gpus = gpus_per_node(container)
    world = sizes["tensor-parallel-size"] * sizes["pipeline-parallel-size"]
    if world > gpus:
        return "tp-pp"
    if world * sizes["data-parallel-size"] > gpus:
        return "dp"
    return None
