"""The real node's lifecycle inside a ``LocalCluster`` of the ``node`` profile.

``prepare()`` runs before the control plane starts (the API server listens on the bridge address, so the
bridge must exist): it refuses beside another Kubernetes node of this machine (``foreign``), takes the
machine-wide lock, refuses when another live node of ours exists, tears down what a killed run left, records
the sysctls, creates the bridge, the guard and the node's cgroup root. ``start()`` runs once the control plane
is up: the guard opens the API server's, the kubelet's and the DNS ports to pods, then containerd, the image
imports, the kubelet, kube-proxy and the node DNS start as components of the cluster, it waits for the
Node to be Ready, then the node's storage (``storage``: local-path-provisioner and the default StorageClass)
is installed and waited for. ``finish()`` runs after the cluster stopped its components: the
complete teardown, and a check that nothing is left.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import cgroups, dns, kubelet, layout, network, preflight, runtime, storage, teardown

# Images every node imports besides the caller's: the sandbox, the storage provisioner and its helper Pods'
# shell (the operator image: Debian's /bin/sh and coreutils).
OWN_IMAGES = ("pause", "local-path-provisioner", storage.HELPER_RECIPE)
# Images the platform installed on the node runs (the chart with ``chart_values_args``, its helm test pod,
# the graphs of examples/mocker-*.yaml): what the tier, the demo and `dynamo-localcluster up --profile node`
# import.
PLATFORM_IMAGES = ("operator", "runtime", "nats", "etcd", "helm-test")
# The chart's values on the node: where each workload runs and from which image (every install, ct's too),
# then the tier's and the demo's own choices.
PLACEMENT_VALUES = Path(__file__).parent / "placement-values.yaml"
CHART_VALUES = Path(__file__).parent / "chart-values.yaml"


def chart_values_args() -> list[str]:
    """``helm install`` arguments of the platform installed on the node (the tier's and the demo's)."""
    return ["-f", str(PLACEMENT_VALUES), "-f", str(CHART_VALUES)]


class NodeError(RuntimeError):
    """The real node could not start; the message says why and what to do."""


@dataclass
class NodeImage:
    ref: str
    archive: Path


def built_image(recipe: str) -> NodeImage:
    """An image ``make image`` built (``.tools/images/<recipe>``): its reference and OCI archive."""
    from ..cluster import REPO_ROOT

    # DYNAMO_IMAGE_DIR_<RECIPE>: another build of the recipe (image/build.py --out), e.g. a deliberately
    # broken operator, to watch the real-node tier catch it.
    override = os.environ.get(f"DYNAMO_IMAGE_DIR_{recipe.upper()}")
    directory = Path(override) if override else REPO_ROOT / ".tools" / "images" / recipe
    try:
        meta = json.loads((directory / "image.json").read_text())
    except (OSError, ValueError) as e:
        raise NodeError(f"no {recipe} image in {directory}: build it with `make image` ({e})") from e
    return NodeImage(meta["ref"], directory / meta["ociArchive"])


@dataclass
class RealNode:
    cluster_dir: Path
    detached: bool = False
    images: list[NodeImage] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    state: teardown.State | None = None
    cleared: list[str] = field(default_factory=list)

    @property
    def config_dir(self) -> Path:
        return layout.ROOT / "config"

    # ---- before the control plane ----------------------------------------------------------------------
    def prepare(self) -> None:
        problems = preflight.problems(need_binaries=True)
        if problems:
            raise NodeError("cannot run a real node here: " + "; ".join(problems))
        layout.LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
        with open(layout.LOCK_FILE, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            previous = teardown.State.load()
            if previous is not None and previous.owner_alive():
                who = "a detached node (make demo)" if previous.detached else f"pid {previous.owner_pid}"
                raise NodeError(
                    f"a real node is already running on this machine (owner: {who}, cluster "
                    f"{previous.cluster_dir}); one node per machine: stop it first (make demo-down, or "
                    "`dynamo-localcluster node-clean` when its owner is gone)"
                )
            # What a killed run left (kept for the caller: the tests prove a start clears it).
            self.cleared = teardown.leftovers()
            left = teardown.teardown(previous)
            if left:
                raise NodeError("could not clear what an earlier real node left: " + "; ".join(left))
            self.state = teardown.State(
                owner_pid=None if self.detached else os.getpid(),
                owner_start=None if self.detached else teardown.process_start(os.getpid()),
                detached=self.detached,
                cluster_dir=str(self.cluster_dir),
                sysctls=network.read_sysctls(),
                nft_tables=network.nft_tables(),
            )
            self.state.save()
        if not self.detached:  # from here on, the owner's death tears the node down
            self.state.reaper_pid = _start_reaper(os.getpid(), self.cluster_dir / "logs" / "node-reaper.log")
            self.state.save()
        try:
            network.create_bridge()
            network.install_guard()
            # pod -> ClusterIP -> pod is routed on the bridge, and seen by kube-proxy's rules
            network.write_sysctl("net.bridge.bridge-nf-call-iptables", "1")
            cgroups.create()
        except (network.NetworkError, OSError) as e:
            self.finish()
            raise NodeError(f"setting up the pod network failed: {e}") from e

    # ---- after the control plane -----------------------------------------------------------------------
    def start(self, cluster, spawn: Callable, wait: Callable, timeout: float = 180.0) -> None:
        """``spawn(name, argv, env)`` and ``wait(component, what, check, timeout)`` are the cluster's own.
        The big images are imported while the kubelet registers (both take seconds)."""
        bin_dir = preflight.node_bin()
        self.config_dir.mkdir(parents=True, exist_ok=True)
        t0 = time.monotonic()
        config = runtime.write_configs(self.config_dir)
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}  # containerd finds its shim
        containerd = spawn("containerd", [str(bin_dir / "containerd"), f"--config={config}"], env)
        runtime.wait_ready(bin_dir, containerd.alive)
        self.timings["containerd"] = time.monotonic() - t0
        pause = built_image("pause")
        self.timings[f"import {pause.ref}"] = runtime.import_image(bin_dir, pause.archive, pause.ref)
        with ThreadPoolExecutor(1, thread_name_prefix="node-import") as pool:
            imports = pool.submit(self._import_all, bin_dir)
            self._start_node(cluster, bin_dir, spawn, wait, timeout)
            imports.result()
        self._start_storage(cluster, wait, timeout)
        assert self.state is not None
        self.state.pids = {c.name: c.pid for c in cluster.components if c.pid}
        self.state.save()

    def _import_all(self, bin_dir: Path) -> None:
        own = [built_image(recipe) for recipe in OWN_IMAGES if recipe != "pause"]
        refs = {image.ref for image in self.images}
        for image in [*self.images, *(i for i in own if i.ref not in refs)]:
            self.timings[f"import {image.ref}"] = runtime.import_image(bin_dir, image.archive, image.ref)

    def _start_storage(self, cluster, wait: Callable, timeout: float) -> None:
        t0 = time.monotonic()
        image, helper = built_image("local-path-provisioner").ref, built_image(storage.HELPER_RECIPE).ref
        with cluster.api_client() as api:
            storage.install(api, image, helper)
            wait(
                cluster.component("kubelet"),
                "the storage provisioner Ready",
                lambda: storage.provisioner_ready(api),
                timeout,
            )
        self.timings["storage provisioner Ready"] = time.monotonic() - t0

    def _start_node(self, cluster, bin_dir: Path, spawn: Callable, wait: Callable, timeout: float) -> None:
        ports = {name: cluster.free_node_port() for name in ("kubelet", "kubelet-healthz")}
        ports |= {name: cluster.free_node_port() for name in ("kube-proxy-healthz", "kube-proxy-metrics")}
        network.install_guard(pod_ports(cluster.ports["apiserver"], ports["kubelet"]))
        files = kubelet.write_all(self.config_dir, cluster.pki, cluster.server, ports)
        t1 = time.monotonic()
        kl = spawn("kubelet", kubelet.kubelet_argv(bin_dir, files))
        proxy = spawn("kube-proxy", kubelet.kube_proxy_argv(bin_dir, files))
        dns_server = spawn("node-dns", dns.argv(cluster.kubeconfig))
        wait(kl, "the real node Ready", lambda: self._node_ready(cluster), timeout)
        wait(proxy, "kube-proxy's first sync", lambda: _kube_proxy_synced(), timeout)
        wait(dns_server, "the node DNS", lambda: dns.answers(), 30)
        network.ensure_guard_first("iptables")
        network.ensure_guard_first("ip6tables")
        self.timings["kubelet to Ready"] = time.monotonic() - t1

    def _node_ready(self, cluster) -> bool:
        from kubernetes import client

        with cluster.api_client() as api:
            node = client.CoreV1Api(api).read_node(layout.NODE_NAME)
        return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])

    # ---- after the control plane stopped ---------------------------------------------------------------
    def finish(self) -> list[str]:
        """Tears everything down; returns what is still left (empty: clean)."""
        state = self.state or teardown.State.load()
        problems = teardown.teardown(state)
        if state is not None and state.reaper_pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(state.reaper_pid, 15)
        return problems + [p for p in teardown.leftovers() if p not in problems]


def pod_ports(apiserver: int, kubelet_port: int) -> network.PodPorts:
    """What a pod may reach on the host: the API server (the ``kubernetes`` Service's endpoint), the kubelet
    and the node DNS, on the node address; nothing else of this machine."""
    return [("tcp", apiserver), ("tcp", kubelet_port), ("udp", layout.DNS_PORT)]


def _kube_proxy_synced() -> bool:
    r = subprocess.run(["iptables", "-w", "-t", "nat", "-S", "KUBE-SERVICES"], capture_output=True, text=True)
    return r.returncode == 0 and layout.KUBERNETES_SERVICE_IP in r.stdout


def _start_reaper(owner: int, log: Path) -> int:
    """A process outside the owner's process group and session that tears the node down when the owner dies
    (a ``kill -9`` of the test run): the node never outlives its owner by more than the teardown."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dynamo_localcluster.realnode.reaper", "--owner", str(owner)],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return proc.pid
