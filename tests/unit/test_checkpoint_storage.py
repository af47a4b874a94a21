"""The checkpoint storage the operator manages (render/checkpoint_storage.py, issue 32): the namespace's
checkpoint claim created when ``checkpoint.storage.pvc.create`` asks for it, and the cleanup Job that
removes a deleted automatic checkpoint's artifacts with ``checkpoint.cleanupImage``. The writes themselves
run on the real control plane in tests/integration/test_checkpoint_cluster.py."""

from __future__ import annotations

import subprocess

import pytest
from dynamo_operator.api.config import ConfigError, effective, parse_operator_config
from dynamo_operator.render import RenderContext, render_all
from dynamo_operator.render import checkpoint_storage as rcs
from dynamo_operator.render.graph_checkpoint import ANN_AUTO
from dynamo_operator.render.names import FINALIZER
from support import graphs

CREATE = {
    "enabled": True,
    "storage": {
        "pvc": {
            "create": True,
            "size": "200Gi",
            "storageClassName": "fast-rwx",
            "accessMode": "ReadWriteOnce",
        }
    },
}


def section(checkpoint: dict) -> dict:
    """The effective configuration's ``checkpoint`` section (defaults filled in, as the operator reads it)."""
    return effective({"checkpoint": checkpoint})["checkpoint"]


def test_the_claim_is_upstreams_shape():
    claim = rcs.storage_claim("team", section(CREATE))
    assert claim == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "chrek-pvc",
            "namespace": "team",
            "labels": {
                "app.kubernetes.io/name": "dynamo",
                "app.kubernetes.io/component": "checkpoint-storage",
                "app.kubernetes.io/managed-by": "dynamo-operator",
            },
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "volumeMode": "Filesystem",
            "resources": {"requests": {"storage": "200Gi"}},
            "storageClassName": "fast-rwx",
        },
    }
    assert "ownerReferences" not in claim["metadata"]  # never collected with a graph: it holds data


def test_unset_access_mode_and_class_are_upstreams_defaults():
    claim = rcs.storage_claim(
        "team", section({"enabled": True, "storage": {"pvc": {"create": True, "size": "1Ti"}}})
    )
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert "storageClassName" not in claim["spec"]  # the cluster's default StorageClass


def test_no_claim_without_create_or_with_checkpointing_off():
    assert rcs.storage_claim("team", section({"enabled": True})) is None
    assert rcs.storage_claim("team", section({**CREATE, "enabled": False})) is None


def test_render_shows_the_claim_beside_the_checkpoint_users():
    """The DGD, DCD and DynamoCheckpoint controllers create it; render shows it with what uses it."""
    worker = graphs.component("Worker", command=graphs.VLLM, gpus=1)
    worker["experimental"] = {"checkpoint": {"enabled": True, "checkpointRef": "warm"}}
    ctx = RenderContext(operator_config={"checkpoint": CREATE})
    graph = graphs.dgd(graphs.component("Frontend", "frontend"), worker, name="g", namespace="team")
    claims = [o for o in render_all(graph, ctx) if o["kind"] == "PersistentVolumeClaim"]
    assert [c["metadata"]["name"] for c in claims] == ["chrek-pvc"]
    plain = graphs.dgd(graphs.component("Frontend", "frontend"), name="g", namespace="team")
    assert not [o for o in render_all(plain, ctx) if o["kind"] == "PersistentVolumeClaim"]


def test_a_created_automatic_checkpoint_carries_the_finalizer():
    worker = graphs.component("Worker", command=graphs.VLLM, gpus=1)
    worker["experimental"] = {"checkpoint": {"enabled": True}}
    graph = graphs.dgd(worker, name="g", namespace="team", backendFramework="vllm")
    ctx = RenderContext(operator_config={"checkpoint": {"enabled": True}})
    (ckpt,) = [o for o in render_all(graph, ctx) if o["kind"] == "DynamoCheckpoint"]
    assert ckpt["metadata"]["finalizers"] == [FINALIZER]
    assert ckpt["metadata"]["annotations"][ANN_AUTO] == "true"


def ckpt(name: str = "checkpoint-abc") -> dict:
    return {"metadata": {"name": name, "namespace": "team"}}


def test_the_cleanup_job_removes_exactly_the_checkpoints_directory():
    cfg = section({"enabled": True, "cleanupImage": "mirror.example/busybox:1.36"})
    job = rcs.cleanup_job(ckpt(), "0123abcd", cfg)
    assert job["metadata"]["name"] == "checkpoint-cleanup-0123abcd"
    spec = job["spec"]
    assert (spec["backoffLimit"], spec["activeDeadlineSeconds"], spec["ttlSecondsAfterFinished"]) == (
        0,
        300,
        300,
    )
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["volumes"] == [
        {"name": "checkpoint-storage", "persistentVolumeClaim": {"claimName": "chrek-pvc"}}
    ]
    (c,) = pod["containers"]
    assert c["image"] == "mirror.example/busybox:1.36"
    assert c["volumeMounts"] == [{"name": "checkpoint-storage", "mountPath": "/checkpoints"}]
    assert {e["name"]: e["value"] for e in c["env"]} == {
        "CHECKPOINT_BASE_PATH": "/checkpoints",
        "CHECKPOINT_ID": "0123abcd",
    }
    assert rcs.cleanup_job(ckpt(), "x" * 60, cfg) is None  # no Job name fits
    for bad in ("..", "a/b", "UPPER", ""):
        assert rcs.cleanup_job(ckpt(), bad, cfg) is None


def test_the_default_cleanup_image_is_upstreams():
    job = rcs.cleanup_job(ckpt(), "0123abcd", section({"enabled": True}))
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:1.36"


@pytest.mark.parametrize(
    ("checkpoint_id", "removed", "kept"),
    [("0123abcd", ["0123abcd"], ["other", "0123abcd-b"]), ("..", [], ["0123abcd", "other", "0123abcd-b"])],
)
def test_the_cleanup_script_removes_only_its_directory(tmp_path, checkpoint_id, removed, kept):
    """The script run by sh, against a real directory tree: one checkpoint's directory goes, nothing else,
    and a path that is not a plain name is refused (exit 1)."""
    for d in ("0123abcd", "other", "0123abcd-b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "pages.img").write_text("x")
    env = {"CHECKPOINT_BASE_PATH": f"{tmp_path}/", "CHECKPOINT_ID": checkpoint_id, "PATH": "/usr/bin:/bin"}
    r = subprocess.run(["/bin/sh", "-c", rcs.CLEANUP_SCRIPT], env=env, capture_output=True, text=True)
    assert r.returncode == (0 if removed else 1), r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


@pytest.mark.parametrize(
    ("pvc", "path", "says"),
    [
        ({"create": True}, "checkpoint.storage.pvc.size", "is required with create: true"),
        ({"create": True, "size": "0"}, "checkpoint.storage.pvc.size", "not a positive quantity"),
        ({"size": "lots"}, "checkpoint.storage.pvc.size", "not a positive quantity"),
        (
            {"accessMode": "ReadOnlyMany"},
            "checkpoint.storage.pvc.accessMode",
            "use ReadWriteOnce or ReadWriteMany",
        ),
        ({"pvcName": "Chrek_PVC"}, "checkpoint.storage.pvc.pvcName", "not a claim name"),
        ({"basePath": "checkpoints"}, "checkpoint.storage.pvc.basePath", "absolute path"),
    ],
)
def test_a_claim_that_cannot_be_created_is_refused_when_loaded(pvc, path, says):
    with pytest.raises(ConfigError) as err:
        parse_operator_config({"checkpoint": {"enabled": True, "storage": {"pvc": pvc}}})
    ((where, message),) = err.value.errors
    assert where == path and says in message


def test_the_claim_settings_and_the_cleanup_image_are_accepted():
    """Refused at load before (issue 32): upstream's keys now act."""
    cfg = parse_operator_config({"checkpoint": {**CREATE, "cleanupImage": "mirror.example/busybox:1.36"}})
    assert cfg.checkpoint.storage.pvc.create is True
    assert cfg.checkpoint.cleanup_image == "mirror.example/busybox:1.36"
