"""The operator image built with no engine: reproducible, small, described by operator/Dockerfile, and what it
says it is when it runs as a Pod on the real node."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from dynamo_localcluster.cluster import REPO_ROOT
from realnode_helpers import REPRODUCED, SLOW, config_digest, reproduced
from support.imagebuild import image_build
from support.poll import wait_for

MAX_COMPRESSED = 80 * 1000 * 1000


def _meta(image) -> dict:
    return json.loads((image.archive.parent / "image.json").read_text())


def test_two_builds_of_one_commit_give_one_manifest_digest(built_images, fresh_operator_build):
    cache_dir = built_images["operator"].archive.parent.resolve()
    if fresh_operator_build is None:
        record = reproduced(cache_dir)
        assert record, "no second build was started, and no record says these inputs were rebuilt"
        pytest.skip(
            f"these inputs ({cache_dir.name}) were rebuilt from scratch, same digest, on {record['at']}"
        )
    assert fresh_operator_build.wait(timeout=1200) == 0, fresh_operator_build.log_path.read_text()[-3000:]
    last_line = fresh_operator_build.log_path.read_text().strip().splitlines()[-1]
    cached = _meta(built_images["operator"])
    assert last_line == cached["digest"], (last_line, cached)
    assert json.loads((fresh_operator_build.out_dir / "image.json").read_text())["digest"] == cached["digest"]
    stamp = {"digest": cached["digest"], "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    (cache_dir / REPRODUCED).write_text(json.dumps(stamp) + "\n")


def test_the_image_is_small_and_configured_as_the_dockerfile_says(built_images):
    meta = _meta(built_images["operator"])
    assert meta["compressedBytes"] <= MAX_COMPRESSED, meta
    build = image_build()
    layout = built_images["operator"].archive.parent / "oci"
    manifest = json.loads(build.blob(layout, meta["digest"]).read_text())
    config = json.loads(build.blob(layout, manifest["config"]["digest"]).read_text())["config"]
    want = build.dockerfile_config(REPO_ROOT / "operator" / "Dockerfile")
    assert config["User"] == want.user == "65532:65532"
    assert config["Entrypoint"] == want.entrypoint == ["dynamo-operator"]
    assert config["Cmd"] == want.cmd
    assert config["WorkingDir"] == want.workdir
    assert dict(e.split("=", 1) for e in config["Env"]) == want.env
    assert sorted(config["ExposedPorts"]) == sorted(want.ports)
    assert config["Labels"] == want.labels


def test_the_image_runs_as_65532_with_only_the_operator_and_the_hooks(node, built_images):
    from dynamo_localcluster.realnode import layout
    from kubernetes import client

    name = f"image-check-{uuid.uuid4().hex[:6]}"
    script = (
        "id -u; dynamo-operator --version; dynamo-hooks --help | head -1; "
        "for m in dynamo_plugin dynamo_localcluster; do "
        'python3 -c "import $m" 2>/dev/null || echo no $m; done'
    )
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": layout.NODE_SELECTOR,
            "tolerations": [layout.TOLERATION],
            "containers": [
                {
                    "name": "c",
                    "image": built_images["operator"].ref,
                    "imagePullPolicy": "Never",
                    "command": ["/bin/sh", "-c", script],
                }
            ],
        },
    }
    with node.api_client() as api:
        core = client.CoreV1Api(api)
        core.create_namespaced_pod("default", pod)
        try:
            # bounded for a loaded CI machine (it once took more than 120 s); a pod that fails ends the wait
            phase = wait_for(
                lambda: _finished(core.read_namespaced_pod(name, "default")),
                300,
                lambda: f"the image check pod to finish\n{_pod_story(core, name)}",
                **SLOW,
            )
            out = core.read_namespaced_pod_log(name, "default")  # the API server asks the kubelet
            assert phase == "Succeeded", f"{out}\n{_pod_story(core, name)}"
            status = core.read_namespaced_pod(name, "default").status.container_statuses[0]
        finally:
            core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
    lines = out.strip().splitlines()
    assert lines[0] == "65532", out
    assert lines[1] == "dynamo-operator, version 0.1.0", out
    assert lines[2].startswith("Usage: dynamo-hooks"), out
    assert lines[3:] == ["no dynamo_plugin", "no dynamo_localcluster"], out
    # the pod ran exactly the image that was built (the CRI reports its config digest)
    assert status.image_id == config_digest(built_images["operator"]), status.image_id


def _finished(pod) -> str | None:
    return pod.status.phase if pod.status.phase in ("Succeeded", "Failed") else None


def _pod_story(core, name: str) -> str:
    """What a failed or slow check pod went through: its phase, its container's state and its Events."""
    pod = core.read_namespaced_pod(name, "default")
    events = core.list_namespaced_event("default", field_selector=f"involvedObject.name={name}").items
    lines = [f"phase {pod.status.phase}; containers {pod.status.container_statuses}"]
    lines += [f"{e.last_timestamp} {e.reason}: {e.message}" for e in events]
    return "\n".join(lines)
