"""The DGDR controller on the real control plane ("cluster" profile).

The profiling Job really runs its course: kube-controller-manager's Job controller creates the pod, the
scheduler binds it to a kwok node, kwok's ``pod-complete`` Stage ends pods owned by a Job with exit code 0,
and the Job controller marks the Job ``Complete``.  What kwok cannot do is run the profiler container, so
the profiler's OUTPUT is written by the test, exactly where the Job's ``output-copier`` sidecar would
publish it: the ConfigMap ``dgdr-output-<name>`` with ``final_config.yaml`` (a mocker graph) and
``profiler_status.yaml``.  From there on everything is the operator's: the DGD it creates is reconciled
by the DGD controller to ``successful`` on kwok pods, and the request follows it.
"""

from __future__ import annotations

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.controllers import store
from dynamo_operator.controllers.lifecycle import DGDRS, JOBS
from dynamo_operator.render import dgdr as rd
from dynamo_operator.runtime.client import CONFIGMAPS, SERVICEACCOUNTS
from support import graphs
from support.crs import condition, describe, events_of
from support.dgd import get
from support.operator import Operator
from support.poll import wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "dgdr"
WAIT = 90.0
EXAMPLE = REPO_ROOT / "examples" / "dgdr-mocker.yaml"
MOCKER = ["python3", "-m", "dynamo.mocker", "--model-path", "Qwen/Qwen3-0.6B"]
# what the stand-in profiler writes: a graph of mocker workers (no GPU), named by the request's output
MOCKER_GRAPH = graphs.dgd(
    graphs.component("Frontend", "frontend"),
    graphs.component("MockerWorker", replicas=2, command=MOCKER),
    name="profiled",
    namespace=None,
)


@pytest.fixture(scope="module")
def operator(kube_cluster, crds):
    """One in-process operator for the module: each test works in a namespace of its own."""
    with Operator(kube_cluster) as op:
        yield op


def request(ns: str, name: str = "req", **spec_extra) -> dict:
    return {
        "apiVersion": DGDRS.api_version,
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "model": "Qwen/Qwen3-0.6B",
            "backend": "vllm",
            "useMocker": True,
            "profilingConfig": {
                "profilerImage": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:0.6.0",
                "config": {"sla": {"ttft": 200, "itl": 20}},
            },
            **spec_extra,
        },
    }


def dgdr(client, ns, name="req") -> dict:
    return get(client, DGDRS, name, ns) or {}


def state(client, ns, name="req") -> str | None:
    return (dgdr(client, ns, name).get("status") or {}).get("state")


def wait_job_complete(client, ns, name="req") -> dict:
    def done():
        job = get(client, JOBS, rd.job_name(name), ns)
        conds = ((job or {}).get("status") or {}).get("conditions") or []
        return job if any(c.get("type") == "Complete" and c.get("status") == "True" for c in conds) else None

    return wait_for(done, WAIT, f"Job {rd.job_name(name)} Complete")


def publish_output(client, ns, name="req", final=MOCKER_GRAPH) -> None:
    """What the Job's output-copier sidecar does once the profiler wrote its files."""
    client.create(
        CONFIGMAPS,
        {
            "metadata": {
                "name": rd.output_configmap_name(name),
                "namespace": ns,
                "labels": {rd.LABEL_DGDR_NAME: name, rd.LABEL_DGDR_NAMESPACE: ns},
            },
            "data": {
                rd.FINAL_CONFIG: final if isinstance(final, str) else yaml.safe_dump(final),
                rd.STATUS_FILE: "phase: Done\nmessage: profiling finished\n",
            },
        },
    )


def test_profiling_job_completes_and_the_generated_graph_is_deployed(client, ns, operator):
    example = yaml.safe_load(EXAMPLE.read_text())  # applied unchanged, in the test's namespace
    n = example["metadata"]["name"]
    client.create(DGDRS, {**example, "metadata": {**example["metadata"], "namespace": ns}})
    wait_for(lambda: state(client, ns, n) == "Profiling", WAIT, "state Profiling")
    obj = dgdr(client, ns, n)
    assert (condition(obj, "Validation")["status"], condition(obj, "Validation")["reason"]) == (
        "True",
        "SpecValid",
    )
    job = wait_job_complete(client, ns, n)
    assert job["metadata"]["ownerReferences"][0]["name"] == n
    pod = job["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["profiler", "output-copier"]
    assert pod["serviceAccountName"] == "dgdr-profiling-job"
    assert get(client, SERVICEACCOUNTS, "dgdr-profiling-job", ns) is not None
    # the Job succeeded but the output is not there yet: the request waits for it (bounded grace)
    wait_for(
        lambda: condition(dgdr(client, ns, n), "Profiling").get("reason") == "WaitingForOutput",
        WAIT,
        "Profiling=WaitingForOutput",
    )
    publish_output(client, ns, n)

    dgd = wait_for(lambda: get(client, store.DGD, n, ns), WAIT, "the generated DGD")
    assert dgd["metadata"]["ownerReferences"][0]["kind"] == "DynamoGraphDeploymentRequest"
    assert dgd["metadata"]["labels"][rd.LABEL_DGDR_NAME] == n
    assert dgd["metadata"]["labels"]["team"] == "inference"  # deploymentOverrides.labels
    assert set(dgd["spec"]["services"]) == {"Frontend", "MockerWorker"}  # stored as v1alpha1
    wait_for(lambda: state(client, ns, n) == "Ready", WAIT, "state Ready (the DGD became successful)")
    obj = dgdr(client, ns, n)
    st = obj["status"]
    assert st["deployment"] == {"name": n, "namespace": ns, "created": True, "state": "successful"}
    assert st["generatedDeployment"]["kind"] == "DynamoGraphDeployment" and st["backend"] == "vllm"
    for type_, reason in (
        ("Profiling", "Completed"),
        ("SpecGenerated", "SpecGenerated"),
        ("DeploymentReady", "DeploymentReady"),
        ("Succeeded", "DeploymentReady"),
    ):
        c = condition(obj, type_)
        assert (c["status"], c["reason"]) == ("True", reason), (type_, c)
    wait_for(
        lambda: (
            {"ProfilingJobCreated", "SpecGenerated", "DeploymentReady"}
            <= {e[1] for e in events_of(client, ns, n, DGDRS.kind)}
        ),
        WAIT,
        "the request's events",
    )

    # deleting the generated DGD ends the request; the DGD is not re-created
    client.delete(store.DGD, n, ns)
    wait_for(lambda: state(client, ns, n) == "DeploymentDeleted", WAIT, "state DeploymentDeleted")
    assert get(client, store.DGD, n, ns) is None
    c = condition(dgdr(client, ns, n), "DeploymentReady")
    assert (c["status"], c["reason"]) == ("False", "DeploymentDeleted") and "delete this request" in c[
        "message"
    ]


def test_without_auto_apply_the_generated_spec_waits_in_status(client, ns, operator):
    client.create(DGDRS, request(ns, autoApply=False))
    wait_job_complete(client, ns)
    publish_output(client, ns)
    wait_for(lambda: state(client, ns) == "Ready", WAIT, "state Ready")
    obj = dgdr(client, ns)
    gen = obj["status"]["generatedDeployment"]
    assert gen["metadata"]["name"] == "req" and set(gen["spec"]["services"]) == {"Frontend", "MockerWorker"}
    c = condition(obj, "SpecGenerated")
    assert (c["status"], c["reason"]) == ("True", "AwaitingManualApply")
    assert get(client, store.DGD, "req", ns) is None and "deployment" not in obj["status"]


def test_unusable_profiler_output_fails_with_the_reason(client, ns, operator):
    client.create(DGDRS, request(ns))
    wait_job_complete(client, ns)
    publish_output(client, ns, final=yaml.safe_dump({"apiVersion": "apps/v1", "kind": "Deployment"}))
    wait_for(lambda: state(client, ns) == "Failed", WAIT, "state Failed")
    c = condition(dgdr(client, ns), "Profiling")
    assert (c["status"], c["reason"]) == ("False", "InvalidProfilingOutput")
    assert "is not a DynamoGraphDeployment" in c["message"]
    wait_for(
        lambda: (
            ("Warning", "InvalidProfilingOutput") in {e[:2] for e in events_of(client, ns, "req", DGDRS.kind)}
        ),
        WAIT,
        "a Warning InvalidProfilingOutput event",
    )
    assert get(client, store.DGD, "req", ns) is None


def test_invalid_request_fails_validation_without_a_job(kube_cluster, client, ns, operator):
    bad = request(ns)
    bad["spec"]["profilingConfig"]["configMapRef"] = {"name": "missing-disagg", "key": "disagg.yaml"}
    client.create(DGDRS, bad)
    wait_for(lambda: state(client, ns) == "Failed", WAIT, "state Failed")
    c = condition(dgdr(client, ns), "Validation")
    assert (c["status"], c["reason"]) == ("False", "InvalidSpec")
    assert "ConfigMap 'missing-disagg' not found" in c["message"]
    assert get(client, JOBS, rd.job_name("req"), ns) is None
    # `kubectl describe` answers "why is this not ready": the reason, the message and the event
    wait_for(
        lambda: "InvalidSpec" in {e[1] for e in events_of(client, ns, "req")}, WAIT, "the InvalidSpec event"
    )
    text = describe(kube_cluster, "dgdr", "req", ns)
    assert "InvalidSpec" in text and "missing-disagg" in text and "Warning" in text, text
