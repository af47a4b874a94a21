"""DynamoComponentDeployment controller: DCD → ServiceAccount, RoleBinding, ConfigMap, Deployment (or
LeaderWorkerSet), Service, model headless Service, exactly as ``render_component`` renders them; status
``Available`` / ``DynamoComponentReady`` and ``status.component`` from the workload.

Events: a DCD that a graph created does not announce its routine creations (its graph's ``SuccessfulCreate``
already names it, and its Deployment and Services carry its name): in a burst of new graphs those Events
were one write in eight. Updates, deletions and every warning are recorded on the DCD; a DCD applied on its
own announces its creations too."""

from __future__ import annotations

from dynamo_operator.render import RenderError, names, render_component
from dynamo_operator.render.checkpoint_storage import uses_checkpoints
from dynamo_operator.render.info import component_info
from dynamo_operator.render.ingress import exposure_report
from dynamo_operator.render.restore import gate as restore_gate
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    DEPLOYMENTS,
    PODS,
    ROLEBINDINGS,
    SERVICEACCOUNTS,
    SERVICES,
)
from dynamo_operator.runtime.controller import Controller, Request, Result

from . import component_pods, store
from . import status as st
from .checkpoint_storage import CheckpointClaim
from .common import (
    Deferred,
    Deps,
    awaiting_gc,
    log,
    namespace_terminating,
    paced_status_writer,
    referrers,
    short_error,
)
from .dgd_checkpoints import checkpoint_users
from .gms import REASON_DEVICE_CLASS, missing_device_classes, owners_of_class
from .notices import NoticeEvents
from .sync import (
    DEVICECLASSES,
    LWS,
    RESOURCECLAIMTEMPLATES,
    ChildSyncer,
    Conflict,
    OwnershipConflict,
    controller_ref,
)
from .wiring import MANAGED_SELECTOR, Wiring

CONTROLLER = "DynamoComponentDeployment"


def _desired_replicas(workload: dict) -> int:
    r = (workload.get("spec") or {}).get("replicas")
    return 1 if r is None else int(r)


def part_of_graph(dcd: dict) -> bool:
    """Created (and controlled) by a DynamoGraphDeployment."""
    ref = controller_ref(dcd) or {}
    return store.DGD.matches(ref.get("apiVersion", ""), ref.get("kind", ""))


LWS_NOT_RECONCILED = "LeaderWorkerSetNotReconciled"  # Available reason: no LWS controller reports
WAITING_FOR_CHECKPOINT = "WaitingForCheckpoint"  # Available reason: startupPolicy WaitForCheckpoint holds it


def lws_available_reason(readiness: st.Readiness) -> str:
    if readiness.ready:
        return "LeaderWorkerSetReady"
    return LWS_NOT_RECONCILED if readiness.kind == st.ORCHESTRATOR_MISSING else "LeaderWorkerSetNotReady"


def lws_readiness(lws: dict | None, desired: int) -> st.Readiness:
    """Ready when ``readyReplicas`` reaches the desired group count. A LeaderWorkerSet the apiserver
    accepted but no LWS controller ever reported on (no ``status.conditions``) says so: on a cluster without
    that controller (kwok) its pods never exist, and the status must not suggest they are coming."""
    if lws is None:
        return st.Readiness(False, st.NOT_CREATED, "LeaderWorkerSet not created yet")
    s = lws.get("status") or {}
    ready = int(s.get("readyReplicas") or 0)
    md = lws.get("metadata") or {}
    counts = f"{ready}/{desired} replica groups ready"
    if desired == 0 or ready >= desired:
        return st.Readiness(True, "", counts)
    if not s.get("conditions"):
        return st.Readiness(
            False,
            st.ORCHESTRATOR_MISSING,
            f"LeaderWorkerSet {md.get('namespace')}/{md.get('name')} was accepted but no LeaderWorkerSet "
            f"controller has reported on it ({counts}, no status conditions); install the LWS controller",
        )
    return st.Readiness(False, st.PODS_NOT_READY, counts)


class DCDReconciler:
    def __init__(self, deps: Deps):
        self.deps = deps
        self.syncer = ChildSyncer(deps.client, deps.recorder, deps.stores, deps.recent)
        self.status = paced_status_writer(deps, store.DCD)
        self.dcds = deps.stores[store.DCD]
        self.notices = NoticeEvents(deps.recorder)
        self.checkpoint_claim = CheckpointClaim.from_deps(
            deps
        )  # a standalone DCD's checkpoint claim (a graph's: the graph)

    def __call__(self, req: Request) -> Result:
        live = self.deps.recent.resolve(self.dcds.get(req.namespace, req.name))
        if live is None or live["metadata"].get("deletionTimestamp"):
            return Result()  # children go with it (garbage collection through the owner references)
        internal = store.to_internal(live)
        gen = live["metadata"].get("generation")
        old_status = internal.get("status") or {}
        selector = {names.LABEL_SELECTOR: req.name}
        ctx = self.deps.render_context(req.namespace)
        try:
            desired = render_component(internal, ctx)
        except RenderError as e:
            return self._fail(live, old_status, gen, selector, "InvalidSpec", str(e), event="InvalidSpec")
        if not part_of_graph(live):  # a graph's DCDs: the graph records their notices and makes their claim
            self._standalone(live, internal)
        missing = missing_device_classes([internal.get("spec") or {}], self.deps.stores.get(DEVICECLASSES))
        if missing:
            reason = REASON_DEVICE_CLASS
            return self._fail(live, old_status, gen, selector, reason, missing, event=reason)
        try:
            results = self.syncer.apply(live, desired, announce=not part_of_graph(live))
        except Conflict:
            return Result(requeue=True)
        except OwnershipConflict as e:
            if (wait := awaiting_gc(e, live)) is not None:
                return wait
            self._fail(
                live, old_status, gen, selector, "OwnershipConflict", str(e), event="OwnershipConflict"
            )
            return Result(requeue_after=30)
        except Exception as e:
            if namespace_terminating(e):
                log().info("namespace terminating; nothing to reconcile", namespace=req.namespace)
                return Result()
            self.deps.recorder.warning(live, "ReconcileError", f"Failed to reconcile: {short_error(e)}")
            try:
                self._write(
                    live,
                    st.dcd_status(
                        old_status,
                        None,
                        selector,
                        None,
                        st.Readiness(False, "", f"Failed to reconcile: {short_error(e)}"),
                        available_reason="ReconcileError",
                    ),
                )
            except Exception:
                log().warning("could not record the failure in status", error=short_error(e))
            raise
        workload_desired = next(c for c in desired if c["kind"] in ("Deployment", "LeaderWorkerSet"))
        workload = next(r.obj for r, c in zip(results, desired, strict=True) if c is workload_desired)
        want = _desired_replicas(workload_desired)
        if workload_desired["kind"] == "Deployment":
            readiness = st.deployment_readiness(workload, want)
        else:
            readiness = lws_readiness(workload, want)
        runtime_ns = st.runtime_namespace(internal["metadata"].get("labels"))
        scheduled = None  # a LeaderWorkerSet's replica is a group of pods: not reported
        if workload_desired["kind"] == "Deployment":
            scheduled = component_pods.scheduled_replicas(self.deps.stores.get(PODS), req.namespace, req.name)
        component = st.replica_status(
            workload_desired["kind"], workload_desired["metadata"]["name"], runtime_ns, workload, scheduled
        )
        reason = None if workload_desired["kind"] == "Deployment" else lws_available_reason(readiness)
        waiting = restore_gate(component_info(internal, ctx.discovery_backend), ctx)
        if waiting:  # zero replicas are "ready" to the workload; the component is not
            readiness, reason = st.Readiness(False, st.WAITING_CHECKPOINT, waiting), WAITING_FOR_CHECKPOINT
        new = st.dcd_status(old_status, gen, selector, component, readiness, available_reason=reason)
        ctx = self.deps.render_context(req.namespace)
        st.set_exposed(new, *exposure_report(component_info(internal, ctx.discovery_backend), ctx), gen)
        owned = part_of_graph(live)
        try:
            written = self.status.write(live, new, lambda o, n: st.dcd_progress_only(o, n, owned))
        except Conflict:
            return Result(requeue=True)
        if isinstance(written, Deferred):
            return Result(requeue_after=written.seconds)
        return Result()

    def _standalone(self, live: dict, internal: dict) -> None:
        """A DCD of its own: its accepted-with-no-effect notices as Events, its checkpoint claim."""
        self.notices.record(live, internal)
        if uses_checkpoints([internal.get("spec") or {}]):
            self.checkpoint_claim.ensure(live, live["metadata"]["namespace"])

    def _write(self, live: dict, new_status: dict) -> dict | None:
        return self.status.write(live, new_status)

    def _fail(
        self, live: dict, old: dict, gen, selector: dict, reason: str, message: str, event: str
    ) -> Result:
        new = st.dcd_status(
            old, gen, selector, None, st.Readiness(False, "", message), available_reason=reason
        )
        try:
            written = self._write(live, new)
        except Conflict:
            return Result(requeue=True)
        if written is not None:  # report a failure once per change, not on every resync
            self.deps.recorder.warning(live, event, message)
        log().info("component not reconciled", reason=reason, message=message)
        return Result()


def register(w: Wiring) -> Controller:
    """Primary DCDs; owns Deployments, Services, ConfigMaps, Ingresses (and VirtualServices with Istio,
    LeaderWorkerSets when enabled); the shared
    planner/epp ServiceAccounts and RoleBindings map to every DCD referencing them; a change of a pull
    Secret re-queues the DCDs of its namespace, whose pod specs may gain or lose a discovered secret, as does
    a change of the namespace's MPI SSH Secret (its key id is on multinode TensorRT-LLM pods); a
    DynamoCheckpoint event re-queues the DCDs referencing it (its ID, WaitForCheckpoint); a component's pod
    re-queues its DCD (``scheduledReplicas``, coalesced)."""
    owned = [DEPLOYMENTS, SERVICES, CONFIGMAPS, *w.exposure_kinds] + ([LWS] if w.lws_enabled else [])
    if w.dra_served:
        owned.append(RESOURCECLAIMTEMPLATES)
    ctl = w.manager.add_controller(
        CONTROLLER,
        primary=store.DCD,
        reconcile=DCDReconciler(w.deps),
        owns=[(res, MANAGED_SELECTOR) for res in owned],
        workers=w.tunables.component_workers,
        resource_type=names.DCD_KIND,
    )
    for res in (SERVICEACCOUNTS, ROLEBINDINGS):
        ctl.watch(w.managed(res), referrers(store.DCD))
    dcds = w.graph_informers[store.DCD].store

    def dcds_in_namespace(secret: dict) -> list[Request]:
        ns = (secret.get("metadata") or {}).get("namespace") or ""
        return [Request(ns, (d.get("metadata") or {}).get("name") or "") for d in dcds.list(ns)]

    if w.pull_secrets is not None:
        ctl.watch(w.pull_secrets, dcds_in_namespace)
    if w.mpi_secrets is not None:  # new MPI SSH keys: the multinode pods are stamped with their id and roll
        ctl.watch(w.mpi_secrets, dcds_in_namespace)
    # scheduledReplicas: a pod placed or gone re-queues its component; a pod changes several times while it
    # starts, so its events are coalesced per component over the graph's window (one pass, not one per event)
    ctl.watch(w.graph_informers[PODS], component_pods.component_of, delay=w.tunables.graph_coalesce_seconds)
    ctl.watch(w.graph_informers[store.CHECKPOINTS], checkpoint_users(dcds))
    if w.device_classes_watched:  # a DeviceClass appearing: components waiting for it go on
        spec = lambda dcd: [store.to_internal(dcd).get("spec") or {}]  # noqa: E731
        ctl.watch(w.graph_informers[DEVICECLASSES], owners_of_class(dcds, spec))
    return ctl
