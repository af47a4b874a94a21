"""The real-node tier: containers really run (``make test-realnode``; docs/realnode.md).

One real node per machine, so the tier is serial and shares one node for the session: the ``node`` profile of
the local control plane with the images ``make images`` built imported, and the chart installed for real on
it (``platform``). Collected by a plain ``pytest`` too, but skipped unless ``DYNAMO_REALNODE_TIER=1`` (the
Makefile sets it) and the machine can run a node (root, kernel features, Debian packages, built tools).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT, LocalCluster, sweep
from dynamo_localcluster.demo import RELEASE
from dynamo_localcluster.realnode import storage
from dynamo_localcluster.realnode.node import chart_values_args
from realnode_helpers import NAMESPACE, Platform, drop_ahead, kubectl, reproduced, start_ahead
from support import moduletimes
from support import realnode_lanes as lanes
from support.crds import LWS_CRD_FILES, wait_established

HERE = Path(__file__).resolve().parent
CLUSTER_DIR = REPO_ROOT / ".cache" / "test-clusters" / f"node-{os.getpid()}"
# Images only the tier runs, besides the platform's: the LeaderWorkerSet controller, the MPI engine image.
TIER_IMAGES = ("lws", "mpi")
GPU = "nvidia.com/gpu"
FAKE_GPUS = 4  # two multinode groups of 1 GPU a pod (MPI, vLLM), started ahead side by side


# The order the tier's modules run in (modules not named here run after them, by name). Why: the platform's
# graphs all start at once after ``helm install`` (``start_ahead``), so what runs first overlaps their
# start-up. First the modules that need no node-wide platform or come before it (``test_00_`` tears nodes
# down, ``test_01_`` installs its own releases, the claims and the image need only the node: in the guest
# lane they run while the owner's ``ct install`` waits on its releases); then those that start no graph;
# then the graphs whose pods are Ready in seconds (stub engines, workers without a frontend); then the
# checkpoint (a stall bound after its Job's pod is Ready) and the graphs behind a frontend, whose readiness
# probe first runs 60 s after start (seed 000); ``test_services`` last: it deletes the NATS and etcd pods
# every graph uses. In the owner lane ``support.realnode_lanes.EXCLUSIVE`` come after all the others.
MODULE_ORDER = (
    "test_00_crash_teardown",
    "test_01_ct_install",
    "test_storage_claims",
    "test_image",
    "test_platform",
    "test_host_guard",
    "test_multinode",
    "test_mpi",
    "test_model",
    "test_checkpoint",
    "test_bundled_graphs",
    "test_etcd_namespaces",
    "test_failover",
    "test_graph",
    "test_nats_namespaces",
    "test_scaling",
    "test_services",
)


def _stem(item: pytest.Item) -> str:
    return Path(str(item.path)).stem


def _module_rank(item: pytest.Item) -> tuple[bool, int, str]:
    """MODULE_ORDER's place; in the owner lane its ``EXCLUSIVE`` modules last (they wait for the guest)."""
    name = _stem(item)
    last = lanes.lane() == lanes.OWNER and name in lanes.EXCLUSIVE
    return (last, MODULE_ORDER.index(name) if name in MODULE_ORDER else len(MODULE_ORDER), name)


def pytest_configure(config: pytest.Config) -> None:
    """In a lane (``support.realnode_lanes``): say this process runs, and print the per-module seconds its
    split follows."""
    which = lanes.lane()
    if which:
        lanes.started(which)
        config.pluginmanager.register(moduletimes.ModuleTimes(), "realnode-moduletimes")


def pytest_unconfigure(config: pytest.Config) -> None:
    """A lane's end, however it ended (a failed fixture, ``pytest.exit``): the other lane stops waiting."""
    which = lanes.lane()
    if which:
        lanes.ended(which)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    which = lanes.lane()
    if which:  # the other lane's modules are not this process's
        other = [i for i in items if HERE in Path(str(i.path)).parents and not lanes.runs_in(_stem(i), which)]
        if other:
            config.hook.pytest_deselected(items=other)
            items[:] = [i for i in items if i not in other]
    mine = [i for i in items if HERE in Path(str(i.path)).parents]
    if not mine:
        return
    # reorder the tier's items among themselves (stable: a module's tests keep their order)
    slots = [n for n, i in enumerate(items) if HERE in Path(str(i.path)).parents]
    for n, item in zip(slots, sorted(mine, key=_module_rank), strict=True):
        items[n] = item
    reason = None
    if os.environ.get("DYNAMO_REALNODE_TIER") != "1":
        reason = "the real-node tier runs through `make test-realnode` (one node per machine, serial)"
    else:
        from dynamo_localcluster.realnode import preflight

        problems = preflight.problems()
        reason = f"this machine cannot run the real node: {problems[0]}" if problems else None
    for item in mine:
        item.add_marker(pytest.mark.realnode)
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """``make test`` starts this tier beside the checks and names a file their job leaves when they fail
    (``DYNAMO_STOP_WHEN``): the tier then ends before its next test, and the session's teardown still takes
    its node down. A test already running finishes (the longest, ``test_01_ct_install``, takes minutes)."""
    stop = os.environ.get("DYNAMO_STOP_WHEN")
    if stop and Path(stop).exists():
        pytest.exit(f"the checks beside this tier failed ({stop} exists): the tier stops", returncode=3)


@pytest.fixture(scope="session")
def built_images():
    """The images ``make images`` built (the tier's Makefile target builds them first)."""
    from dynamo_localcluster.realnode.node import built_image

    return {recipe: built_image(recipe) for recipe in ("operator", "runtime", "pause")}


@pytest.fixture(scope="session")
def fresh_operator_build(request, tmp_path_factory) -> Iterator[subprocess.Popen | None]:
    """A second build of the operator image from this commit, into a fresh directory, started at once so it
    runs while the node comes up; the reproducibility test compares its digest with the cached build's.
    None when that test is not selected (no build for nothing), or when these inputs were already rebuilt
    and compared within the day (``reproduced``): a warm run does not spend a minute of CPU proving it
    again; a fresh clone, every change to the image's inputs, and the first run of a day build twice."""
    from dynamo_localcluster.realnode.node import built_image

    if not any("test_image.py::test_two_builds" in i.nodeid for i in request.session.items):
        yield None
        return
    if reproduced(built_image("operator").archive.parent.resolve()):
        yield None
        return
    out = tmp_path_factory.mktemp("fresh-image")
    log = open(out.parent / "fresh-build.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "image" / "build.py"), "operator", "--out", str(out / "build")],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    proc.out_dir = out / "build"  # type: ignore[attr-defined]
    proc.log_path = Path(log.name)  # type: ignore[attr-defined]
    yield proc
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    log.close()
    shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="session")
def node(built_images, fresh_operator_build) -> Iterator[LocalCluster]:
    """The ``node`` profile with the operator and runtime images imported; its teardown must leave nothing."""
    from dynamo_localcluster.realnode.node import PLATFORM_IMAGES, built_image

    if lanes.lane() == lanes.GUEST:  # the owner lane's node, once it runs
        cluster = LocalCluster.from_state(Path(lanes.wait_for_node()["cluster_dir"]))
        assert cluster is not None, "the owner lane's node left no state"
        yield cluster
        return
    images = [(built_image(r).ref, built_image(r).archive) for r in (*PLATFORM_IMAGES, *TIER_IMAGES)]
    cluster = LocalCluster(CLUSTER_DIR, profile="node", nodes=2, node_images=images)
    cluster.start(timeout=300)
    if lanes.lane() == lanes.OWNER:
        lanes.announce_node(cluster.dir)
    try:
        yield cluster
    finally:
        try:
            if lanes.lane() == lanes.OWNER:  # the guest's tests run on this node until it ends
                lanes.wait_for_guest()
        finally:  # a guest that outlives the wait is reported, and the node stops all the same
            cluster.stop()
            leaked = sweep(CLUSTER_DIR)
            assert not cluster.node_leftovers, f"the real node left: {cluster.node_leftovers}"
            assert not leaked, f"processes left running after the node cluster stopped: {leaked}"


def _watch_jobs(cluster: LocalCluster, seen: dict[str, dict], stop: threading.Event) -> None:
    """Records every Job's status in the release namespace while ``helm install`` runs: the hook Jobs are
    deleted once they succeed (hook-delete-policy), so their completion is only visible meanwhile."""
    from kubernetes import client, watch

    with cluster.api_client() as api:
        batch = client.BatchV1Api(api)
        while not stop.is_set():
            w = watch.Watch()
            try:
                for ev in w.stream(batch.list_namespaced_job, NAMESPACE, timeout_seconds=2):
                    job = ev["object"]
                    seen[job.metadata.name] = {
                        "succeeded": job.status.succeeded or 0,
                        "conditions": [(c.type, c.status) for c in job.status.conditions or []],
                        "node": None,
                    }
                    if stop.is_set():
                        break
            except Exception:
                time.sleep(0.2)  # not a wait: the Job watch thread's pause before re-opening its stream


def _install_lws_controller(node: LocalCluster) -> None:
    """The LeaderWorkerSet controller as a real Pod (realnode/lws.py): its objects, not waited for
    (``_lws_controller_ready``)."""
    from dynamo_localcluster.realnode import lws
    from dynamo_localcluster.realnode.node import built_image

    with node.api_client() as api:
        lws.install(api, built_image("lws").ref)


def _lws_controller_ready(node: LocalCluster) -> None:
    """The LWS controller serving its admission (``lws.ready``): before any graph makes a LeaderWorkerSet.
    Waited for after ``helm install``, which makes none: its certificate comes meanwhile. (The operator
    detects LWS by its CRDs, established before the install.)"""
    from dynamo_localcluster.realnode import lws
    from support.poll import wait_for

    with node.api_client() as api:
        wait_for(
            lambda: lws.ready(api),
            180,
            lambda: (
                "the LWS controller serving its admission\n"
                + kubectl(node, "get", "pods", "-n", lws.NAMESPACE, check=False)
                + kubectl(
                    node, "logs", "-n", lws.NAMESPACE, f"deploy/{lws.DEPLOYMENT}", "--tail=30", check=False
                )
            ),
            interval=1.0,
            retry_on=(Exception,),
        )


@pytest.fixture(scope="session")
def platform(node: LocalCluster, fake_gpus: int, request: pytest.FixtureRequest) -> Iterator[Platform]:
    """``helm install`` of charts/platform on the real node: the operator runs as Pods from the imported
    image, the hook Jobs run as Jobs. The node advertises its fake GPUs first (``fake_gpus``): graphs
    started ahead may ask for them. In the guest lane: the owner's install (``support.realnode_lanes``)."""
    if lanes.lane() == lanes.GUEST:
        yield from _guest_platform(node, request)
        return
    for crd in LWS_CRD_FILES:
        kubectl(node, "create", "-f", str(crd))
    for crd in LWS_CRD_FILES:
        wait_established(node.api_client(), yaml.safe_load(crd.read_text())["metadata"]["name"])
    _install_lws_controller(node)
    seen: dict[str, dict] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_jobs, args=(node, seen, stop), daemon=True)
    watcher.start()
    started = time.monotonic()
    argv = ["helm", "install", RELEASE, str(REPO_ROOT / "charts" / "platform"), "-n", NAMESPACE]
    argv += ["--create-namespace", *chart_values_args(), "--wait", "--timeout", "420s"]
    try:
        with node.api_client() as api:  # a claim that never binds fails the install at once, named
            r = storage.run_watching_claims(argv, node.env, api, NAMESPACE, timeout=480)
    except storage.ClaimError as e:
        pytest.fail(f"helm install on the real node cannot finish: {e}")
    took = time.monotonic() - started
    stop.set()
    watcher.join(10)
    if r.returncode != 0:
        pods = kubectl(node, "get", "pods,jobs", "-A", "-o", "wide", check=False)
        pytest.fail(f"helm install on the real node failed:\n{r.stdout}{r.stderr}\n{pods}")
    _lws_controller_ready(node)
    if lanes.lane() == lanes.OWNER:
        lanes.announce_platform(took)
    yield from _with_graphs_ahead(Platform(node, took, seen), request)


def _guest_platform(node: LocalCluster, request: pytest.FixtureRequest) -> Iterator[Platform]:
    """The guest lane's view of the owner's install: its hook Jobs were watched by the owner (whose
    ``test_platform`` checks them)."""
    took = lanes.wait_for_platform()["install_seconds"]
    yield from _with_graphs_ahead(Platform(node, took, {}), request)


def _with_graphs_ahead(platform: Platform, request: pytest.FixtureRequest) -> Iterator[Platform]:
    # the graphs of the modules this session runs start now, side by side (realnode_helpers.start_ahead)
    modules = {item.module for item in request.session.items}
    start_ahead(platform, {k: v for m in modules for k, v in getattr(m, "AHEAD", {}).items()})
    try:
        yield platform
    finally:
        drop_ahead(platform)


@pytest.fixture(scope="module", autouse=True)
def _exclusive(request: pytest.FixtureRequest) -> None:
    """The owner lane's ``EXCLUSIVE`` modules start once the guest lane has ended
    (``support.realnode_lanes``)."""
    if lanes.lane() == lanes.OWNER and Path(str(request.path)).stem in lanes.EXCLUSIVE:
        lanes.wait_for_guest()


@pytest.fixture(scope="session")
def fake_gpus(node: LocalCluster) -> int:
    """A stand-in, for the multinode launches that need a GPU count (vLLM, TensorRT-LLM): the real node
    advertises ``FAKE_GPUS`` ``nvidia.com/gpu`` as an extended resource (a status patch, as the Kubernetes
    documentation advertises one; no device plugin, and the kubelet's device manager leaves resources no
    plugin registered alone), so the scheduler places pods that ask for them. No container touches a GPU."""
    from dynamo_localcluster.realnode import layout
    from support.poll import wait_for

    status = {"capacity": {GPU: str(FAKE_GPUS)}, "allocatable": {GPU: str(FAKE_GPUS)}}
    patch = json.dumps({"status": status})
    kubectl(node, "patch", "node", layout.NODE_NAME, "--subresource=status", "--type=merge", "-p", patch)

    def advertised() -> bool:
        got = json.loads(kubectl(node, "get", "node", layout.NODE_NAME, "-o", "json"))["status"]
        return got["allocatable"].get(GPU) == str(FAKE_GPUS)

    wait_for(advertised, 30, f"the real node to advertise {FAKE_GPUS} {GPU}", interval=1.0)
    return FAKE_GPUS
