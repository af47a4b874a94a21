"""Managed rolling updates and graph restarts on the real control plane, with a status-truth check.

``History`` watches the namespace's DGDs, Deployments and Pods on the apiserver while a rollout runs and
keeps every event.  All of them come from one etcd, whose revision numbers (``resourceVersion``) order
every write of every kind, so the state of the world at the moment a DGD status was written can be
rebuilt exactly.  Each DGD status that claims ``successful`` / ``Ready=True`` is judged against that
moment: every component's Deployment must run the claimed generation's revision only (worker hash,
restart annotation), with all wanted replicas updated, ready and available, and no surplus pods.  The
first lie fails the test with the offending state.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field

import pytest
from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from dynamo_operator.render import names
from dynamo_operator.render.graph import ANN_RESTART_AT
from dynamo_operator.render.hashing import ANN_CURRENT_WORKER_HASH, worker_hash
from dynamo_operator.runtime.client import DEPLOYMENTS, EVENTS, PODS
from support import graphs
from support.dgd import apply_dgd, dgd_status, wait_status, wait_successful
from support.operator import Operator

pytestmark = pytest.mark.cluster

NS_PREFIX = "roll"
WAIT = 120.0


@pytest.fixture(scope="module")
def operator(kube_cluster, crds):
    """One in-process operator for the module: each test works in a namespace of its own."""
    with Operator(kube_cluster) as op:
        yield op


def graph(ns: str) -> dict:
    """A Frontend, one vLLM prefill worker and two decode workers."""
    return graphs.dgd(
        graphs.component("Frontend", "frontend", replicas=1),
        graphs.component("Prefill", "prefill", replicas=1, command=graphs.VLLM, args=["--is-prefill-worker"]),
        graphs.component("Decode", "decode", replicas=2, command=graphs.VLLM),
        namespace=ns,
    )


# -- the recorded history ------------------------------------------------------------------------------------


def _rv(obj: dict) -> int:
    return int(obj["metadata"]["resourceVersion"])


@dataclass
class History:
    """Every DGD / Deployment / Pod event of a namespace, in etcd revision order."""

    client: object
    ns: str
    events: list[tuple[int, str, str, dict]] = field(default_factory=list)  # (rv, kind, type, obj)
    start_rv: int = 0
    _streams: list = field(default_factory=list)
    _threads: list = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        for res in (store.DGD, DEPLOYMENTS, PODS):
            items, rv = self.client.list_all(res, self.ns)
            self.start_rv = max(self.start_rv, int(rv))
            with self._lock:
                for o in items:
                    self.events.append((_rv(o), res.kind, "ADDED", o))
            stream = self.client.watch(
                res, self.ns, resource_version=rv, timeout_seconds=600, bookmarks=False
            )
            self._streams.append(stream)
            t = threading.Thread(target=self._pump, args=(stream, res.kind), daemon=True)
            t.start()
            self._threads.append(t)

    def _pump(self, stream, kind: str) -> None:
        for ev in stream:
            obj = ev.get("object") or {}
            if ev.get("type") in ("ADDED", "MODIFIED", "DELETED") and obj.get("metadata"):
                with self._lock:
                    self.events.append((_rv(obj), kind, ev["type"], obj))

    def stop(self) -> None:
        for s in self._streams:
            s.close()
        for t in self._threads:
            t.join(10)

    def replay(self):
        """Yields (rv, kind, obj, world) after applying each event; world[kind][name] is the state at rv."""
        with self._lock:
            ordered = sorted(self.events, key=lambda e: e[0])
        world: dict[str, dict[str, dict]] = {store.DGD.kind: {}, "Deployment": {}, "Pod": {}}
        for rv, kind, type_, obj in ordered:
            name = obj["metadata"]["name"]
            if type_ == "DELETED":
                world[kind].pop(name, None)
            else:
                world[kind][name] = obj
            yield rv, kind, obj, world


def _lie(dgd_wire: dict, world: dict, expected: dict[str, dict]) -> str | None:
    """Why the world contradicts a successful status (None: it does not)."""
    for comp in store.to_internal(dgd_wire)["spec"]["components"]:
        name = f"g-{comp['name'].lower()}"
        want = int(comp.get("replicas") or 1)
        exp = expected[comp["name"]]
        dep = world["Deployment"].get(name)
        if dep is None:
            return f"{name}: no Deployment"
        s, md = dep.get("status") or {}, dep["metadata"]
        tmeta = dep["spec"]["template"]["metadata"]
        for key, value in exp.items():
            have = (tmeta.get("labels") or {}).get(key, (tmeta.get("annotations") or {}).get(key))
            if have != value:
                return f"{name}: template {key}={have}, status claims {value}"
        if dep["spec"].get("replicas") != want or int(s.get("observedGeneration") or 0) < md["generation"]:
            return (
                f"{name}: spec.replicas {dep['spec'].get('replicas')} (want {want}) or generation unobserved"
            )
        for k in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"):
            if int(s.get(k) or 0) != want:
                return f"{name}: {k}={s.get(k)}, want {want}"
        pods = [
            p
            for p in world["Pod"].values()
            if (p["metadata"].get("labels") or {}).get(names.LABEL_SELECTOR) == name
            and not p["metadata"].get("deletionTimestamp")
        ]
        stale = [
            p["metadata"]["name"]
            for p in pods
            for key, value in exp.items()
            if {**(p["metadata"].get("labels") or {}), **(p["metadata"].get("annotations") or {})}.get(key)
            != value
        ]
        if stale:
            return f"{name}: pods of an old revision still running: {sorted(set(stale))}"
        ready = [
            p
            for p in pods
            if any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in (p.get("status") or {}).get("conditions") or []
            )
        ]
        if len(pods) != want or len(ready) != want:
            return f"{name}: {len(ready)} ready of {len(pods)} pods, want {want}"
    return None


def check_truth(history: History, expected_by_generation: dict[int, dict[str, dict]]) -> int:
    """Fails on the first DGD status that says successful while the world disagrees; returns how many
    successful statuses were judged."""
    judged = 0
    for rv, kind, obj, world in history.replay():
        if kind != store.DGD.kind or rv <= history.start_rv:
            continue
        status = store.to_internal(obj).get("status") or {}
        ready = st.condition(status, st.READY) or {}
        if status.get("state") != st.STATE_SUCCESSFUL and ready.get("status") != "True":
            continue
        gen = status.get("observedGeneration")
        assert gen in expected_by_generation, f"status of unknown generation {gen}: {status}"
        why = _lie(obj, world, expected_by_generation[gen])
        assert why is None, f"status at resourceVersion {rv} says {status.get('state')}: {why}"
        judged += 1
    return judged


def apply_recorded(client, dgd: dict, field_name: str) -> tuple[History, dict]:
    """Apply ``dgd`` (its generation 2) while recording the namespace's history, until the status says
    successful for it with ``status.<field_name>.phase`` Completed."""
    ns = dgd["metadata"]["namespace"]
    history = History(client, ns)
    history.start()
    try:
        apply_dgd(client, dgd)
        s = wait_status(
            client,
            ns,
            lambda s: (
                s.get("observedGeneration") == 2
                and s.get("state") == st.STATE_SUCCESSFUL
                and (s.get(field_name) or {}).get("phase") == "Completed"
            ),
            timeout=WAIT,
        )
    finally:
        history.stop()
    return history, s


def pod_uids(client, ns: str, dcd: str) -> set[str]:
    items = client.list(PODS, ns, label_selector=f"{names.LABEL_SELECTOR}={dcd}").get("items") or []
    return {p["metadata"]["uid"] for p in items}


def event_reasons(client, ns: str) -> list[str]:
    return [e.get("reason") for e in client.list(EVENTS, ns).get("items") or []]


# -- tests ---------------------------------------------------------------------------------------------------


def test_worker_change_rolls_workers_with_truthful_status(client, ns, operator):
    g = graph(ns)
    apply_dgd(client, g)
    wait_successful(client, ns, generation=1, timeout=WAIT)
    h1 = worker_hash(g)
    # a new graph's live revision is its worker DCDs' label; the annotation comes with its first update
    assert ANN_CURRENT_WORKER_HASH not in (
        client.get(store.DGD, "g", ns)["metadata"].get("annotations") or {}
    )
    assert client.get(store.DCD, "g-decode", ns)["metadata"]["labels"][names.LABEL_WORKER_HASH] == h1
    before = {n: pod_uids(client, ns, f"g-{n}") for n in ("frontend", "prefill", "decode")}

    changed = copy.deepcopy(g)
    decode = changed["spec"]["components"][2]["podTemplate"]["spec"]["containers"][0]
    decode["args"] = ["--block-size", "32"]
    h2 = worker_hash(changed)
    assert h2 != h1
    history, s = apply_recorded(client, changed, "rollingUpdate")

    # first: no status written during the rollout lied about the cluster at that moment
    judged = check_truth(
        history,
        {
            1: {
                "Frontend": {},
                "Prefill": {names.LABEL_WORKER_HASH: h1},
                "Decode": {names.LABEL_WORKER_HASH: h1},
            },
            2: {
                "Frontend": {},
                "Prefill": {names.LABEL_WORKER_HASH: h2},
                "Decode": {names.LABEL_WORKER_HASH: h2},
            },
        },
    )
    assert judged >= 1

    # the history: a rolling update was reported while it ran, the frontend served throughout
    phases, frontend_ready = [], []
    for _, kind, obj, world in history.replay():
        if kind == store.DGD.kind:
            status = store.to_internal(obj).get("status") or {}
            phase = (status.get("rollingUpdate") or {}).get("phase")
            phases.append((phase, st.condition(status, st.READY)))
            decode_ns = ((status.get("components") or {}).get("Decode") or {}).get("runtimeNamespace")
            if phase in ("Pending", "InProgress"):  # workers keep reporting the serving revision's namespace
                assert decode_ns == f"{ns}-g-{h1}", status
        fe = world["Deployment"].get("g-frontend")
        if fe is not None:
            frontend_ready.append(int((fe.get("status") or {}).get("readyReplicas") or 0))
    running = [c for p, c in phases if p in ("Pending", "InProgress")]
    assert running and all(c["status"] == "False" and c["reason"] == st.REASON_ROLLING for c in running), (
        phases
    )
    assert frontend_ready and min(frontend_ready) == 1
    ru = s["rollingUpdate"]
    assert s["components"]["Decode"]["runtimeNamespace"] == f"{ns}-g-{h2}"
    assert s["components"]["Frontend"]["runtimeNamespace"] == f"{ns}-g"
    assert ru["updatedComponents"] == ["Decode", "Prefill"] and ru["startTime"] <= ru["endTime"]
    assert client.get(store.DGD, "g", ns)["metadata"]["annotations"][ANN_CURRENT_WORKER_HASH] == h2
    # every worker moved to the new revision (new pods, new namespace suffix); the frontend's pods stayed
    for n in ("prefill", "decode"):
        dep = client.get(DEPLOYMENTS, f"g-{n}", ns)
        assert dep["spec"]["template"]["metadata"]["labels"][names.LABEL_WORKER_HASH] == h2
        env = {e["name"]: e.get("value") for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert env["DYN_NAMESPACE_WORKER_SUFFIX"] == h2
        assert not (pod_uids(client, ns, f"g-{n}") & before[n])
    assert pod_uids(client, ns, "g-frontend") == before["frontend"]

    reasons = event_reasons(client, ns)
    assert "RollingUpdateStarted" in reasons and "RollingUpdateCompleted" in reasons


def test_restart_sequential_then_parallel(client, ns, operator):
    g = graph(ns)
    apply_dgd(client, g)
    wait_successful(client, ns, generation=1, timeout=WAIT)
    h = worker_hash(g)
    comps = ("frontend", "prefill", "decode")
    before = {n: pod_uids(client, ns, f"g-{n}") for n in comps}

    g["spec"]["restart"] = {"id": "r1"}  # Sequential, in name order: Decode, Frontend, Prefill
    history, s = apply_recorded(client, g, "restart")
    assert s["restart"] == {"observedID": "r1", "phase": "Completed"}
    for n in comps:
        dep = client.get(DEPLOYMENTS, f"g-{n}", ns)
        assert dep["spec"]["template"]["metadata"]["annotations"][ANN_RESTART_AT] == "r1"
        assert not (pod_uids(client, ns, f"g-{n}") & before[n]), f"{n} was not restarted"

    # reported one at a time, in order; a component's pods restart only once the previous one is ready
    progress = []
    first_restart_rv: dict[str, int] = {}
    for rv, kind, obj, _world in history.replay():
        if kind == store.DGD.kind:
            r = (store.to_internal(obj).get("status") or {}).get("restart") or {}
            if r.get("phase") == "Restarting" and (not progress or progress[-1] != r["inProgress"]):
                progress.append(r["inProgress"])
        elif kind == "Deployment":
            ann = obj["spec"]["template"]["metadata"].get("annotations") or {}
            if ann.get(ANN_RESTART_AT) == "r1":
                first_restart_rv.setdefault(obj["metadata"]["name"], rv)
    assert progress == [["Decode"], ["Frontend"], ["Prefill"]], progress
    assert first_restart_rv["g-decode"] < first_restart_rv["g-frontend"] < first_restart_rv["g-prefill"]
    restarted = {names.LABEL_WORKER_HASH: h, ANN_RESTART_AT: "r1"}
    judged = check_truth(
        history,
        {
            1: {
                "Frontend": {},
                "Prefill": {names.LABEL_WORKER_HASH: h},
                "Decode": {names.LABEL_WORKER_HASH: h},
            },
            2: {"Frontend": {ANN_RESTART_AT: "r1"}, "Prefill": restarted, "Decode": restarted},
        },
    )
    assert judged >= 1
    reasons = event_reasons(client, ns)
    assert "RestartStarted" in reasons and "RestartCompleted" in reasons

    # a completed restart stays done: nothing rolls again on later reconciles
    settled = {n: pod_uids(client, ns, f"g-{n}") for n in comps}
    operator.enqueue("DynamoGraphDeployment", ns, "g")
    assert operator.idle(ns, quiet=2.0, timeout=30)
    assert {n: pod_uids(client, ns, f"g-{n}") for n in comps} == settled

    # parallel: every component restarts at once
    g["spec"]["restart"] = {"id": "r2", "strategy": {"type": "Parallel"}}
    apply_dgd(client, g)
    s = wait_status(
        client,
        ns,
        lambda s: s.get("observedGeneration") == 3 and (s.get("restart") or {}).get("phase") == "Completed",
        timeout=WAIT,
    )
    assert s["state"] == st.STATE_SUCCESSFUL
    for n in comps:
        assert (
            client.get(DEPLOYMENTS, f"g-{n}", ns)["spec"]["template"]["metadata"]["annotations"][
                ANN_RESTART_AT
            ]
            == "r2"
        )
        assert not (pod_uids(client, ns, f"g-{n}") & settled[n])
    assert dgd_status(client, ns)["restart"]["observedID"] == "r2"
