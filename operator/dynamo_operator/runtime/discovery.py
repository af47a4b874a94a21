"""API discovery of one API group (or one resource of it), answered from a cache that never makes a caller
wait twice.

Generic (any group, any client with ``request``): the controllers (``controllers.discovery``) and the
admission webhooks both decide whether an optional integration is served with it, so they decide the same
way. ``configured`` (the configuration's ``orchestrators.<name>.enabled``) wins when set; otherwise the group
counts as present when the apiserver serves it (``GET /apis/<group>`` answers). A negative answer is only
taken from a 404: any other error (apiserver restarting, throttling) keeps the previous answer rather than
flipping every object to another pathway.
"""

from __future__ import annotations

import threading
import time
from typing import Any


class ApiGroupDetector:
    """Whether one integration is enabled: the configured value when set, else API discovery of ``group``
    (re-checked at most every ``ttl`` seconds). With ``resource`` (a plural, ``virtualservices``) the
    group/version must also list that resource: one kind of a group can be installed without the others
    (Istio's CRDs one by one), and a cache of a kind that is not served never syncs.

    Only the first answer waits for the apiserver; later re-checks run in the background while callers get
    the previous answer. Admission asks on every review, and a review must not wait for (or queue behind)
    a discovery request to a busy apiserver once a minute."""

    def __init__(
        self, client: Any, group: str, configured: bool | None, ttl: float = 60.0, resource: str | None = None
    ):
        self.client, self.group, self.configured, self.ttl = client, group, configured, ttl
        self.resource = resource
        self._value, self._at = False, -1e9
        self._checked = False
        self._refreshing = False
        self._lock = threading.Lock()

    def served(self) -> bool:
        """What discovery says, ignoring the configuration."""
        with self._lock:
            if not self._checked:  # nothing to answer with yet: ask now
                self._value, self._at, self._checked = self._ask(False), time.monotonic(), True
            elif time.monotonic() - self._at >= self.ttl and not self._refreshing:
                self._refreshing = True
                threading.Thread(target=self._refresh, name=f"discovery-{self.group}", daemon=True).start()
            return self._value

    def _refresh(self) -> None:
        value = self._value
        try:
            value = self._ask(value)
        finally:
            with self._lock:
                self._value, self._at, self._refreshing = value, time.monotonic(), False

    def _ask(self, previous: bool) -> bool:
        try:
            found = self.client.request("GET", f"/apis/{self.group}")
            if self.resource is None:
                return True
            resources = (found or {}).get("resources") if isinstance(found, dict) else None
            return any(isinstance(r, dict) and r.get("name") == self.resource for r in resources or [])
        except Exception as e:
            if getattr(e, "status", None) == 404:
                return False
            return previous  # other errors keep the last answer

    def __call__(self) -> bool:
        if self.configured is not None:
            return bool(self.configured)
        return self.served()
