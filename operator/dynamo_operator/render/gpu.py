"""GPU hardware of the cluster, read from its nodes, for a DynamoGraphDeploymentRequest's profiler.

The profiler needs ``hardware.gpuSku`` and ``hardware.numGpusPerNode`` (and uses ``vramMb`` and
``totalGpus``); the seed has the operator fill the ones a request leaves out from cluster discovery ("If all
four fields are set, discovery is skipped"; a given ``gpuSku`` selects the nodes that count). As upstream
does: nodes carrying NVIDIA GPU Feature Discovery labels (``nvidia.com/gpu.product``,
``nvidia.com/gpu.count``, ``nvidia.com/gpu.memory`` in MiB) are GPU nodes; the one with the most GPUs (then
the most memory per GPU) describes the hardware; the SKU is inferred from the product name; ``totalGpus`` is
per-node GPUs times GPU nodes, capped at 32 (the seed's cap). Where GFD's count label is missing the node's
allocatable ``nvidia.com/gpu`` counts instead (device-plugin-only clusters). Filled values go to the
profiler only; the request itself is never rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LABEL_PRODUCT = "nvidia.com/gpu.product"
LABEL_COUNT = "nvidia.com/gpu.count"
LABEL_MEMORY = "nvidia.com/gpu.memory"
GPU_RESOURCE = "nvidia.com/gpu"
TOTAL_GPUS_CAP = 32
HARDWARE_FIELDS = ("gpuSku", "vramMb", "totalGpus", "numGpusPerNode")
# product name fragment -> AIC system identifier (v1beta1 GPUSKUType), most specific first
_SKU_PATTERNS = (
    ("GB200", "gb200_sxm"),
    ("GB10", "gb10"),
    ("H200", "h200_sxm"),
    ("H100PCIE", "h100_pcie"),
    ("H100", "h100_sxm"),
    ("B200", "b200_sxm"),
    ("A100PCIE", "a100_pcie"),
    ("A100", "a100_sxm"),
    ("L40S", "l40s"),
    ("L40", "l40"),
    ("L4", "l4"),
    ("A30", "a30"),
    ("V100", "v100_sxm"),
    ("T4", "t4"),
)


@dataclass(frozen=True)
class GpuInfo:
    """What discovery found: the best GPU node's shape and how many GPU nodes there are."""

    product: str
    per_node: int
    memory_mib: int | None
    nodes: int

    @property
    def sku(self) -> str | None:
        return infer_sku(self.product)


def infer_sku(product: str) -> str | None:
    """The AIC system identifier of a GPU product name (``NVIDIA-H100-80GB-HBM3`` -> ``h100_sxm``)."""
    normalized = product.upper().replace("-", "").replace(" ", "").replace("_", "")
    return next((sku for fragment, sku in _SKU_PATTERNS if fragment in normalized), None)


def _int(value: Any) -> int | None:
    try:
        n = int(str(value))
    except ValueError:
        return None
    return n if n > 0 else None


def node_gpus(node: dict) -> tuple[str, int, int | None] | None:
    """(product, GPUs, MiB per GPU) of a GPU node, None for a node without GPUs or a product label."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    product = labels.get(LABEL_PRODUCT)
    if not product:
        return None
    allocatable = ((node.get("status") or {}).get("allocatable") or {}).get(GPU_RESOURCE)
    count = _int(labels.get(LABEL_COUNT)) or _int(allocatable)
    if count is None:
        return None
    return str(product), count, _int(labels.get(LABEL_MEMORY))


def discover(nodes: list[dict], sku: str | None = None) -> GpuInfo | None:
    """The cluster's GPU hardware, or None when no node has GPUs and a GPU product label. ``sku`` (the
    request's ``hardware.gpuSku``) is a selector: only nodes of that SKU count."""
    found = [g for g in (node_gpus(n) for n in nodes) if g is not None]
    if sku:
        found = [g for g in found if infer_sku(g[0]) == sku]
    if not found:
        return None
    product, count, memory = max(found, key=lambda g: (g[1], g[2] or 0))
    return GpuInfo(product, count, memory, len(found))


def needs_discovery(hardware: dict) -> bool:
    return any(hardware.get(k) is None for k in HARDWARE_FIELDS)


def enrich(hardware: dict, info: GpuInfo | None) -> dict:
    """``hardware`` (the request's, v1beta1) with the fields it leaves out filled from ``info``."""
    out = dict(hardware)
    if info is None:
        return out
    if out.get("gpuSku") is None:
        out["gpuSku"] = info.sku or info.product  # an unknown SKU: upstream passes the product name on
    if out.get("vramMb") is None and info.memory_mib:
        out["vramMb"] = info.memory_mib
    if out.get("numGpusPerNode") is None:
        out["numGpusPerNode"] = info.per_node
    if out.get("totalGpus") is None:
        out["totalGpus"] = min(info.per_node * info.nodes, TOTAL_GPUS_CAP)
    return out
