"""The operator's controllers: DynamoGraphDeployment → DynamoComponentDeployments → workloads.

``setup(manager)`` (called by ``dynamo-operator run``) registers:

* ``DynamoGraphDeployment`` controller (``dgd.DGDReconciler``): primary DGDs; owns DCDs, or on the Grove
  pathway its PodCliqueSet and the components' Services and ConfigMaps; reacts to its components'
  Deployments and Grove's PodCliques / PodCliqueScalingGroups (mapped through the
  ``nvidia.com/dynamo-graph-deployment-name`` label, or the owning PodCliqueSet's);
* ``DynamoComponentDeployment`` controller (``dcd.DCDReconciler``): primary DCDs; owns Deployments,
  Services, ConfigMaps (and LeaderWorkerSets when enabled); the shared planner/epp ServiceAccounts and
  RoleBindings map to every DCD referencing them;
* ``DynamoGraphDeploymentScalingAdapter`` controller (``dgdsa.AdapterReconciler``): primary DGDSAs; a DGD
  change re-queues the adapters that reference it; the DGD controller owns (creates/deletes) adapters;
* ``DynamoModel`` (``dynamomodel``), ``DynamoGraphDeploymentRequest`` (``dgdr``) and ``DynamoCheckpoint``
  (``checkpoint``) controllers, each registered by its module's ``register``;
* the image-pull-secret watch: ``kubernetes.io/dockerconfigjson`` Secrets (field selector on ``type``); any
  change re-queues the DCDs of that namespace, whose pod specs may gain or lose a discovered secret;
* an Event recorder (``runtime.events``) and a periodic gauge refresher for
  ``dynamo_operator_resources_total`` and ``dynamo_operator_managed_pods_total``.

Child caches are label-selected (``app.kubernetes.io/managed-by=dynamo-operator``), so the operator does
not cache every Deployment of the cluster.  Both controllers read and write DGDs/DCDs in the storage
version through ``store`` and render with the same functions as ``dynamo-operator render``.

Optional integrations (Grove, LeaderWorkerSet, Kai) are discovered once at startup (``discovery``): their
informers exist only when their APIs are served; ``orchestrators.<name>.enabled`` overrides discovery for
rendering (a restart picks up an integration installed later).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from dynamo_operator.api.config import effective
from dynamo_operator.render import RenderContext, names
from dynamo_operator.render.context import GROVE
from dynamo_operator.render.pullsecrets import DOCKERCONFIGJSON
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    DEPLOYMENTS,
    ROLEBINDINGS,
    SECRETS,
    SERVICEACCOUNTS,
    SERVICES,
    ResourceDescriptor,
)
from dynamo_operator.runtime.controller import Controller, Request
from dynamo_operator.runtime.events import EventRecorder
from dynamo_operator.runtime.informer import Informer
from dynamo_operator.runtime.log import get_logger

from . import checkpoint, dgdr, dynamomodel, netpol, store
from .common import Deps
from .dcd import DCDReconciler
from .dgd import DGDReconciler
from .dgdsa import DGDSA, AdapterReconciler, adapters_of_graph
from .discovery import detect_integrations
from .status import AVAILABLE, condition
from .sync import LWS, NETWORKPOLICIES, PODCLIQUES, PODCLIQUESCALINGGROUPS, PODCLIQUESETS, RecentWrites

DGD_CONTROLLER = "DynamoGraphDeployment"
DCD_CONTROLLER = "DynamoComponentDeployment"
DGDSA_CONTROLLER = "DynamoGraphDeploymentScalingAdapter"
MANAGED_SELECTOR = f"{names.LABEL_MANAGED_BY}={names.MANAGED_BY}"
PULL_SECRET_SELECTOR = f"type={DOCKERCONFIGJSON}"
DEFAULT_WORKERS = 4
# The component controller gets this many times the graph controller's workers: a graph has one DCD per
# component, and each DCD's first pass writes its workload and Services. In a burst of 300 new graphs with
# four workers each, the DCD controller's were busy the whole time while the graph controller's were idle
# more than half of it, and every graph waited for its Deployments in the DCD queue.
COMPONENT_WORKERS_FACTOR = 2
METRICS_INTERVAL = 10.0
# A graph's status sums its components' Deployments and DCDs, each of which changes status several times
# while its pods start; reconciling the graph once per window instead of once per child event coalesces
# those into fewer status writes (the benchmark's burst wrote each graph's status nine times).
GRAPH_COALESCE_SECONDS = 1.0

__all__ = ["DCD_CONTROLLER", "DGDSA_CONTROLLER", "DGD_CONTROLLER", "setup", "worker_counts"]


def worker_counts(workers: int | None = None) -> dict[str, int]:
    """Workers of the graph and component controllers for ``workers`` (default ``DEFAULT_WORKERS``)."""
    w = workers or DEFAULT_WORKERS
    return {DGD_CONTROLLER: w, DCD_CONTROLLER: COMPONENT_WORKERS_FACTOR * w}


def _add_handler(
    inf: Informer, ctl: Controller, map_fn: Callable[[dict], list[Request]], after: float | None = None
) -> None:
    def emit(obj: dict) -> None:
        for r in map_fn(obj):
            ctl.enqueue(r, after)

    def update(old: dict, new: dict) -> None:
        reqs = set(map_fn(new)) | (set(map_fn(old)) if old is not new else set())
        for r in reqs:
            ctl.enqueue(r, after)

    inf.add_event_handler(on_add=emit, on_update=update, on_delete=emit)


def _dcd_referrers(obj: dict) -> list[Request]:
    """Every DCD in an object's owner references (controller or not: shared ServiceAccounts)."""
    md = obj.get("metadata") or {}
    return [
        Request(md.get("namespace") or "", r.get("name") or "")
        for r in md.get("ownerReferences") or []
        if store.DCD.matches(r.get("apiVersion", ""), r.get("kind", ""))
    ]


def _graph_of(obj: dict) -> list[Request]:
    md = obj.get("metadata") or {}
    dgd = (md.get("labels") or {}).get(names.LABEL_DGD_NAME)
    return [Request(md.get("namespace") or "", dgd)] if dgd else []


def _grove_graph_of(pcs_store) -> Callable[[dict], list[Request]]:
    """A PodClique / scaling group -> its DGD: by the graph label Grove copies from the clique template,
    else through the owning PodCliqueSet (cached) and its graph label."""

    def map_fn(obj: dict) -> list[Request]:
        found = _graph_of(obj)
        if found:
            return found
        md = obj.get("metadata") or {}
        for ref in md.get("ownerReferences") or []:
            if ref.get("kind") == PODCLIQUESETS.kind:
                pcs = pcs_store.get(md.get("namespace") or "", ref.get("name") or "")
                if pcs is not None:
                    return _graph_of(pcs)
        return []

    return map_fn


def setup(manager, workers: int | None = None) -> dict[str, Controller]:
    """Register the DGD and DCD controllers, the pull-secret watch, events and gauges on ``manager``."""
    s = manager.settings
    doc = effective(s.config)
    counts = worker_counts(workers)
    workers = counts[DGD_CONTROLLER]
    detected = detect_integrations(manager.client)
    lws_enabled = RenderContext(operator_config=doc, detected=detected).lws_enabled  # the renderer's rule
    grove_served = GROVE in detected  # Grove's objects can be watched only when their API exists
    recorder = EventRecorder(manager.client, "dynamo-operator", instance=manager.identity)
    manager.add_runnable(
        lambda stop: recorder.start(), needs_leader=False, stop_fn=recorder.stop, name="event-recorder"
    )

    owned: list[ResourceDescriptor] = [DEPLOYMENTS, SERVICES, CONFIGMAPS]
    if lws_enabled:
        owned.append(LWS)
    dcd_ctl = manager.add_controller(
        DCD_CONTROLLER,
        primary=store.DCD,
        reconcile=lambda req: dcd_reconciler(req),
        owns=[(res, MANAGED_SELECTOR) for res in owned],
        workers=counts[DCD_CONTROLLER],
        resource_type=names.DCD_KIND,
    )
    dgd_owned: list = [store.DCD, DGDSA, (SERVICES, MANAGED_SELECTOR), (CONFIGMAPS, MANAGED_SELECTOR)]
    if grove_served:
        dgd_owned.append((PODCLIQUESETS, MANAGED_SELECTOR))
    if netpol.enabled(doc):  # the MPI sshd NetworkPolicies: watched only when the operator makes them
        dgd_owned.append((NETWORKPOLICIES, MANAGED_SELECTOR))
    dgd_ctl = manager.add_controller(
        DGD_CONTROLLER,
        primary=store.DGD,
        reconcile=lambda req: dgd_reconciler(req),
        owns=dgd_owned,
        workers=workers,
        resource_type=names.DGD_KIND,
        owned_delay=GRAPH_COALESCE_SECONDS,
    )
    dgdsa_ctl = manager.add_controller(
        DGDSA_CONTROLLER,
        primary=DGDSA,
        reconcile=lambda req: dgdsa_reconciler(req),
        workers=workers,
        resource_type=DGDSA.kind,
    )
    dgdsa_inf = manager.informer(DGDSA, resync_period=0)
    _add_handler(manager.informer(store.DGD), dgdsa_ctl, lambda dgd: adapters_of_graph(dgdsa_inf.store, dgd))
    shared = {
        res: manager.informer(res, label_selector=MANAGED_SELECTOR) for res in (SERVICEACCOUNTS, ROLEBINDINGS)
    }
    for inf in shared.values():
        _add_handler(inf, dcd_ctl, _dcd_referrers)
    deployments = manager.informer(DEPLOYMENTS, label_selector=MANAGED_SELECTOR)
    _add_handler(deployments, dgd_ctl, _graph_of, after=GRAPH_COALESCE_SECONDS)
    secrets = manager.informer(SECRETS, field_selector=PULL_SECRET_SELECTOR, resync_period=0)
    dcd_inf = manager.informer(store.DCD)

    def dcds_in_namespace(secret: dict) -> list[Request]:
        ns = (secret.get("metadata") or {}).get("namespace") or ""
        return [Request(ns, (d.get("metadata") or {}).get("name") or "") for d in dcd_inf.store.list(ns)]

    _add_handler(secrets, dcd_ctl, dcds_in_namespace)

    informers = {res: manager.informer(res, label_selector=MANAGED_SELECTOR) for res in owned}
    if grove_served:
        pcs_inf = manager.informer(PODCLIQUESETS, label_selector=MANAGED_SELECTOR)
        informers[PODCLIQUESETS] = pcs_inf
        for res in (PODCLIQUES, PODCLIQUESCALINGGROUPS):  # Grove's objects: not labelled by us
            inf = manager.informer(res)
            _add_handler(inf, dgd_ctl, _grove_graph_of(pcs_inf.store))
            informers[res] = inf
    if netpol.enabled(doc):
        informers[NETWORKPOLICIES] = manager.informer(NETWORKPOLICIES, label_selector=MANAGED_SELECTOR)
    informers.update(shared)
    informers[store.DCD] = dcd_inf
    informers[store.DGD] = manager.informer(store.DGD)
    informers[DGDSA] = dgdsa_inf
    stores = {res: inf.store for res, inf in informers.items()}
    recent = RecentWrites()
    for inf in informers.values():  # entries for our own writes live until the cache shows them
        inf.add_event_handler(
            on_add=recent.observe, on_update=lambda old, new: recent.observe(new), on_delete=recent.forget
        )
    deps = Deps(
        client=manager.client,
        recorder=recorder,
        stores=stores,
        secrets=secrets.store,
        operator_config=doc,
        operator_version=s.operator_version,
        recent=recent,
        detected=detected,
    )
    dcd_reconciler = DCDReconciler(deps)
    dgd_reconciler = DGDReconciler(deps)
    dgdsa_reconciler = AdapterReconciler(deps)

    gauges = GaugeRefresher(manager, stores)
    manager.add_runnable(gauges.start, needs_leader=False, stop_fn=gauges.stop, name="resource-gauges")
    ctls = {DGD_CONTROLLER: dgd_ctl, DCD_CONTROLLER: dcd_ctl, DGDSA_CONTROLLER: dgdsa_ctl}
    # DynamoModel, DGDR and DynamoCheckpoint: their own caches and reconcilers (see each module)
    ctls[dynamomodel.CONTROLLER] = dynamomodel.register(manager, recorder, _add_handler)
    ctls[dgdr.CONTROLLER] = dgdr.register(manager, recorder, _add_handler, doc)
    ctls[checkpoint.CONTROLLER] = checkpoint.register(manager, recorder, doc)
    return ctls


class GaugeRefresher:
    """Every ``METRICS_INTERVAL`` seconds: DGDs by state, DCDs by availability, pods by component type
    (sum of the managed Deployments' ``status.replicas``), from the caches (no API requests)."""

    def __init__(self, manager, stores: dict[ResourceDescriptor, object], interval: float = METRICS_INTERVAL):
        self.manager = manager
        self.stores = stores
        self.interval = interval
        self._stop = threading.Event()
        self.log = get_logger("gauges")

    def start(self, stop: threading.Event) -> None:
        threading.Thread(target=self._run, args=(stop,), name="resource-gauges", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self, stop: threading.Event) -> None:
        while not (stop.is_set() or self._stop.is_set()):
            try:
                self.refresh()
            except Exception:
                self.log.exception("refreshing gauges failed")
            if stop.wait(self.interval):
                return

    def refresh(self) -> None:
        m = self.manager.metrics
        excluded = self.manager.is_namespace_excluded
        dgds: Counter = Counter()
        for o in self.stores[store.DGD].list():
            ns = o["metadata"].get("namespace") or ""
            if not excluded(ns):
                dgds[(ns, (o.get("status") or {}).get("state") or "initializing")] += 1
        m.set_resource_counts(names.DGD_KIND, dict(dgds))
        dcds: Counter = Counter()
        for o in self.stores[store.DCD].list():
            ns = o["metadata"].get("namespace") or ""
            if not excluded(ns):
                c = condition(o.get("status"), AVAILABLE)
                dcds[(ns, "available" if c and c.get("status") == "True" else "unavailable")] += 1
        m.set_resource_counts(names.DCD_KIND, dict(dcds))
        pods: Counter = Counter()
        for d in self.stores[DEPLOYMENTS].list():
            md = d["metadata"]
            ns = md.get("namespace") or ""
            if excluded(ns):
                continue
            ctype = (md.get("labels") or {}).get(names.LABEL_COMPONENT_TYPE, names.DEFAULT_COMPONENT_TYPE)
            pods[(ctype, ns)] += int((d.get("status") or {}).get("replicas") or 0)
        m.set_managed_pods(dict(pods))
