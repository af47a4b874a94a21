"""Multinode graphs on the LeaderWorkerSet pathway whose rewritten launches really run on the real node.

The operator renders a LeaderWorkerSet and its headless Service (docs/multinode.md); the LeaderWorkerSet
controller (built from ``sigs.k8s.io/lws`` v0.7.0, a real Pod with its webhooks and their certificates:
``realnode/lws.py``) makes the group's pods from it (names, hostname and subdomain, labels, the ``LWS_*``
variables). Two launches run through it:

- SGLang over 2 nodes: ``python3 -m dynamo.sglang`` gains ``--dist-init-addr $(LWS_LEADER_ADDRESS):29500
  --nnodes 2 --node-rank <0 | $(LWS_WORKER_INDEX)>``;
- vLLM over 2 nodes with the multiprocessing executor (annotation
  ``nvidia.com/vllm-distributed-executor-backend: mp``, tensor parallel 2 over 1 GPU a node):
  ``--distributed-executor-backend mp --nnodes 2 --master-addr $(LWS_LEADER_ADDRESS) --master-port 29500
  --node-rank <0 | $(LWS_WORKER_INDEX)>``, ``--headless`` on the worker.

Stand-ins, said plainly:

- the engines: no GPU, no SGLang and no vLLM here, so ``dynamo.sglang`` and ``dynamo.vllm`` are one stub
  (``stub/rendezvous_engine.py``, from a ConfigMap over the runtime image's ``dynamo`` package) that parses
  the rewritten arguments and forms the group the way the engine's distributed init does (rank 0 listens on
  the rendezvous port, rank 1 resolves the leader's address and connects); the leader keeps the worker
  probes the operator rendered and reports healthy only once the other rank joined;
- the GPUs: the vLLM worker asks for ``nvidia.com/gpu`` (the operator needs the count to choose the
  launch), which the real node advertises as an extended resource it does not have (``fake_gpus``); no
  container touches a GPU.

Everything else is real: the operator's rendering and admission, the LWS controller and its admission, the
kubelet expanding ``$(VAR)``, the node DNS resolving the leader's pod name through the headless Service's
subdomain, the TCP connection between the two pods, and the leader's probes.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest
from realnode_helpers import (
    SLOW,
    Platform,
    apply_with_stub,
    diagnosis,
    made_by_the_controller,
    main_log,
    operator_made_lws,
    pod_json,
    pod_ready,
    runtime_image,
    save,
    scratch_namespace,
    stub_graph,
)
from support import graphs
from support.poll import wait_for

STUB_FILES = {"init": "", "main": (Path(__file__).parent / "stub" / "rendezvous_engine.py").read_text()}
IMAGE = runtime_image()
RENDEZVOUS_PORT = 29500  # SGLang's --dist-init-addr port and vLLM's --master-port (render/ports.py)


def rendezvous_graph(name: str, backend: str, worker: dict, annotations: dict | None = None) -> dict:
    """``worker`` on the real node, ``dynamo.<backend>`` the rendezvous stub."""
    files = [
        {"key": "init", "path": "dynamo/__init__.py"},
        {"key": "init", "path": f"dynamo/{backend}/__init__.py"},
        {"key": "main", "path": f"dynamo/{backend}/__main__.py"},
    ]
    return stub_graph(name, backend, worker, files, annotations=annotations)


def sglang_graph() -> dict:
    worker = graphs.component(
        "SglangWorker",
        replicas=1,
        image=IMAGE,
        command=["python3", "-m", "dynamo.sglang"],
        args=["--model-path", "/models/tiny"],
        nodes=2,
    )
    return rendezvous_graph("sglang-mn", "sglang", worker)


def vllm_graph() -> dict:
    worker = graphs.component(
        "VllmWorker",
        replicas=1,
        image=IMAGE,
        command=["python3", "-m", "dynamo.vllm"],
        args=["--model", "/models/tiny", "--tensor-parallel-size", "2"],
        gpus=1,
        nodes=2,
    )
    mp = {"nvidia.com/vllm-distributed-executor-backend": "mp"}
    return rendezvous_graph("vllm-mn", "vllm", worker, mp)


def start_sglang(platform: Platform, ns: str) -> None:
    apply_with_stub(platform, ns, sglang_graph(), STUB_FILES)


def start_vllm(platform: Platform, ns: str) -> None:
    apply_with_stub(platform, ns, vllm_graph(), STUB_FILES)


# started as soon as the platform is installed (conftest's ``platform``: realnode_helpers.start_ahead); the
# vLLM group's 2 fake GPUs beside the MPI graph's 2 (``FAKE_GPUS``)
AHEAD = {"mn-sglang": start_sglang, "mn-vllm": start_vllm}


@pytest.fixture
def sglang_ns(platform: Platform):
    yield from scratch_namespace(platform, "mn-sglang", start_sglang)


@pytest.fixture
def vllm_ns(platform: Platform, fake_gpus):
    yield from scratch_namespace(platform, "mn-vllm", start_vllm)


@pytest.fixture
def mn_ns(platform: Platform):
    yield from scratch_namespace(platform, "multinode")


def group_forms(platform: Platform, ns: str, lws: dict) -> tuple[str, str, str]:
    """Waits for the controller's group 0 (the leader ``<lws>-0`` and its worker ``<lws>-0-1``) to form:
    both pods Ready (the leader's /health once rank 1 joined), rank 1 joined the leader by its name.
    Returns (leader, worker, the leader's address)."""
    name = lws["metadata"]["name"]
    leader, worker = f"{name}-0", f"{name}-0-1"
    address = f"{leader}.{name}.{ns}"

    def group_state() -> str:
        listing = platform.kubectl("get", "pods", "-n", ns, "-o", "wide", check=False)
        logs = f"leader:\n{main_log(platform, ns, leader)}\nworker:\n{main_log(platform, ns, worker)}"
        return f"{listing}\n{diagnosis(platform, ns)}\n{logs}"

    wait_for(
        lambda: all(pod_ready(pod_json(platform, ns, p)) for p in (leader, worker)),
        240,
        lambda: f"both pods Ready (the leader's /health once rank 1 joined)\n{group_state()}",
        **SLOW,
    )
    # the group formed over the pod network: the leader saw rank 1 join, rank 1 reached the leader by name
    wait_for(lambda: "rank 1 joined from" in main_log(platform, ns, leader), 30, group_state, **SLOW)
    joined = f"rank 1 joined leader {address}:{RENDEZVOUS_PORT} (welcome)"
    wait_for(lambda: joined in main_log(platform, ns, worker), 30, group_state, **SLOW)
    (status,) = pod_json(platform, ns, leader)["status"]["containerStatuses"]
    assert status["restartCount"] == 0, status  # the leader's rendered probes passed
    return leader, worker, address


def engine_argv(platform: Platform, ns: str, pod: str) -> list[str]:
    """The arguments the engine was given: the operator's rewriting after the kubelet's $(VAR) expansion."""
    log = main_log(platform, ns, pod)
    return json.loads(log.splitlines()[0])["argv"]


def test_sglang_multinode_launches_find_their_leader(platform, sglang_ns):
    mn_ns = sglang_ns
    lws = operator_made_lws(platform, mn_ns, "sglang-mn-sglangworker-0")
    leader, worker_pod, address = group_forms(platform, mn_ns, lws)
    for pod, rank in ((leader, 0), (worker_pod, 1)):
        assert engine_argv(platform, mn_ns, pod) == [
            "--model-path",
            "/models/tiny",
            "--dist-init-addr",
            f"{address}:{RENDEZVOUS_PORT}",
            "--nnodes",
            "2",
            "--node-rank",
            str(rank),
        ]
    made_by_the_controller(platform, mn_ns, lws, (leader, worker_pod))


def test_vllm_multinode_mp_launches_find_their_leader(platform, vllm_ns):
    mn_ns = vllm_ns
    lws = operator_made_lws(platform, mn_ns, "vllm-mn-vllmworker-0")
    leader, worker_pod, address = group_forms(platform, mn_ns, lws)
    common = ["--model", "/models/tiny", "--tensor-parallel-size", "2", "--distributed-executor-backend"]
    common += ["mp", "--nnodes", "2", "--master-addr", address, "--master-port", str(RENDEZVOUS_PORT)]
    assert engine_argv(platform, mn_ns, leader) == [*common, "--node-rank", "0"]
    assert engine_argv(platform, mn_ns, worker_pod) == [*common, "--node-rank", "1", "--headless"]
    made_by_the_controller(platform, mn_ns, lws, (leader, worker_pod))


def test_the_lws_controllers_admission_refuses_what_it_cannot_run(platform, mn_ns, tmp_path):
    """Negative control: the LeaderWorkerSet controller's own validating webhook, which the API server
    reaches through its Service with the certificate the controller made, refuses a LeaderWorkerSet of size
    0 (the CRD's schema admits it)."""
    from dynamo_localcluster.realnode import lws

    bad = copy.deepcopy(lws.ADMISSION_PROBE)
    bad["metadata"]["name"] = "no-members"
    bad["spec"]["leaderWorkerTemplate"]["size"] = 0
    save(tmp_path / "bad.json", bad)
    r = subprocess.run(
        ["kubectl", "create", "-n", mn_ns, "-f", str(tmp_path / "bad.json")],
        env=platform.cluster.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode != 0, r.stdout
    assert 'admission webhook "vleaderworkerset.kb.io" denied the request' in r.stderr, r.stderr
    assert "size must be equal or greater than 1" in r.stderr, r.stderr
