"""The generated graph from the profiler's output and the request (render/dgdr_output.py): overrides.dgd in
both schemas (render/dgd_override.py), the model cache, the planner, the ConfigMaps, the names."""

from __future__ import annotations

import copy

import pytest
import yaml
from dynamo_operator.api.conversion import convert
from dynamo_operator.render import dgd_override as ov
from dynamo_operator.render import dgdr_output as do
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

GRAPH = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "vllm-disagg", "labels": {"profiled": "yes"}},
    "spec": {
        "components": [
            {
                "name": "Frontend",
                "type": "frontend",
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": "rt:1"}]}},
            },
            {
                "name": "decode",
                "type": "decode",
                "replicas": 1,
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": "rt:1",
                                "args": ["--model", "Qwen/Qwen3-0.6B"],
                                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                            }
                        ]
                    }
                },
            },
            {"name": "Planner", "type": "planner"},
        ]
    },
}


def v1beta1_override(**spec) -> dict:
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "spec": spec}


def main_of(dgd: dict, name: str) -> dict:
    comp = next(c for c in dgd["spec"]["components"] if c["name"] == name)
    return next(c for c in comp["podTemplate"]["spec"]["containers"] if c["name"] == "main")


def test_v1beta1_override_merges_structurally():
    override = v1beta1_override(
        components=[
            {
                "name": "decode",
                "replicas": 3,
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "args": ["--tp", "2"],
                                "env": [{"name": "B", "value": "9"}, {"name": "C", "value": "3"}],
                            },
                            {"name": "sidecar", "image": "s:1"},
                        ]
                    }
                },
            }
        ]
    )
    override["metadata"] = {"name": "served", "labels": {"team": "a"}, "annotations": {"note": "n"}}
    out = ov.apply_override(GRAPH, override)
    decode = next(c for c in out["spec"]["components"] if c["name"] == "decode")
    assert decode["replicas"] == 3
    main = main_of(out, "decode")
    assert main["args"] == ["--tp", "2"]  # an atomic list is replaced
    assert main["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "9"},
        {"name": "C", "value": "3"},
    ]
    assert main["image"] == "rt:1"  # untouched fields stay
    assert [c["name"] for c in decode["podTemplate"]["spec"]["containers"]] == ["main", "sidecar"]
    assert out["metadata"] == {
        "name": "served",
        "labels": {"profiled": "yes", "team": "a"},
        "annotations": {"note": "n"},
    }
    assert GRAPH["metadata"]["name"] == "vllm-disagg"  # the input is not modified


def test_null_deletes_and_unknown_components_are_refused():
    out = ov.apply_override(GRAPH, v1beta1_override(components=[{"name": "decode", "replicas": None}]))
    assert "replicas" not in next(c for c in out["spec"]["components"] if c["name"] == "decode")
    with pytest.raises(ov.OverrideError, match="components Prefill that the generated graph does not have"):
        ov.apply_override(GRAPH, v1beta1_override(components=[{"name": "Prefill", "replicas": 2}]))


def test_v1alpha1_override_keeps_the_legacy_worker_args_append_once():
    override = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "spec": {
            "services": {
                "decode": {
                    "sharedMemory": {"size": "80Gi"},
                    "extraPodSpec": {
                        "mainContainer": {"args": ["--mem-fraction-static", "0.75"], "workingDir": "/w"}
                    },
                },
                "Frontend": {"envs": [{"name": "X", "value": "1"}]},
            }
        },
    }
    out = ov.apply_override(GRAPH, override)
    main = main_of(out, "decode")
    assert main["args"] == ["--model", "Qwen/Qwen3-0.6B", "--mem-fraction-static", "0.75"]
    assert main["workingDir"] == "/w"
    assert next(c for c in out["spec"]["components"] if c["name"] == "decode")["sharedMemorySize"] == "80Gi"
    assert {"name": "X", "value": "1"} in main_of(out, "Frontend")["env"]
    assert (
        ov.apply_override(out, override) == out
    )  # a second merge (here after the profiler's) changes nothing
    with pytest.raises(ov.OverrideError, match="services prefill"):
        ov.apply_override(GRAPH, {**override, "spec": {"services": {"prefill": {"replicas": 1}}}})
    gone = ov.apply_override(GRAPH, {**override, "spec": {"services": {"Planner": None}}})
    assert [c["name"] for c in gone["spec"]["components"]] == ["Frontend", "decode"]


component_patch = st.fixed_dictionaries(
    {"name": st.sampled_from(["Frontend", "decode", "Planner"])},
    optional={
        "replicas": st.one_of(st.none(), st.integers(0, 4)),
        "podTemplate": st.fixed_dictionaries(
            {},
            optional={
                "metadata": st.fixed_dictionaries(
                    {}, optional={"labels": st.dictionaries(st.sampled_from("ab"), st.just("v"))}
                ),
                "spec": st.fixed_dictionaries(
                    {},
                    optional={
                        "containers": st.lists(
                            st.fixed_dictionaries(
                                {"name": st.sampled_from(["main", "side"])},
                                optional={
                                    "args": st.lists(st.sampled_from(["--a", "1"]), max_size=3),
                                    "env": st.lists(
                                        st.builds(
                                            lambda n, v: {"name": n, "value": v},
                                            st.sampled_from("ABC"),
                                            st.sampled_from("xy"),
                                        ),
                                        max_size=3,
                                        unique_by=lambda e: e["name"],
                                    ),
                                },
                            ),
                            max_size=2,
                            unique_by=lambda c: c["name"],
                        ),
                        "nodeSelector": st.one_of(st.none(), st.just({"pool": "gpu"})),
                    },
                ),
            },
        ),
    },
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(component_patch, max_size=3, unique_by=lambda c: c["name"]))
def test_applying_an_override_twice_is_applying_it_once(components):
    override = v1beta1_override(components=components)
    once = ov.apply_override(GRAPH, override)
    assert ov.apply_override(once, override) == once


@pytest.mark.parametrize(
    ("override", "path", "fragment"),
    [
        ({**v1beta1_override(), "kind": "Deployment"}, "kind", "must be DynamoGraphDeployment"),
        (
            {**v1beta1_override(), "apiVersion": "nvidia.com/v2"},
            "apiVersion",
            "must be nvidia.com/v1alpha1 or",
        ),
        (
            {**v1beta1_override(), "metadata": {"namespace": "x"}},
            "metadata.namespace",
            "lives in the request's",
        ),
        (
            v1beta1_override(components=[{"name": "decode", "bogus": 1}]),
            "spec.components.0.bogus",
            "Extra inputs",
        ),
        (v1beta1_override(components=[{"replicas": 1}]), "spec.components", "name of a generated component"),
        ({**v1beta1_override(), "status": {}}, "status", "remove it"),
    ],
)
def test_what_an_override_cannot_say_is_named(override, path, fragment):
    errors = dict(ov.override_errors(override))
    assert path in errors and fragment in errors[path], errors


# ---------------------------------------------------------------- the generated graph


def request(**spec) -> dict:
    beta = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "req", "namespace": "team"},
        "spec": {"model": "Qwen/Qwen3-0.6B", **spec},
    }
    return convert(beta, "v1alpha1")


def made(req: dict, *docs) -> do.Generated:
    from dynamo_operator.render.dgdr_job import request_spec

    out = {"data": {"final_config.yaml": yaml.safe_dump_all(list(docs or [GRAPH]))}}
    return do.generated(req, request_spec(req), out)


def test_the_generated_graph_carries_the_override_and_is_stored_as_v1alpha1():
    override = v1beta1_override(components=[{"name": "decode", "replicas": 4}])
    override["metadata"] = {"name": "served", "labels": {"team": "a"}}
    g = made(request(overrides={"dgd": override}))
    assert g.dgd["apiVersion"] == "nvidia.com/v1alpha1"
    assert g.dgd["spec"]["services"]["decode"]["replicas"] == 4
    assert g.dgd["metadata"]["name"] == "served" and g.dgd["metadata"]["namespace"] == "team"
    assert g.dgd["metadata"]["labels"] == {
        "profiled": "yes",
        "team": "a",
        "dgdr.nvidia.com/name": "req",
        "dgdr.nvidia.com/namespace": "team",
    }
    assert made(request()).dgd["metadata"]["name"] == "req"  # no override: the request's name


def test_an_override_the_graph_cannot_take_fails_the_output():
    override = v1beta1_override(components=[{"name": "Prefill", "replicas": 4}])
    with pytest.raises(do.ProfilingOutputError, match="Prefill"):
        made(request(overrides={"dgd": override}))


def test_the_model_cache_is_mounted_in_the_frontend_and_the_workers():
    g = convert(made(request(modelCache={"pvcName": "weights", "pvcMountPath": "/models"})).dgd, "v1beta1")
    for name in ("Frontend", "decode"):
        comp = next(c for c in g["spec"]["components"] if c["name"] == name)
        assert {"name": "weights", "persistentVolumeClaim": {"claimName": "weights"}} in comp["podTemplate"][
            "spec"
        ]["volumes"]
        assert {"name": "weights", "mountPath": "/models"} in main_of(g, name)["volumeMounts"]
    planner = next(c for c in g["spec"]["components"] if c["name"] == "Planner")
    assert "podTemplate" not in planner


def test_a_graph_the_profiler_already_mounted_is_left_as_it_is():
    alpha = convert(GRAPH, "v1alpha1")  # the profiler writes v1alpha1: spec.pvcs and volumeMounts
    for svc in ("Frontend", "decode"):
        alpha["spec"]["services"][svc]["volumeMounts"] = [{"name": "weights", "mountPoint": "/models"}]
    alpha["spec"]["pvcs"] = [{"name": "weights", "create": False}]
    g = made(request(modelCache={"pvcName": "weights", "pvcMountPath": "/models"}), alpha)
    assert g.dgd["spec"]["services"]["decode"]["volumeMounts"] == [
        {"name": "weights", "mountPoint": "/models"}
    ]
    assert g.dgd["spec"]["pvcs"] == [{"name": "weights", "create": False}]


def test_the_planner_feature_needs_a_planner_in_the_graph():
    without = copy.deepcopy(GRAPH)
    without["spec"]["components"] = without["spec"]["components"][:2]
    with pytest.raises(do.ProfilingOutputError, match=r"spec\.features\.planner is set"):
        made(request(features={"planner": {}}), without)
    assert (
        made(request(features={"planner": {}})).dgd["spec"]["services"]["Planner"]["componentType"]
        == "planner"
    )


def test_configmaps_go_where_the_graph_goes():
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "planner-config-1a2b", "namespace": "else"},
        "data": {"k": "v"},
    }
    req = request(features={"planner": {}})
    req["spec"]["deploymentOverrides"] = {"namespace": "serving"}
    g = made(req, cm, GRAPH)
    assert g.dgd["metadata"]["namespace"] == "serving"
    assert g.config_maps == (
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "planner-config-1a2b",
                "namespace": "serving",
                "labels": {
                    "app.kubernetes.io/managed-by": "dynamo-operator",
                    "dgdr.nvidia.com/name": "req",
                    "dgdr.nvidia.com/namespace": "team",
                },
            },
            "data": {"k": "v"},
        },
    )


def test_deployment_overrides_name_label_and_annotate_the_generated_graph():
    """v1alpha1 ``deploymentOverrides``: ``name`` names the graph, ``labels`` and ``annotations`` merge
    over the profiler's (the request's own labels always stay), ``workersImage`` runs its workers."""
    req = request()
    req["spec"]["deploymentOverrides"] = {
        "name": "served",
        "labels": {"team": "a", "profiled": "overridden"},
        "annotations": {"example.com/owner": "platform"},
        "workersImage": "w:2",
    }
    md = made(req).dgd["metadata"]
    assert md["name"] == "served" and md["namespace"] == "team"
    assert md["labels"]["team"] == "a" and md["labels"]["profiled"] == "overridden"
    assert md["labels"]["dgdr.nvidia.com/name"] == "req"
    assert md["annotations"] == {"example.com/owner": "platform"}
    plain = made(request()).dgd["metadata"]
    assert plain["name"] == "req" and "annotations" not in plain
