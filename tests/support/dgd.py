"""DynamoGraphDeployments on the local cluster: apply, read, wait for a status.

``Operator`` and ``FaultClient`` live in ``support.operator``; they are importable from here as well, for
the tests written before they moved."""

from __future__ import annotations

from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from kubernetes.client.exceptions import ApiException

from support.graphs import IMAGE
from support.operator import WAIT, FaultClient, Operator
from support.poll import wait_for

__all__ = ["IMAGE", "WAIT", "FaultClient", "Operator", "apply_dgd", "dgd_status", "get", "ready"]
__all__ += ["wait_status", "wait_successful"]


# -- reading and writing DGDs --------------------------------------------------------------------------------


def apply_dgd(client, dgd: dict) -> dict:
    """Create the DGD, or replace the spec of the live one (retried on a 409)."""
    wire = store.to_wire(dgd)
    md = dgd["metadata"]
    for _ in range(5):
        try:
            cur = client.get(store.DGD, md["name"], md["namespace"])
        except ApiException as e:
            if e.status != 404:
                raise
            return client.create(store.DGD, wire)
        cur["spec"] = wire["spec"]
        try:
            return client.replace(store.DGD, cur)
        except ApiException as e:
            if e.status != 409:
                raise
    raise AssertionError("could not update the DGD")


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
