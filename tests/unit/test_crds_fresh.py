"""crds/ is generated from the models, carries every reference marker, and stays small."""

from __future__ import annotations

from pathlib import Path

import yaml
from dynamo_operator.api import crdgen, registry

CRDS = Path(__file__).resolve().parents[2] / "crds"
HELM_RELEASE_LIMIT = 1024 * 1024


def _crd(plural: str) -> dict:
    return yaml.safe_load((CRDS / f"nvidia.com_{plural}.yaml").read_text())


def _schema(plural: str, version: str) -> dict:
    crd = _crd(plural)
    (entry,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    return entry["schema"]["openAPIV3Schema"]


def test_crds_directory_is_up_to_date() -> None:
    assert crdgen.stale_files(CRDS) == [], "crds/ is stale: run `make crds`"
    assert crdgen.main(["--out", str(CRDS), "--check"]) == 0


def test_check_detects_stale_files(tmp_path: Path) -> None:
    assert crdgen.main(["--out", str(tmp_path)]) == 0
    assert crdgen.main(["--out", str(tmp_path), "--check"]) == 0
    victim = next(tmp_path.glob("*.yaml"))
    victim.write_text(victim.read_text() + "# hand edit\n")
    assert crdgen.main(["--out", str(tmp_path), "--check"]) == 1
    (tmp_path / "nvidia.com_leftover.yaml").write_text("{}")
    assert "nvidia.com_leftover.yaml" in crdgen.stale_files(tmp_path)


def test_total_size_is_well_below_the_helm_release_limit() -> None:
    sizes = {p.name: p.stat().st_size for p in CRDS.glob("*.yaml")}
    assert len(sizes) == len(registry.KINDS)
    assert sum(sizes.values()) < HELM_RELEASE_LIMIT // 2, sizes


def test_versions_storage_conversion_and_subresources() -> None:
    for info in registry.KINDS.values():
        spec = _crd(info.plural)["spec"]
        assert spec["group"] == "nvidia.com"
        assert [v["name"] for v in spec["versions"]] == list(info.versions)
        assert [v["name"] for v in spec["versions"] if v["storage"]] == ["v1alpha1"]
        assert all(v["served"] for v in spec["versions"])
        # every kind has a status subresource but DynamoWorkerMetadata (the runtime writes only its spec)
        assert all(("status" in v["subresources"]) == info.status_subresource for v in spec["versions"])
        assert info.status_subresource == (info.kind != "DynamoWorkerMetadata")
        assert spec["names"]["shortNames"] == list(info.short_names)
        if info.multi_version:
            service = spec["conversion"]["webhook"]["clientConfig"]["service"]
            assert spec["conversion"]["strategy"] == "Webhook"
            assert service == {
                "name": "dynamo-operator-webhook-service",
                "namespace": "dynamo-system",
                "path": "/convert",
                "port": 443,
            }
        else:
            assert "conversion" not in spec
    scale = _crd("dynamographdeploymentscalingadapters")["spec"]["versions"][1]["subresources"]["scale"]
    assert scale == {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.selector",
    }


def test_reference_markers_reach_the_schema() -> None:
    beta = _schema("dynamographdeployments", "v1beta1")["properties"]["spec"]["properties"]
    comps = beta["components"]
    assert comps["maxItems"] == 25
    assert comps["x-kubernetes-list-map-keys"] == ["name"]
    rules = " ".join(r["rule"] for r in comps["x-kubernetes-validations"])
    assert "'epp'" in rules and "lowerAscii" in rules
    item = comps["items"]
    assert item["required"] == ["name"]
    assert item["properties"]["name"]["pattern"] == "^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$"
    assert (item["properties"]["name"]["minLength"], item["properties"]["name"]["maxLength"]) == (1, 63)
    assert item["properties"]["replicas"]["minimum"] == 0
    assert item["properties"]["minAvailable"]["minimum"] == 1
    assert item["properties"]["type"]["enum"] == ["frontend", "worker", "prefill", "decode", "planner", "epp"]
    assert item["properties"]["podTemplate"]["x-kubernetes-preserve-unknown-fields"] is True
    assert item["properties"]["sharedMemorySize"]["x-kubernetes-int-or-string"] is True
    assert beta["backendFramework"]["enum"] == ["sglang", "vllm", "trtllm"]
    assert "Each entry" in comps["description"]
    kv = beta["experimental"]["properties"]["kvTransferPolicy"]["properties"]
    assert (kv["preferredWeight"]["minimum"], kv["preferredWeight"]["maximum"]) == (0, 1)
    assert kv["labelKey"]["maxLength"] == 317

    alpha = _schema("dynamographdeployments", "v1alpha1")["properties"]["spec"]["properties"]
    assert alpha["services"]["maxProperties"] == 25
    assert alpha["pvcs"]["maxItems"] == 100
    assert alpha["pvcs"]["items"]["x-kubernetes-validations"]
    svc = alpha["services"]["additionalProperties"]["properties"]
    assert svc["multinode"]["properties"]["nodeCount"]["minimum"] == 2
    gms = svc["gpuMemoryService"]["properties"]["extraClientContainers"]["items"]
    assert (gms["minLength"], gms["maxLength"], gms["pattern"]) == (1, 63, "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    job = svc["checkpoint"]["properties"]["job"]["properties"]["podTemplate"]
    assert job["x-kubernetes-preserve-unknown-fields"] is True

    dgdr = _schema("dynamographdeploymentrequests", "v1alpha1")["properties"]
    assert set(dgdr["spec"]["required"]) == {"model", "backend", "profilingConfig"}
    assert dgdr["status"]["properties"]["generatedDeployment"]["x-kubernetes-embedded-resource"] is True
    dgdsa = _schema("dynamographdeploymentscalingadapters", "v1beta1")["properties"]["spec"]
    assert dgdsa["required"] == ["replicas", "dgdRef"]
    assert dgdsa["properties"]["dgdRef"]["required"] == ["name", "componentName"]


def test_every_schema_node_is_structural() -> None:
    """Every node has a type (or is int-or-string / preserve-unknown): the apiserver rejects others."""

    def walk(node: dict, path: str) -> None:
        assert (
            "type" in node
            or node.get("x-kubernetes-int-or-string")
            or node.get("x-kubernetes-preserve-unknown-fields")
        ), path
        assert "$ref" not in node and "allOf" not in node, path
        for key, child in (node.get("properties") or {}).items():
            walk(child, f"{path}.{key}")
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]")
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{path}{{}}")

    for crd in crdgen.render_crds():
        for version in crd["spec"]["versions"]:
            walk(version["schema"]["openAPIV3Schema"], f"{crd['metadata']['name']}/{version['name']}")
