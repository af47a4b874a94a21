"""``spec.experimental.kvTransferPolicy`` rendered (render/kvtransfer.py): the policy on every worker's pods,
the Downward API file the worker reads its domain from, the annotation the label copier acts on; and the
copier's pure rule (``labels_to_copy``). The copy itself on a control plane: test_topology_cluster.py."""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.render import RenderContext, RenderError, kvtransfer, notices, render_all
from dynamo_operator.render.hashing import worker_hash
from support.graphs import VLLM, component, dgd

ZONE = {"labelKey": "topology.kubernetes.io/zone", "domain": "zone"}


def graph(policy: dict | None, *extra: dict) -> dict:
    comps = [component("Frontend", "frontend"), component("Decode", "decode", command=VLLM, gpus=1), *extra]
    spec = {"experimental": {"kvTransferPolicy": policy}} if policy is not None else {}
    return dgd(*comps, name="g", namespace="team", **spec)


def pod_template(objs: list[dict], name: str) -> dict:
    return next(o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == name)["spec"][
        "template"
    ]


def env(container: dict) -> dict:
    return {e["name"]: e.get("value") for e in container.get("env") or []}


def test_a_label_key_policy_reaches_every_worker_pod_and_no_other():
    """The graph's spec.experimental.kvTransferPolicy with a labelKey: on the decode worker's pods, not the
    frontend's."""
    objs = render_all(graph({**ZONE, "enforcement": "preferred", "preferredWeight": 0.5}))
    tmpl = pod_template(objs, "g-decode")
    assert tmpl["metadata"]["annotations"]["nvidia.com/topology-label-key"] == "topology.kubernetes.io/zone"
    (main,) = tmpl["spec"]["containers"]
    e = env(main)
    assert (e["DYN_KV_TRANSFER_DOMAIN"], e["DYN_KV_TRANSFER_ENFORCEMENT"]) == ("zone", "preferred")
    assert e["DYN_KV_TRANSFER_PREFERRED_WEIGHT"] == "0.5"
    assert (e["DYN_TOPOLOGY_ENABLED"], e["DYN_TOPOLOGY_MOUNT_PATH"]) == ("true", "/etc/dynamo/topology")
    assert {"name": "topology-labels", "mountPath": "/etc/dynamo/topology", "readOnly": True} in main[
        "volumeMounts"
    ]
    (vol,) = [v for v in tmpl["spec"]["volumes"] if v["name"] == "topology-labels"]
    assert vol["downwardAPI"] == {
        "items": [
            {"path": "zone", "fieldRef": {"fieldPath": "metadata.labels['topology.kubernetes.io/zone']"}}
        ]
    }
    front = pod_template(objs, "g-frontend")
    assert "DYN_KV_TRANSFER_DOMAIN" not in env(front["spec"]["containers"][0])
    assert "nvidia.com/topology-label-key" not in (front["metadata"].get("annotations") or {})


def test_a_cluster_topology_policy_on_grove_projects_the_dynamo_owned_label():
    ctx = RenderContext(detected=frozenset({"grove"}))
    objs = render_all(graph({"clusterTopologyName": "gb200", "domain": "rack"}), ctx)
    (pcs,) = [o for o in objs if o["kind"] == "PodCliqueSet"]
    decode = next(c for c in pcs["spec"]["template"]["cliques"] if c["name"] == "decode")
    assert decode["annotations"]["nvidia.com/topology-cluster-topology-name"] == "gb200"
    pod = decode["spec"]["podSpec"]
    (vol,) = [v for v in pod["volumes"] if v["name"] == "topology-labels"]
    item = {"path": "rack", "fieldRef": {"fieldPath": "metadata.labels['nvidia.com/dynamo-topology.rack']"}}
    assert vol["downwardAPI"]["items"] == [item]
    assert env(pod["containers"][0])["DYN_KV_TRANSFER_ENFORCEMENT"] == "required"  # the default


def test_failover_engines_both_read_the_domain():
    worker = component("Worker", "worker", command=VLLM, gpus=1, experimental={"failover": {}})
    objs = render_all(graph(ZONE, worker), RenderContext(detected=frozenset({"dra"})))
    pod = pod_template(objs, "g-worker")["spec"]
    for engine in (c for c in pod["containers"] if c["name"].startswith("engine-")):
        assert any(m["name"] == "topology-labels" for m in engine["volumeMounts"]), engine["name"]
        assert env(engine)["DYN_KV_TRANSFER_DOMAIN"] == "zone"


def test_the_policy_is_part_of_the_worker_revision():
    assert worker_hash(graph(None)) != worker_hash(graph(ZONE))
    changed = graph({**ZONE, "domain": "rack"})
    assert worker_hash(graph(ZONE)) != worker_hash(changed)


@pytest.mark.parametrize(
    ("policy", "ctx", "field"),
    [
        ({"domain": "zone"}, RenderContext(), "spec.experimental.kvTransferPolicy"),
        ({"labelKey": "k"}, RenderContext(), "spec.experimental.kvTransferPolicy.domain"),
        (
            {"clusterTopologyName": "t", "domain": "rack"},
            RenderContext(),
            "spec.experimental.kvTransferPolicy.clusterTopologyName",
        ),
    ],
)
def test_what_admission_refuses_render_refuses_with_the_field(policy, ctx, field):
    with pytest.raises(RenderError) as err:
        render_all(graph(policy), ctx)
    assert err.value.path == field


def test_labels_to_copy_from_a_label_key_or_every_topology_level():
    node = {"topology.kubernetes.io/zone": "us-east-1a", "example.com/rack": "r7"}
    ann = {"nvidia.com/topology-label-key": "topology.kubernetes.io/zone"}
    assert kvtransfer.labels_to_copy(ann, node, []) == ({"topology.kubernetes.io/zone": "us-east-1a"}, [])
    levels = [
        {"domain": "zone", "key": "topology.kubernetes.io/zone"},
        {"domain": "rack", "key": "example.com/rack"},
        {"domain": "host", "key": "kubernetes.io/hostname"},
    ]
    ct = {"nvidia.com/topology-cluster-topology-name": "gb200"}
    assert kvtransfer.labels_to_copy(ct, node, levels) == (
        {"nvidia.com/dynamo-topology.zone": "us-east-1a", "nvidia.com/dynamo-topology.rack": "r7"},
        ["kubernetes.io/hostname"],
    )


def test_what_has_no_effect_is_said_once_by_the_one_mechanism():
    weight = graph({**ZONE, "preferredWeight": 0.3})
    (text,) = notices.warnings(weight)
    assert text.startswith("spec.experimental.kvTransferPolicy.preferredWeight: has no effect")
    lonely = dgd(component("Frontend", "frontend"), name="g", namespace="team")
    lonely["spec"]["experimental"] = {"kvTransferPolicy": copy.deepcopy(ZONE)}
    (text,) = notices.warnings(lonely)
    assert text.startswith("spec.experimental.kvTransferPolicy: has no effect: the graph has no worker")
    assert notices.warnings(graph(ZONE)) == []
