"""Namespace-scope lease markers: how a namespace-restricted operator and a cluster-wide operator share a
cluster.

Protocol (upstream ``internal/namespace_scope``; operator overview "Гибридный режим"):

1. A namespace-restricted operator holds a coordination.k8s.io/v1 Lease named
   ``dynamo-operator-namespace-scope`` in its namespace: ``holderIdentity`` names the operator version and the
   pod (``namespace-restricted-operator-<version>/<pod>``), ``leaseDurationSeconds`` =
   ``namespace.scope.leaseDuration`` (30s), ``renewTime`` is rewritten every
   ``namespace.scope.leaseRenewInterval`` (10s) by create-or-update (a deleted marker heals itself).  After
   ``max(1, floor(duration / interval) - 1)`` consecutive failed renewals the operator gives up (exits), so it
   never works in a namespace after its claim may have lapsed.  On a clean stop the marker is deleted.
2. A cluster-wide operator watches these Leases in all namespaces (field selector on the name) and leaves
   alone every namespace whose marker has not expired: ``renewTime + leaseDurationSeconds`` in the future (a
   marker without either field counts as expired).  Controllers drop the namespace's events and admission
   allows without checks.
3. When a marker expires (the restricted operator died) or is deleted (it stopped), the cluster-wide operator
   takes the namespace back: every controller enqueues its primary objects there.  Expiry is noticed by a
   timer, since a dead holder produces no watch event.
"""

from __future__ import annotations

import datetime as dt
import math
import threading
from collections.abc import Callable

from kubernetes.client.exceptions import ApiException

from dynamo_operator.labels import LABEL_MANAGED_BY, MANAGED_BY

from .client import LEASES, ResourceClient
from .informer import ClientListWatcher, Informer
from .leaderelection import format_microtime, now_micro, parse_time
from .log import get_logger
from .settings import validate_scope_durations

MARKER_LEASE_NAME = "dynamo-operator-namespace-scope"


def holder_identity(operator_version: str, pod_name: str) -> str:
    return f"namespace-restricted-operator-{operator_version}/{pod_name}"


def marker_expires_at(lease: dict) -> dt.datetime | None:
    spec = lease.get("spec") or {}
    renew = parse_time(spec.get("renewTime"))
    duration = spec.get("leaseDurationSeconds")
    if renew is None or not duration:
        return None
    return renew + dt.timedelta(seconds=int(duration))


def marker_expired(lease: dict, now: dt.datetime | None = None) -> bool:
    expires = marker_expires_at(lease)
    return expires is None or (now or now_micro()) > expires


def max_renew_failures(lease_duration: float, renew_interval: float) -> int:
    return max(1, math.floor(lease_duration / renew_interval + 1e-9) - 1)


class NamespaceScopeMarker:
    """Restricted mode: create and renew the marker lease; call ``on_fatal`` when renewals keep failing."""

    def __init__(
        self,
        client: ResourceClient,
        namespace: str,
        identity: str,
        lease_duration: float = 30.0,
        renew_interval: float = 10.0,
        on_fatal: Callable[[str], None] | None = None,
        annotations: dict[str, str] | None = None,
    ):
        validate_scope_durations(lease_duration, renew_interval)
        self.client = client
        self.namespace = namespace
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_interval = renew_interval
        self.on_fatal = on_fatal
        self.annotations = annotations or {}
        self.max_failures = max_renew_failures(lease_duration, renew_interval)
        self.failures = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.log = get_logger("namespace-scope", namespace=namespace, lease=MARKER_LEASE_NAME)

    def ensure(self) -> dict:
        """Create the marker, or take it over and refresh it (Get → Create on 404 → else Update)."""
        now = format_microtime(now_micro())
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, math.ceil(self.lease_duration)),
            "renewTime": now,
        }
        try:
            lease = self.client.get(LEASES, MARKER_LEASE_NAME, self.namespace)
        except ApiException as e:
            if e.status != 404:
                raise
            body = {
                "metadata": {
                    "name": MARKER_LEASE_NAME,
                    "namespace": self.namespace,
                    "annotations": dict(self.annotations),
                    "labels": {LABEL_MANAGED_BY: MANAGED_BY},
                },
                "spec": {**spec, "acquireTime": now},
            }
            return self.client.create(LEASES, body)
        old = lease.get("spec") or {}
        if old.get("holderIdentity") != self.identity:
            spec["acquireTime"] = now
        lease["spec"] = {**old, **spec}
        md = lease.setdefault("metadata", {})
        if self.annotations:
            md["annotations"] = {**(md.get("annotations") or {}), **self.annotations}
        return self.client.replace(LEASES, lease)

    def start(self) -> None:
        """First write is synchronous (startup fails if the claim cannot be made), then renew in the
        background."""
        self.ensure()
        self.log.info(
            "namespace scope marker acquired",
            identity=self.identity,
            leaseDurationSeconds=self.lease_duration,
        )
        self._thread = threading.Thread(target=self._loop, name="namespace-scope-marker", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.renew_interval):
            try:
                self.ensure()
                self.failures = 0
            except Exception as e:
                if self._stop.is_set():
                    return
                self.failures += 1
                self.log.warning(
                    "failed to renew namespace scope marker",
                    error=str(e),
                    failures=self.failures,
                    maxFailures=self.max_failures,
                )
                if self.failures >= self.max_failures:
                    self.log.error("cannot renew namespace scope marker, giving up the namespace")
                    if self.on_fatal:
                        self.on_fatal("namespace scope marker renewal failed")
                    return

    def stop(self, delete: bool = True, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if delete:
            try:
                self.client.delete(LEASES, MARKER_LEASE_NAME, self.namespace, propagation=None)
                self.log.info("namespace scope marker deleted")
            except ApiException as e:
                if e.status != 404:
                    self.log.warning("failed to delete namespace scope marker", error=str(e))
            except Exception as e:
                self.log.warning("failed to delete namespace scope marker", error=str(e))


class NamespaceExclusions:
    """Cluster-wide mode: the set of namespaces claimed by an unexpired marker.

    Fed by lease events (``observe`` / ``forget``); ``contains`` re-checks expiry on each call; ``sweep`` (run
    by a timer) drops expired markers.  ``on_released(ns)`` fires once per namespace taken back.
    """

    def __init__(
        self,
        on_released: Callable[[str], None] | None = None,
        on_excluded: Callable[[str], None] | None = None,
        now: Callable[[], dt.datetime] = now_micro,
        own_namespace: str | None = None,
    ):
        self._lock = threading.Lock()
        self._leases: dict[str, dict] = {}
        self.on_released = on_released
        self.on_excluded = on_excluded
        self.now = now
        self.own_namespace = own_namespace
        self.log = get_logger("namespace-exclusions")

    def observe(self, lease: dict) -> None:
        md = lease.get("metadata") or {}
        if md.get("name") != MARKER_LEASE_NAME:
            return
        ns = md.get("namespace") or ""
        if marker_expired(lease, self.now()):
            self.forget(ns)
            return
        with self._lock:
            new = ns not in self._leases
            self._leases[ns] = lease
        if new:
            self.log.info(
                "namespace claimed by a namespace-restricted operator, excluding it",
                namespace=ns,
                holder=(lease.get("spec") or {}).get("holderIdentity"),
            )
            if self.on_excluded:
                self.on_excluded(ns)

    def forget(self, ns: str) -> None:
        with self._lock:
            was = self._leases.pop(ns, None) is not None
        if was:
            self.log.info("namespace scope marker gone, taking the namespace back", namespace=ns)
            if self.on_released:
                self.on_released(ns)

    def contains(self, ns: str | None) -> bool:
        if not ns:
            return False
        with self._lock:
            lease = self._leases.get(ns)
        if lease is None:
            return False
        if marker_expired(lease, self.now()):
            self.forget(ns)
            return False
        return True

    def sweep(self) -> list[str]:
        now = self.now()
        with self._lock:
            expired = [ns for ns, lease in self._leases.items() if marker_expired(lease, now)]
        for ns in expired:
            self.forget(ns)
        return expired

    def namespaces(self) -> list[str]:
        with self._lock:
            return sorted(self._leases)


class NamespaceExclusionWatcher:
    """Informer over marker Leases in all namespaces feeding ``NamespaceExclusions``, plus an expiry timer."""

    def __init__(
        self,
        client: ResourceClient,
        exclusions: NamespaceExclusions,
        sweep_interval: float = 1.0,
        informer: Informer | None = None,
    ):
        self.exclusions = exclusions
        self.sweep_interval = sweep_interval
        self.informer = informer or Informer(
            LEASES,
            ClientListWatcher(client, LEASES, None, field_selector=f"metadata.name={MARKER_LEASE_NAME}"),
            name="namespace-scope-leases",
        )
        self.informer.add_event_handler(
            on_add=exclusions.observe,
            on_update=lambda _old, new: exclusions.observe(new),
            on_delete=lambda obj: exclusions.forget((obj.get("metadata") or {}).get("namespace") or ""),
        )
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.informer.start()
        self._thread = threading.Thread(target=self._sweep_loop, name="namespace-scope-sweep", daemon=True)
        self._thread.start()

    def _sweep_loop(self) -> None:
        while not self._stop.wait(self.sweep_interval):
            self.exclusions.sweep()

    def has_synced(self) -> bool:
        return self.informer.has_synced()

    def stop(self) -> None:
        self._stop.set()
        self.informer.stop()


__all__ = [
    "MARKER_LEASE_NAME",
    "NamespaceExclusionWatcher",
    "NamespaceExclusions",
    "NamespaceScopeMarker",
    "holder_identity",
    "marker_expired",
    "marker_expires_at",
    "max_renew_failures",
]
