"""The generated CRDs (``crds/*.yaml``, the files the chart installs) on a local cluster."""

from __future__ import annotations

import subprocess

import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.runtime.client import ResourceClient
from dynamo_operator.runtime.informer import wait_until
from dynamo_operator.webhooks.certs import CRDS
from kubernetes.client.exceptions import ApiException

CRD_DIR = REPO_ROOT / "crds"


def crd_docs() -> list[dict]:
    """crds/*.yaml exactly as generated."""
    return [yaml.safe_load(p.read_text()) for p in sorted(CRD_DIR.glob("*.yaml"))]


def established(rc: ResourceClient, name: str) -> bool:
    try:
        conditions = rc.get(CRDS, name).get("status", {}).get("conditions") or []
    except ApiException:
        return False
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def wait_established(api_client, name: str, timeout: float = 60) -> None:
    rc = ResourceClient(api_client)
    assert wait_until(lambda: established(rc, name), timeout, interval=0.2), (
        f"CRD {name} not Established after {timeout}s"
    )


def install_crds(cluster, timeout: float = 60) -> list[dict]:
    """Server-side apply of every generated CRD (idempotent; fields another manager set, such as a
    test's conversion webhook, are taken back), then wait until each one is Established."""
    docs = crd_docs()
    subprocess.run(
        ["kubectl", "apply", "--server-side", "--force-conflicts", "-f", "-"],
        input=yaml.safe_dump_all(docs),
        env=cluster.env,
        check=True,
        capture_output=True,
        text=True,
    )
    api_client = cluster.api_client()
    for doc in docs:
        wait_established(api_client, doc["metadata"]["name"], timeout)
    return docs
