"""DynamoGraphDeployments on the local cluster: apply, read, wait for a status.

``Operator`` and ``FaultClient`` live in ``support.operator``; they are importable from here as well, for
the tests written before they moved."""

from __future__ import annotations

from collections.abc import Callable

from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from kubernetes.client.exceptions import ApiException

from support.graphs import IMAGE
from support.operator import WAIT, FaultClient, Operator
from support.poll import wait_for

__all__ = ["IMAGE", "WAIT", "FaultClient", "Operator", "apply_dgd", "dgd_status", "edit_object", "get"]
__all__ += ["ready"]
__all__ += ["wait_status", "wait_successful"]


# -- reading and writing DGDs --------------------------------------------------------------------------------


def edit_object(client, res, name: str, ns: str, change: Callable[[dict], object], timeout: float = 30):
    """Read the live object, ``change`` it in place and replace it, as `kubectl edit` does; on a 409 read and
    change it again, for up to ``timeout`` seconds. The operator writes a graph's status and annotations
    meanwhile: on a busy machine five back-to-back tries all lost that race once (CI, a checkpoint test)."""

    def attempt() -> dict | None:
        obj = client.get(res, name, ns)
        change(obj)
        try:
            return client.replace(res, obj)
        except ApiException as e:
            if e.status != 409:
                raise
            return None  # written by someone else between our read and our write

    return wait_for(attempt, timeout, f"{res.kind} {ns}/{name} replaced without a 409")


def apply_dgd(client, dgd: dict) -> dict:
    """Create the DGD, or replace the spec of the live one (``edit_object``)."""
    wire = store.to_wire(dgd)
    name, ns = dgd["metadata"]["name"], dgd["metadata"]["namespace"]
    if get(client, store.DGD, name, ns) is None:
        return client.create(store.DGD, wire)
    return edit_object(client, store.DGD, name, ns, lambda obj: obj.update(spec=wire["spec"]))


def get(client, res, name, ns=None):
    """The object, or None when the apiserver answers 404."""
    try:
        return client.get(res, name, ns)
    except ApiException as e:
        if e.status == 404:
            return None
        raise


def dgd_status(client, ns, name="g") -> dict:
    obj = get(client, store.DGD, name, ns)
    return (store.to_internal(obj).get("status") or {}) if obj else {}


def ready(status: dict) -> dict:
    """The ``Ready`` condition of a status ({} when there is none)."""
    return st.condition(status, st.READY) or {}


def wait_status(client, ns, pred, name="g", timeout=WAIT) -> dict:
    wait_for(
        lambda: pred(dgd_status(client, ns, name)),
        timeout,
        lambda: dgd_status(client, ns, name),
        interval=0.3,
    )
    return dgd_status(client, ns, name)


def wait_successful(client, ns, name="g", generation=None, timeout=WAIT) -> dict:
    return wait_status(
        client,
        ns,
        lambda s: (
            s.get("state") == st.STATE_SUCCESSFUL
            and (generation is None or s.get("observedGeneration") == generation)
        ),
        name,
        timeout,
    )
