"""The chart installed for real: the operator runs as Pods of the image, the kubelet probes them, the API
server calls their webhooks through the Service, they elect a leader on the Lease, and the install hook ran
as one Job."""

from __future__ import annotations

import json
import subprocess
import uuid

from dynamo_localcluster.realnode import layout
from realnode_helpers import NAMESPACE, config_digest, operator_pods


def test_the_operator_runs_as_pods_ready_through_the_kubelets_probes(platform, built_images):
    pods = operator_pods(platform)
    assert len(pods) == 2, [p["metadata"]["name"] for p in pods]
    digest = config_digest(built_images["operator"])
    for pod in pods:
        assert pod["spec"]["nodeName"] == layout.NODE_NAME
        (main,) = pod["spec"]["containers"]
        assert main["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert main["livenessProbe"]["httpGet"]["path"] == "/healthz"
        (status,) = pod["status"]["containerStatuses"]
        # Ready is only ever set by the kubelet's readiness probe passing on the real process.
        assert status["ready"] and status["started"], status
        assert status["restartCount"] == 0, status  # the liveness probe never failed
        assert status["imageID"] == digest, status["imageID"]  # the image make image built


def test_the_install_hook_job_completed_as_a_job(platform):
    """One Job runs the install's steps (conflict check, MPI SSH key, webhook certificate) in one pod."""
    name = "dynamo-platform-dynamo-operator-install-hooks"
    seen = platform.hook_jobs.get(name)
    assert seen is not None, f"{name} never appeared during the install; saw {sorted(platform.hook_jobs)}"
    assert seen["succeeded"] >= 1 and ("Complete", "True") in seen["conditions"], seen
    hooks = {
        n for n in platform.hook_jobs if "-install-hooks" in n or "-check-conflicts" in n or "-ensure-" in n
    }
    assert hooks == {name}, sorted(platform.hook_jobs)


def test_the_hooks_did_their_work(platform):
    secrets = platform.kubectl("get", "secrets", "-n", NAMESPACE, "-o", "name").split()
    assert "secret/webhook-server-cert" in secrets, secrets
    assert "secret/mpi-run-ssh-secret" in secrets, secrets


def test_admission_is_served_through_the_service_by_the_operator_pods(platform):
    config = json.loads(platform.kubectl("get", "validatingwebhookconfigurations", "-o", "json"))["items"]
    ours = [w for c in config for w in c.get("webhooks", []) if "dynamo" in c["metadata"]["name"]]
    assert ours and all("service" in w["clientConfig"] for w in ours)  # a Service, no URL
    # the schema accepts it (annotations are free-form), only the operator's admission refuses it
    annotations = {"nvidia.com/vllm-distributed-executor-backend": "bogus"}
    bad = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": f"bad-{uuid.uuid4().hex[:6]}",
            "namespace": "default",
            "annotations": annotations,
        },
        "spec": {"components": [{"name": "Frontend", "type": "frontend"}]},
    }
    r = subprocess.run(
        ["kubectl", "apply", "-f", "-"],
        input=json.dumps(bad),
        env=platform.cluster.env,
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0
    # the webhook answers with a structured Status (field causes), which the API server reports as
    # "is invalid"; the wording and the fix hint are the operator's own (no CRD schema carries this rule)
    assert 'must be "mp" or "ray"' in r.stderr, r.stderr
    assert "fix the value or remove the annotation" in r.stderr, r.stderr
    assert f'DynamoGraphDeployment "{bad["metadata"]["name"]}" is invalid' in r.stderr, r.stderr


def test_one_replica_leads_on_the_lease(platform):
    lease = json.loads(
        platform.kubectl("get", "lease", "dynamo.nvidia.com", "-n", "kube-system", "-o", "json")
    )
    holder = lease["spec"]["holderIdentity"]
    names = [p["metadata"]["name"] for p in operator_pods(platform)]
    assert sum(1 for n in names if n in holder) == 1, (holder, names)
