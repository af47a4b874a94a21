"""A multinode graph whose rewritten launch commands really run on the real node and find their leader.

SGLang over 2 nodes on the LeaderWorkerSet pathway: the operator rewrites ``python3 -m dynamo.sglang`` with
``--dist-init-addr $(LWS_LEADER_ADDRESS):29500 --nnodes 2 --node-rank <0 | $(LWS_WORKER_INDEX)>``
(docs/multinode.md) and renders a LeaderWorkerSet and its headless Service. Two stand-ins, said plainly:

- the engine: no GPU and no SGLang here, so ``dynamo.sglang`` is a stub (``stub/sglang_main.py``, from a
  ConfigMap over the runtime image's ``dynamo`` package) that parses the rewritten arguments and forms the
  group the way SGLang's distributed init does (rank 0 listens on the rendezvous port, rank 1 resolves the
  leader's address and connects); the leader keeps the worker probes the operator rendered and reports
  healthy only once the other rank joined;
- the LeaderWorkerSet controller: its image is not reachable here either, so the test makes the group's
  two pods from the LeaderWorkerSet the operator rendered, as that controller does (names, hostname and
  subdomain, labels, the ``LWS_*`` variables, owned by the LeaderWorkerSet).

Everything else is real: the operator's rendering and admission, the kubelet expanding ``$(VAR)``, the node
DNS resolving the leader's pod name through the headless Service's subdomain, the TCP connection between
the two pods, and the leader's probes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from dynamo_localcluster.realnode import layout
from realnode_helpers import SLOW, Platform, pod_ready, runtime_image, save, scratch_namespace
from support import graphs
from support.poll import wait_for

STUB = Path(__file__).parent / "stub" / "sglang_main.py"
IMAGE = runtime_image()
GRAPH = "sglang-mn"
LWS_NAME = f"{GRAPH}-sglangworker-0"  # the operator's name for the component's first (only) group
LWS_LABELS = "leaderworkerset.sigs.k8s.io"
LWS_RESOURCE = "leaderworkersets.leaderworkerset.x-k8s.io"
REAL_NODE = {"nodeSelector": dict(layout.NODE_SELECTOR), "tolerations": [dict(layout.TOLERATION)]}


@pytest.fixture
def mn_ns(platform: Platform):
    yield from scratch_namespace(platform, "multinode")


def sglang_graph() -> dict:
    """SGLang over 2 nodes (the LeaderWorkerSet pathway: no Grove), on the real node, ``dynamo.sglang`` the
    stub (its files from the ConfigMap, first on PYTHONPATH)."""
    files = [
        {"key": "init", "path": "dynamo/__init__.py"},
        {"key": "init", "path": "dynamo/sglang/__init__.py"},
        {"key": "main", "path": "dynamo/sglang/__main__.py"},
    ]
    worker = graphs.component(
        "SglangWorker",
        replicas=1,
        image=IMAGE,
        command=["python3", "-m", "dynamo.sglang"],
        args=["--model-path", "/models/tiny"],
        env=[{"name": "PYTHONPATH", "value": "/stub"}],
        nodes=2,
    )
    pod = worker["podTemplate"]["spec"]
    (main,) = pod["containers"]
    main["imagePullPolicy"] = "Never"
    main["volumeMounts"] = [{"name": "stub-engine", "mountPath": "/stub", "readOnly": True}]
    pod["volumes"] = [{"name": "stub-engine", "configMap": {"name": "stub-engine", "items": files}}]
    pod.update(REAL_NODE)
    no_grove = {"annotations": {"nvidia.com/enable-grove": "false"}}
    return graphs.dgd(worker, name=GRAPH, namespace=None, metadata=no_grove, backendFramework="sglang")


def lws_pods(lws: dict, ns: str) -> list[dict]:
    """The pods the LeaderWorkerSet controller makes of group 0: the leader ``<lws>-0`` and workers
    ``<lws>-0-<i>``, each its own hostname under the subdomain ``<lws>`` (the headless Service), with the
    variables it adds to every container."""
    name = lws["metadata"]["name"]
    template = lws["spec"]["leaderWorkerTemplate"]
    size = int(template["size"])
    leader = f"{name}-0"
    owner = {
        "apiVersion": lws["apiVersion"],
        "kind": lws["kind"],
        "name": name,
        "uid": lws["metadata"]["uid"],
        "controller": True,
    }
    pods = []
    for index in range(size):
        t = copy.deepcopy(template["leaderTemplate"] if index == 0 else template["workerTemplate"])
        pod_name = leader if index == 0 else f"{leader}-{index}"
        md = t.get("metadata") or {}
        labels = {
            **(md.get("labels") or {}),
            f"{LWS_LABELS}/name": name,
            f"{LWS_LABELS}/group-index": "0",
            f"{LWS_LABELS}/worker-index": str(index),
        }
        spec = t["spec"]
        spec.update(hostname=pod_name, subdomain=name)
        env = [
            {"name": "LWS_LEADER_ADDRESS", "value": f"{leader}.{name}.{ns}"},
            {"name": "LWS_GROUP_SIZE", "value": str(size)},
            {"name": "LWS_WORKER_INDEX", "value": str(index)},
        ]
        for c in spec["containers"]:
            c["env"] = env + (c.get("env") or [])
        meta = {"name": pod_name, "labels": labels, "ownerReferences": [owner]}
        if md.get("annotations"):
            meta["annotations"] = md["annotations"]
        pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
    return pods


def _pod(platform: Platform, ns: str, name: str) -> dict:
    return json.loads(platform.kubectl("get", "pod", "-n", ns, name, "-o", "json"))


def _log(platform: Platform, ns: str, name: str) -> str:
    return platform.kubectl("logs", "-n", ns, name, "-c", "main", check=False)


def test_sglang_multinode_launches_find_their_leader(platform, mn_ns, tmp_path):
    stub = {"init": "", "main": STUB.read_text()}
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "stub-engine"}, "data": stub}
    for name, doc in (("stub.json", config_map), ("graph.json", sglang_graph())):
        save(tmp_path / name, doc)
        platform.kubectl("apply", "-n", mn_ns, "-f", str(tmp_path / name))
    lws = wait_for(
        lambda: json.loads(platform.kubectl("get", LWS_RESOURCE, "-n", mn_ns, LWS_NAME, "-o", "json")),
        120,
        f"the operator to render LeaderWorkerSet {LWS_NAME}",
        **SLOW,
    )
    pods = lws_pods(lws, mn_ns)
    for pod in pods:
        save(tmp_path / f"{pod['metadata']['name']}.json", pod)
        platform.kubectl("create", "-n", mn_ns, "-f", str(tmp_path / f"{pod['metadata']['name']}.json"))
    leader, worker = (p["metadata"]["name"] for p in pods)

    def diagnosis() -> str:
        listing = platform.kubectl("get", "pods", "-n", mn_ns, "-o", "wide", check=False)
        logs = f"leader:\n{_log(platform, mn_ns, leader)}\nworker:\n{_log(platform, mn_ns, worker)}"
        return f"{listing}\n{logs}"

    wait_for(
        lambda: all(pod_ready(_pod(platform, mn_ns, p)) for p in (leader, worker)),
        240,
        lambda: f"both pods Ready (the leader's /health once rank 1 joined)\n{diagnosis()}",
        **{**SLOW, "interval": 2},
    )
    address = f"{leader}.{LWS_NAME}.{mn_ns}"
    for pod, rank in ((leader, 0), (worker, 1)):
        log = _log(platform, mn_ns, pod)
        argv = json.loads(log.splitlines()[0])["argv"]
        # the operator's rewriting, with the kubelet's $(VAR) expansion: what the engine was given
        assert argv == [
            "--model-path",
            "/models/tiny",
            "--dist-init-addr",
            f"{address}:29500",
            "--nnodes",
            "2",
            "--node-rank",
            str(rank),
        ], log
    # the group formed over the pod network: the leader saw rank 1 join, rank 1 reached the leader by name
    wait_for(lambda: "rank 1 joined from" in _log(platform, mn_ns, leader), 30, diagnosis, **SLOW)
    joined = f"rank 1 joined leader {address}:29500 (welcome)"
    wait_for(lambda: joined in _log(platform, mn_ns, worker), 30, diagnosis, **SLOW)
    (status,) = _pod(platform, mn_ns, leader)["status"]["containerStatuses"]
    assert status["restartCount"] == 0, status  # the leader's rendered probes passed
