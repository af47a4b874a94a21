"""The DynamoCheckpoint controller on the real control plane ("cluster" profile), with checkpointing
enabled and disabled in the operator configuration.

The checkpoint Job runs its course on kwok (its pod is scheduled, becomes Running, and kwok's
``pod-complete`` Stage ends pods owned by a Job with exit code 0), so the phases ``Creating`` → ``Ready``
are driven by the real Job controller; what is captured is not (no container runs).
"""

from __future__ import annotations

import pytest
from dynamo_operator.controllers.lifecycle import CHECKPOINTS, JOBS
from dynamo_operator.render import checkpoint as rc
from support.crs import condition, describe, events_of, wait_event_reasons
from support.dgd import get
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
