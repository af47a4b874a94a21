"""Which optional integrations (Grove, LeaderWorkerSet, Kai) the cluster serves, by API discovery.

The controllers and the admission webhooks decide the Grove pathway with the same detector
(``runtime.discovery.ApiGroupDetector``): ``orchestrators.<name>.enabled`` wins when the configuration sets
it; otherwise the integration counts as present when the apiserver serves its API group.
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.render.context import INTEGRATION_GROUPS
from dynamo_operator.runtime.discovery import ApiGroupDetector


def detect_integrations(client: Any) -> frozenset[str]:
    """The integrations (keys of ``INTEGRATION_GROUPS``) whose API groups the cluster serves now; the render
    context combines them with the configuration (``RenderContext.integration_enabled``)."""
    return frozenset(
        name for name, group in INTEGRATION_GROUPS.items() if ApiGroupDetector(client, group, None).served()
    )
