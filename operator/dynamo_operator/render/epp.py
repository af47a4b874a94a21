"""What backs a graph's EPP (Endpoint Picker) component, beside its pods: the InferencePool its
``-pool-name`` argument names, and, under an Istio service mesh, the DestinationRule of its Service.

* InferencePool (``inference.networking.k8s.io/v1``, the Gateway API Inference Extension's stable API, as
  upstream Dynamo writes it): ``<dgd>-pool`` in the graph's namespace, owned by the graph. It selects the
  graph's worker pods (``nvidia.com/dynamo-component-class: worker``, which the graph puts on every worker
  component when it has an EPP, and the graph's ``nvidia.com/dynamo-namespace``), targets port 8000 (the
  frontend sidecar of a GAIE worker) and points the gateway at the EPP Service's gRPC port 9002. An EPP
  without that API is refused (admission, and the renderer below): its pool would never exist.
* DestinationRule (``networking.istio.io/v1beta1``, upstream's version) named after the EPP Service, for
  host ``<svc>.<ns>.svc.cluster.local``, when ``serviceMesh.provider`` is ``istio`` and the mesh is enabled
  (``serviceMesh.enabled``, else the DestinationRule API detected): the sidecar proxies then speak the
  configured TLS mode to the EPP's own TLS endpoint instead of wrapping it twice
  (``serviceMesh.istio``: ``tlsMode`` default SIMPLE, ``insecureSkipVerify`` default true, the client
  certificate, key and CA paths only in MUTUAL).
"""

from __future__ import annotations

from . import names
from .context import RenderContext
from .errors import RenderError
from .hashing import stamp
from .ports import EPP_GRPC_PORT, FRONTEND_HTTP_PORT

POOL_API_VERSION = "inference.networking.k8s.io/v1"
POOL_KIND = "InferencePool"
RULE_API_VERSION = "networking.istio.io/v1beta1"
RULE_KIND = "DestinationRule"
MUTUAL = "MUTUAL"
_MUTUAL_FILES = (
    ("clientCertificate", "clientCertificate"),
    ("privateKey", "privateKey"),
    ("caCertificates", "caCertificates"),
)


def epp_component(dgd: dict) -> tuple[int, dict] | None:
    """(index, component) of a (v1beta1) graph's EPP component; admission allows one."""
    for i, comp in enumerate((dgd.get("spec") or {}).get("components") or []):
        if isinstance(comp, dict) and comp.get("type") == "epp":
            return i, comp
    return None


def has_epp(dgd: dict) -> bool:
    return epp_component(dgd) is not None


def check_pool_api(dgd: dict, ctx: RenderContext) -> None:
    """An EPP component needs the InferencePool API: raise (naming the component) when it is not served."""
    found = epp_component(dgd)
    if found is None or ctx.inference_pool_served:
        return
    raise RenderError(
        dgd,
        f"spec.components[{found[0]}].type",
        f"an epp component needs the Gateway API Inference Extension's InferencePool API ({POOL_API_VERSION})"
        ", which the cluster does not serve, so the pool its -pool-name argument names cannot exist",
        "install the Inference Extension CRDs and restart the operator (dynamo-operator render: --detected "
        "inferencePool), or remove the epp component",
    )


def _metadata(dgd: dict, ctx: RenderContext, name: str, component: str) -> dict:
    meta = dgd["metadata"]
    return {
        "name": name,
        "namespace": meta.get("namespace") or "default",
        "labels": {
            names.LABEL_COMPONENT: component,
            names.LABEL_COMPONENT_TYPE: "epp",
            names.LABEL_DGD_NAME: meta["name"],
            names.LABEL_MANAGED_BY: names.MANAGED_BY,
        },
        "annotations": {names.ANN_OPERATOR_VERSION: ctx.operator_version},
    }


def epp_service_name(dgd: dict, component: dict) -> str:
    """The EPP component's Service (``render/component.build_service``): ``<dgd>-<lower component>``."""
    return names.component_resource_name(dgd["metadata"]["name"], str(component["name"]))


def build_inference_pool(dgd: dict, component: dict, ctx: RenderContext) -> dict:
    meta = dgd["metadata"]
    namespace = meta.get("namespace") or "default"
    dyn_ns = names.dynamo_namespace(namespace, meta["name"], bool(component.get("globalDynamoNamespace")))
    return {
        "apiVersion": POOL_API_VERSION,
        "kind": POOL_KIND,
        "metadata": _metadata(dgd, ctx, names.inference_pool_name(meta["name"]), str(component["name"])),
        "spec": {
            "targetPorts": [{"number": FRONTEND_HTTP_PORT}],
            "selector": {
                "matchLabels": {
                    names.LABEL_COMPONENT_CLASS: names.COMPONENT_CLASS_WORKER,
                    names.LABEL_DYNAMO_NAMESPACE: dyn_ns,
                }
            },
            "endpointPickerRef": {
                "kind": "Service",
                "name": epp_service_name(dgd, component),
                "port": {"number": EPP_GRPC_PORT},
            },
        },
    }


def _tls(ctx: RenderContext) -> dict:
    mode = str(ctx.config("serviceMesh", "istio", "tlsMode", default="SIMPLE") or "SIMPLE")
    skip = ctx.config("serviceMesh", "istio", "insecureSkipVerify", default=True)
    tls: dict = {"mode": mode, "insecureSkipVerify": True if skip is None else bool(skip)}
    if mode == MUTUAL:
        for key, field in _MUTUAL_FILES:
            value = ctx.config("serviceMesh", "istio", field, default=None)
            if value:
                tls[key] = str(value)
    return tls


def build_destination_rule(dgd: dict, component: dict, ctx: RenderContext) -> dict:
    namespace = dgd["metadata"].get("namespace") or "default"
    service = epp_service_name(dgd, component)
    return {
        "apiVersion": RULE_API_VERSION,
        "kind": RULE_KIND,
        "metadata": _metadata(dgd, ctx, service, str(component["name"])),
        "spec": {
            "host": f"{service}.{namespace}.svc.cluster.local",
            "trafficPolicy": {"tls": _tls(ctx)},
        },
    }


def graph_objects(dgd: dict, ctx: RenderContext) -> list[dict]:
    """The hash-stamped InferencePool (and DestinationRule under an enabled Istio mesh) of a (v1beta1,
    validated) graph with an EPP component; [] without one."""
    found = epp_component(dgd)
    if found is None:
        return []
    check_pool_api(dgd, ctx)
    _, component = found
    out = [build_inference_pool(dgd, component, ctx)]
    if ctx.istio_mesh:
        out.append(build_destination_rule(dgd, component, ctx))
    return [stamp(o) for o in out]


__all__ = [
    "POOL_API_VERSION",
    "POOL_KIND",
    "RULE_API_VERSION",
    "RULE_KIND",
    "check_pool_api",
    "graph_objects",
    "has_epp",
]
