"""DGD -> one Grove PodCliqueSet (grove.io/v1alpha1) plus each component's companions.

On the Grove pathway there are no DCDs: the graph's pods are Grove's, described by one PodCliqueSet:

* a single-node component is one PodClique named ``<lower component>`` (``replicas`` = the component's,
  ``minAvailable`` = the component's, default 1);
* a multinode component is a PodCliqueScalingGroup ``<lower component>`` of two PodCliques, the leader
  ``<lower>-ldr`` (1 pod) and the workers ``<lower>-wkr`` (nodeCount - 1 pods), each with ``minAvailable``
  = its replicas (a partial group is useless); the group's ``replicas`` / ``minAvailable`` are the
  component's;
* startup order (multinode): vLLM and SGLang workers start after their leader (Ray head / the
  ``--dist-init-addr`` rendezvous listen there), TRT-LLM's leader after its workers (``mpirun`` connects
  to their sshd); ``cliqueStartupType`` is Explicit when any clique waits, AnyOrder otherwise;
* ``terminationDelay`` from ``orchestrators.grove.terminationDelay``, ``priorityClassName`` and topology
  pack domains from the DGD, Kai's scheduler name and queue label when Kai is enabled.

Grove names the objects it creates ``<pcs>-0-<clique or scaling group>``; the controllers read their
status back by those names (``podclique_names``).
"""

from __future__ import annotations

from . import names
from .component import companions, desired_replicas
from .context import RenderContext
from .discovery import graph_rbac
from .errors import RenderError
from .info import ComponentInfo, component_info
from .multinode import grove_addressing, grove_clique_names
from .pod import build_pod_template

API_VERSION = "grove.io/v1alpha1"
PCS_KIND = "PodCliqueSet"
PODCLIQUE_KIND = "PodClique"
PCSG_KIND = "PodCliqueScalingGroup"
STARTUP_ANY = "CliqueStartupTypeAnyOrder"
STARTUP_EXPLICIT = "CliqueStartupTypeExplicit"
# Grove's TopologyDomain enum (the PodCliqueSet CRD rejects anything else)
PACK_DOMAINS = ("region", "zone", "datacenter", "block", "rack", "host", "numa")
# backends whose workers must wait for the leader; the others (trtllm) start the leader last
_WORKERS_AFTER_LEADER = frozenset({"vllm", "sglang"})


def child_name(pcs_name: str, template_name: str, replica: int = 0) -> str:
    """The name Grove gives the PodClique / PodCliqueScalingGroup of a template in PCS replica ``replica``."""
    return f"{pcs_name}-{replica}-{template_name}"


def pcs_name(dgd: dict) -> str:
    comps = (dgd.get("spec") or {}).get("components") or []
    return names.podcliqueset_name(
        dgd["metadata"]["name"],
        [str(c.get("name", "")).lower() for c in comps],
        [int(((c.get("multinode") or {}).get("nodeCount")) or 1) for c in comps],
    )


def _pack_domain(obj: dict, value, field: str) -> dict | None:
    if not value:
        return None
    if value not in PACK_DOMAINS:
        raise RenderError(
            obj,
            field,
            f"pack domain {value!r} is not one Grove knows",
            f"use one of {', '.join(PACK_DOMAINS)} (Grove's topology levels)",
        )
    return {"packDomain": value}


def _clique(
    info: ComponentInfo,
    ctx: RenderContext,
    name: str,
    role: str,
    replicas: int,
    min_available: int,
    kai_queue: str | None,
) -> dict:
    addressing = grove_addressing(info.component_name) if role != "main" else None
    template = build_pod_template(info, ctx, role, addressing)
    meta = template.get("metadata") or {}
    pod_spec = template["spec"]
    labels = dict(meta.get("labels") or {})
    if kai_queue is not None:
        pod_spec["schedulerName"] = names.KAI_SCHEDULER_NAME
        labels[names.LABEL_KAI_QUEUE] = kai_queue
    clique = {
        "name": name,
        "labels": dict(sorted(labels.items())),
        "annotations": dict(meta.get("annotations") or {}),
        "spec": {"roleName": name, "replicas": replicas, "minAvailable": min_available, "podSpec": pod_spec},
    }
    if not clique["annotations"]:
        del clique["annotations"]
    return clique


def _component_parts(
    dgd: dict, info: ComponentInfo, ctx: RenderContext, index: int, kai_queue: str | None
) -> tuple[list[dict], dict | None]:
    """(cliques, scaling group or None) of one component."""
    spec = info.spec
    field = f"spec.components[{index}]"
    replicas = desired_replicas(info, ctx)
    min_available = int(spec.get("minAvailable") or 1)
    topology = _pack_domain(
        dgd,
        (spec.get("topologyConstraint") or {}).get("packDomain"),
        f"{field}.topologyConstraint.packDomain",
    )
    lower = info.component_name.lower()
    if not info.multinode:
        clique = _clique(info, ctx, lower, "main", replicas, min_available, kai_queue)
        if topology:
            clique["topologyConstraint"] = topology
        return [clique], None
    ldr_name, wkr_name = grove_clique_names(info.component_name)
    workers = info.node_count - 1
    leader = _clique(info, ctx, ldr_name, "leader", 1, 1, kai_queue)
    worker = _clique(info, ctx, wkr_name, "worker", workers, workers, kai_queue)
    if info.backend in _WORKERS_AFTER_LEADER:
        worker["spec"]["startsAfter"] = [ldr_name]
    elif info.backend == "trtllm":
        leader["spec"]["startsAfter"] = [wkr_name]
    group = {
        "name": lower,
        "cliqueNames": [ldr_name, wkr_name],
        "replicas": replicas,
        "minAvailable": min_available,
    }
    if topology:
        group["topologyConstraint"] = topology
    return [leader, worker], group


def build_podcliqueset(dgd: dict, infos: list[ComponentInfo], ctx: RenderContext) -> dict:
    meta = dgd["metadata"]
    gspec = dgd.get("spec") or {}
    ann = meta.get("annotations") or {}
    kai_queue = str(ann.get(names.ANN_KAI_QUEUE) or names.DEFAULT_KAI_QUEUE) if ctx.kai_enabled else None
    cliques: list[dict] = []
    groups: list[dict] = []
    for i, info in enumerate(infos):
        cs, g = _component_parts(dgd, info, ctx, i, kai_queue)
        cliques.extend(cs)
        if g is not None:
            groups.append(g)
    template: dict = {
        "cliqueStartupType": STARTUP_EXPLICIT
        if any(c["spec"].get("startsAfter") for c in cliques)
        else STARTUP_ANY,
        "headlessServiceConfig": {"publishNotReadyAddresses": True},
        "terminationDelay": str(ctx.config("orchestrators", "grove", "terminationDelay")),
        "cliques": cliques,
    }
    if groups:
        template["podCliqueScalingGroups"] = groups
    if gspec.get("priorityClassName"):
        template["priorityClassName"] = gspec["priorityClassName"]
    topology = _pack_domain(
        dgd, (gspec.get("topologyConstraint") or {}).get("packDomain"), "spec.topologyConstraint.packDomain"
    )
    if topology:
        template["topologyConstraint"] = topology
    labels = {
        **(gspec.get("labels") or {}),
        names.LABEL_DGD_NAME: meta["name"],
        names.LABEL_MANAGED_BY: names.MANAGED_BY,
    }
    if kai_queue is not None:
        labels[names.LABEL_KAI_QUEUE] = kai_queue
    annotations = {**(gspec.get("annotations") or {}), names.ANN_OPERATOR_VERSION: ctx.operator_version}
    return {
        "apiVersion": API_VERSION,
        "kind": PCS_KIND,
        "metadata": {
            "name": pcs_name(dgd),
            "namespace": meta.get("namespace") or "default",
            "labels": dict(sorted(labels.items())),
            "annotations": dict(sorted(annotations.items())),
        },
        "spec": {"replicas": 1, "template": template},
    }


def render_grove_children(dgd: dict, dcds: list[dict], ctx: RenderContext) -> list[dict]:
    """The PodCliqueSet, then each component's companions (ServiceAccount, RoleBinding, EPP ConfigMap,
    Service, model Service), from the DCDs the component pathway would have created (never applied)."""
    infos = [component_info(d, ctx.discovery_backend) for d in dcds]
    # the graph's discovery ServiceAccount and RoleBinding, once, before the pods that run as it
    out = graph_rbac(infos, ctx)
    out.append(build_podcliqueset(dgd, infos, ctx))
    for info in infos:
        before, after = companions(info, ctx)
        out.extend(before + after)
    return out


def podclique_names(dgd: dict, component: dict) -> tuple[str, str]:
    """(kind, name) of the Grove object whose status tells whether ``component`` is ready: its PodClique
    (single node) or PodCliqueScalingGroup (multinode) in PCS replica 0."""
    multinode = int(((component.get("multinode") or {}).get("nodeCount")) or 1) > 1
    kind = PCSG_KIND if multinode else PODCLIQUE_KIND
    return kind, child_name(pcs_name(dgd), str(component["name"]).lower())


def _clique_name(component: dict) -> str:
    """The clique carrying a component's pod annotations: its own (single node) or its leader's."""
    lower = str(component["name"]).lower()
    multinode = int(((component.get("multinode") or {}).get("nodeCount")) or 1) > 1
    return grove_clique_names(str(component["name"]))[0] if multinode else lower


def restart_ids(dgd: dict, pcs: dict | None) -> dict[str, str]:
    """Component name -> the ``nvidia.com/restartAt`` id its clique carries in a (live) PodCliqueSet: Grove
    hashes a clique's annotations into its pod template hash, so a new id rolls that clique's pods."""
    template = (((pcs or {}).get("spec") or {}).get("template")) or {}
    cliques = {c.get("name"): c for c in template.get("cliques") or []}
    out: dict[str, str] = {}
    for comp in (dgd.get("spec") or {}).get("components") or []:
        rid = ((cliques.get(_clique_name(comp)) or {}).get("annotations") or {}).get(names.ANN_RESTART_AT)
        if rid:
            out[str(comp["name"])] = str(rid)
    return out
