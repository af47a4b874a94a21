"""One pass of a controller on an object in its in-memory cache, and what the pass writes: the status of a
DynamoModel, a DynamoCheckpoint and a DynamoGraphDeploymentRequest, the children it creates, an adapter's
scaling of its graph. The coverage table cites these tests for the status fields and for the code that
only a controller runs (``docs/api-coverage.md``).

Stand-in: ``Client`` plays the API server (``support.fakecerts.FakeClient``'s dict of objects; creates,
status writes, patches and deletes recorded). The same controllers run against the real API server in
the integration tier (``tests/integration/test_model_cluster.py``, ``test_checkpoint_cluster.py``,
``test_dgdr_cluster.py``, ``test_scaling_cluster.py``); here a pass is one call, so each field's effect
is asserted directly.
"""

from __future__ import annotations

import copy

from dynamo_operator.api.conversion import convert
from dynamo_operator.controllers import store
from dynamo_operator.controllers.checkpoint import CheckpointReconciler
from dynamo_operator.controllers.common import Deps
from dynamo_operator.controllers.dgdr import DGDRReconciler
from dynamo_operator.controllers.dgdsa import AdapterReconciler, AdapterSync
from dynamo_operator.controllers.dynamomodel import DynamoModelReconciler, Prober
from dynamo_operator.controllers.lifecycle import CHECKPOINTS, DGDRS, DYNAMO_MODELS
from dynamo_operator.controllers.store import DGDSA
from dynamo_operator.render import names
from dynamo_operator.render import scaling as sc
from dynamo_operator.runtime.controller import Request
from dynamo_operator.runtime.informer import Indexer
from dynamo_operator.tunables import ControllerTunables
from support import graphs
from support.fakecerts import FakeClient


class Client(FakeClient):
    """``FakeClient``'s dict of objects (creates, status writes with optimistic concurrency), with the
    patches and deletes the controllers make recorded as calls."""

    def __init__(self, *objs: tuple[object, dict]):
        super().__init__()
        self.calls: list[tuple[str, str]] = []
        for res, obj in objs:
            self.objs[self._key(res, obj["metadata"]["name"], obj["metadata"].get("namespace"))] = obj

    def patch(self, res, name, patch, namespace=None, **kw):
        self.calls.append(("patch", name))
        self.patched = patch
        return copy.deepcopy(self.objs.get(self._key(res, name, namespace)) or {"metadata": {"name": name}})

    def delete(self, res, name, namespace=None, **kw):
        self.calls.append(("delete", name))

    def list(self, res, namespace=None, **kw):
        return {"items": [o for (p, _, _), o in self.objs.items() if p == res.plural]}

    def written(self, res, name: str, namespace: str = "ns") -> dict:
        return self.objs[self._key(res, name, namespace)]


class Events:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def event(self, obj, type_, reason, message):
        self.seen.append((type_, reason))

    def normal(self, obj, reason, message):
        self.seen.append(("Normal", reason))

    def warning(self, obj, reason, message):
        self.seen.append(("Warning", reason))


def cache(*objs: dict) -> Indexer:
    out = Indexer()
    for obj in objs:
        out.upsert(copy.deepcopy(obj))
    return out


def conditions(status: dict) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status.get("conditions") or []}


def _resource(res, name: str, spec: dict, generation: int = 1) -> dict:
    return {
        "apiVersion": res.api_version,
        "kind": res.kind,
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "generation": generation},
        "spec": spec,
    }


# -- DynamoModel -------------------------------------------------------------------------------------------


def test_a_base_models_pass_finds_its_workers_by_base_model_name_and_writes_its_conditions():
    base = "Qwen/Qwen3-0.6B"
    model = _resource(DYNAMO_MODELS, "qwen", {"modelName": base, "baseModelName": base, "modelType": "base"})
    pod = {
        "metadata": {
            "name": "g-decode-0",
            "namespace": "ns",
            "labels": {
                names.LABEL_BASE_MODEL_HASH: names.model_hash(base),
                names.LABEL_COMPONENT_TYPE: "decode",
                names.LABEL_SELECTOR: "g-decode",
            },
        },
        "spec": {"containers": [{"name": "main"}]},
        "status": {
            "phase": "Running",
            "podIP": "127.1.0.5",
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    other = copy.deepcopy(pod)
    other["metadata"]["name"] = "other-0"
    other["metadata"]["labels"][names.LABEL_BASE_MODEL_HASH] = names.model_hash("other/model")
    client = Client((DYNAMO_MODELS, copy.deepcopy(model)))
    prober = Prober(ControllerTunables().model_probe)
    try:
        DynamoModelReconciler(client, Events(), cache(model), cache(pod, other), prober)(
            Request("ns", "qwen")
        )
    finally:
        prober.shutdown()
    status = client.written(DYNAMO_MODELS, "qwen")["status"]
    assert conditions(status) == {
        "ServicesFound": ("True", "ServicesFound"),
        "EndpointsReady": ("True", "EndpointsDiscovered"),
    }
    assert [e["podName"] for e in status["endpoints"]] == ["g-decode-0"]  # not the other model's pod


# -- DynamoCheckpoint --------------------------------------------------------------------------------------

CHECKPOINT_SPEC = {
    "identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"},
    "job": {"podTemplateSpec": {"spec": {"containers": [{"name": "main", "image": "vllm:1"}]}}},
}


def test_a_checkpoints_first_pass_creates_its_job_and_writes_phase_job_name_and_conditions():
    ckpt = _resource(CHECKPOINTS, "warm", CHECKPOINT_SPEC)
    client, events = Client((CHECKPOINTS, copy.deepcopy(ckpt))), Events()
    CheckpointReconciler(client, events, cache(ckpt), cache(), enabled=True)(Request("ns", "warm"))
    assert ("create", "checkpoint-warm") in client.writes
    status = client.written(CHECKPOINTS, "warm")["status"]
    assert (status["phase"], status["jobName"]) == ("Creating", "checkpoint-warm")
    assert conditions(status) == {"Ready": ("False", "JobCreated")}
    assert status["conditions"][0]["observedGeneration"] == 1
    assert events.seen == [("Normal", "JobCreated")]


# -- DynamoGraphDeploymentRequest --------------------------------------------------------------------------


def test_a_requests_first_pass_starts_profiling_and_writes_its_conditions_and_generation():
    hardware = {"gpuSku": "h100_sxm", "numGpusPerNode": 8, "vramMb": 81559, "totalGpus": 16}
    spec = {"model": "Qwen/Qwen3-0.6B", "backend": "vllm", "hardware": hardware}
    request = _resource(DGDRS, "req", spec, generation=3)
    request["apiVersion"] = "nvidia.com/v1beta1"
    stored = convert(request, "v1alpha1")  # reconciled in its stored version
    client = Client((DGDRS, copy.deepcopy(stored)))
    DGDRReconciler(client, Events(), cache(stored), cache(), cache(), cache())(Request("ns", "req"))
    assert ("create", "profile-online-req") in client.writes
    status = client.written(DGDRS, "req")["status"]
    assert (status["state"], status["observedGeneration"]) == ("Profiling", 3)
    assert conditions(status) == {
        "Validation": ("True", "SpecValid"),
        "Profiling": ("False", "ProfilingJobCreated"),
        "Succeeded": ("False", "ProfilingJobCreated"),
    }
    assert {c["observedGeneration"] for c in status["conditions"]} == {3}


# -- DynamoGraphDeploymentScalingAdapter -------------------------------------------------------------------


def _graph_with_adapter(replicas: int = 1) -> dict:
    graph = graphs.dgd(graphs.component("Frontend", "frontend"), graphs.component("decode", "decode"))
    graph["spec"]["components"][1].update(replicas=replicas, scalingAdapter={})
    graph["metadata"].update(uid="uid-g", resourceVersion="5")
    return graph


def _deps(client: Client, *caches: tuple[object, Indexer]) -> Deps:
    return Deps(client=client, recorder=Events(), stores=dict(caches))


def test_a_component_with_a_scaling_adapter_gets_one_and_loses_it_without():
    graph = _graph_with_adapter()
    wire = store.to_wire(graph)
    client = Client()
    deps = _deps(client, (DGDSA, cache()))
    assert AdapterSync(deps).apply(wire, graph) == ["g-decode"]
    adapter = client.written(DGDSA, "g-decode")
    assert adapter["metadata"]["ownerReferences"][0]["uid"] == "uid-g"
    assert deps.recorder.seen == [("Normal", "AdapterCreated")]
    del graph["spec"]["components"][1]["scalingAdapter"]
    adapter["metadata"]["uid"] = "uid-a"
    deps = _deps(client, (DGDSA, cache(adapter)))
    assert AdapterSync(deps).apply(store.to_wire(graph), graph) == []
    assert ("delete", "g-decode") in client.calls


def test_an_adapter_scales_its_component_and_records_when():
    graph = _graph_with_adapter(replicas=1)
    wire = store.to_wire(graph)
    adapter = sc.build_adapter(graph, graph["spec"]["components"][1])
    adapter["spec"]["replicas"] = 3
    adapter["metadata"].update(uid="uid-a", resourceVersion="7")
    client = Client((DGDSA, copy.deepcopy(adapter)))
    deps = _deps(client, (DGDSA, cache(adapter)), (store.DGD, cache(wire)))
    AdapterReconciler(deps)(Request("ns", "g-decode"))
    assert client.patched["spec"] == {"services": {"decode": {"replicas": 3}}}
    status = client.written(DGDSA, "g-decode")["status"]
    assert status["replicas"] == 3 and status["selector"] == sc.adapter_selector("g", "decode")
    assert status["lastScaleTime"].endswith("Z")
    assert deps.recorder.seen == [("Normal", "Scaled")]
