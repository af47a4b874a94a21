"""Topology labels of worker pods (``spec.experimental.kvTransferPolicy``, ``render/kvtransfer.py``): once a
worker pod is scheduled, the operator copies its node's topology label(s) onto it, so the Downward API file
the worker reads its domain from gets its content and the router can match prefill and decode workers of
the same domain.

Which labels: the pod's ``nvidia.com/topology-label-key`` annotation names one node label, copied under
the same key; ``nvidia.com/topology-cluster-topology-name`` names a Grove ClusterTopology, whose every level
``{domain, key}`` is copied from node label ``key`` to pod label ``nvidia.com/dynamo-topology.<domain>``.
Both annotations are the graph's rendering, so a pod without them is left alone.

Level-triggered on the components' pod cache (the one ``component_pods`` keeps): a pod event (created,
scheduled, relabelled) reconciles that pod; a pod already carrying the labels costs no request. The node
and the ClusterTopology are read by one GET each (no cache of every Node): a graph's workers are few and
are placed once. A pod whose node lacks a label, or whose ClusterTopology does not exist, gets a Warning
Event saying what to do and is looked at again five minutes later (the Event's count says how often);
nothing else is written then. A namespace-restricted operator reads no Node (the chart grants it none): it
makes no request and says so in a Warning Event on the pod.
"""

from __future__ import annotations

from kubernetes.client.exceptions import ApiException

from dynamo_operator.render import kvtransfer
from dynamo_operator.runtime.client import NODES, PODS, custom
from dynamo_operator.runtime.controller import Controller, Request, Result

from . import component_pods
from .common import Deps, log, short_error
from .wiring import Wiring

CONTROLLER = "TopologyLabels"
CLUSTER_TOPOLOGIES = custom("grove.io", "v1alpha1", "clustertopologies", "ClusterTopology", namespaced=False)
RETRY_SECONDS = 300.0  # nothing watches Nodes or ClusterTopologies: a missing one is looked for again
EV_COPIED = "TopologyLabelsCopied"
EV_MISSING = "TopologyLabelMissing"
EV_SOURCE = "TopologySourceUnreadable"


def wants_labels(pod: dict | None) -> bool:
    """A scheduled, live pod the graph asked topology labels for."""
    if not pod or not component_pods.is_scheduled(pod):
        return False
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return any(a in annotations for a in kvtransfer.SOURCE_ANNOTATIONS)


RESTRICTED = (
    "this operator is restricted to its namespace and reads no Node, so it cannot copy the node's topology "
    "label onto this worker (its topology domain stays unknown to the router); run spec.experimental."
    "kvTransferPolicy graphs under a cluster-wide operator, or label the pod yourself"
)


class TopologyReconciler:
    """``reads_nodes``: the operator is cluster-wide (the chart grants Node and ClusterTopology gets, and
    pod patches, only then: ``dynamo-operator.clusterWideRules``)."""

    def __init__(self, deps: Deps, reads_nodes: bool = True):
        self.deps = deps
        self.pods = deps.stores[PODS]
        self.reads_nodes = reads_nodes

    def __call__(self, req: Request) -> Result:
        pod = self.pods.get(req.namespace, req.name)
        if not wants_labels(pod):
            return Result()
        assert pod is not None
        md = pod["metadata"]
        if not self.reads_nodes:  # no request it could not make: the Event says what to do
            self.deps.recorder.warning(pod, EV_SOURCE, RESTRICTED)
            return Result()
        try:
            node = self.deps.client.get(NODES, pod["spec"]["nodeName"])
            levels = self._levels(md.get("annotations") or {})
        except ApiException as e:
            self.deps.recorder.warning(pod, EV_SOURCE, self._unreadable(md, e))
            return Result(requeue_after=RETRY_SECONDS)
        node_labels = (node.get("metadata") or {}).get("labels") or {}
        want, missing = kvtransfer.labels_to_copy(md.get("annotations") or {}, node_labels, levels)
        if missing:
            self.deps.recorder.warning(
                pod,
                EV_MISSING,
                f"node {pod['spec']['nodeName']} has no label {', '.join(missing)}, so this worker's "
                "topology domain is unknown (the router cannot place its KV transfers); label the node, or "
                "fix spec.experimental.kvTransferPolicy (labelKey, or the ClusterTopology's level keys)",
            )
        have = md.get("labels") or {}
        todo = {k: v for k, v in want.items() if have.get(k) != v}
        if todo:
            self.deps.client.patch(PODS, md["name"], {"metadata": {"labels": todo}}, md["namespace"])
            log().info("topology labels copied", pod=f"{md['namespace']}/{md['name']}", labels=todo)
            self.deps.recorder.normal(pod, EV_COPIED, f"copied from node {pod['spec']['nodeName']}: {todo}")
        return Result(requeue_after=RETRY_SECONDS) if missing else Result()

    def _levels(self, annotations: dict) -> list[dict]:
        """The ClusterTopology's levels (``{domain, key}``), or [] in the label-key mode."""
        name = annotations.get(kvtransfer.ANN_CLUSTER_TOPOLOGY)
        if not name or annotations.get(kvtransfer.ANN_LABEL_KEY):
            return []
        topology = self.deps.client.get(CLUSTER_TOPOLOGIES, name)
        return [lv for lv in ((topology.get("spec") or {}).get("levels") or []) if isinstance(lv, dict)]

    @staticmethod
    def _unreadable(md: dict, e: ApiException) -> str:
        annotations = md.get("annotations") or {}
        topology = annotations.get(kvtransfer.ANN_CLUSTER_TOPOLOGY)
        if e.status == 404 and topology and not annotations.get(kvtransfer.ANN_LABEL_KEY):
            return (
                f"ClusterTopology {topology} does not exist, so this worker's topology domain is unknown; "
                "create it (kubectl get clustertopologies), or fix "
                "spec.experimental.kvTransferPolicy.clusterTopologyName"
            )
        return (
            f"cannot read this worker's node or ClusterTopology ({short_error(e)}), so its topology domain "
            "is unknown; the operator retries in five minutes"
        )


def register(w: Wiring) -> Controller:
    """Primary: the components' pods (the shared, label-selected cache), only those the graph asked topology
    labels for and that are scheduled."""
    deps = w.deps
    return w.manager.add_controller(
        CONTROLLER,
        primary=PODS,
        reconcile=TopologyReconciler(deps, bool(getattr(w.manager.settings, "cluster_wide", True))),
        label_selector=component_pods.SELECTOR,
        resource_type="Pod",
        predicate=lambda old, new: wants_labels(new),
    )


__all__ = ["CLUSTER_TOPOLOGIES", "CONTROLLER", "TopologyReconciler", "register", "wants_labels"]
