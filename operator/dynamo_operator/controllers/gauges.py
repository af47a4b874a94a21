"""The resource gauges (``dynamo_operator_resources_total``, ``dynamo_operator_managed_pods_total``),
recounted from the graph family's caches every ``gauge_interval`` seconds on every replica."""

from __future__ import annotations

import threading
from collections import Counter

from dynamo_operator.render import names
from dynamo_operator.runtime.client import DEPLOYMENTS, ResourceDescriptor
from dynamo_operator.runtime.informer import Indexer
from dynamo_operator.runtime.log import get_logger

from . import store
from .status import AVAILABLE, condition
from .wiring import Wiring


def register(w: Wiring) -> GaugeRefresher:
    gauges = GaugeRefresher(w.manager, w.deps.stores, w.tunables.gauge_interval)
    w.manager.add_runnable(gauges.start, needs_leader=False, stop_fn=gauges.stop, name="resource-gauges")
    return gauges


class GaugeRefresher:
    """Every ``interval`` seconds: DGDs by state, DCDs by availability, pods by component type (sum of the
    managed Deployments' ``status.replicas``), from the caches (no API requests)."""

    def __init__(self, manager, stores: dict[ResourceDescriptor, Indexer], interval: float):
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
