"""Every row of the operator defaults document, rendered through DCD -> Deployment."""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.render import RenderContext, RenderError, render_component
from dynamo_operator.render.checkpoint_ids import identity_hash
from dynamo_operator.render.probes import multinode_probes, worker_probes

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"


def dcd(ctype: str | None = "worker", name: str = "g-c", ns: str = "ns", labels=None, **spec) -> dict:
    main = spec.pop("main", {})
    pod = spec.pop("pod", {})
    sidecars = spec.pop("sidecars", [])
    s = {"name": spec.pop("component_name", "C"), **spec}
    if ctype:
        s["type"] = ctype
    s["podTemplate"] = {
        **({"metadata": spec_meta} if (spec_meta := pod.pop("metadata", None)) else {}),
        "spec": {**pod, "containers": [{"name": "main", "image": IMAGE, **main}, *sidecars]},
    }
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {"nvidia.com/dynamo-graph-deployment-name": "g", **(labels or {})},
        },
        "spec": s,
    }


def objs(d: dict, ctx: RenderContext | None = None) -> list[dict]:
    return render_component(d, ctx or RenderContext())


def one(out: list[dict], kind: str) -> dict:
    found = [o for o in out if o["kind"] == kind]
    assert len(found) == 1, [o["kind"] for o in out]
    return found[0]


def pod(d: dict, ctx: RenderContext | None = None) -> dict:
    return one(objs(d, ctx), "Deployment")["spec"]["template"]


def main(d: dict, ctx: RenderContext | None = None) -> dict:
    return pod(d, ctx)["spec"]["containers"][0]


def env(d: dict, ctx: RenderContext | None = None) -> dict:
    entries = main(d, ctx)["env"]
    names = [e["name"] for e in entries]
    assert len(names) == len(set(names)), "every variable appears once"
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in entries}


# ---------------------------------------------------------------- pod specification defaults


def test_pod_defaults_grace_period_and_restart_policy():
    spec = pod(dcd())["spec"]
    assert spec["terminationGracePeriodSeconds"] == 60
    assert spec["restartPolicy"] == "Always"


@pytest.mark.parametrize("ctype", ["frontend", "worker", "prefill", "decode", "planner", "epp", None])
def test_every_type_gets_pod_defaults_fsgroup_and_shm(ctype):
    extra = {"eppConfig": {"config": {"a": 1}}} if ctype == "epp" else {}
    spec = pod(dcd(ctype, **extra))["spec"]
    assert spec["terminationGracePeriodSeconds"] == 60
    assert spec["restartPolicy"] == "Always"
    assert spec["securityContext"] == {"fsGroup": 1000}
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}} in spec["volumes"]
    assert {"name": "shared-memory", "mountPath": "/dev/shm"} in spec["containers"][0]["volumeMounts"]


def test_user_pod_fields_override_defaults():
    spec = pod(dcd(pod={"terminationGracePeriodSeconds": 5, "nodeSelector": {"gpu": "h100"}}))["spec"]
    assert spec["terminationGracePeriodSeconds"] == 5
    assert spec["nodeSelector"] == {"gpu": "h100"}
    assert spec["restartPolicy"] == "Always"


# ---------------------------------------------------------------- security context


def test_fsgroup_default():
    assert pod(dcd())["spec"]["securityContext"] == {"fsGroup": 1000}


@pytest.mark.parametrize(
    "sc",
    [{"fsGroup": 2000, "runAsUser": 1000, "runAsGroup": 1000, "runAsNonRoot": True}, {"runAsUser": 0}, {}],
)
def test_any_user_security_context_disables_the_default(sc):
    assert pod(dcd(pod={"securityContext": sc}))["spec"]["securityContext"] == sc


# ---------------------------------------------------------------- shared memory


def test_shared_memory_size_override():
    spec = pod(dcd(sharedMemorySize="16Gi"))["spec"]
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in spec["volumes"]


@pytest.mark.parametrize("zero", ["0", 0, "0Gi"])
def test_shared_memory_zero_disables(zero):
    spec = pod(dcd(sharedMemorySize=zero))["spec"]
    assert "shared-memory" not in [v["name"] for v in spec.get("volumes", [])]
    assert "/dev/shm" not in [m["mountPath"] for m in spec["containers"][0].get("volumeMounts", [])]


def test_shared_memory_negative_is_an_error():
    with pytest.raises(RenderError, match=r"spec.sharedMemorySize"):
        objs(dcd(sharedMemorySize="-1Gi"))


def test_shared_memory_replaces_user_dev_shm_mount():
    d = dcd(
        main={"volumeMounts": [{"name": "my-shm", "mountPath": "/dev/shm"}]},
        pod={"volumes": [{"name": "my-shm", "emptyDir": {}}]},
    )
    mounts = main(d)["volumeMounts"]
    assert [m for m in mounts if m["mountPath"] == "/dev/shm"] == [
        {"name": "shared-memory", "mountPath": "/dev/shm"}
    ]


# ---------------------------------------------------------------- probes


def test_frontend_probes():
    c = main(dcd("frontend"))
    assert c["livenessProbe"] == {
        "httpGet": {"path": "/health", "port": "http"},
        "initialDelaySeconds": 60,
        "periodSeconds": 60,
        "timeoutSeconds": 30,
        "failureThreshold": 10,
    }
    assert c["readinessProbe"] == {
        "exec": {
            "command": [
                "/bin/sh",
                "-c",
                'curl -s http://localhost:${DYNAMO_PORT}/health | jq -e ".status == \\"healthy\\""',
            ]
        },
        "initialDelaySeconds": 60,
        "periodSeconds": 60,
        "timeoutSeconds": 30,
        "failureThreshold": 10,
    }
    assert "startupProbe" not in c


@pytest.mark.parametrize("ctype", ["worker", "prefill", "decode"])
def test_worker_probes(ctype):
    c = main(dcd(ctype))
    assert c["livenessProbe"] == {
        "httpGet": {"path": "/live", "port": "system"},
        "periodSeconds": 5,
        "timeoutSeconds": 30,
        "failureThreshold": 1,
    }
    assert c["readinessProbe"] == {
        "httpGet": {"path": "/health", "port": "system"},
        "periodSeconds": 10,
        "timeoutSeconds": 30,
        "failureThreshold": 60,
    }
    assert c["startupProbe"] == {
        "httpGet": {"path": "/live", "port": "system"},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 720,
    }
    assert c["startupProbe"]["periodSeconds"] * c["startupProbe"]["failureThreshold"] == 7200


def test_planner_and_untyped_get_no_default_probes():
    for ctype in ("planner", None):
        c = main(dcd(ctype))
        assert not {"livenessProbe", "readinessProbe", "startupProbe"} & set(c)


def test_user_probe_replaces_default_wholesale():
    user = {"tcpSocket": {"port": 9090}, "periodSeconds": 3}
    c = main(dcd("worker", main={"startupProbe": user}))
    assert c["startupProbe"] == user
    assert c["livenessProbe"]["httpGet"]["path"] == "/live"  # the others stay


# ---------------------------------------------------------------- multinode probe rules


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
def test_multinode_vllm_sglang_workers_lose_all_probes_leaders_keep_them(backend):
    assert multinode_probes(worker_probes(), backend, "worker") == {}
    assert multinode_probes(worker_probes(), backend, "leader") == worker_probes()


def test_multinode_trtllm_worker_probes():
    assert multinode_probes(worker_probes(), "trtllm", "worker") == {
        "readinessProbe": {
            "tcpSocket": {"port": 2222},
            "initialDelaySeconds": 20,
            "periodSeconds": 20,
            "timeoutSeconds": 5,
            "failureThreshold": 10,
        }
    }
    assert multinode_probes(worker_probes(), "trtllm", "leader") == worker_probes()


LWS = RenderContext(
    operator_config={"orchestrators": {"lws": {"enabled": True}}, "mpi": {"sshSecretName": "mpi-ssh"}}
)


def _lws(backend, main_extra=None, annotations=None):
    # a multinode launch needs the backend command (the operator adds the distributed flags to it)
    main_extra = {"command": ["python3", "-m", f"dynamo.{backend}"], **(main_extra or {})}
    d = dcd("worker", backendFramework=backend, multinode={"nodeCount": 2}, main=main_extra)
    if annotations:
        d["metadata"]["annotations"] = annotations
    lws = one(objs(d, LWS), "LeaderWorkerSet")
    t = lws["spec"]["leaderWorkerTemplate"]
    return lws, t["leaderTemplate"]["spec"]["containers"][0], t["workerTemplate"]["spec"]["containers"][0]


@pytest.mark.parametrize(
    "args",
    [
        ["--tensor-parallel-size", "16"],  # TP/PP mode: world 16 > 8 GPUs
        ["--data-parallel-size", "4", "--tensor-parallel-size", "4"],  # DP mode: 4 x 4 > 8
    ],
)
def test_multinode_vllm_rendered_leader_keeps_worker_loses_probes(args):
    lws, leader, worker = _lws("vllm", {"args": args, "resources": {"limits": {"nvidia.com/gpu": "8"}}})
    assert lws["metadata"]["name"] == "g-c-0"
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    assert {"livenessProbe", "readinessProbe", "startupProbe"} <= set(leader)
    assert not {"livenessProbe", "readinessProbe", "startupProbe"} & set(worker)


def test_multinode_sglang_rendered():
    _, leader, worker = _lws("sglang")
    assert "startupProbe" in leader and "readinessProbe" not in worker


def test_multinode_trtllm_rendered_env_probe_and_ssh_secret():
    _, leader, worker = _lws("trtllm", {"resources": {"limits": {"nvidia.com/gpu": "8"}}})
    assert worker["readinessProbe"]["tcpSocket"] == {"port": 2222}
    assert "livenessProbe" not in worker and "startupProbe" not in worker
    for c in (leader, worker):
        assert {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"} in c["env"]
        assert {"name": "mpi-ssh", "mountPath": "/ssh-pk"} in c["volumeMounts"]


def test_multinode_vllm_mp_backend_sets_nixl_side_channel_host_from_pod_ip():
    extra = {"args": ["--tensor-parallel-size", "16"], "resources": {"limits": {"nvidia.com/gpu": "8"}}}
    _, leader, _ = _lws("vllm", extra, {"nvidia.com/vllm-distributed-executor-backend": "mp"})
    assert {
        "name": "VLLM_NIXL_SIDE_CHANNEL_HOST",
        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}},
    } in leader["env"]
    _, leader, _ = _lws("vllm", extra)  # default executor (ray): not set
    assert "VLLM_NIXL_SIDE_CHANNEL_HOST" not in [e["name"] for e in leader["env"]]


def test_single_node_has_no_multinode_env():
    e = env(dcd("worker", backendFramework="trtllm"))
    assert "OMPI_MCA_orte_keep_fqdn_hostnames" not in e


def test_multinode_without_lws_is_an_error_naming_the_field():
    with pytest.raises(RenderError, match=r"DynamoComponentDeployment ns/g-c: spec.multinode.nodeCount.*lws"):
        objs(dcd("worker", backendFramework="vllm", multinode={"nodeCount": 2}))


# ---------------------------------------------------------------- environment variables


def test_all_components_env():
    e = env(dcd("worker"))
    assert e["DYN_NAMESPACE"] == "ns-g"
    assert e["DYN_COMPONENT"] == "worker"
    assert e["DYN_PARENT_DGD_K8S_NAME"] == "g"
    assert e["DYN_PARENT_DGD_K8S_NAMESPACE"] == "ns"
    assert e["POD_NAME"] == {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}
    assert e["POD_NAMESPACE"] == {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}
    assert e["POD_UID"] == {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.uid"}}
    assert e["DYN_DISCOVERY_BACKEND"] == "kubernetes"


@pytest.mark.parametrize("ctype", ["frontend", "worker", "prefill", "decode", "planner", "epp"])
def test_dyn_component_is_the_type(ctype):
    extra = {"eppConfig": {"config": {}}} if ctype == "epp" else {}
    d = dcd(ctype, **extra)
    assert d["spec"]["type"] == ctype and env(d)["DYN_COMPONENT"] == ctype


def test_discovery_backend_from_config_and_annotation():
    ctx = RenderContext(operator_config={"discovery": {"backend": "etcd"}})
    assert env(dcd(), ctx)["DYN_DISCOVERY_BACKEND"] == "etcd"
    d = dcd()
    d["metadata"]["annotations"] = {"nvidia.com/dynamo-discovery-backend": "etcd"}
    assert env(d)["DYN_DISCOVERY_BACKEND"] == "etcd"


def test_global_dynamo_namespace():
    e = env(dcd(globalDynamoNamespace=True))
    assert e["DYN_NAMESPACE"] == "dynamo"


def test_infrastructure_env_only_when_configured():
    e = env(dcd())
    assert not {"NATS_SERVER", "ETCD_ENDPOINTS", "MODEL_EXPRESS_URL", "PROMETHEUS_ENDPOINT"} & set(e)
    cfg = {
        "infrastructure": {
            "natsAddress": "nats://nats:4222",
            "etcdAddress": "http://etcd:2379",
            "modelExpressURL": "http://mx:8080",
            "prometheusEndpoint": "http://prom:9090",
        }
    }
    for ctype in ("frontend", "worker", "planner", None):
        e = env(dcd(ctype), RenderContext(operator_config=cfg))
        assert e["NATS_SERVER"] == "nats://nats:4222"
        assert e["ETCD_ENDPOINTS"] == "http://etcd:2379"
        assert e["MODEL_EXPRESS_URL"] == "http://mx:8080"
        assert e["PROMETHEUS_ENDPOINT"] == "http://prom:9090"
    e = env(dcd(), RenderContext(operator_config={"infrastructure": {"natsAddress": "nats://n:4222"}}))
    assert e["NATS_SERVER"] == "nats://n:4222" and "ETCD_ENDPOINTS" not in e


def test_frontend_env():
    e = env(dcd("frontend"))
    assert e["DYNAMO_PORT"] == "8000"
    assert e["DYN_HTTP_PORT"] == "8000"
    assert e["DYN_NAMESPACE_PREFIX"] == e["DYN_NAMESPACE"] == "ns-g"
    assert "DYN_SYSTEM_PORT" not in e


@pytest.mark.parametrize("ctype", ["worker", "prefill", "decode"])
def test_worker_env(ctype):
    e = env(dcd(ctype))
    assert e["DYN_SYSTEM_ENABLED"] == "true"
    assert e["DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS"] == '["generate"]'
    assert e["DYN_SYSTEM_PORT"] == "9090"
    assert e["DYN_HEALTH_CHECK_ENABLED"] == "false"
    assert e["NIXL_TELEMETRY_ENABLE"] == "n"
    assert e["NIXL_TELEMETRY_EXPORTER"] == "prometheus"
    assert e["NIXL_TELEMETRY_PROMETHEUS_PORT"] == "19090"
    assert "DYN_NAMESPACE_WORKER_SUFFIX" not in e
    assert (
        env(dcd(ctype, labels={"nvidia.com/dynamo-worker-hash": "abcd1234"}))["DYN_NAMESPACE_WORKER_SUFFIX"]
        == "abcd1234"
    )


def test_planner_env():
    e = env(dcd("planner"))
    assert e["PLANNER_PROMETHEUS_PORT"] == "9085"
    assert "DYN_SYSTEM_ENABLED" not in e


def test_epp_env():
    e = env(dcd("epp", eppConfig={"config": {}}))
    assert e["USE_STREAMING"] == "true"
    assert e["RUST_LOG"] == "debug,dynamo_llm::kv_router=trace"


def test_vllm_cache_root_with_compilation_cache():
    d = dcd("worker", backendFramework="vllm", compilationCache={"pvcName": "cc"})
    spec = pod(d)["spec"]
    c = spec["containers"][0]
    assert {"name": "VLLM_CACHE_ROOT", "value": "/root/.cache/vllm"} in c["env"]
    assert {"name": "compilation-cache", "mountPath": "/root/.cache/vllm"} in c["volumeMounts"]
    assert {"name": "compilation-cache", "persistentVolumeClaim": {"claimName": "cc"}} in spec["volumes"]
    d = dcd("worker", backendFramework="vllm", compilationCache={"pvcName": "cc", "mountPath": "/cache"})
    assert env(d)["VLLM_CACHE_ROOT"] == "/cache"
    assert "VLLM_CACHE_ROOT" not in env(dcd("worker", backendFramework="vllm"))


def test_compilation_cache_needs_mount_path_outside_vllm():
    d = dcd("worker", backendFramework="sglang", compilationCache={"pvcName": "cc"})
    with pytest.raises(RenderError, match=r"spec.compilationCache.mountPath"):
        objs(d)
    d = dcd("worker", backendFramework="sglang", compilationCache={"pvcName": "cc", "mountPath": "/c"})
    assert "VLLM_CACHE_ROOT" not in env(d)


CKPT = {"checkpoint": {"enabled": True, "storage": {"pvc": {"basePath": "/ckpt"}}}}
IDENTITY = {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"}


def test_checkpoint_env_pvc():
    """A DCD restoring by identity: the identity hash names the artifact (as a standalone checkpoint with
    that identity records it)."""
    ctx = RenderContext(operator_config=CKPT)
    d = dcd(
        "worker",
        backendFramework="vllm",
        experimental={"checkpoint": {"enabled": True, "identity": IDENTITY}},
    )
    p = pod(d, ctx)
    e = {x["name"]: x for x in p["spec"]["containers"][0]["env"]}
    assert e["DYN_CHECKPOINT_PATH"]["value"] == "/ckpt"
    assert e["DYN_CHECKPOINT_HASH"]["value"] == identity_hash(IDENTITY)
    assert e["SKIP_WAIT_FOR_CHECKPOINT"]["value"] == "true"
    assert "DYN_CHECKPOINT_LOCATION" not in e
    # restored pods read DYN_NAMESPACE from their annotation (downward API)
    assert e["DYN_NAMESPACE"]["valueFrom"] == {
        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations['nvidia.com/dynamo-namespace']"}
    }
    assert p["metadata"]["annotations"]["nvidia.com/dynamo-namespace"] == "ns-g"
    assert {"name": "checkpoint-storage", "persistentVolumeClaim": {"claimName": "chrek-pvc"}} in p["spec"][
        "volumes"
    ]
    assert {"name": "checkpoint-storage", "mountPath": "/ckpt"} in p["spec"]["containers"][0]["volumeMounts"]


def test_identity_hash_is_upstreams_normalised_form():
    """16 hex of the SHA-256 of the identity in upstream's field order, TP/PP defaulted to 1, empty fields
    left out: the same identity names the same checkpoint whatever spelled it."""
    import hashlib

    doc = b'{"model":"m","backendFramework":"vllm","tensorParallelSize":1,"pipelineParallelSize":1}'
    assert identity_hash({"backendFramework": "vllm", "model": "m"}) == hashlib.sha256(doc).hexdigest()[:16]
    assert identity_hash(
        {"model": "m", "backendFramework": "vllm", "tensorParallelSize": 1, "dtype": ""}
    ) == (identity_hash({"model": "m", "backendFramework": "vllm"}))
    assert identity_hash({"model": "m", "backendFramework": "vllm", "dtype": "bf16"}) != identity_hash(
        {"model": "m", "backendFramework": "vllm"}
    )


def test_checkpoint_env_s3_location():
    ctx = RenderContext(
        operator_config={
            "checkpoint": {"enabled": True, "storage": {"type": "s3", "s3": {"uri": "s3://b/p"}}}
        }
    )
    d = dcd("worker", experimental={"checkpoint": {"enabled": True, "identity": IDENTITY}})
    e = env(d, ctx)
    assert e["DYN_CHECKPOINT_LOCATION"] == f"s3://b/p/{e['DYN_CHECKPOINT_HASH']}"
    assert "DYN_CHECKPOINT_PATH" not in e


def test_checkpoint_disabled_injects_nothing():
    e = env(dcd("worker", experimental={"checkpoint": {"enabled": False}}))
    assert not any(k.startswith("DYN_CHECKPOINT") for k in e)
    assert e["DYN_NAMESPACE"] == "ns-g"


def test_checkpoint_ref_uses_the_referenced_checkpoints_id():
    ck1 = {
        "metadata": {"name": "ck1"},
        "spec": {"identity": IDENTITY},
        "status": {"checkpointID": "0123456789abcdef"},
    }
    ctx = RenderContext(operator_config=CKPT, checkpoints={"ck1": ck1})
    d = dcd("worker", experimental={"checkpoint": {"enabled": True, "checkpointRef": "ck1"}})
    assert env(d, ctx)["DYN_CHECKPOINT_HASH"] == "0123456789abcdef"
    # not known (yet): restore-shaped all the same, without a hash (the pod starts cold)
    e = env(d, RenderContext(operator_config=CKPT))
    assert "DYN_CHECKPOINT_HASH" not in e and e["SKIP_WAIT_FOR_CHECKPOINT"] == "true"


def test_checkpoint_refused_when_nothing_names_it_or_the_configuration_disables_it():
    d = dcd("worker", experimental={"checkpoint": {"enabled": True}})
    with pytest.raises(RenderError, match=r"spec.experimental.checkpoint: .*does not create checkpoints"):
        env(d, RenderContext(operator_config=CKPT))
    ref = dcd("worker", experimental={"checkpoint": {"enabled": True, "checkpointRef": "x"}})
    with pytest.raises(RenderError, match=r"checkpointing is disabled in the operator configuration"):
        env(ref, RenderContext())


def test_wait_for_checkpoint_holds_a_dcd_at_zero_until_ready():
    cp = {"enabled": True, "checkpointRef": "ck1", "startupPolicy": "WaitForCheckpoint"}
    d = dcd("worker", replicas=3, experimental={"checkpoint": cp})
    ck1 = {"metadata": {"name": "ck1"}, "spec": {"identity": IDENTITY}, "status": {"phase": "Creating"}}

    def replicas(ctx):
        return next(o for o in objs(d, ctx) if o["kind"] == "Deployment")["spec"]["replicas"]

    assert replicas(RenderContext(operator_config=CKPT)) == 0  # not created yet
    assert replicas(RenderContext(operator_config=CKPT, checkpoints={"ck1": ck1})) == 0
    ready = {**ck1, "status": {"phase": "Ready", "checkpointID": "abc"}}
    assert replicas(RenderContext(operator_config=CKPT, checkpoints={"ck1": ready})) == 3
    immediate = dcd("worker", replicas=3, experimental={"checkpoint": {**cp, "startupPolicy": "Immediate"}})
    assert (
        next(o for o in objs(immediate, RenderContext(operator_config=CKPT)) if o["kind"] == "Deployment")[
            "spec"
        ]["replicas"]
        == 3
    )


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        (
            {"volumes": [{"name": "checkpoint-storage", "emptyDir": {}}]},
            "spec.podTemplate.spec.volumes[0].name",
        ),
        (
            {
                "containers": [
                    {
                        "name": "main",
                        "image": "i",
                        "volumeMounts": [{"name": "checkpoint-storage", "mountPath": "/x"}],
                    }
                ]
            },
            "spec.podTemplate.spec.containers[main].volumeMounts[0].name",
        ),
        (
            {
                "containers": [
                    {"name": "main", "image": "i", "volumeMounts": [{"name": "mine", "mountPath": "/ckpt/"}]}
                ]
            },
            "spec.podTemplate.spec.containers[main].volumeMounts[0].mountPath",
        ),
    ],
)
def test_a_user_volume_the_checkpoint_volume_would_replace_is_refused(spec, path):
    cp = {"enabled": True, "checkpointRef": "ck1"}
    d = dcd("worker", experimental={"checkpoint": cp})
    d["spec"]["podTemplate"]["spec"] = {"containers": [{"name": "main", "image": "i"}], **spec}
    with pytest.raises(RenderError) as err:
        objs(d, RenderContext(operator_config=CKPT))
    assert err.value.path == path


# ---------------------------------------------------------------- precedence


def test_user_env_wins_and_appears_once():
    d = dcd(
        "frontend", main={"env": [{"name": "DYNAMO_PORT", "value": "9000"}, {"name": "MINE", "value": "x"}]}
    )
    e = env(d)
    assert e["DYNAMO_PORT"] == "9000" and e["MINE"] == "x"


def test_user_can_override_downward_api_env():
    d = dcd(main={"env": [{"name": "POD_NAME", "value": "fixed"}]})
    assert env(d)["POD_NAME"] == "fixed"


def test_main_container_merged_by_name_sidecars_untouched():
    side = {"name": "proxy", "image": "envoyproxy/envoy:v1.30", "args": ["-c", "/etc/envoy.yaml"]}
    d = dcd("worker", sidecars=[side], main={"args": ["--model", "m"], "resources": {"limits": {"cpu": "4"}}})
    containers = pod(d)["spec"]["containers"]
    assert [c["name"] for c in containers] == ["main", "proxy"]
    assert containers[1] == side  # no defaults at all
    assert containers[0]["args"] == ["--model", "m"]
    assert containers[0]["resources"] == {"limits": {"cpu": "4"}}
    assert containers[0]["image"] == IMAGE


def test_sidecar_without_image_is_an_error():
    d = dcd(sidecars=[{"name": "proxy"}])
    with pytest.raises(RenderError, match=r"containers\[proxy\].image"):
        objs(d)


def test_main_without_image_is_an_error():
    d = dcd()
    del d["spec"]["podTemplate"]["spec"]["containers"][0]["image"]
    with pytest.raises(RenderError, match=r"DynamoComponentDeployment ns/g-c: .*containers\[main\].image"):
        objs(d)


def test_user_ports_merge_by_name():
    d = dcd(
        "worker",
        main={"ports": [{"name": "system", "containerPort": 9191}, {"name": "extra", "containerPort": 1}]},
    )
    ports = {p["name"]: p["containerPort"] for p in main(d)["ports"]}
    assert ports == {"system": 9191, "nixl": 19090, "extra": 1}


def test_user_volumes_kept_and_mounts_without_volume_become_pvcs():
    d = dcd(main={"volumeMounts": [{"name": "models", "mountPath": "/models"}]})
    vols = pod(d)["spec"]["volumes"]
    assert {"name": "models", "persistentVolumeClaim": {"claimName": "models"}} in vols


# ---------------------------------------------------------------- ports and service accounts


@pytest.mark.parametrize(
    ("ctype", "ports"),
    [
        ("frontend", [("http", 8000)]),
        ("worker", [("system", 9090), ("nixl", 19090)]),
        ("prefill", [("system", 9090), ("nixl", 19090)]),
        ("decode", [("system", 9090), ("nixl", 19090)]),
        ("planner", [("metrics", 9085)]),
        ("epp", [("grpc", 9002), ("grpc-health", 9003), ("metrics", 9090)]),
    ],
)
def test_ports_per_type(ctype, ports):
    extra = {"eppConfig": {"config": {}}} if ctype == "epp" else {}
    got = main(dcd(ctype, **extra))["ports"]
    assert [(p["name"], p["containerPort"]) for p in got] == ports
    assert {p["protocol"] for p in got} == {"TCP"}


def test_untyped_component_has_no_ports_and_no_service():
    out = objs(dcd(None))
    assert "ports" not in one(out, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert not [o for o in out if o["kind"] == "Service"]


@pytest.mark.parametrize(
    ("ctype", "sa"), [("planner", "planner-serviceaccount"), ("epp", "epp-serviceaccount")]
)
def test_service_accounts(ctype, sa):
    extra = {"eppConfig": {"config": {}}} if ctype == "epp" else {}
    out = objs(dcd(ctype, **extra))
    assert one(out, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == sa
    accounts = [o["metadata"]["name"] for o in out if o["kind"] == "ServiceAccount"]
    assert accounts == ["g-k8s-service-discovery", sa]


@pytest.mark.parametrize("ctype", ["frontend", "worker", None])
def test_other_graph_components_run_as_the_discovery_account(ctype):
    out = objs(dcd(ctype))
    assert (
        one(out, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"] == "g-k8s-service-discovery"
    )
    assert one(out, "ServiceAccount")["metadata"]["name"] == "g-k8s-service-discovery"
    assert not [o for o in out if o["kind"] in ("Role", "RoleBinding")]  # no ClusterRole configured
    # the chart's discovery ClusterRole (its rules: _rbac.tpl discoveryRules), bound by name, never a Role
    ctx = RenderContext(operator_config={"rbac": {"discoveryClusterRoleName": "dp-discovery"}})
    bound = render_component(dcd(ctype), ctx)
    assert not [o for o in bound if o["kind"] == "Role"]
    binding = one(bound, "RoleBinding")
    assert binding["metadata"]["name"] == "g-k8s-service-discovery"
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "dp-discovery",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "g-k8s-service-discovery", "namespace": "ns"}
    ]
    if ctype:  # the Service's EndpointSlices inherit the labels the runtime watches
        service = one(out, "Service")
        assert service["metadata"]["labels"]["nvidia.com/dynamo-discovery-enabled"] == "true"


@pytest.mark.parametrize("ctype", ["frontend", "worker"])
def test_a_restricted_operator_binds_the_discovery_role_of_its_namespace(ctype):
    """Namespace-restricted: the chart's Role with the discovery rules (a restricted operator may bind no
    ClusterRole), in the graph's namespace, bound to the graph's account."""
    config = {"namespace": {"restricted": "ns"}, "rbac": {"discoveryRoleName": "dp-discovery"}}
    bound = render_component(dcd(ctype), RenderContext(operator_config=config))
    binding = one(bound, "RoleBinding")
    assert (binding["metadata"]["name"], binding["metadata"]["namespace"]) == (
        "g-k8s-service-discovery",
        "ns",
    )
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "dp-discovery"}
    assert binding["roleRef"] == ref
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "g-k8s-service-discovery", "namespace": "ns"}
    ]
    pod = one(bound, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "g-k8s-service-discovery"


def test_no_discovery_account_on_etcd_or_without_a_graph():
    etcd = dcd("worker")
    etcd["metadata"]["annotations"] = {"nvidia.com/dynamo-discovery-backend": "etcd"}
    out = objs(etcd)
    assert "serviceAccountName" not in one(out, "Deployment")["spec"]["template"]["spec"]
    assert not [o for o in out if o["kind"] in ("ServiceAccount", "Role", "RoleBinding")]
    standalone = dcd("worker", labels=None)
    standalone["metadata"]["labels"] = {}
    assert not [o for o in objs(standalone) if o["kind"] == "ServiceAccount"]


def test_user_service_account_wins():
    spec = pod(dcd("planner", pod={"serviceAccountName": "mine"}))["spec"]
    assert spec["serviceAccountName"] == "mine"


def test_input_is_not_mutated():
    d = dcd("worker", sharedMemorySize="1Gi")
    before = copy.deepcopy(d)
    objs(d)
    assert d == before
