"""Kubernetes discovery: what the Dynamo runtime in a graph's pods needs to find its peers.

With ``DYN_DISCOVERY_BACKEND=kubernetes`` (the default), every worker applies a ``DynamoWorkerMetadata``
object for itself (its endpoints and model card, in ``spec.data``) and every frontend and router watches
them, joined with the ready EndpointSlices of the Services labelled for discovery (pod mode) or with the
labelled Pods (container mode). So a graph's pods run as one ServiceAccount per graph,
``<dgd>-k8s-service-discovery``, and a RoleBinding of that name grants it the chart's discovery ClusterRole
(``rbac.discoveryClusterRoleName``: EndpointSlices and Pods to read, DynamoWorkerMetadata to write; its
rules live in the chart's ``_rbac.tpl``, the one place RBAC rules are written). Binding a ClusterRole the
chart made, like the planner's and the EPP's, needs only ``bind`` on that name: the operator itself holds
none of the rules it grants (least privilege, ``tests/integration/test_rbac_cluster.py``). A
namespace-restricted operator may bind no ClusterRole: there the chart ships a Role with the same rules in
the restricted namespace (``rbac.discoveryRoleName``) and grants the operator ``bind`` on that one Role, and
the RoleBinding refers to it. Without either (an operator run without the chart) the account is rendered
unbound. A user's own ``serviceAccountName`` wins over the default.

**One owner.** The two objects are the graph's, not a component's: the graph renders them once
(``graph_rbac``, before its DCDs) and holds the only owner reference, so they are written once when the
graph is created and go with it. When every component rendered them and held a reference each, every
component after the first rewrote the account to add its own (two writes and two Events a graph in a
burst of new graphs). A DCD that its graph controls renders neither (``graph_owned``); a DCD applied on
its own that carries a graph's label still renders them and shares them by plain owner references.
"""

from __future__ import annotations

from . import names
from .context import RenderContext
from .info import ComponentInfo

SA_SUFFIX = "-k8s-service-discovery"
RBAC_COMPONENT = "rbac"
CLUSTER_ROLE_KEY = "discoveryClusterRoleName"
ROLE_KEY = "discoveryRoleName"  # namespace-restricted mode: a Role in the restricted namespace


def enabled(info: ComponentInfo) -> bool:
    """Graph components on the Kubernetes discovery backend get the discovery ServiceAccount."""
    return info.discovery_backend == "kubernetes" and bool(info.dgd_name)


def service_account_name(info: ComponentInfo) -> str:
    return names.dns_label(f"{info.dgd_name}{SA_SUFFIX}")


def is_discovery_rbac(obj: dict) -> bool:
    """One of the graph-wide discovery objects (shared by the graph's components)."""
    md = obj.get("metadata") or {}
    return (md.get("labels") or {}).get("app.kubernetes.io/component") == RBAC_COMPONENT and str(
        md.get("name", "")
    ).endswith(SA_SUFFIX)


def graph_owned(dcd: dict) -> bool:
    """The DCD is controlled by a DynamoGraphDeployment (its controller reference names one): its graph
    renders the discovery objects, it does not."""
    for ref in (dcd.get("metadata") or {}).get("ownerReferences") or []:
        group = str(ref.get("apiVersion", "")).split("/", 1)[0]
        if ref.get("controller") and ref.get("kind") == names.DGD_KIND and group == names.GROUP:
            return True
    return False


def _meta(info: ComponentInfo, ctx: RenderContext, name: str) -> dict:
    return {
        "name": name,
        "namespace": info.namespace,
        "labels": {
            "app.kubernetes.io/component": RBAC_COMPONENT,
            names.LABEL_MANAGED_BY: names.MANAGED_BY,
            "app.kubernetes.io/name": service_account_name(info),
            names.LABEL_DGD_NAME: str(info.dgd_name),
        },
        "annotations": {names.ANN_OPERATOR_VERSION: ctx.operator_version},
    }


def role_ref(ctx: RenderContext) -> dict | None:
    """What the discovery account is bound to: the restricted namespace's Role (``rbac.discoveryRoleName``;
    the configuration refuses it together with the ClusterRole, or without namespace.restricted), else the
    chart's ClusterRole (``rbac.discoveryClusterRoleName``), else nothing."""
    for key, kind in ((ROLE_KEY, "Role"), (CLUSTER_ROLE_KEY, "ClusterRole")):
        name = ctx.config("rbac", key)
        if name:
            return {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": str(name)}
    return None


def discovery_rbac(info: ComponentInfo, ctx: RenderContext) -> list[dict]:
    """The graph's ServiceAccount and, when the chart configured its role, the RoleBinding to it (empty
    when discovery is not Kubernetes)."""
    if not enabled(info):
        return []
    sa = service_account_name(info)
    out: list[dict] = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(info, ctx, sa)}]
    ref = role_ref(ctx)
    if ref:
        out.append(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": _meta(info, ctx, sa),
                "roleRef": ref,
                "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": info.namespace}],
            }
        )
    return out


def graph_rbac(infos: list[ComponentInfo], ctx: RenderContext) -> list[dict]:
    """The graph's discovery ServiceAccount and RoleBinding, once for all its components (``infos``: the
    components as their DCDs would be; they share the backend's choice and the graph's name)."""
    return discovery_rbac(infos[0], ctx) if infos else []


def discovery_labels(info: ComponentInfo) -> dict:
    """Labels the runtime selects on: pods, and the Services whose EndpointSlices it watches (pod mode)."""
    if info.discovery_backend != "kubernetes":
        return {}
    return {names.LABEL_DISCOVERY_BACKEND: "kubernetes", names.LABEL_DISCOVERY_ENABLED: "true"}
