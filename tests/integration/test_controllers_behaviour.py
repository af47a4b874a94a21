"""DGD and DCD controller behaviours on the real control plane ("cluster" profile: garbage collector,
scheduler, kwok nodes; the CRDs with conversion served by the session's ``dynamo_crds``).

One in-process operator (``support.dgd.Operator``: a Manager with ``controllers.setup``) serves the whole
module; each test works in its own namespace.  Its two test seams (a ``FaultClient`` that records every
write and fails chosen calls on request; every reconcile's result or exception recorded, and a controller's
reconciles of one namespace held on request) sit on top of the real client and controllers, never in place
of the apiserver.

The behaviours ``test_controllers_cluster.py`` already covers (owner references of every child, documented
defaults, zero writes after a restart, scaling, removed components, deletion) are not repeated here.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid

import pytest
from dynamo_operator.controllers import DCD_CONTROLLER, DGD_CONTROLLER, store
from dynamo_operator.controllers import status as st
from dynamo_operator.controllers.common import Deps
from dynamo_operator.controllers.dgd import DGDReconciler
from dynamo_operator.controllers.notices import REASON as NOTICE
from dynamo_operator.controllers.sync import RecentWrites
from dynamo_operator.controllers.wiring import PULL_SECRET_SELECTOR
from dynamo_operator.render import names, notices, pullsecrets
from dynamo_operator.render.hashing import worker_hash
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    DEPLOYMENTS,
    EVENTS,
    NAMESPACES,
    SECRETS,
    SERVICEACCOUNTS,
    SERVICES,
    ResourceDescriptor,
)
from dynamo_operator.runtime.controller import Request, Result
from dynamo_operator.runtime.events import EventRecorder
from dynamo_operator.runtime.informer import Indexer
from dynamo_operator.tunables import ControllerTunables
from kubernetes.client.exceptions import ApiException
from support.dgd import (
    WAIT,
    apply_dgd,
    dgd_status,
    get,
    ready,
    wait_status,
    wait_successful,
)
from support.graphs import VLLM, component, dgd
from support.operator import FaultClient, Operator
from support.poll import stays, wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "beh"  # the ``ns`` fixture's namespaces
NODES = ResourceDescriptor("", "v1", "nodes", "Node", namespaced=False)
HOLD_FINALIZER = "test.dynamo.nvidia.com/hold"
# The module's operator paces progress-only statuses at 15 s instead of the shipped 30 s: the pacing is what
# these tests watch, and the first waits one interval for it; 15 s still leaves the second test's checks of
# what is held back (10 s and 8 s of slack) room on a loaded machine.
PROGRESS_SECONDS = 15.0


# -- fixtures ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def operator(kube_cluster, crds):
    pacing = ControllerTunables(status_progress_seconds=PROGRESS_SECONDS)
    op = Operator(kube_cluster, controller_tunables=pacing)
    op.start()
    yield op
    op.stop()


# -- helpers -------------------------------------------------------------------------------------------------


def full_components(decode_replicas: int = 2) -> list[dict]:
    return [
        component("Frontend", "frontend"),
        component("Planner", "planner"),
        component("VllmPrefillWorker", "prefill", command=VLLM, gpus=1),
        component("VllmDecodeWorker", "decode", replicas=decode_replicas, command=VLLM, gpus=1),
    ]


def graph(ns: str, components: list[dict] | None = None, name: str = "g") -> dict:
    """A graph of ``components`` (a lone Frontend by default)."""
    return dgd(*(components or [component("Frontend", "frontend")]), name=name, namespace=ns)


def edit(client, res, name, ns, fn) -> dict:
    """A hand edit (kubectl edit): read, change, replace; retried on a 409."""
    for _ in range(10):
        obj = client.get(res, name, ns)
        fn(obj)
        try:
            return client.replace(res, obj)
        except ApiException as e:
            if e.status != 409:
                raise
    raise AssertionError(f"could not edit {res.kind} {ns}/{name}")


def events(client, ns) -> list[dict]:
    return client.list(EVENTS, ns).get("items") or []


def warnings(client, ns) -> list[dict]:
    """The operator's Warning events (about DGDs and DCDs; other controllers have their own)."""
    return [
        e
        for e in events(client, ns)
        if e.get("type") == "Warning"
        and (e.get("involvedObject") or {}).get("kind") in (names.DGD_KIND, names.DCD_KIND)
    ]


def wait_event(client, ns, reason: str, fragment: str = "", timeout: float = 20) -> dict:
    def find():
        return next(
            (e for e in events(client, ns) if e.get("reason") == reason and fragment in e.get("message", "")),
            None,
        )

    wait_for(
        lambda: find() is not None,
        timeout,
        lambda: [(e.get("reason"), e.get("message")) for e in events(client, ns)],
        interval=0.3,
    )
    return find()


def status_writes(op: Operator, ns: str, res: ResourceDescriptor, name: str) -> list[dict]:
    """The statuses the operator wrote for one object, in order (internal shape)."""
    suffix = f"/namespaces/{ns}/{res.plural}/{name}/status"
    return [
        store.to_internal(body).get("status") or {}
        for method, path, body in op.client.writes_in(ns)
        if method == "PUT" and path.endswith(suffix)
    ]


# -- tests ---------------------------------------------------------------------------------------------------


def test_status_goes_initializing_pending_successful_with_counts(client, ns, operator):
    # Pods of this graph only fit on nodes carrying a per-test label: they stay Pending until it is set.
    hold = {f"test.dynamo.nvidia.com/{ns}": "go"}
    comps = full_components()
    for c in comps:
        c["podTemplate"]["spec"]["nodeSelector"] = hold
    nodes = [n["metadata"]["name"] for n in client.list(NODES).get("items") or []]
    assert nodes
    try:
        # the DCD controller waits: the graph's components exist as DCDs only, without Deployments
        operator.held.add((DCD_CONTROLLER, ns))
        apply_dgd(client, graph(ns, comps))
        s = wait_status(client, ns, lambda s: s.get("state") == st.STATE_INITIALIZING)
        assert ready(s)["reason"] == st.REASON_NOT_CREATED and s["observedGeneration"] == 1
        operator.held.discard((DCD_CONTROLLER, ns))

        # Deployments rolled out, pods unschedulable: pending, every component named with its counts
        def pods_not_ready(s):
            return s.get("state") == st.STATE_PENDING and ready(s).get("reason") == st.REASON_PODS_NOT_READY

        # the graph names the counts once each DCD wrote its first status: the DCDs' "not ready yet" is held
        # back one PROGRESS_SECONDS, then the graph's own progress up to one more (measured: two intervals)
        s = wait_status(client, ns, pods_not_ready, timeout=2 * PROGRESS_SECONDS + WAIT)
        message = ready(s)["message"]
        assert message.startswith("0/4 components ready; not ready: Frontend: 0/1 replicas ready"), message
        assert "VllmDecodeWorker: 0/2 replicas ready" in message

        for node in nodes:
            client.patch(NODES, node, {"metadata": {"labels": hold}})
        s = wait_successful(client, ns, generation=1)
        r = ready(s)
        assert (r["status"], r["reason"]) == ("True", st.REASON_ALL_READY)
        assert s["components"]["VllmDecodeWorker"] == {
            "componentKind": "Deployment",
            "componentNames": ["g-vllmdecodeworker"],
            # workers register under their revision's suffix (DYN_NAMESPACE_WORKER_SUFFIX)
            "runtimeNamespace": f"{ns}-g-{worker_hash(graph(ns, comps))}",
            "replicas": 2,
            "updatedReplicas": 2,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "scheduledReplicas": 2,  # the component's scheduled pods (kwok binds them)
        }
        dcd = store.to_internal(client.get(store.DCD, "g-frontend", ns))
        avail = st.condition(dcd["status"], st.AVAILABLE)
        assert (avail["status"], avail["reason"]) == ("True", "DeploymentReady")
        assert dcd["status"]["podSelector"] == {names.LABEL_SELECTOR: "g-frontend"}

        # scaling: the first status of generation 2 waits for the component controller, then successful
        comps3 = full_components(decode_replicas=3)
        for c in comps3:
            c["podTemplate"]["spec"]["nodeSelector"] = hold
        apply_dgd(client, graph(ns, comps3))
        s = wait_successful(client, ns, generation=2)
        assert s["components"]["VllmDecodeWorker"]["readyReplicas"] == 3
        gen2 = [w for w in status_writes(operator, ns, store.DGD, "g") if w.get("observedGeneration") == 2]
        assert gen2[0]["state"] == st.STATE_PENDING and "VllmDecodeWorker" in ready(gen2[0])["message"]
        states = [w["state"] for w in status_writes(operator, ns, store.DGD, "g")]
        assert states[0] == st.STATE_INITIALIZING and st.STATE_FAILED not in states
    finally:
        operator.held.discard((DCD_CONTROLLER, ns))
        for node in nodes:
            with contextlib.suppress(ApiException):
                client.patch(NODES, node, {"metadata": {"labels": dict.fromkeys(hold)}})


def test_a_graphs_component_holds_its_progress_back_and_reports_readiness_at_once(client, ns, operator):
    """A graph-owned DCD's "not ready yet" is progress (its graph already reports the replica counts): it is
    written at most once per ``PROGRESS_SECONDS``; readiness is written as soon as it happens. The graph's
    own first status is news: written at once."""
    hold = {f"test.dynamo.nvidia.com/{ns}": "go"}
    comp = component("Frontend", "frontend")
    comp["podTemplate"]["spec"]["nodeSelector"] = hold
    nodes = [n["metadata"]["name"] for n in client.list(NODES).get("items") or []]
    started = time.monotonic()
    try:
        apply_dgd(client, graph(ns, [comp]))
        # its Deployment exists and its pod cannot be scheduled: the DCD's first pass is long done
        wait_for(
            lambda: get(client, DEPLOYMENTS, "g-frontend", ns) is not None,
            WAIT,
            interval=0.2,
        )
        wait_status(client, ns, lambda s: s.get("observedGeneration") == 1)
        if time.monotonic() - started < PROGRESS_SECONDS - 7:
            stays(lambda: status_writes(operator, ns, store.DCD, "g-frontend") == [], 2, "no progress write")
        for node in nodes:
            client.patch(NODES, node, {"metadata": {"labels": hold}})
        wait_successful(client, ns, generation=1)
        writes = status_writes(operator, ns, store.DCD, "g-frontend")
        assert st.condition(writes[-1], st.AVAILABLE)["status"] == "True"
        if time.monotonic() - started < PROGRESS_SECONDS - 5:
            # no "not ready yet" was written: the first write is the readiness, and so is every one after it
            # (a ready component's counts may still move in writes of their own: the pod cache can trail the
            # Deployment's, so its scheduledReplicas can come a moment later; seen in a loaded run)
            not_ready = [w for w in writes if st.condition(w, st.AVAILABLE)["status"] != "True"]
            assert not not_ready, writes
        states = [w["state"] for w in status_writes(operator, ns, store.DGD, "g")]
        assert states[-1] == st.STATE_SUCCESSFUL and len(states) >= 2, states
    finally:
        for node in nodes:
            with contextlib.suppress(ApiException):
                client.patch(NODES, node, {"metadata": {"labels": dict.fromkeys(hold)}})


def test_children_a_dcd_no_longer_renders_are_deleted(client, ns, operator):
    # An EPP DCD of its own (a graph with an epp component needs the InferencePool API, not served here)
    epp = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": names.DCD_KIND,
        "metadata": {"name": "epp", "namespace": ns},
        "spec": component("Epp", "epp", eppConfig={"config": {"plugins": []}}),
    }
    client.create(store.DCD, store.to_wire(epp), ns)
    apply_dgd(client, graph(ns, [component("Frontend", "frontend"), component("Planner", "planner")]))
    managed = f"{names.LABEL_MANAGED_BY}={names.MANAGED_BY}"

    def config_maps():
        return [c["metadata"]["name"] for c in client.list(CONFIGMAPS, ns, label_selector=managed)["items"]]

    wait_for(lambda: get(client, SERVICEACCOUNTS, names.EPP_SERVICE_ACCOUNT, ns) is not None, 30)
    wait_for(lambda: len(config_maps()) == 1, 30)
    wait_for(lambda: get(client, store.DCD, "g-planner", ns) is not None, 30)
    (cm,) = config_maps()
    # the Epp component becomes a frontend (no config map, no epp account) and the Planner goes away
    edit(client, store.DCD, "epp", ns, lambda o: o["spec"].update(componentType="frontend"))
    apply_dgd(client, graph(ns, [component("Frontend", "frontend")]))
    wait_for(
        lambda: (
            get(client, CONFIGMAPS, cm, ns) is None
            and get(client, SERVICEACCOUNTS, names.EPP_SERVICE_ACCOUNT, ns) is None
            and get(client, store.DCD, "g-planner", ns) is None
        ),
        30,
    )
    deletes = {"/".join(p.split("/")[-2:]) for m, p, _ in operator.client.writes_in(ns) if m == "DELETE"}
    assert {
        f"configmaps/{cm}",
        f"serviceaccounts/{names.EPP_SERVICE_ACCOUNT}",
        "dynamocomponentdeployments/g-planner",
    } <= deletes
    wait_event(client, ns, "DeleteConfigMap", cm)
    wait_event(client, ns, "DeleteDynamoComponentDeployment", "g-planner")


def test_hand_edits_are_put_back(client, ns, operator):
    apply_dgd(client, graph(ns))
    wait_successful(client, ns, generation=1)
    want = client.get(DEPLOYMENTS, "g-frontend", ns)["spec"]["template"]["spec"]["containers"][0]["image"]

    def change_image(o):
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "example.com/evil:1"

    edit(client, DEPLOYMENTS, "g-frontend", ns, change_image)
    wait_for(
        lambda: (
            client.get(DEPLOYMENTS, "g-frontend", ns)["spec"]["template"]["spec"]["containers"][0]["image"]
            == want
        ),
        30,
    )
    wait_event(client, ns, "UpdateDeployment", "drift: spec.template")

    # a Service that lost our label gets it back; the fields the apiserver allocated stay
    cluster_ip = client.get(SERVICES, "g-frontend", ns)["spec"]["clusterIP"]
    edit(client, SERVICES, "g-frontend", ns, lambda o: o["metadata"]["labels"].pop(names.LABEL_COMPONENT))
    wait_for(
        lambda: (
            (client.get(SERVICES, "g-frontend", ns)["metadata"].get("labels") or {}).get(
                names.LABEL_COMPONENT
            )
            == "Frontend"
        ),
        30,
    )
    assert client.get(SERVICES, "g-frontend", ns)["spec"]["clusterIP"] == cluster_ip

    # replicas added to the DCD by hand (invisible to desired ⊆ live; the generation gives it away)
    def scale_dcd(o):
        internal = store.to_internal(o)
        internal["spec"]["replicas"] = 5
        wire = store.to_wire(internal)
        o["spec"] = wire["spec"]

    edit(client, store.DCD, "g-frontend", ns, scale_dcd)
    wait_for(lambda: "replicas" not in store.to_internal(client.get(store.DCD, "g-frontend", ns))["spec"], 30)
    wait_for(
        lambda: client.get(DEPLOYMENTS, "g-frontend", ns)["spec"]["replicas"] == 1,
        30,
    )


def test_edited_hash_annotation_is_rewritten(client, ns, operator):
    apply_dgd(client, graph(ns))
    wait_successful(client, ns, generation=1)
    want = client.get(DEPLOYMENTS, "g-frontend", ns)["metadata"]["annotations"][names.ANN_SPEC_HASH]
    edit(
        client,
        DEPLOYMENTS,
        "g-frontend",
        ns,
        lambda o: o["metadata"]["annotations"].update({names.ANN_SPEC_HASH: "x"}),
    )
    wait_for(
        lambda: (
            client.get(DEPLOYMENTS, "g-frontend", ns)["metadata"]["annotations"][names.ANN_SPEC_HASH] == want
        ),
        30,
    )


def test_conflicts_requeue_without_error_events(client, ns, operator):
    apply_dgd(client, graph(ns))
    wait_successful(client, ns, generation=1)
    assert operator.idle(ns)
    since = operator.mark()
    fault = operator.client.inject("PUT", f"/namespaces/{ns}/deployments/g-frontend", 409, "Conflict")
    edit(client, DEPLOYMENTS, "g-frontend", ns, lambda o: o["spec"].update(replicas=7))

    def requeued():
        return any(
            o.result == Result(requeue=True)
            for o in operator.outcomes_for(DCD_CONTROLLER, ns, "g-frontend", since)
        )

    wait_for(requeued, 30)
    assert fault.hits == 1
    wait_for(
        lambda: client.get(DEPLOYMENTS, "g-frontend", ns)["spec"]["replicas"] == 1,
        30,
    )
    wait_event(client, ns, "UpdateDeployment", "drift")
    assert warnings(client, ns) == []


def test_api_failures_mark_the_graph_failed_and_raise(client, ns, operator):
    fault = operator.client.inject(
        "POST", f"/namespaces/{ns}/dynamocomponentdeployments", 500, "InternalError", times=None
    )
    try:
        apply_dgd(client, graph(ns))
        s = wait_status(client, ns, lambda s: s.get("state") == st.STATE_FAILED)
        assert ready(s)["reason"] == st.REASON_FAILED and "500" in ready(s)["message"]
        assert "observedGeneration" not in s  # this generation was not applied
        wait_event(client, ns, "ReconcileError")

        def raised():
            return [o.error for o in operator.outcomes_for(DGD_CONTROLLER, ns, "g") if o.error is not None]

        wait_for(raised, 10)  # recorded when the reconcile returns, just after its event
        assert isinstance(raised()[0], ApiException) and raised()[0].status == 500
    finally:
        operator.client.clear(fault)
    wait_successful(client, ns, generation=1)


def test_invalid_graph_fails_once_with_the_field_named(client, ns, operator):
    comps = [component("Frontend", "frontend"), component("frontend", "planner")]  # duplicate, any case
    apply_dgd(client, graph(ns, comps))
    s = wait_status(client, ns, lambda s: s.get("state") == st.STATE_FAILED)
    r = ready(s)
    assert r["reason"] == st.REASON_INVALID_SPEC and "spec.components[1].name" in r["message"]
    assert s["observedGeneration"] == 1
    wait_event(client, ns, "InvalidSpec", "spec.components[1].name")
    assert operator.idle(ns)
    writes = len(operator.client.writes_in(ns, events=True))
    since = operator.mark()
    operator.enqueue(DGD_CONTROLLER, ns, "g")  # another reconcile of the same generation
    wait_for(
        lambda: operator.outcomes_for(DGD_CONTROLLER, ns, "g", since),
        10,
    )
    assert operator.idle(ns)
    assert operator.client.writes_in(ns, events=True)[writes:] == []
    (warning,) = warnings(client, ns)
    assert warning["reason"] == "InvalidSpec" and warning.get("count", 1) == 1


def test_foreign_controller_is_an_ownership_conflict(client, ns, operator):
    # A live owner (the garbage collector would remove a DCD whose owner does not exist).
    other = client.create(CONFIGMAPS, {"metadata": {"name": "x", "namespace": ns}})
    foreign = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "x",
        "uid": other["metadata"]["uid"],
        "controller": True,
    }
    frontend = component("Frontend", "frontend")
    dcd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": names.DCD_KIND,
        "metadata": {"name": "g-frontend", "namespace": ns, "ownerReferences": [foreign]},
        "spec": {"name": "Frontend", "type": "frontend", "podTemplate": frontend["podTemplate"]},
    }
    client.create(store.DCD, store.to_wire(dcd))
    since = operator.mark()
    apply_dgd(client, graph(ns))
    s = wait_status(client, ns, lambda s: s.get("state") == st.STATE_FAILED)
    assert ready(s)["reason"] == st.REASON_OWNERSHIP
    # the status is written inside the reconcile, so its outcome is recorded a moment later
    wait_for(
        lambda: any(
            o.result is not None and o.result.requeue_after
            for o in operator.outcomes_for(DGD_CONTROLLER, ns, "g", since)
        ),
        10,
    )
    refs = client.get(store.DCD, "g-frontend", ns)["metadata"]["ownerReferences"]
    assert [r["uid"] for r in refs] == [other["metadata"]["uid"]]
    wait_event(client, ns, "OwnershipConflict")


def _registry_secret(client, ns: str) -> None:
    import base64

    cfg = base64.b64encode(json.dumps({"auths": {"nvcr.io": {"auth": "eA=="}}}).encode()).decode()
    client.create(
        SECRETS,
        {
            "metadata": {"name": "ngc", "namespace": ns},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": cfg},
        },
    )


def _pull_secrets(client, ns: str):
    dep = get(client, DEPLOYMENTS, "g-frontend", ns)
    return dep and dep["spec"]["template"]["spec"].get("imagePullSecrets", [])


def _pull_secret_caches(op: Operator) -> list:
    """The operator's caches of dockerconfigjson Secrets (its MPI key cache is another: by name)."""
    return [inf for (_res, _ns, _sel, fsel), inf in op.mgr._informers.items() if fsel == PULL_SECRET_SELECTOR]


def test_pull_secrets_are_discovered_from_the_namespace_and_no_credential_is_cached(client, ns, operator):
    _registry_secret(client, ns)
    apply_dgd(client, graph(ns))
    wait_for(lambda: _pull_secrets(client, ns) == [{"name": "ngc"}], 30, lambda: _pull_secrets(client, ns))
    (cache,) = _pull_secret_caches(operator)
    (cached,) = cache.store.list(ns)
    assert "data" not in cached and cached[pullsecrets.HOSTS] == ["nvcr.io"]  # the registry, no credential


def test_pull_secret_discovery_off_reads_no_secret(client, kube_cluster, crds, ns, operator):
    _registry_secret(client, ns)
    off = {"security": {"workloads": {"imagePullSecretDiscovery": False}}}
    # the module's operator (discovery on) holds its reconciles of this namespace while this one answers
    held = {(name, ns) for name in operator.controllers}
    operator.held |= held
    try:
        with Operator(kube_cluster, config=off) as op:
            apply_dgd(client, graph(ns))
            wait_for(lambda: get(client, DEPLOYMENTS, "g-frontend", ns) is not None, 30)
            # no cache of pull Secrets: nothing lists or watches them (the chart then grants no such list)
            assert _pull_secrets(client, ns) == [] and _pull_secret_caches(op) == []
    finally:
        operator.held -= held


class _Recorder(EventRecorder):
    def __init__(self, client):
        super().__init__(client, "test", sync=True)
        self.seen: list[tuple[str, str, str]] = []

    def event(self, obj, type_, reason, message):
        self.seen.append((type_, reason, message))
        with contextlib.suppress(Exception):
            super().event(obj, type_, reason, message)


def test_a_terminating_namespace_is_not_an_error(client, kube_cluster, crds):
    """A DGD still in the cache while its namespace is being deleted: the apiserver refuses new content
    (403 NamespaceTerminating) and the reconcile ends quietly."""
    ns = f"beh-term-{uuid.uuid4().hex[:6]}"
    client.create(NAMESPACES, {"metadata": {"name": ns}})
    # a finalizer keeps the namespace in Terminating while the test runs
    client.create(CONFIGMAPS, {"metadata": {"name": "hold", "namespace": ns, "finalizers": [HOLD_FINALIZER]}})
    try:
        client.delete(NAMESPACES, ns)
        wait_for(
            lambda: client.get(NAMESPACES, ns).get("status", {}).get("phase") == "Terminating",
            10,
        )

        def refuses_new_content() -> bool:  # the admission plugin's namespace cache may lag a moment
            probe = {"metadata": {"name": f"probe-{uuid.uuid4().hex[:6]}", "namespace": ns}}
            try:
                client.create(CONFIGMAPS, probe)
            except ApiException as e:
                return e.status == 403
            return False

        wait_for(refuses_new_content, 10)
        real = FaultClient(kube_cluster.api_client())  # no faults: every answer is the apiserver's
        cached = store.to_wire(graph(ns))
        cached["metadata"].update(uid=str(uuid.uuid4()), resourceVersion="1", generation=1)
        dgds = Indexer()
        dgds.upsert(cached)
        recorder = _Recorder(real)
        deps = Deps(
            client=real,
            recorder=recorder,
            stores={store.DGD: dgds, store.DCD: Indexer(), DEPLOYMENTS: Indexer()},
            recent=RecentWrites(),
        )
        assert DGDReconciler(deps)(Request(ns, "g")) == Result()
        # the pass's first write (the graph's discovery account) is refused, and the pass ends there
        assert [(m, p.rsplit("/", 1)[-1]) for m, p, _ in real.writes_in(ns)] == [("POST", "serviceaccounts")]
        assert get(client, store.DCD, "g-frontend", ns) is None
        assert not [e for e in recorder.seen if e[0] == "Warning"]
    finally:
        with contextlib.suppress(ApiException):
            edit(client, CONFIGMAPS, "hold", ns, lambda o: o["metadata"].update(finalizers=[]))


def test_recreated_graph_waits_for_the_garbage_collector(client, ns, operator):
    apply_dgd(client, graph(ns))
    wait_successful(client, ns, generation=1)
    old_uid = client.get(store.DGD, "g", ns)["metadata"]["uid"]
    # the garbage collector cannot finish with the old DCD until this finalizer goes
    edit(client, store.DCD, "g-frontend", ns, lambda o: o["metadata"].update(finalizers=[HOLD_FINALIZER]))
    try:
        client.delete(store.DGD, "g", ns)
        wait_for(
            lambda: client.get(store.DCD, "g-frontend", ns)["metadata"].get("deletionTimestamp"),
            30,
        )
        since = operator.mark()
        apply_dgd(client, graph(ns))

        def waiting():
            return any(
                o.result == Result(requeue_after=2)
                for o in operator.outcomes_for(DGD_CONTROLLER, ns, "g", since)
            )

        wait_for(waiting, 30)
        assert dgd_status(client, ns).get("state") != st.STATE_FAILED
        assert client.get(store.DCD, "g-frontend", ns)["metadata"]["ownerReferences"][0]["uid"] == old_uid
    finally:
        edit(client, store.DCD, "g-frontend", ns, lambda o: o["metadata"].update(finalizers=[]))
    wait_successful(client, ns, generation=1)
    new_uid = client.get(store.DGD, "g", ns)["metadata"]["uid"]
    assert client.get(store.DCD, "g-frontend", ns)["metadata"]["ownerReferences"][0]["uid"] == new_uid
    assert warnings(client, ns) == []


def test_shared_service_account_is_referenced_by_every_user(client, ns, operator):
    # last in the module: the garbage collector picks up new CRDs (the DCD owner kind) on its periodic
    # discovery, so right after the session installs them, removing a dangling reference takes longer
    planner_only = [component("Planner", "planner")]
    apply_dgd(client, graph(ns, planner_only, name="a"))
    apply_dgd(client, graph(ns, planner_only, name="b"))

    def refs():
        sa = get(client, SERVICEACCOUNTS, names.PLANNER_SERVICE_ACCOUNT, ns)
        return (sa or {}).get("metadata", {}).get("ownerReferences") or []

    wait_for(lambda: sorted(r["name"] for r in refs()) == ["a-planner", "b-planner"], 30, lambda: refs())
    assert not any(r.get("controller") for r in refs())
    client.delete(store.DGD, "a", ns)  # the garbage collector takes a's DCD, then a's reference
    wait_for(lambda: [r["name"] for r in refs()] == ["b-planner"], 60, lambda: refs())


def test_a_field_with_no_effect_is_an_event_once_per_generation(client, ns, operator):
    """A worker's eppConfig has no effect (``render/notices.py``): the graph gets one Warning Event with the
    text admission and ``render`` give, not one per pass; an edit (a new generation) records it again, as
    ``kubectl apply`` warns again; the graph's DCDs, which carry its components, record none."""
    comps = [component("Frontend", "frontend"), component("Worker", command=VLLM, gpus=1, eppConfig={})]
    apply_dgd(client, graph(ns, comps))
    (text,) = notices.warnings(graph(ns, comps))
    wait_event(client, ns, NOTICE, text)
    wait_successful(client, ns, generation=1)
    assert operator.idle(ns)
    since = operator.mark()
    operator.enqueue(DGD_CONTROLLER, ns, "g")  # another reconcile of the same generation
    wait_for(lambda: operator.outcomes_for(DGD_CONTROLLER, ns, "g", since), 10)
    assert operator.idle(ns)
    noticed = [e for e in events(client, ns) if e.get("reason") == NOTICE]
    assert [(e["involvedObject"]["kind"], e["message"], e.get("count", 1)) for e in noticed] == [
        (names.DGD_KIND, text, 1)
    ]
    comps[1]["replicas"] = 2
    apply_dgd(client, graph(ns, comps))
    wait_for(
        lambda: [e.get("count", 1) for e in events(client, ns) if e.get("reason") == NOTICE] == [2],
        20,
        lambda: [(e.get("reason"), e.get("count")) for e in events(client, ns)],
    )
