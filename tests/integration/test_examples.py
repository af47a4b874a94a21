"""Every graph in examples/ is one a Dynamo user would write: it applies unchanged (v1beta1 and v1alpha1)
through kubectl, and a running `dynamo-operator` brings each single-node one to `successful` on the local
cluster. The multinode examples cannot become ready without a Grove or LWS controller (kwok runs neither):
test_multinode_cluster.py applies them on both pathways and checks their status says why."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from support import examples
from support.poll import wait_for
from support.processes import operator_process

pytestmark = pytest.mark.cluster

# graphs only: demo-values.yaml is Helm values, hpa-*.yaml are autoscalers that target a graph's adapters,
# dgdr-*.yaml and dynamomodel-*.yaml are requests and models (applied in test_dgdr/test_model_cluster);
# mocker-*.yaml select the real node, where the real-node tier runs them (tests/realnode/test_graph.py)
ALL_EXAMPLES = sorted(
    p
    for p in (REPO_ROOT / "examples").glob("*.yaml")
    if p.name != "demo-values.yaml" and not p.name.startswith(("hpa-", "dgdr-", "dynamomodel-", "mocker-"))
)
EXAMPLES = [p for p in ALL_EXAMPLES if "multinode:" not in p.read_text()]
# Grove off explicitly: left to auto-detection, the pathway would follow whatever grove.io CRDs another
# module left on the shared cluster
CONFIG = {
    "apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1",
    "kind": "OperatorConfiguration",
    "orchestrators": {"grove": {"enabled": False}},
}


def test_every_example_is_covered_here_or_by_the_multinode_tests():
    assert {p.stem for p in ALL_EXAMPLES} == {p.stem for p in EXAMPLES} | set(examples.MULTINODE)


@pytest.fixture(scope="module")
def operator(kube_cluster, dynamo_crds, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("examples")
    config = tmp / "operator-config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    with operator_process(
        kube_cluster,
        tmp / "operator.log",
        "--no-leader-elect",
        "--no-webhooks",  # conversion is served by the dynamo_crds fixture; admission has its own tests
        "--config",
        str(config),
        metrics=False,
        command=[str(REPO_ROOT / ".venv" / "bin" / "dynamo-operator")],
    ) as proc:
        yield proc.log


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_example_applies_and_becomes_successful(example: Path, kube_cluster, operator):
    env = kube_cluster.env
    ns = f"ex-{uuid.uuid4().hex[:6]}"
    subprocess.run(["kubectl", "create", "namespace", ns], env=env, check=True, capture_output=True)
    try:
        r = subprocess.run(
            ["kubectl", "apply", "-n", ns, "-f", str(example)], env=env, capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr
        name = yaml.safe_load(example.read_text())["metadata"]["name"]
        last: dict = {}

        def successful() -> dict:
            out = subprocess.run(
                ["kubectl", "get", "dgd", name, "-n", ns, "-o", "json"],
                env=env,
                capture_output=True,
                text=True,
            )
            if out.returncode == 0:
                last.update(status=json.loads(out.stdout).get("status") or {})
            status = last.get("status") or {}
            return status if status.get("state") == "successful" else {}

        status = wait_for(
            successful,
            90,
            lambda: f"{example.name} successful: {last}\n{operator.read_text()[-2000:]}",
            interval=0.5,
        )
        ready = next(c for c in status["conditions"] if c["type"] == "Ready")
        assert ready["status"] == "True", ready
        doc = yaml.safe_load(example.read_text())
        wanted = doc["spec"].get("components") or [{"name": k} for k in doc["spec"].get("services", {})]
        assert set(status.get("components") or {}) == {c["name"] for c in wanted}
    finally:
        subprocess.run(["kubectl", "delete", "namespace", ns, "--wait=false"], env=env, capture_output=True)
