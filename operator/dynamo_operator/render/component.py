"""DCD -> Deployment (or LeaderWorkerSet + its headless Service when multinode), Service, ServiceAccount,
model headless Service, EPP ConfigMap and the GPU memory service's ResourceClaimTemplate. The companions
(everything but the workload) are shared with the
Grove pathway (``grove.py``), which replaces the workload by the DGD's PodCliqueSet."""

from __future__ import annotations

import copy

import yaml

from . import discovery, gms, names
from .context import RenderContext
from .errors import RenderError
from .hashing import stamp
from .info import ComponentInfo, component_info
from .ingress import exposure_objects
from .pod import EPP_CONFIG_KEY, build_pod_template, epp_config_source
from .ports import SYSTEM_PORT, service_ports
from .restore import gate

# DCD metadata annotations that are not copied to children.
CONVERSION_ANNOTATION_PREFIX = "nvidia.com/conversion-from-"
_NOT_PROPAGATED = {names.ANN_SPEC_HASH, "kubectl.kubernetes.io/last-applied-configuration"}


def child_metadata(
    info: ComponentInfo, ctx: RenderContext, name: str, extra_labels: dict | None = None
) -> dict:
    dcd_meta = info.dcd.get("metadata") or {}
    labels = dict(dcd_meta.get("labels") or {})
    labels.update(
        {
            names.LABEL_DGD_NAME: info.dgd_name or info.name,
            names.LABEL_COMPONENT: info.component_name,
            names.LABEL_COMPONENT_TYPE: info.type_label,
            names.LABEL_DYNAMO_NAMESPACE: info.dynamo_namespace,
            names.LABEL_MANAGED_BY: names.MANAGED_BY,
        }
    )
    labels.update(extra_labels or {})
    annotations = {
        k: v
        for k, v in (dcd_meta.get("annotations") or {}).items()
        if k not in _NOT_PROPAGATED and not k.startswith(CONVERSION_ANNOTATION_PREFIX)
    }
    annotations[names.ANN_OPERATOR_VERSION] = ctx.operator_version
    return {
        "name": name,
        "namespace": info.namespace,
        "labels": dict(sorted(labels.items())),
        "annotations": dict(sorted(annotations.items())),
    }


def desired_replicas(info: ComponentInfo, ctx: RenderContext) -> int:
    """The component's ``replicas`` (default 1); 0 while ``startupPolicy: WaitForCheckpoint`` waits for
    its checkpoint (``restore.gate``)."""
    if gate(info, ctx):
        return 0
    r = info.spec.get("replicas")
    return 1 if r is None else int(r)


def deployment_strategy(info: ComponentInfo) -> dict:
    ann = info.annotations
    if ann.get(names.ANN_DEPLOYMENT_STRATEGY) == "Recreate":
        return {"type": "Recreate"}

    def _iv(v: str) -> int | str:
        return int(v) if v.isdigit() else v

    return {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "maxSurge": _iv(ann.get(names.ANN_MAX_SURGE, "25%")),
            "maxUnavailable": _iv(ann.get(names.ANN_MAX_UNAVAILABLE, "25%")),
        },
    }


def build_deployment(info: ComponentInfo, ctx: RenderContext) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": child_metadata(info, ctx, info.name, {names.LABEL_SELECTOR: info.name}),
        "spec": {
            "replicas": desired_replicas(info, ctx),
            "selector": {"matchLabels": {names.LABEL_SELECTOR: info.name}},
            "strategy": deployment_strategy(info),
            "template": build_pod_template(info, ctx, "main"),
        },
    }


LWS_API_VERSION = "leaderworkerset.x-k8s.io/v1"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"  # set by the LWS controller on every pod of the set


def leaderworkerset_name(info: ComponentInfo) -> str:
    return f"{info.name}-0"


def build_leaderworkerset(info: ComponentInfo, ctx: RenderContext) -> dict:
    if not ctx.lws_enabled:
        raise RenderError(
            info.dcd,
            "spec.multinode.nodeCount",
            f"{info.node_count} nodes need a multinode orchestrator: Grove is not used for this graph and "
            "LeaderWorkerSet is neither enabled nor detected (no leaderworkerset.x-k8s.io API)",
            "install Grove (grove.enabled=true in the platform chart) or LeaderWorkerSet, or set "
            "orchestrators.lws.enabled: true in the operator configuration, or use one node",
        )
    name = leaderworkerset_name(info)
    return {
        "apiVersion": LWS_API_VERSION,
        "kind": "LeaderWorkerSet",
        "metadata": child_metadata(info, ctx, name, {names.LABEL_SELECTOR: info.name}),
        "spec": {
            "replicas": desired_replicas(info, ctx),
            "startupPolicy": "LeaderCreated",
            "leaderWorkerTemplate": {
                "size": info.node_count,
                "leaderTemplate": build_pod_template(info, ctx, "leader"),
                "workerTemplate": build_pod_template(info, ctx, "worker"),
            },
        },
    }


def build_lws_headless_service(info: ComponentInfo, ctx: RenderContext) -> dict:
    """The subdomain LWS_LEADER_ADDRESS resolves in (``<leader pod>.<lws name>.<namespace>``): named after
    the LeaderWorkerSet, selecting its pods, publishing not-ready pods so workers find the leader while it
    starts. The LWS controller creates the same Service when it is missing; owning it keeps the pods'
    addressing independent of that controller's version."""
    name = leaderworkerset_name(info)
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": child_metadata(info, ctx, name),
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {LWS_NAME_LABEL: name},
        },
    }


def workload(info: ComponentInfo, ctx: RenderContext) -> list[dict]:
    """The pods' owner on the component pathway: a Deployment, or a LeaderWorkerSet + its headless Service."""
    if info.multinode:
        return [build_leaderworkerset(info, ctx), build_lws_headless_service(info, ctx)]
    return [build_deployment(info, ctx)]


def build_service(info: ComponentInfo, ctx: RenderContext) -> dict | None:
    ports = service_ports(info.component_type)
    if not ports:
        return None
    # Discovery labels: the runtime watches the EndpointSlices of labelled Services (they inherit the labels).
    meta = child_metadata(info, ctx, names.dns_label(info.name), discovery.discovery_labels(info))
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {"selector": {names.LABEL_SELECTOR: info.name}, "ports": ports},
    }


def build_model_service(info: ComponentInfo, ctx: RenderContext) -> dict | None:
    model = (info.spec.get("modelRef") or {}).get("name")
    if not model:
        return None
    h = names.model_hash(model)
    meta = child_metadata(info, ctx, names.model_service_name(info.name), {names.LABEL_BASE_MODEL_HASH: h})
    meta["annotations"][names.ANN_BASE_MODEL] = model
    revision = (info.spec.get("modelRef") or {}).get("revision")
    if revision:
        meta["annotations"]["nvidia.com/dynamo-base-model-revision"] = str(revision)
    meta["annotations"] = dict(sorted(meta["annotations"].items()))
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {names.LABEL_SELECTOR: info.name, names.LABEL_BASE_MODEL_HASH: h},
            "ports": [{"name": "system", "port": SYSTEM_PORT, "targetPort": SYSTEM_PORT, "protocol": "TCP"}],
        },
    }


def build_service_account(info: ComponentInfo, ctx: RenderContext) -> dict | None:
    sa = {"planner": names.PLANNER_SERVICE_ACCOUNT, "epp": names.EPP_SERVICE_ACCOUNT}.get(
        info.component_type or ""
    )
    if not sa:
        return None
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": sa,
            "namespace": info.namespace,
            "labels": {names.LABEL_MANAGED_BY: names.MANAGED_BY},
            "annotations": {names.ANN_OPERATOR_VERSION: ctx.operator_version},
        },
    }


def build_role_binding(info: ComponentInfo, ctx: RenderContext) -> dict | None:
    """Binds the planner / epp ServiceAccount to the ClusterRole named in ``rbac`` (when configured)."""
    key = {"planner": "plannerClusterRoleName", "epp": "eppClusterRoleName"}.get(info.component_type or "")
    role = ctx.config("rbac", key) if key else None
    if not role:
        return None
    sa = names.PLANNER_SERVICE_ACCOUNT if info.component_type == "planner" else names.EPP_SERVICE_ACCOUNT
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": sa,
            "namespace": info.namespace,
            "labels": {names.LABEL_MANAGED_BY: names.MANAGED_BY},
            "annotations": {names.ANN_OPERATOR_VERSION: ctx.operator_version},
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": str(role)},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": info.namespace}],
    }


def build_epp_configmap(info: ComponentInfo, ctx: RenderContext) -> dict | None:
    if info.component_type != "epp":
        return None
    config = (info.spec.get("eppConfig") or {}).get("config")
    if config is None:
        return None  # configMapRef: the user's ConfigMap
    name, _ = epp_config_source(info)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": child_metadata(info, ctx, name),
        "data": {EPP_CONFIG_KEY: yaml.safe_dump(copy.deepcopy(config), sort_keys=False)},
    }


def build_resource_claim_template(info: ComponentInfo, ctx: RenderContext) -> dict | None:
    """The DRA ResourceClaimTemplate a GPU memory service component's pods claim their GPUs from
    (``render/gms.py``): as many devices of ``deviceClassName`` as the main container requested."""
    spec = gms.gms_spec(info.spec)
    if spec is None:
        return None
    return {
        "apiVersion": gms.API_VERSION,
        "kind": gms.KIND,
        "metadata": child_metadata(info, ctx, names.claim_template_name(info.name)),
        "spec": gms.claim_template_spec(spec, gms.gpu_count(info.spec)),
    }


def companions(info: ComponentInfo, ctx: RenderContext) -> tuple[list[dict], list[dict]]:
    """(before, after) the workload: ServiceAccount, RoleBinding, EPP ConfigMap, ResourceClaimTemplate;
    Service, model Service, Ingress / VirtualService (``ingress.py``)."""
    before = [
        build_service_account(info, ctx),
        build_role_binding(info, ctx),
        build_epp_configmap(info, ctx),
        build_resource_claim_template(info, ctx),
    ]
    after = [build_service(info, ctx), build_model_service(info, ctx)]
    exposed = exposure_objects(info, ctx, child_metadata(info, ctx, names.dns_label(info.name)))
    return [o for o in before if o is not None], [o for o in after if o is not None] + exposed


def render_dcd_children(dcd: dict, ctx: RenderContext) -> list[dict]:
    """Every object the DCD controller creates for a (validated, v1beta1) DCD, hash-stamped."""
    info = component_info(dcd, ctx.discovery_backend)
    before, after = companions(info, ctx)
    # The graph's discovery ServiceAccount and RoleBinding are its graph's (``discovery.graph_rbac``); a
    # DCD applied on its own renders them, before the workload: a pod is refused while the account it
    # runs as does not exist.
    shared = [] if discovery.graph_owned(dcd) else discovery.discovery_rbac(info, ctx)
    return [stamp(o) for o in [*shared, *before, *workload(info, ctx), *after]]
