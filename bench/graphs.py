"""The benchmark's graph: a disaggregated vLLM deployment (frontend + prefill + decode workers, one replica
each, no GPU request so hundreds fit on the fake nodes) in the internal (v1beta1) shape."""

from __future__ import annotations

import math

from dynamo_localcluster.graphs import DISAGGREGATED
from dynamo_localcluster.graphs import graph as shared_graph

PODS_PER_GRAPH = len(DISAGGREGATED)
PODS_PER_NODE = 110  # the local cluster's fake node capacity


def graph(name: str, namespace: str) -> dict:
    return shared_graph(name, namespace, DISAGGREGATED)


def names(prefix: str, n: int) -> list[str]:
    return [f"{prefix}-{i:04d}" for i in range(n)]


def nodes_for(graphs: int) -> int:
    """Fake nodes enough for every pod (110 pods a node), plus one spare."""
    return math.ceil(graphs * PODS_PER_GRAPH / PODS_PER_NODE) + 1
