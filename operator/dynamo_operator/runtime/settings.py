"""What the runtime is told: its identity, addresses, leader election and scope (``RuntimeSettings``) and its
timing knobs (``RuntimeTunables``).

The runtime reads no configuration file: ``dynamo_operator.settings`` maps the OperatorConfiguration and the
CLI flags to these objects, and a test or a tool builds them directly. Defaults are those of a bare
controller runtime (controller-runtime's where it has one): leader-election lease 15 s / renew deadline
10 s / retry 2 s, id ``dynamo.nvidia.com``, namespace ``kube-system`` (cluster-wide) or the restricted
namespace; no metrics or health listener unless an address is given.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from dynamo_operator import __version__

DEFAULT_LEADER_ELECTION_ID = "dynamo.nvidia.com"
DEFAULT_LEADER_ELECTION_NAMESPACE = "kube-system"

# Idle apiserver connections kept: the tunable ``connection_pool_size``, and ``load_api_client``'s default.
CONNECTION_POOL_SIZE = 32


# The runtime's tunables: each default with the reason for it (docs/settings.md lists them all).
@dataclass(frozen=True)
class RuntimeTunables:
    """Timing and sizing of caches, watches, requests and shutdown."""

    # Every cached primary object is re-delivered to its controller this often (controller-runtime's
    # SyncPeriod): a safety net for a missed event, never the way work gets done.
    resync_period: float = 10 * 3600.0
    # Workers start only on synced caches; a cache that has not listed within this long stops the process
    # with exit code 1 (controller-runtime's CacheSyncTimeout), because reconciling from a partial cache
    # would create again what exists and delete what it cannot see.
    cache_sync_timeout: float = 120.0
    # The apiserver ends each watch after a random number of seconds in this range (``timeoutSeconds``),
    # sending a bookmark two seconds before: a healthy watch therefore never stays silent longer than the
    # upper bound. client-go asks for 5-10 minutes; short watches are what lets silence be noticed in time.
    watch_timeout: tuple[int, int] = (30, 45)
    # No byte on a watch for this long (beyond ``watch_timeout``'s upper bound, so never a healthy one):
    # the connection is dead without having been closed (a NAT or a proxy dropped it); the watch is
    # re-established from its last resourceVersion. Silence is thus noticed and repaired within a minute.
    watch_inactivity_timeout: float = 55.0
    # A failing list or watch is retried after this initial delay, doubling up to the maximum (jittered).
    list_watch_backoff: tuple[float, float] = (0.8, 30.0)
    # Seconds a (non-watch) request may take before the client gives up and the caller retries.
    request_timeout: float = 30.0
    # Connections to the apiserver: one per informer's watch plus the workers' requests; urllib3's default
    # (cpu*5) starves on small nodes.
    connection_pool_size: int = CONNECTION_POOL_SIZE
    # How long a stopping manager lets reconciles in flight finish before it gives up on them.
    graceful_shutdown_timeout: float = 30.0
    # Cluster-wide mode: how often namespace-scope markers are re-checked for expiry.
    scope_sweep_interval: float = 1.0
    # How often the manager looks whether the controllers went idle after work, and then returns the memory
    # that work freed to the system (a burst's transient objects; ``informer.release_memory``).
    memory_trim_interval: float = 60.0
    # At most this often, that idle pass collects the whole heap, frozen objects included (``release_memory``
    # ``full``); between, it collects only what came since its last pass.
    memory_full_collect_interval: float = 3600.0

    def validate(self) -> None:
        low, high = self.watch_timeout
        if not 0 < low <= high < self.watch_inactivity_timeout:
            raise ValueError(
                f"watch_timeout {self.watch_timeout} must be a range of positive seconds ending before "
                f"watch_inactivity_timeout ({self.watch_inactivity_timeout}s), or healthy watches would be "
                "taken for dead ones"
            )
        if self.cache_sync_timeout <= 0:
            raise ValueError("cache_sync_timeout must be > 0")


def validate_scope_durations(lease_duration: float, renew_interval: float) -> None:
    """The namespace-scope marker Lease must be renewed well within its duration."""
    if lease_duration <= 0 or renew_interval <= 0 or renew_interval >= lease_duration:
        raise ValueError(
            "namespace.scope: leaseDuration and leaseRenewInterval must be > 0 and "
            f"leaseRenewInterval < leaseDuration (got {lease_duration}s / {renew_interval}s)"
        )


@dataclass
class RuntimeSettings:
    kubeconfig: str | None = None
    metrics_bind_address: str = "0"  # "0": no metrics listener
    metrics_secure: bool = True
    metrics_cert_dir: str | None = None
    # a second metrics listener for the metrics Service (the chart's :8443); None: only the one above
    metrics_service_bind_address: str | None = None
    health_probe_bind_address: str = "0"  # "0": no health listener
    leader_elect: bool = False
    leader_election_id: str = DEFAULT_LEADER_ELECTION_ID
    leader_election_namespace: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    restricted_namespace: str | None = None
    # the namespace-scope marker Lease (restricted mode); the OperatorConfiguration's defaults
    # (``namespace.scope``), which a test holds these to
    scope_lease_duration: float = 30.0
    scope_lease_renew_interval: float = 10.0
    log_level: str = "info"
    log_format: str = "json"
    operator_version: str = __version__
    pod_name: str = field(default_factory=lambda: os.environ.get("POD_NAME") or socket.gethostname())
    pod_namespace: str | None = field(default_factory=lambda: os.environ.get("POD_NAMESPACE"))
    tunables: RuntimeTunables = field(default_factory=RuntimeTunables)

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
            validate_scope_durations(self.scope_lease_duration, self.scope_lease_renew_interval)
        self.tunables.validate()
