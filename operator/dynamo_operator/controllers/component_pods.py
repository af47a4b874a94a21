"""The pods of components (``nvidia.com/selector=<component>``), cached for one number: how many the
scheduler has placed, ``scheduledReplicas`` in a component's replica status.

Why a cache of pods at all: a Deployment's status says how many replicas exist and are ready, not how many
were placed on a node, and that difference is the one the field is for (a capacity or scheduling shortfall
versus a replica that is placed but not ready yet). Counted for single-node components on the Deployment
pathway, where one pod is one replica; Grove reports the count itself (its PodClique and scaling group
status), and a multinode LeaderWorkerSet group is not one pod, so there it stays unset, which the API
reference defines as "not reported", never as zero.
"""

from __future__ import annotations

from dynamo_operator.render import names
from dynamo_operator.runtime.controller import Request
from dynamo_operator.runtime.informer import Indexer

INDEX = "component"  # pods by "<namespace>/<component>" (the value of the selector label)
SELECTOR = names.LABEL_SELECTOR  # the informer's label selector: every component pod has the label
FINISHED = ("Succeeded", "Failed")


def _component(pod: dict) -> tuple[str, str] | None:
    """(namespace, component) from the pod's selector label; None for a pod without it."""
    md = pod.get("metadata") or {}
    component = (md.get("labels") or {}).get(names.LABEL_SELECTOR)
    return (md.get("namespace") or "", component) if component else None


def index_by_component(pod: dict) -> list[str]:
    key = _component(pod)
    return [f"{key[0]}/{key[1]}"] if key else []


def is_scheduled(pod: dict) -> bool:
    """Placed on a node (``spec.nodeName``), still counting as a replica: not being deleted, not finished."""
    md, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    return (
        bool(spec.get("nodeName")) and not md.get("deletionTimestamp") and status.get("phase") not in FINISHED
    )


def scheduled_replicas(pods: Indexer | None, namespace: str, component: str) -> int | None:
    """How many of the component's pods are scheduled; None without a pod cache (not reported)."""
    if pods is None:
        return None
    return sum(1 for p in pods.by_index(INDEX, f"{namespace}/{component}") if is_scheduled(p))


def component_of(pod: dict) -> list[Request]:
    """The DynamoComponentDeployment a pod belongs to (its selector label names it)."""
    key = _component(pod)
    return [Request(*key)] if key else []
