"""Status computations (pure): component readiness from a Deployment, DCD and DGD status, conditions.

Shapes are the internal (v1beta1) ones: ``ComponentReplicaStatus`` (``componentKind``, ``componentNames``,
``runtimeNamespace``, ``replicas``, ``updatedReplicas``, ``readyReplicas``, ``availableReplicas``,
``scheduledReplicas`` where it is known), DGD
``state`` ∈ {initializing, pending, successful, failed} with a ``Ready`` condition, DCD ``Available`` and
``DynamoComponentReady`` conditions.

**Deployment readiness** (upstream's rule, made explicit about why not): desired 0 → ready; otherwise the
Deployment must run the desired replica count, its controller must have observed its latest generation,
and updated, ready and available replicas must all reach the desired count with no surplus (old) replicas.

**DGD readiness** per component: its DCD exists and the DCD controller has observed the DCD's latest
generation (so the Deployment carries the current spec), and that Deployment is ready for the replica
count the graph asks for.  ``Ready`` reasons: ``all_resources_are_ready``; otherwise ``updating``,
``pods_not_ready``, ``some_resources_are_not_ready`` (children not created yet) or
``orchestrator_not_running`` (a PodCliqueSet / LeaderWorkerSet nobody reconciles) when all unready
components agree, ``mixed_not_ready_reasons`` when they do not; failures ``invalid_spec``,
``ownership_conflict``, ``failed_to_reconcile_the_resources``.  The message names every unready component
with its replica counts.  While a managed rolling update runs (``status.rollingUpdate.phase``
Pending/InProgress) the reason is ``rolling_update_in_progress``, and while a restart goes through its
components ``restart_in_progress``: the state is never ``successful`` then.  A Deployment whose pod
template does not carry its DCD's worker hash and restart id (a cache older than the DCD the component
controller applied) counts as ``updating``.

**Progress or news** (``dcd_progress_only``, ``dgd_progress_only``): a status that only says an object is
still starting (its Available / Ready condition stays False for a waiting reason, same generation, nothing
else changed) is *progress*; everything else (first status of an object a user applied, readiness either
way, a failure or a reason a user must act on, a new generation, rolling update and restart phases) is
*news*.  The controllers write news at once and progress at most once per ``status_progress_seconds``
(``tunables.ControllerTunables``) per object (``common.StatusWriter``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from dynamo_operator.api.jsontree import copy_tree
from dynamo_operator.render.graph import ANN_RESTART_AT as RESTART_ANNOTATION
from dynamo_operator.render.ingress import REASON_POLICY, REASON_VS_UNAVAILABLE  # noqa: F401 (reasons)
from dynamo_operator.render.names import LABEL_DYNAMO_NAMESPACE
from dynamo_operator.render.names import LABEL_WORKER_HASH as WORKER_HASH_LABEL

from . import diff

READY = "Ready"
AVAILABLE = "Available"
COMPONENT_READY = "DynamoComponentReady"
# where the graph's (or component's) exposed components are reached from outside (render/ingress.py)
EXPOSED = "Exposed"
REASON_EXPOSED = "Exposed"
# Exposed=False reasons (REASON_VS_UNAVAILABLE, REASON_POLICY) are render/ingress.py's

STATE_INITIALIZING = "initializing"
STATE_PENDING = "pending"
STATE_SUCCESSFUL = "successful"
STATE_FAILED = "failed"

REASON_ALL_READY = "all_resources_are_ready"
REASON_UPDATING = "updating"
REASON_PODS_NOT_READY = "pods_not_ready"
REASON_NOT_CREATED = "some_resources_are_not_ready"
REASON_MIXED = "mixed_not_ready_reasons"
REASON_INVALID_SPEC = "invalid_spec"
REASON_OWNERSHIP = "ownership_conflict"
REASON_FAILED = "failed_to_reconcile_the_resources"
REASON_ROLLING = "rolling_update_in_progress"
REASON_ROLLING_FAILED = "rolling_update_failed"
REASON_RESTARTING = "restart_in_progress"
# the graph's objects were accepted, but the orchestrator that turns them into pods (Grove, the LWS
# controller) has never acted on them: nothing will become ready until it runs
REASON_ORCHESTRATOR_MISSING = "orchestrator_not_running"
# a component held (startupPolicy WaitForCheckpoint) until its checkpoint is Ready (upstream's reason)
REASON_WAITING_CHECKPOINT = "waiting_for_checkpoint"

# Available reasons of a DCD whose workload is still starting (no failure, nothing for a user to do)
DCD_WAITING_REASONS = frozenset({"DeploymentNotReady", "LeaderWorkerSetNotReady", "WaitingForCheckpoint"})
# Ready reasons of a graph whose components are still starting
DGD_WAITING_REASONS = frozenset(
    {REASON_UPDATING, REASON_PODS_NOT_READY, REASON_NOT_CREATED, REASON_MIXED, REASON_WAITING_CHECKPOINT}
)
_STARTING_STATES = frozenset({STATE_INITIALIZING, STATE_PENDING})

# per-component classification
NOT_CREATED = "not_created"
UPDATING = "updating"
PODS_NOT_READY = "pods_not_ready"
ORCHESTRATOR_MISSING = "orchestrator_missing"
WAITING_CHECKPOINT = "waiting_checkpoint"
_OVERALL = {
    WAITING_CHECKPOINT: REASON_WAITING_CHECKPOINT,
    NOT_CREATED: REASON_NOT_CREATED,
    UPDATING: REASON_UPDATING,
    PODS_NOT_READY: REASON_PODS_NOT_READY,
    ORCHESTRATOR_MISSING: REASON_ORCHESTRATOR_MISSING,
}


def now_rfc3339() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Readiness:
    ready: bool
    kind: str  # "" when ready, else NOT_CREATED / UPDATING / PODS_NOT_READY
    message: str


def _i(v) -> int:
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0


def deployment_readiness(dep: dict | None, desired: int) -> Readiness:
    if dep is None:
        return Readiness(False, NOT_CREATED, "Deployment not created yet")
    spec, st = dep.get("spec") or {}, dep.get("status") or {}
    gen = _i((dep.get("metadata") or {}).get("generation"))
    spec_replicas = 1 if spec.get("replicas") is None else _i(spec.get("replicas"))
    replicas, updated = _i(st.get("replicas")), _i(st.get("updatedReplicas"))
    ready, available = _i(st.get("readyReplicas")), _i(st.get("availableReplicas"))
    if spec_replicas != desired:
        return Readiness(False, UPDATING, f"Deployment asks for {spec_replicas} replicas, want {desired}")
    if desired == 0:
        return Readiness(True, "", "scaled to zero")
    if _i(st.get("observedGeneration")) < gen:
        return Readiness(False, UPDATING, f"rollout of generation {gen} not observed yet")
    if updated < desired:
        return Readiness(False, UPDATING, f"{updated}/{desired} replicas updated, {ready}/{desired} ready")
    if replicas > desired:
        return Readiness(False, UPDATING, f"{replicas - desired} old replica(s) terminating")
    if ready < desired or available < desired:
        return Readiness(
            False, PODS_NOT_READY, f"{ready}/{desired} replicas ready, {available}/{desired} available"
        )
    for c in st.get("conditions") or []:
        if c.get("type") == "Available" and c.get("status") == "False":
            return Readiness(False, PODS_NOT_READY, c.get("message") or "Deployment not available")
    return Readiness(True, "", f"{ready}/{desired} replicas ready")


def revision_mismatch(dcd: dict, dep: dict | None, restart_id: str | None) -> str | None:
    """Why a Deployment's pod template is not the DCD's revision (worker hash, restart id), or None."""
    if dep is None:
        return None
    tmeta = ((dep.get("spec") or {}).get("template") or {}).get("metadata") or {}
    want_hash = ((dcd.get("metadata") or {}).get("labels") or {}).get(WORKER_HASH_LABEL)
    have_hash = (tmeta.get("labels") or {}).get(WORKER_HASH_LABEL)
    if want_hash != have_hash:
        return f"Deployment runs worker revision {have_hash}, want {want_hash}"
    have_restart = (tmeta.get("annotations") or {}).get(RESTART_ANNOTATION)
    if restart_id != have_restart:
        return f"Deployment pods carry restart {have_restart}, want {restart_id}"
    return None


def runtime_namespace(labels: dict | None, worker_hash: str | None = None) -> str | None:
    """The Dynamo namespace a component's processes register in: the base namespace, plus for workers
    the revision hash they get as ``DYN_NAMESPACE_WORKER_SUFFIX`` (``worker_hash``, else their label)."""
    labels = labels or {}
    base = labels.get(LABEL_DYNAMO_NAMESPACE)
    suffix = worker_hash or labels.get(WORKER_HASH_LABEL)
    return f"{base}-{suffix}" if base and suffix else base


def replica_status(
    kind: str,
    name: str,
    runtime_namespace: str | None,
    workload: dict | None,
    scheduled: int | None = None,
) -> dict:
    """``ComponentReplicaStatus`` of a Deployment (zeros when it does not exist yet); ``scheduled``: the
    ``scheduledReplicas`` counted (``component_pods``), None when not reported (the field stays unset).
    A ready replica is a scheduled one, whatever the pod cache has seen yet: the count is at least
    ``readyReplicas`` (the pod cache trailing the Deployment's made a ready component write its status a
    second time, its scheduled count catching up a moment later)."""
    st = (workload or {}).get("status") or {}
    out = {
        "componentKind": kind,
        "componentNames": [name],
        "replicas": _i(st.get("replicas")),
        "updatedReplicas": _i(st.get("updatedReplicas")),
        "readyReplicas": _i(st.get("readyReplicas")),
        "availableReplicas": _i(st.get("availableReplicas")),
    }
    if scheduled is not None:
        out["scheduledReplicas"] = max(scheduled, out["readyReplicas"])
    if runtime_namespace:
        out["runtimeNamespace"] = runtime_namespace
    return out


def set_condition(
    conditions: list[dict] | None,
    type_: str,
    status: str,
    reason: str,
    message: str,
    generation: int | None = None,
    now: str | None = None,
) -> list[dict]:
    """Upsert a condition by type; ``lastTransitionTime`` moves only when ``status`` changes."""
    out = [copy_tree(c) for c in conditions or []]
    old = next((c for c in out if c.get("type") == type_), None)
    new = {"type": type_, "status": status, "reason": reason, "message": message}
    if generation is not None:
        new["observedGeneration"] = generation
    if old is not None and old.get("status") == status and old.get("lastTransitionTime"):
        new["lastTransitionTime"] = old["lastTransitionTime"]
    else:
        new["lastTransitionTime"] = now or now_rfc3339()
    if old is None:
        out.append(new)
    else:
        out[out.index(old)] = new
    return out


def set_exposed(
    status: dict, endpoints: list[str], problems: list[tuple[str, str]], generation: int | None
) -> None:
    """The ``Exposed`` condition (in place): True naming each endpoint (``<component> at <url> (<kind>
    <ns>/<name>)``), False when a requested object is not rendered (``problems``: (reason, message), the
    first one's reason, every message first); absent when nothing is exposed."""
    if not endpoints and not problems:
        conds = [c for c in status.get("conditions") or [] if c.get("type") != EXPOSED]
        if len(conds) != len(status.get("conditions") or []):
            status["conditions"] = conds
        return
    ok = not problems
    status["conditions"] = set_condition(
        status.get("conditions"),
        EXPOSED,
        "True" if ok else "False",
        REASON_EXPOSED if ok else problems[0][0],
        "; ".join([*(message for _, message in problems), *endpoints]),
        generation,
    )


def condition(status: dict | None, type_: str) -> dict | None:
    for c in (status or {}).get("conditions") or []:
        if c.get("type") == type_:
            return c
    return None


def status_equal(a: dict | None, b: dict | None) -> bool:
    return diff.same(a or {}, b or {})


# -- DCD ---------------------------------------------------------------------------------------------------


def dcd_status(
    old: dict | None,
    generation: int | None,
    selector: dict,
    component: dict | None,
    readiness: Readiness,
    now: str | None = None,
    available_reason: str | None = None,
) -> dict:
    """New DCD status from the workload's readiness (internal shape)."""
    st = copy_tree(old or {})
    if generation is not None:
        st["observedGeneration"] = generation
    st["podSelector"] = selector
    if component is not None:
        st["component"] = component
    avail = "True" if readiness.ready else "False"
    reason = available_reason or ("DeploymentReady" if readiness.ready else "DeploymentNotReady")
    conds = set_condition(st.get("conditions"), AVAILABLE, avail, reason, readiness.message, generation, now)
    conds = set_condition(
        conds,
        COMPONENT_READY,
        avail,
        "ComponentReady" if readiness.ready else "ComponentNotReady",
        "DynamoComponent is ready" if readiness.ready else "DynamoComponent is not ready",
        generation,
        now,
    )
    st["conditions"] = conds
    return st


def _waiting(cond: dict | None, reasons: frozenset[str]) -> bool:
    return cond is not None and cond.get("status") == "False" and cond.get("reason") in reasons


def dcd_progress_only(old: dict | None, new: dict, first_is_progress: bool) -> bool:
    """``new`` only reports progress of a component still starting (see the module docstring). The first
    status counts as progress only when ``first_is_progress`` (a DCD its graph created: the graph reports
    its components' replica counts itself and needs only the DCD's readiness)."""
    if not _waiting(condition(new, AVAILABLE), DCD_WAITING_REASONS):
        return False
    if not old:
        return first_is_progress
    return (
        _waiting(condition(old, AVAILABLE), DCD_WAITING_REASONS)
        and old.get("observedGeneration") == new.get("observedGeneration")
        and _same_condition(old, new, EXPOSED)
    )


def dgd_progress_only(old: dict | None, new: dict) -> bool:
    """``new`` only reports progress of a graph still starting: both ``initializing``/``pending`` (its
    workloads exist or not yet) with a waiting Ready reason, same generation, rolling update and restart
    unchanged. A graph's first status is always news: it tells the user the operator took the graph."""
    if not old or old.get("state") not in _STARTING_STATES or new.get("state") not in _STARTING_STATES:
        return False
    if not (
        _waiting(condition(old, READY), DGD_WAITING_REASONS)
        and _waiting(condition(new, READY), DGD_WAITING_REASONS)
    ):
        return False
    if not _same_condition(old, new, EXPOSED):
        return False
    return all(old.get(k) == new.get(k) for k in ("observedGeneration", "rollingUpdate", "restart"))


def _same_condition(old: dict, new: dict, type_: str) -> bool:
    a, b = condition(old, type_) or {}, condition(new, type_) or {}
    return all(a.get(k) == b.get(k) for k in ("status", "reason", "message"))


def dcd_observed(dcd_internal: dict | None) -> bool:
    """The DCD controller has processed the DCD's latest generation."""
    if dcd_internal is None:
        return False
    gen = _i((dcd_internal.get("metadata") or {}).get("generation"))
    return _i((dcd_internal.get("status") or {}).get("observedGeneration")) >= gen > 0


# -- DGD ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComponentState:
    name: str  # component name as written in the DGD
    readiness: Readiness
    replica_status: dict
    exists: bool  # its workload exists


def dgd_ready_condition(components: list[ComponentState]) -> tuple[str, str, str]:
    """(state, reason, message) from component states."""
    total = len(components)
    not_ready = [c for c in components if not c.readiness.ready]
    if not not_ready:
        return STATE_SUCCESSFUL, REASON_ALL_READY, f"All resources are ready ({total}/{total} components)"
    kinds = {c.readiness.kind for c in not_ready}
    reason = _OVERALL.get(next(iter(kinds)), REASON_NOT_CREATED) if len(kinds) == 1 else REASON_MIXED
    detail = "; ".join(f"{c.name}: {c.readiness.message}" for c in not_ready)
    message = f"{total - len(not_ready)}/{total} components ready; not ready: {detail}"
    state = STATE_INITIALIZING if not any(c.exists for c in components) else STATE_PENDING
    return state, reason, message


def dgd_status(
    old: dict | None,
    generation: int | None,
    state: str,
    reason: str,
    message: str,
    components: dict[str, dict] | None,
    now: str | None = None,
) -> dict:
    st = copy_tree(old or {})
    if generation is not None:
        st["observedGeneration"] = generation
    st["state"] = state
    st["conditions"] = set_condition(
        st.get("conditions"),
        READY,
        "True" if state == STATE_SUCCESSFUL else "False",
        reason,
        message,
        generation,
        now,
    )
    if components is not None:
        st["components"] = components
    return st


def restart_overlay(state: str, reason: str, message: str, restart: dict | None) -> tuple[str, str, str]:
    """A restart still going through its components keeps the graph ``pending``."""
    r = restart or {}
    if state == STATE_SUCCESSFUL and r.get("phase") == "Restarting":
        left = ", ".join(r.get("inProgress") or [])
        return (
            STATE_PENDING,
            REASON_RESTARTING,
            f"Restart {r.get('observedID')} in progress ({left}); {message}",
        )
    return state, reason, message


def rolling_overlay(state: str, reason: str, message: str, rolling: dict | None) -> tuple[str, str, str]:
    """A running rolling update keeps the graph ``pending`` (never ``successful``); a failed one fails it."""
    phase = (rolling or {}).get("phase")
    if state == STATE_FAILED:
        return state, reason, message
    if phase == "Failed":
        return STATE_FAILED, REASON_ROLLING_FAILED, f"Rolling update failed; {message}"
    if phase in ("Pending", "InProgress"):
        done = ", ".join((rolling or {}).get("updatedComponents") or []) or "none"
        return STATE_PENDING, REASON_ROLLING, f"Rolling update in progress (updated: {done}); {message}"
    return state, reason, message


def set_optional(status: dict, key: str, value: dict | None) -> None:
    """Set ``status[key]``, or drop it when ``value`` is None."""
    if value is None:
        status.pop(key, None)
    else:
        status[key] = value
