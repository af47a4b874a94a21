"""The examples a user starts from preview cleanly with `dynamo-operator render` (no cluster needed); the
multinode ones on both pathways (Grove PodCliqueSet, LeaderWorkerSet).

The command runs in this process (click's runner, the same entry point as the installed script): a
process per example would spend most of its time importing the operator."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.cli import main
from support import yamlc

# graphs only: demo-values.yaml is Helm values, hpa-*.yaml are autoscalers that target a graph's adapters,
# dgdr-*.yaml and dynamomodel-*.yaml are requests and models (applied in test_dgdr/test_model_cluster)
EXAMPLES = sorted(
    p
    for p in (REPO_ROOT / "examples").glob("*.yaml")
    if p.name != "demo-values.yaml" and not p.name.startswith(("hpa-", "dgdr-", "dynamomodel-"))
)
MULTINODE = [p for p in EXAMPLES if "multinode:" in p.read_text()]
SINGLE_NODE = [p for p in EXAMPLES if p not in MULTINODE]
# what the platform chart configures (the MPI SSH Secret TRT-LLM's multinode launch mounts)
CONFIG = {
    "apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1",
    "kind": "OperatorConfiguration",
    "mpi": {"sshSecretName": "mpi-run-ssh-secret", "sshSecretNamespace": "dynamo-system"},
}


def _run(example: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["render", "-f", str(example), *args])


def _stdout(example: Path, *args: str) -> str:
    r = _run(example, *args)
    assert r.exit_code == 0, r.stderr
    return r.stdout


def render(example: Path, *args: str) -> list[dict]:
    return [d for d in yamlc.load_all(_stdout(example, *args)) if d]


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("render") / "operator-config.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    return str(path)


def test_there_are_examples_of_each_kind_a_user_starts_with():
    names = {p.name for p in EXAMPLES}
    assert {
        "vllm-agg.yaml",
        "vllm-disagg.yaml",
        "sglang-agg-v1alpha1.yaml",
        "vllm-disagg-planner.yaml",
        "vllm-disagg-multinode.yaml",
        "sglang-multinode.yaml",
        "trtllm-multinode.yaml",
    } <= names


@pytest.mark.parametrize("example", SINGLE_NODE, ids=lambda p: p.stem)
def test_render_previews_every_example(example: Path):
    out = _stdout(example)
    assert "value: n\n" not in out, "kubectl (YAML 1.1) would read an unquoted n as false"
    kinds = [d["kind"] for d in yamlc.load_all(out) if d]
    assert "DynamoComponentDeployment" in kinds and "Deployment" in kinds and "Service" in kinds


def _multinode_components(example: Path) -> dict[str, int]:
    doc = yaml.safe_load(example.read_text())
    return {
        c["name"]: c["multinode"]["nodeCount"]
        for c in doc["spec"]["components"]
        if (c.get("multinode") or {}).get("nodeCount", 1) > 1
    }


@pytest.mark.parametrize("example", MULTINODE, ids=lambda p: p.stem)
def test_multinode_example_on_grove_is_one_podcliqueset(example: Path, config: str):
    out = render(example, "--config", config, "--detected", "grove")
    assert [d["kind"] for d in out].count("PodCliqueSet") == 1
    assert not {"DynamoComponentDeployment", "Deployment", "LeaderWorkerSet"} & {d["kind"] for d in out}
    template = next(d for d in out if d["kind"] == "PodCliqueSet")["spec"]["template"]
    groups = {g["name"]: g for g in template["podCliqueScalingGroups"]}
    cliques = {c["name"]: c for c in template["cliques"]}
    for name, nodes in _multinode_components(example).items():
        lower = name.lower()
        assert groups[lower]["cliqueNames"] == [f"{lower}-ldr", f"{lower}-wkr"]
        assert cliques[f"{lower}-ldr"]["spec"]["replicas"] == 1
        assert cliques[f"{lower}-wkr"]["spec"]["replicas"] == nodes - 1
    assert template["cliqueStartupType"] == "CliqueStartupTypeExplicit"


@pytest.mark.parametrize("example", MULTINODE, ids=lambda p: p.stem)
def test_multinode_example_on_lws_is_one_leaderworkerset_per_multinode_component(example: Path, config: str):
    out = render(example, "--config", config, "--detected", "lws")
    lws = {
        d["metadata"]["labels"]["nvidia.com/dynamo-component"]: d
        for d in out
        if d["kind"] == "LeaderWorkerSet"
    }
    assert {k: v["spec"]["leaderWorkerTemplate"]["size"] for k, v in lws.items()} == _multinode_components(
        example
    )
    headless = {
        d["metadata"]["name"] for d in out if d["kind"] == "Service" and d["spec"].get("clusterIP") == "None"
    }
    assert {d["metadata"]["name"] for d in lws.values()} <= headless


@pytest.mark.parametrize("example", MULTINODE, ids=lambda p: p.stem)
def test_multinode_example_without_an_orchestrator_is_a_clear_error(example: Path, config: str):
    r = _run(example, "--config", config)
    assert r.exit_code != 0
    assert "spec.multinode.nodeCount" in r.stderr and "orchestrators.lws.enabled" in r.stderr
