"""The floor: a minimal client that creates exactly what the operator creates for N graphs (DCDs, then each
DCD's Deployment, Services, ServiceAccounts...) and writes the same statuses, as fast as the apiserver
accepts them.  Same client library (``runtime.client``), same objects (``render``), same concurrency (the
operator's two controllers' workers), and the same end state: every graph ``successful`` with Ready=True.

It does what the operator must do and nothing else: one create per object (the graph's discovery
ServiceAccount once, owned by the graph), the graph's first status when it takes the graph, one status
write per DCD once its Deployment is ready and one per graph once its three are; no reads but one watch of
the Deployments.

The first status is part of the floor: ``observedGeneration`` is how a client knows a controller has seen
a generation (``kubectl wait --for=jsonpath``, GitOps health checks: kstatus reads an object without status
as current), and a new graph without one would look settled for as long as its pods take to start.
The operator's creation of one graph is held to the floor's count for it
(``tests/integration/test_graph_writes_cluster.py``).
"""

from __future__ import annotations

import copy
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from dynamo_operator.controllers import MANAGED_SELECTOR, store
from dynamo_operator.controllers import status as st
from dynamo_operator.controllers.sync import child_type, is_shared, owner_reference
from dynamo_operator.render import RenderContext, names, render_component, render_graph_parts
from dynamo_operator.runtime.client import DEPLOYMENTS, ResourceClient, WatchStream, is_status
from dynamo_operator.settings import load_config, settings_from_config
from dynamo_operator.tunables import ControllerTunables

from .graphs import graph

# As many requests in flight as the operator's DGD and DCD controllers have workers.
OPERATOR_CONCURRENCY = ControllerTunables().graph_workers + ControllerTunables().component_workers


def operator_render_context() -> RenderContext:
    """What ``dynamo-operator run`` renders with when given no configuration file."""
    s = settings_from_config(load_config(None))
    return RenderContext(operator_config=s.config, operator_version=s.runtime.operator_version)


@dataclass
class _Graph:
    dgd: dict
    dcds: dict[str, dict] = field(default_factory=dict)  # DCD name -> live DCD (create response)
    ready: set[str] = field(default_factory=set)  # DCDs whose status says Available
    components: dict[str, dict] = field(default_factory=dict)  # component name -> replica status
    done: bool = False  # its status write is due (set once, by whoever saw the last component ready)
    written: bool = False  # ...and has been answered
    acknowledged: threading.Event = field(default_factory=threading.Event)  # its first status is written


class Floor:
    def __init__(self, user: ResourceClient, client: ResourceClient, namespace: str):
        self.user = user  # creates the DGDs, like the benchmark's user does for the operator
        self.client = client
        self.namespace = namespace
        self.ctx = operator_render_context()
        self.graphs: dict[str, _Graph] = {}  # DGD name -> state
        self.by_dcd: dict[str, str] = {}  # DCD name -> DGD name
        self.pending_deployments: dict[str, dict] = {}  # ready Deployments seen before their DCD was created
        self.writes = 0
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._all_done = threading.Event()
        self.finished = 0.0
        # the Deployment watch in progress: closed when the run ends, or the apiserver, stopped next, waits
        # its whole grace period (10 s) on it before it is killed
        self._watch: WatchStream | None = None

    # -- the operator's work -----------------------------------------------------------------------------
    def _create(self, res, body: dict) -> dict:
        out = self.client.create(res, body, self.namespace)
        with self._lock:
            self.writes += 1
        return out

    def _graph_children(self, dgd: dict, ops: ThreadPoolExecutor) -> None:
        g = _Graph(dgd)
        with self._lock:
            self.graphs[dgd["metadata"]["name"]] = g
        parts = render_graph_parts(store.to_internal(dgd), self.ctx)
        for companion in parts.companions:  # the graph's discovery account, before its pods
            ct = child_type(companion)
            body = ct.to_wire(copy.deepcopy(companion))
            body["metadata"]["ownerReferences"] = [owner_reference(dgd, controller=not is_shared(companion))]
            self._create(ct.res, body)
        for dcd in parts.children:
            body = store.to_wire(copy.deepcopy(dcd))
            body["metadata"]["ownerReferences"] = [owner_reference(dgd)]
            live = self._create(store.DCD, body)
            live.setdefault("apiVersion", store.DCD.api_version)
            live.setdefault("kind", store.DCD.kind)
            with self._lock:
                g.dcds[live["metadata"]["name"]] = live
                self.by_dcd[live["metadata"]["name"]] = dgd["metadata"]["name"]
                early = self.pending_deployments.pop(live["metadata"]["name"], None)
            self._submit(ops, self._component_children, live)
            if early is not None:
                self._submit(ops, self._deployment_ready, early, ops)
        self._acknowledge(g)

    def _acknowledge(self, g: _Graph) -> None:
        """The graph's first status: its generation observed, its components not created yet."""
        dgd = g.dgd
        comps = internal_components(dgd)
        waiting = st.Readiness(False, st.NOT_CREATED, "not created yet")
        state, reason, message = st.dgd_ready_condition(
            [st.ComponentState(c["name"], waiting, {}, False) for c in comps]
        )
        status = st.dgd_status(None, dgd["metadata"]["generation"], state, reason, message, {})
        body = copy.deepcopy(dgd)
        body["status"] = store.status_to_wire(dgd, status)
        out = self.client.replace(store.DGD, body, subresource="status")
        out.setdefault("apiVersion", store.DGD.api_version)
        out.setdefault("kind", store.DGD.kind)
        with self._lock:
            self.writes += 1
            g.dgd = out
            g.acknowledged.set()

    def _component_children(self, dcd: dict) -> None:
        for child in render_component(store.to_internal(dcd), self.ctx):
            ct = child_type(child)
            body = ct.to_wire(copy.deepcopy(child))
            body["metadata"]["ownerReferences"] = [owner_reference(dcd, controller=not is_shared(child))]
            try:
                self._create(ct.res, body)
            except Exception as e:
                if not (is_shared(child) and is_status(e, 409)):
                    raise

    def _deployment_ready(self, dep: dict, ops: ThreadPoolExecutor) -> None:
        name = dep["metadata"]["name"]
        with self._lock:
            gname = self.by_dcd.get(name)
            if gname is None:  # its DCD's create response is not back yet
                self.pending_deployments[name] = dep
                return
            g = self.graphs[gname]
            dcd = g.dcds[name]
            if name in g.ready:
                return
        internal = store.to_internal(dcd)
        labels = dep["metadata"].get("labels") or {}
        rs = st.replica_status("Deployment", name, labels.get(names.LABEL_DYNAMO_NAMESPACE), dep)
        readiness = st.deployment_readiness(dep, 1)
        status = st.dcd_status(
            None, dcd["metadata"]["generation"], {names.LABEL_SELECTOR: name}, rs, readiness
        )
        body = copy.deepcopy(dcd)
        body["status"] = store.status_to_wire(dcd, status)
        out = self.client.replace(store.DCD, body, subresource="status")
        with self._lock:
            self.writes += 1
            g.dcds[name] = out
            g.ready.add(name)
            g.components[internal["spec"].get("name") or name] = rs
            complete = len(g.ready) == len(g.dcds) == len(internal_components(g.dgd)) and not g.done
            if complete:
                g.done = True
        if complete:
            self._graph_status(g)

    def _graph_status(self, g: _Graph) -> None:
        g.acknowledged.wait()  # its resourceVersion is the first status write's
        dgd = g.dgd
        n = len(g.components)
        status = st.dgd_status(
            None,
            dgd["metadata"]["generation"],
            st.STATE_SUCCESSFUL,
            st.REASON_ALL_READY,
            f"All resources are ready ({n}/{n} components)",
            g.components,
        )
        body = copy.deepcopy(dgd)
        body["status"] = store.status_to_wire(dgd, status)
        self.client.replace(store.DGD, body, subresource="status")
        with self._lock:
            self.writes += 1
            g.written = True
            if all(x.written for x in self.graphs.values()) and len(self.graphs) == self.expected:
                self.finished = time.monotonic()
                self._all_done.set()

    def _submit(self, pool: ThreadPoolExecutor, fn, *args) -> Future:
        fut = pool.submit(fn, *args)
        fut.add_done_callback(self._note_error)
        return fut

    def _note_error(self, fut: Future) -> None:
        if fut.exception() is not None:
            self.errors.append(fut.exception())  # type: ignore[arg-type]
            self._all_done.set()

    # -- the run -----------------------------------------------------------------------------------------
    def _watch_deployments(self, ops: ThreadPoolExecutor, stop: threading.Event) -> None:
        seen: set[str] = set()
        rv = None
        while not stop.is_set():
            try:
                if rv is None:
                    items, rv = self.client.list_all(
                        DEPLOYMENTS, self.namespace, label_selector=MANAGED_SELECTOR
                    )
                    events = [{"type": "ADDED", "object": o} for o in items]
                else:
                    stream = self.client.watch(
                        DEPLOYMENTS, self.namespace, resource_version=rv, label_selector=MANAGED_SELECTOR,
                        timeout_seconds=60,
                    )  # fmt: skip
                    self._watch = events = stream
                    if stop.is_set():  # the run ended while the watch was being opened
                        stream.close()
                        return
                for ev in events:
                    if stop.is_set():
                        return
                    dep = ev.get("object") or {}
                    if ev.get("type") == "ERROR":
                        rv = None
                        break
                    rv = (dep.get("metadata") or {}).get("resourceVersion", rv)
                    name = (dep.get("metadata") or {}).get("name")
                    fresh = ev.get("type") in ("ADDED", "MODIFIED") and name not in seen
                    if fresh and st.deployment_readiness(dep, 1).ready:
                        seen.add(name)
                        self._submit(ops, self._deployment_ready, dep, ops)
            except Exception:
                rv = None
                stop.wait(0.5)

    def run(self, n: int, prefix: str, timeout: float) -> float:
        """Seconds from the first create until the last graph's status says successful."""
        self.expected = n
        stop = threading.Event()
        ops = ThreadPoolExecutor(OPERATOR_CONCURRENCY, thread_name_prefix="floor-op")
        users = ThreadPoolExecutor(OPERATOR_CONCURRENCY, thread_name_prefix="floor-user")
        watcher = threading.Thread(target=self._watch_deployments, args=(ops, stop), daemon=True)
        start = time.monotonic()
        watcher.start()

        def create(name: str) -> None:
            dgd = self.user.create(store.DGD, store.to_wire(graph(name, self.namespace)), self.namespace)
            dgd.setdefault("apiVersion", store.DGD.api_version)
            dgd.setdefault("kind", store.DGD.kind)
            self._submit(ops, self._graph_children, dgd, ops)

        try:
            for i in range(n):
                self._submit(users, create, f"{prefix}-{i:04d}")
            if not self._all_done.wait(timeout):
                done = sum(g.done for g in self.graphs.values())
                raise TimeoutError(f"floor: {done}/{n} graphs complete after {timeout}s")
            if self.errors:
                raise RuntimeError(f"floor: {len(self.errors)} request(s) failed; first: {self.errors[0]!r}")
            return self.finished - start
        finally:
            stop.set()
            if self._watch is not None:
                self._watch.close()
            watcher.join(10)
            users.shutdown(wait=False, cancel_futures=True)
            ops.shutdown(wait=False, cancel_futures=True)


def internal_components(dgd: dict) -> list[dict]:
    return store.to_internal(dgd)["spec"]["components"]
