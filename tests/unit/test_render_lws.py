"""The LeaderWorkerSet pathway (multinode components when Grove is not used): exact object shapes."""

from __future__ import annotations

import pytest
from dynamo_operator.render import RenderContext, RenderError, render_all


def dcd(nodes=2, replicas=1):
    obj = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": "g-worker",
            "namespace": "ns",
            "labels": {"nvidia.com/dynamo-graph-deployment-name": "g"},
        },
        "spec": {
            "name": "Worker",
            "type": "worker",
            "backendFramework": "sglang",
            "replicas": replicas,
            "podTemplate": {
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "img:1",
                            "command": ["python3", "-m", "dynamo.sglang"],
                            "args": ["--model-path", "m", "--tp", "16"],
                            "resources": {"limits": {"nvidia.com/gpu": "8"}},
                        }
                    ]
                }
            },
        },
    }
    if nodes > 1:
        obj["spec"]["multinode"] = {"nodeCount": nodes}
    return obj


def test_one_leaderworkerset_of_node_count_and_its_headless_service():
    out = render_all(dcd(nodes=3, replicas=2), RenderContext(detected=frozenset({"lws"})))
    assert [o["kind"] for o in out] == [
        "ServiceAccount",  # the graph's discovery account
        *("LeaderWorkerSet", "Service", "Service"),
    ]
    lws, headless, svc = out[1:]
    assert lws["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    assert lws["metadata"]["name"] == "g-worker-0"
    spec = lws["spec"]
    assert (spec["replicas"], spec["startupPolicy"], spec["leaderWorkerTemplate"]["size"]) == (
        2,
        "LeaderCreated",
        3,
    )
    leader = spec["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    worker = spec["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    words = " ".join(
        leader.get("command", [])
        + leader.get("args", [])
        + worker.get("command", [])
        + worker.get("args", [])
    )
    assert "$(LWS_LEADER_ADDRESS)" in words and "GROVE_" not in words
    assert headless["metadata"]["name"] == "g-worker-0"
    assert headless["spec"] == {
        "clusterIP": "None",
        "publishNotReadyAddresses": True,
        "selector": {"leaderworkerset.sigs.k8s.io/name": "g-worker-0"},
    }
    assert svc["metadata"]["name"] == "g-worker" and svc["spec"]["selector"] == {
        "nvidia.com/selector": "g-worker"
    }


def test_lws_enabled_by_config_without_detection():
    ctx = RenderContext(operator_config={"orchestrators": {"lws": {"enabled": True}}})
    assert "LeaderWorkerSet" in [o["kind"] for o in render_all(dcd(), ctx)]


@pytest.mark.parametrize(
    "ctx",
    [
        RenderContext(),
        RenderContext(
            operator_config={"orchestrators": {"lws": {"enabled": False}}}, detected=frozenset({"lws"})
        ),
    ],
)
def test_no_orchestrator_is_an_error_naming_the_field_and_the_fixes(ctx):
    with pytest.raises(RenderError) as e:
        render_all(dcd(), ctx)
    msg = str(e.value)
    assert (
        "spec.multinode.nodeCount" in msg
        and "grove.enabled=true" in msg
        and "orchestrators.lws.enabled" in msg
    )


def test_single_node_stays_a_deployment():
    assert [o["kind"] for o in render_all(dcd(nodes=1), RenderContext(detected=frozenset({"lws"})))] == [
        "ServiceAccount",
        *("Deployment", "Service"),
    ]
