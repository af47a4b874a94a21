"""A real Kubernetes control plane as local processes, on 127.0.0.1 only.

Profiles:
- ``api``: etcd + kube-apiserver. Ready in seconds; for operator, CRD and webhook integration tests.
- ``cluster``: adds kube-controller-manager, kube-scheduler and kwok with fake nodes, so Deployments
  get Pods that become Running and Ready, Jobs complete and helm test pods finish.
- ``node``: the ``cluster`` profile plus a real kubelet node (``realnode``): containers really run there,
  on a guarded bridge with no way out; the API server listens on the bridge address (for the pods) instead
  of loopback. Root only, one per machine.

Why hand-rolled instead of kwokctl: we need every address on loopback (kwok's default node IP is this
machine's real gateway), pod IPs from 127.0.0.0/8, processes tied to the test session so none
outlives it, and per-component logs in one directory; that is a page of flags, not a dependency.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import fcntl
import ipaddress
import json
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import pki as pki_mod

REPO_ROOT = Path(__file__).resolve().parents[2]
# Service ClusterIPs are loopback too: the apiserver dials a Service's ClusterIP for service-referenced
# webhooks and conversion, and a 10.x ClusterIP would leave this machine through its gateway. From
# 127.96.0.0/16 such a dial can only ever reach (or be refused by) this machine.
SERVICE_CIDR = "127.96.0.0/16"
# Pod IPs come from a loopback range: nothing may ever route to a fake pod off this machine.
POD_CIDR = "127.1.0.0/16"
LOOPBACK = "127.0.0.1"
PROFILES = ("api", "cluster", "node")
NODE_COMPONENTS = ("containerd", "kubelet", "kube-proxy", "node-dns")
# How often kube-controller-manager's HPA controller reads metrics on the node profile (its default: 15 s):
# a test-bed setting, so the real-node autoscaling tests see a decision in seconds (test_scaling.py).
HPA_SYNC_SECONDS = 5

# kwok's default Stages we keep, by file (relative to the module's kustomize/stage directory).
KWOK_STAGES = [
    "node/fast/node-initialize.yaml",
    "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "pod/fast/pod-ready.yaml",
    "pod/fast/pod-complete.yaml",
    "pod/fast/pod-delete.yaml",
]

# Without a real node every pod has a loopback address (kwok's, the network rule), which Endpoints and
# EndpointSlice validation refuse: their controllers would retry each Service's write for the cluster's
# whole life, with a Warning Event each time (measured in the main stream's first ten minutes: 1195 refused
# Endpoints writes, 575 refused EndpointSlice writes, 2600 Event writes). Nothing on such a cluster can use
# what they would write; the node profile keeps them (its pods are real).
KWOK_ONLY_CONTROLLERS = ",".join(
    ["*", "-endpoints-controller", "-endpointslice-controller", "-endpointslice-mirroring-controller"]
)

# Helm test pods are bare pods (no Job owner), which kwok's pod-complete Stage never finishes.
HELM_TEST_STAGE = {
    "apiVersion": "kwok.x-k8s.io/v1alpha1",
    "kind": "Stage",
    "metadata": {"name": "pod-helm-test-complete"},
    "spec": {
        "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
        "selector": {
            "matchExpressions": [
                {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
                {"key": ".status.phase", "operator": "In", "values": ["Running"]},
                {
                    "key": '.metadata.annotations["helm.sh/hook"]',
                    "operator": "In",
                    "values": ["test", "test-success"],
                },
            ]
        },
        "next": {
            "statusTemplate": (
                "{{ $now := Now }}\n"
                "phase: Succeeded\n"
                "containerStatuses:\n"
                "{{ range .spec.containers }}\n"
                "- name: {{ .name | Quote }}\n"
                "  image: {{ .image | Quote }}\n"
                "  ready: false\n"
                "  restartCount: 0\n"
                "  state:\n"
                "    terminated:\n"
                "      exitCode: 0\n"
                "      reason: Completed\n"
                "      startedAt: {{ $now | Quote }}\n"
                "      finishedAt: {{ $now | Quote }}\n"
                "{{ end }}\n"
            )
        },
    },
}

# Writes only, one event each when the response is complete: what the fault suite needs (who wrote what,
# when, and whether it was accepted) at a cost a burst of writes does not notice.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived", "ResponseStarted", "Panic"],
    "rules": [
        {"level": "Metadata", "verbs": ["create", "update", "patch", "delete", "deletecollection"]},
        {"level": "None"},
    ],
}


class ClusterError(RuntimeError):
    """The control plane could not be started; the message names the component and its log."""


def tools_bin() -> Path:
    """Where the pinned tools are: $DYNAMO_TOOLS_BIN, else the checkout's .tools/bin."""
    env = os.environ.get("DYNAMO_TOOLS_BIN")
    path = Path(env) if env else REPO_ROOT / ".tools" / "bin"
    if not (path / "kube-apiserver").exists():
        raise ClusterError(f"no kube-apiserver in {path}: run `make tools` (tools/build-tools.sh) first")
    return path.resolve()


def kwok_stage_dir(bin_dir: Path) -> Path:
    return bin_dir.parent / "kwok-stages"


# Listening ports come from below the kernel's ephemeral range. A port the kernel hands out for ``bind(0)``
# is one it may also give, a moment later, to any outgoing connection as its local port (kubectl, helm and
# every client of a busy suite open thousands); the component then fails with "address already in use"
# (seen once: an etcd peer listener, in a loaded `make test`). Below the range only another listener can
# take it, and the bind test below sees those.
LISTEN_PORTS = (10000, 32767)


def _ephemeral_low(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> int:
    try:
        return int(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


# A picked port is bound by its user seconds, sometimes a minute, later (a fault plane's webhook URL, a
# release's ports fixed when it is described). The bind test alone cannot see a port another process of the
# same run has picked and not yet bound: two picked the same one and the later bind failed (seen: a webhook
# replica's "[Errno 98] Address already in use" in a loaded `make test`). So every pick is written down, one
# file a port, and for ``RESERVE_SECONDS`` no picker of this user takes it again.
PORT_RESERVATIONS = Path(
    os.environ.get("DYNAMO_PORT_RESERVATIONS", f"/tmp/dynamo-platform-ports-{os.getuid()}")
)
RESERVE_SECONDS = 900.0


@contextlib.contextmanager
def _reservations():
    """The reservation directory, locked against the other pickers (None when it cannot be used: the bind
    test alone then decides, as before)."""
    try:
        PORT_RESERVATIONS.mkdir(mode=0o700, parents=True, exist_ok=True)
        lock = open(PORT_RESERVATIONS / ".lock", "a")  # noqa: SIM115 (closed below, after the flock)
    except OSError:
        yield None
        return
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield PORT_RESERVATIONS


def _reserved(directory: Path | None, port: int, now: float) -> bool:
    if directory is None:
        return False
    try:
        return now - (directory / str(port)).stat().st_mtime < RESERVE_SECONDS
    except OSError:
        return False


def _reserve(directory: Path | None, port: int) -> None:
    if directory is not None:
        with contextlib.suppress(OSError):
            (directory / str(port)).write_text(f"{os.getpid()}\n")


def free_port(host: str = LOOPBACK) -> int:
    """A port on ``host`` nobody listens on and no picker of this machine's user took in the last
    ``RESERVE_SECONDS``, outside the ephemeral range (see ``LISTEN_PORTS``)."""
    low, high = LISTEN_PORTS[0], min(LISTEN_PORTS[1], _ephemeral_low() - 1)
    pick = random.SystemRandom()
    with _reservations() as directory:
        now = time.time()
        for _ in range(200) if high > low else ():
            port = pick.randint(low, high)
            if _reserved(directory, port, now):
                continue
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                try:
                    s.bind((host, port))
                except OSError:
                    continue
            _reserve(directory, port)
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # no room below the range: the old way
        s.bind((host, 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """Runs in the child before exec: the kernel SIGKILLs it when the spawning process dies,
    so a crashed or killed test session leaves no control-plane process behind."""
    pr_set_pdeathsig = 1
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


_spawner: ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


def _from_long_lived_thread(fn: Callable[[], None]) -> None:
    """Run ``fn`` (which forks a component) on a thread that lives as long as the process.

    PR_SET_PDEATHSIG fires when the *thread* that forked the child exits, not the process: a component
    restarted from a short-lived thread (a fault injected in the middle of a burst) would be SIGKILLed the
    moment that thread ended. The main thread is fine as it is."""
    global _spawner
    if threading.current_thread() is threading.main_thread():
        fn()
        return
    with _spawner_lock:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(1, thread_name_prefix="localcluster-spawner")
    _spawner.submit(fn).result()


@dataclass
class Component:
    name: str
    argv: list[str]
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    pid: int | None = None

    def start(self, tie_to_parent: bool, env: dict[str, str] | None = None) -> None:
        if tie_to_parent:
            _from_long_lived_thread(lambda: self._start(True, env))
        else:
            self._start(False, env)

    def _start(self, tie_to_parent: bool, env: dict[str, str] | None) -> None:
        out = open(self.log, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent if tie_to_parent else None,
                env=env,
            )
        finally:
            out.close()
        self.pid = self.proc.pid

    def alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        return self.pid is not None and _pid_alive(self.pid)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); read its state.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _stop_pid(pid: int, proc: subprocess.Popen[bytes] | None, timeout: float = 10.0) -> None:
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if proc is not None:
                if proc.poll() is not None:
                    return
            elif not _pid_alive(pid):
                return
            time.sleep(0.05)


@dataclass
class LocalCluster:
    """One control plane in one directory. ``start()`` then ``stop()``; or use as a context manager."""

    dir: Path
    profile: str = "api"
    nodes: int = 2
    tie_to_parent: bool = True
    # Opt-in apiserver audit log of every write (verb, user agent, response code, timestamps) at
    # logs/audit.log: the fault suite reads it to prove what the apiserver accepted from whom, the benchmarks
    # count the operator's writes from it, independently of the operator's own bookkeeping.
    audit: bool = False
    # The audit policy when ``audit`` is on (default AUDIT_POLICY, writes only); the RBAC test logs every
    # request of the chart's ServiceAccounts to prove each granted rule is used.
    audit_policy: dict | None = None
    # Extra kube-apiserver flags (the RBAC test enables OwnerReferencesPermissionEnforcement).
    apiserver_args: tuple[str, ...] = ()
    components: list[Component] = field(default_factory=list)
    ports: dict[str, int] = field(default_factory=dict)
    # ``node`` profile: images imported into the real node's containerd, as (reference, OCI archive).
    node_images: list[tuple[str, Path]] = field(default_factory=list)
    node: object | None = None  # realnode.RealNode on the node profile
    node_leftovers: list[str] = field(default_factory=list)
    # GOGC of the control plane's Go processes and of the Go tools run through ``env`` (kubectl, helm, ct).
    # The test bed's bound is CPU (docs/testing.md), and a third to a sixth of a test API server's CPU went
    # to its garbage collector at Go's default of 100; 400 spends memory this machine has instead. None:
    # Go's default (the benchmarks, whose numbers stay comparable with their earlier runs).
    gogc: int | None = 400

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {PROFILES}, not {self.profile!r}")
        self.dir = Path(self.dir).resolve()
        if self.profile == "node" and self.node is None:
            from .realnode.node import NodeImage, RealNode

            images = [NodeImage(ref, Path(archive)) for ref, archive in self.node_images]
            self.node = RealNode(self.dir, detached=not self.tie_to_parent, images=images)

    @property
    def host(self) -> str:
        """Where the API server listens: loopback, or on the node profile the bridge address (pods reach it
        there; it is guarded from every other interface)."""
        if self.profile == "node":
            from .realnode import layout

            return layout.NODE_IP
        return LOOPBACK

    @property
    def service_cidr(self) -> str:
        if self.profile == "node":
            from .realnode import layout

            return str(layout.SERVICE_CIDR)
        return SERVICE_CIDR

    @property
    def pki(self) -> pki_mod.Pki:
        return self._pki

    def free_node_port(self) -> int:
        """A free TCP port on the API server's address (the real node's kubelet and kube-proxy)."""
        return free_port(self.host)

    # ---- paths ---------------------------------------------------------------------------------
    @property
    def kubeconfig(self) -> str:
        return str(self.dir / "kubeconfig")

    @property
    def logs(self) -> Path:
        return self.dir / "logs"

    @property
    def audit_log(self) -> Path:
        """One JSON event per line, written when ``audit`` is on."""
        return self.logs / "audit.log"

    @property
    def server(self) -> str:
        return f"https://{self.host}:{self.ports['apiserver']}"

    @property
    def env(self) -> dict[str, str]:
        """Environment for subprocesses (kubectl, helm, ct, the operator) aimed at this cluster."""
        env = dict(os.environ)
        bin_dir = str(tools_bin())
        venv_bin = str(REPO_ROOT / ".venv" / "bin")
        env["PATH"] = os.pathsep.join([bin_dir, venv_bin, env.get("PATH", "")])
        env["KUBECONFIG"] = self.kubeconfig
        helm_home = Path(os.environ.get("HELM_DATA_HOME", REPO_ROOT / ".cache" / "helm" / "data")).parent
        env.setdefault("HELM_CONFIG_HOME", str(helm_home / "config"))
        env.setdefault("HELM_CACHE_HOME", str(helm_home / "cache"))
        env.setdefault("HELM_DATA_HOME", str(helm_home / "data"))
        env.setdefault("HELM_PLUGINS", str(helm_home / "plugins"))
        if self.gogc is not None:
            env.setdefault("GOGC", str(self.gogc))
        return env

    def api_client(self):  # -> kubernetes.client.ApiClient; imported lazily to keep CLI start fast
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(config_file=self.kubeconfig, client_configuration=cfg)
        return client.ApiClient(cfg)

    # ---- lifecycle -----------------------------------------------------------------------------
    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float = 120.0) -> LocalCluster:
        started = time.monotonic()
        bin_dir = tools_bin()
        if self.dir.exists():
            shutil.rmtree(self.dir)
        self.logs.mkdir(parents=True)
        if self.node is not None:
            self.node.prepare()  # the bridge the API server listens on; clears what a killed run left
        service_ip = str(ipaddress.ip_network(self.service_cidr).network_address + 1)
        extra = (self.host,) if self.host != LOOPBACK else ()
        pki = pki_mod.generate(self.dir / "pki", service_ip=service_ip, extra_ips=extra)
        self._pki = pki
        self.ports = {"etcd": free_port(), "etcd-peer": free_port(), "apiserver": self.free_node_port()}
        try:
            self._start_etcd(bin_dir, timeout)
            self._start_apiserver(bin_dir, pki, timeout)
            self._write_kubeconfig(pki)
            if self.profile in ("cluster", "node"):
                self._start_cluster_components(bin_dir, pki, timeout)
            if self.node is not None:
                self.node.start(self, spawn=self._spawn, wait=self._wait, timeout=timeout)
        except BaseException:
            self.stop()
            raise
        self._save_state()
        self.startup_seconds = time.monotonic() - started
        return self

    def stop(self) -> None:
        """Stops every component (reverse order): SIGTERM, then SIGKILL; never leaves one running."""
        for comp in reversed(self.components):
            if comp.pid is not None:
                # The real node's daemons get a short grace: its teardown kills what they leave anyway.
                grace = 2.0 if comp.name in NODE_COMPONENTS else 10.0
                _stop_pid(comp.pid, comp.proc, timeout=grace)
        self.components = []
        if self.node is not None:
            # The real node's containers, mounts, bridge, chains, cgroups and sysctls; kept for the caller.
            self.node_leftovers = self.node.finish()
        with contextlib.suppress(FileNotFoundError):
            (self.dir / "state.json").unlink()

    def pids(self) -> list[int]:
        return [c.pid for c in self.components if c.pid is not None]

    def add_component(
        self, name: str, argv: list[str], ready: Callable[[], bool], what: str, timeout: float = 120.0
    ) -> Component:
        """Another process of this cluster (stopped with it, its log beside the others'), started and waited
        for until ``ready`` (the real node's metrics pipeline, ``realnode/metrics.py``)."""
        comp = self._spawn(name, argv)
        self._wait(comp, what, ready, timeout)
        return comp

    def remove_component(self, name: str) -> None:
        """Stop a component started with ``add_component`` and forget it."""
        comp = self.component(name)
        if comp.pid is not None:
            _stop_pid(comp.pid, comp.proc)
        self.components.remove(comp)

    # ---- faults (the fault suite) ----------------------------------------------------------------
    def component(self, name: str) -> Component:
        try:
            return next(c for c in self.components if c.name == name)
        except StopIteration:
            raise ClusterError(f"no component {name!r} in this cluster ({self.profile} profile)") from None

    def stop_component(self, name: str, kill: bool = False) -> None:
        """Stop one component (SIGKILL at once with ``kill``, else SIGTERM then SIGKILL); it stays in
        ``components`` so ``start_component`` brings it back with the same flags, ports and data."""
        comp = self.component(name)
        if comp.pid is None:
            return
        if kill:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(comp.pid, signal.SIGKILL)
        _stop_pid(comp.pid, comp.proc)

    def start_component(self, name: str, timeout: float = 60.0) -> None:
        """Start a stopped etcd or kube-apiserver again and wait until it is healthy/ready."""
        comp = self.component(name)
        if comp.alive():
            raise ClusterError(f"{name} is still running (pid {comp.pid}); stop it first")
        checks = {"etcd": self._etcd_healthy, "kube-apiserver": self._apiserver_ready}
        if name not in checks:
            raise ClusterError(f"restarting {name} is not supported (only {sorted(checks)})")
        comp.start(self.tie_to_parent)
        self._wait(comp, f"{name} after a restart", checks[name], timeout)
        self._save_state()

    def restart_component(
        self, name: str, down_for: float = 0.0, timeout: float = 60.0, kill: bool = False
    ) -> None:
        """Stop ``name`` (etcd or kube-apiserver; SIGKILL with ``kill``: a crash rather than a graceful
        restart), keep it down ``down_for`` seconds, start it again."""
        self.stop_component(name, kill=kill)
        time.sleep(down_for)
        self.start_component(name, timeout)

    def pause(self, pid: int) -> None:
        """SIGSTOP a process (a component or an operator): it keeps its sockets but runs no code."""
        os.kill(pid, signal.SIGSTOP)

    def resume(self, pid: int) -> None:
        os.kill(pid, signal.SIGCONT)

    def audit_events(self) -> list[dict]:
        """The audit log's events (``audit=True``), oldest first; a partly written last line is skipped."""
        path = self.audit_log
        events = []
        with contextlib.suppress(FileNotFoundError):
            for line in path.read_text(errors="replace").splitlines():
                with contextlib.suppress(ValueError):
                    events.append(json.loads(line))
        return events

    # ---- components ----------------------------------------------------------------------------
    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Component:
        if self.gogc is not None and "GOGC" not in (env or os.environ):
            env = {**(env or os.environ), "GOGC": str(self.gogc)}
        comp = Component(name, argv, self.logs / f"{name}.log")
        comp.start(self.tie_to_parent, env)
        self.components.append(comp)
        return comp

    def _wait(self, comp: Component, what: str, check: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not comp.alive():
                raise ClusterError(
                    f"{comp.name} exited while waiting for {what}; log {comp.log}:\n{comp.log_tail()}"
                )
            with contextlib.suppress(Exception):
                if check():
                    return
            time.sleep(0.2)
        raise ClusterError(
            f"timed out after {timeout:.0f}s waiting for {what}; log {comp.log}:\n{comp.log_tail()}"
        )

    def _start_etcd(self, bin_dir: Path, timeout: float) -> None:
        """etcd on 127.0.0.1 over TLS, accepting only clients with a certificate from its own CA (the API
        server's): on a machine where the real node runs a root kubelet, an unauthenticated etcd would let
        any local user write a privileged pod into the cluster."""
        pki = self._pki
        client = f"https://{LOOPBACK}:{self.ports['etcd']}"
        peer = f"https://{LOOPBACK}:{self.ports['etcd-peer']}"
        tls = [f"--cert-file={pki.etcd_server_crt}", f"--key-file={pki.etcd_server_key}"]
        tls += ["--client-cert-auth=true", f"--trusted-ca-file={pki.etcd_ca_crt}"]
        tls += [f"--peer-cert-file={pki.etcd_server_crt}", f"--peer-key-file={pki.etcd_server_key}"]
        tls += ["--peer-client-cert-auth=true", f"--peer-trusted-ca-file={pki.etcd_ca_crt}"]
        comp = self._spawn(
            "etcd",
            [
                str(bin_dir / "etcd"),
                "--name=node0",
                f"--data-dir={self.dir / 'etcd'}",
                f"--listen-client-urls={client}",
                f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=node0={peer}",
                *tls,
                "--unsafe-no-fsync=true",
                "--quota-backend-bytes=4294967296",
                "--auto-compaction-retention=1",
                "--log-level=warn",
            ],
        )

        self._wait(comp, "etcd /health", self._etcd_healthy, timeout)

    def etcd_tls(self) -> ssl.SSLContext:
        """A client context etcd accepts (its CA, the API server's client certificate)."""
        ctx = ssl.create_default_context(cafile=str(self._pki.etcd_ca_crt))
        ctx.load_cert_chain(str(self._pki.etcd_client_crt), str(self._pki.etcd_client_key))
        return ctx

    @property
    def etcd_url(self) -> str:
        return f"https://{LOOPBACK}:{self.ports['etcd']}"

    def _etcd_healthy(self) -> bool:
        with urllib.request.urlopen(f"{self.etcd_url}/health", context=self.etcd_tls(), timeout=2) as r:
            return json.loads(r.read()).get("health") == "true"

    def _start_apiserver(self, bin_dir: Path, pki: pki_mod.Pki, timeout: float) -> None:
        argv = [
            str(bin_dir / "kube-apiserver"),
            f"--etcd-servers={self.etcd_url}",
            f"--etcd-cafile={pki.etcd_ca_crt}",
            f"--etcd-certfile={pki.etcd_client_crt}",
            f"--etcd-keyfile={pki.etcd_client_key}",
            "--etcd-prefix=/registry",
            f"--bind-address={self.host}",
            f"--advertise-address={self.host}",
            f"--secure-port={self.ports['apiserver']}",
            f"--tls-cert-file={pki.serving_crt}",
            f"--tls-private-key-file={pki.serving_key}",
            f"--client-ca-file={pki.ca_crt}",
            f"--service-account-key-file={pki.sa_pub}",
            f"--service-account-signing-key-file={pki.sa_key}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={self.service_cidr}",
            "--authorization-mode=Node,RBAC",
            "--allow-privileged=true",
            f"--cert-dir={self.dir / 'pki'}",
        ]
        if self.profile == "node":
            # Pods reach the API server through the kubernetes Service, whose endpoint is the bridge address;
            # the API server reaches the kubelet (logs, exec, port-forward) at the node's InternalIP.
            argv += [
                "--endpoint-reconciler-type=lease",
                f"--kubelet-client-certificate={pki.admin_crt}",
                f"--kubelet-client-key={pki.admin_key}",
                f"--kubelet-certificate-authority={pki.ca_crt}",
                "--kubelet-preferred-address-types=InternalIP",
                *self._aggregation_args(pki),
            ]
        else:
            # The kubernetes Service's endpoint would be 127.0.0.1, which Endpoints validation refuses.
            argv.append("--endpoint-reconciler-type=none")
        if self.profile == "api":
            # No controller-manager creates default ServiceAccounts in this profile (as in envtest).
            argv.append("--disable-admission-plugins=ServiceAccount")
        if self.audit:
            policy = self.dir / "audit-policy.yaml"
            policy.write_text(yaml.safe_dump(self.audit_policy or AUDIT_POLICY))
            argv += [
                f"--audit-policy-file={policy}",
                f"--audit-log-path={self.audit_log}",
                "--audit-log-format=json",
                "--audit-log-mode=blocking",
                # one file, never rotated: readers count between byte offsets of it (the default rotates at
                # 100 MB, and a 5000-graph burst writes about 500 MB)
                "--audit-log-maxsize=1000000",
            ]
        argv += list(self.apiserver_args)
        comp = self._spawn("kube-apiserver", argv)
        self._wait(comp, "kube-apiserver /readyz", self._apiserver_ready, timeout)

    @staticmethod
    def _aggregation_args(pki: pki_mod.Pki) -> list[str]:
        """The aggregation layer's front proxy (the real node's custom metrics API, docs/scaling.md): the API
        server forwards an aggregated API's requests with the client certificate ``front-proxy-client``
        (from the cluster's CA; only that name is trusted for the ``X-Remote-*`` identity headers), which an
        extension API server such as prometheus-adapter checks (``extension-apiserver-authentication``)."""
        crt, key = pki_mod.issue(pki, "front-proxy-client", "front-proxy-client", client=True)
        return [
            f"--requestheader-client-ca-file={pki.ca_crt}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={crt}",
            f"--proxy-client-key-file={key}",
        ]

    def _apiserver_ready(self) -> bool:
        ctx = ssl.create_default_context(cafile=str(self._pki.ca_crt))
        ctx.load_cert_chain(str(self._pki.admin_crt), str(self._pki.admin_key))
        url = f"https://{self.host}:{self.ports['apiserver']}/readyz"
        with urllib.request.urlopen(url, context=ctx, timeout=3) as r:
            return r.read().strip() == b"ok"

    def _write_kubeconfig(self, pki: pki_mod.Pki) -> None:
        def b64(p: Path) -> str:
            return base64.b64encode(p.read_bytes()).decode()

        cfg = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "dynamo-local",
                    "cluster": {"server": self.server, "certificate-authority-data": b64(pki.ca_crt)},
                }
            ],
            "users": [
                {
                    "name": "dynamo-admin",
                    "user": {
                        "client-certificate-data": b64(pki.admin_crt),
                        "client-key-data": b64(pki.admin_key),
                    },
                }
            ],
            "contexts": [
                {"name": "dynamo-local", "context": {"cluster": "dynamo-local", "user": "dynamo-admin"}}
            ],
            "current-context": "dynamo-local",
        }
        path = Path(self.kubeconfig)
        path.write_text(yaml.safe_dump(cfg))
        path.chmod(0o600)

    def _write_kwok_config(self, bin_dir: Path) -> Path:
        """kwok's configuration: the defaults kwokctl fills in, the default Stages we keep, the helm-test
        Stage."""
        kwok_cfg = self.dir / "kwok.yaml"
        docs: list[dict] = [
            {
                "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
                "kind": "KwokConfiguration",
                # Defaults that kwokctl fills in but the bare kwok binary leaves at zero (and then refuses).
                "options": {
                    "podPlayStageParallelism": 4,
                    "nodePlayStageParallelism": 4,
                    "nodeLeaseParallelism": 4,
                    "podsOnNodeSyncParallelism": 2,
                },
            }
        ]
        stage_dir = kwok_stage_dir(bin_dir)
        for rel in KWOK_STAGES:
            docs.extend(d for d in yaml.safe_load_all((stage_dir / rel).read_text()) if d)
        docs.append(HELM_TEST_STAGE)
        kwok_cfg.write_text(yaml.safe_dump_all(docs))
        return kwok_cfg

    def _start_cluster_components(self, bin_dir: Path, pki: pki_mod.Pki, timeout: float) -> None:
        kc = self.kubeconfig
        common = [
            f"--kubeconfig={kc}",
            f"--authentication-kubeconfig={kc}",
            f"--authorization-kubeconfig={kc}",
            f"--bind-address={LOOPBACK}",
            "--leader-elect=false",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
        ]
        self._spawn(
            "kube-controller-manager",
            [
                str(bin_dir / "kube-controller-manager"),
                *common,
                f"--secure-port={free_port()}",
                f"--root-ca-file={pki.ca_crt}",
                f"--service-account-private-key-file={pki.sa_key}",
                f"--service-cluster-ip-range={self.service_cidr}",
                "--use-service-account-credentials=false",
                "--concurrent-deployment-syncs=5",
                "--concurrent-replicaset-syncs=5",
                "--kube-api-qps=200",
                "--kube-api-burst=400",
                *(
                    [f"--horizontal-pod-autoscaler-sync-period={HPA_SYNC_SECONDS}s"]
                    if self.profile == "node"
                    else [f"--controllers={KWOK_ONLY_CONTROLLERS}"]
                ),
            ],
        )
        self._spawn(
            "kube-scheduler",
            [str(bin_dir / "kube-scheduler"), *common, f"--secure-port={free_port()}"],
        )
        kwok_cfg = self._write_kwok_config(bin_dir)
        kwok_port = free_port()
        self.ports["kwok"] = kwok_port
        kwok = self._spawn(
            "kwok",
            [
                str(bin_dir / "kwok"),
                f"--kubeconfig={kc}",
                f"--config={kwok_cfg}",
                # On the node profile kwok must leave the real node alone: it manages only its fake nodes.
                *(
                    ["--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake"]
                    if self.profile == "node"
                    else ["--manage-all-nodes=true"]
                ),
                f"--tls-cert-file={pki.admin_crt}",
                f"--tls-private-key-file={pki.admin_key}",
                f"--node-ip={LOOPBACK}",
                "--node-name=localhost",
                f"--node-port={kwok_port}",
                f"--server-address={LOOPBACK}:{kwok_port}",
                f"--cidr={POD_CIDR}",
                "--node-lease-duration-seconds=40",
            ],
        )
        self._create_nodes()
        from kubernetes import client

        with self.api_client() as api:
            core = client.CoreV1Api(api)

            def nodes_ready() -> bool:
                items = [n for n in core.list_node().items if n.metadata.name.startswith("kwok-node-")]
                return len(items) >= self.nodes and all(
                    any(c.type == "Ready" and c.status == "True" for c in (n.status.conditions or []))
                    for n in items
                )

            def default_sa() -> bool:
                core.read_namespaced_service_account("default", "default")
                return True

            self._wait(kwok, "fake nodes Ready", nodes_ready, timeout)
            kcm = next(c for c in self.components if c.name == "kube-controller-manager")
            self._wait(kcm, "the default ServiceAccount (controller-manager up)", default_sa, timeout)

    def _create_nodes(self) -> None:
        from kubernetes import client

        resources = {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"}
        with self.api_client() as api:
            core = client.CoreV1Api(api)
            for i in range(self.nodes):
                name = f"kwok-node-{i}"
                core.create_node(
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "metadata": {
                            "name": name,
                            "annotations": {
                                "kwok.x-k8s.io/node": "fake",
                                "node.alpha.kubernetes.io/ttl": "0",
                            },
                            "labels": {
                                "kubernetes.io/hostname": name,
                                "kubernetes.io/os": "linux",
                                "kubernetes.io/arch": "amd64",
                                "type": "kwok",
                                "nvidia.com/gpu.present": "true",
                                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                            },
                        },
                        "spec": {},
                        "status": {
                            "addresses": [
                                {"type": "InternalIP", "address": LOOPBACK},
                                {"type": "Hostname", "address": name},
                            ],
                            "allocatable": resources,
                            "capacity": resources,
                        },
                    }
                )

    # ---- detached use (make cluster-up / demo) -------------------------------------------------
    def _save_state(self) -> None:
        state = {
            "profile": self.profile,
            "kubeconfig": self.kubeconfig,
            "ports": self.ports,
            "components": [{"name": c.name, "pid": c.pid, "log": str(c.log)} for c in self.components],
        }
        (self.dir / "state.json").write_text(json.dumps(state, indent=2))

    @classmethod
    def from_state(cls, directory: Path) -> LocalCluster | None:
        """The cluster a previous ``up`` left running in ``directory``, or None."""
        path = Path(directory) / "state.json"
        if not path.exists():
            return None
        state = json.loads(path.read_text())
        cluster = cls(Path(directory), profile=state["profile"], tie_to_parent=False)
        if cluster.node is not None:
            from .realnode import teardown

            cluster.node.state = teardown.State.load()
        cluster.ports = state["ports"]
        cluster._pki = pki_mod.Pki(Path(directory) / "pki")
        cluster.components = [
            Component(c["name"], [], Path(c["log"]), pid=c["pid"]) for c in state["components"]
        ]
        return cluster


def sweep(directory: Path) -> list[tuple[int, str]]:
    """After a cluster stopped: kill anything still running from ``directory``, remove the directory and
    return what had to be killed, so that a test suite reports a leak rather than the next run inherit it."""
    leaked = leftover_processes(str(directory))
    for pid, _ in leaked:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(directory, ignore_errors=True)
    return leaked


def leftover_processes(marker: str) -> list[tuple[int, str]]:
    """Processes whose command line mentions ``marker`` (a cluster directory): used by the test
    suite's teardown to prove that nothing it started is still running."""
    found = []
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd and _pid_alive(int(entry.name)):
            found.append((int(entry.name), cmd.strip()))
    return found
