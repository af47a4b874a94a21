"""How the pods of a multinode component find each other, and the per-backend launch rewriting.

A multinode component (``multinode.nodeCount > 1``) runs one leader pod (node rank 0) and
``nodeCount - 1`` worker pods. The pathway that creates the pods (Grove or LeaderWorkerSet) decides
how a pod learns the leader's hostname and its own rank; :class:`Addressing` carries that, so the
backend rules below are written once for both pathways.
"""

from __future__ import annotations

from dataclasses import dataclass

GROVE = "grove"
LWS = "lws"
LEADER_SUFFIX = "ldr"
WORKER_SUFFIX = "wkr"


@dataclass(frozen=True)
class Addressing:
    """How a multinode pod finds its leader and its own rank; differs per pathway (Grove or LWS).

    Every string is meant for the container's ``command``/``args``: ``$(VAR)`` references are expanded
    by the kubelet before the process starts (both pathways inject their variables into every
    container's env), so they work with or without a shell. ``$((...))`` and ``${...}`` are shell
    syntax the kubelet leaves alone; a launch that uses them runs under ``sh -c``.
    """

    pathway: str  # GROVE | LWS
    leader_host: str  # the leader pod's DNS name as the container sees it
    node_rank: str  # a worker pod's rank (1..nodeCount-1); the leader's rank is always 0
    rank_needs_shell: bool  # node_rank is shell arithmetic, not a plain $(VAR) reference
    rank_arith: str  # the worker rank as an expression valid inside $(( )), e.g. "LWS_WORKER_INDEX"
    worker_host_format: str  # DNS name of worker pod ``{index}`` (shell syntax allowed; see worker_host)
    worker_index_offset: int  # rank - offset = the ``{index}`` of that worker pod in worker_host_format
    needs_dns_wait: bool  # pods start together, so a leader must wait for its workers' DNS records

    def worker_host(self, rank: int) -> str:
        """The DNS name of the worker pod with node rank ``rank`` (1..nodeCount-1), for use in a shell."""
        return self.worker_host_format.format(index=rank - self.worker_index_offset)

    def hosts(self, node_count: int) -> list[str]:
        """Every pod's DNS name, leader first (for ``mpirun -H``)."""
        return [self.leader_host] + [self.worker_host(r) for r in range(1, node_count)]


def lws_addressing() -> Addressing:
    """LeaderWorkerSet: LWS_LEADER_ADDRESS is ``<leader pod>.<headless service>.<namespace>`` and a worker pod
    is named ``<leader pod>-<LWS_WORKER_INDEX>`` in the same service, so a worker's name is the leader's with
    ``-<index>`` spliced in before the first dot."""
    return Addressing(
        pathway=LWS,
        leader_host="$(LWS_LEADER_ADDRESS)",
        node_rank="$(LWS_WORKER_INDEX)",
        rank_needs_shell=False,
        rank_arith="LWS_WORKER_INDEX",
        worker_host_format="${{LWS_LEADER_ADDRESS%%.*}}-{index}.${{LWS_LEADER_ADDRESS#*.}}",
        worker_index_offset=0,
        needs_dns_wait=True,
    )


def grove_clique_names(component_name: str) -> tuple[str, str]:
    """(leader clique, worker clique) = (f"{lower}-ldr", f"{lower}-wkr") — the PodCliques of a multinode
    component inside its PodCliqueScalingGroup."""
    lower = component_name.lower()
    return f"{lower}-{LEADER_SUFFIX}", f"{lower}-{WORKER_SUFFIX}"


def grove_addressing(component_name: str) -> Addressing:
    """Grove: a PodCliqueScalingGroup member pod is named
    ``<GROVE_PCSG_NAME>-<GROVE_PCSG_INDEX>-<clique>-<pod index>`` under the PodCliqueSet's headless service
    (GROVE_HEADLESS_SERVICE). The worker clique's pod index starts at 0,
    so a worker's rank is that index + 1 (shell arithmetic)."""
    leader, worker = grove_clique_names(component_name)
    prefix = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)"
    return Addressing(
        pathway=GROVE,
        leader_host=f"{prefix}-{leader}-0.$(GROVE_HEADLESS_SERVICE)",
        node_rank="$((GROVE_PCLQ_POD_INDEX + 1))",
        rank_needs_shell=True,
        rank_arith="GROVE_PCLQ_POD_INDEX + 1",
        worker_host_format=f"{prefix}-{worker}-{{index}}.$(GROVE_HEADLESS_SERVICE)",
        worker_index_offset=1,
        needs_dns_wait=False,
    )
