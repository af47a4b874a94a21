"""The one seam between the OperatorConfiguration (``dynamo_operator.api.config``) plus CLI flags and the
runtime.

Precedence: explicit CLI flag > configuration file > the configuration's defaults (``api.config.DEFAULTS``,
read through ``api.config.effective``, so no default lives here twice). What the configuration does not
cover is defaulted here, as controller-runtime does: leader-election lease 15s / renew deadline 10s /
retry 2s, id ``dynamo.nvidia.com``, namespace ``kube-system`` (cluster-wide) or the restricted namespace,
resync 10h.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.api.config import (
    DEFAULTS,
    OperatorConfiguration,
    effective,
    load_operator_config,
    lookup,
    parse_duration,
)

DEFAULT_LEADER_ELECTION_ID = "dynamo.nvidia.com"
DEFAULT_LEADER_ELECTION_NAMESPACE = "kube-system"


def operator_version() -> str:
    try:
        from importlib.metadata import version

        return version("dynamo-platform")
    except Exception:
        return "unknown"


def _bind(doc: dict[str, Any], server: str) -> str:
    """``host:port`` of ``server.<server>`` in a configuration document."""
    return f"{lookup(doc, f'server.{server}.bindAddress', '')}:{lookup(doc, f'server.{server}.port')}"


_DEFAULT_DOC = effective(None)


@dataclass
class RuntimeSettings:
    kubeconfig: str | None = None
    metrics_bind_address: str = _bind(_DEFAULT_DOC, "metrics")
    metrics_secure: bool = bool(lookup(_DEFAULT_DOC, "server.metrics.secure"))
    metrics_cert_dir: str | None = None
    # a second metrics listener for the metrics Service (the chart's :8443); None: only the one above
    metrics_service_bind_address: str | None = None
    health_probe_bind_address: str = _bind(_DEFAULT_DOC, "healthProbe")
    leader_elect: bool = False
    leader_election_id: str = DEFAULT_LEADER_ELECTION_ID
    leader_election_namespace: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    restricted_namespace: str | None = None
    scope_lease_duration: float = parse_duration(DEFAULTS["namespace"]["scope"]["leaseDuration"])
    scope_lease_renew_interval: float = parse_duration(DEFAULTS["namespace"]["scope"]["leaseRenewInterval"])
    scope_sweep_interval: float = 1.0
    log_level: str = DEFAULTS["logging"]["level"]
    log_format: str = DEFAULTS["logging"]["format"]
    enable_http2: bool = False
    sync_period: float = 10 * 3600.0
    operator_version: str = field(default_factory=operator_version)
    pod_name: str = field(default_factory=lambda: os.environ.get("POD_NAME") or socket.gethostname())
    pod_namespace: str | None = field(default_factory=lambda: os.environ.get("POD_NAMESPACE"))
    graceful_shutdown_timeout: float = 30.0
    # the configuration document with every default filled in (``api.config.effective``), for the
    # controllers, webhooks and renderer that need the rest of it (infrastructure, rbac, webhook, ...)
    config: Any = None

    def __post_init__(self) -> None:
        self.config = effective(self.config)

    @property
    def cluster_wide(self) -> bool:
        return not self.restricted_namespace

    @property
    def watch_namespace(self) -> str | None:
        return self.restricted_namespace or None

    def resolved_leader_election_namespace(self) -> str:
        if self.leader_election_namespace:
            return self.leader_election_namespace
        if self.restricted_namespace:
            return self.restricted_namespace
        return DEFAULT_LEADER_ELECTION_NAMESPACE

    @property
    def identity(self) -> str:
        """Leader-election identity, unique per process: pod name + random suffix."""
        if not hasattr(self, "_identity"):
            self._identity = f"{self.pod_name}_{os.urandom(8).hex()}"
        return self._identity

    def validate(self) -> None:
        if self.leader_elect and not self.leader_election_id:
            raise ValueError("leaderElection.id is required when leader election is enabled")
        if not (self.lease_duration > self.renew_deadline > self.retry_period > 0):
            raise ValueError("leader election: need leaseDuration > renewDeadline > retryPeriod > 0")
        if self.restricted_namespace:
            from .nsscope import validate_scope_durations

            validate_scope_durations(self.scope_lease_duration, self.scope_lease_renew_interval)


def load_config(path: str | None) -> OperatorConfiguration:
    """Read, default and validate the OperatorConfiguration file (defaults only when ``path`` is None)."""
    return load_operator_config(path)


def settings_from_config(
    config: OperatorConfiguration | dict[str, Any] | None, **overrides: Any
) -> RuntimeSettings:
    """Map an OperatorConfiguration and CLI overrides (None = not given) to settings."""
    s = RuntimeSettings(config=config)
    doc = s.config
    s.metrics_bind_address = _bind(doc, "metrics")
    s.metrics_secure = bool(lookup(doc, "server.metrics.secure"))
    s.health_probe_bind_address = _bind(doc, "healthProbe")
    s.leader_elect = bool(lookup(doc, "leaderElection.enabled"))
    s.leader_election_id = lookup(doc, "leaderElection.id", s.leader_election_id)
    s.leader_election_namespace = lookup(doc, "leaderElection.namespace") or None
    s.restricted_namespace = lookup(doc, "namespace.restricted") or None
    s.scope_lease_duration = parse_duration(lookup(doc, "namespace.scope.leaseDuration"))
    s.scope_lease_renew_interval = parse_duration(lookup(doc, "namespace.scope.leaseRenewInterval"))
    s.log_level = str(lookup(doc, "logging.level"))
    s.log_format = str(lookup(doc, "logging.format"))
    s.enable_http2 = bool(lookup(doc, "security.enableHTTP2"))
    for key, value in overrides.items():
        if value is None:
            continue
        if not hasattr(s, key):
            raise TypeError(f"unknown runtime setting {key!r}")
        setattr(s, key, value)
    s.validate()
    return s
