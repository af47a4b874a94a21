"""``security.workloads`` as the pod template admission rule (``pod_privileges``) reads it.

A module of its own so that ``shared.Context`` can name the type without importing the rule (which imports
``shared``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dynamo_operator.api.config import lookup

ALWAYS_ALLOWED_CAPABILITIES = frozenset({"NET_BIND_SERVICE"})  # the restricted profile allows it
CONFIG_KEY = "security.workloads.podTemplates"


def cap(name: Any) -> str:
    text = str(name).upper()
    return text[4:] if text.startswith("CAP_") else text


@dataclass(frozen=True)
class PodTemplatePolicy:
    """``security.workloads`` as the pod template rule reads it (frozen: shared by every request)."""

    action: str = "Warn"
    allow: frozenset[str] = frozenset()
    allowed_capabilities: frozenset[str] = frozenset()
    allowed_service_accounts: frozenset[str] = frozenset()
    restricted: bool = False  # restrictedSecurityContext: warn about templates that opt out of it

    @classmethod
    def from_config(cls, doc: Mapping[str, Any]) -> PodTemplatePolicy:
        """From the effective configuration document (``api.config.effective``)."""
        checks = lookup(doc, CONFIG_KEY, {}) or {}
        return cls(
            action=str(checks.get("action") or "Warn"),
            allow=frozenset(checks.get("allow") or ()),
            allowed_capabilities=frozenset(cap(c) for c in checks.get("allowedCapabilities") or ()),
            allowed_service_accounts=frozenset(checks.get("allowedServiceAccounts") or ()),
            restricted=bool(lookup(doc, "security.workloads.restrictedSecurityContext", False)),
        )


__all__ = ["ALWAYS_ALLOWED_CAPABILITIES", "CONFIG_KEY", "PodTemplatePolicy", "cap"]
