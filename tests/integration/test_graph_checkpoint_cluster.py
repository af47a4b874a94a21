"""A graph component's ``checkpoint`` on the real control plane ("cluster" profile), operator in-process
with ``checkpoint.enabled``.

* the graph creates its DGD-scoped DynamoCheckpoint (owned under ``deletionPolicy: Delete``, unowned under
  ``Retain``), re-owns it when the policy changes, creates a new one (and deletes the old) when what the
  component runs changes, deletes it when the component stops asking; ``status.checkpoints`` follows;
* ``startupPolicy: WaitForCheckpoint`` holds the component at zero replicas while the checkpoint Job
  cannot run (its pod is unschedulable here) and releases it when the test marks the checkpoint Ready;
* ``checkpointRef`` restores a standalone DynamoCheckpoint whose Job really ran (kwok completes Job pods),
  without owning it.

Every restore-shaped pod mounts the namespace's checkpoint PVC (``chrek-pvc``): the tests bind it to a
hostPath PersistentVolume (no provisioner here) so kwok's scheduler places the pods.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from dynamo_operator.controllers import store
from dynamo_operator.controllers.lifecycle import CHECKPOINTS, JOBS
from dynamo_operator.render import checkpoint as rc
from dynamo_operator.render import graph_checkpoint as rgc
from dynamo_operator.render import names
from dynamo_operator.render.checkpoint_ids import ANN_CHECKPOINT_ID, LABEL_CHECKPOINT_ID
from dynamo_operator.runtime.client import DEPLOYMENTS, PVCS, ResourceDescriptor
from dynamo_operator.tunables import ControllerTunables
from kubernetes.client.exceptions import ApiException
from support.crs import condition, running_operator, wait_event_reasons
from support.dgd import IMAGE, apply_dgd, dgd_status, get, wait_status
from support.lifecycle import checkpoint_storage
from support.poll import wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "gckpt"
WAIT = 90.0
CONFIG = {"checkpoint": {"enabled": True}}
# A graph held for its checkpoint is "pending" until the checkpoint is Ready: progress, which the shipped
# tunables write at most every 30 s; the pacing has tests of its own (test_controllers_behaviour.py), and
# these wait for what the status says, not for when
PACING = ControllerTunables(status_progress_seconds=5.0)
PVS = ResourceDescriptor("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
UNSCHEDULABLE = {"spec": {"nodeSelector": {"dynamo-test/no-such-node": "true"}}}


@pytest.fixture
def storage(client, ns) -> Iterator[str]:
    """The checkpoint PVC ``chrek-pvc`` (the configuration's default name), bound to a hostPath PV."""
    pv = checkpoint_storage(client, ns)  # the one builder, shared with the RBAC lifecycle
    yield pv
    with contextlib.suppress(ApiException):
        client.delete(PVS, pv)


def graph(ns: str, checkpoint: dict | None, image: str = IMAGE, replicas: int = 2) -> dict:
    worker_main = {
        "name": "main",
        "image": image,
        "command": ["python3", "-m", "dynamo.vllm"],
        "args": ["--model", "Qwen/Qwen3-0.6B"],
    }
    worker: dict = {
        "name": "Worker",
        "type": "worker",
        "replicas": replicas,
        "podTemplate": {"spec": {"containers": [worker_main]}},
    }
    if checkpoint is not None:
        worker["experimental"] = {"checkpoint": checkpoint}
    frontend = {
        "name": "Frontend",
        "type": "frontend",
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
    }
    return {
        "apiVersion": names.V1BETA1,
        "kind": names.DGD_KIND,
        "metadata": {"name": "g", "namespace": ns},
        "spec": {"components": [frontend, worker]},
    }


def checkpoints_of(client, ns: str) -> dict[str, dict]:
    return {c["metadata"]["name"]: c for c in client.list(CHECKPOINTS, ns).get("items") or []}


def graph_checkpoint(client, ns: str) -> dict:
    """The one DynamoCheckpoint the graph made (waits for it)."""
    return wait_for(
        lambda: next(iter(checkpoints_of(client, ns).values()), None), WAIT, "the graph's DynamoCheckpoint"
    )


def worker_pod_spec(client, ns: str) -> dict:
    return get(client, DEPLOYMENTS, "g-worker", ns)["spec"]["template"]["spec"]


def env_of(pod_spec: dict) -> dict:
    return {e["name"]: e.get("value") for e in pod_spec["containers"][0].get("env") or []}


def ready_condition(status: dict) -> dict:
    return next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})


def mark(client, obj: dict, phase: str) -> None:
    """Set a DynamoCheckpoint's phase as its controller would."""
    for _ in range(10):
        cur = get(client, CHECKPOINTS, obj["metadata"]["name"], obj["metadata"]["namespace"])
        cur["status"] = {**(cur.get("status") or {}), "phase": phase}
        try:
            client.replace(CHECKPOINTS, cur, subresource="status")
            return
        except ApiException as e:
            if e.status != 409:
                raise
    raise AssertionError("could not set the checkpoint phase")


def test_wait_for_checkpoint_holds_the_worker_until_the_graphs_checkpoint_is_ready(
    kube_cluster, client, ns, storage
):
    cp = {"enabled": True, "startupPolicy": "WaitForCheckpoint", "job": {"podTemplate": UNSCHEDULABLE}}
    with running_operator(kube_cluster, CONFIG, PACING):
        apply_dgd(client, graph(ns, cp))
        ckpt = graph_checkpoint(client, ns)
        dgd = get(client, store.DGD, "g", ns)
        md = ckpt["metadata"]
        cid = md["labels"][LABEL_CHECKPOINT_ID]
        assert md["name"] == f"checkpoint-{cid}" and len(cid) == 32
        (ref,) = md["ownerReferences"]  # deletionPolicy Delete (default): the graph controls it
        assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
            names.DGD_KIND, "g", dgd["metadata"]["uid"], True,
        )  # fmt: skip
        assert md["annotations"][rgc.ANN_AUTO] == "true"
        assert md["annotations"][rgc.ANN_DELETION_POLICY] == "Delete"
        assert ckpt["spec"]["identity"]["model"] == "Qwen/Qwen3-0.6B"
        # the checkpoint controller runs its Job: the component's own pod, which cannot be scheduled here
        job = wait_for(lambda: get(client, JOBS, rc.job_name(md["name"]), ns), WAIT, "the checkpoint Job")
        job_pod = job["spec"]["template"]["spec"]
        assert job_pod["nodeSelector"] == UNSCHEDULABLE["spec"]["nodeSelector"]
        assert env_of(job_pod)["DYN_CHECKPOINT_ID"] == cid

        # held: zero replicas, the graph says why, status.checkpoints says not ready
        s = wait_status(
            client, ns, lambda s: ready_condition(s).get("reason") == "waiting_for_checkpoint", timeout=WAIT
        )
        assert s["state"] == "pending"
        assert (
            f"Worker: waiting for DynamoCheckpoint {ns}/{md['name']} to be Ready"
            in ready_condition(s)["message"]
        )
        assert s["checkpoints"] == {
            "Worker": {"checkpointName": md["name"], "checkpointID": cid, "identityHash": cid, "ready": False}
        }
        dcd = store.to_internal(get(client, store.DCD, "g-worker", ns))
        assert dcd["spec"]["replicas"] == 0
        assert dcd["spec"]["experimental"]["checkpoint"]["checkpointRef"] == md["name"]
        assert dcd["metadata"]["annotations"][ANN_CHECKPOINT_ID] == cid
        assert get(client, DEPLOYMENTS, "g-worker", ns)["spec"]["replicas"] == 0
        available = wait_for(
            lambda: (
                (c := condition(get(client, store.DCD, "g-worker", ns), "Available")).get("reason")
                == "WaitingForCheckpoint"
                and c
            ),
            WAIT,
            "the DCD saying it waits",
        )
        assert available["status"] == "False" and md["name"] in available["message"]
        pod = worker_pod_spec(client, ns)
        env = env_of(pod)
        assert (env["DYN_CHECKPOINT_PATH"], env["DYN_CHECKPOINT_HASH"], env["SKIP_WAIT_FOR_CHECKPOINT"]) == (
            "/checkpoints", cid, "true",
        )  # fmt: skip
        assert {"name": "checkpoint-storage", "persistentVolumeClaim": {"claimName": "chrek-pvc"}} in pod[
            "volumes"
        ]
        assert {"name": "checkpoint-storage", "mountPath": "/checkpoints"} in pod["containers"][0][
            "volumeMounts"
        ]

        # Ready: the worker starts (from the checkpoint) and the graph becomes successful
        mark(client, ckpt, "Ready")
        s = wait_status(client, ns, lambda s: s.get("state") == "successful", timeout=WAIT)
        assert s["checkpoints"]["Worker"]["ready"] is True
        assert s["components"]["Worker"]["readyReplicas"] == 2
        assert get(client, DEPLOYMENTS, "g-worker", ns)["spec"]["replicas"] == 2
        assert env_of(worker_pod_spec(client, ns))["DYN_CHECKPOINT_HASH"] == cid  # no roll on release
        wait_event_reasons(client, ns, "g", {"CheckpointCreated"}, names.DGD_KIND)

        # deleting the graph takes the checkpoint along (the garbage collector, through the owner reference)
        client.delete(store.DGD, "g", ns)
        wait_for(
            lambda: not checkpoints_of(client, ns), WAIT, lambda: checkpoints_of(client, ns), interval=0.5
        )


def test_checkpoint_follows_the_component_and_its_deletion_policy(kube_cluster, client, ns, storage):
    cp = {"enabled": True, "deletionPolicy": "Retain", "job": {"podTemplate": UNSCHEDULABLE}}
    with running_operator(kube_cluster, CONFIG, PACING):
        apply_dgd(client, graph(ns, cp))
        first = graph_checkpoint(client, ns)
        assert "ownerReferences" not in first["metadata"]  # Retain: not the graph's to delete
        assert first["metadata"]["annotations"][rgc.ANN_DELETION_POLICY] == "Retain"
        # Immediate (default): the worker runs at once, restore-shaped
        wait_status(client, ns, lambda s: s.get("state") == "successful", timeout=WAIT)

        # Delete: the graph takes ownership of the same checkpoint
        apply_dgd(client, graph(ns, {**cp, "deletionPolicy": "Delete"}))
        name = first["metadata"]["name"]
        owned = wait_for(
            lambda: (c := get(client, CHECKPOINTS, name, ns)) and c["metadata"].get("ownerReferences") and c,
            WAIT,
            "the owner reference",
        )
        assert owned["metadata"]["annotations"][rgc.ANN_DELETION_POLICY] == "Delete"
        assert owned["metadata"]["uid"] == first["metadata"]["uid"]  # re-owned, not re-created

        # what the worker runs changes: a new checkpoint, the old (owned) one goes
        apply_dgd(client, graph(ns, {**cp, "deletionPolicy": "Delete"}, image=IMAGE + "-b"))
        wait_for(
            lambda: (
                set(checkpoints_of(client, ns)) not in (set(), {name})
                and name not in checkpoints_of(client, ns)
            ),
            WAIT,
            lambda: checkpoints_of(client, ns),
            interval=0.5,
        )
        (second,) = checkpoints_of(client, ns).values()
        cid = second["metadata"]["labels"][LABEL_CHECKPOINT_ID]
        wait_status(
            client,
            ns,
            lambda s: (s.get("checkpoints") or {}).get("Worker", {}).get("checkpointID") == cid,
            timeout=WAIT,
        )
        wait_for(lambda: env_of(worker_pod_spec(client, ns)).get("DYN_CHECKPOINT_HASH") == cid, WAIT)

        # the component stops asking: its checkpoint is deleted, the pods are no longer restore-shaped
        apply_dgd(client, graph(ns, None, image=IMAGE + "-b"))
        wait_for(
            lambda: not checkpoints_of(client, ns), WAIT, lambda: checkpoints_of(client, ns), interval=0.5
        )
        wait_status(
            client, ns, lambda s: "checkpoints" not in s and s.get("state") == "successful", timeout=WAIT
        )
        pod = worker_pod_spec(client, ns)
        assert not any(k.startswith("DYN_CHECKPOINT") for k in env_of(pod))
        assert "checkpoint-storage" not in {v["name"] for v in pod.get("volumes") or []}


def standalone(ns: str) -> dict:
    return {
        "apiVersion": CHECKPOINTS.api_version,
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "warm", "namespace": ns},
        "spec": {
            "identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"},
            "job": {"podTemplateSpec": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}}},
        },
    }


def test_checkpoint_ref_restores_an_existing_checkpoint_without_owning_it(kube_cluster, client, ns, storage):
    with running_operator(kube_cluster, CONFIG, PACING):
        client.create(CHECKPOINTS, standalone(ns), ns)
        # its Job really runs: kwok completes pods owned by a Job
        warm = wait_for(
            lambda: (
                (c := get(client, CHECKPOINTS, "warm", ns))
                and (c.get("status") or {}).get("phase") == "Ready"
                and c
            ),
            WAIT,
            "the standalone checkpoint Ready",
        )
        cid = warm["status"]["checkpointID"]
        ref = {"enabled": True, "checkpointRef": "warm", "startupPolicy": "WaitForCheckpoint"}
        apply_dgd(client, graph(ns, ref))
        s = wait_status(client, ns, lambda s: s.get("state") == "successful", timeout=WAIT)
        assert s["checkpoints"] == {
            "Worker": {"checkpointName": "warm", "checkpointID": cid, "identityHash": cid, "ready": True}
        }
        env = env_of(worker_pod_spec(client, ns))
        assert env["DYN_CHECKPOINT_HASH"] == cid and env["SKIP_WAIT_FOR_CHECKPOINT"] == "true"
        assert set(checkpoints_of(client, ns)) == {"warm"}  # nothing created for a checkpointRef
        assert not get(client, CHECKPOINTS, "warm", ns)["metadata"].get("ownerReferences")
        client.delete(store.DGD, "g", ns)
        wait_for(lambda: get(client, store.DGD, "g", ns) is None, WAIT, interval=0.5)
        assert get(client, CHECKPOINTS, "warm", ns) is not None  # never the graph's to delete


def test_a_retained_checkpoint_outlives_its_graph(kube_cluster, client, ns, storage):
    cp = {"enabled": True, "deletionPolicy": "Retain", "job": {"podTemplate": UNSCHEDULABLE}}
    with running_operator(kube_cluster, CONFIG, PACING):
        apply_dgd(client, graph(ns, cp))
        name = graph_checkpoint(client, ns)["metadata"]["name"]
        wait_status(
            client, ns, lambda s: (s.get("checkpoints") or {}).get("Worker", {}).get("checkpointName") == name
        )
        client.delete(store.DGD, "g", ns)
        wait_for(lambda: get(client, store.DGD, "g", ns) is None, WAIT, interval=0.5)
        wait_for(lambda: get(client, DEPLOYMENTS, "g-worker", ns) is None, WAIT, interval=0.5)
        assert get(client, CHECKPOINTS, name, ns) is not None
        assert dgd_status(client, ns) == {}


def test_the_graph_creates_the_checkpoint_claim_its_pods_mount(kube_cluster, client, ns):
    """``checkpoint.storage.pvc.create``: the graph with a checkpoint component gets the namespace's claim
    (created by the DGD reconciler, unowned), the one its worker's pods mount."""
    config = {"checkpoint": {"enabled": True, "storage": {"pvc": {"create": True, "size": "3Gi"}}}}
    cp = {"enabled": True, "deletionPolicy": "Retain", "job": {"podTemplate": UNSCHEDULABLE}}
    with running_operator(kube_cluster, config):
        apply_dgd(client, graph(ns, cp))
        claim = wait_for(lambda: get(client, PVCS, "chrek-pvc", ns), WAIT, "the checkpoint claim")
        assert claim["spec"]["accessModes"] == ["ReadWriteMany"]  # upstream's default
        assert claim["spec"]["resources"]["requests"]["storage"] == "3Gi"
        assert "ownerReferences" not in claim["metadata"]
        wait_for(lambda: get(client, DEPLOYMENTS, "g-worker", ns), WAIT, "the worker's Deployment")
        volumes = {v["name"]: v for v in worker_pod_spec(client, ns).get("volumes") or []}
        assert volumes["checkpoint-storage"]["persistentVolumeClaim"]["claimName"] == "chrek-pvc"
