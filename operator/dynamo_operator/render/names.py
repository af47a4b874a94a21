"""Child names, label and annotation keys, and the Dynamo runtime namespace."""

from __future__ import annotations

import hashlib
import re

from dynamo_operator.labels import LABEL_MANAGED_BY as LABEL_MANAGED_BY  # re-exported
from dynamo_operator.labels import MANAGED_BY as MANAGED_BY

GROUP = "nvidia.com"
V1BETA1 = "nvidia.com/v1beta1"
V1ALPHA1 = "nvidia.com/v1alpha1"
DGD_KIND = "DynamoGraphDeployment"
DCD_KIND = "DynamoComponentDeployment"
# the operator's finalizer (upstream's): on DynamoModels with a LoRA, automatic DynamoCheckpoints
FINALIZER = "nvidia.com/finalizer"

# Labels
LABEL_COMPONENT_TYPE = "nvidia.com/dynamo-component-type"
LABEL_COMPONENT = "nvidia.com/dynamo-component"
LABEL_DGD_NAME = "nvidia.com/dynamo-graph-deployment-name"
LABEL_DYNAMO_NAMESPACE = "nvidia.com/dynamo-namespace"
LABEL_SELECTOR = "nvidia.com/selector"
LABEL_METRICS_ENABLED = "nvidia.com/metrics-enabled"
LABEL_DISCOVERY_BACKEND = "nvidia.com/dynamo-discovery-backend"
LABEL_DISCOVERY_ENABLED = "nvidia.com/dynamo-discovery-enabled"
LABEL_WORKER_HASH = "nvidia.com/dynamo-worker-hash"
LABEL_BASE_MODEL_HASH = "nvidia.com/dynamo-base-model-hash"
# prefill / decode worker pods: the label an EPP's label-filter plugin selects on (upstream's key and values)
LABEL_SUB_COMPONENT_TYPE = "nvidia.com/dynamo-sub-component-type"
SUB_COMPONENT_TYPES = ("prefill", "decode")
# worker pods (and DCDs) of a graph with an EPP component: what its InferencePool selects
LABEL_COMPONENT_CLASS = "nvidia.com/dynamo-component-class"
COMPONENT_CLASS_WORKER = "worker"
# LABEL_MANAGED_BY / MANAGED_BY: imported from dynamo_operator.labels (the runtime and webhooks use them too)

# Annotations
ANN_SPEC_HASH = "nvidia.com/dynamo-spec-hash"
ANN_OPERATOR_VERSION = "nvidia.com/dynamo-operator-version"
# the id of the namespace's MPI SSH keys (mpisecret.key_id) on multinode TensorRT-LLM pod templates
ANN_MPI_SSH_KEY_ID = "nvidia.com/dynamo-mpi-ssh-key-id"
ANN_DISABLE_PULL_SECRET_DISCOVERY = "nvidia.com/disable-image-pull-secret-discovery"
ANN_ENABLE_METRICS = "nvidia.com/enable-metrics"
ANN_DISCOVERY_BACKEND = "nvidia.com/dynamo-discovery-backend"
ANN_KUBE_DISCOVERY_MODE = "nvidia.com/dynamo-kube-discovery-mode"
ANN_ORIGIN_VERSION = "nvidia.com/dynamo-operator-origin-version"
ANN_VLLM_EXECUTOR = "nvidia.com/vllm-distributed-executor-backend"
ANN_DEPLOYMENT_STRATEGY = "nvidia.com/deployment-strategy"
ANN_MAX_SURGE = "nvidia.com/deployment-rolling-update-max-surge"
ANN_MAX_UNAVAILABLE = "nvidia.com/deployment-rolling-update-max-unavailable"
ANN_BASE_MODEL = "nvidia.com/dynamo-base-model"
ANN_DYNAMO_NAMESPACE = "nvidia.com/dynamo-namespace"
ANN_ENABLE_GROVE = "nvidia.com/enable-grove"  # "false" on a DGD: component pathway even with Grove
ANN_KAI_QUEUE = "nvidia.com/kai-scheduler-queue"  # the Kai queue a Grove DGD's pods land in
# pod-template annotation whose change restarts a component's pods (``spec.restart``); its value is the
# restart id, kept on components whose restart completed so they do not roll again
ANN_RESTART_AT = "nvidia.com/restartAt"
ANN_ISTIO_INJECT = "sidecar.istio.io/inject"  # "false" on EPP pods unless the user set it
KUBE_DISCOVERY_POD, KUBE_DISCOVERY_CONTAINER = "pod", "container"
KUBE_DISCOVERY_MODES = (KUBE_DISCOVERY_POD, KUBE_DISCOVERY_CONTAINER)  # values of ANN_KUBE_DISCOVERY_MODE

# Kai scheduler (Grove pathway, when enabled)
KAI_SCHEDULER_NAME = "kai-scheduler"
LABEL_KAI_QUEUE = "kai.scheduler/queue"
DEFAULT_KAI_QUEUE = "dynamo"

# DGD metadata annotations copied to every component's pod template when absent there.
PROPAGATED_DGD_ANNOTATIONS = (
    ANN_ENABLE_METRICS,
    ANN_DISCOVERY_BACKEND,
    ANN_KUBE_DISCOVERY_MODE,
    ANN_ORIGIN_VERSION,
    ANN_VLLM_EXECUTOR,
    ANN_DISABLE_PULL_SECRET_DISCOVERY,
)

MAIN_CONTAINER = "main"
PLANNER_SERVICE_ACCOUNT = "planner-serviceaccount"
EPP_SERVICE_ACCOUNT = "epp-serviceaccount"
GLOBAL_DYNAMO_NAMESPACE = "dynamo"

COMPONENT_TYPES = ("frontend", "worker", "prefill", "decode", "planner", "epp")
WORKER_TYPES = frozenset({"worker", "prefill", "decode"})
DEFAULT_COMPONENT_TYPE = "default"

_DNS_BAD = re.compile(r"[^a-z0-9-]+")


def short_hash(text: str, n: int = 8) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def dns_label(name: str, limit: int = 63) -> str:
    """Lowercase, dots and other invalid characters to '-', at most ``limit`` chars (hash-suffixed if cut)."""
    out = _DNS_BAD.sub("-", name.lower()).strip("-")
    if len(out) <= limit:
        return out
    suffix = short_hash(name, 8)
    return f"{out[: limit - 9].rstrip('-')}-{suffix}"


def component_resource_name(dgd_name: str, component_name: str) -> str:
    """DCD / Deployment / Service name of a DGD component: ``<dgd>-<lowercased component name>``."""
    return dns_label(f"{dgd_name}-{component_name.lower()}")


def dynamo_namespace(k8s_namespace: str, dgd_name: str, global_namespace: bool = False) -> str:
    """``DYN_NAMESPACE``: ``<k8s namespace>-<dgd name>`` (dots to dashes), or ``dynamo`` when global."""
    if global_namespace:
        return GLOBAL_DYNAMO_NAMESPACE
    return f"{k8s_namespace}-{dgd_name.replace('.', '-')}"


def component_type_label(component_type: str | None) -> str:
    return component_type or DEFAULT_COMPONENT_TYPE


def model_hash(model_name: str) -> str:
    return short_hash(model_name, 16)


def model_service_name(dcd_name: str) -> str:
    return dns_label(f"{dcd_name}-model")


def podcliqueset_name(dgd_name: str, component_names: list[str], node_counts: list[int]) -> str:
    """The PodCliqueSet of a DGD: the DGD name, cut when Grove's derived names (``<pcs>-0-<scaling group>-0-
    <clique>-<i>``) would outgrow a DNS label: budget = 45 minus the longest component's share (its name,
    twice when it is a scaling group of ``-ldr``/``-wkr`` cliques), at least 8; a longer name keeps
    ``budget - 5`` characters plus ``-`` and 4 hex of its FNV-32a hash."""
    share = [len(c) + (len(c) + 4 if n > 1 else 0) for c, n in zip(component_names, node_counts, strict=True)]
    budget = max(8, 45 - max(share, default=0))
    name = dgd_name.lower()
    if len(name) <= budget:
        return name
    h = 0x811C9DC5
    for b in dgd_name.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return f"{name[: budget - 5].rstrip('-.')}-{h & 0xFFFF:04x}"


def epp_configmap_name(dcd_name: str) -> str:
    return dns_label(f"{dcd_name}-epp-config", 253)


def claim_template_name(dcd_name: str) -> str:
    """The ResourceClaimTemplate of a GPU memory service component: ``<dgd>-<lower component>-gpu``
    (upstream's name; the DCD name is ``<dgd>-<lower component>``)."""
    return dns_label(f"{dcd_name}-gpu")


def inference_pool_name(dgd_name: str) -> str:
    """The InferencePool of a graph's EPP component, as its ``-pool-name`` argument says: ``<dgd>-pool``."""
    return dns_label(f"{dgd_name}-pool", 253)
