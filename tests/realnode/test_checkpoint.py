"""Checkpoints on the real node: what happens to a checkpoint-enabled graph when its Job really runs.

CRIU cannot run here (Debian's criu 3.17.1 stops in `criu check` on this kernel, 6.18: "vdso: Unexpected
rt vDSO area bounds ... Could not initialize kernel features detection"), and this platform has no snapshot
agent, so no running process is ever captured. What these tests prove instead is that the operator never
waits silently (docs/checkpoints.md, "When a checkpoint Job does not finish"):

- the real mocker engine (the component's own pod, run by the checkpoint Job on the node) becomes Ready
  and, as any serving engine, never exits: within ``checkpoint_stall_seconds`` (60 s, the default the
  chart's operator runs with) the DynamoCheckpoint says ``CheckpointNotCaptured``, the graph's Ready
  condition and a Warning Event on the graph repeat it, and the WaitForCheckpoint worker's DCD says why it
  is at zero replicas;
- upstream's snapshot recipes (vLLM ``agg_snapshot_tp8``, TensorRT-LLM ``snapshot-restore``, in the
  shapes of ``support.upstream_shapes``) applied unchanged in a namespace without checkpoint storage: the
  TensorRT-LLM Job's pod is refused (its RuntimeClass ``nvidia`` does not exist here: ``JobPodNotCreated``
  with the Job controller's own message, read under the chart's RBAC), the vLLM Job's pod cannot be
  scheduled (``JobPodUnschedulable``, the scheduler's message). Neither waits silently;
- the positive control: a checkpoint Job that does finish. Its target container is a stand-in for a
  capture (named so: it writes a marker file where a capture would write, ``$DYN_CHECKPOINT_PATH``, and
  exits 0, through the component's ``checkpoint.job.podTemplate``): the checkpoint becomes Ready, the held
  worker starts on the node with ``DYN_CHECKPOINT_HASH`` set and finds the artifact on the claim.

The checkpoint claim is a hostPath PersistentVolume on the node (a stand-in for shared storage), bound by
name. Every graph is applied at once, so the module costs one stall bound, not three.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime

import pytest
from dynamo_localcluster.realnode import layout
from dynamo_operator.controllers.lifecycle import CHECKPOINTS
from dynamo_operator.controllers.store import DGD as GRAPHS
from dynamo_operator.render import checkpoint as rc
from dynamo_operator.render import checkpoint_stall as cs
from dynamo_operator.render import names
from dynamo_operator.render.graph_checkpoint import ANN_AUTO
from dynamo_operator.runtime.client import EVENTS, ResourceClient
from realnode_helpers import SLOW, STARTED, Platform, apply_doc, pod_ready, runtime_image, scratch_namespace
from support import graphs
from support.crs import condition, events_of
from support.dgd import get
from support.lifecycle import checkpoint_storage
from support.poll import wait_for
from support.upstream_shapes import checkpoint_cases

REAL_NODE = {"nodeSelector": dict(layout.NODE_SELECTOR), "tolerations": [dict(layout.TOLERATION)]}
STALL_SECONDS = 60.0  # the operator's default checkpoint_stall_seconds (the chart runs it unchanged)
REPORT_WITHIN = STALL_SECONDS + 30.0  # the bound, plus a reconcile and a status write on a busy machine
HELD, CAPTURED = "ckpt-held", "ckpt-captured"
CAPTURE = (
    'set -e; mkdir -p "$DYN_CHECKPOINT_PATH"; echo "$DYN_CHECKPOINT_ID" >"$DYN_CHECKPOINT_PATH/captured"'
)


def worker_graph(name: str, job_template: dict | None = None) -> dict:
    """One mocker worker on the real node whose checkpoint the graph creates and waits for."""
    checkpoint = {"enabled": True, "startupPolicy": "WaitForCheckpoint"}
    if job_template is not None:
        checkpoint["job"] = {"podTemplate": job_template}
    worker = graphs.component(
        "Worker",
        replicas=1,
        image=runtime_image(),
        command=["python3", "-m", "dynamo.mocker"],
        args=["--model-path", "/models/tiny", "--model-name", "tiny"],
        experimental={"checkpoint": checkpoint},
    )
    pod = worker["podTemplate"]["spec"]
    pod["containers"][0]["imagePullPolicy"] = "Never"
    pod.update(REAL_NODE)
    # the mocker stands in for a vLLM engine: the backend a graph-made checkpoint's identity needs
    return graphs.dgd(worker, name=name, namespace=None, backendFramework="vllm")


def capture_stand_in() -> dict:
    """The checkpoint Job's target container replaced by a stand-in capture: writes where a capture writes
    and exits 0 (what a self-capturing engine would do once its checkpoint is on the claim)."""
    return {"spec": {"containers": [{"name": "main", "command": ["sh", "-c", CAPTURE], "args": []}]}}


@pytest.fixture(scope="module")
def client(platform: Platform):
    with platform.cluster.api_client() as api:
        yield ResourceClient(api)


def start_with_storage(platform: Platform, ns: str) -> None:
    """The checkpoint storage (a hostPath volume under the node's directory) and both worker graphs."""
    host = layout.ROOT / "test-volumes" / ns  # removed with the node
    host.mkdir(parents=True)
    os.chmod(host, 0o777)  # the runtime image runs as 1000:1000
    with platform.cluster.api_client() as api:
        checkpoint_storage(ResourceClient(api), ns, str(host))
    for doc in (worker_graph(HELD), worker_graph(CAPTURED, capture_stand_in())):
        apply_doc(platform, ns, doc)


def start_recipes(platform: Platform, ns: str) -> None:
    """Upstream's snapshot recipes, unchanged, in a namespace without checkpoint storage."""
    for doc, _ in checkpoint_cases().values():
        doc = json.loads(json.dumps(doc))
        doc["metadata"].pop("namespace", None)
        apply_doc(platform, ns, doc)


# started as soon as the platform is installed (conftest's ``platform``: realnode_helpers.start_ahead): the
# module then costs what remains of one stall bound
AHEAD = {"ckpt": start_with_storage, "ckpt-bare": start_recipes}


@pytest.fixture(scope="module")
def applied(platform: Platform):
    """Every graph of the module applied at once: (namespace with storage, namespace without, when the
    latter's graphs were applied)."""
    with_storage = scratch_namespace(platform, "ckpt", start_with_storage)
    bare = scratch_namespace(platform, "ckpt-bare", start_recipes)
    ns, bare_ns = next(with_storage), next(bare)
    yield ns, bare_ns, STARTED[bare_ns]
    for gen in (with_storage, bare):
        next(gen, None)
    platform.kubectl("delete", "pv", f"chrek-{ns}", "--wait=false", check=False)


def graph_checkpoint(client, ns: str, graph: str) -> dict | None:
    """The automatic DynamoCheckpoint a graph made (its graph label)."""
    items = client.list(CHECKPOINTS, ns, label_selector=f"{names.LABEL_DGD_NAME}={graph}")
    found = [c for c in items.get("items") or [] if (c["metadata"].get("annotations") or {}).get(ANN_AUTO)]
    return found[0] if found else None


def reported(client, ns: str, graph: str, reason: str) -> dict | None:
    """The graph's checkpoint once its Ready condition carries ``reason``."""
    obj = graph_checkpoint(client, ns, graph)
    return obj if condition(obj, "Ready").get("reason") == reason else None


def graph_ready_naming(client, ns: str, graph: str, text: str) -> dict | None:
    """The graph's Ready condition once its message contains ``text``."""
    ready = condition(get(client, GRAPHS, graph, ns), "Ready")
    return ready if text in ready.get("message", "") else None


def dcd_naming(platform: Platform, ns: str, graph: str, text: str) -> dict | None:
    """The graph's one DCD once its Available message contains ``text``."""
    found = dcd(platform, ns, graph)
    return found if text in condition(found, "Available").get("message", "") else None


def _timestamp(rfc3339: str) -> datetime:
    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00"))


def first_event(client, ns: str, name: str, reason: str) -> datetime | None:
    """When the first Warning Event ``reason`` about ``name`` was recorded (its ``firstTimestamp``)."""
    times = [
        _timestamp(e.get("firstTimestamp") or e["eventTime"])
        for e in client.list(EVENTS, ns).get("items") or []
        if (e.get("involvedObject") or {}).get("name") == name
        and e.get("type") == "Warning"
        and e.get("reason") == reason
    ]
    return min(times) if times else None


def listed(platform: Platform, kind: str, ns: str, selector: str) -> list[dict]:
    return json.loads(platform.kubectl("get", kind, "-n", ns, "-l", selector, "-o", "json"))["items"]


def job_pods(platform: Platform, ns: str, checkpoint: str) -> list[dict]:
    return listed(platform, "pods", ns, f"{rc.LABEL_CHECKPOINT}={checkpoint}")


def dcd(platform: Platform, ns: str, graph: str) -> dict:
    (only,) = listed(platform, "dcd", ns, f"{names.LABEL_DGD_NAME}={graph}")
    return only


def test_a_serving_engine_nothing_captures_is_named_on_the_checkpoint_and_the_graph(
    platform, client, applied, record_property
):
    ns, _, _ = applied
    ckpt = wait_for(lambda: graph_checkpoint(client, ns, HELD), 120, "the graph's DynamoCheckpoint", **SLOW)
    name = ckpt["metadata"]["name"]
    # the checkpoint Job really runs the component's pod on the node: the mocker starts and is Ready
    pod = wait_for(
        lambda: next((p for p in job_pods(platform, ns, name) if pod_ready(p)), None),
        180,
        "the checkpoint Job's mocker pod Ready on the node",
        **SLOW,
    )
    assert pod["spec"]["nodeName"] == layout.NODE_NAME, pod["spec"].get("nodeName")
    ready_at = _timestamp(condition(pod, "Ready")["lastTransitionTime"])  # the kubelet's Ready transition
    obj = wait_for(
        lambda: reported(client, ns, HELD, cs.R_NOT_CAPTURED),
        REPORT_WITHIN + 30,
        "CheckpointNotCaptured on the checkpoint",
        **SLOW,
    )
    # at most this long after Ready; at least the bound: the controller says so only once it has lasted that
    # long. Timed from the pod's Ready transition to the report's Warning Event (recorded with it), both by
    # the cluster's clock: the graphs started ahead, so the test may look long after either. (Not by the
    # condition's own time: its status, False, did not change since the checkpoint's first condition.)
    reported_at = wait_for(
        lambda: first_event(client, ns, name, cs.R_NOT_CAPTURED),
        60,
        "the CheckpointNotCaptured Event",
        **SLOW,
    )
    took = (reported_at - ready_at).total_seconds()
    c = condition(obj, "Ready")
    record_property("not_captured_reported_after_ready_seconds", round(took, 1))
    assert took <= REPORT_WITHIN, took
    assert f"has been Ready for more than {STALL_SECONDS:.0f}s" in c["message"], c
    assert pod["metadata"]["name"] in c["message"] and "no snapshot agent" in c["message"], c
    assert "its deadline (3600s after it started)" in c["message"]
    assert obj["status"]["phase"] == "Creating" and c["status"] == "False"
    assert ("Warning", cs.R_NOT_CAPTURED) in {e[:2] for e in events_of(client, ns, name, "DynamoCheckpoint")}
    # the graph: its Ready condition and an Event name the checkpoint's cause (status pacing: within 30 s)
    ready = wait_for(
        lambda: graph_ready_naming(client, ns, HELD, cs.R_NOT_CAPTURED),
        60,
        "the graph's Ready message",
        **SLOW,
    )
    assert ready["reason"] == "waiting_for_checkpoint", ready
    wait_for(
        lambda: any(
            r == "CheckpointStalled" and cs.R_NOT_CAPTURED in m for _, r, m in events_of(client, ns, HELD)
        ),
        60,
        "a CheckpointStalled Event on the graph",
        **SLOW,
    )
    # the held worker: zero replicas, and its DCD says why
    held = wait_for(
        lambda: dcd_naming(platform, ns, HELD, cs.R_NOT_CAPTURED), 60, "the DCD's message", **SLOW
    )
    assert held["spec"]["replicas"] == 0 and condition(held, "Available")["reason"] == "WaitingForCheckpoint"
    # reported, not acted on: the Job and its engine still run
    assert any(pod_ready(p) for p in job_pods(platform, ns, name))


def test_upstreams_snapshot_recipes_never_wait_silently(client, applied, record_property):
    _, bare, started = applied
    graphs_by_reason = {
        "qwen3-0-6b-trtllm-snapshot-restore": (cs.R_NOT_CREATED, 'RuntimeClass "nvidia" not found'),
        "vllm-agg-snapshot-tp8": (cs.R_UNSCHEDULABLE, 'persistentvolumeclaim "chrek-pvc" not found'),
    }
    for graph, (reason, cause) in graphs_by_reason.items():
        obj = wait_for(
            lambda graph=graph, reason=reason: reported(client, bare, graph, reason),
            REPORT_WITHIN + 60,
            f"{reason} on {graph}'s checkpoint",
            **SLOW,
        )
        c = condition(obj, "Ready")
        assert cause in c["message"], c
        ready = wait_for(
            lambda graph=graph, cause=cause: graph_ready_naming(client, bare, graph, cause),
            60,
            f"{graph}'s Ready message",
            **SLOW,
        )
        assert ready["reason"] == "waiting_for_checkpoint", ready
        record_property(f"{graph}_reported_seconds", round(time.monotonic() - started, 1))


def test_a_checkpoint_job_that_finishes_releases_the_held_worker(platform, client, applied):
    ns, _, _ = applied
    obj = wait_for(
        lambda: reported(client, ns, CAPTURED, "CheckpointReady"), 240, "the checkpoint Ready", **SLOW
    )
    cid = obj["status"]["checkpointID"]
    assert obj["status"]["phase"] == "Ready"

    def worker_ready() -> dict | None:
        pods = listed(
            platform, "pods", ns, f"{names.LABEL_DGD_NAME}={CAPTURED},{names.LABEL_COMPONENT}=Worker"
        )
        return next(
            (p for p in pods if pod_ready(p) and rc.LABEL_CHECKPOINT not in p["metadata"]["labels"]), None
        )

    pod = wait_for(worker_ready, 240, "the released worker Ready on the node", **SLOW)
    env = platform.kubectl("exec", "-n", ns, pod["metadata"]["name"], "-c", "main", "--", "env")
    assert f"DYN_CHECKPOINT_HASH={cid}" in env and "SKIP_WAIT_FOR_CHECKPOINT=true" in env, env
    # the artifact the Job wrote is where a restore looks for it: $DYN_CHECKPOINT_PATH/<hash>
    marker = platform.kubectl(
        "exec", "-n", ns, pod["metadata"]["name"], "-c", "main", "--", "cat", f"/checkpoints/{cid}/captured"
    )
    assert marker.strip() == cid
    assert dcd(platform, ns, CAPTURED)["spec"]["replicas"] == 1
