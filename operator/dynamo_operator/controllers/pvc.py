"""The DGD controller's PersistentVolumeClaims (``render/pvc.py``): created when missing, grown when the
graph's ``size`` grows, never deleted and never owned (the garbage collector would delete their data with
the graph), never written when the operator did not create them for this graph.

Why not ``ChildSyncer``: it owns, rewrites and prunes; a claim is created once, only its storage request
may change afterwards (the API refuses the rest), and nothing prunes it. The label-selected claim cache
(``wiring``) answers for the operator's claims; a claim missing there (the user's) is read with one GET.
"""

from __future__ import annotations

from kubernetes.client.exceptions import ApiException

from dynamo_operator.render.pvc import created_by, graph_pvcs
from dynamo_operator.render.quantity import parse_quantity
from dynamo_operator.runtime.client import PVCS

from .common import Deps, log


class PVCSync:
    def __init__(self, deps: Deps):
        self.deps = deps
        self.cache = deps.stores.get(PVCS)

    def _live(self, namespace: str, name: str) -> dict | None:
        cached = self.cache.get(namespace, name) if self.cache is not None else None
        if cached is not None:
            return self.deps.recent.resolve(cached)
        try:
            return self.deps.client.get(PVCS, name, namespace)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def apply(self, live: dict, internal: dict) -> None:
        """Create or grow the claims of the graph ``live`` (stored form; events go there) from ``internal``
        (its v1beta1 form, which carries ``spec.pvcs`` in its conversion record)."""
        ctx = self.deps.render_context(live["metadata"]["namespace"])
        graph = live["metadata"]["name"]
        for desired in graph_pvcs(internal, ctx):
            md = desired["metadata"]
            have = self._live(md["namespace"], md["name"])
            if have is None:
                self._create(live, desired)
            elif created_by(have, graph):
                self._grow(live, desired, have)
            else:
                log().info("claim exists and is not this graph's: used as it is", pvc=md["name"], graph=graph)

    def _create(self, owner: dict, desired: dict) -> None:
        md = desired["metadata"]
        try:
            self.deps.client.create(PVCS, desired, md["namespace"])
        except ApiException as e:
            if e.status == 409:  # created meanwhile (by us or someone): the next pass reads it
                return
            raise
        self.deps.recorder.normal(
            owner, "SuccessfulCreate", f"Created PersistentVolumeClaim {md['namespace']}/{md['name']}"
        )

    def _grow(self, owner: dict, desired: dict, have: dict) -> None:
        want = desired["spec"]["resources"]["requests"]["storage"]
        current = ((have.get("spec") or {}).get("resources") or {}).get("requests", {}).get("storage")
        try:
            grows = current is None or parse_quantity(want) > parse_quantity(current)
        except ValueError:
            grows = False
        if not grows:
            return
        md = have["metadata"]
        patch = {"spec": {"resources": {"requests": {"storage": want}}}}
        out = self.deps.client.patch(PVCS, md["name"], patch, md["namespace"])
        self.deps.recent.remember(have, out)
        self.deps.recorder.normal(
            owner,
            "UpdatePersistentVolumeClaim",
            f"Requested {want} (was {current}) for PersistentVolumeClaim {md['namespace']}/{md['name']}",
        )
