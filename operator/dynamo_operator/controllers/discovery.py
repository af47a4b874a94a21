"""Which optional integrations (Grove, LeaderWorkerSet, Kai) the cluster serves, by API discovery.

One detector for the controllers and the admission webhooks, so both decide the Grove pathway the same way:
``orchestrators.<name>.enabled`` wins when the configuration sets it; otherwise the integration counts as
present when the apiserver serves its API group (``GET /apis/<group>`` answers). A negative answer is only
taken from a 404: any other error (apiserver restarting, throttling) keeps the previous answer rather than
flipping every graph to another pathway.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from dynamo_operator.render.context import INTEGRATION_GROUPS


class ApiGroupDetector:
    """Whether one integration is enabled: the configured value when set, else API discovery of ``group``
    (re-checked at most every ``ttl`` seconds)."""

    def __init__(self, client: Any, group: str, configured: bool | None, ttl: float = 60.0):
        self.client, self.group, self.configured, self.ttl = client, group, configured, ttl
        self._value, self._at = False, -1e9
        self._lock = threading.Lock()

    def served(self) -> bool:
        """What discovery says, ignoring the configuration."""
        with self._lock:
            if time.monotonic() - self._at < self.ttl:
                return self._value
            try:
                self.client.request("GET", f"/apis/{self.group}")
                self._value = True
            except Exception as e:
                if getattr(e, "status", None) == 404:
                    self._value = False
                # other errors keep the last answer
            self._at = time.monotonic()
            return self._value

    def __call__(self) -> bool:
        if self.configured is not None:
            return bool(self.configured)
        return self.served()


def detect_integrations(client: Any) -> frozenset[str]:
    """The integrations (keys of ``INTEGRATION_GROUPS``) whose API groups the cluster serves now; the render
    context combines them with the configuration (``RenderContext.integration_enabled``)."""
    return frozenset(
        name for name, group in INTEGRATION_GROUPS.items() if ApiGroupDetector(client, group, None).served()
    )
