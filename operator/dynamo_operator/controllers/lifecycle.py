"""What the DynamoModel, DGDR and DynamoCheckpoint controllers share: their resources, status writes of
objects read and written in one version (no internal/wire split as for DGD/DCD), the cleanup finalizer,
create-once children, and events on condition changes.

These kinds are spoken in their storage version, v1alpha1 (DynamoModel and DynamoCheckpoint have no other
version; the DGDR's v1alpha1 is the one carrying ``useMocker`` and ``profilingConfig``), so the apiserver
never needs the conversion webhook for them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable

from kubernetes.client.exceptions import ApiException

from dynamo_operator.render import names
from dynamo_operator.render.conditions import Cond
from dynamo_operator.runtime.client import ResourceClient, ResourceDescriptor, custom
from dynamo_operator.runtime.controller import Result
from dynamo_operator.runtime.events import EventRecorder

from . import store
from .common import namespace_terminating, short_error
from .status import condition, set_condition
from .sync import Conflict, owner_reference

VERSION = "v1alpha1"
DYNAMO_MODELS = custom(names.GROUP, VERSION, "dynamomodels", "DynamoModel")
DGDRS = custom(names.GROUP, VERSION, "dynamographdeploymentrequests", "DynamoGraphDeploymentRequest")
CHECKPOINTS = store.CHECKPOINTS
JOBS = ResourceDescriptor("batch", "v1", "jobs", "Job")
FINALIZER = names.FINALIZER


def typed(obj: dict | None, res: ResourceDescriptor) -> dict | None:
    """``obj`` with apiVersion/kind set (list items and some responses lack them)."""
    if obj is not None:
        obj.setdefault("apiVersion", res.api_version)
        obj.setdefault("kind", res.kind)
    return obj


def guarded(recorder: EventRecorder, live: dict, step: Callable[[], Result]) -> Result:
    """Run one reconcile of ``live``: a write conflict re-queues at once, a terminating namespace ends
    quietly, any other error becomes a ``ReconcileError`` Event and is re-raised (the work queue backs
    off and retries)."""
    try:
        return step()
    except Conflict:
        return Result(requeue=True)
    except Exception as e:
        if namespace_terminating(e):
            return Result()
        recorder.warning(live, "ReconcileError", f"Failed to reconcile: {short_error(e)}")
        raise


def admission_errors(obj: dict) -> list[str]:
    """The admission rules' verdict on ``obj`` (``webhooks.validation``, the one place a field is
    validated), for objects that reached the cluster without the webhook (disabled, or created before
    it was installed): the controller reports them in status instead of acting on them."""
    from dynamo_operator.webhooks.validation import validate

    version = str(obj.get("apiVersion", "")).rpartition("/")[2] or VERSION
    return [str(e) for e in validate(obj["kind"], version, obj).errors]


def apply_conditions(status: dict, conds: Iterable[Cond], generation: int | None) -> dict:
    """``status`` with each condition upserted (``lastTransitionTime`` moves only on a status change)."""
    out = copy.deepcopy(status)
    current = out.get("conditions")
    for c in conds:
        current = set_condition(current, c.type, "True" if c.ok else "False", c.reason, c.message, generation)
    if current is not None:
        out["conditions"] = current
    return out


def announce(
    recorder: EventRecorder,
    obj: dict,
    old: dict | None,
    new: dict,
    types: Iterable[str],
    quiet: Iterable[str] = (),
) -> None:
    """One Event per condition whose status or reason changed: Normal when it became True, else Warning,
    with the condition's reason and message, so ``kubectl describe`` tells the story. Reasons in
    ``quiet`` are passing states (work in progress), not worth an Event."""
    for t in types:
        before, after = condition(old, t), condition(new, t)
        if (
            after is None
            or (
                before is not None
                and before.get("status") == after.get("status")
                and before.get("reason") == after.get("reason")
            )
            or after.get("reason") in quiet
        ):
            continue
        if after.get("status") == "True":
            recorder.normal(obj, after["reason"], after.get("message") or "")
        else:
            recorder.warning(obj, after["reason"], after.get("message") or "")


def set_finalizer(client: ResourceClient, res: ResourceDescriptor, live: dict, present: bool) -> dict:
    """Add or remove ``FINALIZER`` (a merge patch guarded by resourceVersion: a concurrent edit is a 409,
    retried by the caller's requeue, never a lost finalizer list)."""
    md = live["metadata"]
    have = list(md.get("finalizers") or [])
    want = [f for f in have if f != FINALIZER] + ([FINALIZER] if present else [])
    if want == have:
        return live
    patch = {"metadata": {"finalizers": want, "resourceVersion": md["resourceVersion"]}}
    try:
        return typed(client.patch(res, md["name"], patch, md.get("namespace")), res)
    except ApiException as e:
        if e.status == 409:
            raise Conflict("finalizer: " + str(e.reason)) from e
        raise


def create_child(client: ResourceClient, res: ResourceDescriptor, owner: dict | None, body: dict) -> dict:
    """Create ``body`` (owned by ``owner`` when given); an existing object of that name is returned as is.

    Jobs and generated DGDs are created once and never rewritten (a Job's template is immutable, and a DGD
    the user edited after creation is theirs)."""
    body = copy.deepcopy(body)
    if owner is not None:
        body["metadata"]["ownerReferences"] = [owner_reference(owner)]
    md = body["metadata"]
    try:
        return typed(client.create(res, body, md.get("namespace")), res)
    except ApiException as e:
        if e.status != 409:
            raise
    return typed(client.get(res, md["name"], md.get("namespace")), res)


def get_or_none(client: ResourceClient, res: ResourceDescriptor, name: str, namespace: str) -> dict | None:
    try:
        return typed(client.get(res, name, namespace), res)
    except ApiException as e:
        if e.status == 404:
            return None
        raise
