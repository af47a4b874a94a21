"""The MPI sshd NetworkPolicy of a graph (mpi.sshNetworkPolicy): only graphs with multinode TensorRT-LLM
components get one, it selects exactly their pods, and it changes nothing but port 2222: every port from
the same graph, every other port from anywhere."""

from __future__ import annotations

import copy

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.render import RenderContext, render_all
from dynamo_operator.render.netpol import mpi_ssh_network_policy
from dynamo_operator.render.validate import to_v1beta1

TRTLLM = yaml.safe_load((REPO_ROOT / "examples" / "trtllm-multinode.yaml").read_text())
SGLANG = yaml.safe_load((REPO_ROOT / "examples" / "sglang-multinode.yaml").read_text())
COMPONENT = "nvidia.com/dynamo-component"
ON = {"mpi": {"sshSecretName": "mpi-run-ssh-secret", "sshNetworkPolicy": True}}


def graph(doc: dict, ns: str = "team") -> dict:
    obj = copy.deepcopy(doc)
    obj["metadata"]["namespace"] = ns
    return to_v1beta1(obj)


def test_on_by_default_off_when_asked_and_absent_for_other_backends():
    assert mpi_ssh_network_policy(graph(TRTLLM), RenderContext()) is not None  # issue 30: on by default
    off = {"mpi": {"sshNetworkPolicy": False}}
    assert mpi_ssh_network_policy(graph(TRTLLM), RenderContext(operator_config=off)) is None
    assert mpi_ssh_network_policy(graph(SGLANG), RenderContext(operator_config=ON)) is None
    single = graph(TRTLLM)
    single["spec"]["components"][1]["multinode"] = {"nodeCount": 1}
    assert mpi_ssh_network_policy(single, RenderContext(operator_config=ON)) is None


def test_policy_admits_sshd_only_from_the_same_graph():
    p = mpi_ssh_network_policy(graph(TRTLLM), RenderContext(operator_config=ON))
    assert (p["apiVersion"], p["kind"]) == ("networking.k8s.io/v1", "NetworkPolicy")
    assert p["metadata"]["name"] == "trtllm-multinode-mpi-ssh" and p["metadata"]["namespace"] == "team"
    assert p["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "dynamo-operator"
    assert "nvidia.com/dynamo-spec-hash" in p["metadata"]["annotations"]
    spec = p["spec"]
    same_graph = {"nvidia.com/dynamo-graph-deployment-name": "trtllm-multinode"}
    assert spec["podSelector"] == {
        "matchLabels": same_graph,
        "matchExpressions": [{"key": COMPONENT, "operator": "In", "values": ["TrtllmWorker"]}],
    }
    assert spec["policyTypes"] == ["Ingress"]
    same, others = spec["ingress"]
    assert same == {"from": [{"podSelector": {"matchLabels": same_graph}}]}  # every port, MPI/NCCL too
    assert "from" not in others  # from anywhere ...
    covered = {(r["protocol"], n) for r in others["ports"] for n in range(r["port"], r["endPort"] + 1)}
    assert ("TCP", 2222) not in covered  # ... every port but sshd's
    assert all(("TCP", n) in covered for n in (1, 2221, 2223, 8000, 9090, 65535))
    assert all(("UDP", n) in covered for n in (1, 2222, 65535))


def test_the_policy_selects_the_pods_the_graph_renders():
    """Its selector matches the labels of the sshd workers' pod templates on both pathways."""
    obj = copy.deepcopy(TRTLLM)
    obj["metadata"]["namespace"] = "team"
    for detected in (["lws"], ["grove"]):
        out = render_all(obj, RenderContext(operator_config=ON, detected=detected))
        p = next(o for o in out if o["kind"] == "NetworkPolicy")
        want = p["spec"]["podSelector"]
        templates = _pod_templates(out)
        selected = [t for t in templates if _matches(want, t["metadata"]["labels"])]
        # the leader (mpirun) and the workers (sshd) of the TensorRT-LLM component, nothing else
        assert len(selected) == 2
        assert sorted("sshd" in " ".join(_launch(t)) for t in selected) == [False, True]
        frontends = [t for t in templates if t["metadata"]["labels"][COMPONENT] == "Frontend"]
        assert frontends and not any(_matches(want, t["metadata"]["labels"]) for t in frontends)


def _matches(selector: dict, labels: dict) -> bool:
    if any(labels.get(k) != v for k, v in selector["matchLabels"].items()):
        return False
    return all(labels.get(e["key"]) in e["values"] for e in selector["matchExpressions"])


def _launch(template: dict) -> list[str]:
    main = template["spec"]["containers"][0]
    return [*main.get("command", []), *main.get("args", [])]


def _pod_templates(objs: list[dict]) -> list[dict]:
    out = []
    for o in objs:
        spec = o.get("spec") or {}
        if o["kind"] == "Deployment":
            out.append(spec["template"])
        elif o["kind"] == "LeaderWorkerSet":
            lws = spec["leaderWorkerTemplate"]
            out += [lws["leaderTemplate"], lws["workerTemplate"]]
        elif o["kind"] == "PodCliqueSet":  # Grove puts a clique's labels on its pods
            out += [
                {"metadata": {"labels": c["labels"]}, "spec": c["spec"]["podSpec"]}
                for c in spec["template"]["cliques"]
            ]
    return out


@pytest.mark.parametrize("ns", ["team", "other"])
def test_render_all_lists_the_policy_in_the_graph_namespace(ns):
    obj = copy.deepcopy(TRTLLM)
    obj["metadata"]["namespace"] = ns
    out = render_all(obj, RenderContext(operator_config=ON, detected=["lws"]))
    policies = [o for o in out if o["kind"] == "NetworkPolicy"]
    assert [p["metadata"]["namespace"] for p in policies] == [ns]
