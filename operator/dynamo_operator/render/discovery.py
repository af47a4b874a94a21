"""Kubernetes discovery: what the Dynamo runtime in a graph's pods needs to find its peers.

With ``DYN_DISCOVERY_BACKEND=kubernetes`` (the default), every worker applies a ``DynamoWorkerMetadata``
object for itself (its endpoints and model card, in ``spec.data``) and every frontend and router watches
them, joined with the ready EndpointSlices of the Services labelled for discovery (pod mode) or with the
labelled Pods (container mode). So a graph's pods run as one ServiceAccount per graph,
``<dgd>-k8s-service-discovery``, bound by a Role to exactly that: EndpointSlices and Pods to read,
DynamoWorkerMetadata to write. The three objects are shared by the graph's components (each component's DCD
holds an owner reference, so they go when the last component goes), and a user's own ``serviceAccountName``
wins over the default.
"""

from __future__ import annotations

from . import names
from .context import RenderContext
from .info import ComponentInfo

SA_SUFFIX = "-k8s-service-discovery"
ROLE_SUFFIX = f"{SA_SUFFIX}-role"
RBAC_COMPONENT = "rbac"

RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
    {
        "apiGroups": [names.GROUP],
        "resources": ["dynamoworkermetadatas"],
        "verbs": ["create", "get", "list", "watch", "update", "patch", "delete"],
    },
]


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
    ).endswith((SA_SUFFIX, ROLE_SUFFIX))


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


def discovery_rbac(info: ComponentInfo, ctx: RenderContext) -> list[dict]:
    """The ServiceAccount, Role and RoleBinding of the graph (empty when discovery is not Kubernetes)."""
    if not enabled(info):
        return []
    sa = service_account_name(info)
    role = names.dns_label(f"{info.dgd_name}{ROLE_SUFFIX}")
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(info, ctx, sa)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _meta(info, ctx, role),
            "rules": RULES,
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _meta(info, ctx, sa),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": info.namespace}],
        },
    ]


def discovery_labels(info: ComponentInfo) -> dict:
    """Labels the runtime selects on: pods, and the Services whose EndpointSlices it watches (pod mode)."""
    if info.discovery_backend != "kubernetes":
        return {}
    return {names.LABEL_DISCOVERY_BACKEND: "kubernetes", names.LABEL_DISCOVERY_ENABLED: "true"}
