"""The DGD controller's MPI sshd NetworkPolicies (``render/netpol.py``): one per graph with multinode
TensorRT-LLM components while ``mpi.sshNetworkPolicy`` is on (the default), owned by the graph (the garbage
collector removes it with the graph) and deleted when the graph no longer needs it.

Why a syncer of its own: the graph's main ``ChildSyncer.apply`` prunes every cached child kind it knows
that the pass did not render, and its result list is zipped with the components; keeping policies in a
separate syncer (with the policy cache only) leaves both untouched. The cache, the watch and the RBAC grant
exist only with the switch on (``setup`` below, the chart's networkpolicy-rbac.yaml); turning it off leaves
existing policies to their graphs' deletion (docs/security-network.md says how to remove them at once).
"""

from __future__ import annotations

from dynamo_operator.api.config import lookup
from dynamo_operator.render.netpol import mpi_ssh_network_policy

from .common import Deps
from .sync import NETWORKPOLICIES, ChildSyncer

CONFIG_KEY = "mpi.sshNetworkPolicy"


def enabled(config_doc: dict) -> bool:
    """Whether the effective operator configuration (``api.config.effective``: on by default) asks for the
    policies."""
    return bool(lookup(config_doc, CONFIG_KEY))


class NetworkPolicySync:
    """Creates, updates and prunes a graph's sshd NetworkPolicy; a no-op without the policy cache."""

    def __init__(self, deps: Deps):
        self.deps = deps
        cache = deps.stores.get(NETWORKPOLICIES)
        self.syncer = (
            ChildSyncer(deps.client, deps.recorder, {NETWORKPOLICIES: cache}, deps.recent)
            if cache is not None
            else None
        )

    def apply(self, live: dict, internal: dict) -> None:
        """``live``: the DGD as stored (owner); ``internal``: its v1beta1 form (what is rendered)."""
        if self.syncer is None:
            return
        ctx = self.deps.render_context(live["metadata"]["namespace"])
        policy = mpi_ssh_network_policy(internal, ctx)
        self.syncer.apply(live, [policy] if policy is not None else [])
