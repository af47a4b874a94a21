"""Autoscaling for real: a HorizontalPodAutoscaler scales a mocker worker through its scaling adapter (DGDSA)
on a metric the worker itself exports, and the new worker serves on the real node.

The pipeline (docs/scaling.md, "Autoscaling on Dynamo's metrics"): the workers' own Prometheus endpoint on the
system port (``dynamo_component_requests_total{dynamo_endpoint="generate"}``, the Dynamo runtime's counter of
requests the worker handled) -> Prometheus (Debian's 2.42 binary, scraping the pods) -> prometheus-adapter
(v0.12.0, built from its Go module) serving ``custom.metrics.k8s.io`` as
``dynamo_component_requests_per_second`` -> kube-controller-manager's HPA controller -> the DGDSA's
``/scale`` -> the operator -> the worker Deployment on the node. Nothing stands in: every piece is the real
program, the load is real chat completions through the frontend Service.

One graph, two workers serving two model names behind one frontend: ``BusyWorker`` (model ``tiny``, which
the test loads) and ``IdleWorker`` (model ``idle``, never asked), each with its own adapter and HPA (target
1 request/s per pod, 1 to 2 replicas, no stabilization window). The busy worker scales to two Ready pods
under load and back to one when the load stops; the negative control, the idle worker whose metric stays at
zero, never scales up while its HPA reads that zero.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from dynamo_localcluster.cluster import HPA_SYNC_SECONDS
from dynamo_localcluster.realnode import layout
from dynamo_localcluster.realnode.metrics import CustomMetrics
from realnode_helpers import (
    SLOW,
    Platform,
    apply_doc,
    chat_completion,
    dgd_state,
    pod_ready,
    runtime_image,
    scratch_namespace,
    service_url,
)
from support import graphs
from support.poll import stays, wait_for

GRAPH = "scaling"
METRIC = "dynamo_component_requests_per_second"
REAL_NODE = {"nodeSelector": dict(layout.NODE_SELECTOR), "tolerations": [dict(layout.TOLERATION)]}
RULES = [
    {
        "seriesQuery": 'dynamo_component_requests_total{namespace!="",pod!="",dynamo_endpoint="generate"}',
        "resources": {"overrides": {"namespace": {"resource": "namespace"}, "pod": {"resource": "pod"}}},
        "name": {"matches": "^dynamo_component_requests_total$", "as": METRIC},
        "metricsQuery": (
            'sum(rate(<<.Series>>{<<.LabelMatchers>>,dynamo_endpoint="generate"}[20s])) by (<<.GroupBy>>)'
        ),
    }
]


def on_node(component: dict) -> dict:
    pod = component["podTemplate"]["spec"]
    pod["containers"][0]["imagePullPolicy"] = "Never"
    pod.update(REAL_NODE)
    return component


def scaling_graph() -> dict:
    image = runtime_image()
    frontend = on_node(graphs.component("Frontend", "frontend", replicas=1, image=image))
    # Ready as soon as it answers (the default probe waits 60 s first; test_graph.py proves the default):
    # the Service sends the load only to a Ready frontend, and the test is about the workers.
    frontend["podTemplate"]["spec"]["containers"][0]["readinessProbe"] = {
        "httpGet": {"path": "/health", "port": 8000},
        "periodSeconds": 2,
    }

    def worker(name: str, model: str) -> dict:
        return on_node(
            graphs.component(
                name,
                replicas=1,
                image=image,
                command=["python3", "-m", "dynamo.mocker"],
                args=["--model-path", "/models/tiny", "--model-name", model],
                scalingAdapter={},
            )
        )

    return graphs.dgd(
        frontend, worker("BusyWorker", "tiny"), worker("IdleWorker", "idle"), name=GRAPH, namespace=None
    )


def hpa(component: str) -> dict:
    """autoscaling/v2 on the component's adapter: 1 request/s per worker pod, 1 to 2 pods, acting at once."""
    now = {"stabilizationWindowSeconds": 0, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 5}]}
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": component.lower()},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "nvidia.com/v1alpha1",
                "kind": "DynamoGraphDeploymentScalingAdapter",
                "name": f"{GRAPH}-{component.lower()}",
            },
            "minReplicas": 1,
            "maxReplicas": 2,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": METRIC},
                        "target": {"type": "AverageValue", "averageValue": "1"},
                    },
                }
            ],
            "behavior": {"scaleUp": now, "scaleDown": now},
        },
    }


def start_graph(platform: Platform, ns: str) -> None:
    apply_doc(platform, ns, scaling_graph())


# started as soon as the platform is installed (conftest's ``platform``: realnode_helpers.start_ahead)
AHEAD = {"scale": start_graph}


@pytest.fixture(scope="module")
def scaling(platform: Platform):
    """The graph Ready on the node, the metrics pipeline up for its namespace, both HPAs applied."""
    gen = scratch_namespace(platform, "scale", start_graph)
    ns = next(gen)
    metrics = CustomMetrics(platform.cluster, [ns], RULES).start()
    try:
        wait_for(metrics.available, 120, "the custom metrics APIService Available", **SLOW)
        wait_for(
            lambda: dgd_state(platform.cluster, ns, GRAPH).get("state") == "successful",
            360,
            f"{GRAPH} successful",
            **{**SLOW, "interval": 2},
        )
        for component in ("BusyWorker", "IdleWorker"):
            apply_doc(platform, ns, hpa(component))
        yield ns
    finally:
        platform.kubectl("delete", "hpa", "--all", "-n", ns, check=False)
        metrics.stop()
        next(gen, None)


def adapter_replicas(platform: Platform, ns: str, component: str) -> int:
    out = platform.kubectl("get", "dgdsa", f"{GRAPH}-{component.lower()}", "-n", ns, "-o", "json")
    return int(json.loads(out)["spec"]["replicas"])


def ready_workers(platform: Platform, ns: str, component: str) -> list[dict]:
    selector = f"nvidia.com/dynamo-graph-deployment-name={GRAPH},nvidia.com/dynamo-component={component}"
    pods = json.loads(platform.kubectl("get", "pods", "-n", ns, "-l", selector, "-o", "json"))["items"]
    return [p for p in pods if pod_ready(p)]


def hpa_reading(platform: Platform, ns: str, name: str) -> float | None:
    """The metric value the HPA last read (None before its first successful read)."""
    st = json.loads(platform.kubectl("get", "hpa", name, "-n", ns, "-o", "json")).get("status") or {}
    for m in st.get("currentMetrics") or []:
        value = ((m.get("pods") or {}).get("current") or {}).get("averageValue")
        if value is not None:
            return _quantity(value)
    return None


def _quantity(value: str) -> float:
    return float(value[:-1]) / 1000 if value.endswith("m") else float(value)


class Load:
    """Chat completions for model ``tiny`` through the frontend Service, back to back, until stopped."""

    def __init__(self, url: str):
        self.url, self.sent, self.failed = url, 0, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                chat_completion(self.url)
                self.sent += 1
            except Exception:
                self.failed += 1
                self.stop.wait(0.5)  # not a wait: the load generator's pause after a failed request

    def __enter__(self) -> Load:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(35)


def test_a_worker_scales_up_under_load_and_down_after_on_its_own_metric(platform, scaling, record_property):
    ns = scaling
    wait_for(
        lambda: hpa_reading(platform, ns, "idleworker") is not None,
        120,
        "the idle HPA reading its metric",
        **SLOW,
    )
    assert hpa_reading(platform, ns, "idleworker") == 0.0
    url = service_url(platform.cluster, ns, f"{GRAPH}-frontend", 8000)
    started = time.monotonic()
    with Load(url) as load:
        wait_for(
            lambda: adapter_replicas(platform, ns, "BusyWorker") == 2,
            180,
            "the HPA to scale BusyWorker to 2",
            **SLOW,
        )
        up = time.monotonic() - started
        wait_for(
            lambda: len(ready_workers(platform, ns, "BusyWorker")) == 2,
            180,
            "two Ready BusyWorker pods",
            **SLOW,
        )
        ready = time.monotonic() - started
        assert all(
            p["spec"]["nodeName"] == layout.NODE_NAME for p in ready_workers(platform, ns, "BusyWorker")
        )
        # the negative control all along: the idle worker's metric stays at zero, it stays at one replica
        assert adapter_replicas(platform, ns, "IdleWorker") == 1
        assert (hpa_reading(platform, ns, "idleworker") or 0.0) == 0.0
    assert load.sent > 0, f"no completion came back ({load.failed} failed)"
    stopped = time.monotonic()
    wait_for(
        lambda: adapter_replicas(platform, ns, "BusyWorker") == 1,
        180,
        "the HPA to scale BusyWorker back to 1",
        **SLOW,
    )
    wait_for(
        lambda: len(ready_workers(platform, ns, "BusyWorker")) == 1, 120, "one BusyWorker pod left", **SLOW
    )
    down = time.monotonic() - stopped
    record_property("scale_up_seconds", round(up, 1))
    record_property("second_worker_ready_seconds", round(ready, 1))
    record_property("scale_down_seconds", round(down, 1))
    events = platform.kubectl("get", "events", "-n", ns, "--field-selector", "reason=Scaled", "-o", "json")
    messages = [e["message"] for e in json.loads(events)["items"]]
    assert any("BusyWorker" in m and "from 1 to 2" in m for m in messages), messages
    assert any("BusyWorker" in m and "from 2 to 1" in m for m in messages), messages


def test_a_worker_whose_metric_stays_low_does_not_scale_up(platform, scaling):
    """The negative control on its own: over a window longer than two HPA periods (the node profile's
    ``HPA_SYNC_SECONDS``) the idle worker's HPA keeps reading zero and its adapter keeps one replica."""
    ns = scaling
    window = 2 * HPA_SYNC_SECONDS + 5
    stays(
        lambda: adapter_replicas(platform, ns, "IdleWorker") == 1,
        window,
        "IdleWorker at one replica",
        interval=1,
    )
    assert hpa_reading(platform, ns, "idleworker") == 0.0
    assert len(ready_workers(platform, ns, "IdleWorker")) == 1
