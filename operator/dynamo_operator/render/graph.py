"""DGD -> one DynamoComponentDeployment per component (component pathway), or one PodCliqueSet and the
components' companions (Grove pathway, ``grove.py``); ``RenderContext.uses_grove`` decides."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field

from dynamo_operator.api.alpha import alpha_spec, may_hold_alpha_fields, with_alpha_fields
from dynamo_operator.api.conversion import ALPHA_COMPONENT_TYPE_ALIASES

from . import gms, kvtransfer, names
from .context import RenderContext
from .discovery import graph_rbac
from .epp import check_pool_api, has_epp
from .errors import RenderError
from .graph_checkpoint import CheckpointPlan, plan_checkpoints
from .grove import render_grove_children
from .hashing import stamp, worker_hash
from .info import component_info, type_label
from .ingress import dcds_exposure_report
from .merge import merge_env
from .multinode import BACKEND_INVOCATION
from .pod import ensure_main, split_containers

ANN_RESTART_AT = names.ANN_RESTART_AT  # re-exported: the restart annotation (``spec.restart``)
# v1alpha1 service fields v1beta1 has no place for that a graph's DCD carries (in its own v1alpha1 spec,
# ``api.alpha.with_alpha_fields``) so the DCD's renderer acts on them: the exposure (``ingress.py``) and
# a componentType v1beta1 has no value for, or another name for (``main``: the component-type label)
CARRIED_ALPHA_FIELDS = ("ingress", "componentType")


def detect_backend(component: dict) -> str | None:
    """Backend named by a worker's ``python -m dynamo.<backend>`` command, if any."""
    main, _ = split_containers(((component.get("podTemplate") or {}).get("spec")) or {})
    if not main:
        return None
    words = " ".join(str(w) for w in (main.get("command") or []) + (main.get("args") or []))
    found = set(BACKEND_INVOCATION.findall(words))
    return found.pop() if len(found) == 1 else None


def graph_backend(dgd: dict) -> str | None:
    spec = dgd.get("spec") or {}
    explicit = spec.get("backendFramework")
    detected: dict[str, str] = {}
    for i, comp in enumerate(spec.get("components") or []):
        if comp.get("type") not in names.WORKER_TYPES:
            continue
        b = detect_backend(comp)
        if b:
            detected.setdefault(b, f"spec.components[{i}]")
    if len(detected) > 1:
        where = ", ".join(f"{p} runs dynamo.{b}" for b, p in detected.items())
        raise RenderError(
            dgd, "spec.components", f"workers use different backends ({where})", "use one backend"
        )
    if detected and explicit and explicit not in detected:
        ((b, p),) = detected.items()
        raise RenderError(
            dgd,
            "spec.backendFramework",
            f"is {explicit!r} but {p} runs dynamo.{b}",
            f"set backendFramework: {b} or change the worker command",
        )
    return explicit or (next(iter(detected)) if detected else None)


def _propagated_annotations(dgd: dict) -> dict:
    ann = (dgd.get("metadata") or {}).get("annotations") or {}
    return {k: ann[k] for k in names.PROPAGATED_DGD_ANNOTATIONS if k in ann}


def validate_graph(dgd: dict) -> None:
    """Checks the renderer depends on, with the DGD's field paths."""
    meta = dgd.get("metadata") or {}
    if not meta.get("name"):
        raise RenderError(dgd, "metadata.name", "missing", "give the DynamoGraphDeployment a name")
    components = (dgd.get("spec") or {}).get("components")
    if not components:
        raise RenderError(dgd, "spec.components", "no components", "list at least one component")
    seen: dict[str, int] = {}
    epp = 0
    for i, comp in enumerate(components):
        cname = comp.get("name")
        if not cname:
            raise RenderError(dgd, f"spec.components[{i}].name", "missing", "name every component")
        if cname.lower() in seen:
            raise RenderError(
                dgd,
                f"spec.components[{i}].name",
                f"{cname!r} repeats spec.components[{seen[cname.lower()]}] (compared case-insensitively)",
                "give every component a distinct name",
            )
        seen[cname.lower()] = i
        if comp.get("type") == "epp":
            epp += 1
            if epp > 1:
                raise RenderError(dgd, f"spec.components[{i}].type", "a second epp component", "keep one epp")
        main, sidecars = split_containers(((comp.get("podTemplate") or {}).get("spec")) or {})
        if not main or not main.get("image"):
            raise RenderError(
                dgd,
                f"spec.components[{i}].podTemplate.spec.containers",
                f"component {cname!r} has no container named 'main' with an image",
                "add {name: main, image: <dynamo runtime image>} to podTemplate.spec.containers",
            )
        for c in sidecars:
            if not c.get("image"):
                raise RenderError(
                    dgd,
                    f"spec.components[{i}].podTemplate.spec.containers[{c.get('name')}].image",
                    "a sidecar container needs an image (defaults go only into 'main')",
                    "set image on the sidecar",
                )


def build_dcd(
    dgd: dict,
    component: dict,
    backend: str | None,
    ctx: RenderContext,
    whash: str | None = None,
    alpha_svc: dict | None = None,
) -> dict:
    """The DCD of one component; ``alpha_svc``: the component's v1alpha1 service (its fields v1beta1 cannot
    hold ride along, ``CARRIED_ALPHA_FIELDS``)."""
    alpha_svc = alpha_svc or {}
    meta = dgd.get("metadata") or {}
    dgd_name, namespace = meta["name"], meta.get("namespace") or "default"
    gspec = dgd.get("spec") or {}
    graph_labels = dict(gspec.get("labels") or {})
    graph_annotations = dict(gspec.get("annotations") or {})
    propagated = _propagated_annotations(dgd)

    spec = copy.deepcopy(component)
    if backend:
        spec["backendFramework"] = backend
    template = spec.setdefault("podTemplate", {})
    tmeta = template.setdefault("metadata", {})
    tmeta["labels"] = {**graph_labels, **(tmeta.get("labels") or {})}
    tmeta["annotations"] = {**propagated, **graph_annotations, **(tmeta.get("annotations") or {})}
    epp_class = has_epp(dgd) and component.get("type") in names.WORKER_TYPES
    if epp_class:  # what the graph's InferencePool selects (render/epp.py)
        tmeta["labels"][names.LABEL_COMPONENT_CLASS] = names.COMPONENT_CLASS_WORKER
    if component.get("type") == "epp":
        # the EPP serves its own TLS: an Istio sidecar in front of it would wrap it twice (upstream's rule;
        # an explicit pod-template annotation wins)
        tmeta["annotations"].setdefault(names.ANN_ISTIO_INJECT, "false")
    for key in ("labels", "annotations"):
        if not tmeta[key]:
            del tmeta[key]
    if not tmeta:
        del template["metadata"]
    graph_env = gspec.get("env") or []
    if graph_env:
        main = ensure_main(spec)
        main["env"] = merge_env([], graph_env, main.get("env") or [])
    policy = kvtransfer.policy_of(dgd)
    if policy is not None and component.get("type") in names.WORKER_TYPES:
        kvtransfer.apply_to_component(spec, policy)  # the DCD needs no graph to render it

    dyn_ns = names.dynamo_namespace(namespace, dgd_name, bool(component.get("globalDynamoNamespace")))
    labels = {
        **graph_labels,
        names.LABEL_DGD_NAME: dgd_name,
        names.LABEL_COMPONENT: component["name"],
        names.LABEL_COMPONENT_TYPE: type_label(component.get("type"), alpha_svc),
        names.LABEL_DYNAMO_NAMESPACE: dyn_ns,
        names.LABEL_MANAGED_BY: names.MANAGED_BY,
    }
    if whash and component.get("type") in names.WORKER_TYPES:
        # pods get the label and DYN_NAMESPACE_WORKER_SUFFIX from it (render/pod.py, render/env.py)
        labels[names.LABEL_WORKER_HASH] = whash
    if epp_class:
        labels[names.LABEL_COMPONENT_CLASS] = names.COMPONENT_CLASS_WORKER
    annotations = {**graph_annotations, **propagated, names.ANN_OPERATOR_VERSION: ctx.operator_version}
    dcd = {
        "apiVersion": names.V1BETA1,
        "kind": names.DCD_KIND,
        "metadata": {
            "name": names.component_resource_name(dgd_name, component["name"]),
            "namespace": namespace,
            "labels": dict(sorted(labels.items())),
            "annotations": dict(sorted(annotations.items())),
        },
        "spec": spec,
    }
    carried = {k: alpha_svc[k] for k in CARRIED_ALPHA_FIELDS if k in alpha_svc}
    if component.get("type") and carried.get("componentType") not in ALPHA_COMPONENT_TYPE_ALIASES:
        carried.pop("componentType", None)  # v1beta1 holds it (an alias rides along: the DCD says "main")
    return with_alpha_fields(dcd, carried) if carried else dcd


def check_kv_transfer(dgd: dict, ctx: RenderContext) -> None:
    """``spec.experimental.kvTransferPolicy``'s problems (``kvtransfer.problems``, what admission refuses)."""
    policy = (((dgd.get("spec") or {}).get("experimental")) or {}).get("kvTransferPolicy")
    if policy is None:
        return
    for path, _, detail in kvtransfer.problems(policy, ctx.grove_enabled)[:1]:
        where = ".".join(("spec.experimental.kvTransferPolicy", *path))
        raise RenderError(dgd, where, detail)


def check_gms(dgd: dict, backend: str | None, ctx: RenderContext) -> None:
    """A component's GPU memory service / failover problems (``gms.problems``, what admission refuses) with
    the graph's path, before any child is made: the graph's status names them, not a DCD's."""
    graph_ann = (dgd.get("metadata") or {}).get("annotations") or {}
    for i, comp in enumerate((dgd.get("spec") or {}).get("components") or []):
        pod_ann = (((comp.get("podTemplate") or {}).get("metadata") or {}).get("annotations")) or {}
        found = gms.problems(comp, backend, {**graph_ann, **pod_ann}, ctx.dra_enabled)
        gms.raise_first(dgd, found, f"spec.components[{i}]")


@dataclass(frozen=True)
class GraphRender:
    """What a graph renders to: its children (DCDs, or the PodCliqueSet and companions), and the
    checkpoint of each checkpoint-enabled component (``graph_checkpoint``), whose automatic
    DynamoCheckpoints the DGD controller creates beside them."""

    children: list[dict]
    checkpoints: dict[str, CheckpointPlan] = field(default_factory=dict)
    # the graph's own objects beside its DCDs (component pathway): its discovery ServiceAccount and
    # RoleBinding, shared by every component and owned by the graph alone (``discovery.graph_rbac``; on
    # the Grove pathway they are among ``children``)
    companions: list[dict] = field(default_factory=list)

    @property
    def checkpoint_objects(self) -> list[dict]:
        return [p.desired for p in self.checkpoints.values() if p.desired is not None]


def render_dgd(dgd: dict, ctx: RenderContext, restarts: Mapping[str, str] | None = None) -> GraphRender:
    """A (validated, v1beta1) DGD's children, hash-stamped, in component order, and its checkpoints.
    ``restarts``: component name -> the restart id its pods carry (``nvidia.com/restartAt``; the
    controller decides, ``spec.restart``)."""
    validate_graph(dgd)
    check_pool_api(dgd, ctx)
    backend = graph_backend(dgd)
    check_gms(dgd, backend, ctx)
    check_kv_transfer(dgd, ctx)
    whash = worker_hash(dgd)
    services = alpha_spec(dgd).get("services") or {}
    dcds = [
        build_dcd(dgd, c, backend, ctx, whash, services.get(c["name"]) or {})
        for c in dgd["spec"]["components"]
    ]
    for comp, dcd in zip(dgd["spec"]["components"], dcds, strict=True):
        rid = (restarts or {}).get(comp["name"])
        if rid:
            _set_restart(dcd, rid)
    checkpoints = plan_checkpoints(dgd, dcds, ctx)
    if ctx.uses_grove(dgd):
        return GraphRender([stamp(o) for o in render_grove_children(dgd, dcds, ctx)], checkpoints)
    infos = [component_info(d, ctx.discovery_backend) for d in dcds]
    companions = [stamp(o) for o in graph_rbac(infos, ctx)]
    return GraphRender([stamp(d) for d in dcds], checkpoints, companions)


def render_dgd_children(
    dgd: dict, ctx: RenderContext, restarts: Mapping[str, str] | None = None
) -> list[dict]:
    """The children of a (validated, v1beta1) DGD (``render_dgd``)."""
    return render_dgd(dgd, ctx, restarts).children


def restart_annotation(dcd: dict) -> str | None:
    """The restart id a (v1beta1) DCD's pod template carries, if any."""
    tmpl = (dcd.get("spec") or {}).get("podTemplate") or {}
    return ((tmpl.get("metadata") or {}).get("annotations") or {}).get(ANN_RESTART_AT)


def _set_restart(dcd: dict, restart_id: str) -> None:
    tmeta = dcd["spec"].setdefault("podTemplate", {}).setdefault("metadata", {})
    tmeta.setdefault("annotations", {})[ANN_RESTART_AT] = restart_id


def with_restart(dcd: dict, restart_id: str) -> dict:
    """``dcd`` (rendered, in place) with ``nvidia.com/restartAt=<restart_id>`` on its pod template and a
    fresh spec hash: a new id changes the pod template, so the Deployment replaces its pods."""
    _set_restart(dcd, restart_id)
    return stamp(dcd)


def graph_exposure_report(
    dgd: dict, ctx: RenderContext, dcds: list[dict] | None = None
) -> tuple[list[str], list[tuple[str, str]]]:
    """(endpoints, problems) of a (validated, v1beta1) graph's components for its ``Exposed`` condition
    (``ingress.exposure_report``), from its rendered DCDs (``dcds``, or built here on the Grove pathway,
    which renders none)."""
    cfg = ctx.config("ingress")
    cfg = cfg if isinstance(cfg, dict) else {}
    if not (cfg.get("controllerClassName") or cfg.get("virtualServiceGateway") or may_hold_alpha_fields(dgd)):
        return [], []  # nothing can be exposed: no configured default, no v1alpha1 ingress
    if dcds is None:
        backend = graph_backend(dgd)
        services = alpha_spec(dgd).get("services") or {}
        components = (dgd.get("spec") or {}).get("components") or []
        dcds = [build_dcd(dgd, c, backend, ctx, None, services.get(c["name"]) or {}) for c in components]
    return dcds_exposure_report(dcds, ctx)
