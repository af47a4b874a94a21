"""Scaling adapters, the worker hash and the restart annotation, as rendered (pure)."""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.api.conversion import convert
from dynamo_operator.render import names, render_graph
from dynamo_operator.render import scaling as sc
from dynamo_operator.render.graph import ANN_RESTART_AT, restart_annotation, with_restart
from dynamo_operator.render.hashing import ANN_SPEC_HASH, worker_hash
from support.graphs import component, dgd


def graph(decode_replicas: int = 2, adapter: bool = True) -> dict:
    extra = {"scalingAdapter": {}} if adapter else {}
    return dgd(
        component("Frontend", "frontend"),
        component("Prefill", "prefill"),
        component("Decode", "decode", replicas=decode_replicas, **extra),
    )


def main_env(dcd_children: list[dict], dcd_name: str) -> dict:
    dep = next(o for o in dcd_children if o["kind"] == "Deployment" and o["metadata"]["name"] == dcd_name)
    main = next(c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == "main")
    return {e["name"]: e.get("value") for e in main.get("env") or []}


# -- adapters ------------------------------------------------------------------------------------------------


def test_one_adapter_per_component_with_scaling_adapter_seeded_with_its_replicas():
    adapters = sc.render_adapters(graph(decode_replicas=3))
    assert [a["metadata"]["name"] for a in adapters] == ["g-decode"]
    (a,) = adapters
    assert a["kind"] == "DynamoGraphDeploymentScalingAdapter" and a["apiVersion"] == "nvidia.com/v1beta1"
    assert a["spec"] == {"replicas": 3, "dgdRef": {"name": "g", "componentName": "Decode"}}
    assert a["metadata"]["labels"] == {
        names.LABEL_DGD_NAME: "g",
        names.LABEL_COMPONENT: "Decode",
        names.LABEL_MANAGED_BY: names.MANAGED_BY,
    }
    assert "ownerReferences" not in a["metadata"]


def test_adapter_defaults_to_one_replica_and_none_without_scaling_adapter():
    g = dgd(component("W", "worker", scalingAdapter={}))
    assert sc.render_adapters(g)[0]["spec"]["replicas"] == 1
    assert sc.render_adapters(graph(adapter=False)) == []


def test_adapter_selector_matches_the_component_pod_labels():
    from dynamo_operator.render import render_component

    g = graph()
    dcd = next(d for d in render_graph(g) if d["metadata"]["name"] == "g-decode")
    dep = next(o for o in render_component(dcd) if o["kind"] == "Deployment")
    pod_labels = dep["spec"]["template"]["metadata"]["labels"]
    selector = sc.adapter_selector("g", "Decode")
    for term in selector.split(","):
        k, v = term.split("=")
        assert pod_labels[k] == v, (k, pod_labels)
    # the other components' pods do not match
    fe = next(d for d in render_graph(g) if d["metadata"]["name"] == "g-frontend")
    fe_labels = next(o for o in render_component(fe) if o["kind"] == "Deployment")["spec"]["template"][
        "metadata"
    ]["labels"]
    assert fe_labels[names.LABEL_COMPONENT] != "Decode"


def test_adapter_converts_to_the_storage_version_with_service_name():
    (a,) = sc.render_adapters(graph())
    wire = convert(a, "v1alpha1")
    assert wire["apiVersion"] == "nvidia.com/v1alpha1"
    assert wire["spec"]["dgdRef"] == {"name": "g", "serviceName": "Decode"}


# -- worker hash ---------------------------------------------------------------------------------------------


def test_worker_hash_ignores_replicas_adapter_order_and_non_workers():
    base = worker_hash(graph())
    assert len(base) == 8 and int(base, 16) >= 0
    assert worker_hash(graph(decode_replicas=7)) == base
    assert worker_hash(graph(adapter=False)) == base
    reordered = graph()
    reordered["spec"]["components"].reverse()
    assert worker_hash(reordered) == base
    fe_changed = graph()
    fe_changed["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["image"] = "other:1"
    assert worker_hash(fe_changed) == base


@pytest.mark.parametrize(
    "change",
    [
        lambda g: g["spec"]["components"][2]["podTemplate"]["spec"]["containers"][0].update(image="new:2"),
        lambda g: g["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0].update(args=["--x"]),
        lambda g: g["spec"].update(env=[{"name": "A", "value": "1"}]),
        lambda g: g["spec"].update(backendFramework="sglang"),
        lambda g: g["spec"]["components"][2].update(sharedMemorySize="1Gi"),
    ],
)
def test_worker_hash_changes_with_what_workers_run(change):
    g = graph()
    change(g)
    assert worker_hash(g) != worker_hash(graph())


def test_worker_dcds_carry_the_hash_and_workers_get_the_namespace_suffix():
    from dynamo_operator.render import render_component

    g = graph()
    h = worker_hash(g)
    dcds = {d["metadata"]["name"]: d for d in render_graph(g)}
    assert dcds["g-decode"]["metadata"]["labels"][names.LABEL_WORKER_HASH] == h
    assert dcds["g-prefill"]["metadata"]["labels"][names.LABEL_WORKER_HASH] == h
    assert names.LABEL_WORKER_HASH not in dcds["g-frontend"]["metadata"]["labels"]
    assert main_env(render_component(dcds["g-decode"]), "g-decode")["DYN_NAMESPACE_WORKER_SUFFIX"] == h
    assert "DYN_NAMESPACE_WORKER_SUFFIX" not in main_env(render_component(dcds["g-frontend"]), "g-frontend")
    # a worker change rewrites every worker DCD (all move to the new namespace together), not the frontend
    changed = copy.deepcopy(g)
    changed["spec"]["components"][2]["podTemplate"]["spec"]["containers"][0]["image"] = "new:2"
    after = {d["metadata"]["name"]: d for d in render_graph(changed)}
    spec_hash = {n: d["metadata"]["annotations"][ANN_SPEC_HASH] for n, d in dcds.items()}
    assert after["g-prefill"]["metadata"]["annotations"][ANN_SPEC_HASH] != spec_hash["g-prefill"]
    assert after["g-frontend"]["metadata"]["annotations"][ANN_SPEC_HASH] == spec_hash["g-frontend"]


# -- restart annotation --------------------------------------------------------------------------------------


def test_with_restart_sets_the_pod_template_annotation_and_rehashes():
    dcd = next(d for d in render_graph(graph()) if d["metadata"]["name"] == "g-frontend")
    before = dcd["metadata"]["annotations"][ANN_SPEC_HASH]
    assert restart_annotation(dcd) is None
    with_restart(dcd, "r1")
    assert dcd["spec"]["podTemplate"]["metadata"]["annotations"][ANN_RESTART_AT] == "r1"
    assert restart_annotation(dcd) == "r1"
    assert dcd["metadata"]["annotations"][ANN_SPEC_HASH] != before
