"""The DGD controller's graph-managed DynamoCheckpoints (``render/graph_checkpoint.py`` decides them).

* **created once**: a checkpoint's identity and Job are immutable (the DynamoCheckpoint admission refuses
  an identity change, and a Job template never changes), so an existing one is never rewritten; a change
  of what the component runs gives a new ID and so a new checkpoint;
* **ownership follows ``deletionPolicy``**: ``Delete`` (default) makes the graph its controller (the
  garbage collector deletes it with the graph), ``Retain`` leaves it unowned; switching the policy moves
  the owner reference (a merge patch guarded by resourceVersion) and the policy annotation;
* **pruned**: checkpoints the graph controls that it no longer renders (the component changed or
  dropped checkpointing) are deleted; retained ones are left, which is what ``Retain`` means;
* a same-named object that is not this graph's automatic checkpoint is never touched: the component is
  reported (Warning ``CheckpointConflict``) and waits.

Why a syncer of its own rather than the graph's ``ChildSyncer``: checkpoints are not rewritten to match,
and a retained one has no owner reference at all.
"""

from __future__ import annotations

from collections.abc import Callable

from kubernetes.client.exceptions import ApiException

from dynamo_operator.api.jsontree import copy_tree
from dynamo_operator.render import names
from dynamo_operator.render.graph_checkpoint import (
    ANN_AUTO,
    ANN_DELETION_POLICY,
    DELETE,
    CheckpointPlan,
    checkpoint_config,
)
from dynamo_operator.runtime.controller import Request

from . import store
from .common import Deps, log
from .sync import Conflict, controller_ref, owner_reference

EV_CREATED = "CheckpointCreated"
EV_DELETED = "CheckpointDeleted"
EV_CONFLICT = "CheckpointConflict"


def _name(obj: dict) -> str:
    md = obj["metadata"]
    return f"{md.get('namespace')}/{md['name']}"


def is_graph_checkpoint(obj: dict, dgd_name: str) -> bool:
    """An automatic checkpoint of the graph named ``dgd_name`` (owned or retained)."""
    md = obj.get("metadata") or {}
    return (md.get("annotations") or {}).get(ANN_AUTO) == "true" and (md.get("labels") or {}).get(
        names.LABEL_DGD_NAME
    ) == dgd_name


class CheckpointSync:
    """Creates, re-owns and prunes one graph's automatic DynamoCheckpoints."""

    def __init__(self, deps: Deps):
        self.deps = deps
        self.cache = deps.stores.get(store.CHECKPOINTS)

    def _live(self, namespace: str, name: str) -> dict | None:
        if self.cache is not None:
            cached = self.cache.get(namespace, name)
            if cached is not None:
                return self.deps.recent.resolve(cached) or cached
        try:
            return self.deps.client.get(store.CHECKPOINTS, name, namespace)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def apply(self, dgd: dict, plans: dict[str, CheckpointPlan]) -> list[str]:
        """Make the graph's automatic checkpoints those of ``plans``; returns the components whose
        checkpoint name is taken by an object that is not theirs."""
        conflicts = []
        for plan in plans.values():
            if plan.desired is not None and not self._ensure(dgd, plan):
                conflicts.append(plan.component)
        wanted = {p.name for p in plans.values() if p.auto}
        self._prune(dgd, wanted)
        return conflicts

    def _ensure(self, dgd: dict, plan: CheckpointPlan) -> bool:
        desired = plan.desired
        assert desired is not None
        md = desired["metadata"]
        live = self._live(md["namespace"], md["name"])
        if live is None:
            body = copy_tree(desired)
            if not plan.retain:
                body["metadata"]["ownerReferences"] = [owner_reference(dgd)]
            try:
                self.deps.client.create(store.CHECKPOINTS, body, md["namespace"])
            except ApiException as e:
                if e.status != 409:
                    raise
                return True  # created meanwhile; the next pass sees it
            self.deps.recorder.normal(
                dgd,
                EV_CREATED,
                f"Created DynamoCheckpoint {_name(desired)} for component {plan.component} "
                f"(deletionPolicy {md['annotations'][ANN_DELETION_POLICY]})",
            )
            return True
        ctrl = controller_ref(live)
        foreign = ctrl is not None and ctrl.get("uid") != dgd["metadata"]["uid"]
        if foreign or not is_graph_checkpoint(live, dgd["metadata"]["name"]):
            owner = f", controlled by {ctrl.get('kind')} {ctrl.get('name')}" if foreign else ""
            self.deps.recorder.warning(
                dgd,
                EV_CONFLICT,
                f"DynamoCheckpoint {_name(live)} exists and is not this graph's checkpoint of component "
                f"{plan.component}{owner}; delete it so the graph can create its own",
            )
            return False
        self._own(dgd, live, plan)
        return True

    def _own(self, dgd: dict, live: dict, plan: CheckpointPlan) -> None:
        """Owner reference and policy annotation as ``deletionPolicy`` says."""
        md = live["metadata"]
        uid = dgd["metadata"]["uid"]
        refs = [r for r in md.get("ownerReferences") or [] if r.get("uid") != uid]
        if not plan.retain:
            refs.append(owner_reference(dgd))
        policy = plan.desired["metadata"]["annotations"][ANN_DELETION_POLICY] if plan.desired else DELETE
        have = md.get("ownerReferences") or []
        if refs == have and (md.get("annotations") or {}).get(ANN_DELETION_POLICY) == policy:
            return
        patch = {
            "metadata": {
                "resourceVersion": md["resourceVersion"],
                "ownerReferences": refs,
                "annotations": {ANN_DELETION_POLICY: policy},
            }
        }
        try:
            out = self.deps.client.patch(store.CHECKPOINTS, md["name"], patch, md["namespace"])
        except ApiException as e:
            if e.status == 409:
                raise Conflict("checkpoint changed while re-owning it") from e
            raise
        self.deps.recent.remember(live, out)
        log().info("checkpoint ownership updated", checkpoint=md["name"], deletion_policy=policy)

    def _prune(self, dgd: dict, wanted: set[str]) -> None:
        if self.cache is None:
            return
        md = dgd["metadata"]
        for obj in self.cache.by_index("owner", md["uid"]):
            obj = self.deps.recent.resolve(obj) or obj
            omd = obj["metadata"]
            if omd["name"] in wanted or omd.get("deletionTimestamp"):
                continue
            if (controller_ref(obj) or {}).get("uid") != md["uid"] or not is_graph_checkpoint(
                obj, md["name"]
            ):
                continue
            try:
                self.deps.client.delete(
                    store.CHECKPOINTS, omd["name"], omd["namespace"], preconditions={"uid": omd["uid"]}
                )
            except ApiException as e:
                if e.status in (404, 409):
                    continue
                raise
            self.deps.recent.forget(obj)
            self.deps.recorder.normal(
                dgd, EV_DELETED, f"Deleted DynamoCheckpoint {_name(obj)}: no component uses it any more"
            )


def _references(obj_internal: dict) -> set[str]:
    """The DynamoCheckpoints a (v1beta1) DGD's components or DCD reference by ``checkpointRef``."""
    spec = obj_internal.get("spec") or {}
    comps = spec.get("components") if obj_internal.get("kind") == names.DGD_KIND else [spec]
    out = set()
    for comp in comps or []:
        cp = checkpoint_config(comp)
        if cp and cp.get("checkpointRef"):
            out.add(str(cp["checkpointRef"]))
    return out


def checkpoint_users(primaries, graph_label: bool = False) -> Callable[[dict], list[Request]]:
    """A DynamoCheckpoint event -> the DGDs (or DCDs) of the ``primaries`` cache in its namespace that
    reference it, and with ``graph_label`` the graph that manages it (its graph label): a checkpoint
    turning Ready releases WaitForCheckpoint, one appearing gives restores its ID."""

    def map_fn(obj: dict) -> list[Request]:
        md = obj.get("metadata") or {}
        ns, name = md.get("namespace") or "", md.get("name") or ""
        out = []
        graph = (md.get("labels") or {}).get(names.LABEL_DGD_NAME)
        if graph_label and graph:
            out.append(Request(ns, graph))
        for p in primaries.list(ns):
            if name in _references(store.to_internal(p)) and p["metadata"]["name"] != graph:
                out.append(Request(ns, p["metadata"]["name"]))
        return out

    return map_fn
