"""``dynamo-operator render -f``: the CLI on sample graphs from the API reference."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner
from dynamo_operator.render.cli import render_command
from support import yamlc

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dgd"


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(render_command, list(args), input=input)


def docs(result) -> list[dict]:
    assert result.exit_code == 0, result.output
    return list(yamlc.load_all(result.output))


def deployment(objs, name):
    return next(o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == name)


def test_render_frontend_and_vllm_decode_worker():
    objs = docs(run("-f", str(FIXTURES / "vllm-agg.yaml")))
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("ServiceAccount", "vllm-agg-k8s-service-discovery"),  # the graph's, before its pods
        ("DynamoComponentDeployment", "vllm-agg-frontend"),
        ("Deployment", "vllm-agg-frontend"),
        ("Service", "vllm-agg-frontend"),
        ("DynamoComponentDeployment", "vllm-agg-vllmdecodeworker"),
        ("Deployment", "vllm-agg-vllmdecodeworker"),
        ("Service", "vllm-agg-vllmdecodeworker"),
    ]

    fe = deployment(objs, "vllm-agg-frontend")
    assert fe["metadata"]["namespace"] == "dynamo"
    pod = fe["spec"]["template"]["spec"]
    (main,) = pod["containers"]
    assert main["name"] == "main"
    assert main["image"] == "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"
    assert main["command"] == ["python3"] and main["args"] == ["-m", "dynamo.frontend"]
    assert main["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env["DYN_NAMESPACE"] == "dynamo-vllm-agg"
    assert env["DYNAMO_PORT"] == "8000" and env["HF_HOME"] == "/models/hf"
    assert main["livenessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert pod["securityContext"] == {"fsGroup": 1000}
    assert pod["terminationGracePeriodSeconds"] == 60 and pod["restartPolicy"] == "Always"

    wk = deployment(objs, "vllm-agg-vllmdecodeworker")
    assert wk["spec"]["replicas"] == 2
    labels = wk["spec"]["template"]["metadata"]["labels"]
    assert labels["nvidia.com/dynamo-component-type"] == "decode"
    assert labels["nvidia.com/dynamo-component"] == "VllmDecodeWorker"
    assert labels["nvidia.com/dynamo-graph-deployment-name"] == "vllm-agg"
    assert labels["nvidia.com/dynamo-namespace"] == "dynamo-vllm-agg"
    (main,) = wk["spec"]["template"]["spec"]["containers"]
    assert main["command"] == ["python3", "-m", "dynamo.vllm"]
    assert main["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert [p["name"] for p in main["ports"]] == ["system", "nixl"]
    assert main["startupProbe"]["failureThreshold"] == 720
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env["DYN_SYSTEM_PORT"] == "9090" and env["DYN_COMPONENT"] == "decode"
    vols = wk["spec"]["template"]["spec"]["volumes"]
    assert vols == [{"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}]
    dcd = next(
        o for o in objs if o["kind"] == "DynamoComponentDeployment" and "decode" in o["metadata"]["name"]
    )
    assert dcd["spec"]["backendFramework"] == "vllm"


def test_v1alpha1_file_prints_the_same():
    beta = run("-f", str(FIXTURES / "vllm-agg.yaml"))
    alpha = run("-f", str(FIXTURES / "vllm-agg-v1alpha1.yaml"))
    assert alpha.exit_code == 0, alpha.output
    assert alpha.output == beta.output


def test_stream_of_documents_config_and_namespace(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1",
                "kind": "OperatorConfiguration",
                "infrastructure": {"natsAddress": "nats://nats.dynamo:4222"},
                "rbac": {"plannerClusterRoleName": "dynamo-planner"},
            }
        )
    )
    planner = yaml.safe_load((FIXTURES / "vllm-disagg-planner.yaml").read_text())
    del planner["metadata"]["namespace"]
    stream = (FIXTURES / "vllm-agg.yaml").read_text() + "\n---\n" + yaml.safe_dump(planner)
    objs = docs(run("-f", "-", "--config", str(cfg), "--namespace", "team-a", input=stream))
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objs}
    assert ("ServiceAccount", "planner-serviceaccount") in kinds
    assert ("RoleBinding", "planner-serviceaccount") in kinds
    assert ("Service", "vllm-disagg-vllmprefillworker-model") in kinds
    assert {o["metadata"]["namespace"] for o in objs if "disagg" in o["metadata"]["name"]} == {"team-a"}
    for o in objs:
        if o["kind"] == "Deployment":
            env = {e["name"]: e.get("value") for e in o["spec"]["template"]["spec"]["containers"][0]["env"]}
            assert env["NATS_SERVER"] == "nats://nats.dynamo:4222"
    prefill = deployment(objs, "vllm-disagg-vllmprefillworker")
    pod = prefill["spec"]["template"]["spec"]
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in pod["volumes"]
    assert {"name": "VLLM_CACHE_ROOT", "value": "/root/.cache/vllm"} in pod["containers"][0]["env"]
    decode = deployment(objs, "vllm-disagg-vllmdecodeworker")
    assert [c["name"] for c in decode["spec"]["template"]["spec"]["containers"]] == ["main", "log-shipper"]


def test_pull_secrets_file(tmp_path):
    import base64
    import json

    auth = base64.b64encode(json.dumps({"auths": {"nvcr.io": {"auth": "eDp5"}}}).encode()).decode()
    secrets = tmp_path / "secrets.yaml"
    secrets.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "kubernetes.io/dockerconfigjson",
                "metadata": {"name": "ngc", "namespace": "dynamo"},
                "data": {".dockerconfigjson": auth},
            }
        )
    )
    objs = docs(run("-f", str(FIXTURES / "vllm-agg.yaml"), "--pull-secrets", str(secrets)))
    assert deployment(objs, "vllm-agg-frontend")["spec"]["template"]["spec"]["imagePullSecrets"] == [
        {"name": "ngc"}
    ]


def test_bad_input_exits_non_zero_naming_object_and_field():
    bad = """
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {name: broken, namespace: ns}
spec:
  components:
    - name: Worker
      type: worker
      podTemplate: {spec: {containers: [{name: main}]}}
"""
    result = run("-f", "-", input=bad)
    assert result.exit_code != 0
    assert "DynamoGraphDeployment ns/broken" in result.output
    assert "spec.components[0].podTemplate.spec.containers" in result.output
    assert "fix:" in result.output


def test_bad_field_type_exits_non_zero():
    bad = (FIXTURES / "vllm-agg.yaml").read_text().replace("replicas: 2", "replicas: -2")
    result = run("-f", "-", input=bad)
    assert result.exit_code != 0
    assert "DynamoGraphDeployment dynamo/vllm-agg: spec.components[1].replicas" in result.output


def test_not_yaml_and_missing_file():
    result = run("-f", "-", input="a: [b\n")
    assert result.exit_code != 0 and "not valid YAML" in result.output
    assert run("-f", "/nonexistent.yaml").exit_code != 0


def test_render_shows_ingress_virtual_service_and_claims(tmp_path):
    """A v1alpha1 graph's ingress and ``pvcs`` with ``create: true`` appear in the preview; the
    VirtualService only with ``--detected istio`` (as on a cluster serving Istio's API)."""
    graph = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "llm"},
        "spec": {
            "pvcs": [
                {
                    "name": "models",
                    "create": True,
                    "storageClass": "s",
                    "size": "9Gi",
                    "volumeAccessMode": "ReadWriteOnce",
                }
            ],
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "extraPodSpec": {"mainContainer": {"image": "img"}},
                    "ingress": {"enabled": True, "host": "api"},
                },
            },
        },
    }
    src = tmp_path / "g.yaml"
    src.write_text(yaml.safe_dump(graph))
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump({"ingress": {"virtualServiceGateway": "gw", "hostSuffix": "example.com"}})
    )
    kinds = [(o["kind"], o["metadata"]["name"]) for o in docs(run("-f", str(src), "--config", str(config)))]
    assert ("Ingress", "llm-frontend") in kinds
    assert ("PersistentVolumeClaim", "models") in kinds
    assert not any(k == "VirtualService" for k, _ in kinds)
    graph["spec"]["services"]["Frontend"]["ingress"]["useVirtualService"] = True
    src.write_text(yaml.safe_dump(graph))
    objs = docs(run("-f", str(src), "--config", str(config), "--detected", "istio"))
    (vs,) = [o for o in objs if o["kind"] == "VirtualService"]
    assert vs["spec"]["hosts"] == ["api.example.com"] and vs["spec"]["gateways"] == ["gw"]
    assert not any(o["kind"] == "Ingress" for o in objs)
