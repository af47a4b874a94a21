"""DynamoGraphDeploymentScalingAdapter (DGDSA): creation and deletion by the DGD controller
(``AdapterSync``) and the adapter controller (``AdapterReconciler``) that copies the adapter's replicas
into the DGD.

Who writes what (one writer per field):

* the **DGD controller** creates an adapter for every component with ``scalingAdapter`` (seeded with the
  component's replicas, so nothing jumps), never rewrites its ``spec.replicas``, and deletes the adapters
  of components that dropped ``scalingAdapter`` (event ``AdapterDeleted``); the DGD's replicas then stay
  at the value the adapter last wrote, so handing control back does not scale;
* **HPA / KEDA / the planner / ``kubectl scale``** write ``spec.replicas`` through ``/scale``;
* the **adapter controller** writes that value into the DGD component's ``replicas`` (event ``Scaled``,
  ``status.lastScaleTime``) and publishes ``status.replicas`` and ``status.selector`` (what ``/scale``
  reads: the HPA finds the component's pods with the selector).

Adapters are read and written in the storage version (v1alpha1: ``dgdRef.serviceName``); the DGD through
``store`` like every controller.
"""

from __future__ import annotations

import copy

from kubernetes.client.exceptions import ApiException

from dynamo_operator.api.conversion import convert
from dynamo_operator.render import names
from dynamo_operator.render import scaling as sc
from dynamo_operator.runtime.controller import Controller, Request, Result

from . import store
from .common import Deps, log, short_error
from .status import now_rfc3339
from .store import DGDSA
from .sync import Conflict, controller_ref, owner_reference
from .wiring import Wiring

CONTROLLER = "DynamoGraphDeploymentScalingAdapter"


EV_CREATED = "AdapterCreated"
EV_DELETED = "AdapterDeleted"
EV_SCALED = "Scaled"
EV_NOT_FOUND = "GraphNotFound"
EV_NO_COMPONENT = "ComponentNotFound"
EV_NOT_ENABLED = "ScalingAdapterNotEnabled"
EV_OWNED_ELSEWHERE = "AdapterOwnershipConflict"
EV_SCALE_FAILED = "ScaleFailed"


def _internal(obj: dict) -> dict:
    """An adapter in v1beta1 (``dgdRef.componentName``)."""
    if obj.get("apiVersion") == names.V1BETA1:
        return copy.deepcopy(obj)
    return convert(obj, "v1beta1")


def _ref(adapter: dict) -> tuple[str, str]:
    ref = (_internal(adapter).get("spec") or {}).get("dgdRef") or {}
    return str(ref.get("name") or ""), str(ref.get("componentName") or "")


class AdapterSync:
    """The DGD controller's side: adapters exist exactly for the components that set ``scalingAdapter``."""

    def __init__(self, deps: Deps):
        self.deps = deps
        self.adapters = deps.stores.get(DGDSA)

    def _owned(self, dgd_wire: dict) -> list[dict]:
        md = dgd_wire["metadata"]
        if self.adapters is None:
            items = self.deps.client.list(DGDSA, md["namespace"]).get("items") or []
        else:
            items = [self.deps.recent.resolve(o) or o for o in self.adapters.list(md["namespace"])]
        return [a for a in items if (controller_ref(a) or {}).get("uid") == md["uid"]]

    def apply(self, dgd_wire: dict, dgd_internal: dict) -> list[str]:
        """Create the missing adapters, delete the unwanted ones; returns the names of the wanted ones."""
        wanted = {a["metadata"]["name"]: a for a in sc.render_adapters(dgd_internal)}
        ns = dgd_wire["metadata"]["namespace"]
        owned = {a["metadata"]["name"]: a for a in self._owned(dgd_wire)}
        for name, desired in wanted.items():
            if name in owned:
                continue
            cached = self.adapters.get(ns, name) if self.adapters is not None else None
            if cached is not None:
                ctrl = controller_ref(cached) or {}
                self.deps.recorder.warning(
                    dgd_wire,
                    EV_OWNED_ELSEWHERE,
                    f"{sc.DGDSA_KIND} {name} exists and is controlled by {ctrl.get('kind')} "
                    f"{ctrl.get('name')}; delete it so this graph can create its own",
                )
                continue
            body = convert(desired, store.WIRE_VERSION)
            body["metadata"]["ownerReferences"] = [owner_reference(dgd_wire)]
            try:
                self.deps.client.create(DGDSA, body)
            except ApiException as e:
                if e.status == 409:  # the cache has not seen it yet
                    continue
                raise
            ref = desired["spec"]["dgdRef"]["componentName"]
            self.deps.recorder.normal(
                dgd_wire,
                EV_CREATED,
                f"Created {sc.DGDSA_KIND} {name} for component {ref} "
                f"(replicas {desired['spec']['replicas']})",
            )
        for name, adapter in owned.items():
            if name in wanted or adapter["metadata"].get("deletionTimestamp"):
                continue
            try:
                self.deps.client.delete(DGDSA, name, ns, preconditions={"uid": adapter["metadata"]["uid"]})
            except ApiException as e:
                if e.status not in (404, 409):
                    raise
                continue
            _, comp = _ref(adapter)
            self.deps.recorder.normal(
                dgd_wire,
                EV_DELETED,
                f"Deleted {sc.DGDSA_KIND} {name}: component {comp} no longer sets scalingAdapter "
                "(its replicas stay where the adapter left them)",
            )
        return sorted(wanted)


def adapters_of_graph(adapters, dgd: dict) -> list[Request]:
    """Adapter requests to re-queue when a DGD changes (its components' replicas or scalingAdapter)."""
    md = dgd.get("metadata") or {}
    ns, name = md.get("namespace") or "", md.get("name")
    out = []
    for a in adapters.list(ns):
        if _ref(a)[0] == name:
            out.append(Request(ns, a["metadata"]["name"]))
    return out


class AdapterReconciler:
    """Adapter → DGD component replicas, then the adapter's status (what ``/scale`` reports)."""

    def __init__(self, deps: Deps):
        self.deps = deps
        self.adapters = deps.stores[DGDSA]
        self.dgds = deps.stores[store.DGD]

    def __call__(self, req: Request) -> Result:
        live = self.deps.recent.resolve(self.adapters.get(req.namespace, req.name))
        if live is None or live["metadata"].get("deletionTimestamp"):
            return Result()
        adapter = _internal(live)
        spec = adapter.get("spec") or {}
        dgd_name, comp_name = _ref(live)
        want = int(spec.get("replicas") or 0)
        dgd_wire = self.deps.recent.resolve(self.dgds.get(req.namespace, dgd_name))
        if dgd_wire is None:
            self.deps.recorder.warning(
                live,
                EV_NOT_FOUND,
                f"DynamoGraphDeployment {req.namespace}/{dgd_name} (spec.dgdRef.name) not found; create it "
                "or point the adapter at an existing graph",
            )
            return Result(requeue_after=10)
        dgd = store.to_internal(dgd_wire)
        comp = sc.find_component(dgd, comp_name)
        if comp is None:
            self.deps.recorder.warning(
                live,
                EV_NO_COMPONENT,
                f"DynamoGraphDeployment {dgd_name} has no component {comp_name!r} "
                "(spec.dgdRef.componentName); fix the reference",
            )
            return Result()
        if not sc.has_adapter(comp):
            if (controller_ref(live) or {}).get("uid") == dgd_wire["metadata"].get("uid"):
                return Result()  # the graph dropped scalingAdapter: its controller deletes this adapter
            self.deps.recorder.warning(
                live,
                EV_NOT_ENABLED,
                f"component {comp_name!r} of {dgd_name} does not set scalingAdapter; this adapter does not "
                "scale it (set scalingAdapter: {} on the component)",
            )
            return Result()
        status = dict(adapter.get("status") or {})
        have = sc.component_replicas(comp)
        if have != want:
            try:
                self._scale(dgd_wire, comp_name, want)
            except Conflict:
                return Result(requeue=True)
            except ApiException as e:
                self.deps.recorder.warning(
                    live,
                    EV_SCALE_FAILED,
                    f"Could not scale component {comp_name} of {dgd_name}: {short_error(e)}",
                )
                raise
            self.deps.recorder.normal(
                live, EV_SCALED, f"Scaled component {comp_name} of {dgd_name} from {have} to {want} replicas"
            )
            log().info("scaled component", dgd=dgd_name, component=comp_name, replicas=want, was=have)
            status["lastScaleTime"] = now_rfc3339()
        status["replicas"] = want
        status["selector"] = sc.adapter_selector(dgd_name, comp_name)
        if status != (adapter.get("status") or {}):
            body = copy.deepcopy(live)
            body["metadata"].pop("managedFields", None)
            body["status"] = status  # same shape in both versions
            try:
                out = self.deps.client.replace(DGDSA, body, subresource="status")
            except ApiException as e:
                if e.status == 409:
                    return Result(requeue=True)
                if e.status == 404:
                    return Result()
                raise
            self.deps.recent.remember(live, out)
        return Result()

    def _scale(self, dgd_wire: dict, comp_name: str, replicas: int) -> None:
        """Write ``replicas`` into the DGD component: a merge patch of that one field, guarded by the
        DGD's resourceVersion (a concurrent change is a 409 and a requeue, never a lost update)."""
        assert store.WIRE_VERSION == "v1alpha1"  # the wire keeps components in the spec.services map
        patch = {
            "metadata": {"resourceVersion": dgd_wire["metadata"]["resourceVersion"]},
            "spec": {"services": {comp_name: {"replicas": replicas}}},
        }
        try:
            out = self.deps.client.patch(
                store.DGD, dgd_wire["metadata"]["name"], patch, dgd_wire["metadata"]["namespace"]
            )
        except ApiException as e:
            if e.status == 409:
                raise Conflict("DGD changed while scaling") from e
            raise
        self.deps.recent.remember(dgd_wire, out)


def register(w: Wiring) -> Controller:
    """Primary DGDSAs; a DGD change re-queues the adapters that reference it (the DGD controller owns,
    creates and deletes them)."""
    ctl = w.manager.add_controller(
        CONTROLLER,
        primary=DGDSA,
        reconcile=AdapterReconciler(w.deps),
        workers=w.tunables.graph_workers,
        resource_type=DGDSA.kind,
    )
    adapters = w.graph_informers[DGDSA].store
    ctl.watch(w.graph_informers[store.DGD], lambda dgd: adapters_of_graph(adapters, dgd))
    return ctl
