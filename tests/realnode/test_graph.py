"""A real Dynamo graph, deployed by our operator on the real node: the frontend and the mocker engine from
``ai-dynamo`` 1.6.1 find each other through Kubernetes discovery (DynamoWorkerMetadata), pass the probes the
operator renders by default (seed 000), and answer ``POST /v1/chat/completions`` through the frontend Service.

If the operator rendered a probe, a port, a command or the discovery account wrong, the pods never become
Ready (or restart), the graph never becomes ``successful`` and no completion comes back: these tests fail.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from realnode_helpers import (
    SLOW,
    Platform,
    apply_doc,
    chat_completion,
    deploy,
    dgd_state,
    diagnosis,
    example,
    first_completion,
    is_completion,
    pod_list,
    pod_ready,
    scratch_namespace,
    service_url,
    start,
)
from support.poll import wait_for

# The negative control's wrong port: nothing in the runtime image listens there (the worker serves its
# health on the system port, 9090).
WRONG_PORT = 9191
CONTROL = "probe-control"


def control_graph() -> dict:
    """A worker exactly like mocker-agg's (same image, command, startup and liveness probes) but whose
    readiness probe is rendered on a port nothing serves (a user override, which the operator renders as
    given)."""
    doc = example("mocker-agg.yaml")
    doc["metadata"] = {"name": CONTROL}
    (worker,) = [c for c in doc["spec"]["components"] if c["name"] == "MockerWorker"]
    worker["name"] = "ControlWorker"
    doc["spec"]["components"] = [worker]
    (main,) = worker["podTemplate"]["spec"]["containers"]
    main["readinessProbe"] = {
        "httpGet": {"path": "/health", "port": WRONG_PORT},
        "periodSeconds": 1,
        "failureThreshold": 1,
    }
    return doc


def start_control(platform: Platform, ns: str) -> None:
    apply_doc(platform, ns, control_graph())


# started as soon as the platform is installed (conftest's ``platform``: realnode_helpers.start_ahead); the
# negative control in a namespace of its own (its worker would add to the DynamoWorkerMetadata agg's tests
# count)
AHEAD = {"graph": ["mocker-agg.yaml"], "disagg": ["mocker-disagg.yaml"], "probe-control": start_control}


@pytest.fixture(scope="module")
def disagg_ns(platform: Platform):
    """mocker-disagg's own namespace: its workers would add to the DynamoWorkerMetadata agg's tests count."""
    yield from scratch_namespace(platform, "disagg")


@pytest.fixture(scope="module")
def control_ns(platform: Platform):
    """The negative control's namespace (``control_graph``, started ahead)."""
    yield from scratch_namespace(platform, "probe-control", start_control)


@pytest.fixture(scope="module")
def graph_ns(platform: Platform, disagg_ns):
    """mocker-agg's namespace; both graphs start at once (``start``), each test then waits for its own."""
    for ns in scratch_namespace(platform, "graph"):
        start(platform, ns, "mocker-agg.yaml")
        start(platform, disagg_ns, "mocker-disagg.yaml")
        yield ns


def test_mocker_agg_answers_a_chat_completion(platform, graph_ns, record_property):
    name, ready_after = deploy(platform, graph_ns, "mocker-agg.yaml")
    doc, _ = first_completion(platform, graph_ns, name)
    assert is_completion(doc), doc
    record_property("graph_ready_seconds", round(ready_after, 1))
    # Kubernetes discovery for real: the worker published itself as the discovery account lets it.
    dwm = json.loads(platform.kubectl("get", "dynamoworkermetadatas", "-n", graph_ns, "-o", "json"))["items"]
    (worker,) = pod_list(platform, graph_ns, "MockerWorker")
    assert [d["metadata"]["name"] for d in dwm] == [worker["metadata"]["name"]]
    assert worker["spec"]["serviceAccountName"] == f"{name}-k8s-service-discovery"


def test_the_rendered_defaults_pass_against_the_real_processes(platform, graph_ns):
    for component, kinds in (("Frontend", {"livenessProbe", "readinessProbe"}), ("MockerWorker", None)):
        (pod,) = pod_list(platform, graph_ns, component)
        (main,) = [c for c in pod["spec"]["containers"] if c["name"] == "main"]
        probes = {k for k in ("livenessProbe", "readinessProbe", "startupProbe") if k in main}
        assert probes == (kinds or {"livenessProbe", "readinessProbe", "startupProbe"}), probes
        (status,) = [s for s in pod["status"]["containerStatuses"] if s["name"] == "main"]
        assert status["ready"] and status["restartCount"] == 0, status  # probes passed, liveness never failed
        assert {"name": "shared-memory", "mountPath": "/dev/shm"} in main["volumeMounts"]
    (worker,) = pod_list(platform, graph_ns, "MockerWorker")
    # the 8Gi memory-backed /dev/shm is really mounted in the running container (kubectl exec: API -> kubelet)
    shm = platform.kubectl(
        "exec", "-n", graph_ns, worker["metadata"]["name"], "-c", "main", "--", "df", "/dev/shm"
    )
    assert "tmpfs" in shm and "8388608" in shm, shm
    env = platform.kubectl("exec", "-n", graph_ns, worker["metadata"]["name"], "-c", "main", "--", "env")
    assert "DYN_SYSTEM_PORT=9090" in env and "DYN_DISCOVERY_BACKEND=kubernetes" in env


def test_a_worker_scaled_to_two_serves_from_both(platform, graph_ns):
    name = "mocker-agg"
    patch = {"spec": {"components": [{"name": "MockerWorker", "replicas": 2}]}}
    platform.kubectl(
        "patch",
        "dgd",
        name,
        "-n",
        graph_ns,
        "--type=merge",
        "-p",
        json.dumps(_full_patch(platform, graph_ns, name, patch)),
    )
    wait_for(
        lambda: len([p for p in pod_list(platform, graph_ns, "MockerWorker") if pod_ready(p)]) == 2,
        180,
        "two ready workers",
        **{**SLOW, "interval": 2},
    )
    wait_for(
        lambda: len(json.loads(platform.kubectl("get", "dwm", "-n", graph_ns, "-o", "json"))["items"]) == 2,
        60,
        "two DynamoWorkerMetadata",
        **SLOW,
    )
    url = service_url(platform.cluster, graph_ns, f"{name}-frontend", 8000)
    workers = [p["metadata"]["name"] for p in pod_list(platform, graph_ns, "MockerWorker")]

    def served_by_both() -> bool:
        for _ in range(4):
            assert is_completion(chat_completion(url))
        return all(_served(platform, graph_ns, w) for w in workers)

    wait_for(served_by_both, 120, "requests served by both workers", **{**SLOW, "interval": 1})


def test_mocker_disagg_answers_a_chat_completion(platform, graph_ns, disagg_ns):
    name, _ = deploy(platform, disagg_ns, "mocker-disagg.yaml")
    doc, _ = first_completion(platform, disagg_ns, name)
    assert is_completion(doc), doc
    for component in ("MockerPrefillWorker", "MockerDecodeWorker"):
        (pod,) = pod_list(platform, disagg_ns, component)
        assert _served(platform, disagg_ns, pod["metadata"]["name"]), component


def test_a_wrongly_rendered_probe_fails_the_tier(platform, graph_ns, control_ns):
    """The negative control of this module: its checks are not vacuous. A worker exactly like mocker-agg's
    but whose readiness probe is rendered on a port nothing serves (``control_graph``): the kubelet really
    probes it and fails, the pod never becomes Ready, the graph never becomes ``successful``, so the wait
    every graph test starts with (``deploy``) fails on it; mocker-agg's worker, with the default probe, is
    Ready."""
    ns = control_ns
    try:
        pod = wait_for(
            lambda: _probe_failure(platform, ns),
            180,
            lambda: f"the kubelet to report the wrong readiness probe\n{diagnosis(platform, ns)}",
            **SLOW,
        )

        def successful() -> bool:
            return dgd_state(platform.cluster, ns, CONTROL).get("state") == "successful"

        with pytest.raises(AssertionError, match="timed out"):
            wait_for(successful, 10, f"{CONTROL} to become successful", **SLOW)
        (bad,) = pod_list(platform, ns, "ControlWorker")
        assert bad["metadata"]["name"] == pod and not pod_ready(bad), bad["status"]
        (status,) = [s for s in bad["status"]["containerStatuses"] if s["name"] == "main"]
        # only readiness fails: a restart is allowed only where the kubelet says the default liveness probe
        # (failure threshold 1) caused it, as on a loaded CI machine (this worker restarted twice, exit 137)
        kills = _liveness_kills(platform, ns, pod) if status["restartCount"] else {}
        assert sum(kills.values()) >= status["restartCount"], (status, kills, diagnosis(platform, ns))
        assert status["started"] or status["restartCount"], status
        good = pod_list(platform, graph_ns, "MockerWorker", graph="mocker-agg")
        assert good and all(pod_ready(p) for p in good), [p["status"] for p in good]
    finally:
        platform.kubectl("delete", "dgd", CONTROL, "-n", ns, "--wait=false", check=False)


def _probe_failure(platform: Platform, ns: str) -> str | None:
    """The control pod's name once the kubelet recorded its readiness probe failing on the wrong port."""
    events = json.loads(
        platform.kubectl("get", "events", "-n", ns, "--field-selector", "reason=Unhealthy", "-o", "json")
    )["items"]
    for e in events:
        name = e["involvedObject"].get("name", "")
        message = e.get("message", "")
        wrong = "Readiness probe failed" in message and f":{WRONG_PORT}/" in message
        if name.startswith(f"{CONTROL}-") and wrong:
            return name
    return None


def _liveness_kills(platform: Platform, ns: str, pod: str) -> dict[str, int]:
    """The kubelet's Events that say it restarted ``pod``'s container for its liveness probe, with their
    counts."""
    events = json.loads(
        platform.kubectl(
            "get", "events", "-n", ns, "--field-selector", f"involvedObject.name={pod}", "-o", "json"
        )
    )["items"]
    return {
        e["message"]: e.get("count") or 1
        for e in events
        if e.get("reason") == "Killing" and "liveness probe" in e.get("message", "")
    }


def _served(platform: Platform, ns: str, pod: str) -> bool:
    r = subprocess.run(
        ["kubectl", "logs", "-n", ns, pod, "-c", "main"],
        env=platform.cluster.env,
        capture_output=True,
        text=True,
    )
    return "request completed" in r.stdout


def _full_patch(platform: Platform, ns: str, name: str, patch: dict) -> dict:
    """A merge patch replaces lists: carry the other components over, with the patched one's fields."""
    dgd = json.loads(platform.kubectl("get", "dgd.v1beta1.nvidia.com", name, "-n", ns, "-o", "json"))
    changes = {c["name"]: c for c in patch["spec"]["components"]}
    components = [{**c, **changes.get(c["name"], {})} for c in dgd["spec"]["components"]]
    return {"spec": {"components": components}}
