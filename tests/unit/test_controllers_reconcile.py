"""The DGD and DCD reconcilers against an in-memory apiserver that behaves like the real one where it
matters: uids, resourceVersions (409 on a stale write), generations that move only on spec changes,
defaulting (so "desired ⊆ live" is exercised), status subresources, delete preconditions and a naive garbage
collector.  Informer caches are simulated by stores updated synchronously on every write."""

from __future__ import annotations

import copy
import itertools
import json
import uuid

import pytest
import yaml
from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from dynamo_operator.controllers.common import Deps
from dynamo_operator.controllers.dcd import DCDReconciler
from dynamo_operator.controllers.dgd import DGDReconciler
from dynamo_operator.controllers.sync import RecentWrites
from dynamo_operator.render import names
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    DEPLOYMENTS,
    ROLEBINDINGS,
    SECRETS,
    SERVICEACCOUNTS,
    SERVICES,
)
from dynamo_operator.runtime.controller import Request, Result
from dynamo_operator.runtime.events import EventRecorder
from dynamo_operator.runtime.informer import Indexer
from kubernetes.client.exceptions import ApiException

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"
NS = "llm"
GENERATION_KINDS = {"Deployment", names.DGD_KIND, names.DCD_KIND}
STATUS_KINDS = GENERATION_KINDS
MANAGED = (names.LABEL_MANAGED_BY, names.MANAGED_BY)


def _err(code: int, reason: str) -> ApiException:
    e = ApiException(status=code, reason=reason)
    e.body = json.dumps({"kind": "Status", "reason": reason, "code": code})
    return e


def _content(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _default(obj: dict) -> None:
    """A little of the apiserver's defaulting and omitempty."""
    if obj["kind"] == "Deployment":
        spec = obj["spec"]
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        pod = spec["template"]["spec"]
        pod.setdefault("dnsPolicy", "ClusterFirst")
        for c in pod.get("containers") or []:
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("imagePullPolicy", "IfNotPresent")
            for e in c.get("env") or []:
                if e.get("value") == "":
                    del e["value"]
            for p in c.get("ports") or []:
                p.setdefault("protocol", "TCP")
    if obj["kind"] == "Service":
        spec = obj["spec"]
        spec.setdefault("clusterIP", f"10.0.0.{hash(obj['metadata']['name']) % 250}")
        spec.setdefault("sessionAffinity", "None")
        spec.setdefault("type", "ClusterIP")


class FakeAPI:
    def __init__(self):
        self.objs: dict[tuple, dict] = {}
        self.rv = itertools.count(100)
        self.writes: list[tuple[str, str, str]] = []  # (verb, kind, name) by the operator
        self.stores: dict = {}  # descriptor -> (Indexer, label filter)
        self.fail_next: list[ApiException] = []

    # -- simulated informers --------------------------------------------------------------------------------
    def store(self, res, selector=None) -> Indexer:
        idx = Indexer()
        self.stores[res] = (idx, selector)
        for (plural, _ns, _n), o in self.objs.items():
            if plural == res.plural:
                self._feed(res, o)
        return idx

    def _feed(self, res, obj, deleted=False):
        entry = self.stores.get(res)
        if entry is None:
            return
        idx, sel = entry
        visible = not deleted and (sel is None or (obj["metadata"].get("labels") or {}).get(sel[0]) == sel[1])
        if visible:
            idx.upsert(copy.deepcopy(obj))
        else:
            idx.delete(obj)

    # -- ResourceClient surface -----------------------------------------------------------------------------
    def _k(self, res, ns, name):
        return (res.plural, ns, name)

    def _maybe_fail(self):
        if self.fail_next:
            raise self.fail_next.pop(0)

    def get(self, res, name, namespace=None):
        o = self.objs.get(self._k(res, namespace, name))
        if o is None:
            raise _err(404, "NotFound")
        return copy.deepcopy(o)

    def create(self, res, body, namespace=None, _external=False):
        self._maybe_fail()
        body = copy.deepcopy(body)
        md = body["metadata"]
        ns = namespace or md.get("namespace")
        k = self._k(res, ns, md["name"])
        if k in self.objs:
            raise _err(409, "AlreadyExists")
        body.setdefault("apiVersion", res.api_version)
        body.setdefault("kind", res.kind)
        md.update(namespace=ns, uid=str(uuid.uuid4()), resourceVersion=str(next(self.rv)))
        if body["kind"] in GENERATION_KINDS:
            md["generation"] = 1
        body.pop("status", None)
        _default(body)
        self.objs[k] = body
        if not _external:
            self.writes.append(("create", body["kind"], md["name"]))
        self._feed(res, body)
        return copy.deepcopy(body)

    def replace(self, res, body, subresource=None, _external=False):
        self._maybe_fail()
        body = copy.deepcopy(body)
        md = body["metadata"]
        k = self._k(res, md.get("namespace"), md["name"])
        cur = self.objs.get(k)
        if cur is None:
            raise _err(404, "NotFound")
        if md.get("resourceVersion") != cur["metadata"]["resourceVersion"]:
            raise _err(409, "Conflict")
        if subresource == "status":
            new = copy.deepcopy(cur)
            new["status"] = body.get("status")
        else:
            new = body
            for f in ("uid", "generation", "creationTimestamp"):
                if f in cur["metadata"]:
                    md[f] = cur["metadata"][f]
            if cur["kind"] in STATUS_KINDS:
                new["status"] = copy.deepcopy(cur.get("status"))
            _default(new)
            if cur["kind"] in GENERATION_KINDS and _content(new) != _content(cur):
                md["generation"] = cur["metadata"]["generation"] + 1
        new["metadata"]["resourceVersion"] = str(next(self.rv))
        self.objs[k] = new
        if not _external:
            verb = "status" if subresource else "update"
            self.writes.append((verb, new["kind"], md["name"]))
        self._feed(res, new)
        return copy.deepcopy(new)

    def delete(
        self, res, name, namespace=None, propagation=None, preconditions=None, _external=False, _gc=True
    ):
        self._maybe_fail()
        k = self._k(res, namespace, name)
        cur = self.objs.get(k)
        if cur is None:
            raise _err(404, "NotFound")
        if preconditions and preconditions.get("uid") not in (None, cur["metadata"]["uid"]):
            raise _err(409, "Conflict")
        del self.objs[k]
        if not _external:
            self.writes.append(("delete", cur["kind"], name))
        self._feed(res, cur, deleted=True)
        if _gc:
            self._collect_garbage(cur["metadata"]["uid"])
        return None

    def patch(self, res, name, body, namespace=None, **kw):
        raise AssertionError("the controllers do not patch")

    # -- helpers for tests ----------------------------------------------------------------------------------
    def _collect_garbage(self, uid):
        for (plural, ns, name), o in list(self.objs.items()):
            refs = o["metadata"].get("ownerReferences") or []
            if any(r["uid"] == uid for r in refs):
                rest = [r for r in refs if r["uid"] != uid]
                res = _res_of(plural)
                if rest:
                    o["metadata"]["ownerReferences"] = rest
                    self._feed(res, o)
                else:
                    self.delete(res, name, ns, _external=True)

    def find(self, res, name, ns=NS):
        o = self.objs.get(self._k(res, ns, name))
        return copy.deepcopy(o) if o else None

    def edit(self, res, name, fn, ns=NS):
        """A hand edit (kubectl edit): not counted as an operator write."""
        o = self.find(res, name, ns)
        fn(o)
        return self.replace(res, o, _external=True)

    def roll_out(self, ns=NS, ready=True):
        """What the Deployment controller + kubelets do: every Deployment rolls out (pods ready or not)."""
        for (plural, n, _name), o in list(self.objs.items()):
            if plural == "deployments" and n == ns:
                r = o["spec"].get("replicas", 1)
                o = copy.deepcopy(o)
                o["status"] = {
                    "observedGeneration": o["metadata"]["generation"],
                    "replicas": r,
                    "updatedReplicas": r,
                    "readyReplicas": r if ready else 0,
                    "availableReplicas": r if ready else 0,
                    "conditions": [{"type": "Available", "status": "True" if ready else "False"}],
                }
                self.replace(DEPLOYMENTS, o, subresource="status", _external=True)


def _res_of(plural):
    for r in (
        CONFIGMAPS,
        DEPLOYMENTS,
        SERVICES,
        SERVICEACCOUNTS,
        ROLEBINDINGS,
        SECRETS,
        store.DCD,
        store.DGD,
    ):
        if r.plural == plural:
            return r
    raise KeyError(plural)


class Operator:
    """The two reconcilers wired to a FakeAPI; ``converge`` plays the work queue until nothing changes."""

    def __init__(self, api: FakeAPI, config=None):
        self.api = api
        stores = {
            res: api.store(res, MANAGED) for res in (DEPLOYMENTS, SERVICES, CONFIGMAPS, SERVICEACCOUNTS)
        }
        stores[ROLEBINDINGS] = api.store(ROLEBINDINGS, MANAGED)
        stores[store.DCD] = api.store(store.DCD)
        stores[store.DGD] = api.store(store.DGD)
        self.events: list[tuple[str, str, str]] = []
        recorder = EventRecorder(None, "test", sync=True)
        orig = recorder.event

        def event(obj, type_, reason, message):
            self.events.append((type_, reason, message))
            orig(obj, type_, reason, message)

        recorder.event = event
        self.deps = Deps(
            client=api,
            recorder=recorder,
            stores=stores,
            secrets=api.store(SECRETS),
            operator_config=config,
            operator_version="0.1.0",
            recent=RecentWrites(),
        )
        self.dgd = DGDReconciler(self.deps)
        self.dcd = DCDReconciler(self.deps)

    def converge(self, rounds: int = 10) -> list[Result]:
        results = []
        for _ in range(rounds):
            before = len(self.api.writes)
            for o in list(self.deps.stores[store.DGD].list()):
                results.append(self.dgd(Request(o["metadata"]["namespace"], o["metadata"]["name"])))
            for o in list(self.deps.stores[store.DCD].list()):
                results.append(self.dcd(Request(o["metadata"]["namespace"], o["metadata"]["name"])))
            if len(self.api.writes) == before:
                return results
        raise AssertionError(f"no convergence: {self.api.writes[-10:]}")


def graph(name="g", decode_replicas=2, extra_components=()):
    doc = yaml.safe_load(
        f"""
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {{name: {name}, namespace: {NS}}}
spec:
  env: [{{name: EMPTY, value: ""}}]
  components:
    - name: Frontend
      type: frontend
      podTemplate: {{spec: {{containers: [{{name: main, image: {IMAGE}}}]}}}}
    - name: Planner
      type: planner
      podTemplate: {{spec: {{containers: [{{name: main, image: {IMAGE}}}]}}}}
    - name: VllmPrefillWorker
      type: prefill
      podTemplate:
        spec:
          containers:
            - {{name: main, image: {IMAGE}, command: [python3, -m, dynamo.vllm],
                resources: {{limits: {{nvidia.com/gpu: "1", cpu: "0.5"}}}}}}
    - name: VllmDecodeWorker
      type: decode
      replicas: {decode_replicas}
      podTemplate:
        spec:
          containers:
            - {{name: main, image: {IMAGE}, command: [python3, -m, dynamo.vllm],
                resources: {{limits: {{nvidia.com/gpu: "1"}}}}}}
"""
    )
    doc["spec"]["components"].extend(extra_components)
    return doc


def apply_dgd(api: FakeAPI, dgd: dict) -> dict:
    wire = store.to_wire(dgd)
    cur = api.find(store.DGD, dgd["metadata"]["name"], dgd["metadata"]["namespace"])
    if cur is None:
        return api.create(store.DGD, wire, _external=True)
    cur["spec"] = wire["spec"]
    return api.replace(store.DGD, cur, _external=True)


def dgd_status(api, name="g"):
    return store.to_internal(api.find(store.DGD, name)).get("status") or {}


@pytest.fixture
def api():
    return FakeAPI()


@pytest.fixture
def op(api):
    return Operator(api)


def test_graph_creates_every_child_with_controller_owner_references(api, op):
    dgd = apply_dgd(api, graph())
    op.converge()
    dcds = {o["metadata"]["name"]: o for o in op.deps.stores[store.DCD].list()}
    assert set(dcds) == {"g-frontend", "g-planner", "g-vllmprefillworker", "g-vllmdecodeworker"}
    for d in dcds.values():
        assert d["apiVersion"] == f"nvidia.com/{store.WIRE_VERSION}"
        (ref,) = d["metadata"]["ownerReferences"]
        assert ref["uid"] == dgd["metadata"]["uid"] and ref["controller"] and ref["blockOwnerDeletion"]
    for name, d in dcds.items():
        dep = api.find(DEPLOYMENTS, name)
        (ref,) = dep["metadata"]["ownerReferences"]
        assert (ref["kind"], ref["uid"], ref["controller"]) == (names.DCD_KIND, d["metadata"]["uid"], True)
        assert api.find(SERVICES, name) is not None
    sa = api.find(SERVICEACCOUNTS, names.PLANNER_SERVICE_ACCOUNT)
    (ref,) = sa["metadata"]["ownerReferences"]
    assert ref["uid"] == dcds["g-planner"]["metadata"]["uid"] and "controller" not in ref
    kinds = {e[1] for e in op.events}
    assert {"CreateDynamoComponentDeployment", "CreateDeployment", "CreateService"} <= kinds


def test_status_goes_initializing_pending_successful_with_counts(api, op):
    apply_dgd(api, graph())
    op.dgd(Request(NS, "g"))
    assert dgd_status(api)["state"] == st.STATE_INITIALIZING
    op.converge()
    s = dgd_status(api)
    assert s["state"] == st.STATE_PENDING
    ready = st.condition(s, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", st.REASON_UPDATING)
    assert "Frontend: rollout of generation 1 not observed yet" in ready["message"]
    api.roll_out(ready=False)
    op.converge()
    s = dgd_status(api)
    ready = st.condition(s, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", st.REASON_PODS_NOT_READY)
    assert ready["message"].startswith("0/4 components ready; not ready: Frontend: 0/1 replicas ready")
    assert "VllmDecodeWorker: 0/2 replicas ready" in ready["message"]
    api.roll_out()
    op.converge()
    s = dgd_status(api)
    assert s["state"] == st.STATE_SUCCESSFUL and s["observedGeneration"] == 1
    ready = st.condition(s, "Ready")
    assert (ready["status"], ready["reason"]) == ("True", st.REASON_ALL_READY)
    assert s["components"]["VllmDecodeWorker"] == {
        "componentKind": "Deployment",
        "componentNames": ["g-vllmdecodeworker"],
        "runtimeNamespace": f"{NS}-g",
        "replicas": 2,
        "updatedReplicas": 2,
        "readyReplicas": 2,
        "availableReplicas": 2,
    }
    dcd = store.to_internal(api.find(store.DCD, "g-frontend"))
    avail = st.condition(dcd["status"], "Available")
    assert (avail["status"], avail["reason"]) == ("True", "DeploymentReady")
    assert dcd["status"]["podSelector"] == {names.LABEL_SELECTOR: "g-frontend"}


def test_converged_objects_get_no_writes_even_after_a_restart(api, op):
    apply_dgd(api, graph())
    op.converge()
    api.roll_out()
    op.converge()
    n = len(api.writes)
    op.converge()
    assert api.writes[n:] == []
    restarted = Operator(api)  # fresh caches, no memory of earlier writes
    events = len(restarted.events)
    restarted.converge()
    assert api.writes[n:] == [] and len(restarted.events) == events


def test_scaling_moves_the_deployment_and_status_waits_for_it(api, op):
    apply_dgd(api, graph())
    op.converge()
    api.roll_out()
    op.converge()
    apply_dgd(api, graph(decode_replicas=3))
    op.dgd(Request(NS, "g"))
    s = dgd_status(api)
    assert s["state"] == st.STATE_PENDING and s["observedGeneration"] == 2
    assert "VllmDecodeWorker" in st.condition(s, "Ready")["message"]
    op.converge()
    assert api.find(DEPLOYMENTS, "g-vllmdecodeworker")["spec"]["replicas"] == 3
    assert dgd_status(api)["state"] == st.STATE_PENDING
    api.roll_out()
    op.converge()
    assert dgd_status(api)["state"] == st.STATE_SUCCESSFUL


def test_removed_component_children_are_deleted(api, op):
    apply_dgd(api, graph())
    op.converge()
    g = graph()
    g["spec"]["components"] = [c for c in g["spec"]["components"] if c["name"] != "Planner"]
    apply_dgd(api, g)
    op.converge()
    assert api.find(store.DCD, "g-planner") is None
    assert ("delete", names.DCD_KIND, "g-planner") in api.writes
    # the garbage collector removes the DCD's children; the shared account had no other user
    assert api.find(DEPLOYMENTS, "g-planner") is None
    assert api.find(SERVICEACCOUNTS, names.PLANNER_SERVICE_ACCOUNT) is None
    assert "DeleteDynamoComponentDeployment" in {e[1] for e in op.events}


def test_children_a_dcd_no_longer_renders_are_deleted(api, op):
    extra = {
        "name": "Epp",
        "type": "epp",
        "eppConfig": {"config": {"plugins": []}},
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
    }
    apply_dgd(api, graph(extra_components=[extra]))
    op.converge()
    cm_name = next(n for (p, _, n) in api.objs if p == "configmaps")
    assert api.find(SERVICEACCOUNTS, names.EPP_SERVICE_ACCOUNT) is not None
    g = graph(extra_components=[{**extra, "type": "frontend", "eppConfig": None}])
    g["spec"]["components"][-1].pop("eppConfig")
    g["spec"]["components"][0]["name"] = "Frontend"
    apply_dgd(api, g)
    op.converge()
    assert api.find(CONFIGMAPS, cm_name) is None
    assert api.find(SERVICEACCOUNTS, names.EPP_SERVICE_ACCOUNT) is None
    assert ("delete", "ConfigMap", cm_name) in api.writes


def test_hand_edits_are_put_back(api, op):
    apply_dgd(api, graph())
    op.converge()
    api.roll_out()
    op.converge()
    want = api.find(DEPLOYMENTS, "g-frontend")["spec"]

    def change_image(o):
        o["spec"]["template"]["spec"]["containers"][0]["image"] = "evil:1"

    api.edit(DEPLOYMENTS, "g-frontend", change_image)
    op.converge()
    assert api.find(DEPLOYMENTS, "g-frontend")["spec"]["template"] == want["template"]
    assert any(e[1] == "UpdateDeployment" and "drift: spec.template" in e[2] for e in op.events)

    # an *added* field is invisible to desired ⊆ live; the generation gives it away
    def add_node_selector(o):
        o["spec"]["template"]["spec"]["nodeSelector"] = {"x": "y"}

    api.edit(DEPLOYMENTS, "g-frontend", add_node_selector)
    op.converge()
    assert "nodeSelector" not in api.find(DEPLOYMENTS, "g-frontend")["spec"]["template"]["spec"]

    def drop_label_and_port(o):
        del o["metadata"]["labels"][names.LABEL_COMPONENT]
        o["spec"]["ports"] = []

    api.edit(SERVICES, "g-frontend", drop_label_and_port)
    op.converge()
    svc = api.find(SERVICES, "g-frontend")
    assert svc["spec"]["ports"] and svc["metadata"]["labels"][names.LABEL_COMPONENT] == "Frontend"
    assert svc["spec"]["clusterIP"].startswith("10.0.0.")  # allocated fields carried over

    def scale_dcd(o):
        o["spec"]["replicas"] = 5

    api.edit(store.DCD, "g-frontend", scale_dcd)
    op.converge()
    assert "replicas" not in api.find(store.DCD, "g-frontend")["spec"]  # an addition, undone
    assert api.find(DEPLOYMENTS, "g-frontend")["spec"]["replicas"] == 1


def test_edited_hash_annotation_is_rewritten(api, op):
    apply_dgd(api, graph())
    op.converge()

    def tamper(o):
        o["metadata"]["annotations"][names.ANN_SPEC_HASH] = "x"

    api.edit(DEPLOYMENTS, "g-planner", tamper)
    op.converge()
    assert api.find(DEPLOYMENTS, "g-planner")["metadata"]["annotations"][names.ANN_SPEC_HASH] != "x"


def test_shared_service_account_is_referenced_by_every_user(api, op):
    apply_dgd(api, graph("a"))
    apply_dgd(api, graph("b"))
    op.converge()
    sa = api.find(SERVICEACCOUNTS, names.PLANNER_SERVICE_ACCOUNT)
    refs = sa["metadata"]["ownerReferences"]
    assert sorted(r["name"] for r in refs) == ["a-planner", "b-planner"]
    assert not any(r.get("controller") for r in refs)
    api.delete(store.DGD, "a", NS, _external=True)  # the GC takes a's DCDs and a's reference
    op.converge()
    refs = api.find(SERVICEACCOUNTS, names.PLANNER_SERVICE_ACCOUNT)["metadata"]["ownerReferences"]
    assert [r["name"] for r in refs] == ["b-planner"]


def test_conflicts_requeue_without_error_events(api, op):
    apply_dgd(api, graph())
    op.converge()
    api.edit(DEPLOYMENTS, "g-frontend", lambda o: o["spec"].update(replicas=7))
    api.fail_next.append(_err(409, "Conflict"))
    res = op.dcd(Request(NS, "g-frontend"))
    assert res == Result(requeue=True)
    assert not [e for e in op.events if e[0] == "Warning"]
    op.converge()
    assert api.find(DEPLOYMENTS, "g-frontend")["spec"]["replicas"] == 1


def test_api_failures_mark_the_graph_failed_and_raise(api, op):
    apply_dgd(api, graph())
    api.fail_next.append(_err(500, "InternalError"))
    with pytest.raises(ApiException):
        op.dgd(Request(NS, "g"))
    s = dgd_status(api)
    assert s["state"] == st.STATE_FAILED and st.condition(s, "Ready")["reason"] == st.REASON_FAILED
    assert "observedGeneration" not in s
    assert any(e[:2] == ("Warning", "ReconcileError") for e in op.events)
    op.converge()
    assert dgd_status(api)["state"] == st.STATE_PENDING


def test_invalid_graph_fails_once_with_the_field_named(api, op):
    g = graph()
    g["spec"]["components"][1]["name"] = "frontend"  # duplicate, case-insensitively
    apply_dgd(api, g)
    op.converge()
    s = dgd_status(api)
    ready = st.condition(s, "Ready")
    assert s["state"] == st.STATE_FAILED and ready["reason"] == st.REASON_INVALID_SPEC
    assert "spec.components[1].name" in ready["message"] and s["observedGeneration"] == 1
    warnings = [e for e in op.events if e[0] == "Warning"]
    n = len(api.writes)
    op.converge()
    assert api.writes[n:] == [] and [e for e in op.events if e[0] == "Warning"] == warnings


def test_foreign_controller_is_an_ownership_conflict(api, op):
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "uid": "other-uid"}}
    dcd = store.to_wire(
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": names.DCD_KIND,
            "metadata": {
                "name": "g-frontend",
                "namespace": NS,
                "ownerReferences": [
                    {
                        **{k: other[k] for k in ("apiVersion", "kind")},
                        "name": "x",
                        "uid": "other-uid",
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "name": "Frontend",
                "type": "frontend",
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
            },
        }
    )
    api.create(store.DCD, dcd, _external=True)
    apply_dgd(api, graph())
    res = op.dgd(Request(NS, "g"))
    assert res.requeue_after
    s = dgd_status(api)
    assert s["state"] == st.STATE_FAILED and st.condition(s, "Ready")["reason"] == st.REASON_OWNERSHIP
    assert api.find(store.DCD, "g-frontend")["metadata"]["ownerReferences"][0]["uid"] == "other-uid"


def test_pull_secrets_are_discovered_from_the_namespace(api, op):
    import base64

    cfg = base64.b64encode(json.dumps({"auths": {"nvcr.io": {"auth": "eA=="}}}).encode()).decode()
    api.create(
        SECRETS,
        {
            "metadata": {"name": "ngc", "namespace": NS},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": cfg},
        },
        _external=True,
    )
    apply_dgd(api, graph())
    op.converge()
    pod = api.find(DEPLOYMENTS, "g-frontend")["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "ngc"}]


def test_a_terminating_namespace_is_not_an_error(api, op):
    apply_dgd(api, graph())
    e = _err(403, "Forbidden")
    e.body = json.dumps({"reason": "Forbidden", "details": {"causes": [{"reason": "NamespaceTerminating"}]}})
    api.fail_next.append(e)
    assert op.dgd(Request(NS, "g")) == Result()
    assert not [ev for ev in op.events if ev[0] == "Warning"]


def test_recreated_graph_waits_for_the_garbage_collector(api, op):
    apply_dgd(api, graph())
    op.converge()
    old_uid = api.find(store.DGD, "g")["metadata"]["uid"]
    api.delete(store.DGD, "g", NS, _external=True, _gc=False)  # the GC has not run yet
    apply_dgd(api, graph())
    assert op.dgd(Request(NS, "g")) == Result(requeue_after=2)
    assert dgd_status(api).get("state") != st.STATE_FAILED and not [e for e in op.events if e[0] == "Warning"]
    api._collect_garbage(old_uid)
    op.converge()
    assert dgd_status(api)["state"] == st.STATE_PENDING
