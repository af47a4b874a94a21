"""Third-party CRDs: the vendored ones unchanged from the pinned upstream version (VENDORED.yaml checksums),
with their license, and the objects the operator renders fit their schemas field for field (the apiserver
would silently prune an unknown field, and the operator would then rewrite the object forever)."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.render import RenderContext, render_all

VENDORED = [
    REPO_ROOT / "charts/platform/components/grove",
    REPO_ROOT / "tests/fixtures/crds/lws",
    REPO_ROOT / "tests/fixtures/crds/gaie",  # InferencePool (EPP)
    REPO_ROOT / "tests/fixtures/crds/istio-destinationrule",  # DestinationRule (EPP under Istio)
]
# KAI's Go module is not served here, so its Queue CRD is our own minimal definition (not vendored)
KAI = REPO_ROOT / "charts/platform/components/kai-scheduler"
MULTINODE_EXAMPLES = ["vllm-disagg-multinode", "sglang-multinode", "trtllm-multinode"]
MPI = {"mpi": {"sshSecretName": "mpi-run-ssh-secret", "sshSecretNamespace": "dynamo-system"}}


# libyaml: the vendored CRDs are megabytes of YAML (seconds each with the pure-Python loader)
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def load(path: Path) -> dict:
    return yaml.load(path.read_text(), Loader=FAST_LOADER)


def crd_dir(root: Path) -> Path:
    return root / "crds" if (root / "crds").is_dir() else root


def test_kai_queue_crd_declares_every_field_the_chart_sets():
    crd = yaml.safe_load((KAI / "crds" / "scheduling.run.ai_queues.yaml").read_text())
    assert (crd["spec"]["group"], crd["spec"]["names"]["kind"], crd["spec"]["scope"]) == (
        "scheduling.run.ai",
        "Queue",
        "Cluster",
    )
    (v2,) = crd["spec"]["versions"]
    assert v2["name"] == "v2" and v2["served"] and v2["storage"]
    queue = {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "dynamo"},
        "spec": {
            "parentQueue": "default-parent",
            "resources": {
                r: {"quota": -1, "limit": -1, "overQuotaWeight": 1} for r in ("cpu", "gpu", "memory")
            },
        },
    }
    assert unknown_fields(queue, v2["schema"]["openAPIV3Schema"]) == []


@pytest.mark.parametrize("root", VENDORED, ids=lambda p: p.name)
def test_vendored_files_match_their_pinned_checksums_and_carry_a_license(root: Path):
    pin = yaml.safe_load((root / "VENDORED.yaml").read_text())
    d = crd_dir(root)
    present = {p.name for p in d.glob("*.yaml") if p.name != "VENDORED.yaml"}
    assert present == set(pin["files"]), "every vendored file is pinned, and only those"
    for name, digest in pin["files"].items():
        assert hashlib.sha256((d / name).read_bytes()).hexdigest() == digest, f"{d / name} was edited"
        assert load(d / name)["kind"] == "CustomResourceDefinition"
    assert "Apache License" in (d / "LICENSE").read_text()


def test_grove_chart_runs_the_release_its_crds_come_from():
    root = REPO_ROOT / "charts/platform/components/grove"
    pin = yaml.safe_load((root / "VENDORED.yaml").read_text())
    chart = yaml.safe_load((root / "Chart.yaml").read_text())
    assert chart["appVersion"] == pin["version"]


@functools.cache
def _schemas() -> dict[tuple[str, str], dict]:
    out = {}
    for root in [*VENDORED, KAI]:
        for p in crd_dir(root).glob("*.yaml"):
            doc = load(p)
            if doc.get("kind") != "CustomResourceDefinition":
                continue
            for v in doc["spec"]["versions"]:
                out[(f"{doc['spec']['group']}/{v['name']}", doc["spec"]["names"]["kind"])] = v["schema"][
                    "openAPIV3Schema"
                ]
    return out


def unknown_fields(obj, schema: dict, path: str = "") -> list[str]:
    """Paths in ``obj`` the structural schema does not declare (what the apiserver would prune)."""
    open_ended = schema.get("x-kubernetes-preserve-unknown-fields") or schema.get(
        "x-kubernetes-embedded-resource"
    )
    if open_ended and "properties" not in schema:
        return []
    out = []
    if isinstance(obj, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for k, v in obj.items():
            if props is not None and k in props:
                out += unknown_fields(v, props[k], f"{path}.{k}")
            elif isinstance(extra, dict):
                out += unknown_fields(v, extra, f"{path}.{k}")
            elif props is not None and path and k not in props:
                out.append(f"{path}.{k}")
            elif props is not None and not path and k not in ("apiVersion", "kind", "metadata"):
                out.append(k)
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(obj):
            out += unknown_fields(v, schema["items"], f"{path}[{i}]")
    return out


@pytest.mark.parametrize("example", MULTINODE_EXAMPLES)
@pytest.mark.parametrize("pathway", ["grove", "lws"])
def test_rendered_objects_fit_the_vendored_schemas(example: str, pathway: str):
    schemas = _schemas()
    doc = yaml.safe_load((REPO_ROOT / "examples" / f"{example}.yaml").read_text())
    doc["metadata"]["namespace"] = "ns"
    ctx = RenderContext(operator_config=MPI, detected=frozenset({pathway, "kaiScheduler"}))
    checked = 0
    for obj in render_all(doc, ctx):
        schema = schemas.get((obj["apiVersion"], obj["kind"]))
        if schema is None:
            continue
        checked += 1
        assert unknown_fields(obj, schema) == [], f"{obj['kind']} {obj['metadata']['name']}"
    assert checked >= 1


def test_the_schema_walk_finds_a_field_grove_does_not_have():
    pcs = {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {},
        "spec": {
            "replicas": 1,
            "template": {
                "cliques": [
                    {
                        "name": "a",
                        "spec": {
                            "roleName": "a",
                            "replicas": 1,
                            "podSpec": {"containers": [{"name": "main", "image": "i", "bogus": 1}]},
                            "startAfter": ["b"],
                        },
                    }
                ]
            },
        },
    }
    assert unknown_fields(pcs, _schemas()[("grove.io/v1alpha1", "PodCliqueSet")]) == [
        ".spec.template.cliques[0].spec.podSpec.containers[0].bogus",
        ".spec.template.cliques[0].spec.startAfter",
    ]


def test_epp_and_gpu_memory_service_objects_fit_the_vendored_schemas():
    """The EPP's InferencePool and DestinationRule, and a GPU memory service failover worker on Grove (init
    sidecar with restartPolicy, resource claims), are what the vendored schemas declare."""
    from support.graphs import epp_graph, gms_graph  # the renderer tests' graphs

    schemas = _schemas()
    ctx = RenderContext(
        operator_config={"serviceMesh": {"provider": "istio"}},
        detected=frozenset({"grove", "dra", "inferencePool", "istio"}),
    )
    kinds = set()
    for graph in (epp_graph(), gms_graph(failover=True)):
        for obj in render_all(graph, ctx):
            schema = schemas.get((obj["apiVersion"], obj["kind"]))
            if schema is not None:
                kinds.add(obj["kind"])
                assert unknown_fields(obj, schema) == [], f"{obj['kind']} {obj['metadata']['name']}"
    assert kinds == {"InferencePool", "DestinationRule", "PodCliqueSet"}
