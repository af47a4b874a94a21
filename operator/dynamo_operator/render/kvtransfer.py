"""``spec.experimental.kvTransferPolicy``: topology-aware routing of KV-cache transfers (seed 002).

The router prefers (or requires) a decode worker in the same topology domain as the prefill worker that
made the KV cache. Each worker learns its own domain from a label of the node it was scheduled on, which
only exists once the pod is placed, so the operator does two things, as upstream does:

* rendering (here, pure): every worker component's pod template gets the policy as env
  (``DYN_KV_TRANSFER_DOMAIN``, ``DYN_KV_TRANSFER_ENFORCEMENT``, ``DYN_KV_TRANSFER_PREFERRED_WEIGHT``,
  ``DYN_TOPOLOGY_ENABLED``, ``DYN_TOPOLOGY_MOUNT_PATH``) that the worker publishes in its metadata for the
  router, a Downward API volume at ``/etc/dynamo/topology`` whose file ``<domain>`` holds the pod label
  carrying the domain's value (a volume, not an env var: kubelet refreshes it when the label appears), and
  an annotation naming where that value comes from;
* after scheduling (``controllers/topology.py``): the node's label is copied onto the pod, from
  ``labelKey`` (the pod label has the same key), or from each level of the Grove ClusterTopology
  ``clusterTopologyName`` names (the pod label ``nvidia.com/dynamo-topology.<domain>``, from the level's
  node label key).

With ``clusterTopologyName`` the volume projects the policy's domain only (upstream projects every level
of the topology); the controller still copies every level onto the pod.
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.api.jsontree import d, lst

from . import names
from .merge import merge_env
from .notice import Notice, components
from .pod import ensure_main

ANN_LABEL_KEY = "nvidia.com/topology-label-key"
ANN_CLUSTER_TOPOLOGY = "nvidia.com/topology-cluster-topology-name"
SOURCE_ANNOTATIONS = (ANN_LABEL_KEY, ANN_CLUSTER_TOPOLOGY)
LABEL_PREFIX = "nvidia.com/dynamo-topology."
VOLUME = "topology-labels"
MOUNT_PATH = "/etc/dynamo/topology"
ENV_DOMAIN = "DYN_KV_TRANSFER_DOMAIN"
ENV_ENFORCEMENT = "DYN_KV_TRANSFER_ENFORCEMENT"
ENV_PREFERRED_WEIGHT = "DYN_KV_TRANSFER_PREFERRED_WEIGHT"
ENV_TOPOLOGY_ENABLED = "DYN_TOPOLOGY_ENABLED"
ENV_TOPOLOGY_MOUNT_PATH = "DYN_TOPOLOGY_MOUNT_PATH"
REQUIRED, PREFERRED = "required", "preferred"  # enforcement; required is the default
POLICY_PATH = ("spec", "experimental", "kvTransferPolicy")


def policy_of(dgd: dict) -> dict | None:
    """The graph's policy when it names a source of the domain (``labelKey`` or ``clusterTopologyName``)."""
    policy = d(d(d(dgd.get("spec")).get("experimental")).get("kvTransferPolicy"))
    return policy if policy.get("labelKey") or policy.get("clusterTopologyName") else None


def domain_label(policy: dict) -> str:
    """The pod label that carries the policy's domain: ``labelKey`` itself, or the Dynamo-owned label of
    the ClusterTopology level."""
    return str(policy.get("labelKey") or LABEL_PREFIX + str(policy.get("domain")))


def policy_env(policy: dict) -> list[dict]:
    env = [
        {"name": ENV_DOMAIN, "value": str(policy.get("domain") or "")},
        {"name": ENV_ENFORCEMENT, "value": str(policy.get("enforcement") or REQUIRED)},
        {"name": ENV_TOPOLOGY_ENABLED, "value": "true"},
        {"name": ENV_TOPOLOGY_MOUNT_PATH, "value": MOUNT_PATH},
    ]
    if policy.get("preferredWeight") is not None:
        env.append({"name": ENV_PREFERRED_WEIGHT, "value": _number(policy["preferredWeight"])})
    return env


def _number(value: Any) -> str:
    """1, 0.5: as the float is written, without a trailing ``.0``."""
    text = str(value)
    return text[:-2] if text.endswith(".0") else text


def source_annotations(policy: dict) -> dict[str, str]:
    """The pod annotation telling the label copier where the domain comes from."""
    if policy.get("labelKey"):
        return {ANN_LABEL_KEY: str(policy["labelKey"])}
    return {ANN_CLUSTER_TOPOLOGY: str(policy["clusterTopologyName"])}


def apply_to_component(component: dict, policy: dict) -> None:
    """Wire a worker component (a v1beta1 copy, in place): the env on ``main`` (over the user's), the
    Downward API volume and its mount, the source annotation on the pod template."""
    main = ensure_main(component)
    template = component["podTemplate"]
    meta = template.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), **source_annotations(policy)}
    pod = template["spec"]
    main["env"] = merge_env(main.get("env") or [], policy_env(policy))
    mounts = [m for m in main.get("volumeMounts") or [] if m.get("name") != VOLUME]
    main["volumeMounts"] = [*mounts, {"name": VOLUME, "mountPath": MOUNT_PATH, "readOnly": True}]
    item = {
        "path": str(policy.get("domain")),
        "fieldRef": {"fieldPath": f"metadata.labels['{domain_label(policy)}']"},
    }
    volumes = [v for v in pod.get("volumes") or [] if v.get("name") != VOLUME]
    pod["volumes"] = [*volumes, {"name": VOLUME, "downwardAPI": {"items": [item]}}]


def problems(policy: Any, grove_enabled: bool) -> list[tuple[tuple, str, str]]:
    """(path below the policy, kind, detail with the fix) of a policy that contradicts itself, or names a
    ClusterTopology where Grove (whose kind it is) is not there; [] else."""
    p = d(policy)
    out: list[tuple[tuple, str, str]] = []
    if p.get("clusterTopologyName") and not grove_enabled:
        out.append(
            (
                ("clusterTopologyName",),
                "forbidden",
                "names a Grove ClusterTopology, and Grove is not enabled for this operator (its API is not "
                "served, or orchestrators.grove.enabled is false), so there are no topology levels to copy; "
                "use labelKey with the node label of the domain, or install Grove",
            )
        )
    sources = [k for k in ("labelKey", "clusterTopologyName") if p.get(k)]
    if len(sources) != 1:
        out.append(
            (
                (),
                "invalid",
                "name exactly one source of each worker's topology domain: labelKey (a node label copied "
                "onto the worker's pods) or clusterTopologyName (a Grove ClusterTopology whose levels are)",
            )
        )
    if not p.get("domain"):
        out.append(
            (
                ("domain",),
                "required",
                "name the topology level the router matches workers on (e.g. zone); it is also the file the "
                f"worker reads its domain from ({MOUNT_PATH}/<domain>)",
            )
        )
    if p.get("enforcement") == PREFERRED and p.get("preferredWeight") is None:
        out.append(
            (
                ("preferredWeight",),
                "required",
                'enforcement "preferred" needs preferredWeight (0 to 1: how strongly the router prefers a '
                "decode worker of the same domain); set it, or use enforcement required",
            )
        )
    return out


def labels_to_copy(annotations: dict, node_labels: dict, levels: list[dict]) -> tuple[dict, list[str]]:
    """(pod labels to set, node label keys the node lacks) for a worker pod whose source annotation is in
    ``annotations``, scheduled on a node with ``node_labels``; ``levels``: the ClusterTopology's
    ``spec.levels`` (``{domain, key}``) in that mode."""
    key = annotations.get(ANN_LABEL_KEY)
    wanted = [(key, key)] if key else [(LABEL_PREFIX + str(lv.get("domain")), lv.get("key")) for lv in levels]
    labels, missing = {}, []
    for pod_label, node_label in wanted:
        if not isinstance(node_label, str) or not node_label:
            continue
        if node_label in node_labels:
            labels[pod_label] = str(node_labels[node_label])
        else:
            missing.append(node_label)
    return labels, missing


def notices(kind: str, beta: dict) -> list[Notice]:
    """``spec.experimental.kvTransferPolicy.preferredWeight`` beside enforcement required (it weighs only
    "preferred"), and a policy in a graph without a worker to label (a ``render/notices.py`` rule)."""
    policy = d(d(d(beta.get("spec")).get("experimental")).get("kvTransferPolicy"))
    if kind != names.DGD_KIND or not policy:
        return []
    out = []
    if policy.get("preferredWeight") is not None and (policy.get("enforcement") or REQUIRED) != PREFERRED:
        out.append(
            Notice(
                (*POLICY_PATH, "preferredWeight"),
                'has no effect: it weighs the preference of enforcement "preferred", and enforcement is '
                '"required" (only decode workers of the same domain); remove it, or set enforcement: '
                "preferred",
            )
        )
    workers = [c for _, c in components(kind, beta) if c.get("type") in names.WORKER_TYPES]
    if not workers and lst(d(beta.get("spec")).get("components")):
        out.append(
            Notice(
                POLICY_PATH,
                "has no effect: the graph has no worker, prefill or decode component whose pods could carry "
                "a topology domain; remove it, or give the KV-cache workers their type",
            )
        )
    return out


__all__ = [
    "ANN_CLUSTER_TOPOLOGY",
    "ANN_LABEL_KEY",
    "LABEL_PREFIX",
    "MOUNT_PATH",
    "SOURCE_ANNOTATIONS",
    "apply_to_component",
    "domain_label",
    "labels_to_copy",
    "notices",
    "policy_of",
    "problems",
]
