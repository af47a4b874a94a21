"""DGD -> DCDs: naming, backendFramework, env merge, labels, annotations, v1alpha1 equivalence, errors."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from dynamo_operator.api.conversion import convert
from dynamo_operator.render import RenderContext, RenderError, render_all, render_graph
from dynamo_operator.render.hashing import content_hash
from support.graphs import component, dgd, dgd_v1alpha1

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dgd"


def load(name: str) -> dict:
    return yaml.safe_load((FIXTURES / name).read_text())


def main_env(dcd):
    c = next(c for c in dcd["spec"]["podTemplate"]["spec"]["containers"] if c["name"] == "main")
    return c.get("env", [])


def test_one_dcd_per_component_named_dgd_dash_lowercased_component():
    out = render_graph(dgd(component("Frontend", "frontend"), component("VllmDecodeWorker", "decode")))
    assert [d["metadata"]["name"] for d in out] == ["g-frontend", "g-vllmdecodeworker"]
    assert all(
        d["kind"] == "DynamoComponentDeployment" and d["apiVersion"] == "nvidia.com/v1beta1" for d in out
    )
    assert all(d["metadata"]["namespace"] == "ns" for d in out)
    assert [d["spec"]["name"] for d in out] == ["Frontend", "VllmDecodeWorker"]


def test_dcds_carry_no_owner_references_but_a_content_hash():
    for d in render_graph(dgd(component("a"))):
        assert "ownerReferences" not in d["metadata"]
        assert d["metadata"]["annotations"]["nvidia.com/dynamo-spec-hash"] == content_hash(d)


def test_backend_framework_carried_and_detected():
    out = render_graph(dgd(component("a"), backendFramework="sglang"))
    assert out[0]["spec"]["backendFramework"] == "sglang"
    w = component("w")
    w["podTemplate"]["spec"]["containers"][0]["command"] = ["python3", "-m", "dynamo.trtllm"]
    assert render_graph(dgd(w, component("f", "frontend")))[0]["spec"]["backendFramework"] == "trtllm"
    assert "backendFramework" not in render_graph(dgd(component("a")))[0]["spec"]


def test_backend_framework_conflicting_with_worker_command_is_an_error():
    w = component("w")
    w["podTemplate"]["spec"]["containers"][0]["command"] = ["python3", "-m", "dynamo.vllm"]
    with pytest.raises(RenderError, match=r"DynamoGraphDeployment ns/g: spec.backendFramework"):
        render_graph(dgd(w, backendFramework="sglang"))


def test_graph_env_prepended_component_env_wins_once():
    graph_env = [{"name": "A", "value": "graph"}, {"name": "B", "value": "graph"}]
    out = render_graph(
        dgd(
            component("x", env=[{"name": "B", "value": "comp"}, {"name": "C", "value": "$(A)"}]),
            env=graph_env,
        )
    )
    assert main_env(out[0]) == [
        {"name": "A", "value": "graph"},
        {"name": "B", "value": "comp"},
        {"name": "C", "value": "$(A)"},
    ]
    # ...and the rendered Deployment keeps them over the operator defaults, once each
    dep = next(
        o
        for o in render_all(
            dgd(component("x", env=[{"name": "DYN_NAMESPACE", "value": "mine"}]), env=graph_env)
        )
        if o["kind"] == "Deployment"
    )
    env = dep["spec"]["template"]["spec"]["containers"][0]["env"]
    names = [e["name"] for e in env]
    assert len(names) == len(set(names))
    assert {"name": "DYN_NAMESPACE", "value": "mine"} in env and {"name": "A", "value": "graph"} in env


def test_graph_env_creates_main_env_when_component_has_none():
    out = render_graph(dgd(component("x"), env=[{"name": "A", "value": "1"}]))
    assert main_env(out[0]) == [{"name": "A", "value": "1"}]


def test_labels_and_annotations_propagate_component_wins():
    c = component("x")
    c["podTemplate"]["metadata"] = {"labels": {"team": "comp"}, "annotations": {"a": "comp"}}
    g = dgd(c, labels={"team": "graph", "tier": "gold"}, annotations={"a": "graph", "b": "graph"})
    g["metadata"]["annotations"] = {"nvidia.com/enable-metrics": "false", "unrelated": "x"}
    (d,) = render_graph(g)
    labels = d["metadata"]["labels"]
    assert labels["nvidia.com/dynamo-component-type"] == "worker"
    assert labels["nvidia.com/dynamo-component"] == "x"
    assert labels["nvidia.com/dynamo-graph-deployment-name"] == "g"
    assert labels["nvidia.com/dynamo-namespace"] == "ns-g"
    assert labels["tier"] == "gold"
    assert d["metadata"]["annotations"]["b"] == "graph"
    assert "unrelated" not in d["metadata"]["annotations"]
    tmeta = d["spec"]["podTemplate"]["metadata"]
    assert tmeta["labels"] == {"team": "comp", "tier": "gold"}
    assert tmeta["annotations"]["a"] == "comp" and tmeta["annotations"]["b"] == "graph"
    assert tmeta["annotations"]["nvidia.com/enable-metrics"] == "false"
    objs = render_all(g)
    dep = next(o for o in objs if o["kind"] == "Deployment")
    plabels = dep["spec"]["template"]["metadata"]["labels"]
    assert plabels["team"] == "comp" and plabels["tier"] == "gold"
    assert "nvidia.com/metrics-enabled" not in plabels  # enable-metrics: "false"
    assert dep["metadata"]["labels"]["tier"] == "gold"


def test_system_labels_cannot_be_overridden_on_pods():
    c = component("x")
    c["podTemplate"]["metadata"] = {
        "labels": {"nvidia.com/selector": "evil", "nvidia.com/dynamo-component": "y"}
    }
    dep = next(o for o in render_all(dgd(c)) if o["kind"] == "Deployment")
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert labels["nvidia.com/selector"] == "g-x" and labels["nvidia.com/dynamo-component"] == "x"
    assert dep["spec"]["selector"] == {"matchLabels": {"nvidia.com/selector": "g-x"}}


def test_dyn_namespace_global_and_dots():
    out = render_graph(dgd(component("a"), component("b", globalDynamoNamespace=True), name="my.graph"))
    assert out[0]["metadata"]["labels"]["nvidia.com/dynamo-namespace"] == "ns-my-graph"
    assert out[1]["metadata"]["labels"]["nvidia.com/dynamo-namespace"] == "dynamo"
    assert out[0]["metadata"]["name"] == "my-graph-a"


def test_render_all_is_the_graphs_account_then_dcds_then_their_children():
    objs = render_all(load("vllm-agg.yaml"))
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("ServiceAccount", "vllm-agg-k8s-service-discovery"),  # the graph's, before its pods
        ("DynamoComponentDeployment", "vllm-agg-frontend"),
        ("Deployment", "vllm-agg-frontend"),
        ("Service", "vllm-agg-frontend"),
        ("DynamoComponentDeployment", "vllm-agg-vllmdecodeworker"),
        ("Deployment", "vllm-agg-vllmdecodeworker"),
        ("Service", "vllm-agg-vllmdecodeworker"),
    ]
    for o in objs:
        assert "ownerReferences" not in o["metadata"]
        assert o["metadata"]["annotations"]["nvidia.com/dynamo-spec-hash"] == content_hash(o)


def test_rendering_is_deterministic_and_hash_tracks_content():
    a, b = render_all(load("vllm-agg.yaml")), render_all(load("vllm-agg.yaml"))
    assert a == b
    changed = load("vllm-agg.yaml")
    changed["spec"]["components"][1]["replicas"] = 3
    c = render_all(changed)
    h = {
        o["metadata"]["name"] + o["kind"]: o["metadata"]["annotations"]["nvidia.com/dynamo-spec-hash"]
        for o in a
    }
    h2 = {
        o["metadata"]["name"] + o["kind"]: o["metadata"]["annotations"]["nvidia.com/dynamo-spec-hash"]
        for o in c
    }
    diff = {k for k in h if h[k] != h2[k]}
    assert diff == {
        "vllm-agg-vllmdecodeworkerDynamoComponentDeployment",
        "vllm-agg-vllmdecodeworkerDeployment",
    }


@pytest.mark.parametrize("fixture", ["vllm-agg.yaml", "vllm-disagg-planner.yaml"])
def test_v1alpha1_renders_the_same_as_its_v1beta1_conversion(fixture):
    beta = load(fixture)
    alpha = convert(beta, "v1alpha1")
    assert alpha["apiVersion"] == "nvidia.com/v1alpha1"
    assert render_all(alpha) == render_all(convert(alpha, "v1beta1"))


def test_v1alpha1_fixture_renders_like_the_v1beta1_fixture():
    alpha = load("vllm-agg-v1alpha1.yaml")
    assert "services" in alpha["spec"]
    assert render_all(alpha) == render_all(convert(alpha, "v1beta1")) == render_all(load("vllm-agg.yaml"))


def test_v1alpha1_shared_memory_disabled_renders_without_shm():
    alpha = load("vllm-agg-v1alpha1.yaml")
    alpha["spec"]["services"]["VllmDecodeWorker"]["sharedMemory"] = {"disabled": True}
    dep = [o for o in render_all(alpha) if o["kind"] == "Deployment"][1]
    assert "shared-memory" not in [v["name"] for v in dep["spec"]["template"]["spec"].get("volumes", [])]


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda g: g["spec"].update(components=[]), "spec.components"),
        (lambda g: g["spec"]["components"].append(component("A")), r"spec.components\[1\].name"),
        (lambda g: g["spec"]["components"][0].update(type="wrker"), r"spec.components\[0\].type"),
        (
            lambda g: g["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0].pop("image"),
            r"spec.components\[0\].podTemplate.spec.containers",
        ),
        (
            lambda g: g["spec"]["components"].extend(
                [
                    component("e1", "epp", eppConfig={"config": {}}),
                    component("e2", "epp", eppConfig={"config": {}}),
                ]
            ),
            r"spec.components\[2\].type",
        ),
        (
            lambda g: g["spec"]["components"][0].update(sharedMemorySize="lots"),
            r"spec.components\[0\].sharedMemorySize",
        ),
    ],
)
def test_bad_input_names_object_and_field(mutate, path):
    g = dgd(component("a"))
    mutate(g)
    with pytest.raises(RenderError, match=r"DynamoGraphDeployment ns/g: " + path) as err:
        render_all(g)
    assert "fix:" in str(err.value)


def test_unknown_kind_and_version_are_errors():
    with pytest.raises(RenderError, match="kind"):
        render_all({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    with pytest.raises(RenderError, match="apiVersion"):
        render_all({**dgd(component("a")), "apiVersion": "nvidia.com/v2"})


def test_input_not_mutated_and_context_optional():
    g = load("vllm-disagg-planner.yaml")
    before = copy.deepcopy(g)
    render_all(g, RenderContext())
    render_all(g)
    assert g == before


def test_component_type_main_renders_as_the_frontend_upstream_named_so():
    """``componentType: main`` is upstream's old name for the frontend: it gets the frontend's launch,
    port, probes and Service (and keeps its ``main`` label and v1alpha1 spelling, test_render_ingress)."""
    main = {"componentType": "main", "extraPodSpec": {"mainContainer": {"image": "img:1"}}}
    objs = render_all(dgd_v1alpha1({"Main": main}, name="g", namespace="team"))
    dep = next(o for o in objs if o["kind"] == "Deployment")
    (main,) = dep["spec"]["template"]["spec"]["containers"]
    assert main["command"] == ["python3"] and main["args"] == ["-m", "dynamo.frontend"]
    assert main["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert {e["name"]: e.get("value") for e in main["env"]}["DYN_COMPONENT"] == "frontend"
    svc = next(o for o in objs if o["kind"] == "Service" and o["metadata"]["name"] == "g-main")
    assert svc["spec"]["ports"][0]["port"] == 8000
    assert dep["spec"]["template"]["metadata"]["labels"]["nvidia.com/dynamo-component-type"] == "main"
