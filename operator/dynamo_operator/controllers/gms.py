"""GPU memory service in the controllers: a component's ResourceClaimTemplate (rendered by
``render/gms.py``, synced with the component's other children) needs its DeviceClass, which a GPU DRA
driver registers. Without it the claims of the component's pods could never be allocated and the pods
would stay Pending with a message about claims; the owner's status says what is missing instead, and a
DeviceClass appearing re-queues its owners (upstream's check, with a watch instead of a retry)."""

from __future__ import annotations

from collections.abc import Callable

from dynamo_operator.render import gms as rgms
from dynamo_operator.runtime.controller import Request
from dynamo_operator.runtime.informer import Indexer

REASON_DEVICE_CLASS = "DeviceClassNotFound"  # Event reason, DCD Available reason
DGD_REASON_DEVICE_CLASS = "device_class_not_found"  # DGD Ready reason (snake_case, as the graph's others)


def missing_device_classes(specs: list[dict], classes: Indexer | None) -> str | None:
    """A message naming the DeviceClasses the GPU memory service of the (v1beta1) component ``specs`` claims
    from and the cluster lacks; None when all exist (or none is needed). ``classes``: the DeviceClass cache
    (None: resource.k8s.io/v1 is not served, and admission refuses GPU memory service components then)."""
    if classes is None:
        return None
    need = sorted({c for c in (device_class_of(s) for s in specs) if c})
    missing = [n for n in need if classes.get(None, n) is None]
    if not missing:
        return None
    listed = ", ".join(missing)
    return (
        f"DeviceClass {listed} not found: GPU memory service claims its GPUs from it through DRA; install "
        "the GPU DRA driver that registers it, or set experimental.gpuMemoryService.deviceClassName to a "
        "class the cluster has (kubectl get deviceclasses)"
    )


def device_class_of(spec: dict) -> str | None:
    """The DeviceClass a (v1beta1) component spec's GPU memory service claims from, or None."""
    gms = rgms.gms_spec(spec)
    return rgms.device_class(gms) if gms is not None else None


def owners_of_class(objects: Indexer, specs: Callable[[dict], list[dict]]) -> Callable[[dict], list[Request]]:
    """A watch map: a DeviceClass event -> every cached object (DCD or DGD) one of whose component specs
    (``specs(obj)``, v1beta1) claims from that class."""

    def map_fn(device_class: dict) -> list[Request]:
        name = (device_class.get("metadata") or {}).get("name")
        out = []
        for obj in objects.list():
            if any(device_class_of(s) == name for s in specs(obj)):
                md = obj.get("metadata") or {}
                out.append(Request(md.get("namespace") or "", md.get("name") or ""))
        return out

    return map_fn
