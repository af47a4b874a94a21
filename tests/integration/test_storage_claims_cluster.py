"""Which claims will never bind (``realnode.storage.claim_problems``), against the real API
server and the PV controller of the ``cluster`` profile (no provisioner runs there, which is the point): a
claim naming a class that does not exist is reported at once; one whose class nobody serves once the PV
controller hands it to its provisioner and no provisioner answers within the grace; one still waiting for
its first consumer is no problem. The real-node tier shows the same beside a working provisioner
(tests/realnode/test_services.py)."""

from __future__ import annotations

import time
import uuid

import pytest
from dynamo_localcluster.realnode import storage
from support.poll import wait_for

pytestmark = pytest.mark.cluster


def _claim(name: str, storage_class: str) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "1Mi"}},
        },
    }


def _class(name: str, binding: str) -> dict:
    return {
        "metadata": {"name": name},
        "provisioner": "example.invalid/nobody",
        "volumeBindingMode": binding,
    }


def test_claims_that_never_bind_are_told_from_claims_on_their_way(kube_cluster):
    from kubernetes import client

    suffix = uuid.uuid4().hex[:6]
    namespace, unserved, waiting = f"claims-{suffix}", f"unserved-{suffix}", f"waiting-{suffix}"
    with kube_cluster.api_client() as api:
        core, sto = client.CoreV1Api(api), client.StorageV1Api(api)
        core.create_namespace({"metadata": {"name": namespace}})
        sto.create_storage_class(_class(unserved, "Immediate"))
        sto.create_storage_class(_class(waiting, "WaitForFirstConsumer"))
        try:
            for name, cls in (("missing", "no-such-class"), ("unserved", unserved), ("waiting", waiting)):
                core.create_namespaced_persistent_volume_claim(namespace, _claim(name, cls))
            first = storage.claim_problems(api, namespace, grace=3)
            assert [p.split()[1] for p in first] == [f"{namespace}/missing:"], first
            assert "StorageClass 'no-such-class' does not exist" in first[0]

            def unserved_reported() -> list[str]:
                return [p for p in storage.claim_problems(api, namespace, grace=3) if "/unserved:" in p]

            (line,) = wait_for(unserved_reported, 60, "the unserved claim reported", interval=0.5)
            assert f"StorageClass {unserved!r} (example.invalid/nobody)" in line, line
            started = time.monotonic()
            with pytest.raises(storage.ClaimError, match="/unserved:"):
                storage.wait_bound(api, namespace, ["unserved", "waiting"], timeout=600, grace=3)
            assert time.monotonic() - started < 10
            # a claim that waits for its first consumer is on its way, not a problem
            assert not [p for p in storage.claim_problems(api, namespace, grace=0) if "/waiting" in p]
        finally:
            core.delete_namespace(namespace)
            sto.delete_storage_class(unserved)
            sto.delete_storage_class(waiting)
