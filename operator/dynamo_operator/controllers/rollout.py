"""Managed rolling updates and graph restarts (pure: state in, next state out; the DGD controller does I/O).

**Rolling update.** The worker hash (``render.hashing.worker_hash``) names the revision of a graph's worker
specs.  The DGD annotation ``nvidia.com/current-worker-hash`` holds the revision that is fully live.  When
the rendered hash differs, a rolling update runs: ``status.rollingUpdate.phase`` goes ``Pending`` (change
seen, event ``RollingUpdateStarted``) → ``InProgress`` → ``Completed`` (event ``RollingUpdateCompleted``,
``endTime``, the annotation moves to the new hash).  Every worker DCD carries the hash label, so every
worker's pods get the new ``DYN_NAMESPACE_WORKER_SUFFIX`` together: new prefill and decode workers only
find each other, and the frontend (not a worker, unchanged) keeps serving through the old workers, which
each Deployment keeps until new replicas are ready (its maxSurge / maxUnavailable).  A worker is in
``updatedComponents`` once its DCD carries the new hash and its Deployment runs only new, ready replicas.

**Restart** (``spec.restart``): a new ``id`` sets the pod-template annotation ``nvidia.com/restartAt=<id>``
on the components to restart, ``Sequential`` (default; one at a time in ``strategy.order``, default the
component names sorted) or ``Parallel`` (all at once).  ``status.restart`` reports ``observedID``,
``phase`` (Restarting → Completed; ``Superseded`` when a rolling update is running) and ``inProgress``.
A component's restart is done when its live DCD carries the id and its workload is ready again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RU_PENDING = "Pending"
RU_IN_PROGRESS = "InProgress"
RU_COMPLETED = "Completed"
RU_FAILED = "Failed"
RU_ACTIVE = frozenset({RU_PENDING, RU_IN_PROGRESS})

RESTART_RESTARTING = "Restarting"
RESTART_COMPLETED = "Completed"
RESTART_FAILED = "Failed"
RESTART_SUPERSEDED = "Superseded"
RESTART_TERMINAL = frozenset({RESTART_COMPLETED, RESTART_FAILED, RESTART_SUPERSEDED})
SEQUENTIAL = "Sequential"
PARALLEL = "Parallel"

# Event reasons
EV_ROLLING_STARTED = "RollingUpdateStarted"
EV_ROLLING_COMPLETED = "RollingUpdateCompleted"
EV_RESTART_STARTED = "RestartStarted"
EV_RESTART_COMPLETED = "RestartCompleted"
EV_RESTART_SUPERSEDED = "RestartSuperseded"


@dataclass(frozen=True)
class Event:
    warning: bool
    reason: str
    message: str


@dataclass
class RolloutStep:
    status: dict | None  # the new status.rollingUpdate (None: leave unset)
    store_hash: str | None  # write this into the current-worker-hash annotation (None: unchanged)
    active_hash: str | None  # the worker revision serving traffic (runtime namespace suffix in status)
    events: list[Event] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return (self.status or {}).get("phase") in RU_ACTIVE


def rolling_update(
    old: dict | None, stored: str | None, desired: str, workers: dict[str, bool], now: str
) -> RolloutStep:
    """Next rolling-update state.  ``workers``: worker component name → fully running ``desired``."""
    old = dict(old or {})
    phase = old.get("phase")
    if stored is None or not workers:
        # a new graph (or one without workers): its first revision is not an update
        return RolloutStep(old or None, desired if stored != desired else None, desired)
    if stored == desired:
        if phase in RU_ACTIVE:  # changed back to the live revision: nothing left to roll
            done = {**old, "phase": RU_COMPLETED, "endTime": now, "updatedComponents": sorted(workers)}
            return RolloutStep(done, None, desired, [_completed(sorted(workers))])
        return RolloutStep(old or None, None, desired)
    updated = sorted(n for n, ok in workers.items() if ok)
    if len(updated) == len(workers):
        done = {
            "phase": RU_COMPLETED,
            "startTime": old.get("startTime") if phase in RU_ACTIVE else now,
            "endTime": now,
            "updatedComponents": updated,
        }
        done = {k: v for k, v in done.items() if v is not None}
        return RolloutStep(done, desired, desired, [_completed(updated)])
    if phase in RU_ACTIVE:
        nxt = {**old, "phase": RU_IN_PROGRESS, "updatedComponents": updated}
        nxt.pop("endTime", None)
        return RolloutStep(nxt, None, stored)
    started = {"phase": RU_PENDING, "startTime": now, "updatedComponents": updated}
    msg = f"Rolling update of workers {', '.join(sorted(workers))} from revision {stored} to {desired}"
    return RolloutStep(started, None, stored, [Event(False, EV_ROLLING_STARTED, msg)])


def _completed(updated: list[str]) -> Event:
    return Event(False, EV_ROLLING_COMPLETED, f"Rolling update completed: {', '.join(updated)} updated")


@dataclass
class RestartStep:
    status: dict | None  # the new status.restart
    targets: frozenset[str]  # components whose pod template gets restartAt=<id> in this pass
    restart_id: str | None
    events: list[Event] = field(default_factory=list)


def restart_order(restart: dict, component_names: list[str]) -> list[str]:
    order = ((restart.get("strategy") or {}).get("order")) or []
    return list(order) if order else sorted(component_names)


def restart(
    spec_restart: dict | None,
    old: dict | None,
    component_names: list[str],
    done: dict[str, bool],
    rolling_active: bool,
) -> RestartStep:
    """Next restart state.  ``done``: component → its live DCD carries this id and is ready again."""
    old = dict(old or {})
    rid = (spec_restart or {}).get("id")
    if not rid:
        keep = old if old.get("phase") in RESTART_TERMINAL else None
        return RestartStep(keep, frozenset(), None)
    if old.get("observedID") == rid and old.get("phase") in RESTART_TERMINAL:
        return RestartStep(old, frozenset(), rid)
    if rolling_active:
        msg = f"restart {rid!r} superseded by the rolling update in progress; set a new restart id afterwards"
        return RestartStep(
            {"observedID": rid, "phase": RESTART_SUPERSEDED},
            frozenset(),
            rid,
            [Event(True, EV_RESTART_SUPERSEDED, msg)],
        )
    order = [n for n in restart_order(spec_restart or {}, component_names) if n in done]
    strategy = ((spec_restart or {}).get("strategy") or {}).get("type") or SEQUENTIAL
    events: list[Event] = []
    if old.get("observedID") != rid:
        events.append(Event(False, EV_RESTART_STARTED, f"Restart {rid!r} ({strategy}): {', '.join(order)}"))
    pending = [n for n in order if not done[n]]
    if not pending:
        events.append(Event(False, EV_RESTART_COMPLETED, f"Restart {rid!r} completed"))
        return RestartStep({"observedID": rid, "phase": RESTART_COMPLETED}, frozenset(order), rid, events)
    if strategy == PARALLEL:
        targets, running = frozenset(order), pending
    else:
        k = order.index(pending[0])
        targets, running = frozenset(order[: k + 1]), [order[k]]
    status = {"observedID": rid, "phase": RESTART_RESTARTING, "inProgress": running}
    return RestartStep(status, targets, rid, events)
