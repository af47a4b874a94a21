"""Renderer: GPU memory service (ResourceClaimTemplate, the gms-server sidecar, the DRA claim replacing the
GPU request), intra-pod failover (engine-0 / engine-1), the frontend sidecar's defaults, the EPP's
InferencePool and DestinationRule, and the labels an EPP selects on."""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.render import RenderContext, RenderError, render_all, render_graph
from dynamo_operator.render import gms as rgms
from support import graphs
from support.graphs import epp_graph, gms_graph

IMAGE = graphs.IMAGE
main = graphs.gpu_main
ALL = frozenset({"dra", "inferencePool", "istio"})


def ctx(config=None, detected=ALL) -> RenderContext:
    return RenderContext(operator_config=config, detected=frozenset(detected))


def one(out: list[dict], kind: str, name: str | None = None) -> dict:
    (found,) = [o for o in out if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    return found


def worker_pod(out: list[dict]) -> dict:
    return one(out, "Deployment", "g-worker")["spec"]["template"]["spec"]


def env(container: dict) -> dict:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env") or []}


# -- GPU memory service -------------------------------------------------------------------------------------


def test_gms_claim_template_replaces_the_gpu_request_by_a_shared_dra_claim():
    out = render_all(gms_graph(gms={"deviceClassName": "gpu.example.com"}), ctx())
    rct = one(out, "ResourceClaimTemplate")
    assert rct["apiVersion"] == "resource.k8s.io/v1"
    assert rct["metadata"]["name"] == "g-worker-gpu"
    assert rct["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "dynamo-operator"
    assert rct["spec"] == {
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpus",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "allocationMode": "ExactCount",
                            "count": 2,
                        },
                    }
                ]
            }
        }
    }
    assert "nvidia.com/dynamo-spec-hash" in rct["metadata"]["annotations"]
    pod = worker_pod(out)
    (m,) = pod["containers"]
    assert m["name"] == "main"
    assert m["resources"] == {"limits": {"cpu": "4"}, "claims": [{"name": "intrapod-shared-gpu"}]}
    assert {"name": "gms-intrapod-control", "mountPath": "/gms-intrapod-control"} in m["volumeMounts"]
    assert env(m)["GMS_SOCKET_DIR"] == "/gms-intrapod-control"
    assert pod["resourceClaims"] == [
        {"name": "intrapod-shared-gpu", "resourceClaimTemplateName": "g-worker-gpu"}
    ]
    assert {"name": "gms-intrapod-control", "emptyDir": {}} in pod["volumes"]
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    (server,) = pod["initContainers"]
    assert server["name"] == "gms-server"
    assert server["image"] == IMAGE
    assert server["command"] == ["python3", "-m", "gpu_memory_service.cli.server"]
    assert server["restartPolicy"] == "Always"  # a sidecar: started first, kept running
    assert server["resources"] == {"claims": [{"name": "intrapod-shared-gpu"}]}
    assert server["startupProbe"]["exec"]["command"] == ["test", "-f", "/gms-intrapod-control/gms-ready"]
    assert env(server) == {"GMS_SOCKET_DIR": "/gms-intrapod-control"}


def test_gms_default_device_class_and_the_frontend_untouched():
    out = render_all(gms_graph(), ctx())
    rct = one(out, "ResourceClaimTemplate")
    assert rct["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    frontend = one(out, "Deployment", "g-frontend")["spec"]["template"]["spec"]
    assert "resourceClaims" not in frontend and "initContainers" not in frontend


def test_gms_extra_client_containers_are_wired_and_absent_names_ignored():
    helper = {"name": "helper", "image": "busybox:1.36", "env": [{"name": "GMS_SOCKET_DIR", "value": "/x"}]}
    other = {"name": "other", "image": "busybox:1.36"}
    graph = gms_graph(gms={"extraClientContainers": ["helper", "absent"]}, sidecars=[helper, other])
    pod = worker_pod(render_all(graph, ctx()))
    by_name = {c["name"]: c for c in pod["containers"]}
    assert by_name["helper"]["resources"] == {"claims": [{"name": "intrapod-shared-gpu"}]}
    assert env(by_name["helper"])["GMS_SOCKET_DIR"] == "/x"  # the user's value is kept
    assert "resources" not in by_name["other"] and "volumeMounts" not in by_name["other"]


def test_gms_on_grove_puts_the_template_beside_the_podcliqueset():
    out = render_graph(gms_graph(), ctx(detected=ALL | {"grove"}))
    assert [o["kind"] for o in out].count("ResourceClaimTemplate") == 1
    pcs = one(out, "PodCliqueSet")
    clique = next(c for c in pcs["spec"]["template"]["cliques"] if c["name"] == "worker")
    assert clique["spec"]["podSpec"]["resourceClaims"][0]["resourceClaimTemplateName"] == "g-worker-gpu"


def test_gms_removed_leaves_no_template():
    graph = gms_graph()
    del graph["spec"]["components"][1]["experimental"]
    out = render_all(graph, ctx())
    assert not [o for o in out if o["kind"] == "ResourceClaimTemplate"]
    assert worker_pod(out)["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2"


# -- failover -----------------------------------------------------------------------------------------------


def test_failover_clones_main_into_an_active_and_a_standby_engine():
    fe = {"name": "fe", "image": IMAGE}
    pod = worker_pod(
        render_all(gms_graph(failover=True, sidecars=[fe], worker={"frontendSidecar": "fe"}), ctx())
    )
    assert [c["name"] for c in pod["containers"]] == ["engine-0", "engine-1", "fe"]
    for i, engine in enumerate(pod["containers"][:2]):
        e = env(engine)
        assert engine["ports"] == [{"name": f"system-{i}", "containerPort": 9090 + i, "protocol": "TCP"}]
        assert e["ENGINE_ID"] == str(i)
        assert e["CONTAINER_NAME"] == f"engine-{i}"
        assert e["DYN_SYSTEM_PORT"] == str(9090 + i)
        assert e["FAILOVER_LOCK_PATH"] == "/gms-intrapod-control/failover.lock"
        assert e["DYN_SYSTEM_STARTING_HEALTH_STATUS"] == "notready"
        assert e["DYN_VLLM_GMS_SHADOW_MODE"] == "true"
        assert e["VLLM_NIXL_SIDE_CHANNEL_PORT"] == str(5600 + i)
        assert e["DYN_KUBE_DISCOVERY_MODE"] == "container"
        assert "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS" not in e  # a standby engine must be able to be ready
        assert [n["name"] for n in engine["env"]].count("CONTAINER_NAME") == 1
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            assert engine[probe]["httpGet"]["port"] == f"system-{i}"
        assert engine["resources"]["claims"] == [{"name": "intrapod-shared-gpu"}]
    assert pod["containers"][0]["args"] == ["--model", "m"]
    assert pod["containers"][1]["args"] == ["--model", "m", "--master-port", "29600"]
    assert env(pod["initContainers"][0])["GMS_FAILOVER_ENGINE_COUNT"] == "2"


@pytest.mark.parametrize(
    ("command", "args", "want"),
    [
        (["python3", "-m", "dynamo.vllm"], ["--master-port", "30000"], ["--master-port", "30100"]),
        (["python3", "-m", "dynamo.vllm"], ["--master-port=30000"], ["--master-port=30100"]),
        (
            ["sh", "-c"],
            ["python3 -m dynamo.vllm --model m 2>&1"],
            ["python3 -m dynamo.vllm --model m --master-port 29600 2>&1"],
        ),
        (
            ["sh", "-c"],
            ["python3 -m dynamo.vllm --master-port 1 && echo"],
            ["python3 -m dynamo.vllm --master-port 101 && echo"],
        ),
        (None, ["--model", "m"], ["--model", "m", "--master-port", "29600"]),  # the image's entrypoint
    ],
)
def test_failover_staggers_the_standby_engines_master_port(command, args, want):
    graph = gms_graph(failover=True)
    m = graph["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
    m["args"] = args
    if command is None:
        del m["command"]
    else:
        m["command"] = command
    graph["spec"]["backendFramework"] = "vllm"
    pod = worker_pod(render_all(graph, ctx()))
    assert pod["containers"][1]["args"] == want
    assert pod["containers"][0]["args"] == args
    assert pod["containers"][1].get("command") == command


@pytest.mark.parametrize(
    ("change", "path", "fragment"),
    [
        (
            lambda g: g["metadata"]["annotations"].update({"nvidia.com/dynamo-kube-discovery-mode": "pod"}),
            "spec.components[1].experimental.failover",
            "per-container",
        ),
        (
            lambda g: g["spec"]["components"][1].update(type="planner"),
            "spec.components[1].experimental.gpuMemoryService",
            "serves worker components only",
        ),
        (
            lambda g: g["spec"]["components"][1]["experimental"]["failover"].update(mode="InterPod"),
            "spec.components[1].experimental.failover.mode",
            "inter-pod GMS",
        ),
    ],
)
def test_inconsistent_failover_is_refused_by_the_renderer(change, path, fragment):
    graph = gms_graph(failover=True)
    change(graph)
    with pytest.raises(RenderError) as exc:
        render_all(graph, ctx())
    assert exc.value.path == path
    assert fragment in str(exc.value)


def test_gms_without_dra_or_gpus_is_refused_by_the_renderer():
    with pytest.raises(RenderError, match="DRA is off"):
        render_all(gms_graph(), ctx(detected=set()))
    with pytest.raises(RenderError, match="DRA is off"):
        render_all(gms_graph(), ctx(config={"dra": {"enabled": False}}))
    graph = gms_graph()
    del graph["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["resources"]
    with pytest.raises(RenderError, match="requests none"):
        render_all(graph, ctx())


def test_problems_of_every_inconsistent_combination():
    spec = {
        "type": "frontend",
        "multinode": {"nodeCount": 2},
        "experimental": {
            "gpuMemoryService": {"mode": "InterPod", "extraClientPods": [{"name": "p"}]},
            "failover": {"numShadows": 2},
            "checkpoint": {"enabled": True},
        },
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": "i"}]}},
    }
    found = [(p.path, p.kind) for p in rgms.problems(spec, "mocker", {}, dra_enabled=False)]
    assert found == [
        (("experimental", "gpuMemoryService"), "forbidden"),  # not a worker
        (("experimental", "gpuMemoryService", "mode"), "notSupported"),  # inter-pod
        (("experimental", "gpuMemoryService", "extraClientPods"), "forbidden"),
        (("experimental", "gpuMemoryService"), "forbidden"),  # DRA off
        (("podTemplate", "spec", "containers", 0, "resources"), "required"),  # no GPU
        (("experimental", "checkpoint", "enabled"), "forbidden"),
        (("experimental", "failover", "mode"), "invalid"),  # IntraPod vs InterPod
        (("experimental", "failover", "numShadows"), "invalid"),
        (("experimental", "failover"), "notSupported"),  # an engine failover does not know
    ]
    good = copy.deepcopy(gms_graph(failover=True)["spec"]["components"][1])
    del good["experimental"]["gpuMemoryService"]  # failover runs on a GPU memory service of its own
    assert rgms.problems(good, None, {}, dra_enabled=True) == []  # vLLM detected from the command
    pod = {"nvidia.com/dynamo-kube-discovery-mode": "pod"}
    found = [p.path for p in rgms.problems(good, None, pod, dra_enabled=True)]
    assert found == [("experimental", "failover")]


# -- frontend sidecar ---------------------------------------------------------------------------------------


def test_frontend_sidecar_gets_the_frontend_defaults_under_the_users_fields():
    fe = {
        "name": "sidecar-frontend",
        "image": IMAGE,
        "args": ["-m", "dynamo.frontend", "--router-mode", "direct"],
        "env": [{"name": "DYN_HTTP_PORT", "value": "8001"}, {"name": "EXTRA", "value": "1"}],
        "envFrom": [{"secretRef": {"name": "hf"}}],
    }
    graph = gms_graph(sidecars=[fe], worker={"frontendSidecar": "sidecar-frontend"})
    del graph["spec"]["components"][1]["experimental"]
    config = {"infrastructure": {"natsAddress": "nats://n:4222"}}
    pod = worker_pod(render_all(graph, ctx(config=config)))
    main, sidecar = pod["containers"]
    assert sidecar["name"] == "sidecar-frontend"
    assert sidecar["command"] == ["python3"]  # args replace only the default args
    assert sidecar["args"] == ["-m", "dynamo.frontend", "--router-mode", "direct"]
    e = env(sidecar)
    assert e["DYN_COMPONENT"] == "frontend"
    assert e["DYNAMO_PORT"] == "8000"
    assert e["DYN_HTTP_PORT"] == "8001"  # the user's value wins
    assert e["EXTRA"] == "1"
    assert e["DYN_NAMESPACE"] == e["DYN_NAMESPACE_PREFIX"] == "team-g"
    assert e["NATS_SERVER"] == "nats://n:4222"
    assert e["CONTAINER_NAME"] == "sidecar-frontend"
    assert sidecar["envFrom"] == [{"secretRef": {"name": "hf"}}]
    assert sidecar["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert sidecar["livenessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert "exec" in sidecar["readinessProbe"]
    assert [m["name"] for m in sidecar["volumeMounts"]] == [m["name"] for m in main["volumeMounts"]]


def test_frontend_sidecar_defaults_command_and_args_and_keeps_a_users_probe():
    fe = {"name": "fe", "image": IMAGE, "readinessProbe": {"tcpSocket": {"port": 8000}}}
    graph = gms_graph(sidecars=[fe], worker={"frontendSidecar": "fe"})
    del graph["spec"]["components"][1]["experimental"]
    sidecar = worker_pod(render_all(graph, ctx()))["containers"][1]
    assert (sidecar["command"], sidecar["args"]) == (["python3"], ["-m", "dynamo.frontend"])
    assert sidecar["readinessProbe"] == {"tcpSocket": {"port": 8000}}


def test_frontend_sidecar_from_v1alpha1_gets_the_defaults_too():
    alpha = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "team"},
        "spec": {
            "services": {
                "Worker": {
                    "componentType": "worker",
                    "frontendSidecar": {"image": IMAGE, "envs": [{"name": "A", "value": "b"}]},
                    "extraPodSpec": {"mainContainer": {"image": IMAGE}},
                }
            }
        },
    }
    dep = one(render_all(alpha, ctx()), "Deployment")
    sidecar = dep["spec"]["template"]["spec"]["containers"][1]
    assert sidecar["args"] == ["-m", "dynamo.frontend"]
    assert env(sidecar)["A"] == "b" and env(sidecar)["DYNAMO_PORT"] == "8000"


# -- EPP ----------------------------------------------------------------------------------------------------


def test_epp_graph_gets_the_pool_its_args_name():
    out = render_all(epp_graph(), ctx())
    pool = one(out, "InferencePool")
    assert pool["apiVersion"] == "inference.networking.k8s.io/v1"
    assert pool["metadata"]["name"] == "gaie-pool"
    assert pool["spec"] == {
        "targetPorts": [{"number": 8000}],
        "selector": {
            "matchLabels": {
                "nvidia.com/dynamo-component-class": "worker",
                "nvidia.com/dynamo-namespace": "team-gaie",
            }
        },
        "endpointPickerRef": {"kind": "Service", "name": "gaie-epp", "port": {"number": 9002}},
    }
    epp = one(out, "Deployment", "gaie-epp")["spec"]["template"]
    args = epp["spec"]["containers"][0]["args"]
    assert args[args.index("-pool-name") + 1] == "gaie-pool"
    assert args[args.index("-pool-namespace") + 1] == "team"
    assert args[args.index("-pool-group") + 1] == "inference.networking.k8s.io"
    assert epp["metadata"]["annotations"]["sidecar.istio.io/inject"] == "false"
    assert one(out, "Service", "gaie-epp")  # what endpointPickerRef names


def test_epp_target_pods_carry_the_labels_the_epp_and_its_pool_select_on():
    out = render_all(epp_graph(), ctx())
    for name, sub in (("gaie-decode", "decode"), ("gaie-prefill", "prefill")):
        labels = one(out, "Deployment", name)["spec"]["template"]["metadata"]["labels"]
        assert labels["nvidia.com/dynamo-sub-component-type"] == sub
        assert labels["nvidia.com/dynamo-component-class"] == "worker"
        assert (
            one(out, "DynamoComponentDeployment", name)["metadata"]["labels"][
                "nvidia.com/dynamo-component-class"
            ]
            == "worker"
        )
    frontend = one(out, "Deployment", "gaie-frontend")["spec"]["template"]["metadata"]["labels"]
    assert "nvidia.com/dynamo-component-class" not in frontend
    assert "nvidia.com/dynamo-sub-component-type" not in frontend


def test_sub_component_type_label_without_an_epp_and_no_class():
    graph = epp_graph()
    graph["spec"]["components"] = graph["spec"]["components"][1:]
    out = render_all(graph, ctx(detected=set()))
    labels = one(out, "Deployment", "gaie-decode")["spec"]["template"]["metadata"]["labels"]
    assert labels["nvidia.com/dynamo-sub-component-type"] == "decode"
    assert "nvidia.com/dynamo-component-class" not in labels
    assert not [o for o in out if o["kind"] in ("InferencePool", "DestinationRule")]


def test_epp_without_the_inference_pool_api_is_refused():
    with pytest.raises(RenderError) as exc:
        render_graph(epp_graph(), ctx(detected=set()))
    assert exc.value.path == "spec.components[0].type"
    assert "inference.networking.k8s.io/v1" in str(exc.value)


@pytest.mark.parametrize(
    ("istio", "want"),
    [
        ({}, {"mode": "SIMPLE", "insecureSkipVerify": True}),
        (
            {"tlsMode": "ISTIO_MUTUAL", "insecureSkipVerify": False},
            {"mode": "ISTIO_MUTUAL", "insecureSkipVerify": False},
        ),
        (
            {"tlsMode": "SIMPLE", "clientCertificate": "/c"},  # files are for MUTUAL only
            {"mode": "SIMPLE", "insecureSkipVerify": True},
        ),
        (
            {"tlsMode": "MUTUAL", "clientCertificate": "/c", "privateKey": "/k", "caCertificates": "/ca"},
            {
                "mode": "MUTUAL",
                "insecureSkipVerify": True,
                "clientCertificate": "/c",
                "privateKey": "/k",
                "caCertificates": "/ca",
            },
        ),
    ],
)
def test_destination_rule_follows_the_service_mesh_settings(istio, want):
    config = {"serviceMesh": {"provider": "istio", "istio": istio}}
    rule = one(render_all(epp_graph(), ctx(config=config)), "DestinationRule")
    assert rule["apiVersion"] == "networking.istio.io/v1beta1"
    assert rule["metadata"]["name"] == "gaie-epp"
    assert rule["spec"] == {"host": "gaie-epp.team.svc.cluster.local", "trafficPolicy": {"tls": want}}


@pytest.mark.parametrize(
    ("mesh", "detected"),
    [
        (None, ALL),  # no provider
        ({"provider": ""}, ALL),
        ({"provider": "istio"}, ALL - {"istio"}),  # auto-detect: no DestinationRule API
        ({"provider": "istio", "enabled": False}, ALL),
    ],
)
def test_no_destination_rule_without_an_enabled_istio_mesh(mesh, detected):
    config = {"serviceMesh": mesh} if mesh is not None else None
    out = render_all(epp_graph(), ctx(config=config, detected=detected))
    assert not [o for o in out if o["kind"] == "DestinationRule"]
    assert one(out, "InferencePool")


def test_destination_rule_when_the_mesh_is_enabled_explicitly():
    config = {"serviceMesh": {"provider": "istio", "enabled": True}}
    out = render_all(epp_graph(), ctx(config=config, detected=ALL - {"istio"}))
    assert one(out, "DestinationRule")


# -- failover as upstream writes it: every backend, one node or several -----------------------------------


def failover_dcd(backend: str, nodes: int = 1, annotations: dict | None = None, args=("--model", "m")):
    """A worker DCD with failover and nothing else: no gpuMemoryService, no discovery-mode annotation (the
    shape of upstream's failover examples)."""
    main = {
        "name": "main",
        "image": IMAGE,
        "command": ["python3", "-m", f"dynamo.{backend}"],
        "args": list(args),
        "resources": {"limits": {"nvidia.com/gpu": "8"}},
    }
    spec: dict = {
        "name": "Worker",
        "type": "worker",
        "backendFramework": backend,
        "experimental": {"failover": {}},
        "podTemplate": {"spec": {"containers": [main]}},
    }
    if nodes > 1:
        spec["multinode"] = {"nodeCount": nodes}
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g-worker", "namespace": "team", "annotations": annotations or {}},
        "spec": spec,
    }


def engines_of(pod: dict) -> tuple[dict, dict]:
    e0, e1 = (c for c in pod["containers"] if c["name"].startswith("engine-"))
    return e0, e1


def words(c: dict) -> str:
    return " ".join([*(c.get("command") or []), *(c.get("args") or [])])


def lws_pods(objs: list[dict]) -> tuple[dict, dict]:
    lws = one(objs, "LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]
    return lws["leaderTemplate"]["spec"], lws["workerTemplate"]["spec"]


CFG = {"mpi": {"sshSecretName": "mpi-ssh"}}


@pytest.mark.parametrize("backend", ["vllm", "sglang", "trtllm"])
def test_failover_runs_on_a_gms_of_its_own_with_per_container_discovery(backend):
    out = render_all(failover_dcd(backend), ctx(CFG))
    assert one(out, "ResourceClaimTemplate")["metadata"]["name"] == "g-worker-gpu"
    pod = one(out, "Deployment")["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["initContainers"]] == ["gms-server"]
    for i, engine in enumerate(engines_of(pod)):
        e = env(engine)
        assert (e["CONTAINER_NAME"], e["DYN_KUBE_DISCOVERY_MODE"]) == (f"engine-{i}", "container")
        assert e["DYN_GMS_FAILOVER_SHADOW_MODE"] == "true" and e["DYN_GMS_FAILOVER_PRIMARY_ENGINE_ID"] == "0"
        assert e[f"DYN_{backend.upper()}_GMS_LOCK_BEFORE_INIT"] == ("1" if i == 0 else "0")
        assert engine["resources"]["claims"] == [{"name": "intrapod-shared-gpu"}]
        assert [n["name"] for n in engine["env"]].count("CONTAINER_NAME") == 1


def test_sglang_engines_skip_piecewise_cuda_graphs_once():
    pod = one(render_all(failover_dcd("sglang"), ctx()), "Deployment")["spec"]["template"]["spec"]
    for engine in engines_of(pod):
        assert engine["args"] == ["--model", "m", "--disable-piecewise-cuda-graph"]
    given = failover_dcd("sglang", args=("--model", "m", "--disable-piecewise-cuda-graph"))
    pod = one(render_all(given, ctx()), "Deployment")["spec"]["template"]["spec"]
    assert all(words(e).count("--disable-piecewise-cuda-graph") == 1 for e in engines_of(pod))


def test_trtllm_engines_get_their_own_torch_distributed_store():
    pod = one(render_all(failover_dcd("trtllm"), ctx()), "Deployment")["spec"]["template"]["spec"]
    e0, e1 = (env(e) for e in engines_of(pod))
    assert (e0["MASTER_PORT"], e1["MASTER_PORT"]) == ("29500", "29600")
    assert e0["DYN_TRTLLM_GMS_SHADOW_MODE"] == e1["DYN_TRTLLM_GMS_SHADOW_MODE"] == "true"
    assert "NNODES" not in e0


def test_multinode_vllm_failover_keeps_each_engines_rendezvous_apart():
    """Unannotated, multinode vLLM with failover runs on the mp executor (a second Ray head could not
    start); each engine has its own torch.distributed store."""
    d = failover_dcd("vllm", 2, None, ("--model", "m", "--tensor-parallel-size", "16"))
    leader, worker = lws_pods(render_all(d, ctx(CFG, ALL | {"lws"})))
    for pod in (leader, worker):
        e0, e1 = engines_of(pod)
        assert "--distributed-executor-backend mp" in words(e0)
        assert "--master-port 29500" in words(e0) and "--master-port 29600" in words(e1)
        assert env(e0)["NNODES"] == env(e1)["NNODES"] == "2"


def test_multinode_sglang_failover_moves_the_standbys_dist_init_port():
    d = failover_dcd("sglang", 2, None, ("--model", "m", "--tp", "16"))
    leader, worker = lws_pods(render_all(d, ctx(CFG, ALL | {"lws"})))
    for pod in (leader, worker):
        e0, e1 = engines_of(pod)
        assert ":29500" in words(e0) and ":29500" not in words(e1) and ":29600" in words(e1)


def test_multinode_trtllm_failover_gives_the_standby_its_own_sshd():
    d = failover_dcd("trtllm", 2)
    leader, worker = lws_pods(render_all(d, ctx(CFG, ALL | {"lws"})))
    w0, w1 = engines_of(worker)
    assert "sshd -D -e -p 2222 " in words(w0) and "sshd -D -e -p 2223 " in words(w1)
    assert w0["readinessProbe"]["tcpSocket"]["port"] == 2222
    assert w1["readinessProbe"]["tcpSocket"]["port"] == 2223
    l0, l1 = engines_of(leader)
    assert '"-p 2222 ' in words(l0) and '"-p 2223 ' in words(l1)  # mpirun dials the matching sshd
    for engine in (l0, l1):  # the ranks mpirun starts over SSH get the engine's failover and GMS env
        forwarded = words(engine)
        for name in ("ENGINE_ID", "MASTER_PORT", "NNODES", "GMS_SOCKET_DIR", "DYN_GMS_FAILOVER_SHADOW_MODE"):
            assert f"-x {name} " in forwarded, name
        assert forwarded.count("-x ENGINE_ID ") == 1
