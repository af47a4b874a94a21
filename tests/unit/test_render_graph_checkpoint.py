"""A graph component's ``checkpoint``: the DynamoCheckpoint the graph creates, restore, WaitForCheckpoint,
and the running components it holds (``render/graph_checkpoint.py``, ``render/restore.py``)."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest
import yaml
from click.testing import CliRunner
from dynamo_operator.render import RenderContext, RenderError, names, render_all, render_graph_parts
from dynamo_operator.render import graph_checkpoint as rgc
from dynamo_operator.render.checkpoint_ids import (
    ANN_CHECKPOINT_ID,
    LABEL_CHECKPOINT_ID,
    checkpoint_id_of,
    dgd_checkpoint_id,
    identity_hash,
)
from dynamo_operator.render.cli import render_command
from dynamo_operator.render.hashing import component_revision
from dynamo_operator.webhooks.validation import validate
from support import yamlc

CONFIG = {"checkpoint": {"enabled": True}}
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"


def ctx(checkpoints=None, detected=(), **config) -> RenderContext:
    return RenderContext(
        operator_config={**CONFIG, **config}, checkpoints=checkpoints or {}, detected=frozenset(detected)
    )


def graph(checkpoint: dict | None = None, replicas: int = 2, uid: str = "u-1", **worker) -> dict:
    main = {
        "name": "main",
        "image": IMAGE,
        "command": ["python3", "-m", "dynamo.vllm"],
        "args": ["--model", "Qwen/Qwen3-0.6B", "--tensor-parallel-size", "2"],
        "resources": {"limits": {"nvidia.com/gpu": "2"}},
    }
    w = {
        "name": "Worker",
        "type": "worker",
        "replicas": replicas,
        "podTemplate": {"spec": {"containers": [main]}},
    }
    if checkpoint is not None:
        w["experimental"] = {"checkpoint": checkpoint}
    w.update(worker)
    fe = {
        "name": "Frontend",
        "type": "frontend",
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
    }
    return {
        "apiVersion": names.V1BETA1,
        "kind": names.DGD_KIND,
        "metadata": {"name": "g", "namespace": "ns", "uid": uid},
        "spec": {"components": [fe, w]},
    }


def worker_dcd(parts) -> dict:
    children = parts if isinstance(parts, list) else parts.children
    return next(c for c in children if c["metadata"]["name"] == "g-worker")


def env_of(container: dict) -> dict:
    return {e["name"]: e.get("value") for e in container.get("env") or []}


def test_auto_checkpoint_is_dgd_scoped_named_labelled_and_runs_the_components_own_pod():
    g = graph({"enabled": True})
    parts = render_graph_parts(g, ctx())
    (obj,) = parts.checkpoint_objects
    revision = component_revision(g, g["spec"]["components"][1])
    cid = dgd_checkpoint_id("ns", "g", "u-1", "Worker", revision)
    doc = json.dumps(
        {
            "namespace": "ns",
            "dgdName": "g",
            "dgdUID": "u-1",
            "componentName": "Worker",
            "workerHash": revision,
        },
        separators=(",", ":"),
    )
    assert cid == hashlib.sha256(doc.encode()).hexdigest()[:32]  # upstream's DGD-scoped ID
    md = obj["metadata"]
    assert (obj["apiVersion"], obj["kind"], md["name"], md["namespace"]) == (
        "nvidia.com/v1alpha1", "DynamoCheckpoint", f"checkpoint-{cid}", "ns",
    )  # fmt: skip
    assert md["labels"] == {
        LABEL_CHECKPOINT_ID: cid,
        names.LABEL_DGD_NAME: "g",
        names.LABEL_COMPONENT: "Worker",
        names.LABEL_MANAGED_BY: names.MANAGED_BY,
    }
    assert md["annotations"][rgc.ANN_AUTO] == "true"
    assert md["annotations"][rgc.ANN_DELETION_POLICY] == "Delete"
    assert "ownerReferences" not in md  # the controller owns it (or not) per deletionPolicy
    assert checkpoint_id_of(obj) == cid
    spec = obj["spec"]
    assert spec["identity"] == {
        "model": "Qwen/Qwen3-0.6B",
        "backendFramework": "vllm",
        "tensorParallelSize": 2,
        "pipelineParallelSize": 1,
    }
    job = spec["job"]
    assert (job["targetContainerName"], job["activeDeadlineSeconds"], job["sharedMemory"]) == (
        "main", 3600, {"size": "8Gi"},
    )  # fmt: skip
    tmpl = job["podTemplateSpec"]
    assert names.LABEL_SELECTOR not in tmpl["metadata"]["labels"]  # the Service never routes to it
    assert tmpl["metadata"]["labels"][names.LABEL_COMPONENT] == "Worker"
    assert "restartPolicy" not in tmpl["spec"]
    main = tmpl["spec"]["containers"][0]
    e = env_of(main)
    assert e["DYN_CHECKPOINT_HASH"] == cid and e["DYN_CHECKPOINT_PATH"] == "/checkpoints"
    assert "SKIP_WAIT_FOR_CHECKPOINT" not in e  # a capture pod does not look for a checkpoint
    assert main["image"] == IMAGE and main["args"][:2] == ["--model", "Qwen/Qwen3-0.6B"]
    assert {"name": "checkpoint-storage", "mountPath": "/checkpoints"} in main["volumeMounts"]
    assert {"name": "checkpoint-storage", "persistentVolumeClaim": {"claimName": "chrek-pvc"}} in tmpl[
        "spec"
    ]["volumes"]
    assert obj["metadata"]["annotations"][names.ANN_SPEC_HASH]
    # what DynamoCheckpoint admission requires of it (identity, the Job's pod and target container)
    assert validate("DynamoCheckpoint", "v1alpha1", obj).errors == []


def test_the_dcd_restores_from_the_graphs_checkpoint():
    g = graph({"enabled": True, "identity": {"model": "x", "backendFramework": "vllm"}, "job": {}})
    parts = render_graph_parts(g, ctx())
    plan = parts.checkpoints["Worker"]
    dcd = worker_dcd(parts)
    assert dcd["spec"]["experimental"]["checkpoint"] == {"enabled": True, "checkpointRef": plan.name}
    assert dcd["metadata"]["annotations"][ANN_CHECKPOINT_ID] == plan.checkpoint_id
    assert dcd["spec"]["replicas"] == 2  # Immediate (default): starts at once
    pods = [
        o for o in render_all(g, ctx()) if o["kind"] == "Deployment" and o["metadata"]["name"] == "g-worker"
    ]
    e = env_of(pods[0]["spec"]["template"]["spec"]["containers"][0])
    assert e["DYN_CHECKPOINT_HASH"] == plan.checkpoint_id and e["SKIP_WAIT_FOR_CHECKPOINT"] == "true"
    assert plan.status() == {
        "checkpointName": plan.name,
        "checkpointID": plan.checkpoint_id,
        "identityHash": plan.checkpoint_id,
        "ready": False,
    }
    assert "Frontend" not in parts.checkpoints


@pytest.mark.parametrize(
    ("change", "new_id"),
    [
        (lambda w: w["podTemplate"]["spec"]["containers"][0].update(image="other:1"), True),
        (lambda w: w["experimental"]["checkpoint"].update(targetContainerName="main"), True),
        (lambda w: w.update(replicas=7), False),
        (lambda w: w["experimental"]["checkpoint"].update(startupPolicy="WaitForCheckpoint"), False),
        (lambda w: w["experimental"]["checkpoint"].update(deletionPolicy="Retain"), False),
    ],
)
def test_what_the_component_runs_names_its_checkpoint(change, new_id):
    g = graph({"enabled": True})
    before = render_graph_parts(g, ctx()).checkpoints["Worker"].checkpoint_id
    changed = copy.deepcopy(g)
    change(changed["spec"]["components"][1])
    after = render_graph_parts(changed, ctx()).checkpoints["Worker"].checkpoint_id
    assert (after != before) is new_id
    other_graph = copy.deepcopy(g)
    other_graph["metadata"]["uid"] = "u-2"  # the same name re-created: never reuses the old capture
    assert render_graph_parts(other_graph, ctx()).checkpoints["Worker"].checkpoint_id != before


def test_job_pod_template_and_target_container_are_merged_over_the_rendered_pod():
    saver = {"name": "saver", "image": "saver:1"}
    cp = {
        "enabled": True,
        "deletionPolicy": "Retain",
        "targetContainerName": "saver",
        "job": {
            "podTemplate": {
                "metadata": {"labels": {"team": "a"}},
                "spec": {
                    "containers": [{"name": "main", "env": [{"name": "EXTRA", "value": "1"}]}, saver],
                    "nodeSelector": {"pool": "ckpt"},
                },
            }
        },
    }
    g = graph(cp, sharedMemorySize="16Gi")
    (obj,) = render_graph_parts(g, ctx()).checkpoint_objects
    tmpl = obj["spec"]["job"]["podTemplateSpec"]
    assert tmpl["metadata"]["labels"]["team"] == "a"
    assert tmpl["spec"]["nodeSelector"] == {"pool": "ckpt"}
    main, side = tmpl["spec"]["containers"]
    assert env_of(main)["EXTRA"] == "1" and main["image"] == IMAGE and side == saver
    assert obj["spec"]["job"]["sharedMemory"] == {"size": "16Gi"}
    assert obj["spec"]["job"]["targetContainerName"] == "saver"  # the container the Job snapshots
    assert obj["metadata"]["annotations"][rgc.ANN_DELETION_POLICY] == "Retain"
    assert render_graph_parts(g, ctx()).checkpoints["Worker"].retain


def test_wait_for_checkpoint_holds_replicas_at_zero_until_ready():
    g = graph({"enabled": True, "startupPolicy": "WaitForCheckpoint"}, replicas=3)
    parts = render_graph_parts(g, ctx())
    plan = parts.checkpoints["Worker"]
    assert worker_dcd(parts)["spec"]["replicas"] == 0
    assert plan.waiting == (
        f"waiting for DynamoCheckpoint ns/{plan.name} to be Ready (not created yet; startupPolicy "
        "WaitForCheckpoint)"
    )
    creating = {**plan.desired, "status": {"phase": "Creating"}}
    assert worker_dcd(render_graph_parts(g, ctx({plan.name: creating})))["spec"]["replicas"] == 0
    ready = {**plan.desired, "status": {"phase": "Ready", "checkpointID": plan.checkpoint_id}}
    released = render_graph_parts(g, ctx({plan.name: ready}))
    assert worker_dcd(released)["spec"]["replicas"] == 3
    assert released.checkpoints["Worker"].waiting is None
    assert released.checkpoints["Worker"].status()["ready"] is True


def test_wait_for_checkpoint_on_grove_holds_the_clique():
    g = graph({"enabled": True, "startupPolicy": "WaitForCheckpoint"}, replicas=3)
    parts = render_graph_parts(g, ctx(detected=("grove",)))
    (pcs,) = [o for o in parts.children if o["kind"] == "PodCliqueSet"]
    worker = next(c for c in pcs["spec"]["template"]["cliques"] if c["name"] == "worker")
    assert worker["spec"]["replicas"] == 0
    e = env_of(worker["spec"]["podSpec"]["containers"][0])
    assert e["DYN_CHECKPOINT_HASH"] == parts.checkpoints["Worker"].checkpoint_id
    assert len(parts.checkpoint_objects) == 1


def test_checkpoint_ref_restores_an_existing_checkpoint_and_creates_none():
    existing = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "warm", "namespace": "ns"},
        "spec": {"identity": {"model": "m", "backendFramework": "vllm"}},
        "status": {"phase": "Ready"},
    }
    g = graph({"enabled": True, "checkpointRef": "warm", "startupPolicy": "WaitForCheckpoint"})
    parts = render_graph_parts(g, ctx({"warm": existing}))
    assert parts.checkpoint_objects == []
    plan = parts.checkpoints["Worker"]
    assert (plan.name, plan.auto, plan.checkpoint_id) == (
        "warm",
        False,
        identity_hash(existing["spec"]["identity"]),
    )
    dcd = worker_dcd(parts)
    assert (
        dcd["spec"]["replicas"] == 2
        and dcd["metadata"]["annotations"][ANN_CHECKPOINT_ID] == plan.checkpoint_id
    )
    missing = render_graph_parts(g, ctx())
    assert missing.checkpoints["Worker"].checkpoint_id is None
    assert worker_dcd(missing)["spec"]["replicas"] == 0
    assert ANN_CHECKPOINT_ID not in worker_dcd(missing)["metadata"]["annotations"]


def test_render_all_lists_the_checkpoint_first_and_refuses_what_cannot_act():
    g = graph({"enabled": True})
    out = render_all(g, ctx())
    assert out[0]["kind"] == "DynamoCheckpoint"
    with pytest.raises(
        RenderError, match=r"spec.components\[1\].experimental.checkpoint.enabled: checkpointing is disabled"
    ):
        render_all(g, RenderContext())
    bad_template = graph({"enabled": True, "job": {"podTemplate": {"spec": {"containers": "main"}}}})
    with pytest.raises(RenderError, match=r"checkpoint.job.podTemplate.spec.containers: "):
        render_all(bad_template, ctx())
    unknown = graph({"enabled": True})
    unknown["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["command"] = ["/run.sh"]
    with pytest.raises(RenderError, match=r"an automatic checkpoint needs the backend"):
        render_all(unknown, ctx())


def _live_dcd(desired: dict, replicas: int) -> dict:
    live = copy.deepcopy(desired)
    live["spec"]["replicas"] = replicas
    live["metadata"]["annotations"][names.ANN_SPEC_HASH] = "old"
    return live


def test_a_running_component_keeps_its_revision_while_a_new_checkpoint_is_captured():
    g = graph({"enabled": True, "startupPolicy": "WaitForCheckpoint"}, replicas=2)
    first = render_graph_parts(g, ctx())
    live = {"g-worker": _live_dcd(worker_dcd(first), 2)}
    desired = list(first.children)
    assert rgc.hold_running_dcds(first.checkpoints, desired, live) == {"Worker"}
    assert worker_dcd(desired)["metadata"]["annotations"][names.ANN_SPEC_HASH] == "old"
    assert worker_dcd(desired)["spec"]["replicas"] == 2
    # nothing runs yet (the first start): held at zero instead
    desired = list(first.children)
    assert (
        rgc.hold_running_dcds(first.checkpoints, desired, {"g-worker": _live_dcd(worker_dcd(first), 0)})
        == set()
    )
    assert worker_dcd(desired)["spec"]["replicas"] == 0


def test_a_running_clique_keeps_its_revision_while_a_new_checkpoint_is_captured():
    g = graph({"enabled": True, "startupPolicy": "WaitForCheckpoint"}, replicas=2)
    parts = render_graph_parts(g, ctx(detected=("grove",)))
    (pcs,) = [o for o in parts.children if o["kind"] == "PodCliqueSet"]
    live = copy.deepcopy(pcs)
    for c in live["spec"]["template"]["cliques"]:
        c["spec"]["replicas"] = 2
        c["spec"]["podSpec"]["containers"][0]["image"] = "old:1"
    before = pcs["metadata"]["annotations"][names.ANN_SPEC_HASH]
    assert rgc.hold_running_cliques(parts.checkpoints, pcs, live) == {"Worker"}
    worker = next(c for c in pcs["spec"]["template"]["cliques"] if c["name"] == "worker")
    frontend = next(c for c in pcs["spec"]["template"]["cliques"] if c["name"] == "frontend")
    assert worker["spec"]["podSpec"]["containers"][0]["image"] == "old:1"
    assert frontend["spec"]["podSpec"]["containers"][0]["image"] == IMAGE  # only the waiting one is held
    assert pcs["metadata"]["annotations"][names.ANN_SPEC_HASH] != before


def test_render_cli_shows_the_checkpoint_and_reads_existing_ones(tmp_path):
    g = graph({"enabled": True, "startupPolicy": "WaitForCheckpoint"}, replicas=2)
    del g["metadata"]["uid"]
    (tmp_path / "g.yaml").write_text(yaml.safe_dump(g))
    (tmp_path / "cfg.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1",
                "kind": "OperatorConfiguration",
                **CONFIG,
            }
        )
    )
    args = ["-f", str(tmp_path / "g.yaml"), "--config", str(tmp_path / "cfg.yaml")]
    out = CliRunner().invoke(render_command, args)
    assert out.exit_code == 0, out.output
    docs = list(yamlc.load_all(out.output))
    ckpt = docs[0]
    assert ckpt["kind"] == "DynamoCheckpoint" and ckpt["metadata"]["name"].startswith("checkpoint-")
    dep = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "g-worker")
    assert dep["spec"]["replicas"] == 0
    ckpt["status"] = {"phase": "Ready"}
    (tmp_path / "ck.yaml").write_text(yaml.safe_dump(ckpt))
    out = CliRunner().invoke(render_command, [*args, "--checkpoints", str(tmp_path / "ck.yaml")])
    assert out.exit_code == 0, out.output
    dep = next(
        d
        for d in yamlc.load_all(out.output)
        if d["kind"] == "Deployment" and d["metadata"]["name"] == "g-worker"
    )
    assert dep["spec"]["replicas"] == 2
