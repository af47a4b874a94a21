"""Pure rendering (no I/O) shared by the controllers and ``dynamo-operator render``.

* ``render_graph(dgd, ctx)``: a DynamoGraphDeployment -> its DynamoComponentDeployments, or, on the Grove
  pathway (``RenderContext.uses_grove``), its PodCliqueSet and the components' companions.
* ``render_component(dcd, ctx)``: a DynamoComponentDeployment -> Deployment (or LeaderWorkerSet and its
  headless Service when multinode), Service, planner/epp ServiceAccount (+ RoleBinding when configured),
  the model headless Service, the EPP ConfigMap and a GPU memory service's ResourceClaimTemplate.
* ``render_graph_parts(dgd, ctx)``: the same, with each checkpoint-enabled component's checkpoint
  (``graph_checkpoint.py``): the DynamoCheckpoints the graph creates.
* ``render_all(obj, ctx)``: recursive; for a DGD, its automatic DynamoCheckpoints, its DCDs and every
  DCD's children (and its MPI sshd NetworkPolicy when ``mpi.sshNetworkPolicy`` asks for it, ``netpol.py``;
  its EPP's InferencePool and Istio DestinationRule, ``epp.py``); for a DynamoGraphDeploymentRequest, its
  profiling ServiceAccount, RoleBinding (cluster-wide configuration) and Job (``dgdr_job.request_children``;
  offline, so ``spec.hardware`` is passed as written, without GPU discovery; the generated graph depends on
  the profiler's output and is not previewed).

Inputs are whole objects as a user writes them (v1beta1, or v1alpha1 which is converted first).
Outputs are plain dicts carrying apiVersion/kind/metadata and the ``nvidia.com/dynamo-spec-hash``
annotation, and no ownerReferences (controllers add those). Bad input raises ``RenderError``.
"""

from __future__ import annotations

from collections.abc import Mapping

from . import names
from .component import render_dcd_children
from .context import RenderContext
from .dgdr_job import DGDR_KIND, request_children
from .epp import graph_objects as epp_graph_objects
from .errors import RenderError
from .graph import GraphRender, render_dgd
from .hashing import content_hash
from .netpol import mpi_ssh_network_policy
from .pullsecrets import PullSecretIndex, build_index
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


def render_all(obj: dict, ctx: RenderContext | None = None) -> list[dict]:
    """Every object the operator would create for ``obj``, recursively, de-duplicated by identity."""
    ctx = ctx or RenderContext()
    if isinstance(obj, dict) and obj.get("kind") == DGDR_KIND:
        role = ctx.config("rbac", "dgdrProfilingClusterRoleName")
        out = request_children(obj, ctx.config("images", "profiler"), ctx.config("images", "operator"), role)
    elif isinstance(obj, dict) and obj.get("kind") == names.DGD_KIND:
        parts = render_graph_parts(obj, ctx)
        out = list(parts.checkpoint_objects)  # the DGD controller creates these first
        for child in parts.children:
            out.append(child)
            if child["kind"] == names.DCD_KIND:
                out.extend(render_component(child, ctx))
        beta = to_v1beta1(obj)
        policy = mpi_ssh_network_policy(beta, ctx)  # the DGD controller applies it too
        if policy is not None:
            out.append(policy)
        out.extend(epp_graph_objects(beta, ctx))  # the EPP's InferencePool / DestinationRule (ditto)
    else:
        out = render_component(obj, ctx)
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
    "render_all",
    "render_component",
    "render_graph",
    "render_graph_parts",
]
