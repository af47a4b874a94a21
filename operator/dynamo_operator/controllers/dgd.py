"""DynamoGraphDeployment controller: DGD → one DCD per component, or on the Grove pathway one PodCliqueSet
plus the components' Services / ConfigMaps / ServiceAccounts, exactly as ``render_graph`` renders them;
children no longer rendered are deleted (switching pathways removes the other pathway's children); a scaling
adapter per component with ``scalingAdapter`` (``dgdsa.AdapterSync``); on the DCD pathway managed rolling
updates of the workers, and ``spec.restart`` on both pathways (``rollout``; on Grove the restart id goes
onto the components' cliques and Grove rolls the pods); status ``state``,
``Ready``, ``observedGeneration``, ``components`` (replica counts read from each component's Deployment, its
DCD's status for LeaderWorkerSets, or Grove's PodCliques / PodCliqueScalingGroups), ``rollingUpdate`` and
``restart``, with an Event for every transition."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace as dc_replace

from kubernetes.client.exceptions import ApiException

from dynamo_operator.render import (
    GraphRender,
    RenderContext,
    RenderError,
    etcdaccess,
    names,
    natsaccess,
    render_graph_parts,
)
from dynamo_operator.render import graph_checkpoint as rgc
from dynamo_operator.render import grove as rgrove
from dynamo_operator.render.checkpoint_storage import uses_checkpoints
from dynamo_operator.render.graph import graph_exposure_report, restart_annotation, with_restart
from dynamo_operator.render.hashing import ANN_CURRENT_WORKER_HASH, worker_hash
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    DEPLOYMENTS,
    PODS,
    PVCS,
    ROLEBINDINGS,
    SERVICEACCOUNTS,
    SERVICES,
)
from dynamo_operator.runtime.controller import Controller, Request, Result

from . import component_pods, rollout, store
from . import grove as grove_status
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
from .dcd import LWS_NOT_RECONCILED
from .dgd_checkpoints import CheckpointSync, checkpoint_users
from .dgdsa import AdapterSync
from .epp import EppSync
from .etcdaccess import EtcdAccessSync
from .gms import DGD_REASON_DEVICE_CLASS, REASON_DEVICE_CLASS, missing_device_classes, owners_of_class
from .mpisecret import MPISecretSync
from .natsaccess import NatsAccessSync
from .netpol import NetworkPolicySync
from .notices import NoticeEvents
from .pvc import PVCSync
from .sync import (
    DESTINATIONRULES,
    DEVICECLASSES,
    INFERENCEPOOLS,
    INGRESSES,
    NETWORKPOLICIES,
    PODCLIQUES,
    PODCLIQUESCALINGGROUPS,
    PODCLIQUESETS,
    RESOURCECLAIMTEMPLATES,
    VIRTUALSERVICES,
    ChildSyncer,
    ChildType,
    Conflict,
    OwnershipConflict,
    controller_ref,
)
from .wiring import MANAGED_SELECTOR, Wiring

CONTROLLER = "DynamoGraphDeployment"
# a pass that wrote MPI SSH keys ends; the Secret's watch event starts the next one, this is the fallback
MPI_KEYS_SETTLE_SECONDS = 2.0


class Applied(list):
    """The children's sync results (in the rendered order) and the components whose automatic checkpoint
    name is taken by an object that is not theirs."""

    def __init__(self, results, conflicts: frozenset[str]):
        super().__init__(results)
        self.conflicts = conflicts


def _checkpoint_status(parts: GraphRender) -> dict | None:
    """``status.checkpoints``: each checkpoint-enabled component's checkpoint (None: drop the field)."""
    return {name: plan.status() for name, plan in parts.checkpoints.items()} or None


def _checkpoint_events(parts: GraphRender) -> list[rollout.Event]:
    """Warnings on the graph for each component whose checkpoint failed or whose Job is stalled: written
    with the status that names it, so a change of cause is one Event (repeats are counted by the recorder)."""
    out = []
    for plan in parts.checkpoints.values():
        notice = plan.notice()
        if notice is not None:
            out.append(rollout.Event(True, *notice))
    return out


def _checkpoint_states(
    components: list[st.ComponentState], plans: dict, held: set[str], conflicts: frozenset[str]
) -> list[st.ComponentState]:
    """A component waiting for its checkpoint (WaitForCheckpoint) is not ready, whatever its replicas
    say (0 while held), nor is one whose checkpoint name is taken by a foreign object."""
    out = []
    for c in components:
        plan = plans.get(c.name)
        if plan is not None and c.name in conflicts:
            message = (
                f"DynamoCheckpoint {plan.name} exists and is not this graph's checkpoint; delete it so the "
                "graph can create its own"
            )
        elif plan is not None and plan.waiting:
            keep = "; its running pods keep their current revision until then" if c.name in held else ""
            message = plan.waiting + keep
        else:
            out.append(c)
            continue
        out.append(dc_replace(c, readiness=st.Readiness(False, st.WAITING_CHECKPOINT, message)))
    return out


@dataclass(frozen=True)
class GroveRestart:
    step: rollout.RestartStep
    annotations: dict[str, str]  # component -> the restart id its clique carries after this pass


# the kinds a DGD owns directly (DCDs; on the Grove pathway the PodCliqueSet and the companions)
_DGD_CHILD_KINDS = (
    store.DCD,
    PODCLIQUESETS,
    SERVICES,
    CONFIGMAPS,
    SERVICEACCOUNTS,
    ROLEBINDINGS,
    INGRESSES,
    VIRTUALSERVICES,
    RESOURCECLAIMTEMPLATES,
)


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
        self.status = paced_status_writer(deps, store.DGD)
        self.dgds = deps.stores[store.DGD]
        self.dcds = deps.stores[store.DCD]
        self.deployments = deps.stores.get(DEPLOYMENTS)
        self.adapters = AdapterSync(deps)
        self.policies = NetworkPolicySync(deps)  # MPI sshd NetworkPolicies (mpi.sshNetworkPolicy)
        self.checkpoints = CheckpointSync(deps)  # the graph's automatic DynamoCheckpoints
        self.pvcs = PVCSync(deps)  # spec.pvcs with create: true (never deleted, never owned)
        self.mpi_secrets = MPISecretSync(deps)  # the namespace's own MPI SSH keys
        self.etcd_access = EtcdAccessSync(deps)  # the namespace's own etcd user, key root and certificate
        self.nats_access = NatsAccessSync(deps)  # the namespace's own NATS account and certificate
        self.epp = EppSync(deps)  # an EPP's InferencePool and DestinationRule
        self.notices = NoticeEvents(deps.recorder)
        self.checkpoint_claim = CheckpointClaim.from_deps(
            deps
        )  # checkpoint.storage.pvc.create: the namespace's claim

    def __call__(self, req: Request) -> Result:
        live = self.deps.recent.resolve(self.dgds.get(req.namespace, req.name))
        if live is None or live["metadata"].get("deletionTimestamp"):
            return Result()
        internal = store.to_internal(live)
        gen = live["metadata"].get("generation")
        old = internal.get("status") or {}
        ctx = self.deps.render_context(req.namespace)
        restart = self._grove_restart(req.namespace, internal, old) if ctx.uses_grove(internal) else None
        try:
            parts = render_graph_parts(internal, ctx, restart.annotations if restart else None)
        except RenderError as e:
            return self._fail(live, old, gen, st.REASON_INVALID_SPEC, str(e), "InvalidSpec")
        self.notices.record(live, internal)  # fields accepted with no effect, once per generation
        comps = internal["spec"]["components"]
        if uses_checkpoints(comps):
            self.checkpoint_claim.ensure(live, req.namespace)
        missing = missing_device_classes(comps, self.deps.stores.get(DEVICECLASSES))
        if missing:  # nothing is applied until the components' claims can be allocated
            return self._fail(live, old, gen, DGD_REASON_DEVICE_CLASS, missing, REASON_DEVICE_CLASS)
        keys = self._mpi_keys(req, live, internal, old, ctx)
        if keys is not None:  # new MPI SSH keys: the next pass renders the pods with them
            return keys
        for sync in (self.etcd_access, self.nats_access):
            access = self._access(sync, req, live, internal, old, ctx)
            if access is not None:  # the pods mount the namespace's certificates: not applied without them
                return access
        if restart is not None:
            return self._reconcile_grove(req, live, internal, gen, old, parts, restart.step)
        return self._reconcile_dcds(req, live, internal, gen, old, parts)

    def _reconcile_dcds(
        self, req: Request, live: dict, internal: dict, gen, old: dict, parts: GraphRender
    ) -> Result:
        """The DCD pathway: a DCD per component (``parts.children``, in component order), the restart and
        the managed rolling update of the workers, the graph's checkpoints, and the graph's status from
        its components."""
        comps = internal["spec"]["components"]
        desired = parts.children
        whash = worker_hash(internal)
        stored = (live["metadata"].get("annotations") or {}).get(ANN_CURRENT_WORKER_HASH)
        if stored is None:  # never rolled: the live revision is the one its worker DCDs carry
            stored = self._live_worker_hash(req.namespace, comps, desired, whash)
            if stored is not None and stored != whash:  # a first rolling update starts: record it first
                try:
                    live = self._store_hash(live, stored)
                except Conflict:
                    return Result(requeue=True)
        restart = self._restart(req.namespace, internal, old, desired, whash, stored)
        held = rgc.hold_running_dcds(parts.checkpoints, desired, self._live_dcds(req.namespace, desired))
        applied = self._apply(req, live, internal, gen, old, desired, parts)
        if isinstance(applied, Result):
            return applied
        synced = applied
        components = [
            self._component(req.namespace, comp, dcd, result.obj)
            for comp, dcd, result in zip(comps, desired, synced, strict=True)
        ]
        components = _checkpoint_states(components, parts.checkpoints, held, synced.conflicts)
        hashes = {
            c["name"]: ((r.obj.get("metadata") or {}).get("labels") or {}).get(names.LABEL_WORKER_HASH)
            for c, r in zip(comps, synced, strict=True)
        }
        workers = {
            cs.name: cs.readiness.ready and hashes[cs.name] == whash
            for c, cs in zip(comps, components, strict=True)
            if c.get("type") in names.WORKER_TYPES
        }
        ru = rollout.rolling_update(old.get("rollingUpdate"), stored, whash, workers, st.now_rfc3339())
        new = self._dcd_graph_status(comps, desired, components, old, gen, ru, restart)
        st.set_optional(new, "checkpoints", _checkpoint_status(parts))
        self._exposed(new, internal, gen, desired)
        try:
            if ru.store_hash is not None and stored is not None:  # a new graph's needs no record
                live = self._store_hash(live, ru.store_hash)
            written = self.status.write(live, new, st.dgd_progress_only)
        except Conflict:
            return Result(requeue=True)
        if isinstance(written, Deferred):
            return Result(requeue_after=written.seconds)
        if written is not None:
            for ev in [*restart.events, *ru.events, *_checkpoint_events(parts)]:
                (self.deps.recorder.warning if ev.warning else self.deps.recorder.normal)(
                    live, ev.reason, ev.message
                )
        return Result()

    def _restart(
        self, namespace: str, internal: dict, old: dict, desired: list[dict], whash: str, stored: str | None
    ) -> rollout.RestartStep:
        """The restart's next step (``rollout.restart``), with its annotation put on the DCDs it restarts
        now and kept on those a finished restart already rolled (they must not roll again)."""
        comps = internal["spec"]["components"]
        before = self._live_states(namespace, comps, desired)
        rolling_pending = (old.get("rollingUpdate") or {}).get("phase") in rollout.RU_ACTIVE or (
            stored is not None and stored != whash and any(c.get("type") in names.WORKER_TYPES for c in comps)
        )
        rid = ((internal["spec"].get("restart") or {}).get("id")) or None
        done = {
            c["name"]: bool(s and s[1].readiness.ready and rid and restart_annotation(s[0]) == rid)
            for c, s in zip(comps, before, strict=True)
        }
        restart = rollout.restart(
            internal["spec"].get("restart"),
            old.get("restart"),
            [c["name"] for c in comps],
            done,
            rolling_pending,
        )
        for c, dcd, s in zip(comps, desired, before, strict=True):
            keep = restart_annotation(s[0]) if s else None
            if c["name"] in restart.targets and restart.restart_id:
                with_restart(dcd, restart.restart_id)
            elif keep:
                with_restart(dcd, keep)
        return restart

    @staticmethod
    def _dcd_graph_status(
        comps: list[dict],
        desired: list[dict],
        components: list[st.ComponentState],
        old: dict,
        gen,
        ru: rollout.RolloutStep,
        restart: rollout.RestartStep,
    ) -> dict:
        """The graph's status: readiness from its components, overlaid by the rolling update and the
        restart; workers report the runtime namespace of the revision serving until the cutover."""
        state, reason, message = st.dgd_ready_condition(components)
        state, reason, message = st.rolling_overlay(state, reason, message, ru.status)
        state, reason, message = st.restart_overlay(state, reason, message, restart.status)
        replicas = {c.name: c.replica_status for c in components}
        for c, dcd in zip(comps, desired, strict=True):
            if c.get("type") in names.WORKER_TYPES and replicas[c["name"]].get("runtimeNamespace"):
                ns_labels = dcd["metadata"].get("labels")
                replicas[c["name"]]["runtimeNamespace"] = st.runtime_namespace(ns_labels, ru.active_hash)
        new = st.dgd_status(old, gen, state, reason, message, replicas)
        st.set_optional(new, "rollingUpdate", ru.status)
        st.set_optional(new, "restart", restart.status)
        return new

    def _apply(
        self,
        req: Request,
        live: dict,
        internal: dict,
        gen,
        old: dict,
        desired: list[dict],
        parts: GraphRender,
    ) -> Applied | Result:
        """Apply the graph's automatic checkpoints (first: the components' controllers look them up), its
        claims (before the pods that mount them), the rendered children, scaling adapters, policies and EPP
        objects: the children as synced, or a ``Result`` when the pass must end here."""
        try:
            conflicts = self.checkpoints.apply(live, parts.checkpoints)
            self.pvcs.apply(live, internal)
            # the graph's own companions (its discovery account) first, then its DCDs
            results = self.syncer.apply(live, [*parts.companions, *desired])
            synced = Applied(results[len(parts.companions) :], frozenset(conflicts))
            self.adapters.apply(live, internal)
            self.policies.apply(live, internal)
            self.epp.apply(live, internal)
        except Conflict:
            return Result(requeue=True)
        except OwnershipConflict as e:
            if (wait := awaiting_gc(e, live)) is not None:
                return wait
            self._fail(live, old, gen, st.REASON_OWNERSHIP, str(e), "OwnershipConflict")
            return Result(requeue_after=10)
        except Exception as e:
            return self._apply_failed(req, live, old, e)
        return synced

    def _mpi_keys(
        self, req: Request, live: dict, internal: dict, old: dict, ctx: RenderContext
    ) -> Result | None:
        """The namespace's own MPI SSH Secret (``mpisecret.py``), before any child is applied: a ``Result``
        ending the pass when its keys were just written (the Secret's watch event brings the next pass,
        which renders the multinode pods with the new key id; the requeue is only the fallback)."""
        try:
            if self.mpi_secrets.apply(live, internal, ctx):
                return Result(requeue_after=MPI_KEYS_SETTLE_SECONDS)
        except Conflict:
            return Result(requeue=True)
        except Exception as e:
            return self._apply_failed(req, live, old, e)
        return None

    def _access(
        self, sync, req: Request, live: dict, internal: dict, old: dict, ctx: RenderContext
    ) -> Result | None:
        """The namespace's etcd access or NATS account (``controllers/etcdaccess.py``, ``natsaccess.py``),
        before any child is applied; a number from ``apply`` is the seconds to wait before the children (a
        NATS account written but not yet loaded by the server)."""
        try:
            wait = sync.apply(live, internal, ctx)
        except Conflict:
            return Result(requeue=True)
        except Exception as e:
            return self._apply_failed(req, live, old, e)
        return Result(requeue_after=wait) if wait else None

    def _apply_failed(self, req: Request, live: dict, old: dict, e: Exception) -> Result:
        """A write of the pass failed: nothing to do in a terminating namespace; otherwise a Warning Event and
        a failed status (observedGeneration stays: this generation was not fully applied), and the error
        raised again for the work queue's backoff."""
        if namespace_terminating(e):
            log().info("namespace terminating; nothing to reconcile", namespace=req.namespace)
            return Result()
        message = f"Failed to reconcile the components: {short_error(e)}"
        self.deps.recorder.warning(live, "ReconcileError", message)
        try:
            self.status.write(
                live, st.dgd_status(old, None, st.STATE_FAILED, st.REASON_FAILED, message, None)
            )
        except Exception:
            log().warning("could not record the failure in status", error=short_error(e))
        raise e

    def _grove_restart(self, namespace: str, internal: dict, old: dict) -> GroveRestart:
        """``spec.restart`` on the Grove pathway (``rollout.restart``): the id goes onto the cliques of the
        components restarting now, whose pods Grove then rolls (a clique's annotations are part of its pod
        template hash); a component is done when the live PodCliqueSet carries the id on its clique, Grove
        observed that generation and the component is ready again. One PodCliqueSet generation covers
        every component, so a component the last status no longer listed in progress stays done while the
        next one's generation rolls. Ids of finished restarts stay on their cliques so those pods do not
        roll again. Grove has no managed rolling update to supersede it."""
        comps = internal["spec"]["components"]
        pcs = self.syncer.live(ChildType(PODCLIQUESETS), namespace, rgrove.pcs_name(internal))
        have = rgrove.restart_ids(internal, pcs)
        rid = ((internal["spec"].get("restart") or {}).get("id")) or None
        prev = old.get("restart") or {}
        running = prev.get("observedID") == rid and prev.get("phase") == rollout.RESTART_RESTARTING
        in_progress = set(prev.get("inProgress") or [])

        def finished(comp: dict) -> bool:
            if not rid or have.get(comp["name"]) != rid:
                return False
            if running and comp["name"] not in in_progress:
                return True
            return self._grove_component(internal, comp, pcs).readiness.ready

        done = {c["name"]: finished(c) for c in comps}
        step = rollout.restart(
            internal["spec"].get("restart"), old.get("restart"), [c["name"] for c in comps], done, False
        )
        annotations = dict(have)
        if step.restart_id:
            annotations.update({name: step.restart_id for name in step.targets})
        return GroveRestart(step, annotations)

    def _reconcile_grove(
        self,
        req: Request,
        live: dict,
        internal: dict,
        gen,
        old: dict,
        parts: GraphRender,
        restart: rollout.RestartStep,
    ) -> Result:
        """The Grove pathway: Grove rolls its own pods (a restart is the id on a clique, see
        ``_grove_restart``), so status reads its cliques, overlaid by the restart."""
        desired = parts.children
        pcs_desired = next(d for d in desired if d["kind"] == rgrove.PCS_KIND)
        live_pcs = self.syncer.live(ChildType(PODCLIQUESETS), req.namespace, pcs_desired["metadata"]["name"])
        held = rgc.hold_running_cliques(parts.checkpoints, pcs_desired, live_pcs)
        applied = self._apply(req, live, internal, gen, old, desired, parts)
        if isinstance(applied, Result):
            return applied
        synced = applied
        pcs = next(r.obj for r, d in zip(synced, desired, strict=True) if d["kind"] == rgrove.PCS_KIND)
        components = [self._grove_component(internal, comp, pcs) for comp in internal["spec"]["components"]]
        components = _checkpoint_states(components, parts.checkpoints, held, synced.conflicts)
        state, reason, message = st.dgd_ready_condition(components)
        state, reason, message = st.restart_overlay(state, reason, message, restart.status)
        new = st.dgd_status(old, gen, state, reason, message, {c.name: c.replica_status for c in components})
        st.set_optional(new, "restart", restart.status)
        st.set_optional(new, "checkpoints", _checkpoint_status(parts))
        self._exposed(new, internal, gen)
        try:
            written = self.status.write(live, new, st.dgd_progress_only)
        except Conflict:
            return Result(requeue=True)
        if isinstance(written, Deferred):
            return Result(requeue_after=written.seconds)
        if written is not None:
            for ev in [*restart.events, *_checkpoint_events(parts)]:
                (self.deps.recorder.warning if ev.warning else self.deps.recorder.normal)(
                    live, ev.reason, ev.message
                )
        return Result()

    def _exposed(self, status: dict, internal: dict, gen, dcds: list[dict] | None = None) -> None:
        """The ``Exposed`` condition: each exposed component's endpoint, or the VirtualService it asked for
        and cannot have (``render/ingress.py``); ``dcds``: the rendered DCDs (DCD pathway)."""
        ctx = self.deps.render_context(internal["metadata"].get("namespace"))
        st.set_exposed(status, *graph_exposure_report(internal, ctx, dcds), gen)

    def _store_hash(self, live: dict, whash: str) -> dict:
        """Record the live worker revision on the DGD (metadata only: the generation does not move)."""
        patch = {
            "metadata": {
                "resourceVersion": live["metadata"]["resourceVersion"],
                "annotations": {ANN_CURRENT_WORKER_HASH: whash},
            }
        }
        md = live["metadata"]
        try:
            out = self.deps.client.patch(store.DGD, md["name"], patch, md["namespace"])
        except ApiException as e:
            if e.status == 409:
                raise Conflict("DGD changed while recording the worker hash") from e
            raise
        out.setdefault("apiVersion", store.DGD.api_version)
        out.setdefault("kind", store.DGD.kind)
        self.deps.recent.remember(live, out)
        return out

    def _live_worker_hash(
        self, namespace: str, comps: list[dict], desired: list[dict], whash: str
    ) -> str | None:
        """The worker revision the graph's live worker DCDs carry (their ``nvidia.com/dynamo-worker-hash``
        label; another than ``whash`` if any carries one), None when it has none yet (a new graph).

        A graph's ``nvidia.com/current-worker-hash`` annotation is written when its first rolling update
        starts, not when it is created: until then its DCDs say which revision is live, and recording
        it at creation was a second write of every new graph."""
        found = None
        for comp, dcd in zip(comps, desired, strict=True):
            if comp.get("type") not in names.WORKER_TYPES:
                continue
            wire = self.deps.recent.resolve(self.dcds.get(namespace, dcd["metadata"]["name"]))
            label = (((wire or {}).get("metadata") or {}).get("labels") or {}).get(names.LABEL_WORKER_HASH)
            if label and label != whash:
                return label
            found = found or label
        return found

    def _live_dcds(self, namespace: str, desired: list[dict]) -> dict[str, dict]:
        """The graph's live DCDs (v1beta1) by name."""
        out = {}
        for dcd in desired:
            wire = self.deps.recent.resolve(self.dcds.get(namespace, dcd["metadata"]["name"]))
            if wire is not None:
                out[dcd["metadata"]["name"]] = store.to_internal(wire)
        return out

    def _live_states(
        self, namespace: str, comps: list[dict], desired: list[dict]
    ) -> list[tuple[dict, st.ComponentState] | None]:
        """(live DCD in v1beta1, its state) per component before this pass writes anything."""
        out: list[tuple[dict, st.ComponentState] | None] = []
        for comp, dcd in zip(comps, desired, strict=True):
            wire = self.deps.recent.resolve(self.dcds.get(namespace, dcd["metadata"]["name"]))
            if wire is None:
                out.append(None)
                continue
            out.append((store.to_internal(wire), self._component(namespace, comp, dcd, wire)))
        return out

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
        scheduled = component_pods.scheduled_replicas(self.deps.stores.get(PODS), namespace, name)
        rs = st.replica_status("Deployment", name, runtime_ns, dep, scheduled)
        if dep is not None and not st.dcd_observed(dcd):
            g = dcd["metadata"].get("generation")
            readiness = st.Readiness(
                False, st.UPDATING, f"component controller has not applied generation {g}"
            )
        else:
            readiness = st.deployment_readiness(dep, want)
            stale = st.revision_mismatch(dcd, dep, restart_annotation(dcd)) if readiness.ready else None
            if stale:  # a cached Deployment older than the DCD the component controller applied
                readiness = st.Readiness(False, st.UPDATING, stale)
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


def _graphs_in(dgds, obj: dict) -> list[Request]:
    ns = (obj.get("metadata") or {}).get("namespace") or ""
    return [Request(ns, (d.get("metadata") or {}).get("name") or "") for d in dgds.list(ns)]


def _forget_etcd_access(w: Wiring, dgds, access: EtcdAccessSync):
    """On the delete of a namespace's etcd client Secret: when no graph there uses etcd any more (the
    garbage collector took it after the last one), the namespace's etcd user, role and keys go too, on a
    thread of their own (the informer's must not wait on etcd)."""

    def on_delete(obj: dict) -> None:
        md = obj.get("metadata") or {}
        namespace = md.get("namespace") or ""
        if (
            not etcdaccess.is_ours(obj)
            or (md.get("annotations") or {}).get(etcdaccess.ANN_ISSUED_FOR) != namespace
        ):
            return
        ctx = w.deps.render_context(namespace)
        if any(etcdaccess.graph_uses_etcd(store.to_internal(d), ctx) for d in dgds.list(namespace)):
            return  # deleted by hand while graphs use it: their next pass issues a new one

        forget = functools.partial(access.forget_namespace, namespace, ctx)
        in_background(f"etcd-forget-{namespace}", "a namespace's etcd access", namespace, forget)

    return on_delete


# How often a forget (a namespace's NATS account or etcd access) is tried before it is logged and left: it
# runs once, on the delete of the namespace's Secret, and nothing brings it back; a conflicting write of the
# accounts ConfigMap or an etcd that is restarting passes within the backoff (0.1 s, 0.2 s, ... 1.5 s in all)
FORGET_ATTEMPTS = 5


def in_background(name: str, what: str, namespace: str, fn: Callable[[], object]) -> threading.Thread:
    """Run ``fn`` on a thread of its own (an informer's handler must not wait on etcd or on a ConfigMap's
    retries), up to ``FORGET_ATTEMPTS`` times (each attempt reads what it changes again). The last failure is
    logged with ``what`` and the namespace: the thread has no caller to raise to, and an exception escaping
    it would be printed once and lost."""

    def run() -> None:
        for attempt in range(FORGET_ATTEMPTS):
            try:
                fn()
                return
            except Exception as e:
                if attempt == FORGET_ATTEMPTS - 1:
                    log().warning(
                        f"could not remove {what}",
                        namespace=namespace,
                        attempts=FORGET_ATTEMPTS,
                        error=str(e),
                    )
                    return
                time.sleep(0.1 * 2**attempt)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def _forget_nats_account(w: Wiring, dgds, access: NatsAccessSync):
    """On the delete of a namespace's NATS client Secret: when no graph is left there (the garbage collector
    took it after the last one), the namespace's account leaves the accounts file, on a thread of its own."""

    def on_delete(obj: dict) -> None:
        md = obj.get("metadata") or {}
        namespace = md.get("namespace") or ""
        issued_for = (md.get("annotations") or {}).get(natsaccess.ANN_ISSUED_FOR)
        if not natsaccess.is_ours(obj) or issued_for != namespace:
            return
        if dgds.list(namespace):
            return  # deleted by hand while graphs are there: their next pass issues a new one
        ctx = w.deps.render_context(namespace)

        forget = functools.partial(access.forget_namespace, namespace, ctx)
        in_background(f"nats-forget-{namespace}", "a namespace's NATS account", namespace, forget)

    return on_delete


def register(w: Wiring) -> Controller:
    """Primary DGDs; owns DCDs and adapters, or on the Grove pathway its PodCliqueSet and the components'
    Services and ConfigMaps; reacts to its components' Deployments and Grove's PodCliques /
    PodCliqueScalingGroups (mapped through the graph label, or the owning PodCliqueSet's), each child
    event coalesced into one reconcile per ``graph_coalesce_seconds``."""
    owns: list = [store.DCD, store.DGDSA, (SERVICES, MANAGED_SELECTOR), (CONFIGMAPS, MANAGED_SELECTOR)]
    owns += [(res, MANAGED_SELECTOR) for res in w.exposure_kinds]  # Grove pathway: the graph owns them
    if w.grove_served:
        owns.append((PODCLIQUESETS, MANAGED_SELECTOR))
    if w.network_policies:
        owns.append((NETWORKPOLICIES, MANAGED_SELECTOR))
    if w.dra_served:  # the Grove pathway's claim templates
        owns.append((RESOURCECLAIMTEMPLATES, MANAGED_SELECTOR))
    if w.inference_pools_served:
        owns.append((INFERENCEPOOLS, MANAGED_SELECTOR))
    if w.destination_rules_served:
        owns.append((DESTINATIONRULES, MANAGED_SELECTOR))
    # one reconciler, whose etcd and NATS syncs the Secret caches' delete handlers share: what a handler
    # forgets (a namespace's etcd user, its NATS account) the next graph's pass must not remember as done
    reconciler = DGDReconciler(w.deps)
    coalesce = w.tunables.graph_coalesce_seconds
    ctl = w.manager.add_controller(
        CONTROLLER,
        primary=store.DGD,
        reconcile=reconciler,
        owns=owns,
        workers=w.tunables.graph_workers,
        resource_type=names.DGD_KIND,
        owned_delay=coalesce,
    )
    informers = w.graph_informers
    ctl.watch(informers[DEPLOYMENTS], _graph_of, delay=coalesce)
    for res in (SERVICEACCOUNTS, ROLEBINDINGS):  # the graph's discovery account: edited or deleted
        ctl.watch(informers[res], referrers(store.DGD), delay=coalesce)
    ctl.watch(informers[store.CHECKPOINTS], checkpoint_users(informers[store.DGD].store, graph_label=True))
    ctl.watch(informers[PVCS], _graph_of)  # a deleted claim is created again
    if w.mpi_secrets is not None:  # keys written, edited or deleted: the namespace's graphs take them up
        dgds = informers[store.DGD].store
        ctl.watch(w.mpi_secrets, lambda obj: _graphs_in(dgds, obj))
    if w.etcd_clients is not None:  # a certificate deleted or edited is issued again; the last one gone
        dgds = informers[store.DGD].store
        ctl.watch(w.etcd_clients, lambda obj: _graphs_in(dgds, obj))
        w.etcd_clients.add_event_handler(on_delete=_forget_etcd_access(w, dgds, reconciler.etcd_access))
    if w.nats_clients is not None:  # likewise for the namespace's NATS certificate and account
        dgds = informers[store.DGD].store
        ctl.watch(w.nats_clients, lambda obj: _graphs_in(dgds, obj))
        w.nats_clients.add_event_handler(on_delete=_forget_nats_account(w, dgds, reconciler.nats_access))
    if w.grove_served:
        for res in (PODCLIQUES, PODCLIQUESCALINGGROUPS):
            ctl.watch(informers[res], _grove_graph_of(informers[PODCLIQUESETS].store))
    if w.device_classes_watched:  # a DeviceClass appearing: graphs waiting for it go on
        components = lambda dgd: (store.to_internal(dgd).get("spec") or {}).get("components") or []  # noqa: E731
        ctl.watch(informers[DEVICECLASSES], owners_of_class(informers[store.DGD].store, components))
    return ctl
