"""Session fixtures for the real local control plane, and the marker rules.

Tests without an ``api`` or ``cluster`` marker are unit tests (marked ``unit`` here), so
``pytest -m unit`` runs the pure-code suite in seconds with no cluster and no tools.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from dynamo_localcluster.cluster import REPO_ROOT, LocalCluster, leftover_processes

CLUSTER_ROOT = REPO_ROOT / ".cache" / "test-clusters"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if not any(item.get_closest_marker(m) for m in ("api", "cluster")):
            item.add_marker(pytest.mark.unit)


def _run_cluster(profile: str) -> Iterator[LocalCluster]:
    directory = CLUSTER_ROOT / f"{profile}-{os.getpid()}"
    cluster = LocalCluster(directory, profile=profile, nodes=2)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
        # The suite's promise: nothing it started outlives it. Anything still alive is killed and
        # reported as an error, so a leak is seen rather than inherited by the next run.
        leaked = leftover_processes(str(directory))
        for pid, _ in leaked:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        shutil.rmtree(directory, ignore_errors=True)
        assert not leaked, f"processes left running after the {profile} cluster stopped: {leaked}"


@pytest.fixture(scope="session")
def api_cluster() -> Iterator[LocalCluster]:
    """etcd + kube-apiserver on 127.0.0.1: for operator, CRD and webhook integration tests."""
    yield from _run_cluster("api")


@pytest.fixture(scope="session")
def kube_cluster() -> Iterator[LocalCluster]:
    """The 'cluster' profile: controllers, scheduler, kwok nodes; Pods become Running and Ready."""
    yield from _run_cluster("cluster")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
