"""The examples a user starts from preview cleanly with `dynamo-operator render` (no cluster needed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT

# graphs only: demo-values.yaml is Helm values, hpa-*.yaml are autoscalers that target a graph's adapters,
# dgdr-*.yaml and dynamomodel-*.yaml are requests and models (applied in test_dgdr/test_model_cluster)
EXAMPLES = sorted(
    p
    for p in (REPO_ROOT / "examples").glob("*.yaml")
    if p.name != "demo-values.yaml" and not p.name.startswith(("hpa-", "dgdr-", "dynamomodel-"))
)


def test_there_are_examples_of_each_kind_a_user_starts_with():
    names = {p.name for p in EXAMPLES}
    assert {
        "vllm-agg.yaml",
        "vllm-disagg.yaml",
        "sglang-agg-v1alpha1.yaml",
        "vllm-disagg-planner.yaml",
    } <= names


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_render_previews_every_example(example: Path):
    r = subprocess.run(
        [str(REPO_ROOT / ".venv" / "bin" / "dynamo-operator"), "render", "-f", str(example)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(r.stdout) if d]
    assert "DynamoComponentDeployment" in kinds and "Deployment" in kinds and "Service" in kinds
