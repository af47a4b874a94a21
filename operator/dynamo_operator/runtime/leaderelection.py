"""Leader election on a coordination.k8s.io/v1 Lease, with client-go's ``leaderelection`` semantics.

* A candidate may take the lease when it does not exist, when its holder is empty (released), or when the
  record has not changed for ``leaseDurationSeconds`` *as measured on the candidate's own monotonic clock*
  since it first observed that record (client-go's ``observedTime``): clock skew between replicas does not
  matter.
* The leader renews every ``retry_period``; if it cannot renew for ``renew_deadline`` it has lost the lease
  and ``on_stopped_leading`` runs (the manager then exits the process, as controller-runtime does).
* ``release()`` (SIGTERM) writes an empty holder, ``leaseDurationSeconds: 1`` and a fresh renewTime, so a
  waiting replica takes over at its next retry instead of waiting out the lease.
* Writes are optimistic (PUT with the observed resourceVersion): of two candidates, one wins, the other gets
  409.
* Fencing: ``holds_lease()`` is true only while the last successful renewal was *sent* less than
  ``renew_deadline`` ago (by this process's monotonic clock, which keeps counting while the process is
  stopped). A successor can take the lease no earlier than ``lease_duration`` after it observed that renewal,
  which is later than its sending; so a leader that was paused (SIGSTOP, a VM freeze) past its lease finds
  ``holds_lease()`` false the moment it resumes, before its renew loop has even noticed, and the manager's
  write fence refuses its controllers' writes.
"""

from __future__ import annotations

import datetime as dt
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from kubernetes.client.exceptions import ApiException

from .client import LEASES, ResourceClient
from .log import get_logger


def now_micro() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def format_microtime(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(s: str | None) -> dt.datetime | None:
    if not s:
        return None
    s = s.replace("Z", "+00:00")
    try:
        return dt.datetime.fromisoformat(s)
    except ValueError:
        return None


@dataclass(frozen=True)
class LeaderElectionRecord:
    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0

    @classmethod
    def from_lease(cls, lease: dict) -> LeaderElectionRecord:
        spec = lease.get("spec") or {}
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict:
        return {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": self.acquire_time,
            "renewTime": self.renew_time,
            "leaseTransitions": self.leader_transitions,
        }


def held_by_other(
    record: LeaderElectionRecord, identity: str, observed_at: float, now: float, default_duration: float
) -> bool:
    """True when another candidate holds a lease that has not expired (by our observation clock)."""
    if not record.holder_identity or record.holder_identity == identity:
        return False
    duration = record.lease_duration_seconds or default_duration
    return observed_at + duration > now


class LeaderElector:
    def __init__(
        self,
        client: ResourceClient,
        namespace: str,
        name: str,
        identity: str,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if not (lease_duration > renew_deadline > retry_period > 0):
            raise ValueError("need lease_duration > renew_deadline > retry_period > 0")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.clock = clock
        self.observed_record: LeaderElectionRecord | None = None
        self.observed_time = 0.0
        self._observed_rv: str | None = None
        # when the last successful acquire/renew was started (None: never); see holds_lease()
        self._renewed_at: float | None = None
        self._leading = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.log = get_logger("leader-election", lease=f"{namespace}/{name}", identity=identity)

    # -- one attempt ----------------------------------------------------------------------------------------
    def try_acquire_or_renew(self) -> bool:
        with self._lock:
            started = self.clock()
            now_wall = format_microtime(now_micro())
            mine = LeaderElectionRecord(
                holder_identity=self.identity,
                lease_duration_seconds=max(1, round(self.lease_duration)),
                acquire_time=now_wall,
                renew_time=now_wall,
            )
            try:
                lease = self.client.get(LEASES, self.name, self.namespace)
            except ApiException as e:
                if e.status != 404:
                    raise
                body = {"metadata": {"name": self.name, "namespace": self.namespace}, "spec": mine.to_spec()}
                created = self.client.create(LEASES, body)
                self._observe(mine, created)
                self._renewed_at = started
                return True

            old = LeaderElectionRecord.from_lease(lease)
            if old != self.observed_record:
                self._observe(old, lease)
            if held_by_other(old, self.identity, self.observed_time, self.clock(), self.lease_duration):
                return False
            if old.holder_identity == self.identity:
                new = LeaderElectionRecord(
                    self.identity,
                    mine.lease_duration_seconds,
                    old.acquire_time or now_wall,
                    now_wall,
                    old.leader_transitions,
                )
            else:
                new = LeaderElectionRecord(
                    self.identity, mine.lease_duration_seconds, now_wall, now_wall, old.leader_transitions + 1
                )
            lease["spec"] = {**(lease.get("spec") or {}), **new.to_spec()}
            try:
                updated = self.client.replace(LEASES, lease)
            except ApiException as e:
                if e.status == 409:
                    return False
                raise
            self._observe(new, updated)
            self._renewed_at = started
            return True

    def _observe(self, record: LeaderElectionRecord, lease: dict) -> None:
        prev = self.observed_record.holder_identity if self.observed_record else None
        self.observed_record = record
        self.observed_time = self.clock()
        self._observed_rv = (lease.get("metadata") or {}).get("resourceVersion")
        if record.holder_identity != prev and record.holder_identity and self.on_new_leader:
            try:
                self.on_new_leader(record.holder_identity)
            except Exception:
                self.log.exception("on_new_leader failed")

    def is_leader(self) -> bool:
        return self._leading.is_set()

    @property
    def successor_gap(self) -> float:
        """Seconds between the fence closing (``renew_deadline`` after the last renewal was sent) and the
        earliest moment a successor can hold the lease (``lease_duration`` after it saw that renewal): a write
        that passed the fence and is accepted this long afterwards may have landed under a successor."""
        return self.lease_duration - self.renew_deadline

    def holds_lease(self) -> bool:
        """True while this process may write as the leader: it is leading and its last successful renewal
        was sent less than ``renew_deadline`` ago (see the module docstring: the write fence)."""
        renewed = self._renewed_at
        return self._leading.is_set() and renewed is not None and self.clock() - renewed < self.renew_deadline

    # -- loops ----------------------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)
        self._thread.start()

    def _jitter(self, period: float) -> float:
        return period * (1 + 0.2 * random.random())

    def _run(self) -> None:
        self.log.info("attempting to acquire leader lease")
        while not self._stop.is_set():
            try:
                if self.try_acquire_or_renew():
                    break
            except Exception as e:
                self.log.warning("error acquiring leader lease", error=str(e))
            self._stop.wait(self._jitter(self.retry_period))
        if self._stop.is_set():
            return
        self._leading.set()
        self.log.info("successfully acquired lease")
        if self.on_started_leading:
            threading.Thread(target=self.on_started_leading, name="leader-start", daemon=True).start()
        last_renew = self.clock()
        while not self._stop.wait(self.retry_period):
            ok = False
            try:
                ok = self.try_acquire_or_renew()
            except Exception as e:
                self.log.warning("error renewing leader lease", error=str(e))
            if ok:
                last_renew = self.clock()
                continue
            if self.clock() - last_renew >= self.renew_deadline or (
                self.observed_record is not None and self.observed_record.holder_identity != self.identity
            ):
                if self._stop.is_set():
                    return
                self._leading.clear()
                self._renewed_at = None
                self.log.error("leader election lost")
                if self.on_stopped_leading:
                    self.on_stopped_leading()
                return

    def stop(self, release: bool = True, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if release and self._leading.is_set():
            self.release()
        self._leading.clear()

    def release(self) -> bool:
        """Give the lease up at once: empty holder, 1s duration, renewTime now."""
        with self._lock:
            try:
                lease = self.client.get(LEASES, self.name, self.namespace)
                rec = LeaderElectionRecord.from_lease(lease)
                if rec.holder_identity != self.identity:
                    return False
                now_wall = format_microtime(now_micro())
                lease["spec"] = {
                    **(lease.get("spec") or {}),
                    "holderIdentity": "",
                    "leaseDurationSeconds": 1,
                    "renewTime": now_wall,
                    "acquireTime": now_wall,
                    "leaseTransitions": rec.leader_transitions,
                }
                self.client.replace(LEASES, lease)
                self.log.info("released leader lease")
                return True
            except Exception as e:
                self.log.warning("failed to release leader lease", error=str(e))
                return False
