"""A claim nobody can serve on the real node is reported at once, never waited on for a whole install
timeout (``storage.wait_bound``, which binds the tier's own claims and guards its install). It needs only the
node (its storage provisioner runs from the node's start), no graph and nothing of the platform: in the guest
lane it runs while the owner's ``ct install`` waits on its releases (``support.realnode_lanes``)."""

from __future__ import annotations

import time
import uuid

import pytest
from dynamo_localcluster.realnode import storage


def _claim(name: str, storage_class: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "1Mi"}},
        },
    }


def test_a_claim_that_never_binds_is_reported_not_waited_on(node):
    """Negative control: a class whose provisioner nothing runs, and a class that does not exist. The wait
    that binds the tier's own claims (and guards the install) names both, long before its timeout."""
    from kubernetes import client

    nobody = f"nobody-{uuid.uuid4().hex[:6]}"
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": nobody},
        "provisioner": "example.invalid/nobody",
        "volumeBindingMode": "Immediate",
    }
    with node.api_client() as api:
        client.StorageV1Api(api).create_storage_class(sc)
        core = client.CoreV1Api(api)
        try:
            core.create_namespaced_persistent_volume_claim("default", _claim("never-binds", nobody))
            core.create_namespaced_persistent_volume_claim("default", _claim("no-class", "no-such-class"))
            started = time.monotonic()
            with pytest.raises(storage.ClaimError) as missing:
                storage.wait_bound(api, "default", ["no-class"], timeout=600)
            assert time.monotonic() - started < 30, "a missing class is reported at once"
            assert "default/no-class" in str(missing.value) and "'no-such-class' does not exist" in str(
                missing.value
            )
            with pytest.raises(storage.ClaimError) as unserved:
                storage.wait_bound(api, "default", ["never-binds"], timeout=600, grace=10)
            took = time.monotonic() - started
            assert took < 120, f"reported after {took:.0f}s, not at the 600 s timeout"
            assert "default/never-binds" in str(unserved.value), unserved.value
            assert f"StorageClass {nobody!r} (example.invalid/nobody)" in str(unserved.value), unserved.value
        finally:
            for name in ("never-binds", "no-class"):
                core.delete_namespaced_persistent_volume_claim(name, "default")
            client.StorageV1Api(api).delete_storage_class(nobody)
