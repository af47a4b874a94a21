"""What a graph author may ask of the shared ingress controller and Istio gateways through a component's
``ingress``: the operator writes the Ingress or VirtualService with its own rights, so without a policy an
author who may not create Ingresses could still inject configuration into the cluster's shared proxy,
claim any host, or attach to any gateway (issue 30, item 4).

Three rules, from the OperatorConfiguration's ``ingress`` section (the chart's ``dynamo.ingress.*``,
``dynamo.istio.*`` and ``dynamo.ingressHostSuffix``):

* **annotations** that ingress controllers read as raw configuration, or as references outside the
  Ingress's namespace (``configuration_injection``), are refused unless ``ingress.allowedAnnotations``
  names them (``"*"``: every annotation, for a cluster with one tenant);
* **the host** must end in ``.<suffix>`` for a suffix the configuration names (``ingress.hostSuffix`` and
  ``ingress.allowedHostSuffixes``) when it names one; with none, any host (upstream's behaviour);
* **the gateway** a VirtualService attaches to must be one the configuration names
  (``ingress.virtualServiceGateway`` and ``ingress.allowedGateways``) when it names one.

Only the component's own ``ingress`` is judged: the exposure the configuration itself gives frontends is
the platform team's. Admission refuses a request that adds a violation and warns about one the object
already had; the renderer withholds a refused exposure (no Ingress or VirtualService, ``Exposed=False``
reason ``IngressPolicy``), so a graph admitted before the policy stops injecting at once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

ALLOW_ALL = "*"
CHART_ANNOTATIONS = "dynamo-operator.dynamo.ingress.allowedAnnotations"
CHART_SUFFIXES = "dynamo-operator.dynamo.ingress.allowedHostSuffixes"
CHART_GATEWAYS = "dynamo-operator.dynamo.istio.allowedGateways"

# The name part (after the prefix's "/") of an annotation a controller pastes into its configuration file
# unvalidated: ingress-nginx rates every *-snippet annotation Critical (configuration-, server-, auth-,
# stream-, modsecurity-snippet; refused by its default annotations-risk-level), NGINX Inc's controller and
# Angie have server-snippets / location-snippets, HAProxy Technologies' backend-config-snippet and
# frontend-config-snippet. Any prefix: ingress-nginx's prefix is configurable.
_SNIPPET = re.compile(r"(^|[-.])snippets?$")
# HAProxy Ingress (haproxy-ingress.github.io, and its legacy ingress.kubernetes.io prefix): config-backend,
# config-defaults, config-frontend, config-global, config-sections, config-tcp... are raw HAProxy sections.
_HAPROXY_RAW = re.compile(r"^(haproxy-ingress\.github\.io|ingress\.kubernetes\.io)/config-")
# ingress-nginx annotations whose value may be <namespace>/<name>: the controller reads that Secret with
# its own rights, so a value naming another namespace reaches a Secret the author cannot read.
_SECRET_REFERENCES = ("auth-secret", "auth-tls-secret", "proxy-ssl-secret")


def configuration_injection(key: str, value: object, namespace: str | None) -> str | None:
    """Why the annotation ``key: value`` on an Ingress in ``namespace`` reaches past its own route (None:
    it does not)."""
    name = key.rsplit("/", 1)[-1]
    if _SNIPPET.search(name):
        return (
            "is a configuration snippet: the ingress controller pastes it unvalidated into the configuration "
            "it shares with every other Ingress (ingress-nginx rates *-snippet annotations Critical)"
        )
    if _HAPROXY_RAW.match(key):
        return "is raw HAProxy configuration the ingress controller shares with every other Ingress"
    if name in _SECRET_REFERENCES and isinstance(value, str) and "/" in value:
        other = value.split("/", 1)[0]
        if other and other != namespace:
            return (
                f"names a Secret in namespace {other!r}, which the ingress controller would read with its "
                "own rights on the author's behalf"
            )
    return None


@dataclass(frozen=True)
class PolicyProblem:
    """One refused setting: ``path`` under ``ingress`` (``("annotations", key)``, ``("hostSuffix",)``,
    ``("virtualServiceGateway",)``), what is wrong and the fix, and ``value`` the refused value (an
    unchanged value is only warned about at admission)."""

    path: tuple[str, ...]
    message: str
    value: object


@dataclass(frozen=True)
class IngressPolicy:
    """The configuration's constraints on authors' ``ingress`` (empty tuples: unconstrained)."""

    allowed_annotations: frozenset[str] = frozenset()
    host_suffixes: tuple[str, ...] = ()
    gateways: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, section: Mapping | None) -> IngressPolicy:
        """From the OperatorConfiguration's ``ingress`` section (its JSON form)."""
        section = section or {}

        def listed(*keys: str) -> tuple[str, ...]:
            out: list[str] = []
            for key in keys:
                value = section.get(key)
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, str) and item and item not in out:
                        out.append(item)
            return tuple(out)

        return cls(
            allowed_annotations=frozenset(listed("allowedAnnotations")),
            host_suffixes=tuple(s.lstrip(".") for s in listed("hostSuffix", "allowedHostSuffixes")),
            gateways=listed("virtualServiceGateway", "allowedGateways"),
        )

    def problems(self, ingress: dict, host: str, namespace: str | None) -> list[PolicyProblem]:
        """What an enabled ``ingress`` whose full host is ``host`` asks beyond the policy."""
        out = self._annotation_problems(ingress, namespace)
        if self.host_suffixes and not any(host == s or host.endswith("." + s) for s in self.host_suffixes):
            allowed = ", ".join(self.host_suffixes)
            out.append(
                PolicyProblem(
                    ("hostSuffix",),
                    f"gives the host {host!r}, outside the host suffixes the operator configuration allows "
                    f"({allowed}); set hostSuffix to one of them or leave it unset, or ask the platform team "
                    f"to add it to ingress.allowedHostSuffixes (chart: {CHART_SUFFIXES})",
                    ingress.get("hostSuffix"),
                )
            )
        gateway = ingress.get("virtualServiceGateway")
        if ingress.get("useVirtualService") and gateway and self.gateways and gateway not in self.gateways:
            out.append(
                PolicyProblem(
                    ("virtualServiceGateway",),
                    f"is not a gateway the operator configuration allows ({', '.join(self.gateways)}); "
                    "remove it to use the configured gateway, or ask the platform team to add it to "
                    f"ingress.allowedGateways (chart: {CHART_GATEWAYS})",
                    gateway,
                )
            )
        return out

    def _annotation_problems(self, ingress: dict, namespace: str | None) -> list[PolicyProblem]:
        annotations = ingress.get("annotations")
        if ALLOW_ALL in self.allowed_annotations or not isinstance(annotations, dict):
            return []
        out = []
        for key, value in annotations.items():
            why = configuration_injection(str(key), value, namespace)
            if why is None or key in self.allowed_annotations:
                continue
            out.append(
                PolicyProblem(
                    ("annotations", str(key)),
                    f"{why}; remove the annotation, or ask the platform team to allow it in "
                    f"ingress.allowedAnnotations (chart: {CHART_ANNOTATIONS})",
                    value,
                )
            )
        return out
