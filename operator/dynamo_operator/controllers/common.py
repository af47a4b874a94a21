"""What both reconcilers share: the render context, status writes, failure handling."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client.exceptions import ApiException

from dynamo_operator.render import RenderContext, build_index
from dynamo_operator.runtime.client import ResourceClient, ResourceDescriptor
from dynamo_operator.runtime.controller import Result, reconcile_context
from dynamo_operator.runtime.events import EventRecorder
from dynamo_operator.runtime.informer import Indexer
from dynamo_operator.runtime.log import get_logger

from . import store
from .status import status_equal
from .sync import Conflict, OwnershipConflict, RecentWrites


@dataclass
class Deps:
    """Everything a reconciler needs; built by ``setup`` from a Manager."""

    client: ResourceClient
    recorder: EventRecorder
    stores: dict[ResourceDescriptor, Indexer]
    secrets: Indexer | None = None
    operator_config: Any = None
    operator_version: str = "0.1.0"
    recent: RecentWrites = field(default_factory=RecentWrites)
    detected: frozenset[str] = frozenset()  # integrations served by the cluster (``discovery``)

    def render_context(self, namespace: str | None) -> RenderContext:
        secrets = self.secrets.list(namespace) if (self.secrets is not None and namespace) else []
        return RenderContext(
            operator_config=self.operator_config,
            pull_secrets=build_index(secrets),
            operator_version=self.operator_version,
            detected=self.detected,
        )


def log():
    ctx = reconcile_context()
    return ctx.log if ctx is not None else get_logger("controllers")


def awaiting_gc(e: OwnershipConflict, owner: dict) -> Result | None:
    """A short requeue when the children's controller is a deleted object of ``owner``'s kind and name (it was
    deleted and re-created, and the garbage collector has not removed the old children yet); None when
    another object really owns them."""
    if not e.previous_incarnation_of(owner):
        return None
    log().info("waiting for the garbage collector to remove the previous children", error=str(e))
    return Result(requeue_after=2)


class StatusWriter:
    """Writes a status through the status subresource, only when it changed.

    ``convert`` (the DGD and DCD controllers): ``status`` is in the internal (v1beta1) shape and is converted
    to the stored version's; kinds reconciled in their stored version (DGDR, DynamoModel, checkpoints) pass
    False. ``recent`` remembers each write so the next pass sees it before the informer does."""

    def __init__(
        self,
        client: ResourceClient,
        res: ResourceDescriptor,
        recent: RecentWrites | None = None,
        convert: bool = True,
    ):
        self.client = client
        self.res = res
        self.recent = recent
        self.convert = convert
        self.writes = 0

    def write(self, live_wire: dict, status: dict) -> dict | None:
        """The response of the write, or None when ``status`` equals the live one (no request) or the object
        is gone."""
        old = (store.to_internal(live_wire) if self.convert else live_wire).get("status") or {}
        if status_equal(old, status):
            return None
        body = copy.deepcopy(live_wire)
        body["metadata"].pop("managedFields", None)
        body["status"] = store.status_to_wire(live_wire, status) if self.convert else status
        try:
            out = self.client.replace(self.res, body, subresource="status")
        except ApiException as e:
            if e.status == 409:
                raise Conflict("status: " + str(e.reason)) from e
            if e.status == 404:
                return None  # deleted meanwhile
            raise
        self.writes += 1
        out.setdefault("apiVersion", self.res.api_version)
        out.setdefault("kind", self.res.kind)
        if self.recent is not None:
            self.recent.remember(live_wire, out)
        return out


def namespace_terminating(e: BaseException) -> bool:
    """403 NamespaceTerminating: the namespace and everything in it is going away; not worth an error."""
    if not isinstance(e, ApiException) or e.status != 403:
        return False
    body = e.body.decode(errors="replace") if isinstance(e.body, bytes) else str(e.body or "")
    return "NamespaceTerminating" in body


def short_error(e: BaseException) -> str:
    if isinstance(e, ApiException):
        body = e.body.decode(errors="replace") if isinstance(e.body, bytes) else e.body
        msg = ""
        if isinstance(body, str) and body.startswith("{"):
            import json

            try:
                msg = json.loads(body).get("message") or ""
            except ValueError:
                msg = ""
        return f"{e.status} {e.reason}: {msg}".strip(": ")
    return str(e) or type(e).__name__
