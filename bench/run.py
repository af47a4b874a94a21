"""The benchmark run: the floor on one local control plane, then the operator on a second, identical one
(same node count, both with the audit log on), phase by phase."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml
from dynamo_localcluster.cluster import REPO_ROOT, LocalCluster
from dynamo_operator.controllers import MANAGED_SELECTOR, store
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    DEPLOYMENTS,
    NAMESPACES,
    SERVICEACCOUNTS,
    SERVICES,
    ResourceClient,
    custom,
    load_api_client,
)
from dynamo_operator.webhooks.certs import CRDS

from . import admission, clistart
from .audit import AuditLog, events_in
from .floor import OPERATOR_CONCURRENCY, Floor
from .graphs import graph, nodes_for
from .noop import NoopWebhook, compare
from .operator import OPERATOR_NAMESPACE, OperatorProcess
from .ready import ReadyWatch

# DCDs read in the internal version (v1beta1): served through the conversion webhook
DCD_INTERNAL = custom(store.GROUP, store.INTERNAL_VERSION, store.DCD.plural, store.DCD.kind)
NOOP_NAMESPACE = "bench-noop"  # its DGD admissions go to the no-op webhook (the admission reference)
SNAPSHOT_KINDS = (store.DGD, store.DCD, DEPLOYMENTS, SERVICES, SERVICEACCOUNTS, CONFIGMAPS)
FLOOR_AGENT = "dynamo-bench/floor"  # the floor's writes in its cluster's audit log (``client``)


@dataclass
class Config:
    n: int = 500
    idle_seconds: float = 300
    admission_seconds: float = 60
    admission_rate: float = 200
    grow: bool = True
    timeout: float = 1200  # per wait; at least 0.6 s a graph (``from_env``): N=5000 on 2 cores takes long
    dir: Path = REPO_ROOT / ".cache" / "bench"
    settle_seconds: float = 10  # how long the operator must be quiet before a phase is measured as done
    floor_after: bool = True  # the floor again after the operator's phases (make bench-scale: once only)
    floor: bool = True  # BENCH_FLOOR=0: no floor at all (memory and restart at scale when hours are short)

    @classmethod
    def from_env(cls) -> Config:
        env = os.environ
        n = int(env.get("BENCH_N", 500))
        return cls(
            n=n,
            idle_seconds=float(env.get("BENCH_IDLE_SECONDS", 300)),
            admission_seconds=float(env.get("BENCH_ADMISSION_SECONDS", 60)),
            admission_rate=float(env.get("BENCH_ADMISSION_RATE", 200)),
            grow=env.get("BENCH_GROW", "1") not in ("0", "false", "no"),
            timeout=float(env.get("BENCH_TIMEOUT", max(1200, 0.6 * n))),
            dir=Path(env.get("BENCH_DIR", REPO_ROOT / ".cache" / "bench")),
            settle_seconds=float(env.get("BENCH_SETTLE_SECONDS", 10)),
            floor_after=env.get("BENCH_FLOOR_AFTER", "1") not in ("0", "false", "no"),
            floor=env.get("BENCH_FLOOR", "1") not in ("0", "false", "no"),
        )


def say(text: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", flush=True)


def client(cluster: LocalCluster, agent: str) -> ResourceClient:
    return ResourceClient(load_api_client(cluster.kubeconfig, user_agent=f"dynamo-bench/{agent}"))


def install_crds(rc: ResourceClient, timeout: float = 60) -> None:
    docs = [yaml.safe_load(p.read_text()) for p in sorted((REPO_ROOT / "crds").glob("*.yaml"))]
    for doc in docs:
        rc.create(CRDS, doc)
    deadline = time.monotonic() + timeout
    for doc in docs:
        while True:
            conds = (rc.get(CRDS, doc["metadata"]["name"]).get("status") or {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conds):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"CRD {doc['metadata']['name']} not Established after {timeout}s")
            time.sleep(0.2)


def prepare(cluster: LocalCluster, namespaces: list[str]) -> ResourceClient:
    rc = client(cluster, "setup")
    install_crds(rc)
    for ns in namespaces:
        rc.create(NAMESPACES, {"metadata": {"name": ns}})
    return rc


def create_graphs(user: ResourceClient, namespace: str, prefix: str, n: int) -> None:
    """N graphs at once from the operator's concurrency of user threads (a CI job applying many manifests)."""
    with ThreadPoolExecutor(OPERATOR_CONCURRENCY, thread_name_prefix="user") as pool:
        futures = [
            pool.submit(
                user.create, store.DGD, store.to_wire(graph(f"{prefix}-{i:04d}", namespace)), namespace
            )
            for i in range(n)
        ]
        for f in futures:
            f.result()


def snapshot(rc: ResourceClient, namespaces: list[str]) -> dict[str, str]:
    """(kind/ns/name) -> resourceVersion of everything the operator manages or writes status to."""
    out = {}
    for ns in namespaces:
        for res in SNAPSHOT_KINDS:
            sel = None if res in (store.DGD, store.DCD) else MANAGED_SELECTOR
            for o in rc.list_all(res, ns, label_selector=sel)[0]:
                out[f"{res.kind}/{ns}/{o['metadata']['name']}"] = o["metadata"]["resourceVersion"]
    return out


def settle(op: OperatorProcess, audit: AuditLog, quiet: float = 10, timeout: float = 300) -> float:
    """Wait until the operator's queues are empty, no worker is busy and it wrote nothing for ``quiet``
    seconds; returns the seconds waited."""
    start = time.monotonic()
    mark, since = audit.mark(), time.monotonic()
    while time.monotonic() - start < timeout:
        op.check_alive()
        time.sleep(1)
        now = audit.mark()
        if now != mark and audit.count(mark, now):
            since = time.monotonic()
        mark = now
        if not op.quiet():
            since = time.monotonic()
        if time.monotonic() - since >= quiet:
            return time.monotonic() - start
    raise TimeoutError(f"operator still busy after {timeout}s; log {op.log}")


def point(op: OperatorProcess) -> dict:
    return {"rss_mb": round(op.rss_mb(), 1), "cpu_seconds": round(op.cpu_seconds(), 1)}


def floor_phase(cfg: Config, nodes: int, name: str) -> dict:
    say(f"{name}: local control plane with {nodes} fake nodes")
    with LocalCluster(cfg.dir / name, profile="cluster", nodes=nodes, audit=True, gogc=None) as cluster:
        prepare(cluster, ["bench-burst", OPERATOR_NAMESPACE])
        # The CRDs serve v1beta1 from v1alpha1 storage through the conversion webhook, and the controller
        # manager's garbage collector and quota monitor watch the preferred version, v1beta1: in a working
        # cluster every write of a DGD or DCD is converted for them. The floor's cluster gets the same
        # conversion webhook (the operator's server, no controllers), or it would be a cluster whose
        # garbage collector cannot watch the graphs, doing less work than any real one.
        conversion = OperatorProcess(cluster, cfg.dir / f"{name}-webhooks.log", webhooks_only=True)
        try:
            conversion.start()
            conversion.wait_ready()
            floor = Floor(client(cluster, "user"), client(cluster, "floor"), "bench-burst")
            say(f"{name}: {cfg.n} graphs, every child and status written by a minimal client")
            audit = AuditLog(cluster.audit_log)
            mark = audit.mark()
            secs = floor.run(cfg.n, "g", cfg.timeout)
            say(f"{name}: {secs:.1f} s, {floor.writes} writes")
            # the graphs read back in v1beta1: the conversion webhook served the floor's cluster
            served = len(client(cluster, "check").list(DCD_INTERNAL, "bench-burst").get("items") or [])
            return {
                "seconds": round(secs, 2),
                "writes": floor.writes,
                "write_breakdown": audit.breakdown(mark, agent=FLOOR_AGENT),
                "converted_on_read": served,
                "conversion_webhook_cpu_seconds": round(conversion.cpu_seconds(), 1),
            }
        finally:
            conversion.stop()


@dataclass
class _OperatorRun:
    """What the operator phases share: the cluster, the clients, the audit log, the operator process (the
    restart phase replaces it) and where results go."""

    cfg: Config
    rc: ResourceClient
    user: ResourceClient
    audit: AuditLog
    op: OperatorProcess
    results: dict
    save: Callable[[], None]

    @property
    def mem(self) -> dict:
        return self.results["memory"]


def operator_phases(cfg: Config, nodes: int, results: dict, save) -> None:
    say(f"operator: local control plane with {nodes} fake nodes")
    namespaces = ["bench-burst", "bench-grow", "bench-admission", NOOP_NAMESPACE, OPERATOR_NAMESPACE]
    with LocalCluster(cfg.dir / "operator", profile="cluster", nodes=nodes, audit=True, gogc=None) as cluster:
        rc = prepare(cluster, namespaces)
        op = OperatorProcess(cluster, cfg.dir / "operator.log")
        results["memory"] = {"points": {}}
        run = _OperatorRun(cfg, rc, client(cluster, "user"), AuditLog(cluster.audit_log), op, results, save)
        try:
            op.start()
            op.wait_ready()
            settle(op, run.audit, quiet=min(3, cfg.settle_seconds))
            run.mem["points"]["0"] = point(op)
            _burst_phase(run)
            _idle_phase(run)
            _restart_phase(run, cluster)
            if cfg.grow:
                _grow_phase(run)
            results["admission"] = admission_phase(cfg, rc, run.op)
            save()
        finally:
            run.op.stop()


def _burst_phase(run: _OperatorRun) -> None:
    cfg, op, audit = run.cfg, run.op, run.audit
    say(f"burst: {cfg.n} graphs created at once")
    watch = ReadyWatch(run.user, "bench-burst").start()
    mark, cpu0, t0 = audit.mark(), op.cpu_seconds(), time.monotonic()
    create_graphs(run.user, "bench-burst", "g", cfg.n)
    done = watch.wait(cfg.n, cfg.timeout)
    watch.stop()
    secs = done - t0
    settle(op, audit, quiet=cfg.settle_seconds)
    breakdown = audit.breakdown(mark)
    writes = sum(breakdown.values())
    run.results["burst"] = {
        "seconds": round(secs, 2),
        "writes": writes,
        "events": events_in(breakdown),  # the rest is to equal the floor's writes
        "write_breakdown": breakdown,
        "operator_cpu_seconds": round(op.cpu_seconds() - cpu0, 1),
    }
    run.mem["points"][str(cfg.n)] = point(op)
    say(f"burst: {secs:.1f} s, {run.results['burst']['writes']} operator writes")
    run.save()


def _idle_phase(run: _OperatorRun) -> None:
    cfg, op, audit = run.cfg, run.op, run.audit
    say(f"idle: {cfg.idle_seconds:.0f} s with {cfg.n} converged graphs")
    before = snapshot(run.rc, ["bench-burst"])
    mark, rss0, cpu0, t0 = audit.mark(), op.rss_mb(), op.cpu_seconds(), time.monotonic()
    rss_samples = []
    while time.monotonic() - t0 < cfg.idle_seconds:
        time.sleep(min(15, max(0.0, cfg.idle_seconds - (time.monotonic() - t0))))
        op.check_alive()
        rss_samples.append(round(op.rss_mb(), 1))
    secs = time.monotonic() - t0
    writes = audit.count(mark)
    after = snapshot(run.rc, ["bench-burst"])
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    run.results["idle"] = {
        "seconds": round(secs, 1),
        "writes": writes,
        "writes_per_minute": round(writes / secs * 60, 2),
        "write_breakdown": audit.breakdown(mark),
        "objects_changed": len(changed),
        "changed_examples": changed[:10],
        "operator_cpu_seconds": round(op.cpu_seconds() - cpu0, 2),
    }
    run.mem["idle_growth_mb"] = round(op.rss_mb() - rss0, 1)
    run.mem["idle_rss_samples_mb"] = rss_samples
    say(f"idle: {writes} writes, {len(changed)} objects changed")
    run.save()


def _restart_phase(run: _OperatorRun, cluster: LocalCluster) -> None:
    cfg, audit = run.cfg, run.audit
    say("restart: SIGTERM, then a new operator process over the converged graphs")
    rss_before = run.op.rss_mb()  # the steady state the restart is compared with
    run.op.stop()
    mark = audit.mark()
    run.op = op = OperatorProcess(cluster, cfg.dir / "operator-restarted.log", ports=run.op.ports)
    op.start()
    ready = op.wait_ready()
    idle = _wait_reconciled(op, cfg.n, cfg.timeout)
    settle(op, audit, quiet=cfg.settle_seconds)
    run.results["restart"] = {
        "writes": audit.count(mark),
        "write_breakdown": audit.breakdown(mark),
        "ready_seconds": round(ready, 2),
        "idle_seconds": round(idle, 2),
        "rss_before_mb": round(rss_before, 1),
        "rss_after_mb": round(op.rss_mb(), 1),
    }
    run.mem["points"][f"{cfg.n} (restarted)"] = point(op)
    say(f"restart: {run.results['restart']['writes']} writes, ready {ready:.1f} s, idle {idle:.1f} s")
    run.save()


def _grow_phase(run: _OperatorRun) -> None:
    cfg = run.cfg
    say(f"grow: {cfg.n} more graphs (total {2 * cfg.n})")
    watch = ReadyWatch(run.user, "bench-grow").start()
    t0 = time.monotonic()
    create_graphs(run.user, "bench-grow", "h", cfg.n)
    done = watch.wait(cfg.n, cfg.timeout)
    watch.stop()
    settle(run.op, run.audit, quiet=cfg.settle_seconds)
    run.results["grow"] = {"seconds": round(done - t0, 2)}
    run.mem["points"][str(2 * cfg.n)] = point(run.op)
    run.save()


def _wait_reconciled(op: OperatorProcess, n: int, timeout: float) -> float:
    """Seconds from the process start until every graph and component was reconciled once and the queues
    are empty."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        op.check_alive()
        s = op.samples()
        if (
            s.get("reconciles{DynamoGraphDeployment}", 0) >= n
            and s.get("reconciles{DynamoComponentDeployment}", 0) >= 3 * n
            and not s.get("workqueue_depth")
            and not s.get("controller_runtime_active_workers")
        ):
            return time.monotonic() - op.started
        time.sleep(0.2)
    raise TimeoutError(f"restarted operator not idle after {timeout}s; log {op.log}")


def admission_phase(cfg: Config, rc: ResourceClient, op: OperatorProcess) -> dict:
    ns = "bench-admission"
    # until the operator injected its CA bundle and the apiserver reaches the server
    admission.register(rc, admission.webhook_configurations(op.webhook, OPERATOR_NAMESPACE, ns), ns)
    noop = NoopWebhook(cfg.dir / "noop")
    noop.start()
    try:
        admission.register(rc, noop.configurations(NOOP_NAMESPACE), NOOP_NAMESPACE)
        waited, share = idle_cpu(op)
        say(f"admission: operator at {share:.1%} of a core after {waited:.0f} s")
        rate, seconds = cfg.admission_rate, cfg.admission_seconds
        say(f"admission: {rate:.0f}/s for {seconds:.0f} s each, the operator and the no-op")
        got = compare(rc, (op.webhook, op.pid, ns), noop, NOOP_NAMESPACE, rate, seconds)
    finally:
        noop.stop()
    say(f"admission: direct {got['direct']}, no-op {got['noop']['direct']}")
    say(f"admission: apiserver {got['apiserver']}, no-op {got['noop']['apiserver']}")
    return {
        "rate": cfg.admission_rate,
        "seconds": cfg.admission_seconds,
        "operator_cpu_share_before": round(share, 3),
        "waited_for_idle_seconds": round(waited, 1),
        **got,
    }


def idle_cpu(
    op: OperatorProcess, share: float = 0.05, window: float = 5, timeout: float = 180
) -> tuple[float, float]:
    """Wait until the operator uses at most ``share`` of a core over ``window`` seconds; (seconds waited,
    the last window's share). Its queues are empty well before that after a burst: the controller
    manager's garbage collector still walks the new objects and has every DGD and DCD it reads converted
    by the operator's webhook. Admission is measured on a converged operator, not beside that catch-up
    (which the burst row measures); after ``timeout`` it is measured anyway, and the share says so."""
    start = time.monotonic()
    while True:
        op.check_alive()
        before = op.cpu_seconds()
        time.sleep(window)
        used = (op.cpu_seconds() - before) / window
        if used <= share or time.monotonic() - start > timeout:
            return time.monotonic() - start, used


def run(cfg: Config, out_dir: Path) -> tuple[dict, Path]:
    from . import report

    started = time.monotonic()
    stamp = time.strftime("%Y%m%dT%H%M%S")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{stamp}.json"
    cfg.dir.mkdir(parents=True, exist_ok=True)
    results: dict = {
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(cfg).items()},
        "machine": {"cpus": os.cpu_count(), "loadavg_at_start": os.getloadavg()},
    }
    lock = threading.Lock()

    def save() -> None:
        with lock:
            results["wall_seconds"] = round(time.monotonic() - started, 1)
            results["machine"]["loadavg_now"] = os.getloadavg()
            path.write_text(json.dumps(results, indent=2))

    nodes = nodes_for(2 * cfg.n if cfg.grow else cfg.n)
    results["render_start"] = clistart.measure()  # first: no control plane running yet
    save()
    try:
        # The floor runs on either side of the operator's phases, each on a fresh control plane, and the
        # burst is compared with their mean: a machine that speeds up or slows down during the run (other
        # work starting or ending) then moves the reference with it instead of deciding the ratio.
        if cfg.floor:
            results["floor"] = floor_phase(cfg, nodes, "floor")
            save()
        operator_phases(cfg, nodes, results, save)
        save()
        if cfg.floor and cfg.floor_after:
            results["floor_after"] = floor_phase(cfg, nodes, "floor-after")
    finally:
        save()
    results["table"] = report.table(results)
    save()
    return results, path
