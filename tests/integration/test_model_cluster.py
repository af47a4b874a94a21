"""The DynamoModel controller on the real control plane ("cluster" profile: kwok makes the worker pods
Running and Ready and gives them IPs from 127.1.0.0/16).

Worker pods are created as the DCD controller labels them (``nvidia.com/dynamo-base-model-hash``,
component type, Dynamo namespace), each declaring a ``system`` port; a ``FakeWorker`` HTTP server bound to
that pod's IP and port stands in for the worker process that kwok does not run.  Everything the
controller reads comes from the apiserver and everything it calls is the address it derived from the pod.
"""

from __future__ import annotations

import contextlib
import time

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT, free_port
from dynamo_operator.controllers.lifecycle import DYNAMO_MODELS
from dynamo_operator.render import names
from dynamo_operator.runtime.client import PODS
from support.crs import FakeWorker, condition, describe, events_of, wait_event_reasons
from support.dgd import get
from support.operator import Operator
from support.poll import wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "dm"
BASE = "Qwen/Qwen3-0.6B"
WAIT = 60.0
EXAMPLE = REPO_ROOT / "examples" / "dynamomodel-lora.yaml"


@pytest.fixture(scope="module")
def operator(kube_cluster, crds):
    """One in-process operator for the module: each test works in a namespace of its own."""
    with Operator(kube_cluster) as op:
        yield op


def worker_pod(ns: str, name: str, ctype: str = "decode", group: str = "grp", model: str = BASE) -> dict:
    port = free_port()
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {
                names.LABEL_BASE_MODEL_HASH: names.model_hash(model),
                names.LABEL_COMPONENT_TYPE: ctype,
                names.LABEL_DYNAMO_NAMESPACE: group,
                names.LABEL_SELECTOR: f"g-{ctype}",
            },
        },
        "spec": {
            "containers": [
                {"name": "main", "image": "worker:1", "ports": [{"name": "system", "containerPort": port}]}
            ]
        },
    }


def start_pods(client, ns: str, pods: list[dict]) -> dict[str, tuple[str, int]]:
    """Create the pods and wait until each is Ready with an IP; name -> (ip, system port)."""
    for p in pods:
        client.create(PODS, p)
    out = {}
    for p in pods:
        name = p["metadata"]["name"]

        def ready(name=name):
            live = get(client, PODS, name, ns)
            st = (live or {}).get("status") or {}
            ok = any(
                c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or []
            )
            return st.get("podIP") if ok else None

        ip = wait_for(ready, WAIT, f"pod {name} Ready with an IP")
        assert ip.startswith("127."), ip  # loopback only
        out[name] = (ip, p["spec"]["containers"][0]["ports"][0]["containerPort"])
    return out


def dynamo_model(ns: str, name: str, model_type: str = "lora", base: str = BASE) -> dict:
    spec = {"modelName": name, "baseModelName": base, "modelType": model_type}
    if model_type == "lora":
        spec["source"] = {"uri": f"s3://adapters/{name}"}
    return {
        "apiVersion": DYNAMO_MODELS.api_version,
        "kind": "DynamoModel",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def status_of(client, ns, name) -> dict:
    return (get(client, DYNAMO_MODELS, name, ns) or {}).get("status") or {}


def test_lora_is_loaded_on_every_worker_with_retries_and_reported_ready(client, ns, operator):
    pods = start_pods(client, ns, [worker_pod(ns, "w-0"), worker_pod(ns, "w-1")])
    with contextlib.ExitStack() as stack:
        w0 = stack.enter_context(FakeWorker(*pods["w-0"]))
        w1 = stack.enter_context(FakeWorker(*pods["w-1"], mode="flaky:2"))  # two 503s, then 200
        example = yaml.safe_load(EXAMPLE.read_text())  # applied unchanged, in the test's namespace
        assert example["spec"]["baseModelName"] == BASE
        client.create(DYNAMO_MODELS, {**example, "metadata": {**example["metadata"], "namespace": ns}})
        name, lora = example["metadata"]["name"], example["spec"]["modelName"]
        st = wait_for(
            lambda: (s := status_of(client, ns, name)).get("readyEndpoints") == 2 and s,
            WAIT,
            "readyEndpoints == 2",
        )
        assert st["totalEndpoints"] == 2 and st["loraFallbackCoveredEndpoints"] == 0
        assert sorted((e["podName"], e["address"], e["ready"]) for e in st["endpoints"]) == [
            ("w-0", "http://{}:{}".format(*pods["w-0"]), True),
            ("w-1", "http://{}:{}".format(*pods["w-1"]), True),
        ]
        body = {"lora_name": lora, "source": example["spec"]["source"]}
        assert w0.posts() == [body]
        assert w1.posts() == [body] * 3  # retried within the bounded attempts
        live = get(client, DYNAMO_MODELS, name, ns)
        ready = condition(live, "EndpointsReady")
        assert (ready["status"], ready["reason"]) == ("True", "AllEndpointsReady")
        assert ready["observedGeneration"] == live["metadata"]["generation"]
        assert (condition(live, "ServicesFound")["reason"]) == "ServicesFound"
        assert "nvidia.com/finalizer" in live["metadata"]["finalizers"]
        wait_for(
            lambda: ("Normal", "AllEndpointsReady") in {e[:2] for e in events_of(client, ns, name)},
            WAIT,
            "a Normal AllEndpointsReady event",
        )

        # deleting the model unloads the adapter from each endpoint, then the finalizer lets it go
        client.delete(DYNAMO_MODELS, name, ns)
        wait_for(lambda: get(client, DYNAMO_MODELS, name, ns) is None, WAIT, "the DynamoModel to go")
        assert w0.deletes() == w1.deletes() == [f"/v1/loras/{lora}"]


def test_failed_and_legacy_endpoints_are_explained_and_the_queue_never_waits(
    kube_cluster, client, ns, operator
):
    pods = start_pods(
        client,
        ns,
        [
            worker_pod(ns, "prefill-new", "prefill", "topo"),
            worker_pod(ns, "prefill-old", "prefill", "topo"),
            worker_pod(ns, "decode-down", "decode", "topo"),
            worker_pod(ns, "slow-0", "decode", "other", model="slow/model"),
        ],
    )
    with contextlib.ExitStack() as stack:
        stack.enter_context(FakeWorker(*pods["prefill-new"]))
        legacy = stack.enter_context(FakeWorker(*pods["prefill-old"], mode="legacy"))
        slow = stack.enter_context(FakeWorker(*pods["slow-0"], mode="slow:6"))
        # decode-down has no server at all: connection refused on every attempt

        # a model whose only endpoint takes 6 s to answer: its status says Probing long before that,
        # so the reconcile returned without waiting for the HTTP call
        t0 = time.monotonic()
        client.create(DYNAMO_MODELS, dynamo_model(ns, "slow-lora", base="slow/model"))
        probing = wait_for(
            lambda: (
                condition(get(client, DYNAMO_MODELS, "slow-lora", ns), "EndpointsReady").get("reason")
                == "Probing"
            ),
            WAIT,
            "EndpointsReady=Probing",
        )
        assert probing and time.monotonic() - t0 < 5.5, "the reconcile waited for the slow endpoint"
        client.create(DYNAMO_MODELS, dynamo_model(ns, "my-lora"))

        st = wait_for(
            lambda: (
                (s := status_of(client, ns, "my-lora")).get("totalEndpoints") == 3
                and condition({"status": s}, "EndpointsReady").get("reason") == "NotReady"
                and s
            ),
            WAIT,
            "EndpointsReady=NotReady with 3 endpoints",
        )
        eps = {e["podName"]: e for e in st["endpoints"]}
        assert eps["prefill-new"]["ready"] is True
        assert eps["prefill-old"] == {
            "address": "http://{}:{}".format(*pods["prefill-old"]),
            "podName": "prefill-old",
            "ready": False,
            "loraFallbackCovered": True,
        }
        assert eps["decode-down"]["ready"] is False and "loraFallbackCovered" not in eps["decode-down"]
        assert st["readyEndpoints"] == 1 and st["loraFallbackCoveredEndpoints"] == 1
        assert len(legacy.posts()) == 1  # a 404 is an answer, not retried
        msg = condition({"status": st}, "EndpointsReady")["message"]
        assert "decode-down" in msg and "ConnectionRefusedError" in msg, msg
        wait_for(
            lambda: ("Warning", "NotReady") in {e[:2] for e in events_of(client, ns, "my-lora")},
            WAIT,
            "a Warning NotReady event",
        )
        text = describe(kube_cluster, "dm", "my-lora", ns)
        assert "NotReady" in text and "decode-down" in text and "Connection" in text, text
        # the slow endpoint answered in the meantime
        wait_for(
            lambda: status_of(client, ns, "slow-lora").get("readyEndpoints") == 1, WAIT, "slow-lora ready"
        )
        assert len(slow.posts()) == 1


def test_base_model_endpoints_follow_the_pods(client, ns, operator):
    client.create(DYNAMO_MODELS, dynamo_model(ns, "base", model_type="base"))
    wait_for(
        lambda: (
            condition(get(client, DYNAMO_MODELS, "base", ns), "ServicesFound").get("reason")
            == "NoServicesFound"
        ),
        WAIT,
        "ServicesFound=NoServicesFound",
    )
    pods = start_pods(client, ns, [worker_pod(ns, "w-0")])
    st = wait_for(
        lambda: (s := status_of(client, ns, "base")).get("totalEndpoints") == 1 and s, WAIT, "1 endpoint"
    )
    assert st["endpoints"] == [
        {"address": "http://{}:{}".format(*pods["w-0"]), "podName": "w-0", "ready": False}
    ]
    assert condition({"status": st}, "EndpointsReady")["reason"] == "EndpointsDiscovered"
    assert "finalizers" not in get(client, DYNAMO_MODELS, "base", ns)["metadata"]  # nothing to unload
    client.delete(PODS, "w-0", ns)
    wait_for(
        lambda: status_of(client, ns, "base").get("totalEndpoints") == 0,
        WAIT,
        "the endpoint to go with its pod",
    )
    wait_event_reasons(client, ns, "base", {"NoServicesFound", "ServicesFound"})


def test_endpoint_calls_are_bounded_and_run_off_the_caller():
    """No cluster needed: the HTTP side alone, against FakeWorkers on 127.0.0.1."""
    from dynamo_operator.controllers.dynamomodel import Prober, call_endpoint
    from dynamo_operator.runtime.controller import Request
    from dynamo_operator.tunables import ModelProbeTunables

    with FakeWorker("127.0.0.1", free_port(), mode="slow:3") as slow:
        t0 = time.monotonic()
        out = call_endpoint("POST", f"http://127.0.0.1:{slow.port}/v1/loras", {}, 0.3, 2, 0.05)
        assert not out.loaded and out.attempts == 2 and "timed out" in out.error, out
        assert time.monotonic() - t0 < 2.0  # 2 attempts x 0.3 s timeout + backoff, not 2 x 3 s

    done: list[Request] = []
    prober = Prober(ModelProbeTunables(request_timeout=2.0, attempts=3, backoff=0.05), on_done=done.append)
    try:
        with (
            FakeWorker("127.0.0.1", free_port()) as ok,
            FakeWorker("127.0.0.1", free_port(), mode="slow:1") as slow,
        ):
            refused = f"http://127.0.0.1:{free_port()}"
            calls = [
                (a, "POST", f"{a}/v1/loras", {"lora_name": "x"})
                for a in (f"http://127.0.0.1:{ok.port}", f"http://127.0.0.1:{slow.port}", refused)
            ]
            req, key = Request("ns", "m"), ("k",)
            t0 = time.monotonic()
            prober.submit(req, key, calls)
            prober.submit(req, key, calls)  # the same round is not started twice
            assert time.monotonic() - t0 < 0.2 and prober.running(req, key)
            wait_for(lambda: done, 10, "the round to finish")
            outcomes, _ = prober.latest(req, key)
            assert [outcomes[a].loaded for a, *_ in calls] == [True, True, False]
            assert outcomes[refused].attempts == 3 and "ConnectionRefusedError" in outcomes[refused].error
            assert len(ok.posts()) == 1 and done == [req] and prober.latest(req, ("other",)) is None
    finally:
        prober.shutdown()


def test_a_model_the_admission_rules_refuse_is_reported_not_probed(client, ns, operator):
    """Created without the webhook in the way: the controller applies the same rules and says why."""
    bad = dynamo_model(ns, "no-source")
    del bad["spec"]["source"]
    client.create(DYNAMO_MODELS, bad)
    c = wait_for(
        lambda: (
            (c := condition(get(client, DYNAMO_MODELS, "no-source", ns), "EndpointsReady")).get("reason")
            == "InvalidSpec"
            and c
        ),
        WAIT,
        "EndpointsReady=InvalidSpec",
    )
    assert "spec.source" in c["message"] and "s3://bucket/path" in c["message"], c
    assert "finalizers" not in get(client, DYNAMO_MODELS, "no-source", ns)["metadata"]


def test_endpoints_are_the_pods_of_a_graph_serving_the_base_model(client, ns, operator):
    """End to end with the operator's own pods: a graph whose worker has modelRef.name gets labelled pods,
    and a base DynamoModel lists them (address on the default system port 9090)."""
    from support.dgd import apply_dgd, wait_successful
    from support.graphs import component, dgd

    worker = component("Worker", replicas=2, modelRef={"name": BASE})
    apply_dgd(client, dgd(component("Frontend", "frontend"), worker, namespace=ns))
    wait_successful(client, ns, timeout=WAIT)
    client.create(DYNAMO_MODELS, dynamo_model(ns, "base", model_type="base"))
    st = wait_for(
        lambda: (s := status_of(client, ns, "base")).get("totalEndpoints") == 2 and s, WAIT, "2 endpoints"
    )
    pods = {
        p["metadata"]["name"]: p["status"]["podIP"]
        for p in client.list(
            PODS, ns, label_selector=f"{names.LABEL_BASE_MODEL_HASH}={names.model_hash(BASE)}"
        )["items"]
    }
    assert len(pods) == 2
    assert sorted((e["podName"], e["address"]) for e in st["endpoints"]) == sorted(
        (n, f"http://{ip}:9090") for n, ip in pods.items()
    )
    c = condition(get(client, DYNAMO_MODELS, "base", ns), "ServicesFound")
    assert (c["status"], c["reason"]) == ("True", "ServicesFound") and "g-worker" in c["message"], c
