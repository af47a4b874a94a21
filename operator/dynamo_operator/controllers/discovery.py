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
from dynamo_operator.render.context import DRA, INTEGRATION_GROUPS, ISTIO
from dynamo_operator.runtime.discovery import ApiGroupDetector


def detect_integrations(client: Any) -> frozenset[str]:
    """The integrations (keys of ``INTEGRATION_GROUPS``) whose API groups the cluster serves now; the render
    context combines them with the configuration (``RenderContext.integration_enabled``)."""
    return frozenset(
        name for name, group in INTEGRATION_GROUPS.items() if ApiGroupDetector(client, group, None).served()
    )


def check_required_integrations(config_doc: dict, detected: frozenset[str]) -> None:
    """``dra.enabled: true`` and ``serviceMesh.enabled: true`` (provider istio) promise an API: the operator
    refuses to start without it (upstream's rule: true = required), rather than fail every graph later."""
    missing = []
    if lookup(config_doc, "dra.enabled", None) is True and DRA not in detected:
        missing.append(f"dra.enabled is true but the cluster does not serve {INTEGRATION_GROUPS[DRA]}")
    mesh_on = lookup(config_doc, "serviceMesh.enabled", None) is True
    if mesh_on and lookup(config_doc, "serviceMesh.provider", None) == "istio" and ISTIO not in detected:
        served = INTEGRATION_GROUPS[ISTIO]
        missing.append(f"serviceMesh.enabled is true but the cluster does not serve {served}")
    if missing:
        raise ValueError(
            "; ".join(missing) + ": install that API (Kubernetes 1.34+ for DRA, Istio for the mesh), or "
            "unset the key in the OperatorConfiguration to auto-detect"
        )
