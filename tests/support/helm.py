"""The chart's install hooks and the ``helm dynamo`` plugin on the shared local cluster: the command
runners, the namespace helper and the guard for tests that need a cluster without Dynamo operators."""

from __future__ import annotations

import subprocess

import pytest
from dynamo_localcluster.cluster import REPO_ROOT
from kubernetes import client

CHART = REPO_ROOT / "charts" / "platform"
PLUGIN = REPO_ROOT / "plugin"


def helm(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["helm", *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def hooks(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``dynamo-hooks ARGS...``, the command of the chart's hook Jobs."""
    return subprocess.run(
        ["dynamo-hooks", *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def ensure_namespace(api: client.ApiClient, name: str) -> None:
    core = client.CoreV1Api(api)
    try:
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    except client.ApiException as exc:
        if exc.status != 409:
            raise


def skip_if_shared_cluster_has_operators(cluster_or_env) -> None:
    """The session cluster is shared; a matrix run needs a cluster without other Dynamo operators."""
    from dynamo_hooks.cluster import KubeCluster, connect
    from dynamo_hooks.conflicts import discover

    if isinstance(cluster_or_env, dict):
        kube = connect(cluster_or_env["KUBECONFIG"])
    else:
        kube = KubeCluster(cluster_or_env.api_client())
    found = discover(kube, leader_election_id="dynamo.nvidia.com").operators
    if found:
        pytest.skip(
            "another test left Dynamo operators in the shared cluster: "
            + "; ".join(o.describe() for o in found)
        )
