"""DCD -> children (Deployment, Service, ServiceAccount, model Service, EPP ConfigMap); pull secrets."""

from __future__ import annotations

import base64
import json

import pytest
import yaml
from dynamo_operator.render import RenderContext, RenderError, build_index, render_all, render_component
from dynamo_operator.render.hashing import content_hash
from dynamo_operator.render.pullsecrets import image_host, normalize_registry

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"


def dcd(ctype="worker", name="g-c", annotations=None, sidecars=(), **spec):
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "labels": {"nvidia.com/dynamo-graph-deployment-name": "g"},
            **({"annotations": annotations} if annotations else {}),
        },
        "spec": {
            "name": "C",
            "type": ctype,
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}, *sidecars]}},
            **spec,
        },
    }


def by_kind(out, kind):
    return [o for o in out if o["kind"] == kind]


def workload_of(out):
    """The component's Deployment (the graph's discovery account comes first in the list)."""
    return next(o for o in out if o["kind"] in ("Deployment", "LeaderWorkerSet"))


def test_children_of_a_worker():
    out = render_component(dcd(replicas=3))
    assert [(o["kind"], o["metadata"]["name"]) for o in out] == [
        # the graph's Kubernetes-discovery account, shared by its components (render/discovery.py)
        # (its RoleBinding only when the chart configured the discovery ClusterRole)
        ("ServiceAccount", "g-k8s-service-discovery"),
        ("Deployment", "g-c"),
        ("Service", "g-c"),
    ]
    dep = out[1]
    assert dep["apiVersion"] == "apps/v1"
    assert dep["spec"]["replicas"] == 3
    assert dep["spec"]["selector"] == {"matchLabels": {"nvidia.com/selector": "g-c"}}
    assert dep["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
    }
    labels = dep["spec"]["template"]["metadata"]["labels"]
    assert labels["nvidia.com/selector"] == "g-c"
    assert labels["nvidia.com/dynamo-component-type"] == "worker"
    assert labels["nvidia.com/dynamo-component"] == "C"
    assert labels["nvidia.com/dynamo-graph-deployment-name"] == "g"
    assert labels["nvidia.com/dynamo-namespace"] == "ns-g"
    svc = out[2]
    assert svc["spec"]["selector"] == {"nvidia.com/selector": "g-c"}
    assert svc["spec"]["ports"] == [
        {"name": "system", "port": 9090, "targetPort": "system", "protocol": "TCP"}
    ]
    for o in out:
        assert o["metadata"]["namespace"] == "ns"
        assert "ownerReferences" not in o["metadata"]
        assert o["metadata"]["annotations"]["nvidia.com/dynamo-spec-hash"] == content_hash(o)
    for o in out[3:]:  # the component's own children (the discovery account is the graph's)
        assert o["metadata"]["labels"]["nvidia.com/dynamo-component"] == "C"


def test_default_replicas_is_one_and_zero_is_kept():
    assert workload_of(render_component(dcd()))["spec"]["replicas"] == 1
    assert workload_of(render_component(dcd(replicas=0)))["spec"]["replicas"] == 0


def test_deployment_strategy_annotations():
    d = dcd(annotations={"nvidia.com/deployment-strategy": "Recreate"})
    assert workload_of(render_component(d))["spec"]["strategy"] == {"type": "Recreate"}
    d = dcd(
        annotations={
            "nvidia.com/deployment-rolling-update-max-surge": "0",
            "nvidia.com/deployment-rolling-update-max-unavailable": "50%",
        }
    )
    assert workload_of(render_component(d))["spec"]["strategy"]["rollingUpdate"] == {
        "maxSurge": 0,
        "maxUnavailable": "50%",
    }


@pytest.mark.parametrize(
    ("ctype", "port"),
    [
        ("frontend", {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}),
        ("planner", {"name": "metrics", "port": 9085, "targetPort": "metrics", "protocol": "TCP"}),
        (
            "epp",
            {"name": "grpc", "port": 9002, "targetPort": 9002, "protocol": "TCP", "appProtocol": "http2"},
        ),
    ],
)
def test_service_ports_per_type(ctype, port):
    extra = {"eppConfig": {"config": {}}} if ctype == "epp" else {}
    (svc,) = [o for o in by_kind(render_component(dcd(ctype, **extra)), "Service")]
    assert svc["spec"]["ports"] == [port]


def test_frontend_default_command_only_without_user_command():
    c = workload_of(render_component(dcd("frontend")))["spec"]["template"]["spec"]["containers"][0]
    assert (c["command"], c["args"]) == (["python3"], ["-m", "dynamo.frontend"])
    d = dcd("frontend")
    d["spec"]["podTemplate"]["spec"]["containers"][0]["args"] = ["--router-mode", "kv"]
    c = workload_of(render_component(d))["spec"]["template"]["spec"]["containers"][0]
    assert "command" not in c and c["args"] == ["--router-mode", "kv"]


def test_planner_service_account_and_role_binding():
    out = render_component(dcd("planner"))
    (_discovery, sa) = by_kind(out, "ServiceAccount")
    assert sa["metadata"] == {**sa["metadata"], "name": "planner-serviceaccount", "namespace": "ns"}
    assert by_kind(out, "RoleBinding") == []  # no ClusterRole configured: nothing to bind
    ctx = RenderContext(operator_config={"rbac": {"plannerClusterRoleName": "dynamo-planner"}})
    (rb,) = by_kind(render_component(dcd("planner"), ctx), "RoleBinding")
    assert rb["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "dynamo-planner",
    }
    assert rb["subjects"] == [{"kind": "ServiceAccount", "name": "planner-serviceaccount", "namespace": "ns"}]


def test_epp_role_binding_names_the_configured_cluster_role():
    """``rbac.eppClusterRoleName``: the EPP's ServiceAccount is bound to it (nothing without it)."""
    epp = dcd("epp", eppConfig={"config": {}})
    assert by_kind(render_component(epp), "RoleBinding") == []
    ctx = RenderContext(operator_config={"rbac": {"eppClusterRoleName": "dynamo-epp"}})
    (rb,) = by_kind(render_component(epp, ctx), "RoleBinding")
    assert rb["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "dynamo-epp",
    }
    assert rb["subjects"] == [{"kind": "ServiceAccount", "name": "epp-serviceaccount", "namespace": "ns"}]


def test_epp_configmap_from_config_and_mount():
    config = {
        "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
        "kind": "EndpointPickerConfig",
        "plugins": [{"type": "single-profile-handler"}],
    }
    out = render_component(dcd("epp", eppConfig={"config": config}))
    (cm,) = by_kind(out, "ConfigMap")
    assert cm["metadata"]["name"] == "g-c-epp-config"
    assert yaml.safe_load(cm["data"]["epp-config.yaml"]) == config
    assert cm["metadata"]["annotations"]["nvidia.com/dynamo-spec-hash"] == content_hash(cm)
    spec = by_kind(out, "Deployment")[0]["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "epp-serviceaccount"
    assert {"name": "epp-config", "configMap": {"name": "g-c-epp-config"}} in spec["volumes"]
    main = spec["containers"][0]
    assert {"name": "epp-config", "mountPath": "/etc/epp", "readOnly": True} in main["volumeMounts"]
    assert main["args"][-2:] == ["-config-file", "/etc/epp/epp-config.yaml"]
    assert main["livenessProbe"]["grpc"]["port"] == 9003


def test_epp_config_map_ref_uses_users_configmap():
    out = render_component(dcd("epp", eppConfig={"configMapRef": {"name": "mine", "key": "c.yaml"}}))
    assert not by_kind(out, "ConfigMap")
    spec = by_kind(out, "Deployment")[0]["spec"]["template"]["spec"]
    assert {"name": "epp-config", "configMap": {"name": "mine"}} in spec["volumes"]
    assert spec["containers"][0]["args"][-1] == "/etc/epp/c.yaml"


def test_epp_without_config_is_an_error():
    with pytest.raises(RenderError, match=r"DynamoComponentDeployment ns/g-c: spec.eppConfig"):
        render_component(dcd("epp"))


def test_model_ref_headless_service():
    out = render_component(dcd(modelRef={"name": "Qwen/Qwen3-0.6B", "revision": "main"}))
    svcs = by_kind(out, "Service")
    assert [s["metadata"]["name"] for s in svcs] == ["g-c", "g-c-model"]
    headless = svcs[1]
    assert headless["spec"]["clusterIP"] == "None"
    h = headless["metadata"]["labels"]["nvidia.com/dynamo-base-model-hash"]
    assert headless["spec"]["selector"] == {
        "nvidia.com/selector": "g-c",
        "nvidia.com/dynamo-base-model-hash": h,
    }
    assert headless["metadata"]["annotations"]["nvidia.com/dynamo-base-model"] == "Qwen/Qwen3-0.6B"
    pod_meta = by_kind(out, "Deployment")[0]["spec"]["template"]["metadata"]
    assert pod_meta["labels"]["nvidia.com/dynamo-base-model-hash"] == h


def test_standalone_dcd_without_graph_label():
    d = dcd()
    d["metadata"]["labels"] = {}
    env = {
        e["name"]: e.get("value")
        for e in workload_of(render_component(d))["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["DYN_NAMESPACE"] == "ns-g-c"
    assert env["DYN_PARENT_DGD_K8S_NAME"] == "g-c"


def test_v1alpha1_dcd_renders_like_its_conversion():
    from dynamo_operator.api.conversion import convert

    beta = dcd("decode", backendFramework="vllm", sharedMemorySize="0", replicas=2)
    alpha = convert(beta, "v1alpha1")
    assert render_component(alpha) == render_component(convert(alpha, "v1beta1"))
    assert "nvidia.com/conversion-from-v1alpha1" not in json.dumps(render_component(alpha))


def test_render_all_of_a_dcd_is_its_children():
    assert render_all(dcd()) == render_component(dcd())


# ---------------------------------------------------------------- image pull secret discovery


def secret(name, registries, ns="ns", typ="kubernetes.io/dockerconfigjson"):
    cfg = {"auths": {r: {"auth": "dTpw"} for r in registries}}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": typ,
        "metadata": {"name": name, "namespace": ns},
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(cfg).encode()).decode()},
    }


@pytest.mark.parametrize(
    ("image", "host"),
    [
        ("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0", "nvcr.io"),
        ("ubuntu:22.04", "docker.io"),
        ("library/ubuntu", "docker.io"),
        ("fluent/fluent-bit:3.0", "docker.io"),
        ("docker.io/fluent/fluent-bit:3.0", "docker.io"),
        ("index.docker.io/library/busybox", "docker.io"),
        ("localhost:5000/x/y:1", "localhost:5000"),
        ("my.registry:5000/team/img@sha256:abc", "my.registry:5000"),
    ],
)
def test_image_host(image, host):
    assert image_host(image) == host


@pytest.mark.parametrize(
    ("server", "host"),
    [
        ("https://index.docker.io/v1/", "docker.io"),
        ("registry-1.docker.io", "docker.io"),
        ("nvcr.io", "nvcr.io"),
        ("https://NVCR.io/v2/", "nvcr.io"),
        ("http://localhost:5000", "localhost:5000"),
    ],
)
def test_registry_normalisation(server, host):
    assert normalize_registry(server) == host


def test_index_only_dockerconfigjson_secrets_in_the_namespace():
    index = build_index(
        [
            secret("ngc", ["nvcr.io"]),
            secret("hub", ["https://index.docker.io/v1/"]),
            secret("other-ns", ["nvcr.io"], ns="elsewhere"),
            secret("opaque", ["nvcr.io"], typ="Opaque"),
            {
                "type": "kubernetes.io/dockerconfigjson",
                "metadata": {"name": "broken", "namespace": "ns"},
                "data": {".dockerconfigjson": "!!!"},
            },
        ]
    )
    assert index.lookup("ns", IMAGE) == ("ngc",)
    assert index.lookup("ns", "ubuntu") == ("hub",)
    assert index.lookup("elsewhere", IMAGE) == ("other-ns",)
    assert index.lookup("ns", "quay.io/x/y") == ()


def test_discovered_pull_secrets_are_injected_user_first_deduplicated():
    index = build_index(
        [secret("ngc", ["nvcr.io"]), secret("hub", ["docker.io"]), secret("ngc2", ["nvcr.io"])]
    )
    ctx = RenderContext(pull_secrets=index)
    d = dcd(sidecars=[{"name": "log", "image": "fluent/fluent-bit:3.0"}])
    d["spec"]["podTemplate"]["spec"]["imagePullSecrets"] = [{"name": "mine"}, {"name": "ngc"}]
    spec = workload_of(render_component(d, ctx))["spec"]["template"]["spec"]
    assert spec["imagePullSecrets"] == [{"name": "mine"}, {"name": "ngc"}, {"name": "ngc2"}, {"name": "hub"}]


def test_no_matching_secret_means_no_image_pull_secrets():
    spec = workload_of(render_component(dcd()))["spec"]["template"]["spec"]
    assert "imagePullSecrets" not in spec


@pytest.mark.parametrize("where", ["dcd", "podTemplate"])
def test_pull_secret_discovery_opt_out(where):
    ctx = RenderContext(pull_secrets=build_index([secret("ngc", ["nvcr.io"])]))
    ann = {"nvidia.com/disable-image-pull-secret-discovery": "true"}
    d = dcd(annotations=ann) if where == "dcd" else dcd()
    if where == "podTemplate":
        d["spec"]["podTemplate"]["metadata"] = {"annotations": ann}
    assert "imagePullSecrets" not in workload_of(render_component(d, ctx))["spec"]["template"]["spec"]
    assert workload_of(render_component(dcd(), ctx))["spec"]["template"]["spec"]["imagePullSecrets"] == [
        {"name": "ngc"}
    ]


def test_dgd_opt_out_annotation_reaches_pods():
    ctx = RenderContext(pull_secrets=build_index([secret("ngc", ["nvcr.io"])]))
    g = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": "g",
            "namespace": "ns",
            "annotations": {"nvidia.com/disable-image-pull-secret-discovery": "true"},
        },
        "spec": {
            "components": [
                {
                    "name": "w",
                    "type": "worker",
                    "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
                }
            ]
        },
    }
    dep = next(o for o in render_all(g, ctx) if o["kind"] == "Deployment")
    assert "imagePullSecrets" not in dep["spec"]["template"]["spec"]
