"""The DGD controller's EPP objects (``render/epp.py``): the InferencePool an EPP component's arguments
name and, under an enabled Istio mesh, the DestinationRule of the EPP Service; owned by the graph (the
garbage collector removes them with it), updated when the graph changes, deleted when the graph no longer
has an EPP component (or the mesh is turned off).

A syncer of its own, like the sshd NetworkPolicies (``netpol.py``): the graph's main ``ChildSyncer.apply``
zips its results with the components, and prunes only the kinds it renders. The caches exist only when
the APIs are served at startup (``Wiring``); an EPP graph without the InferencePool API is refused by the
renderer (and admission) before it gets here.
"""

from __future__ import annotations

from dynamo_operator.render.epp import graph_objects

from .common import Deps
from .sync import DESTINATIONRULES, INFERENCEPOOLS, ChildSyncer


class EppSync:
    """Creates, updates and prunes a graph's InferencePool and DestinationRule; a no-op without caches."""

    def __init__(self, deps: Deps):
        self.deps = deps
        stores = {res: deps.stores[res] for res in (INFERENCEPOOLS, DESTINATIONRULES) if res in deps.stores}
        self.syncer = ChildSyncer(deps.client, deps.recorder, stores, deps.recent) if stores else None
        self.kinds = {res.kind for res in stores}

    def apply(self, live: dict, internal: dict) -> None:
        """``live``: the DGD as stored (owner); ``internal``: its v1beta1 form (what is rendered)."""
        if self.syncer is None:
            return
        ctx = self.deps.render_context(live["metadata"]["namespace"])
        desired = [o for o in graph_objects(internal, ctx) if o["kind"] in self.kinds]
        self.syncer.apply(live, desired)
