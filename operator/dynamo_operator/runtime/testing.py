"""A trivial controller for exercising the runtime end to end (tests and ``dynamo-operator run --setup``).

``echo`` reconciles ConfigMaps labelled ``dynamo.nvidia.com/runtime-test=true``: it keeps an owned child
ConfigMap ``<name>-echo`` whose data is the parent's data plus ``reconciledBy`` (the manager identity).  It
writes only when the content differs (zero writes for a converged object) and recreates or repairs a deleted
or edited child.
"""

from __future__ import annotations

import os

from kubernetes.client.exceptions import ApiException

from .client import CONFIGMAPS, ResourceDescriptor
from .controller import Request, Result
from .manager import Manager

TEST_LABEL = "dynamo.nvidia.com/runtime-test"
ECHO_SUFFIX = "-echo"


def setup_echo_controller(mgr: Manager, workers: int = 2) -> None:
    identity = os.environ.get("DYNAMO_RUNTIME_TEST_IDENTITY") or mgr.identity
    cms = mgr.informer(CONFIGMAPS, label_selector=f"{TEST_LABEL}=true")

    def reconcile(req: Request) -> Result:
        parent = cms.store.get(req.namespace, req.name)
        if parent is None or (parent["metadata"].get("deletionTimestamp")):
            return Result()  # children go with the parent (garbage collection via the owner reference)
        want = {**(parent.get("data") or {}), "reconciledBy": identity}
        child_name = req.name + ECHO_SUFFIX
        try:
            child = mgr.client.get(CONFIGMAPS, child_name, req.namespace)
        except ApiException as e:
            if e.status != 404:
                raise
            child = None
        if child is None:
            mgr.client.create(
                CONFIGMAPS,
                {
                    "metadata": {
                        "name": child_name,
                        "namespace": req.namespace,
                        "labels": {f"{TEST_LABEL}-child": "true"},
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "ConfigMap",
                                "name": req.name,
                                "uid": parent["metadata"]["uid"],
                                "controller": True,
                                "blockOwnerDeletion": True,
                            }
                        ],
                    },
                    "data": want,
                },
            )
        elif (child.get("data") or {}) != want:
            child["data"] = want
            mgr.client.replace(CONFIGMAPS, child)
        return Result()

    mgr.add_controller(
        "configmap-echo",
        primary=CONFIGMAPS,
        reconcile=reconcile,
        owns=[(CONFIGMAPS, f"{TEST_LABEL}-child=true")],
        workers=workers,
        label_selector=f"{TEST_LABEL}=true",
        resource_type="ConfigMap",
    )


def setup(mgr: Manager) -> None:
    """Entry point for ``dynamo-operator run --setup dynamo_operator.runtime.testing:setup``."""
    setup_echo_controller(mgr)


# a resource no apiserver serves: listing it is a 404 forever
UNSERVED = ResourceDescriptor("unserved.runtime-test.dynamo.nvidia.com", "v1", "widgets", "Widget")


def setup_unsyncable(mgr: Manager) -> None:
    """``--setup dynamo_operator.runtime.testing:setup_unsyncable``: a controller whose cache can never sync
    (its resource is not served), so the process must stop with exit code 1 at the cache-sync timeout."""
    mgr.add_controller("unsyncable", primary=UNSERVED, reconcile=lambda req: Result())
