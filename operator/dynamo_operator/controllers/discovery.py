"""Which optional integrations (Grove, LeaderWorkerSet, Kai, DRA, the InferencePool API, Istio) the cluster
serves, by API discovery.

The controllers and the admission webhooks decide with the same detector
(``runtime.discovery.ApiGroupDetector``): the integration's configuration key (``orchestrators.<name>.
enabled``, ``dra.enabled``, ``serviceMesh.enabled``: ``render.context.OVERRIDE_KEYS``) wins when set;
otherwise the integration counts as present when the apiserver serves its API.
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.api.config import lookup
from dynamo_operator.render.context import (
    DRA,
    INTEGRATION_GROUPS,
    INTEGRATION_KINDS,
    ISTIO,
    ISTIO_DESTINATION_RULE,
    ISTIO_KINDS,
    RenderContext,
)
from dynamo_operator.runtime.discovery import ApiGroupDetector


def detect_integrations(client: Any) -> frozenset[str]:
    """The integrations (keys of ``INTEGRATION_GROUPS``) whose API groups the cluster serves now, and
    Istio's kinds (``INTEGRATION_KINDS``) one by one: a cluster with only the VirtualService CRD (or only
    DestinationRule) serves ``networking.istio.io`` but not the other kind, whose cache would never sync.
    ``istio`` itself is reported only when both kinds are. The render context combines them with the
    configuration (``RenderContext.integration_enabled``)."""
    found = {
        name
        for name, group in INTEGRATION_GROUPS.items()
        if name != ISTIO and ApiGroupDetector(client, group, None).served()
    }
    found |= {
        name
        for name, (group, resource) in INTEGRATION_KINDS.items()
        if ApiGroupDetector(client, group, None, resource=resource).served()
    }
    if all(kind in found for kind in ISTIO_KINDS):
        found.add(ISTIO)
    return frozenset(found)


def check_required_integrations(config_doc: dict, detected: frozenset[str]) -> None:
    """``dra.enabled: true`` and ``serviceMesh.enabled: true`` (provider istio) promise an API: the operator
    refuses to start without it (upstream's rule: true = required), rather than fail every graph later."""
    missing = []
    if lookup(config_doc, "dra.enabled", None) is True and DRA not in detected:
        missing.append(f"dra.enabled is true but the cluster does not serve {INTEGRATION_GROUPS[DRA]}")
    mesh_on = lookup(config_doc, "serviceMesh.enabled", None) is True
    istio = lookup(config_doc, "serviceMesh.provider", None) == "istio"
    if mesh_on and istio and not RenderContext(detected=detected).served(ISTIO_DESTINATION_RULE):
        group, resource = INTEGRATION_KINDS[ISTIO_DESTINATION_RULE]
        missing.append(f"serviceMesh.enabled is true but the cluster does not serve {resource} in {group}")
    if missing:
        raise ValueError(
            "; ".join(missing) + ": install that API (Kubernetes 1.34+ for DRA, Istio for the mesh), or "
            "unset the key in the OperatorConfiguration to auto-detect"
        )
