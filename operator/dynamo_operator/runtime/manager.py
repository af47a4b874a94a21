"""The Manager: shared caches, controllers, leader election, namespace-scope markers, metrics and health
servers.

Start order (``start()``):

1. health-probe and metrics servers (every replica);
2. namespace mode: restricted → create the marker Lease synchronously (startup fails if it cannot), renew it
   in the background, exit when renewals keep failing; cluster-wide → watch the markers in all namespaces;
3. informers (every replica: readiness waits for their first list) and runnables with ``needs_leader=False``
   (webhook servers);
4. leader election (or, when disabled, leadership at once) → once every cache has synced, controllers'
   workers and ``needs_leader=True`` runnables start, only on the leader. Caches that have not synced within
   ``cache_sync_timeout`` stop the manager (exit code 1, naming them), as controller-runtime does: nothing
   reconciles from a partial cache.

Fatal conditions (leader lease lost, marker renewal failing, a cache that never syncs) stop the manager with
``exit_code = 1``;
``run()`` returns it and the CLI exits with it, as controller-runtime exits on "leader election lost".
SIGTERM/SIGINT stop it cleanly (exit code 0): controllers drain, the leader Lease is released so a successor
takes over at once, and the marker Lease is deleted so a cluster-wide operator takes the namespace back at
once.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kubernetes.client import ApiClient

from .atomic import AtomicCounter
from .client import (
    LEASES,
    ResourceClient,
    ResourceDescriptor,
    StaleLeaderWrite,
    install_fenced_transport,
    load_api_client,
    share_tls_context,
    size_connection_pool,
)
from .controller import Controller, Reconciler
from .informer import ClientListWatcher, Informer, Transform, compact, release_memory
from .leaderelection import LeaderElector
from .log import get_logger
from .metrics import OperatorMetrics
from .nsscope import NamespaceExclusions, NamespaceExclusionWatcher, NamespaceScopeMarker, holder_identity
from .servers import HealthServer, MetricsServer
from .settings import RuntimeSettings

_DEFAULT = object()


# Logged for each write accepted after a successor could hold the lease (the fault suite looks for it).
LATE_WRITE_MESSAGE = "write accepted after a successor could hold the lease"


@dataclass
class _Runnable:
    name: str
    start: Callable[[threading.Event], Any]
    needs_leader: bool
    stop: Callable[[], Any] | None
    thread: threading.Thread | None = None


class Manager:
    def __init__(
        self,
        settings: RuntimeSettings | None = None,
        api_client: ApiClient | None = None,
    ):
        self.settings = settings or RuntimeSettings()
        self.tunables = self.settings.tunables
        self.api_client = api_client or load_api_client(
            self.settings.kubeconfig, pool_maxsize=self.tunables.connection_pool_size
        )
        # also a client handed in (a test's, an embedding program's): the same pool and TLS context as ours
        size_connection_pool(self.api_client, self.tunables.connection_pool_size)
        share_tls_context(self.api_client)
        self.identity = self.settings.identity
        # Every request names this process: the apiserver's audit log and managedFields (manager
        # "dynamo-operator") then tell replicas apart, which is how a stale leader's writes are looked for.
        self.api_client.user_agent = f"dynamo-operator/{self.settings.operator_version} ({self.identity})"
        self.client = ResourceClient(self.api_client, request_timeout=self.tunables.request_timeout)
        # Leases (leader election, namespace marker) are written on a client of their own: the write fence
        # on ``client`` must never block the renewal that would lift it.
        self.lease_client = ResourceClient(self.api_client, request_timeout=self.tunables.request_timeout)
        self.metrics = OperatorMetrics()
        self.registry = self.metrics.registry
        self.log = get_logger("manager")
        self.exit_code: int | None = None
        self.stop_reason = ""
        self._fenced_writes = AtomicCounter()  # writes refused by the leader-lease fence (logged at exit)
        self._late_writes = AtomicCounter()  # writes accepted after a successor could lead (logged at exit)
        self._informers: dict[tuple, Informer] = {}
        self._controllers: dict[str, Controller] = {}
        self._runnables: list[_Runnable] = []
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._started = False
        self._leading = threading.Event()
        self.metrics_server = MetricsServer(
            self.settings.metrics_bind_address,
            self.registry,
            secure=self.settings.metrics_secure,
            client=self.client,
            cert_dir=self.settings.metrics_cert_dir,
            service_bind_address=self.settings.metrics_service_bind_address,
        )
        # Readiness details for a caller outside the pod: the same TokenReview/SubjectAccessReview (and
        # its bounded cache) as /metrics, for a token allowed ``get`` on /readyz.
        self.health = HealthServer(self.settings.health_probe_bind_address, auth=self.metrics_server.auth)
        self.health.ready_checks["informers-synced"] = self._caches_synced
        self.elector: LeaderElector | None = None
        self.marker: NamespaceScopeMarker | None = None
        self.exclusions: NamespaceExclusions | None = None
        self.exclusion_watcher: NamespaceExclusionWatcher | None = None
        if self.settings.cluster_wide:
            self.exclusions = NamespaceExclusions(on_released=self._namespace_released)
            self.exclusion_watcher = NamespaceExclusionWatcher(
                self.client, self.exclusions, sweep_interval=self.tunables.scope_sweep_interval
            )

    # -- registration ---------------------------------------------------------------------------------------
    def informer(
        self,
        res: ResourceDescriptor,
        namespace: Any = _DEFAULT,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resync_period: float | None = None,
        transform: Transform | None = None,
    ) -> Informer:
        """The shared informer for a resource/scope/selector (created on first use). ``namespace`` defaults to
        the manager's watch scope: the restricted namespace, or all namespaces. ``transform``: what its
        cache keeps of each object (default ``informer.compact``); one informer has one, set by whoever asks
        for it first with one, before it starts."""
        ns = self.settings.watch_namespace if namespace is _DEFAULT else namespace
        if not res.namespaced:
            ns = None
        key = (res, ns, label_selector, field_selector)
        with self._lock:
            inf = self._informers.get(key)
            if inf is None:
                lw = ClientListWatcher(
                    self.client,
                    res,
                    ns,
                    label_selector,
                    field_selector,
                    watch_timeout=self.tunables.watch_timeout,
                    inactivity_timeout=self.tunables.watch_inactivity_timeout,
                )
                inf = Informer(
                    res,
                    lw,
                    resync_period=self.tunables.resync_period if resync_period is None else resync_period,
                    name=f"{res}" + (f"@{ns}" if ns else ""),
                    backoff=self.tunables.list_watch_backoff,
                    transform=transform or compact,
                )
                self._informers[key] = inf
                if self._started:
                    inf.start()
            else:
                if resync_period and (not inf.resync_period or resync_period < inf.resync_period):
                    inf.resync_period = resync_period
                if transform is not None and inf.transform is not transform:
                    if inf.transform is not compact or self._started:
                        raise ValueError(f"informer {inf.name} already keeps objects another way")
                    inf.transform = transform
            return inf

    def add_controller(
        self,
        name: str,
        primary: ResourceDescriptor,
        reconcile: Reconciler,
        owns: Iterable[ResourceDescriptor | tuple[ResourceDescriptor, str]] = (),
        workers: int = 1,
        label_selector: str | None = None,
        resource_type: str | None = None,
        predicate: Callable[[dict | None, dict], bool] | None = None,
        owned_delay: float | None = None,
    ) -> Controller:
        """Register a controller; it runs on the leader only. ``owns``: child kinds whose events enqueue their
        controller owner (an entry may be ``(resource, label_selector)`` to cache only labelled children);
        ``owned_delay``: seconds between a child's event and its owner's reconcile, coalescing a burst of
        child events. Other kinds are related with ``Controller.watch`` on the returned controller."""
        if name in self._controllers:
            raise ValueError(f"controller {name!r} already registered")
        primary_inf = self.informer(
            primary, label_selector=label_selector, resync_period=self.tunables.resync_period
        )
        owned = []
        for entry in owns:
            res, sel = entry if isinstance(entry, tuple) else (entry, None)
            owned.append((res, self.informer(res, label_selector=sel, resync_period=0)))
        ctl = Controller(
            name,
            primary,
            primary_inf,
            reconcile,
            owned=owned,
            workers=workers,
            metrics=self.metrics,
            resource_type=resource_type,
            is_excluded=self.is_namespace_excluded,
            predicate=predicate,
            owned_delay=owned_delay,
        )
        with self._lock:
            self._controllers[name] = ctl
            if self._started and self._leading.is_set():
                threading.Thread(
                    target=self._start_controllers, args=([ctl],), name=f"start-{name}", daemon=True
                ).start()
        return ctl

    def add_runnable(
        self,
        start_fn: Callable[[threading.Event], Any],
        needs_leader: bool = False,
        stop_fn: Callable[[], Any] | None = None,
        name: str | None = None,
    ) -> None:
        """``start_fn(stop_event)`` runs in its own daemon thread (it may block until ``stop_event`` is set,
        or return after starting its own threads; ``stop_fn`` is then called at shutdown).
        ``needs_leader=False`` runnables (webhook servers) run on every replica."""
        r = _Runnable(name or getattr(start_fn, "__name__", "runnable"), start_fn, needs_leader, stop_fn)
        with self._lock:
            self._runnables.append(r)
            if self._started and (not needs_leader or self._leading.is_set()):
                self._start_runnable(r)

    def add_readiness_check(self, name: str, check: Callable[[], bool | None]) -> None:
        self.health.ready_checks[name] = check

    def add_health_check(self, name: str, check: Callable[[], bool | None]) -> None:
        self.health.health_checks[name] = check

    # -- queries --------------------------------------------------------------------------------------------
    def is_namespace_excluded(self, namespace: str | None) -> bool:
        """True when a namespace-restricted operator claims ``namespace`` (cluster-wide mode), or when the
        namespace is outside this operator's restricted namespace (restricted mode)."""
        if not namespace:
            return False
        if self.settings.restricted_namespace:
            return namespace != self.settings.restricted_namespace
        return self.exclusions is not None and self.exclusions.contains(namespace)

    @property
    def fenced_writes(self) -> int:
        return self._fenced_writes.value

    def is_leader(self) -> bool:
        return self._leading.is_set()

    @property
    def controllers(self) -> dict[str, Controller]:
        return dict(self._controllers)

    def _all_informers(self) -> list[Informer]:
        with self._lock:
            infs = list(self._informers.values())
        if self.exclusion_watcher is not None:
            infs.append(self.exclusion_watcher.informer)
        return infs

    def _caches_synced(self) -> bool:
        return all(i.has_synced() for i in self._all_informers())

    def unsynced_caches(self) -> list[str]:
        """Names of the caches that have not completed their first list."""
        return sorted(i.name for i in self._all_informers() if not i.has_synced())

    def wait_for_cache_sync(self, timeout: float = 60.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._caches_synced():
                return True
            if self._stop.wait(0.05):
                return False
        return self._caches_synced()

    def wait_for_leadership(self, timeout: float) -> bool:
        return self._leading.wait(timeout)

    # -- lifecycle ------------------------------------------------------------------------------------------
    def start(self) -> None:
        s = self.settings
        with self._lock:
            if self._started:
                return
            self._started = True
        self.log.info(
            "starting manager",
            identity=self.identity,
            version=s.operator_version,
            mode="namespace-restricted" if s.restricted_namespace else "cluster-wide",
            namespace=s.restricted_namespace,
            leaderElection=s.leader_elect,
        )
        if s.restricted_namespace:
            self.log.warning(
                "namespace-restricted mode is deprecated and for DEVELOPMENT AND TESTING ONLY",
                namespace=s.restricted_namespace,
            )
        self.health.start()
        self.metrics_server.start()
        if s.restricted_namespace:
            self.marker = NamespaceScopeMarker(
                self.lease_client,
                s.restricted_namespace,
                holder_identity(s.operator_version, s.pod_name),
                lease_duration=s.scope_lease_duration,
                renew_interval=s.scope_lease_renew_interval,
                on_fatal=self.fatal,
            )
            self.marker.start()
        elif self.exclusion_watcher is not None:
            self.exclusion_watcher.start()
        with self._lock:
            for inf in self._informers.values():
                inf.start()
            for r in self._runnables:
                if not r.needs_leader:
                    self._start_runnable(r)
        threading.Thread(target=self._trim_when_idle, name="memory-trim", daemon=True).start()
        if s.leader_elect:
            self.elector = LeaderElector(
                self.lease_client,
                s.resolved_leader_election_namespace(),
                s.leader_election_id,
                self.identity,
                lease_duration=s.lease_duration,
                renew_deadline=s.renew_deadline,
                retry_period=s.retry_period,
                on_started_leading=self._became_leader,
                on_stopped_leading=lambda: self.fatal("leader election lost"),
                on_new_leader=lambda who: self.log.info("new leader observed", leader=who),
            )
            # set on whatever client the controllers were given (tests swap in a recording one)
            self.client.write_fence = self._write_fence
            # a write accepted this long after its fence passed may have landed under a successor: reported
            # with its Audit-ID, never silently
            self.client.late_write_after = self.elector.successor_gap
            self.client.on_late_write = self._late_write
            install_fenced_transport(self.client.api_client)
            self.elector.start()
        else:
            threading.Thread(target=self._became_leader, name="leader-start", daemon=True).start()

    def _became_leader(self) -> None:
        if self._stop.is_set():
            return
        self.metrics.leader.labels(self.settings.leader_election_id).set(1)
        self._leading.set()
        with self._lock:
            controllers = list(self._controllers.values())
        if not self._start_controllers(controllers):
            return
        with self._lock:
            if self._stop.is_set():
                return
            for r in self._runnables:
                if r.needs_leader:
                    self._start_runnable(r)
        self.log.info("leading: controllers started", controllers=sorted(self._controllers))

    def _start_controllers(self, controllers: list[Controller]) -> bool:
        """Start ``controllers``' workers once every cache has synced (so the initial replay covers the whole
        cache); a cache still unsynced after ``cache_sync_timeout`` is fatal. False when nothing started."""
        timeout = self.tunables.cache_sync_timeout
        if not self.wait_for_cache_sync(timeout=timeout):
            if not self._stop.is_set():
                unsynced = self.unsynced_caches()
                self.log.error("caches did not sync, no worker started", timeout=timeout, caches=unsynced)
                self.fatal(f"timed out after {timeout:g}s waiting for caches to sync: {', '.join(unsynced)}")
            return False
        with self._lock:
            if self._stop.is_set():
                return False
            for ctl in controllers:
                ctl.start()
        return True

    def _trim_when_idle(self) -> None:
        """What the caches' first sync freed goes back to the system once they have synced (on every replica,
        leading or not), then, whenever the controllers are idle after work, what the work freed: without
        it a restart kept the peak of its first lists, and a burst of new graphs left the process tens of
        megabytes above what its caches hold."""
        while not self._caches_synced():
            if self._stop.wait(0.5):
                return
        release_memory()
        seen, last_full = 0, time.monotonic()
        while not self._stop.wait(self.tunables.memory_trim_interval):
            with self._lock:
                controllers = list(self._controllers.values())
            done = sum(c.reconciles for c in controllers)
            if done != seen and all(c.idle for c in controllers):
                full = time.monotonic() - last_full >= self.tunables.memory_full_collect_interval
                release_memory(full=full)  # walks only what the work left since the last pass, unless full
                last_full = time.monotonic() if full else last_full
                seen = done

    def _write_fence(self, method: str, path: str) -> None:
        """Refuse a controller's write unless this replica holds an unexpired leader lease: after a pause
        past the lease a successor may already be writing, and two writers would fight over every child."""
        if self.elector is not None and not self.elector.holds_lease():
            self._fenced_writes.add()
            raise StaleLeaderWrite(
                f"{method} {path} refused: this replica ({self.identity}) does not hold the leader lease "
                f"{self.settings.resolved_leader_election_namespace()}/{self.settings.leader_election_id}"
            )

    def _late_write(self, method: str, path: str, audit_id: str, seconds: float) -> None:
        self._late_writes.add()
        self.log.warning(
            LATE_WRITE_MESSAGE,
            method=method,
            path=path,
            auditID=audit_id,
            secondsSinceFence=round(seconds, 3),
            why="it passed the lease fence, then this process was frozen or the request held up",
        )

    def _start_runnable(self, r: _Runnable) -> None:
        def run() -> None:
            try:
                r.start(self._stop)
            except Exception as e:
                self.log.exception("runnable failed", runnable=r.name)
                self.fatal(f"runnable {r.name} failed: {e}")

        r.thread = threading.Thread(target=run, name=f"runnable-{r.name}", daemon=True)
        r.thread.start()

    def _namespace_released(self, namespace: str) -> None:
        for ctl in list(self._controllers.values()):
            if ctl.running:
                n = ctl.enqueue_namespace(namespace)
                self.log.info("namespace taken back", namespace=namespace, controller=ctl.name, objects=n)

    def fatal(self, reason: str) -> None:
        """Stop everything with exit code 1 (called from background threads)."""
        self.log.error("fatal, stopping the manager", reason=reason)
        self._set_exit(1, reason)
        # lost leadership: stop reconciling immediately, before the slower teardown
        for ctl in list(self._controllers.values()):
            ctl.halt()
        threading.Thread(
            target=self.stop, kwargs={"release": False}, name="manager-stop", daemon=True
        ).start()

    def _set_exit(self, code: int, reason: str = "") -> None:
        """The first outcome wins: a fatal error racing a signal's clean stop must not be reported as 0."""
        with self._lock:
            if self.exit_code is None:
                self.exit_code = code
                self.stop_reason = reason or self.stop_reason

    def stop(self, release: bool = True) -> None:
        """Idempotent shutdown; ``release`` gives the leader lease and the namespace marker back."""
        with self._lock:
            if self._stop.is_set():
                already = True
            else:
                already = False
                self._stop.set()
        if already:
            self._stopped.wait(self.tunables.graceful_shutdown_timeout + 10)
            return
        try:
            self.log.info(
                "stopping manager",
                release=release,
                fencedWrites=self.fenced_writes,
                lateWrites=self._late_writes.value,
            )
            for ctl in list(self._controllers.values()):
                ctl.stop(timeout=min(10.0, self.tunables.graceful_shutdown_timeout))
            for r in self._runnables:
                if r.stop is not None:
                    try:
                        r.stop()
                    except Exception:
                        self.log.exception("runnable stop failed", runnable=r.name)
            if self.elector is not None:
                self.elector.stop(release=release)
            self._leading.clear()
            self.metrics.leader.labels(self.settings.leader_election_id).set(0)
            if self.marker is not None:
                self.marker.stop(delete=release)
            if self.exclusion_watcher is not None:
                self.exclusion_watcher.stop()
            for inf in list(self._informers.values()):
                inf.stop(timeout=2.0)
            self.metrics_server.stop()
            self.health.stop()
        finally:
            self._set_exit(0)
            self._stopped.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._stopped.wait(timeout)

    def run(self, install_signal_handlers: bool = True) -> int:
        """Start, block until stopped (signal or fatal error), return the exit code."""
        if install_signal_handlers:

            def _on_signal(signum: int, _frame: Any) -> None:
                self.log.info("signal received, shutting down", signal=signal.Signals(signum).name)
                threading.Thread(target=self.stop, name="manager-stop", daemon=True).start()

            signal.signal(signal.SIGTERM, _on_signal)
            signal.signal(signal.SIGINT, _on_signal)
        try:
            self.start()
        except Exception as e:
            self.log.exception("manager failed to start")
            self._set_exit(1, str(e))
            self.stop(release=True)
            return 1
        while not self._stopped.wait(0.5):
            pass
        return self.exit_code or 0

    # -- convenience for leases (tests, tooling) -----------------------------------------------------------
    def leader_lease(self) -> dict | None:
        try:
            return self.client.get(
                LEASES, self.settings.leader_election_id, self.settings.resolved_leader_election_namespace()
            )
        except Exception:
            return None
