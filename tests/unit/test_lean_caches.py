"""Caches that keep only what their readers use, and an initial state streamed, as pure behaviour (the
memory they save is measured by ``make bench``, docs/performance.md).

* every lean view answers its readers as the whole object does (status, the pod count, the gauges);
* the whole is packed and comes back unpacked equal; a lean view cannot be written by mistake;
* the child syncer compares and writes the whole, so a converged child stays unwritten;
* the informer streams its initial state (watch-list) and falls back to a list where the apiserver cannot;
* an index value naming one object holds a string, not a set; unique values are not interned."""

from __future__ import annotations

import copy
import json
import sys

import pytest
from dynamo_operator.controllers import caches, component_pods, store
from dynamo_operator.controllers import status as st
from dynamo_operator.controllers.sync import ChildSyncer
from dynamo_operator.render import RenderContext, names, pullsecrets, render_component, render_graph
from dynamo_operator.runtime.client import CONFIGMAPS, DEPLOYMENTS, PODS, SERVICES, WatchSilent
from dynamo_operator.runtime.informer import Indexer, Informer, compact, unpack
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.runtime.settings import RuntimeSettings
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException
from support import graphs
from support.fakewatch import FakeWatch, cm, started
from support.poll import wait_for

MANAGED = {"managedFields": [{"manager": "kube-controller-manager", "fieldsV1": {"f:status": {}}}]}


def graph() -> dict:
    return graphs.dgd(
        graphs.component("VllmDecodeWorker", "decode", command=graphs.VLLM), name="g", namespace="ns"
    )


def live_deployment(ready: int = 1, available_false: bool = False) -> dict:
    """The graph's worker Deployment as the apiserver serves it: defaults, owner, status."""
    dcd = render_graph(graph(), RenderContext())[0]
    dep = next(o for o in render_component(dcd, RenderContext()) if o["kind"] == "Deployment")
    dep = copy.deepcopy(dep)
    dep["metadata"].update(uid="dep-uid", resourceVersion="7", generation=1, **copy.deepcopy(MANAGED))
    dep["metadata"]["ownerReferences"] = [
        {"apiVersion": "v", "kind": "K", "name": "n", "uid": "dcd-uid", "controller": True}
    ]
    dep["spec"]["template"]["spec"]["dnsPolicy"] = "ClusterFirst"  # an apiserver default
    conditions = [
        {
            "type": "Available",
            "status": "False" if available_false else "True",
            "message": "why",
            "reason": "r",
            "lastUpdateTime": "2026-01-01T00:00:00Z",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        },
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "ok"},
    ]
    dep["status"] = {
        "observedGeneration": 1,
        "replicas": 1,
        "updatedReplicas": 1,
        "readyReplicas": ready,
        "availableReplicas": ready,
        "conditions": conditions,
    }
    return dep


@pytest.mark.parametrize("ready,unavailable", [(1, False), (0, False), (1, True)])
def test_a_lean_deployment_answers_status_as_the_whole_does(ready, unavailable):
    whole = live_deployment(ready, unavailable)
    lean = caches.TRANSFORMS[DEPLOYMENTS](copy.deepcopy(whole))
    assert "containers" not in json.dumps(lean["spec"])  # the pod template stays packed
    assert st.deployment_readiness(lean, 1) == st.deployment_readiness(whole, 1)
    dcd = {"metadata": {"labels": {names.LABEL_WORKER_HASH: "other"}}}
    assert st.revision_mismatch(dcd, lean, None) == st.revision_mismatch(dcd, whole, None) is not None
    assert st.replica_status("Deployment", "d", None, lean, 1) == st.replica_status(
        "Deployment", "d", None, whole, 1
    )
    # the whole comes back, without managedFields; the lean view cannot be sent by mistake
    expected = copy.deepcopy(whole)
    expected["metadata"].pop("managedFields")
    assert unpack(lean) == expected
    with pytest.raises(TypeError):
        json.dumps(lean)


def running_pod(labels: dict, **metadata) -> dict:
    """A component's scheduled, running pod as the apiserver sends it (``labels`` beside the selector's)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "ns",
            "uid": "u",
            "resourceVersion": "3",
            "labels": {names.LABEL_SELECTOR: "g-decode", "other": "x", **labels},
            **copy.deepcopy(MANAGED),
            **metadata,
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "main", "image": "i"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def test_a_lean_pod_counts_as_the_whole_does():
    pod = running_pod({})
    lean = caches.TRANSFORMS[PODS](copy.deepcopy(pod))
    for p in (pod, lean):
        cache = Indexer()
        cache.add_indexer(component_pods.INDEX, component_pods.index_by_component)
        cache.upsert(p)
        assert component_pods.scheduled_replicas(cache, "ns", "g-decode") == 1
        assert component_pods.component_of(p)[0].name == "g-decode"
    assert "containers" not in json.dumps(lean)


def test_the_topology_controller_reads_a_lean_pod_as_the_whole():
    """A kvTransferPolicy worker's pod keeps, in the lean cache, what the topology controller decides on: the
    source annotations (without them it never labelled a pod) and the topology labels already copied."""
    from dynamo_operator.controllers import topology
    from dynamo_operator.render import kvtransfer

    copied = kvtransfer.LABEL_PREFIX + "rack"
    annotations = {kvtransfer.ANN_CLUSTER_TOPOLOGY: "topo", "unrelated": "y" * 100}
    pod = running_pod({copied: "r1"}, annotations=annotations)
    lean = caches.TRANSFORMS[PODS](copy.deepcopy(pod))
    assert topology.wants_labels(pod) and topology.wants_labels(lean)
    assert lean["metadata"]["annotations"] == {kvtransfer.ANN_CLUSTER_TOPOLOGY: "topo"}
    assert lean["metadata"]["labels"] == {names.LABEL_SELECTOR: "g-decode", copied: "r1"}


def test_a_lean_graph_and_component_convert_as_the_whole_and_once_per_version():
    dgd = store.to_wire(graph())
    dgd["metadata"].update(uid="g-uid", resourceVersion="9", generation=1)
    dgd["status"] = {"state": "successful"}
    lean = caches.TRANSFORMS[store.DGD](copy.deepcopy(dgd))
    assert "spec" not in lean and lean["status"] == {"state": "successful"}
    first = store.to_internal(lean)
    hits = store._converted.hits
    assert store.to_internal(lean) == first
    assert store._converted.hits == hits + 1  # the packed entry is the conversion's key
    assert first == store.to_internal(copy.deepcopy(dgd))


class Events:
    def normal(self, obj, reason, message):
        pass


def test_a_converged_child_in_a_lean_cache_is_not_written_and_drift_is_seen():
    class Client:
        def __init__(self):
            self.writes = []

        def replace(self, res, body, subresource=None):
            self.writes.append(body)
            return body

    dcd = render_graph(graph(), RenderContext())[0]
    desired = next(o for o in render_component(dcd, RenderContext()) if o["kind"] == "Deployment")
    owner = {"apiVersion": "v", "kind": "K", "metadata": {"name": "n", "uid": "dcd-uid"}}
    live = live_deployment()
    live["metadata"]["annotations"] = desired["metadata"]["annotations"]
    cache = Indexer()
    cache.upsert(caches.TRANSFORMS[DEPLOYMENTS](copy.deepcopy(live)))
    client = Client()
    syncer = ChildSyncer(client, Events(), {DEPLOYMENTS: cache})
    assert syncer.sync(owner, desired).action == "unchanged"
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "edited"  # a hand edit
    live["metadata"]["resourceVersion"] = "8"
    cache.upsert(caches.TRANSFORMS[DEPLOYMENTS](copy.deepcopy(live)))
    result = syncer.sync(owner, desired)
    assert result.action == "updated" and "drift" in result.reason
    (body,) = client.writes
    assert body["spec"]["template"]["spec"]["containers"][0]["image"] != "edited"
    assert body["metadata"]["annotations"] == live["metadata"]["annotations"]  # kept from the whole


class StreamingLW:
    """A source that streams its initial state (or refuses to), then lists and watches."""

    def __init__(self, stream, listed=([], "1")):
        self.stream = stream
        self.listed = listed
        self.calls: list[str] = []

    def watch_list(self):
        self.calls.append("watch_list")
        if isinstance(self.stream, Exception):
            raise self.stream
        return FakeWatch(self.stream, block=True)

    def list(self, transform=lambda o: o):
        self.calls.append("list")
        items, rv = self.listed
        return [transform(o) for o in items], rv

    def watch(self, rv):
        self.calls.append(f"watch@{rv}")
        return FakeWatch([], block=True)


def bookmark(rv: str, end: bool = True) -> dict:
    annotations = {"k8s.io/initial-events-end": "true"} if end else {}
    return {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": rv, "annotations": annotations}}}


def test_the_initial_state_is_streamed_then_the_same_watch_goes_on():
    lw = StreamingLW(
        [
            {"type": "ADDED", "object": cm("a", 1)},
            {"type": "ADDED", "object": cm("b", 2)},
            bookmark("5"),
            {"type": "MODIFIED", "object": cm("a", 6, data={"k": "v"})},
        ]
    )
    inf = Informer(CONFIGMAPS, lw)
    rec = started(inf)
    try:
        assert inf.wait_for_sync(2)
        wait_for(lambda: ("update", "a") in rec.events, 2)
        assert lw.calls == ["watch_list"] and inf.stream_initial
        assert rec.events[:3] == [("add", "a"), ("add", "b"), ("update", "a")]
        assert inf.resource_version == "6"
        assert "managedFields" not in json.dumps(inf.store.list())
    finally:
        inf.stop()


@pytest.mark.parametrize(
    "stream",
    [ApiException(status=422, reason="sendInitialEvents is forbidden"), [bookmark("3", end=False)]],
    ids=["refused", "no-end-bookmark"],
)
def test_an_apiserver_that_does_not_stream_is_listed(stream):
    lw = StreamingLW(stream, listed=([cm("a", 1)], "4"))
    inf = Informer(CONFIGMAPS, lw)
    inf.start()
    try:
        assert inf.wait_for_sync(3)
        wait_for(lambda: "watch@4" in lw.calls, 3)
        assert lw.calls[:2] == ["watch_list", "list"] and not inf.stream_initial
        assert inf.store.keys() == ["default/a"]
    finally:
        inf.stop()


class SilentAfter(FakeWatch):
    """A stream that delivers its events, then goes silent (a connection held open with nothing on it)."""

    def __iter__(self):
        yield from super().__iter__()
        raise WatchSilent("no byte for the inactivity timeout")


def test_a_silent_stream_after_its_initial_state_resumes_from_its_resource_version():
    """Streamed once, the state is known: a watch that goes silent later resumes where it was, as a listed
    one does; streaming the whole state again would be a relist for nothing (memory and apiserver load)."""
    lw = StreamingLW([{"type": "ADDED", "object": cm("a", 1)}, bookmark("5")])
    lw.watch_list = lambda: (lw.calls.append("watch_list"), SilentAfter(lw.stream))[1]
    inf = Informer(CONFIGMAPS, lw)
    inf.start()
    try:
        assert inf.wait_for_sync(2)
        wait_for(lambda: "watch@5" in lw.calls, 3, lambda: f"first calls: {lw.calls[:4]} of {len(lw.calls)}")
        assert lw.calls == ["watch_list", "watch@5"] and inf.relists == 1 and inf.silent_watches == 1
    finally:
        inf.stop()


def test_an_index_value_naming_one_object_holds_its_key_not_a_set():
    idx = Indexer()
    a, b = cm("a", 1, owner_uid="o"), cm("b", 1, owner_uid="o")
    idx.upsert(a)
    assert idx._indices["owner"]["o"] == "default/a"
    idx.upsert(b)
    assert idx._indices["owner"]["o"] == {"default/a", "default/b"}
    assert [o["metadata"]["name"] for o in idx.by_index("owner", "o")] == ["a", "b"]
    idx.delete(a)
    assert idx._indices["owner"]["o"] == "default/b"
    idx.delete(b)
    assert "o" not in idx._indices["owner"] and idx.by_index("owner", "o") == []


def test_unique_values_are_not_interned_shared_ones_are():
    obj = compact(cm("a", 123456789, data={"key": "shared-value"}))
    uid, value = obj["metadata"]["uid"], obj["data"]["key"]
    assert sys.intern("".join(["shared-", "value"])) is value
    assert sys.intern("".join(["uid-", "a"])) is not uid


def test_one_informer_keeps_objects_one_way():
    settings = RuntimeSettings(metrics_bind_address="0", health_probe_bind_address="0", leader_elect=False)
    mgr = Manager(settings, ApiClient())
    plain = mgr.informer(SERVICES)
    assert mgr.informer(SERVICES, transform=caches.TRANSFORMS[SERVICES]) is plain  # set before it starts
    assert plain.transform is caches.TRANSFORMS[SERVICES]
    with pytest.raises(ValueError):
        mgr.informer(SERVICES, transform=caches.lean_pod)


def test_a_cached_pull_secret_keeps_its_registries_and_no_credential():
    import base64

    def secret(name: str, payload: str) -> dict:
        data = {".dockerconfigjson": base64.b64encode(payload.encode()).decode()}
        md = {"name": name, "namespace": "ns", "uid": f"u-{name}", "resourceVersion": "1"}
        return {"metadata": md, "type": pullsecrets.DOCKERCONFIGJSON, "data": data}

    auths = {"auths": {"https://nvcr.io/v2/": {"auth": "c2VjcmV0"}}}
    whole = [secret("ngc", json.dumps(auths)), secret("bad", "{")]
    lean = [caches.pull_secret(copy.deepcopy(s)) for s in whole]
    assert "data" not in lean[0] and "c2VjcmV0" not in json.dumps(lean)
    assert pullsecrets.build_index(lean) == pullsecrets.build_index(whole)  # the malformed one: skipped
    assert pullsecrets.build_index(lean).lookup("ns", "nvcr.io/nvidia/x:1") == ("ngc",)
