"""DynamoGraphDeployment controller: DGD → one DCD per component, or on the Grove pathway one PodCliqueSet
plus the components' Services / ConfigMaps / ServiceAccounts, exactly as ``render_graph`` renders them;
children no longer rendered are deleted (switching pathways removes the other pathway's children); status
``state``, ``Ready``, ``observedGeneration`` and ``components`` (replica counts read from each component's
Deployment, its DCD's status for LeaderWorkerSets, or Grove's PodCliques / PodCliqueScalingGroups)."""

from __future__ import annotations

from dynamo_operator.render import RenderError, names, render_graph
from dynamo_operator.render import grove as rgrove
from dynamo_operator.runtime.client import CONFIGMAPS, DEPLOYMENTS, ROLEBINDINGS, SERVICEACCOUNTS, SERVICES
from dynamo_operator.runtime.controller import Request, Result

from . import grove as grove_status
from . import status as st
from . import store
from .common import Deps, StatusWriter, awaiting_gc, log, namespace_terminating, short_error
from .dcd import LWS_NOT_RECONCILED
from .sync import (
    PODCLIQUES,
    PODCLIQUESCALINGGROUPS,
    PODCLIQUESETS,
    ChildSyncer,
    ChildType,
    Conflict,
    OwnershipConflict,
    controller_ref,
)

# the kinds a DGD owns directly (DCDs; on the Grove pathway the PodCliqueSet and the companions)
_DGD_CHILD_KINDS = (store.DCD, PODCLIQUESETS, SERVICES, CONFIGMAPS, SERVICEACCOUNTS, ROLEBINDINGS)


class DGDReconciler:
    def __init__(self, deps: Deps):
        self.deps = deps
        # it reads Deployments (and Grove's objects) from the shared caches for status
        self.syncer = ChildSyncer(
            deps.client,
            deps.recorder,
            {res: deps.stores[res] for res in _DGD_CHILD_KINDS if res in deps.stores},
            deps.recent,
        )
        self.status = StatusWriter(deps.client, store.DGD, deps.recent)
        self.dgds = deps.stores[store.DGD]
        self.deployments = deps.stores.get(DEPLOYMENTS)

    def __call__(self, req: Request) -> Result:
        live = self.deps.recent.resolve(self.dgds.get(req.namespace, req.name))
        if live is None or live["metadata"].get("deletionTimestamp"):
            return Result()
        internal = store.to_internal(live)
        gen = live["metadata"].get("generation")
        old = internal.get("status") or {}
        try:
            desired = render_graph(internal, self.deps.render_context(req.namespace))
        except RenderError as e:
            return self._fail(live, old, gen, st.REASON_INVALID_SPEC, str(e), "InvalidSpec")
        try:
            synced = self.syncer.apply(live, desired)
        except Conflict:
            return Result(requeue=True)
        except OwnershipConflict as e:
            if (wait := awaiting_gc(e, live)) is not None:
                return wait
            self._fail(live, old, gen, st.REASON_OWNERSHIP, str(e), "OwnershipConflict")
            return Result(requeue_after=10)
        except Exception as e:
            if namespace_terminating(e):
                log().info("namespace terminating; nothing to reconcile", namespace=req.namespace)
                return Result()
            message = f"Failed to reconcile the components: {short_error(e)}"
            self.deps.recorder.warning(live, "ReconcileError", message)
            try:  # observedGeneration stays: this generation was not fully applied
                self.status.write(
                    live, st.dgd_status(old, None, st.STATE_FAILED, st.REASON_FAILED, message, None)
                )
            except Exception:
                log().warning("could not record the failure in status", error=short_error(e))
            raise
        pcs = next(
            (r.obj for r, d in zip(synced, desired, strict=True) if d["kind"] == rgrove.PCS_KIND), None
        )
        if pcs is not None:
            components = [
                self._grove_component(internal, comp, pcs) for comp in internal["spec"]["components"]
            ]
        else:
            components = [
                self._component(req.namespace, comp, dcd, result.obj)
                for comp, dcd, result in zip(internal["spec"]["components"], desired, synced, strict=True)
            ]
        state, reason, message = st.dgd_ready_condition(components)
        new = st.dgd_status(old, gen, state, reason, message, {c.name: c.replica_status for c in components})
        try:
            self.status.write(live, new)
        except Conflict:
            return Result(requeue=True)
        return Result()

    def _component(self, namespace: str, comp: dict, desired_dcd: dict, dcd_wire: dict) -> st.ComponentState:
        name = desired_dcd["metadata"]["name"]
        runtime_ns = (desired_dcd["metadata"].get("labels") or {}).get(names.LABEL_DYNAMO_NAMESPACE)
        want = comp.get("replicas")
        want = 1 if want is None else int(want)
        dcd = store.to_internal(dcd_wire)
        multinode = int(((comp.get("multinode") or {}).get("nodeCount")) or 1) > 1
        if multinode or self.deployments is None:
            return self._from_dcd_status(comp["name"], dcd, want)
        dep = self.deps.recent.resolve(self.deployments.get(namespace, name))
        if dep is not None:
            ref = controller_ref(dep)
            if ref is None or ref.get("uid") != dcd["metadata"].get("uid"):
                dep = None  # not (yet) this DCD's Deployment
        rs = st.replica_status("Deployment", name, runtime_ns, dep)
        if dep is not None and not st.dcd_observed(dcd):
            g = dcd["metadata"].get("generation")
            readiness = st.Readiness(
                False, st.UPDATING, f"component controller has not applied generation {g}"
            )
        else:
            readiness = st.deployment_readiness(dep, want)
        return st.ComponentState(comp["name"], readiness, rs, dep is not None)

    def _grove_component(self, dgd: dict, comp: dict, pcs: dict) -> st.ComponentState:
        """A component on the Grove pathway: its PodClique / PodCliqueScalingGroup, read from the cache when
        Grove's API was served at startup, else by a GET (404: not created)."""
        kind, name = rgrove.podclique_names(dgd, comp)
        res = PODCLIQUESCALINGGROUPS if kind == rgrove.PCSG_KIND else PODCLIQUES
        namespace = dgd["metadata"].get("namespace") or ""
        cache = self.deps.stores.get(res)
        obj = (
            cache.get(namespace, name)
            if cache is not None
            else self.syncer.get(ChildType(res), namespace, name)
        )
        want = comp.get("replicas")
        want = 1 if want is None else int(want)
        runtime_ns = names.dynamo_namespace(
            namespace, dgd["metadata"]["name"], bool(comp.get("globalDynamoNamespace"))
        )
        readiness = grove_status.component_readiness(kind, name, obj, want, pcs)
        rs = grove_status.replica_status(kind, name, runtime_ns, obj)
        return st.ComponentState(comp["name"], readiness, rs, obj is not None)

    def _from_dcd_status(self, cname: str, dcd: dict, want: int) -> st.ComponentState:
        s = dcd.get("status") or {}
        rs = dict(s.get("component") or {})
        avail = st.condition(s, st.AVAILABLE)
        if not st.dcd_observed(dcd):
            readiness = st.Readiness(False, st.NOT_CREATED if not rs else st.UPDATING, "not reconciled yet")
        elif avail is not None and avail.get("status") == "True":
            readiness = st.Readiness(True, "", avail.get("message") or "available")
        else:
            msg = (avail or {}).get("message") or f"{rs.get('readyReplicas', 0)}/{want} ready"
            missing = (avail or {}).get("reason") == LWS_NOT_RECONCILED
            readiness = st.Readiness(False, st.ORCHESTRATOR_MISSING if missing else st.PODS_NOT_READY, msg)
        return st.ComponentState(cname, readiness, rs, bool(rs))

    def _fail(self, live: dict, old: dict, gen, reason: str, message: str, event: str) -> Result:
        new = st.dgd_status(old, gen, st.STATE_FAILED, reason, message, None)
        try:
            written = self.status.write(live, new)
        except Conflict:
            return Result(requeue=True)
        if written is not None:
            self.deps.recorder.warning(live, event, message)
        log().info("graph not reconciled", reason=reason, message=message)
        return Result()
