"""The one seam between the OperatorConfiguration (``api.config``) plus CLI flags and the parts that take
their settings as arguments: the runtime (``RuntimeSettings``), the controllers and webhooks (the effective
configuration document and ``Tunables``).

Precedence: explicit CLI flag > configuration file > the configuration's defaults (``api.config.DEFAULTS``,
read through ``api.config.effective``, so no default lives here twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from dynamo_operator.api.config import (
    OperatorConfiguration,
    effective,
    load_operator_config,
    lookup,
    parse_duration,
)
from dynamo_operator.runtime.settings import DEFAULT_LEADER_ELECTION_ID, RuntimeSettings
from dynamo_operator.tunables import Tunables


@dataclass
class OperatorSettings:
    """What ``dynamo-operator run`` passes down: the runtime's settings, the configuration document with
    every default filled in (for the controllers, webhooks and renderer) and the tunables."""

    runtime: RuntimeSettings
    config: dict[str, Any] = field(default_factory=lambda: effective(None))
    tunables: Tunables = field(default_factory=Tunables)


def load_config(path: str | None) -> OperatorConfiguration:
    """Read, default and validate the OperatorConfiguration file (defaults only when ``path`` is None)."""
    return load_operator_config(path)


def _bind(doc: dict[str, Any], server: str) -> str:
    """``host:port`` of ``server.<server>`` in a configuration document."""
    return f"{lookup(doc, f'server.{server}.bindAddress', '')}:{lookup(doc, f'server.{server}.port')}"


def runtime_settings(doc: dict[str, Any], tunables: Tunables) -> RuntimeSettings:
    """The runtime's settings as the configuration document ``doc`` (effective) says."""
    return RuntimeSettings(
        metrics_bind_address=_bind(doc, "metrics"),
        metrics_secure=bool(lookup(doc, "server.metrics.secure")),
        health_probe_bind_address=_bind(doc, "healthProbe"),
        leader_elect=bool(lookup(doc, "leaderElection.enabled")),
        leader_election_id=lookup(doc, "leaderElection.id", DEFAULT_LEADER_ELECTION_ID),
        leader_election_namespace=lookup(doc, "leaderElection.namespace") or None,
        restricted_namespace=lookup(doc, "namespace.restricted") or None,
        scope_lease_duration=parse_duration(lookup(doc, "namespace.scope.leaseDuration")),
        scope_lease_renew_interval=parse_duration(lookup(doc, "namespace.scope.leaseRenewInterval")),
        log_level=str(lookup(doc, "logging.level")),
        log_format=str(lookup(doc, "logging.format")),
        tunables=tunables.runtime,
    )


def settings_from_config(
    config: OperatorConfiguration | dict[str, Any] | None,
    tunables: Tunables | None = None,
    **overrides: Any,
) -> OperatorSettings:
    """Map an OperatorConfiguration and CLI overrides of runtime settings (None = not given) to settings."""
    doc = effective(config)
    tunables = tunables or Tunables()
    runtime = runtime_settings(doc, tunables)
    given = {k: v for k, v in overrides.items() if v is not None}
    unknown = sorted(set(given) - set(RuntimeSettings.__dataclass_fields__))
    if unknown:
        raise TypeError(f"unknown runtime setting(s) {', '.join(map(repr, unknown))}")
    runtime = replace(runtime, **given)
    runtime.validate()
    return OperatorSettings(runtime, doc, tunables)
