"""A component's Ingress (networking.k8s.io/v1) or Istio VirtualService: how a component is reached from
outside the cluster.

Two sources, the component's first:

* the component's v1alpha1 ``ingress`` (``IngressSpec``; v1beta1 has no such field, so it lives in the
  DCD's v1alpha1 spec, read through ``api.alpha``): ``enabled: true`` exposes the component, through a
  VirtualService when ``useVirtualService`` is true, else an Ingress; ``enabled: false`` keeps it private
  even where the configuration would expose it. Settings it leaves unset come from the configuration
  (class, host suffix, TLS secret, gateway);
* the OperatorConfiguration's ``ingress.*`` (the chart's ``dynamo.ingress.*``, ``dynamo.istio.gateway``,
  ``dynamo.ingressHostSuffix``) for frontends without an ``ingress`` of their own: an Ingress when
  ``ingress.controllerClassName`` is set, a VirtualService when ``ingress.virtualServiceGateway`` is set
  (both when both are), host = the graph's name.

Host: ``<hostPrefix><host>.<hostSuffix>`` (suffix default ``local``, upstream's). Both kinds route every
path (``/`` prefix) to the component's Service, on its one port (the frontend's HTTP port 8000). TLS: an
Ingress gets ``tls`` for its host (the component's ``tls.secretName``, else the configuration's
``controllerTLSSecretName``); a VirtualService cannot carry a certificate (the Istio Gateway terminates
TLS), so ``tls`` there only says the endpoint is HTTPS, as ``ingress.virtualServiceSupportsHTTPS`` does for
every VirtualService. The ``Exposed`` status condition reports each endpoint with that scheme.

VirtualServices are rendered only when the cluster serves ``networking.istio.io`` (``RenderContext``); a
component asking for one without it is reported (``exposure_report``), not rendered.

``ingress_problems`` holds the rules admission and rendering share (host required, one kind's settings
not given to the other, a component with a Service to route to). ``ingress_policy`` holds what the
configuration allows authors (annotations that inject configuration, host suffixes, gateways): an
exposure beyond it is withheld and reported, not rendered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from dynamo_operator.api.alpha import RECORD, alpha_spec

from . import names
from .context import RenderContext
from .errors import RenderError
from .info import ComponentInfo, component_info
from .ingress_policy import IngressPolicy
from .ports import service_ports

INGRESS_API = "networking.k8s.io/v1"
INGRESS_KIND = "Ingress"
VIRTUAL_SERVICE_API = "networking.istio.io/v1beta1"
VIRTUAL_SERVICE_KIND = "VirtualService"
DEFAULT_HOST_SUFFIX = "local"
# the Exposed condition's reasons when a requested exposure is not rendered (``exposure_report``)
REASON_VS_UNAVAILABLE = "VirtualServiceUnavailable"
REASON_POLICY = "IngressPolicy"

_DNS_SUBDOMAIN = re.compile(r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


@dataclass(frozen=True)
class Exposure:
    """How one component is reached from outside: what the operator renders (``kinds``) and where."""

    component: str
    host: str
    kinds: tuple[str, ...]  # INGRESS_KIND and/or VIRTUAL_SERVICE_KIND
    source: str  # "spec.ingress" (the component's) or "configuration" (the operator's ingress.*)
    class_name: str | None = None
    tls_secret: str | None = None
    tls: bool = False  # the Ingress gets a tls entry / the endpoint is HTTPS
    gateway: str | None = None
    annotations: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    # what the configuration's ingress policy refuses (``<field>: <why and fix>``): nothing is rendered
    refused: tuple[str, ...] = ()


def full_host(ingress: dict, suffix_default: str | None) -> str:
    """``<hostPrefix><host>.<hostSuffix>``; an empty suffix falls back to the configuration's, then to
    ``local``."""
    suffix = ingress.get("hostSuffix") or suffix_default or DEFAULT_HOST_SUFFIX
    return f"{ingress.get('hostPrefix') or ''}{ingress.get('host') or ''}.{suffix}"


def ingress_problems(
    ingress: dict, component_type: str | None, gateway_default: str | None, suffix_default: str | None
) -> list[tuple[tuple[str, ...], str]]:
    """(field path under ``ingress``, what is wrong and the fix) for an enabled ``ingress``."""
    if not isinstance(ingress, dict) or not ingress.get("enabled"):
        return []
    out: list[tuple[tuple[str, ...], str]] = []
    use_vs = bool(ingress.get("useVirtualService"))
    if not ingress.get("host"):
        out.append((("host",), "required when enabled is true: the host is <hostPrefix><host>.<hostSuffix>"))
    else:
        host = full_host(ingress, suffix_default)
        if not _DNS_SUBDOMAIN.match(host) or len(host) > 253:
            out.append(
                (
                    ("host",),
                    f"gives the host {host!r} (<hostPrefix><host>.<hostSuffix>), which is not a lowercase "
                    "DNS name; use lowercase letters, digits, '-' and '.'",
                )
            )
    if not service_ports(component_type):
        out.append(
            (
                ("enabled",),
                f"the component has no Service to route to (componentType {component_type or 'unset'}); "
                "expose a component of type frontend, worker, prefill, decode, planner or epp",
            )
        )
    if use_vs and not (ingress.get("virtualServiceGateway") or gateway_default):
        out.append(
            (
                ("virtualServiceGateway",),
                "required with useVirtualService: name the Istio Gateway (or set the operator's "
                "ingress.virtualServiceGateway, the chart's dynamo.istio.gateway)",
            )
        )
    if not use_vs and ingress.get("virtualServiceGateway"):
        out.append(
            (
                ("virtualServiceGateway",),
                "is used only with useVirtualService: true; set useVirtualService: true or remove it",
            )
        )
    return out


# Ingress-only settings beside useVirtualService: upstream renders the VirtualService and ignores them, so
# they are accepted with a notice (render/notices.py), which admission, render and an Event show.
_INGRESS_ONLY = (
    (
        ("ingressControllerClassName",),
        "has no effect: useVirtualService renders a VirtualService instead of an Ingress, so no Ingress "
        "controller is selected; remove it, or set useVirtualService: false for an Ingress",
    ),
    (
        ("tls", "secretName"),
        "has no effect: useVirtualService renders a VirtualService, which cannot carry a certificate (the "
        "Istio Gateway terminates TLS); set the Secret as the Gateway's credentialName (tls still marks the "
        "endpoint HTTPS)",
    ),
)


def ingress_only_settings(ingress: object) -> list[tuple[tuple[str, ...], str]]:
    """(path under ``ingress``, why it has no effect) for each Ingress-only setting an enabled ingress
    with ``useVirtualService`` sets."""
    if not isinstance(ingress, dict) or not (ingress.get("enabled") and ingress.get("useVirtualService")):
        return []
    out = []
    for path, why in _INGRESS_ONLY:
        value: object = ingress
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        if value:
            out.append((path, why))
    return out


def alpha_ingresses(
    kind: str, beta: dict, comps: Iterable[tuple[tuple, dict]]
) -> Iterator[tuple[tuple, dict]]:
    """(path, v1alpha1 ``ingress``) of each of ``comps`` ((path, component) of the v1beta1 ``beta``) that
    has one with ``useVirtualService``. The ingress lives in the conversion record, so only an object whose
    record mentions ``useVirtualService`` is converted back to read it (admission reads every object)."""
    record = ((beta.get("metadata") or {}).get("annotations") or {}).get(RECORD)
    if not isinstance(record, str) or "useVirtualService" not in record:
        return
    spec = alpha_spec(beta)
    services = spec.get("services") if isinstance(spec.get("services"), dict) else {}
    for base, comp in comps:
        svc = spec if kind == names.DCD_KIND else services.get(comp.get("name"))
        own = svc.get("ingress") if isinstance(svc, dict) else None
        if isinstance(own, dict):
            yield base, own


def component_ingress(info: ComponentInfo) -> dict | None:
    """The component's own ``ingress`` (its v1alpha1 spec), or None."""
    ingress = alpha_spec(info.dcd).get("ingress")
    return ingress if isinstance(ingress, dict) else None


def exposure(info: ComponentInfo, ctx: RenderContext) -> Exposure | None:
    """How the component is exposed (None: it is not); invalid settings raise ``RenderError``."""
    cfg_class = ctx.config("ingress", "controllerClassName") or None
    cfg_gateway = ctx.config("ingress", "virtualServiceGateway") or None
    cfg_tls = ctx.config("ingress", "controllerTLSSecretName") or None
    cfg_suffix = ctx.config("ingress", "hostSuffix") or None
    own = component_ingress(info)
    if own is not None:
        problems = ingress_problems(own, info.component_type, cfg_gateway, cfg_suffix)
        if problems:
            path, message = problems[0]
            raise RenderError(info.dcd, "spec.ingress." + ".".join(path), message, "correct the ingress")
        if not own.get("enabled"):
            return None
        use_vs = bool(own.get("useVirtualService"))
        tls = own.get("tls") if isinstance(own.get("tls"), dict) else None
        host = full_host(own, cfg_suffix)
        refused = IngressPolicy.from_config(ctx.config("ingress")).problems(own, host, info.namespace)
        return Exposure(
            component=info.component_name,
            host=host,
            kinds=(VIRTUAL_SERVICE_KIND,) if use_vs else (INGRESS_KIND,),
            source="spec.ingress",
            class_name=None if use_vs else (own.get("ingressControllerClassName") or cfg_class),
            tls_secret=None if use_vs else ((tls or {}).get("secretName") if tls is not None else cfg_tls),
            tls=tls is not None or (not use_vs and bool(cfg_tls)),
            gateway=(own.get("virtualServiceGateway") or cfg_gateway) if use_vs else None,
            annotations=dict(own.get("annotations") or {}),
            labels=dict(own.get("labels") or {}),
            refused=tuple(f"spec.ingress.{_dotted(p.path)}: {p.message}" for p in refused),
        )
    if info.component_type != "frontend" or not (cfg_class or cfg_gateway):
        return None
    kinds = tuple(k for k, on in ((INGRESS_KIND, cfg_class), (VIRTUAL_SERVICE_KIND, cfg_gateway)) if on)
    return Exposure(
        component=info.component_name,
        host=full_host({"host": info.dgd_name or info.name}, cfg_suffix),
        kinds=kinds,
        source="configuration",
        class_name=cfg_class,
        tls_secret=cfg_tls if cfg_class else None,
        tls=bool(cfg_tls) and bool(cfg_class),
        gateway=cfg_gateway,
    )


def _dotted(path: tuple[str, ...]) -> str:
    """``annotations[<key>]`` for an annotation (its key holds dots and slashes), else dotted."""
    if path[:1] == ("annotations",) and len(path) == 2:
        return f"annotations[{path[1]}]"
    return ".".join(path)


def endpoint_url(exp: Exposure, kind: str, ctx: RenderContext) -> str:
    """``https://`` for a TLS Ingress, and for a VirtualService whose gateway serves HTTPS (``tls`` on the
    component, or the configuration's ``ingress.virtualServiceSupportsHTTPS``); else ``http://``."""
    if kind == VIRTUAL_SERVICE_KIND:
        secure = exp.tls or bool(ctx.config("ingress", "virtualServiceSupportsHTTPS"))
    else:
        secure = exp.tls
    return f"{'https' if secure else 'http'}://{exp.host}"


def _metadata(base: dict, exp: Exposure) -> dict:
    """The component's child metadata (``base``) with the ingress's labels and annotations: its labels
    add to ours (ours select and cannot be replaced), its annotations win (controller settings)."""
    meta = {**base}
    meta["labels"] = dict(sorted({**exp.labels, **(base.get("labels") or {})}.items()))
    meta["annotations"] = dict(sorted({**(base.get("annotations") or {}), **exp.annotations}.items()))
    return meta


def _backend(info: ComponentInfo) -> tuple[str, int]:
    return names.dns_label(info.name), int(service_ports(info.component_type)[0]["port"])


def build_ingress(info: ComponentInfo, base: dict, exp: Exposure) -> dict:
    service, port = _backend(info)
    spec: dict = {}
    if exp.class_name:
        spec["ingressClassName"] = exp.class_name
    spec["rules"] = [
        {
            "host": exp.host,
            "http": {
                "paths": [
                    {
                        "path": "/",
                        "pathType": "Prefix",
                        "backend": {"service": {"name": service, "port": {"number": port}}},
                    }
                ]
            },
        }
    ]
    if exp.tls:
        tls: dict = {"hosts": [exp.host]}
        if exp.tls_secret:
            tls["secretName"] = exp.tls_secret
        spec["tls"] = [tls]
    return {
        "apiVersion": INGRESS_API,
        "kind": INGRESS_KIND,
        "metadata": _metadata(base, exp),
        "spec": spec,
    }


def build_virtual_service(info: ComponentInfo, base: dict, exp: Exposure) -> dict:
    service, port = _backend(info)
    return {
        "apiVersion": VIRTUAL_SERVICE_API,
        "kind": VIRTUAL_SERVICE_KIND,
        "metadata": _metadata(base, exp),
        "spec": {
            "hosts": [exp.host],
            "gateways": [str(exp.gateway)],
            "http": [
                {
                    "match": [{"uri": {"prefix": "/"}}],
                    "route": [{"destination": {"host": service, "port": {"number": port}}}],
                }
            ],
        },
    }


def exposure_objects(info: ComponentInfo, ctx: RenderContext, base: dict) -> list[dict]:
    """The component's Ingress and/or VirtualService (a VirtualService only where Istio is served);
    ``base``: the component's child metadata for an object named like its Service."""
    exp = exposure(info, ctx)
    if exp is None or exp.refused:
        return []
    out = []
    if INGRESS_KIND in exp.kinds:
        out.append(build_ingress(info, base, exp))
    if VIRTUAL_SERVICE_KIND in exp.kinds and ctx.virtual_services_served:
        out.append(build_virtual_service(info, base, exp))
    return out


def exposure_report(info: ComponentInfo, ctx: RenderContext) -> tuple[list[str], list[tuple[str, str]]]:
    """(endpoints, problems) for status: ``<component> at <url> (<kind> <namespace>/<name>)`` per object
    rendered, and (reason, message) for each requested object that is not: the configuration's policy
    refuses it (``REASON_POLICY``), or a VirtualService the cluster cannot serve
    (``REASON_VS_UNAVAILABLE``)."""
    try:
        exp = exposure(info, ctx)
    except RenderError:
        return [], []  # rendering fails with the same error, which the Ready condition reports
    if exp is None:
        return [], []
    if exp.refused:
        return [], [(REASON_POLICY, f"{exp.component}: not exposed: {r}") for r in exp.refused]
    name = names.dns_label(info.name)
    endpoints: list[str] = []
    problems: list[tuple[str, str]] = []
    for kind in exp.kinds:
        if kind == VIRTUAL_SERVICE_KIND and not ctx.virtual_services_served:
            asked = (
                "its ingress.useVirtualService"
                if exp.source == "spec.ingress"
                else "the operator configuration's ingress.virtualServiceGateway"
            )
            problems.append(
                (
                    REASON_VS_UNAVAILABLE,
                    f"{exp.component}: no VirtualService ({asked}): the cluster did not serve "
                    "networking.istio.io when the operator started; install Istio and restart the operator, "
                    "or use an Ingress",
                )
            )
            continue
        endpoints.append(
            f"{exp.component} at {endpoint_url(exp, kind, ctx)} ({kind} {info.namespace}/{name})"
        )
    return endpoints, problems


def dcds_exposure_report(dcds: list[dict], ctx: RenderContext) -> tuple[list[str], list[tuple[str, str]]]:
    """``exposure_report`` over rendered (v1beta1) DCDs, concatenated in their order."""
    endpoints: list[str] = []
    problems: list[tuple[str, str]] = []
    for dcd in dcds:
        e, p = exposure_report(component_info(dcd, ctx.discovery_backend), ctx)
        endpoints += e
        problems += p
    return endpoints, problems
