"""Pure rendering (no I/O) shared by the controllers and ``dynamo-operator render``.

* ``render_graph(dgd, ctx)``: a DynamoGraphDeployment -> its DynamoComponentDeployments, or, on the Grove
  pathway (``RenderContext.uses_grove``), its PodCliqueSet and the components' companions.
* ``render_component(dcd, ctx)``: a DynamoComponentDeployment -> Deployment (or LeaderWorkerSet and its
  headless Service when multinode), Service, planner/epp ServiceAccount (+ RoleBinding when configured),
  the model headless Service, the EPP ConfigMap, a GPU memory service's ResourceClaimTemplate and its
  Ingress / VirtualService (``ingress.py``).
* ``render_graph_parts(dgd, ctx)``: the same, with each checkpoint-enabled component's checkpoint
  (``graph_checkpoint.py``): the DynamoCheckpoints the graph creates.
* ``render_all(obj, ctx)``: recursive; for a DGD, its automatic DynamoCheckpoints, its DCDs and every
  DCD's children (and its MPI sshd NetworkPolicy when ``mpi.sshNetworkPolicy`` asks for it, ``netpol.py``;
  its EPP's InferencePool and Istio DestinationRule, ``epp.py``; the claims of ``spec.pvcs`` with
  ``create: true``, ``pvc.py``; the namespace's own MPI SSH Secret, ``mpisecret.py``; its scaling
  adapters, ``scaling.render_adapters``, what the DGD controller creates for components with
  ``scalingAdapter``); for a DynamoGraphDeploymentRequest, its profiling ServiceAccount, RoleBinding
  (cluster-wide configuration) and Job (``dgdr_job.request_children``; offline, so ``spec.hardware`` is
  passed as written, without GPU discovery; the generated graph depends on the profiler's output and is not
  previewed); for a DynamoCheckpoint, its checkpoint Job (while ``checkpoint.enabled``); for a DynamoModel
  or a scaling adapter, nothing (their controllers create no objects). ``render`` skips objects outside
  the nvidia.com group (a user's ConfigMap in the same manifest) with a note on stderr.
  ``tests/unit/test_render_every_object.py`` holds this to what the controllers create.

Inputs are whole objects as a user writes them (v1beta1, or v1alpha1 which is converted first).
Outputs are plain dicts carrying apiVersion/kind/metadata and the ``nvidia.com/dynamo-spec-hash``
annotation, and no ownerReferences (controllers add those). Bad input raises ``RenderError``.
"""

from __future__ import annotations

from collections.abc import Mapping

from dynamo_operator.api.conversion import convert

from . import checkpoint, etcdaccess, names, natsaccess
from .checkpoint_storage import claim_for
from .component import render_dcd_children
from .context import RenderContext
from .dgdr_job import DGDR_KIND, override_pod_spec, request_children
from .epp import graph_objects as epp_graph_objects
from .errors import RenderError
from .graph import GraphRender, render_dgd
from .hashing import content_hash
from .mpisecret import mpi_ssh_secret
from .netpol import mpi_ssh_network_policy
from .pullsecrets import PullSecretIndex, build_index
from .pvc import graph_pvcs
from .scaling import render_adapters
from .security import harden_job
from .validate import to_v1beta1


def render_graph_parts(
    dgd: dict, ctx: RenderContext | None = None, restarts: Mapping[str, str] | None = None
) -> GraphRender:
    """A DynamoGraphDeployment's children (its DCDs, or its PodCliqueSet and companions) and the checkpoint
    of each checkpoint-enabled component (the automatic DynamoCheckpoints to create among them);
    ``restarts``: component -> the ``spec.restart`` id its pods carry."""
    obj = to_v1beta1(dgd)
    if obj["kind"] != names.DGD_KIND:
        raise RenderError(obj, "kind", f"expected {names.DGD_KIND}", "pass a DynamoGraphDeployment")
    return render_dgd(obj, ctx or RenderContext(), restarts)


def render_graph(
    dgd: dict, ctx: RenderContext | None = None, restarts: Mapping[str, str] | None = None
) -> list[dict]:
    """The DynamoComponentDeployments of a DynamoGraphDeployment (or its PodCliqueSet and companions)."""
    return render_graph_parts(dgd, ctx, restarts).children


def render_component(dcd: dict, ctx: RenderContext | None = None) -> list[dict]:
    """The workload and companions of a DynamoComponentDeployment."""
    obj = to_v1beta1(dcd)
    if obj["kind"] != names.DCD_KIND:
        raise RenderError(obj, "kind", f"expected {names.DCD_KIND}", "pass a DynamoComponentDeployment")
    return render_dcd_children(obj, ctx or RenderContext())


# kinds whose controllers create no object (a model's endpoints are read; an adapter writes its graph)
CREATES_NOTHING = ("DynamoModel", "DynamoGraphDeploymentScalingAdapter")
CHECKPOINT_KIND = "DynamoCheckpoint"


def ours(obj: dict) -> bool:
    """An object of the operator's API group (anything else in a manifest is applied as is; ``render``
    skips it with a note, ``render_all`` refuses it)."""
    return str(obj.get("apiVersion", "")).split("/")[0] == names.V1BETA1.split("/")[0]


def _checkpoint_children(ckpt: dict, ctx: RenderContext) -> list[dict]:
    """The Job the DynamoCheckpoint controller creates for a new checkpoint, from the same step and
    builder, with the configuration's gate and base path."""
    wire = ckpt if str(ckpt.get("apiVersion", "")).endswith("/v1alpha1") else convert(ckpt, "v1alpha1")
    enabled = bool(ctx.config("checkpoint", "enabled"))
    if not checkpoint.step(wire, None, enabled).create_job:
        return []
    base = ctx.config("checkpoint", "storage", "pvc", "basePath") or checkpoint.DEFAULT_BASE_PATH
    template = ((wire.get("spec") or {}).get("job") or {}).get("podTemplateSpec") or {}
    job = checkpoint.checkpoint_job(wire, str(base))
    claim = claim_for(wire, [], ctx.config("checkpoint"))  # the Job may mount it: created first
    return [*([claim] if claim else []), harden_job(job, _restricted(ctx), template.get("spec") or {})]


def _restricted(ctx: RenderContext) -> bool:
    """``security.workloads.restrictedSecurityContext``: the controllers harden the Jobs they create."""
    return bool(ctx.config("security", "workloads", "restrictedSecurityContext"))


def render_all(obj: dict, ctx: RenderContext | None = None) -> list[dict]:
    """Every object the operator would create for ``obj``, recursively, de-duplicated by identity."""
    ctx = ctx or RenderContext()
    if isinstance(obj, dict) and obj.get("kind") == DGDR_KIND:
        role = ctx.config("rbac", "dgdrProfilingClusterRoleName")
        out = request_children(obj, ctx.config("images", "profiler"), ctx.config("images", "operator"), role)
        for o in out:  # the DGDR controller hardens the profiling Job it creates
            if o["kind"] == "Job":
                harden_job(o, _restricted(ctx), override_pod_spec(obj))
    elif isinstance(obj, dict) and obj.get("kind") == names.DGD_KIND:
        parts = render_graph_parts(obj, ctx)
        out = list(parts.checkpoint_objects)  # the DGD controller creates these first
        out.extend(parts.companions)  # then the graph's discovery account, before the pods running as it
        for child in parts.children:
            out.append(child)
            if child["kind"] == names.DCD_KIND:
                out.extend(render_component(child, ctx))
        graph = to_v1beta1(obj)
        # what the DGD controller applies besides: the sshd policy, the claims, the namespace's MPI SSH
        # Secret (shown without the keys it generates), etcd and NATS client Secrets, the checkpoint
        # claim, the EPP's InferencePool / DestinationRule
        extra = [mpi_ssh_network_policy(graph, ctx), *graph_pvcs(graph, ctx), mpi_ssh_secret(graph, ctx)]
        if etcdaccess.enabled(ctx) and etcdaccess.graph_uses_etcd(graph, ctx):
            # the namespace's etcd client Secret, shown without the certificate the controller issues
            namespace = (graph.get("metadata") or {}).get("namespace") or "default"
            extra.append(etcdaccess.client_secret(namespace, ctx))
        if natsaccess.enabled(ctx):  # the namespace's NATS client Secret, likewise without its certificate
            namespace = (graph.get("metadata") or {}).get("namespace") or "default"
            extra.append(natsaccess.client_secret(namespace, ctx))
        extra.append(claim_for(graph, graph["spec"]["components"], ctx.config("checkpoint")))
        out.extend(o for o in extra if o is not None)
        out.extend(epp_graph_objects(graph, ctx))
        out.extend(render_adapters(graph))  # the DGD controller's AdapterSync creates these
    elif isinstance(obj, dict) and obj.get("kind") in CREATES_NOTHING and ours(obj):
        out = []
    elif isinstance(obj, dict) and obj.get("kind") == CHECKPOINT_KIND:
        out = _checkpoint_children(obj, ctx)
    else:
        out = render_component(obj, ctx)
        spec = to_v1beta1(obj).get("spec") if isinstance(obj, dict) else None
        claim = claim_for(obj, [spec], ctx.config("checkpoint")) if isinstance(spec, dict) else None
        out.extend([claim] if claim else [])  # a standalone DCD's checkpoint claim (the DCD controller's)
    seen: set[tuple] = set()
    unique = []
    for o in out:
        key = (o["apiVersion"], o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
        if key not in seen:  # e.g. one planner-serviceaccount shared by several components
            seen.add(key)
            unique.append(o)
    return unique


__all__ = [
    "GraphRender",
    "PullSecretIndex",
    "RenderContext",
    "RenderError",
    "build_index",
    "content_hash",
    "ours",
    "render_all",
    "render_component",
    "render_graph",
    "render_graph_parts",
]
