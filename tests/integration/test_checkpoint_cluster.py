"""The DynamoCheckpoint controller on the real control plane ("cluster" profile), with checkpointing
enabled and disabled in the operator configuration, and the checkpoint storage it manages: the claim it
creates with ``checkpoint.storage.pvc.create``, the cleanup Job of a deleted automatic checkpoint.

The checkpoint Job runs its course on kwok (its pod is scheduled, becomes Running, and kwok's
``pod-complete`` Stage ends pods owned by a Job with exit code 0), so the phases ``Creating`` → ``Ready``
are driven by the real Job controller; what is captured is not (no container runs).
"""

from __future__ import annotations

import contextlib

import pytest
from dynamo_operator.controllers.lifecycle import CHECKPOINTS, FINALIZER, JOBS
from dynamo_operator.render import checkpoint as rc
from dynamo_operator.render.checkpoint_ids import LABEL_CHECKPOINT_ID
from dynamo_operator.render.graph_checkpoint import ANN_AUTO
from dynamo_operator.runtime.client import PODS, PVCS
from dynamo_operator.tunables import ControllerTunables
from kubernetes.client.exceptions import ApiException
from support.crs import condition, describe, events_of, wait_event_reasons
from support.dgd import get
from support.lifecycle import PVS, checkpoint_storage
from support.operator import Operator
from support.poll import wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "ckpt"
WAIT = 90.0


def checkpoint(ns: str, name: str = "warm") -> dict:
    return {
        "apiVersion": CHECKPOINTS.api_version,
        "kind": "DynamoCheckpoint",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"},
            "job": {
                "podTemplateSpec": {
                    "spec": {
                        "containers": [
                            {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"}
                        ]
                    }
                },
                "activeDeadlineSeconds": 600,
            },
        },
    }


def phase(client, ns, name="warm"):
    return ((get(client, CHECKPOINTS, name, ns) or {}).get("status") or {}).get("phase")


def test_enabled_checkpoint_runs_its_job_to_ready(kube_cluster, crds, client, ns):
    with Operator(kube_cluster, {"checkpoint": {"enabled": True}}):
        client.create(CHECKPOINTS, checkpoint(ns))
        job = wait_for(lambda: get(client, JOBS, rc.job_name("warm"), ns), WAIT, "the checkpoint Job")
        assert job["metadata"]["ownerReferences"][0]["kind"] == "DynamoCheckpoint"
        assert job["spec"]["backoffLimit"] == 0
        env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
        wait_for(lambda: phase(client, ns) == "Ready", WAIT, "phase Ready")
        obj = get(client, CHECKPOINTS, "warm", ns)
        st = obj["status"]
        assert st["checkpointID"] == env["DYN_CHECKPOINT_ID"] == rc.checkpoint_id(obj["spec"])
        assert env["DYN_CHECKPOINT_PATH"] == f"/checkpoints/{st['checkpointID']}"
        assert st["jobName"] == "checkpoint-warm" and st["createdAt"]
        c = condition(obj, "Ready")
        assert (c["status"], c["reason"]) == ("True", "CheckpointReady")
        # the outcome is recorded, so the Job is removed
        wait_for(lambda: get(client, JOBS, rc.job_name("warm"), ns) is None, WAIT, "the Job to be deleted")
        wait_event_reasons(client, ns, "warm", {"JobCreated", "CheckpointReady"}, "DynamoCheckpoint")


def test_disabled_configuration_reports_why_and_creates_nothing(kube_cluster, crds, client, ns):
    with Operator(kube_cluster):  # checkpoint.enabled defaults to false
        client.create(CHECKPOINTS, checkpoint(ns))
        wait_for(lambda: phase(client, ns) == "Pending", WAIT, "phase Pending")
        c = condition(get(client, CHECKPOINTS, "warm", ns), "Ready")
        assert (c["status"], c["reason"]) == ("False", "CheckpointingDisabled")
        assert "checkpoint.enabled: true" in c["message"]
        wait_for(
            lambda: ("Warning", "CheckpointingDisabled") in {e[:2] for e in events_of(client, ns, "warm")},
            WAIT,
            "a Warning CheckpointingDisabled event",
        )
        assert get(client, JOBS, rc.job_name("warm"), ns) is None
        text = describe(kube_cluster, "dckpt", "warm", ns)
        assert "CheckpointingDisabled" in text and "checkpoint.enabled: true" in text, text


# -- the checkpoint storage the operator manages (render/checkpoint_storage.py) ------------------------


def claim_config(storage_class: str, **checkpoint) -> dict:
    pvc = {"create": True, "size": "2Gi", "storageClassName": storage_class, "accessMode": "ReadWriteOnce"}
    return {"checkpoint": {"enabled": True, "storage": {"pvc": pvc}, **checkpoint}}


def test_the_checkpoint_claim_is_created_where_it_is_missing_and_never_touched(
    kube_cluster, crds, client, ns
):
    """``checkpoint.storage.pvc.create``: a checkpoint about to run its Job gets the namespace's claim, as
    configured, unowned; it stays when the checkpoint goes. A claim the user made is left as it is."""
    with Operator(kube_cluster, claim_config(f"manual-{ns}")):
        client.create(CHECKPOINTS, checkpoint(ns))
        claim = wait_for(lambda: get(client, PVCS, "chrek-pvc", ns), WAIT, "the checkpoint claim")
        assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]
        assert claim["spec"]["storageClassName"] == f"manual-{ns}"
        assert claim["spec"]["resources"]["requests"]["storage"] == "2Gi"
        assert claim["metadata"]["labels"]["app.kubernetes.io/component"] == "checkpoint-storage"
        assert "ownerReferences" not in claim["metadata"]  # never collected: it holds every checkpoint
        wait_for(
            lambda: any(
                r == "SuccessfulCreate" and f"PersistentVolumeClaim {ns}/chrek-pvc" in m
                for _, r, m in events_of(client, ns, "warm", "DynamoCheckpoint")
            ),
            WAIT,
            "the SuccessfulCreate event",
        )
        client.delete(CHECKPOINTS, "warm", ns)
        wait_for(lambda: get(client, CHECKPOINTS, "warm", ns) is None, WAIT, "the checkpoint gone")
        kept = get(client, PVCS, "chrek-pvc", ns)
        assert kept is not None and kept["metadata"]["uid"] == claim["metadata"]["uid"]


def test_a_claim_the_user_made_is_used_as_it_is(kube_cluster, crds, client, ns):
    mine = {
        "metadata": {"name": "chrek-pvc", "namespace": ns},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    before = client.create(PVCS, mine, ns)
    with Operator(kube_cluster, claim_config(f"manual-{ns}")):
        client.create(CHECKPOINTS, checkpoint(ns))
        wait_for(lambda: phase(client, ns) == "Ready", WAIT, "phase Ready")
        after = get(client, PVCS, "chrek-pvc", ns)
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]  # not written
        assert not any(
            r == "SuccessfulCreate" for _, r, _ in events_of(client, ns, "warm", "DynamoCheckpoint")
        )


def automatic(ns: str, cid: str = "0123456789abcdef0123456789abcdef") -> dict:
    """A DynamoCheckpoint shaped as a graph makes it (annotation, ID label), made before the cleanup
    finalizer existed (none): the controller adds it."""
    obj = checkpoint(ns, f"checkpoint-{cid}")
    obj["metadata"]["labels"] = {LABEL_CHECKPOINT_ID: cid}
    obj["metadata"]["annotations"] = {ANN_AUTO: "true"}
    return obj


def wait_finalizer(client, ns: str, name: str) -> None:
    """The controller puts the cleanup finalizer on an automatic checkpoint that lacks it."""
    wait_for(
        lambda: FINALIZER in (get(client, CHECKPOINTS, name, ns)["metadata"].get("finalizers") or []),
        WAIT,
        "the cleanup finalizer",
    )


def test_a_deleted_automatic_checkpoints_artifacts_are_removed(kube_cluster, crds, client, ns):
    """Its cleanup Job (``checkpoint.cleanupImage``) mounts the claim and removes ``<basePath>/<id>``; kwok
    completes the Job's pod, so the finalizer is released, the Job deleted and the checkpoint gone."""
    pv = checkpoint_storage(client, ns)  # chrek-pvc bound to a hostPath volume, so the Job's pod schedules
    try:
        with Operator(
            kube_cluster, {"checkpoint": {"enabled": True, "cleanupImage": "mirror.example/busybox:1.36"}}
        ) as op:
            obj = automatic(ns)
            name, cid = obj["metadata"]["name"], obj["metadata"]["labels"][LABEL_CHECKPOINT_ID]
            client.create(CHECKPOINTS, obj)
            wait_finalizer(client, ns, name)
            wait_for(lambda: phase(client, ns, name) == "Ready", WAIT, "phase Ready")
            client.delete(CHECKPOINTS, name, ns)
            job = wait_for(
                lambda: get(client, JOBS, f"checkpoint-cleanup-{cid}", ns), WAIT, "the cleanup Job"
            )
            pod = job["spec"]["template"]["spec"]
            (c,) = pod["containers"]
            assert c["image"] == "mirror.example/busybox:1.36"
            assert {e["name"]: e["value"] for e in c["env"]} == {
                "CHECKPOINT_BASE_PATH": "/checkpoints",
                "CHECKPOINT_ID": cid,
            }
            assert pod["volumes"][0]["persistentVolumeClaim"] == {"claimName": "chrek-pvc"}
            wait_for(
                lambda: get(client, CHECKPOINTS, name, ns) is None,
                WAIT,
                lambda: f"the checkpoint gone\n{_cleanup_story(client, op, ns, name, cid)}",
            )
            wait_for(lambda: get(client, JOBS, f"checkpoint-cleanup-{cid}", ns) is None, WAIT, "the Job gone")
            (message,) = [m for _, r, m in events_of(client, ns, name) if r == "CheckpointArtifactsRemoved"]
            assert message == f"removed /checkpoints/{cid} from PersistentVolumeClaim {ns}/chrek-pvc"
    finally:
        with contextlib.suppress(ApiException):
            client.delete(PVS, pv)


def _cleanup_story(client, op: Operator, ns: str, name: str, cid: str) -> str:
    """Where a cleanup stopped (seen once, in a loaded run): the checkpoint's finalizers, the Job's
    conditions, its pods' phases and nodes, and the checkpoint controller's last passes on it."""
    ckpt = (get(client, CHECKPOINTS, name, ns) or {}).get("metadata") or {}
    job = get(client, JOBS, f"checkpoint-cleanup-{cid}", ns) or {}
    pods = [
        (p["metadata"]["name"], p["status"].get("phase"), p["spec"].get("nodeName"))
        for p in client.list(PODS, ns, label_selector=f"job-name=checkpoint-cleanup-{cid}")["items"]
    ]
    passes = [
        (round(o.at, 1), o.controller, o.result, repr(o.error) if o.error else None)
        for o in op.outcomes
        if o.request.name == name
    ]
    return (
        f"checkpoint finalizers {ckpt.get('finalizers')}, deleted at {ckpt.get('deletionTimestamp')}\n"
        f"job status {job.get('status')}\n"
        f"pods {pods}\n"
        f"last passes {passes[-8:]}"
    )


def test_without_a_claim_there_is_nothing_to_remove(kube_cluster, crds, client, ns):
    with Operator(kube_cluster, {"checkpoint": {"enabled": True}}):
        obj = automatic(ns)
        name, cid = obj["metadata"]["name"], obj["metadata"]["labels"][LABEL_CHECKPOINT_ID]
        client.create(CHECKPOINTS, obj)
        wait_finalizer(client, ns, name)
        client.delete(CHECKPOINTS, name, ns)
        wait_for(lambda: get(client, CHECKPOINTS, name, ns) is None, WAIT, "the checkpoint gone")
        assert get(client, JOBS, f"checkpoint-cleanup-{cid}", ns) is None
        assert ("Normal", "CheckpointArtifactsNotFound") in {e[:2] for e in events_of(client, ns, name)}


# -- a checkpoint Job that is not getting anywhere (render/checkpoint_stall.py) ---------------------------

STALL = ControllerTunables(checkpoint_stall_seconds=3.0)


def stuck(ns: str, name: str, **pod) -> dict:
    obj = checkpoint(ns, name)
    obj["spec"]["job"]["podTemplateSpec"]["spec"].update(pod)
    return obj


def test_a_job_that_cannot_get_a_pod_or_a_node_is_named_within_the_bound(kube_cluster, crds, client, ns):
    """Two Jobs that wait forever on their own: one whose pod Kubernetes refuses (a RuntimeClass this
    cluster lacks: the Job controller retries, records FailedCreate, never fails), one whose pod no node
    fits. Each checkpoint names the cause within the bound (3 s here; 60 s by default), read from the Job
    controller's Event and the scheduler's condition, keeps its Job (the cause may be fixed), and says
    when the Job's deadline ends the wait."""
    with Operator(kube_cluster, {"checkpoint": {"enabled": True}}, controller_tunables=STALL):
        client.create(CHECKPOINTS, stuck(ns, "refused", runtimeClassName="nvidia-not-here"))
        client.create(CHECKPOINTS, stuck(ns, "nowhere", nodeSelector={"dynamo-test/no-such-node": "x"}))
        for name, reason, cause in (
            ("refused", "JobPodNotCreated", 'RuntimeClass "nvidia-not-here" not found'),
            ("nowhere", "JobPodUnschedulable", "cannot be scheduled: 0/"),
        ):
            c = wait_for(
                lambda name=name, reason=reason: _with_reason(client, ns, name, reason),
                WAIT,
                f"{name}'s Ready condition to say {reason}",
            )
            assert cause in c["message"] and "its deadline (600s after it started)" in c["message"], c
            obj = get(client, CHECKPOINTS, name, ns)
            assert obj["status"]["phase"] == "Creating" and obj["status"]["message"] == c["message"]
            assert get(client, JOBS, rc.job_name(name), ns) is not None  # kept: the cause may be fixed
            wait_event_reasons(client, ns, name, {reason}, "DynamoCheckpoint")


def _with_reason(client, ns: str, name: str, reason: str) -> dict | None:
    c = condition(get(client, CHECKPOINTS, name, ns), "Ready")
    return c if (c or {}).get("reason") == reason else None
