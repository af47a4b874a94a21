"""The rolling-update and restart state machines (controllers.rollout) and the status overlay."""

from __future__ import annotations

from dynamo_operator.controllers import rollout as ro
from dynamo_operator.controllers import status as st
from support import graphs

NOW = "2026-01-01T00:00:00Z"
LATER = "2026-01-01T00:05:00Z"


# -- rolling update ------------------------------------------------------------------------------------------


def test_new_graph_records_its_hash_without_a_rolling_update():
    step = ro.rolling_update(None, None, "aaaa1111", {"Decode": False}, NOW)
    assert step.status is None and step.store_hash == "aaaa1111" and not step.events and not step.active


def test_hash_change_starts_pending_then_in_progress_then_completes():
    step = ro.rolling_update(None, "old00000", "new11111", {"Decode": False, "Prefill": False}, NOW)
    assert step.status == {"phase": "Pending", "startTime": NOW, "updatedComponents": []}
    assert step.store_hash is None and step.active_hash == "old00000" and step.active
    assert [e.reason for e in step.events] == ["RollingUpdateStarted"]

    step = ro.rolling_update(step.status, "old00000", "new11111", {"Decode": True, "Prefill": False}, LATER)
    assert step.status == {"phase": "InProgress", "startTime": NOW, "updatedComponents": ["Decode"]}
    assert step.store_hash is None and not step.events and step.active

    step = ro.rolling_update(step.status, "old00000", "new11111", {"Decode": True, "Prefill": True}, LATER)
    assert step.status == {
        "phase": "Completed",
        "startTime": NOW,
        "endTime": LATER,
        "updatedComponents": ["Decode", "Prefill"],
    }
    assert step.store_hash == "new11111" and not step.active
    assert [e.reason for e in step.events] == ["RollingUpdateCompleted"]

    # the annotation now holds the new hash: the completed status is kept, nothing more happens
    again = ro.rolling_update(step.status, "new11111", "new11111", {"Decode": True, "Prefill": True}, LATER)
    assert again.status == step.status and again.store_hash is None and not again.events


def test_reverting_to_the_live_revision_completes_a_running_update():
    running = {"phase": "InProgress", "startTime": NOW, "updatedComponents": []}
    step = ro.rolling_update(running, "same0000", "same0000", {"Decode": True}, LATER)
    assert step.status["phase"] == "Completed" and step.status["endTime"] == LATER


def test_scaling_alone_is_not_a_rolling_update():
    done = {"phase": "Completed", "startTime": NOW, "endTime": NOW, "updatedComponents": ["Decode"]}
    step = ro.rolling_update(done, "h0000000", "h0000000", {"Decode": False}, LATER)
    assert step.status == done and not step.events


def test_overlay_never_reports_successful_during_a_rolling_update():
    running = {"phase": "InProgress", "updatedComponents": ["Decode"]}
    state, reason, msg = st.rolling_overlay(st.STATE_SUCCESSFUL, st.REASON_ALL_READY, "all ready", running)
    assert (state, reason) == (st.STATE_PENDING, st.REASON_ROLLING)
    assert "updated: Decode" in msg
    assert st.rolling_overlay(st.STATE_SUCCESSFUL, st.REASON_ALL_READY, "m", {"phase": "Completed"})[0] == (
        st.STATE_SUCCESSFUL
    )
    assert st.rolling_overlay(st.STATE_PENDING, st.REASON_UPDATING, "m", {"phase": "Failed"})[:2] == (
        st.STATE_FAILED,
        st.REASON_ROLLING_FAILED,
    )
    assert (
        st.rolling_overlay(st.STATE_FAILED, st.REASON_INVALID_SPEC, "m", running)[1] == st.REASON_INVALID_SPEC
    )


# -- restart ---------------------------------------------------------------------------------------------

NAMES = ["Frontend", "Decode", "Prefill"]


def test_no_restart_keeps_only_a_terminal_status():
    assert ro.restart(None, None, NAMES, {}, False).status is None
    done = {"observedID": "r1", "phase": "Completed"}
    assert ro.restart(None, done, NAMES, {}, False).status == done
    assert ro.restart(None, {"observedID": "r1", "phase": "Restarting"}, NAMES, {}, False).status is None


def test_sequential_restart_goes_one_component_at_a_time_in_name_order():
    spec = {"id": "r1"}
    done = dict.fromkeys(NAMES, False)
    step = ro.restart(spec, None, NAMES, done, False)
    assert step.status == {"observedID": "r1", "phase": "Restarting", "inProgress": ["Decode"]}
    assert step.targets == {"Decode"} and [e.reason for e in step.events] == ["RestartStarted"]

    done["Decode"] = True
    step = ro.restart(spec, step.status, NAMES, done, False)
    assert step.status["inProgress"] == ["Frontend"] and step.targets == {"Decode", "Frontend"}
    assert not step.events

    done.update(Frontend=True, Prefill=True)
    step = ro.restart(spec, step.status, NAMES, done, False)
    assert step.status == {"observedID": "r1", "phase": "Completed"}
    assert step.targets == set(NAMES) and [e.reason for e in step.events] == ["RestartCompleted"]

    # processed: no further targets (the controller keeps the annotations already on the DCDs)
    again = ro.restart(spec, step.status, NAMES, done, False)
    assert again.status == step.status and again.targets == frozenset() and not again.events


def test_sequential_restart_follows_an_explicit_order():
    spec = {"id": "r2", "strategy": {"type": "Sequential", "order": ["Prefill", "Decode", "Frontend"]}}
    step = ro.restart(spec, None, NAMES, dict.fromkeys(NAMES, False), False)
    assert step.status["inProgress"] == ["Prefill"] and step.targets == {"Prefill"}


def test_parallel_restart_restarts_everything_at_once():
    spec = {"id": "r3", "strategy": {"type": "Parallel"}}
    done = dict.fromkeys(NAMES, False)
    step = ro.restart(spec, None, NAMES, done, False)
    assert step.targets == set(NAMES) and step.status["inProgress"] == sorted(NAMES)
    done["Frontend"] = True
    step = ro.restart(spec, step.status, NAMES, done, False)
    assert step.status["inProgress"] == ["Decode", "Prefill"]


def test_restart_during_a_rolling_update_is_superseded_with_a_warning():
    step = ro.restart({"id": "r4"}, None, NAMES, dict.fromkeys(NAMES, False), True)
    assert step.status == {"observedID": "r4", "phase": "Superseded"} and step.targets == frozenset()
    assert [(e.warning, e.reason) for e in step.events] == [(True, "RestartSuperseded")]


def test_a_new_restart_id_starts_over():
    spec = {"id": "r6"}
    old = {"observedID": "r5", "phase": "Completed"}
    step = ro.restart(spec, old, NAMES, dict.fromkeys(NAMES, False), False)
    assert step.status["phase"] == "Restarting" and step.status["observedID"] == "r6"


# -- admission rules for spec.restart ------------------------------------------------------------------------


def _dgd(restart=None, status=None) -> dict:
    obj = graphs.dgd(
        {"name": "Frontend", "type": "frontend"}, {"name": "Worker", "type": "worker"}, namespace="team"
    )
    if restart is not None:
        obj["spec"]["restart"] = restart
    if status is not None:
        obj["status"] = status
    return obj


def _errors(obj, old=None) -> list[str]:
    from dynamo_operator.webhooks.validation import validate

    return [str(e) for e in validate("DynamoGraphDeployment", "v1beta1", obj, old).errors]


def test_restart_order_must_name_every_component_once():
    assert (
        _errors(_dgd({"id": "r1", "strategy": {"type": "Sequential", "order": ["Worker", "Frontend"]}})) == []
    )
    errs = _errors(_dgd({"id": "r1", "strategy": {"order": ["Worker", "Worker", "Nope"]}}))
    assert errs == [
        'spec.restart.strategy.order[1]: Duplicate value: "Worker": name each component once',
        'spec.restart.strategy.order[2]: Not found: "Nope": no component of that name (components: Frontend, '
        "Worker)",
        "spec.restart.strategy.order: Invalid value: must list every component; missing: Frontend (or omit "
        "order for name order)",
    ]


def test_parallel_restart_takes_no_order_and_types_are_checked():
    errs = _errors(_dgd({"id": "r1", "strategy": {"type": "Parallel", "order": ["Worker", "Frontend"]}}))
    assert errs == [
        "spec.restart.strategy.order: Forbidden: a Parallel restart restarts every component at once; "
        "remove order or use Sequential"
    ]
    errs = _errors(_dgd({"id": "r1", "strategy": {"type": "Rolling"}}))
    assert errs == ['spec.restart.strategy.type: Unsupported value: "Rolling": use Sequential or Parallel']


def test_restart_id_is_frozen_while_a_rolling_update_runs():
    old = _dgd({"id": "r1"}, status={"rollingUpdate": {"phase": "InProgress"}})
    assert _errors(_dgd({"id": "r2"}), old) == [
        'spec.restart.id: Forbidden: "r2": cannot change while a rolling update is InProgress; wait for '
        "status.rollingUpdate.phase Completed, then set the new restart id"
    ]
    assert _errors(_dgd({"id": "r1"}), old) == []
    done = _dgd({"id": "r1"}, status={"rollingUpdate": {"phase": "Completed"}})
    assert _errors(_dgd({"id": "r2"}), done) == []


# -- readiness guards ----------------------------------------------------------------------------------------


def _dep(labels=None, annotations=None) -> dict:
    return {"spec": {"template": {"metadata": {"labels": labels or {}, "annotations": annotations or {}}}}}


def test_a_deployment_of_another_revision_is_not_ready():
    dcd = {"metadata": {"labels": {"nvidia.com/dynamo-worker-hash": "new00000"}}}
    old = _dep({"nvidia.com/dynamo-worker-hash": "old00000"})
    assert st.revision_mismatch(dcd, old, None) == "Deployment runs worker revision old00000, want new00000"
    new = _dep({"nvidia.com/dynamo-worker-hash": "new00000"})
    assert st.revision_mismatch(dcd, new, None) is None
    assert st.revision_mismatch(dcd, new, "r1") == "Deployment pods carry restart None, want r1"
    assert (
        st.revision_mismatch(
            dcd, _dep(new["spec"]["template"]["metadata"]["labels"], {"nvidia.com/restartAt": "r1"}), "r1"
        )
        is None
    )
    assert st.revision_mismatch({"metadata": {}}, _dep(), None) is None


def test_a_running_restart_keeps_the_graph_pending():
    running = {"observedID": "r1", "phase": "Restarting", "inProgress": ["Decode"]}
    state, reason, msg = st.restart_overlay(st.STATE_SUCCESSFUL, st.REASON_ALL_READY, "all ready", running)
    assert (state, reason) == (
        st.STATE_PENDING,
        st.REASON_RESTARTING,
    ) and "Restart r1 in progress (Decode)" in msg
    done = {"observedID": "r1", "phase": "Completed"}
    assert st.restart_overlay(st.STATE_SUCCESSFUL, st.REASON_ALL_READY, "m", done)[0] == st.STATE_SUCCESSFUL


def test_workers_report_the_namespace_of_their_revision():
    labels = {"nvidia.com/dynamo-namespace": "team-g", "nvidia.com/dynamo-worker-hash": "abcd1234"}
    assert st.runtime_namespace(labels) == "team-g-abcd1234"
    assert st.runtime_namespace(labels, "00ff00ff") == "team-g-00ff00ff"  # the serving revision
    assert st.runtime_namespace({"nvidia.com/dynamo-namespace": "team-g"}) == "team-g"
    assert st.runtime_namespace(None) is None
