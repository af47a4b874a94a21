"""The fault suite's control plane and its measurements.

``running_plane`` starts a fresh ``api`` control plane with the apiserver's audit log on, installs the CRDs,
and runs the admission + conversion webhook in a ``dynamo-operator run --no-default-controllers`` process of
its own (auto certificates: it writes the Secret and injects the CA bundle, as in a real install), so a test
can drop the webhook without touching the controllers. Operators run as ``dynamo-operator run
--no-webhooks`` processes, one or two, with leader election on short leases.

``converged`` is the judge every fault test ends with: each DGD's children are exactly what the renderer
says (no duplicate, none missing, none left over), every child's controller owner is its live parent (no
orphan), and every DGD's status was written for its current generation (none stuck).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from dynamo_localcluster.cluster import REPO_ROOT, LocalCluster, free_port, sweep
from dynamo_localcluster.graphs import AGGREGATED
from dynamo_localcluster.graphs import graph as shared_graph
from dynamo_localcluster.webhooks import url_webhook, webhook_configuration
from dynamo_operator.controllers import store
from dynamo_operator.render import render_component, render_graph
from dynamo_operator.render.discovery import is_discovery_rbac
from dynamo_operator.runtime.client import LEASES, NAMESPACES, ResourceClient
from dynamo_operator.webhooks import admission_routes
from dynamo_operator.webhooks.certs import MUTATING, VALIDATING
from kubernetes.client.exceptions import ApiException
from support.crds import DGD_BETA, install_crds
from support.poll import wait_for
from support.processes import OperatorProcess, spawn_operator
from urllib3.exceptions import HTTPError

CLUSTER_ROOT = REPO_ROOT / ".cache" / "test-clusters"
OPNS = "dynamo-system"
LEASE_NS = "kube-system"
LEASE_NAME = "dynamo.nvidia.com"
# short leases so a failover fits the suite's time budget; same ratios as the defaults (15/10/2)
LEASE = {"duration": 4.0, "renew": 3.0, "retry": 0.5}
# Graphs per burst. 50 (100 until 2026-12): each fault still lands with most of the burst still to come and
# the leader's queue full (the fault strikes at 30%, FAULT_AT in the tests), and the judge still checks some
# 300 children; twice as many only doubled the time of every fault.
BURST = 50
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


def graph(ns: str, name: str) -> dict:
    """The smallest real graph: an OpenAI frontend and one GPU worker."""
    return shared_graph(name, ns, AGGREGATED)


def _webhook_configs(port: int) -> list[tuple]:
    """URL webhooks for DGDs and DCDs, labelled so the webhook process injects its CA bundle."""
    hooks: dict[str, list] = {"validate": [], "mutate": []}
    for path, (mode, kind, version) in sorted(admission_routes().items()):
        if kind in ("DynamoGraphDeployment", "DynamoComponentDeployment"):
            name = f"{mode[0]}{kind.lower()}-{version}.dynamo.nvidia.com"
            hooks[mode].append(url_webhook(port, path, mode, kind, version, name=name))
    return [
        (VALIDATING, webhook_configuration("validate", "faults-validating", OPNS, hooks["validate"])),
        (MUTATING, webhook_configuration("mutate", "faults-mutating", OPNS, hooks["mutate"])),
    ]


@dataclass
class BurstReport:
    created: int = 0
    retried: int = 0  # refused or unanswered attempts retried (the fault window), never given up
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class Plane:
    cluster: LocalCluster
    logs: Path
    client: ResourceClient
    webhook_port: int
    webhook: OperatorProcess | None = None
    processes: list[OperatorProcess] = field(default_factory=list)
    restarts: list[tuple[str, int | None]] = field(default_factory=list)  # (name, exit code) by supervise()
    supervisors: list[threading.Thread] = field(default_factory=list)
    closing: threading.Event = field(default_factory=threading.Event)

    # -- processes ----------------------------------------------------------------------------------------
    def start_webhook(self) -> OperatorProcess:
        env = dict(self.cluster.env, POD_NAMESPACE=OPNS, POD_NAME="webhook")
        proc = spawn_operator(
            self.cluster,
            self.logs / f"webhook-{len(self.processes)}.log",
            "--no-default-controllers",
            "--webhooks",
            "--no-leader-elect",
            "--webhook-host",
            "127.0.0.1",
            "--webhook-port",
            str(self.webhook_port),
            "--webhook-url-base",
            f"https://127.0.0.1:{self.webhook_port}",
            metrics=False,
            env=env,
        )
        proc.name = "webhook"
        self.processes.append(proc)
        self.webhook = proc
        proc.wait_ready(60)
        return proc

    def start_operator(self, name: str) -> OperatorProcess:
        """A controller replica (leader election on, short lease); its identity starts with ``name``."""
        env = dict(self.cluster.env, POD_NAME=name, POD_NAMESPACE=OPNS)
        proc = spawn_operator(
            self.cluster,
            self.logs / f"{name}-{len(self.processes)}.log",
            "--no-webhooks",
            "--leader-elect",
            "--leader-election-namespace",
            LEASE_NS,
            "--leader-elect-lease-duration",
            str(LEASE["duration"]),
            "--leader-elect-renew-deadline",
            str(LEASE["renew"]),
            "--leader-elect-retry-period",
            str(LEASE["retry"]),
            metrics=False,
            env=env,
        )
        proc.name = name
        self.processes.append(proc)
        return proc

    def supervise(self, stop: threading.Event) -> threading.Thread:
        """Restart any controller replica that exits, as the kubelet would (restartPolicy Always): a leader
        that loses its lease during an outage exits by design and comes back as a follower."""

        def loop() -> None:
            while not stop.wait(0.5) and not self.closing.is_set():
                for proc in list(self.processes):
                    if proc.name == "webhook" or proc.poll() is None or getattr(proc, "restarted", False):
                        continue
                    proc.restarted = True
                    self.restarts.append((proc.name, proc.returncode))
                    self.start_operator(proc.name)

        t = threading.Thread(target=loop, name="supervisor", daemon=True)
        t.start()
        self.supervisors.append(t)
        return t

    def lease_holder(self) -> str:
        try:
            return self.client.get(LEASES, LEASE_NAME, LEASE_NS)["spec"].get("holderIdentity") or ""
        except (ApiException, OSError, HTTPError):
            return ""

    def wait_leader(self, timeout: float = 30.0) -> str:
        wait_for(lambda: self.lease_holder() != "", timeout, "no leader", interval=0.2)
        return self.lease_holder()

    def admission_works(self) -> bool:
        """A dry-run create goes through mutate, validate and conversion (v1beta1 -> the storage version)."""
        probe = graph("default", f"probe-{uuid.uuid4().hex[:6]}")
        try:
            self.client.request("POST", DGD_BETA.base_path("default"), [("dryRun", "All")], body=probe)
            return True
        except (ApiException, OSError, HTTPError):
            return False

    # -- the burst ----------------------------------------------------------------------------------------
    def burst(
        self,
        ns: str,
        n: int = BURST,
        fault_at: int | None = None,
        fault: Callable[[], None] | None = None,
        timeout: float = 120.0,
        workers: int = 4,
        report: BurstReport | None = None,
    ) -> BurstReport:
        """Create ``n`` DGDs from ``workers`` threads, as a user's pipeline would: an attempt that fails
        (the webhook or the apiserver down) is retried until ``timeout``; an AlreadyExists after a retry
        counts as created (the first attempt landed). ``fault`` runs once, in its own thread, when
        ``fault_at`` DGDs exist; the burst does not wait for it. ``report``, when given, is the one filled in
        (a fault may watch it: how many creates were refused so far)."""
        report = report if report is not None else BurstReport()
        lock = threading.Lock()
        fired = threading.Event()
        aborted = threading.Event()  # the fault itself failed: stop at once, report it

        def run_fault() -> None:
            try:
                fault()
            except Exception as e:
                with lock:
                    report.errors.append(f"the fault failed: {e!r}")
                aborted.set()

        deadline = time.monotonic() + timeout
        faulter: list[threading.Thread] = []
        started = time.monotonic()

        def create(i: int) -> None:
            body = graph(ns, f"g{i:03d}")
            attempt, created = 0, False
            while not aborted.is_set():
                attempt += 1
                try:
                    self.client.create(DGD_BETA, body, ns)
                    created = True
                    break
                except ApiException as e:
                    if e.status == 409 and attempt > 1:
                        created = True
                        break
                    err = f"g{i:03d}: {e.status} {str(e.body)[:200]}"
                except (OSError, HTTPError) as e:
                    err = f"g{i:03d}: {e}"
                with lock:
                    report.retried += 1
                if time.monotonic() > deadline:
                    with lock:
                        report.errors.append(err)
                    return
                time.sleep(min(0.2 * attempt, 1.0))  # not a wait: a retry's backoff
            if not created:
                return
            with lock:
                report.created += 1
                fire = fault is not None and fault_at is not None and report.created >= fault_at
                fire = fire and not fired.is_set()
                if fire:
                    fired.set()
            if fire:
                t = threading.Thread(target=run_fault, name="fault", daemon=True)
                t.start()
                faulter.append(t)

        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(create, range(n)))
        for t in faulter:
            t.join(timeout)
        report.seconds = time.monotonic() - started
        return report

    # -- the judge ----------------------------------------------------------------------------------------
    def problems(self, ns: str, n: int = BURST) -> list[str]:
        """Everything that keeps ``ns`` from being converged; [] when it is."""
        out: list[str] = []
        dgds, _ = self.client.list_all(store.DGD, ns)
        if len(dgds) != n:
            out.append(f"{len(dgds)} DGDs, expected {n}")
        expected: dict[tuple[str, str], str] = {}  # (kind, name) -> parent name
        owners: dict[str, str] = {}  # live parent uid -> kind/name
        for wire in dgds:
            dgd = store.to_internal(wire)
            md = dgd["metadata"]
            owners[md["uid"]] = f"DynamoGraphDeployment/{md['name']}"
            status = dgd.get("status") or {}
            if status.get("observedGeneration") != md.get("generation") or not status.get("state"):
                out.append(
                    f"DGD {md['name']} stuck: generation {md.get('generation')}, status {status or 'none'}"
                )
            for dcd in render_graph(dgd):
                expected[(dcd["kind"], dcd["metadata"]["name"])] = md["name"]
                for child in render_component(dcd):
                    expected[(child["kind"], child["metadata"]["name"])] = dcd["metadata"]["name"]
        kinds = {kind for kind, _ in expected}
        actual: dict[tuple[str, str], dict] = {}
        for res in _descriptors(kinds):
            items, _ = self.client.list_all(res, ns)
            for it in items:
                actual[(res.kind, it["metadata"]["name"])] = it
                if res.kind == "DynamoComponentDeployment":
                    owners[it["metadata"]["uid"]] = f"DynamoComponentDeployment/{it['metadata']['name']}"
        missing = sorted(set(expected) - set(actual))
        extra = sorted(set(actual) - set(expected))
        if missing:
            out.append(f"{len(missing)} children missing, e.g. {missing[:3]}")
        if extra:
            out.append(f"{len(extra)} unexpected children (duplicates), e.g. {extra[:3]}")
        orphans = []
        for key, obj in actual.items():
            every = obj["metadata"].get("ownerReferences") or []
            if is_discovery_rbac(obj):  # the graph's own: one plain reference, from its live graph
                if len(every) != 1 or not owners.get(every[0]["uid"], "").startswith(store.DGD.kind):
                    orphans.append(key)
                continue
            refs = [r for r in every if r.get("controller")]
            if len(refs) != 1 or refs[0]["uid"] not in owners:
                orphans.append(key)
        if orphans:
            out.append(f"{len(orphans)} orphaned children (no live controller owner), e.g. {orphans[:3]}")
        return out

    def wait_converged(self, ns: str, n: int = BURST, timeout: float = 90.0) -> float:
        """Seconds until ``problems`` is empty; fails with what is still wrong after ``timeout``."""
        started = time.monotonic()
        last: list[str] = ["not checked"]

        def ok() -> bool:
            nonlocal last
            try:
                last = self.problems(ns, n)
            except (ApiException, OSError, HTTPError) as e:
                last = [f"apiserver: {e}"]
            return not last

        wait_for(
            ok,
            timeout,
            lambda: f"not converged after {timeout}s: {last}\n" + self.operator_logs(),
            interval=1.0,
        )
        return time.monotonic() - started

    def namespace(self) -> str:
        name = f"burst-{uuid.uuid4().hex[:6]}"
        self.client.create(NAMESPACES, {"metadata": {"name": name}})
        return name

    # -- what the apiserver saw ---------------------------------------------------------------------------
    def accepted_writes(self, identity: str, after: dt.datetime) -> list[dict]:
        """Audit events of writes from the process with leader-election ``identity`` (its User-Agent ends
        with it) that the apiserver accepted (2xx) and completed after ``after`` (completion, not receipt:
        a request whose headers came before ``after`` and whose body came later is a late write too)."""
        out = []
        for ev in self.cluster.audit_events():
            if f"({identity})" not in ev.get("userAgent", "") or ev.get("verb") not in WRITE_VERBS:
                continue
            code = (ev.get("responseStatus") or {}).get("code", 0)
            if 200 <= code < 300 and _ts(ev["stageTimestamp"]) > after:
                out.append(ev)
        return out

    def lease_acquired_at(self, identity: str) -> dt.datetime | None:
        """When the apiserver accepted the first lease write from ``identity`` (its acquisition)."""
        for ev in self.cluster.audit_events():
            ref = ev.get("objectRef") or {}
            if (
                f"({identity})" in ev.get("userAgent", "")
                and ref.get("resource") == "leases"
                and ref.get("name") == LEASE_NAME
                and ev.get("verb") in ("create", "update")
                and 200 <= (ev.get("responseStatus") or {}).get("code", 0) < 300
            ):
                return _ts(ev["stageTimestamp"])
        return None

    def operator_logs(self, chars: int = 1500) -> str:
        return "\n".join(f"--- {p.log.name}\n{p.log_tail(chars)}" for p in self.processes)


def _ts(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _descriptors(kinds: set[str]):
    from dynamo_operator.runtime import client as rc

    table = {
        "DynamoComponentDeployment": store.DCD,
        "Deployment": rc.DEPLOYMENTS,
        "Service": rc.SERVICES,
        "ConfigMap": rc.CONFIGMAPS,
        "ServiceAccount": rc.SERVICEACCOUNTS,
        "RoleBinding": rc.ROLEBINDINGS,
    }
    unknown = kinds - set(table)
    assert not unknown, f"the judge does not know how to list {unknown}"
    return [table[k] for k in sorted(kinds)]


@contextlib.contextmanager
def running_plane(logs: Path, webhook: bool = True) -> Iterator[Plane]:
    """The plane; ``webhook=False``: the webhook configurations exist but nothing serves them yet (the
    test serves them itself on ``plane.webhook_port``)."""
    directory = CLUSTER_ROOT / f"faults-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    cluster = LocalCluster(directory, profile="api", audit=True)
    cluster.start()
    plane = None
    try:
        install_crds(cluster, timeout=60)
        client = ResourceClient(cluster.api_client())
        client.create(NAMESPACES, {"metadata": {"name": OPNS}})
        port = free_port()
        for res, body in _webhook_configs(port):
            client.create(res, body)
        plane = Plane(cluster, logs, client, port)
        if webhook:
            plane.start_webhook()
            wait_for(
                plane.admission_works,
                60,
                lambda: "admission through the webhook process never worked\n" + plane.operator_logs(),
                interval=0.5,
            )
        yield plane
    finally:
        if plane is not None:
            plane.closing.set()
            for t in plane.supervisors:
                t.join(30)
        for proc in plane.processes if plane else []:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(18)  # SIGCONT: a paused process must be able to die
            proc.reap()
        cluster.stop()
        leaked = sweep(directory)
        assert not leaked, f"processes left running after the fault plane stopped: {leaked}"
