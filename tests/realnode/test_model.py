"""A LoRA DynamoModel against real workers on the real node: the operator finds the base model's worker
pods, calls the Dynamo runtime's own LoRA API on each one's system port (``POST /v1/loras``, and
``DELETE /v1/loras/<name>`` when the model is deleted) and the model's status follows what the workers
answered.

The stand-in, said plainly: ai-dynamo 1.6.1's mocker has no LoRA management (its system status server
answers ``POST /v1/loras`` with 500 "LoRA management not available: no 'load_lora' handler is registered",
seen with ``DYN_LORA_ENABLED=true``). So the workers run ``stub/lora_worker.py``: the real mocker worker plus
the three LoRA endpoints an engine serves (``load_lora``, ``unload_lora``, ``list_loras``, in dynamo.sglang's
shapes), resolving each adapter source with Dynamo's own LoRA downloader and recording it instead of loading
weights into an engine. The runtime's HTTP routes, the request routing to those endpoints, the source
resolution and everything the operator does are real.

How the operator finds the endpoints: the pods labelled ``nvidia.com/dynamo-base-model-hash`` (its pod cache),
which are exactly what the model's headless Service selects; upstream reads that Service's EndpointSlices
instead. The kwok tier cannot have EndpointSlices for its pods (their loopback IPs are refused: "may not be in
the loopback range"), so the operator reads the pods; this test checks that the headless Service's
EndpointSlice on the real node names the same addresses the operator probed.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from dynamo_localcluster.realnode import layout
from dynamo_operator.controllers.lifecycle import DYNAMO_MODELS
from dynamo_operator.render import names
from dynamo_operator.runtime.client import ResourceClient
from realnode_helpers import SLOW, Platform, apply_doc, pod_ready, runtime_image, save, scratch_namespace
from support import graphs
from support.crs import condition, events_of
from support.dgd import get
from support.poll import wait_for

STUB = Path(__file__).parent / "stub" / "lora_worker.py"
REAL_NODE = {"nodeSelector": dict(layout.NODE_SELECTOR), "tolerations": [dict(layout.TOLERATION)]}
GRAPH, BASE = "lora-base", "tiny"
ADAPTER_CONFIG = {"peft_type": "LORA", "r": 8, "lora_alpha": 16, "target_modules": ["q_proj", "v_proj"]}


def lora_graph() -> dict:
    """Two workers of the base model ``tiny`` on the real node, each the stand-in with LoRA enabled, the
    adapter ``good`` in its filesystem (a ConfigMap), nothing at ``/adapters/nope``."""
    worker = graphs.component(
        "LoraWorker",
        replicas=2,
        image=runtime_image(),
        command=["python3", "/stub/lora_worker.py"],
        args=["--model-path", "/models/tiny", "--model-name", BASE],
        env=[{"name": "DYN_LORA_ENABLED", "value": "true"}, {"name": "DYN_LORA_PATH", "value": "/tmp/loras"}],
        modelRef={"name": BASE},
    )
    pod = worker["podTemplate"]["spec"]
    (main,) = pod["containers"]
    main["imagePullPolicy"] = "Never"
    main["volumeMounts"] = [
        {"name": "stand-in", "mountPath": "/stub", "readOnly": True},
        {"name": "adapters", "mountPath": "/adapters", "readOnly": True},
    ]
    pod["volumes"] = [
        {"name": "stand-in", "configMap": {"name": "lora-stand-in"}},
        {
            "name": "adapters",
            "configMap": {
                "name": "adapters",
                "items": [{"key": "config", "path": "good/adapter_config.json"}],
            },
        },
    ]
    pod.update(REAL_NODE)
    return graphs.dgd(worker, name=GRAPH, namespace=None)


def dynamo_model(name: str, uri: str) -> dict:
    return {
        "apiVersion": DYNAMO_MODELS.api_version,
        "kind": "DynamoModel",
        "metadata": {"name": name},
        "spec": {"modelName": name, "baseModelName": BASE, "modelType": "lora", "source": {"uri": uri}},
    }


@pytest.fixture(scope="module")
def client(platform: Platform):
    with platform.cluster.api_client() as api:
        yield ResourceClient(api)


def start_workers(platform: Platform, ns: str) -> None:
    """The stand-in's and the adapter's ConfigMaps, then the graph."""
    config_maps = [
        {"metadata": {"name": "lora-stand-in"}, "data": {"lora_worker.py": STUB.read_text()}},
        {"metadata": {"name": "adapters"}, "data": {"config": json.dumps(ADAPTER_CONFIG)}},
    ]
    for cm in config_maps:
        apply_doc(platform, ns, {"apiVersion": "v1", "kind": "ConfigMap", **cm})
    apply_doc(platform, ns, lora_graph())


# started as soon as the platform is installed (conftest's ``platform``: realnode_helpers.start_ahead)
AHEAD = {"lora": start_workers}


@pytest.fixture(scope="module")
def workers(platform: Platform):
    """The base model's two workers Ready on the node: (namespace, their pods)."""
    for ns in scratch_namespace(platform, "lora", start_workers):
        pods = wait_for(
            lambda ns=ns: ready_workers(platform, ns), 300, "two stand-in workers Ready on the node", **SLOW
        )
        yield ns, pods


def ready_workers(platform: Platform, ns: str) -> list[dict] | None:
    selector = f"{names.LABEL_BASE_MODEL_HASH}={names.model_hash(BASE)}"
    pods = json.loads(platform.kubectl("get", "pods", "-n", ns, "-l", selector, "-o", "json"))["items"]
    ready = [p for p in pods if pod_ready(p)]
    return ready if len(ready) == 2 else None


def loras(pod: dict) -> dict:
    """What the worker itself holds (its runtime's ``GET /v1/loras``, from this host over the bridge)."""
    with urllib.request.urlopen(f"http://{pod['status']['podIP']}:9090/v1/loras", timeout=10) as r:
        return json.loads(r.read())["loras"]


def model_status(client, ns: str, name: str) -> dict:
    return (get(client, DYNAMO_MODELS, name, ns) or {}).get("status") or {}


def with_reason(client, ns: str, name: str, reason: str) -> dict | None:
    st = model_status(client, ns, name)
    return st if condition({"status": st}, "EndpointsReady").get("reason") == reason else None


def test_a_lora_model_is_loaded_on_every_worker_and_unloaded_when_deleted(
    platform, client, workers, tmp_path
):
    ns, pods = workers
    save(tmp_path / "good.json", dynamo_model("tiny-lora", "file:///adapters/good"))
    platform.kubectl("apply", "-n", ns, "-f", str(tmp_path / "good.json"))
    st = wait_for(
        lambda: with_reason(client, ns, "tiny-lora", "AllEndpointsReady"), 120, "AllEndpointsReady", **SLOW
    )
    addresses = {f"http://{p['status']['podIP']}:9090" for p in pods}
    assert {e["address"] for e in st["endpoints"]} == addresses and all(e["ready"] for e in st["endpoints"])
    assert (st["totalEndpoints"], st["readyEndpoints"]) == (2, 2)
    assert condition({"status": st}, "ServicesFound")["status"] == "True"
    # the workers really hold it: their own runtime lists it
    for pod in pods:
        assert "tiny-lora" in loras(pod), pod["metadata"]["name"]
    # the model's headless Service selects the same endpoints the operator probed
    slices = json.loads(
        platform.kubectl(
            "get",
            "endpointslices",
            "-n",
            ns,
            "-l",
            f"{names.LABEL_BASE_MODEL_HASH}={names.model_hash(BASE)}",
            "-o",
            "json",
        )
    )["items"]
    sliced = {
        f"http://{a}:{p['port']}"
        for s in slices
        for e in s["endpoints"] or []
        for a in e["addresses"]
        for p in s["ports"]
        if p["name"] == "system"
    }
    assert sliced == addresses, (sliced, addresses)
    platform.kubectl("delete", "dynamomodel", "tiny-lora", "-n", ns)
    wait_for(lambda: get(client, DYNAMO_MODELS, "tiny-lora", ns) is None, 120, "the model deleted", **SLOW)
    for pod in pods:
        assert "tiny-lora" not in loras(pod), pod["metadata"]["name"]
    assert ("Normal", "Unloaded") in {e[:2] for e in events_of(client, ns, "tiny-lora", "DynamoModel")}


def test_an_adapter_that_does_not_exist_is_reported_on_every_endpoint(platform, client, workers, tmp_path):
    """The negative control: the source names nothing; each worker's runtime refuses it and the model says
    why, endpoint by endpoint, and stays not ready."""
    ns, pods = workers
    save(tmp_path / "nope.json", dynamo_model("missing-lora", "file:///adapters/nope"))
    platform.kubectl("apply", "-n", ns, "-f", str(tmp_path / "nope.json"))
    st = wait_for(
        lambda: with_reason(client, ns, "missing-lora", "NotReady"), 120, "EndpointsReady NotReady", **SLOW
    )
    assert (st["totalEndpoints"], st["readyEndpoints"]) == (2, 0)
    assert not any(e["ready"] for e in st["endpoints"])
    message = condition({"status": st}, "EndpointsReady")["message"]
    assert "Local LoRA not found: file:///adapters/nope" in message, message
    for pod in pods:
        assert "missing-lora" not in loras(pod)
    platform.kubectl("delete", "dynamomodel", "missing-lora", "-n", ns, "--wait=false")
