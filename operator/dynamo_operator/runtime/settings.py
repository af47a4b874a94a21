"""The one seam between the OperatorConfiguration (``dynamo_operator.api.config``) plus CLI flags and the
runtime.

The configuration model is owned elsewhere; this module only *reads* it through ``cfg_get`` (attribute or
mapping access, camelCase or snake_case), so it works with the pydantic model, a plain dict from YAML, or
``None``. Precedence: explicit CLI flag > configuration file > default.

Defaults (upstream ``SetDefaults_OperatorConfiguration`` + controller-runtime): metrics ``:8080`` secure,
health probes ``:8081``, leader election off unless enabled, id ``dynamo.nvidia.com``, namespace
``kube-system`` (cluster-wide) or the restricted namespace, lease 15s / renew deadline 10s / retry 2s,
namespace-scope marker 30s / renew 10s, logging info/json, resync 10h.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import socket
from dataclasses import dataclass, field
from typing import Any

DEFAULT_LEADER_ELECTION_ID = "dynamo.nvidia.com"
DEFAULT_LEADER_ELECTION_NAMESPACE = "kube-system"


def operator_version() -> str:
    try:
        from importlib.metadata import version

        return version("dynamo-platform")
    except Exception:
        return "unknown"


def _camel(s: str) -> str:
    parts = s.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def _snake(s: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", s).lower()


def cfg_get(obj: Any, path: str, default: Any = None) -> Any:
    """``cfg_get(cfg, "server.metrics.bindAddress")``: each step tries the name as given, camelCase and
    snake_case, as attribute and as mapping key.  Missing anywhere → ``default``."""
    cur = obj
    for part in path.split("."):
        if cur is None:
            return default
        found = False
        for name in dict.fromkeys((part, _camel(part), _snake(part))):
            if isinstance(cur, dict):
                if name in cur:
                    cur, found = cur[name], True
                    break
            elif hasattr(cur, name):
                cur, found = getattr(cur, name), True
                break
        if not found:
            return default
    return default if cur is None else cur


_DUR = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(v: Any) -> float | None:
    """Go/metav1.Duration strings ("30s", "1m30s", "500ms"), numbers (seconds) or timedelta → seconds."""
    if v is None or v == "":
        return None
    if isinstance(v, dt.timedelta):
        return v.total_seconds()
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    try:
        return float(s)
    except ValueError:
        pass
    pos, total = 0, 0.0
    for m in _DUR.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s) or not s:
        raise ValueError(f"invalid duration {v!r}")
    return total


def _bind(address: Any, port: Any) -> str | None:
    if port is None and address is None:
        return None
    return f"{address or ''}:{port if port is not None else 0}"


@dataclass
class RuntimeSettings:
    kubeconfig: str | None = None
    metrics_bind_address: str = ":8080"
    metrics_secure: bool = True
    metrics_cert_dir: str | None = None
    health_probe_bind_address: str = ":8081"
    leader_elect: bool = False
    leader_election_id: str = DEFAULT_LEADER_ELECTION_ID
    leader_election_namespace: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    restricted_namespace: str | None = None
    scope_lease_duration: float = 30.0
    scope_lease_renew_interval: float = 10.0
    scope_sweep_interval: float = 1.0
    log_level: str = "info"
    log_format: str = "json"
    enable_http2: bool = False
    sync_period: float = 10 * 3600.0
    operator_version: str = field(default_factory=operator_version)
    pod_name: str = field(default_factory=lambda: os.environ.get("POD_NAME") or socket.gethostname())
    pod_namespace: str | None = field(default_factory=lambda: os.environ.get("POD_NAMESPACE"))
    graceful_shutdown_timeout: float = 30.0
    # the loaded OperatorConfiguration, for controllers that need the rest of it (infrastructure, rbac, ...)
    config: Any = None

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


def load_config(path: str | None) -> Any:
    """Load the OperatorConfiguration through the API package when it exists, else as a plain YAML mapping."""
    try:
        from dynamo_operator.api.config import load_operator_config  # type: ignore[import-not-found]
    except ImportError:
        load_operator_config = None
    if load_operator_config is not None:
        return load_operator_config(path)
    if path is None:
        return None
    import yaml

    with open(path) as f:
        data = yaml.safe_load(f) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: an OperatorConfiguration must be a mapping")
    return data


def settings_from_config(config: Any, **overrides: Any) -> RuntimeSettings:
    """Map an OperatorConfiguration (model, dict or None) and CLI overrides (None = not given) to settings."""
    s = RuntimeSettings(config=config)
    c = config
    metrics = _bind(cfg_get(c, "server.metrics.bindAddress"), cfg_get(c, "server.metrics.port"))
    if metrics is not None:
        s.metrics_bind_address = metrics
    secure = cfg_get(c, "server.metrics.secure")
    if secure is not None:
        s.metrics_secure = bool(secure)
    health = _bind(cfg_get(c, "server.healthProbe.bindAddress"), cfg_get(c, "server.healthProbe.port"))
    if health is not None:
        s.health_probe_bind_address = health
    le = cfg_get(c, "leaderElection.enabled")
    if le is not None:
        s.leader_elect = bool(le)
    s.leader_election_id = cfg_get(c, "leaderElection.id") or s.leader_election_id
    s.leader_election_namespace = cfg_get(c, "leaderElection.namespace") or None
    s.restricted_namespace = cfg_get(c, "namespace.restricted") or None
    d = parse_duration(cfg_get(c, "namespace.scope.leaseDuration"))
    if d:
        s.scope_lease_duration = d
    d = parse_duration(cfg_get(c, "namespace.scope.leaseRenewInterval"))
    if d:
        s.scope_lease_renew_interval = d
    s.log_level = str(cfg_get(c, "logging.level", s.log_level))
    s.log_format = str(cfg_get(c, "logging.format", s.log_format))
    s.enable_http2 = bool(
        cfg_get(c, "security.enableHTTP2", False) or cfg_get(c, "security.enableHttp2", False)
    )
    for key, value in overrides.items():
        if value is None:
            continue
        if not hasattr(s, key):
            raise TypeError(f"unknown runtime setting {key!r}")
        setattr(s, key, value)
    s.validate()
    return s
