"""The Grove pathway: which graphs go there, and the PodCliqueSet they become (exact shapes)."""

from __future__ import annotations

import pytest
from dynamo_operator.controllers import grove as grove_status
from dynamo_operator.render import RenderContext, RenderError, names, render_all, render_graph
from dynamo_operator.render import grove as rgrove
from support import graphs
from support.graphs import dgd

MPI = {"mpi": {"sshSecretName": "mpi-ssh", "sshSecretNamespace": "dynamo-system"}}


def ctx(detected=("grove",), **config) -> RenderContext:
    return RenderContext(operator_config={**MPI, **config}, detected=frozenset(detected))


def component(name, ctype="worker", args=(), nodes=1, backend="sglang", **fields):
    """A component launching ``dynamo.<backend>`` (a frontend: ``dynamo.frontend``) from ``img:1``."""
    module = "frontend" if ctype == "frontend" else backend
    command = ["python3", "-m", f"dynamo.{module}"]
    return graphs.component(name, ctype, image="img:1", command=command, args=args, nodes=nodes, **fields)


def pcs_of(out):
    (pcs,) = [o for o in out if o["kind"] == "PodCliqueSet"]
    return pcs


def test_pathway_is_decided_by_config_detection_and_the_opt_out_annotation():
    g = dgd(component("Frontend", "frontend"))
    assert not RenderContext().uses_grove(g)
    assert ctx().uses_grove(g)  # detected
    assert not ctx(orchestrators={"grove": {"enabled": False}}).uses_grove(g)  # config wins over detection
    assert ctx(detected=(), orchestrators={"grove": {"enabled": True}}).uses_grove(g)
    opted_out = dgd(
        component("Frontend", "frontend"), metadata={"annotations": {names.ANN_ENABLE_GROVE: "False"}}
    )
    assert not ctx().uses_grove(opted_out)
    kinds = [o["kind"] for o in render_graph(opted_out, ctx())]
    assert kinds == ["DynamoComponentDeployment"]


def test_single_node_components_are_one_clique_each():
    out = render_graph(
        dgd(component("Frontend", "frontend"), component("Worker", replicas=3, minAvailable=2)), ctx()
    )
    # the graph's discovery ServiceAccount once, before the pods that run as it
    assert [o["kind"] for o in out] == [
        "ServiceAccount",
        *("PodCliqueSet", "Service", "Service"),
    ]
    pcs = pcs_of(out)
    assert pcs["apiVersion"] == "grove.io/v1alpha1"
    assert pcs["metadata"]["name"] == "g"
    assert pcs["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "dynamo-operator",
        "nvidia.com/dynamo-graph-deployment-name": "g",
    }
    t = pcs["spec"]["template"]
    assert pcs["spec"]["replicas"] == 1
    assert t["cliqueStartupType"] == "CliqueStartupTypeAnyOrder"
    assert t["headlessServiceConfig"] == {"publishNotReadyAddresses": True}
    assert t["terminationDelay"] == "15m"
    assert "podCliqueScalingGroups" not in t
    assert [
        (c["name"], c["spec"]["roleName"], c["spec"]["replicas"], c["spec"]["minAvailable"])
        for c in t["cliques"]
    ] == [
        ("frontend", "frontend", 1, 1),
        ("worker", "worker", 3, 2),
    ]
    worker = t["cliques"][1]
    assert worker["labels"][names.LABEL_SELECTOR] == "g-worker"  # the component Service selects it
    assert worker["spec"]["podSpec"]["containers"][0]["name"] == "main"
    assert "schedulerName" not in worker["spec"]["podSpec"]


@pytest.mark.parametrize(
    ("backend", "args", "leader_waits", "worker_waits"),
    [
        ("sglang", ["--model-path", "m", "--tp", "16"], False, True),
        ("vllm", ["--model", "m", "--tensor-parallel-size", "16"], False, True),
        ("trtllm", ["--model-path", "m", "--tensor-parallel-size", "16"], True, False),
    ],
)
def test_multinode_component_is_a_scaling_group_of_leader_and_worker_cliques(
    backend, args, leader_waits, worker_waits
):
    comp = component("Worker", args=args, nodes=3, backend=backend, replicas=2, minAvailable=1)
    comp["podTemplate"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "8"}}
    comp["topologyConstraint"] = {"packDomain": "rack"}
    out = render_graph(
        dgd(component("Frontend", "frontend"), comp, topologyConstraint={"packDomain": "zone"}), ctx()
    )
    t = pcs_of(out)["spec"]["template"]
    assert t["podCliqueScalingGroups"] == [
        {
            "name": "worker",
            "cliqueNames": ["worker-ldr", "worker-wkr"],
            "replicas": 2,
            "minAvailable": 1,
            "topologyConstraint": {"packDomain": "rack"},
        }
    ]
    assert t["topologyConstraint"] == {"packDomain": "zone"}
    cliques = {c["name"]: c for c in t["cliques"]}
    assert list(cliques) == ["frontend", "worker-ldr", "worker-wkr"]
    ldr, wkr = cliques["worker-ldr"]["spec"], cliques["worker-wkr"]["spec"]
    assert (ldr["replicas"], ldr["minAvailable"], wkr["replicas"], wkr["minAvailable"]) == (1, 1, 2, 2)
    assert wkr["replicas"] == comp["multinode"]["nodeCount"] - 1  # the leader is the group's first node
    assert ("startsAfter" in ldr, "startsAfter" in wkr) == (leader_waits, worker_waits)
    if worker_waits:
        assert wkr["startsAfter"] == ["worker-ldr"]
    else:
        assert ldr["startsAfter"] == ["worker-wkr"]
    assert t["cliqueStartupType"] == "CliqueStartupTypeExplicit"
    # the leader is addressed the Grove way (12a's launch rewriting consumes it)
    leader_words = " ".join(
        ldr["podSpec"]["containers"][0].get("command", []) + ldr["podSpec"]["containers"][0].get("args", [])
    )
    worker_words = " ".join(
        wkr["podSpec"]["containers"][0].get("command", []) + wkr["podSpec"]["containers"][0].get("args", [])
    )
    assert "LWS_" not in leader_words + worker_words
    assert "GROVE_" in leader_words + worker_words


def test_kai_scheduler_name_and_queue_when_kai_is_enabled():
    g = dgd(component("Worker"), metadata={"annotations": {names.ANN_KAI_QUEUE: "team-a"}})
    pcs = pcs_of(render_graph(g, ctx(detected=("grove", "kaiScheduler"))))
    assert pcs["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
    (clique,) = pcs["spec"]["template"]["cliques"]
    assert clique["spec"]["podSpec"]["schedulerName"] == "kai-scheduler"
    assert clique["labels"]["kai.scheduler/queue"] == "team-a"
    default_queue = pcs_of(render_graph(dgd(component("Worker")), ctx(detected=("grove", "kaiScheduler"))))
    assert default_queue["metadata"]["labels"]["kai.scheduler/queue"] == "dynamo"
    off = pcs_of(
        render_graph(
            g, ctx(detected=("grove", "kaiScheduler"), orchestrators={"kaiScheduler": {"enabled": False}})
        )
    )
    assert "kai.scheduler/queue" not in off["metadata"]["labels"]


def test_termination_delay_and_priority_class_come_from_config_and_graph():
    g = dgd(component("Worker"), priorityClassName="high")
    t = pcs_of(render_graph(g, ctx(orchestrators={"grove": {"terminationDelay": "4h"}})))["spec"]["template"]
    assert (t["terminationDelay"], t["priorityClassName"]) == ("4h", "high")


def test_a_pack_domain_grove_does_not_know_is_an_error_naming_the_field():
    comp = component("Worker", topologyConstraint={"packDomain": "pod-slice"})
    with pytest.raises(RenderError) as e:
        render_graph(dgd(comp), ctx())
    assert str(e.value).startswith(
        "DynamoGraphDeployment ns/g: spec.components[0].topologyConstraint.packDomain"
    )
    assert "rack" in str(e.value)


def test_podcliqueset_name_is_cut_to_grove_budget_with_a_stable_hash():
    assert names.podcliqueset_name("short", ["frontend"], [1]) == "short"
    long = names.podcliqueset_name("a-very-long-graph-deployment-name", ["verylongworkername"], [2])
    assert len(long) == 8 and long.startswith("a-v-")  # budget 45 - (18 + 22) -> minimum 8
    assert long == names.podcliqueset_name("a-very-long-graph-deployment-name", ["verylongworkername"], [2])
    assert rgrove.podclique_names(dgd(component("Big", nodes=2), name="g"), component("Big", nodes=2)) == (
        "PodCliqueScalingGroup",
        "g-0-big",
    )


def test_render_all_on_grove_has_no_dcd_children():
    kinds = [
        o["kind"] for o in render_all(dgd(component("Frontend", "frontend"), component("W", nodes=2)), ctx())
    ]
    assert "DynamoComponentDeployment" not in kinds and "Deployment" not in kinds
    assert kinds.count("PodCliqueSet") == 1


def _pcs(observed=None, generation=1):
    pcs = {"metadata": {"name": "g", "namespace": "ns", "generation": generation}}
    if observed is not None:
        pcs["status"] = {"observedGeneration": observed}
    return pcs


def test_grove_status_says_what_is_missing_and_never_fakes_readiness():
    r = grove_status.component_readiness("PodClique", "g-0-worker", None, 1, _pcs())
    assert (
        not r.ready and "PodCliqueSet ns/g was accepted but no Grove operator has reconciled it" in r.message
    )
    assert "PodClique g-0-worker does not exist" in r.message
    r = grove_status.component_readiness("PodClique", "g-0-worker", None, 1, _pcs(observed=1))
    assert not r.ready and r.message == "PodClique g-0-worker not created by Grove yet"
    clique = {"status": {"readyReplicas": 1, "replicas": 2}}
    r = grove_status.component_readiness("PodClique", "g-0-worker", clique, 2, _pcs(observed=1))
    assert (r.ready, r.message) == (False, "PodClique g-0-worker: 1/2 replicas ready")
    r = grove_status.component_readiness("PodClique", "g-0-worker", clique, 2, _pcs(observed=0, generation=2))
    assert not r.ready and r.kind == "updating"
    group = {"status": {"availableReplicas": 2, "replicas": 2}}
    r = grove_status.component_readiness("PodCliqueScalingGroup", "g-0-w", group, 2, _pcs(observed=1))
    assert r.ready and r.message == "PodCliqueScalingGroup g-0-w: 2/2 replica groups available"
    assert grove_status.replica_status("PodCliqueScalingGroup", "g-0-w", "ns-g", group) == {
        "componentKind": "PodCliqueScalingGroup",
        "componentNames": ["g-0-w"],
        "replicas": 2,
        "updatedReplicas": 0,
        "availableReplicas": 2,
        "runtimeNamespace": "ns-g",
    }


def test_restart_ids_go_onto_the_cliques_and_are_read_back():
    """``spec.restart`` on Grove: the id rides on the component's clique (the leader's for a scaling
    group: Grove hashes a clique's annotations into its pods' template hash); the live PodCliqueSet tells
    which id each component carries."""
    g = dgd(
        component("Frontend", "frontend"),
        component("Worker", nodes=2, backend="sglang"),
        component("Other"),
        restart={"id": "r1"},
    )
    plain = pcs_of(render_graph(g, ctx()))
    pcs = pcs_of(render_graph(g, ctx(), {"Frontend": "r1", "Worker": "r0"}))
    by_name = {c["name"]: c for c in pcs["spec"]["template"]["cliques"]}
    assert by_name["frontend"]["annotations"][names.ANN_RESTART_AT] == "r1"
    for clique in ("worker-ldr", "worker-wkr"):
        assert by_name[clique]["annotations"][names.ANN_RESTART_AT] == "r0"
    assert names.ANN_RESTART_AT not in (by_name["other"].get("annotations") or {})
    assert (
        pcs["metadata"]["annotations"][names.ANN_SPEC_HASH]
        != plain["metadata"]["annotations"][names.ANN_SPEC_HASH]
    )
    assert rgrove.restart_ids(g, pcs) == {"Frontend": "r1", "Worker": "r0"}
    assert rgrove.restart_ids(g, plain) == {} == rgrove.restart_ids(g, None)
