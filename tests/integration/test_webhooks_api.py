"""The webhooks on a real kube-apiserver: it calls our server at ``https://127.0.0.1:PORT`` for admission and
for CRD conversion, with the CA bundle the operator's certificate manager injected itself.

Isolation from the rest of the session (the ``api`` cluster is shared):

* the Validating/MutatingWebhookConfigurations are this module's own (URL clientConfig, the injection and
  operator-namespace labels, a namespaceSelector matching only this module's namespace) and are deleted at
  the end;
* CRDs are cluster-scoped: the module installs them from ``crds/`` (server-side apply, idempotent), points the
  multi-version CRDs' conversion at its live server for the module's duration and restores each CRD's
  original ``spec.conversion`` at teardown, after deleting the objects it created. Other modules therefore
  see the CRDs exactly as generated (no webhook reachable), as before.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import datetime as dt
import json
import re
import subprocess
import threading
import uuid

import pytest
import yaml
from cryptography import x509
from dynamo_localcluster.cluster import free_port
from dynamo_localcluster.webhooks import url_webhook, webhook_configuration
from dynamo_operator.api import registry
from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE
from dynamo_operator.render import notices
from dynamo_operator.runtime.client import SECRETS as _SECRETS
from dynamo_operator.runtime.client import ResourceClient
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.runtime.settings import RuntimeSettings
from dynamo_operator.webhooks import CertPolicy, admission_routes, setup_webhooks
from dynamo_operator.webhooks.certs import CRDS, MUTATING, VALIDATING
from kubernetes import client
from kubernetes.client.rest import ApiException
from support import graphs
from support.crds import crd_docs, install_crds
from support.poll import wait_for

pytestmark = [pytest.mark.api, pytest.mark.slow]

GROUP = "nvidia.com"
UID = uuid.uuid4().hex[:6]
NS = f"wh-{UID}"
OPNS = f"wh-op-{UID}"
OPERATOR_SA = f"system:serviceaccount:{OPNS}:dynamo-operator"
PLANNER_SA = f"system:serviceaccount:{NS}:planner-serviceaccount"
ORIGIN = "nvidia.com/dynamo-operator-origin-version"


def _webhook_configs(port: int) -> tuple[dict, dict]:
    hooks: dict[str, list] = {"validate": [], "mutate": []}
    for path, (mode, kind, version) in sorted(admission_routes().items()):
        if mode == "mutate" and kind not in (
            "DynamoGraphDeployment",
            "DynamoComponentDeployment",
            "DynamoGraphDeploymentRequest",
        ):
            continue
        name = f"{mode[0]}{kind.lower()}-{version}.dynamo.nvidia.com"
        hooks[mode].append(url_webhook(port, path, mode, kind, version, name=name, namespace=NS))
    v = webhook_configuration("validate", f"wh-test-{UID}-validating", OPNS, hooks["validate"])
    m = webhook_configuration("mutate", f"wh-test-{UID}-mutating", OPNS, hooks["mutate"])
    return v, m


class Env:
    def __init__(self, api_cluster, mgr, wh, rc):
        self.cluster, self.mgr, self.wh, self.rc = api_cluster, mgr, wh, rc
        self.api = api_cluster.api_client()
        self.custom = client.CustomObjectsApi(self.api)

    def as_user(self, username: str) -> client.CustomObjectsApi:
        api = self.cluster.api_client()
        api.set_default_header("Impersonate-User", username)
        return client.CustomObjectsApi(api)

    def create(self, version: str, kind: str, body: dict, api=None) -> dict:
        body = copy.deepcopy(body)
        body.setdefault("apiVersion", f"{GROUP}/{version}")
        body.setdefault("kind", kind)
        return (api or self.custom).create_namespaced_custom_object(
            GROUP, version, NS, registry.KINDS[kind].plural, body
        )

    def get(self, version: str, kind: str, name: str) -> dict:
        return self.custom.get_namespaced_custom_object(GROUP, version, NS, registry.KINDS[kind].plural, name)

    def replace(self, version: str, kind: str, body: dict, api=None) -> dict:
        return (api or self.custom).replace_namespaced_custom_object(
            GROUP, version, NS, registry.KINDS[kind].plural, body["metadata"]["name"], body
        )

    def refused(self, fn) -> str:
        with pytest.raises(ApiException) as ei:
            fn()
        assert ei.value.status in (400, 403, 422), ei.value.body
        return json.loads(ei.value.body)["message"]


@pytest.fixture(scope="module")
def env(api_cluster):
    api = api_cluster.api_client()
    rc = ResourceClient(api)
    core = client.CoreV1Api(api)
    for ns in (NS, OPNS):
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))

    # CRDs: install (idempotent) and remember each one's conversion to restore it afterwards
    original: dict[str, dict] = {}
    for doc in crd_docs():
        name = doc["metadata"]["name"]
        try:
            original[name] = copy.deepcopy(rc.get(CRDS, name)["spec"].get("conversion"))
        except ApiException:
            original[name] = copy.deepcopy(doc["spec"].get("conversion"))
    install_crds(api_cluster, timeout=30)

    _grant_writers(client.RbacAuthorizationV1Api(api))
    settings = RuntimeSettings(
        metrics_bind_address="0",
        health_probe_bind_address="0",
        pod_namespace=OPNS,
    )
    mgr = Manager(settings, api_client=api_cluster.api_client())
    policy = CertPolicy(check_interval=1.0, reload_interval=0.5, ca_overlap=dt.timedelta(seconds=5))
    port = free_port()
    wh = setup_webhooks(
        mgr,
        # Grove off explicitly: left to auto-detection, the rules would follow whatever grove.io CRDs another
        # test module happens to have on the shared apiserver at that moment.
        {
            "server": {"webhook": {"certProvisionMode": "auto"}},
            "orchestrators": {"grove": {"enabled": False}},
        },
        host="127.0.0.1",
        port=port,
        url_base=f"https://127.0.0.1:{port}",
        policy=policy,
        extra_operator_usernames=(OPERATOR_SA,),
        checkpoint_enabled=True,
    )
    mgr.start()
    try:
        wait_for(wh.server.ready, what="the webhook server serving a certificate")
        assert wh.server.port == port
        for res, body in zip((VALIDATING, MUTATING), _webhook_configs(port), strict=True):
            rc.create(res, body)
        _point_conversions_at(rc, original, port)
        # Replacing the conversion above dropped each CRD's caBundle: conversions of that kind fail ("x509:
        # certificate signed by unknown authority") until the operator re-injects it (at once, through its
        # CRD watch). Wait for every patched CRD, not only the DGD the probe below converts.
        wait_for(
            lambda: _conversions_injected(rc, OPNS, port),
            what="the caBundle in every CRD's conversion",
            retry_on=(ApiException,),
        )
        e = Env(api_cluster, mgr, wh, rc)
        probe = dgd("probe")
        wait_for(
            lambda: e.custom.create_namespaced_custom_object(
                GROUP, "v1beta1", NS, "dynamographdeployments", probe, dry_run="All"
            ),
            timeout=60,
            what="admission and conversion through the webhook",
            retry_on=(ApiException,),
        )
        yield e
    finally:
        _teardown(rc, original)
        mgr.stop()
        for ns in (NS, OPNS):
            with contextlib.suppress(ApiException):
                core.delete_namespace(ns)


def _grant_writers(rbac: client.RbacAuthorizationV1Api) -> None:
    """RBAC for the impersonated service accounts (authorization runs before admission)."""
    rules = [
        client.V1PolicyRule(api_groups=[GROUP], resources=["*"], verbs=["get", "list", "update", "patch"])
    ]
    rbac.create_namespaced_role(NS, client.V1Role(metadata=client.V1ObjectMeta(name="writers"), rules=rules))
    subjects = [
        client.RbacV1Subject(kind="ServiceAccount", name="planner-serviceaccount", namespace=NS),
        client.RbacV1Subject(kind="ServiceAccount", name="dynamo-operator", namespace=OPNS),
        client.RbacV1Subject(kind="ServiceAccount", name="someone", namespace=NS),
    ]
    rbac.create_namespaced_role_binding(
        NS,
        client.V1RoleBinding(
            metadata=client.V1ObjectMeta(name="writers"),
            role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="writers"),
            subjects=subjects,
        ),
    )


def _point_conversions_at(rc: ResourceClient, original: dict[str, dict], port: int) -> None:
    """The multi-version CRDs convert through this module's server for its duration."""
    for name in original:
        doc = rc.get(CRDS, name)
        if len(doc["spec"]["versions"]) < 2:
            continue
        conv = {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"url": f"https://127.0.0.1:{port}/convert"},
            },
        }
        rc.patch(CRDS, name, [{"op": "replace", "path": "/spec/conversion", "value": conv}],
                 patch_type="application/json-patch+json")  # fmt: skip


def _conversions_injected(rc: ResourceClient, namespace: str, port: int) -> bool:
    """Every multi-version Dynamo CRD converts through our server with the CA the Secret publishes."""
    bundle = rc.get(_SECRETS, "webhook-server-cert", namespace)["data"]["ca.crt"]
    for doc in crd_docs():
        if len(doc["spec"]["versions"]) < 2:
            continue
        cc = rc.get(CRDS, doc["metadata"]["name"])["spec"]["conversion"]["webhook"]["clientConfig"]
        if cc.get("caBundle") != bundle or cc.get("url") != f"https://127.0.0.1:{port}/convert":
            return False
    return True


def _teardown(rc: ResourceClient, original: dict[str, dict]) -> None:
    custom = client.CustomObjectsApi(rc.api_client)
    for kind, info in registry.KINDS.items():
        if info.scope != "Namespaced" or kind.startswith("PodSnapshot"):
            continue
        with contextlib.suppress(ApiException):
            items = custom.list_namespaced_custom_object(GROUP, info.storage_version, NS, info.plural)[
                "items"
            ]
            for it in items:
                name = it["metadata"]["name"]
                with contextlib.suppress(ApiException):
                    if it["metadata"].get("finalizers"):
                        custom.patch_namespaced_custom_object(
                            GROUP,
                            info.storage_version,
                            NS,
                            info.plural,
                            name,
                            {"metadata": {"finalizers": None}},
                        )
                    custom.delete_namespaced_custom_object(GROUP, info.storage_version, NS, info.plural, name)
    for res, name in ((VALIDATING, f"wh-test-{UID}-validating"), (MUTATING, f"wh-test-{UID}-mutating")):
        with contextlib.suppress(ApiException):
            rc.delete(res, name)
    for name, conv in original.items():
        with contextlib.suppress(ApiException):
            rc.patch(CRDS, name, [{"op": "replace", "path": "/spec/conversion", "value": conv}],
                     patch_type="application/json-patch+json")  # fmt: skip


# ------------------------------------------------------------------------------------------------------------
# samples


def main_container(image: str = "vllm:1") -> dict:
    return {"spec": {"containers": [{"name": "main", "image": image}]}}


def dgd(name: str, components: list | None = None, **spec) -> dict:
    """A vLLM graph as a user applies it (no namespace): a Frontend and a VllmWorker unless ``components``."""
    if components is None:
        components = [
            {"name": "Frontend", "type": "frontend"},
            graphs.component("VllmWorker", image="vllm:1"),
        ]
    return graphs.dgd(*components, name=name, namespace=None, **{"backendFramework": "vllm", **spec})


def dgd_alpha(name: str, services: dict) -> dict:
    return graphs.dgd_v1alpha1(services, name=name, namespace=None, backendFramework="vllm")


def multinode_worker(backend: str, args: list[str], gpus: str | None = "8", nodes: int = 2) -> dict:
    command = ["python3", "-m", f"dynamo.{backend}"]
    return graphs.component(
        "Worker", image=f"{backend}:1", command=command, args=args, gpus=gpus, nodes=nodes
    )


def epp(**extra) -> dict:
    return {"name": "Epp", "type": "epp", **extra}


# ------------------------------------------------------------------------------------------------------------
# validation: each rule refused with its message


CREATE_CASES = [
    (
        "no-components",
        "v1beta1",
        dgd("no-components", components=[]),
        ["spec.components: Required value: a DynamoGraphDeployment needs at least one component"],
    ),
    (
        "names-unique",
        "v1alpha1",
        dgd_alpha("names-unique", {"Frontend": {"componentType": "frontend"}, "frontend": {}}),
        ['Duplicate value: "frontend": component names must be unique ignoring case'],
    ),
    (
        "one-epp",
        "v1alpha1",
        dgd_alpha(
            "one-epp",
            {
                "EppA": {
                    "componentType": "epp",
                    "eppConfig": {"configMapRef": {"name": "a", "key": "epp.yaml"}},
                },
                "EppB": {
                    "componentType": "epp",
                    "eppConfig": {"configMapRef": {"name": "b", "key": "epp.yaml"}},
                },
            },
        ),
        ["Too many", "at most one component may have type epp"],
    ),
    (
        "epp-needs-config",
        "v1beta1",
        dgd("epp-needs-config", components=[epp()]),
        ["spec.components[0].eppConfig: Required value: an epp component needs eppConfig"],
    ),
    (
        "epp-config-exclusive",
        "v1beta1",
        dgd(
            "epp-config-exclusive",
            components=[epp(eppConfig={"configMapRef": {"name": "x", "key": "k"}, "config": {}})],
        ),
        ["spec.components[0].eppConfig: Invalid value: configMapRef and config are mutually exclusive"],
    ),
    (
        "epp-one-replica",
        "v1beta1",
        dgd("epp-one-replica", components=[epp(replicas=2, eppConfig={"config": {"a": 1}})]),
        ["spec.components[0].replicas: Invalid value: 2: an epp component runs exactly one replica"],
    ),
    (
        "shm",
        "v1beta1",
        dgd("shm", components=[{"name": "w", "type": "worker", "sharedMemorySize": "-1Gi"}]),
        ['spec.components[0].sharedMemorySize: Invalid value: "-1Gi": must be 0 or more'],
    ),
    (
        "shm-alpha-path",
        "v1alpha1",
        dgd_alpha("shm-alpha-path", {"Worker": {"sharedMemory": {"size": "-2Gi"}}}),
        ['spec.services[Worker].sharedMemory.size: Invalid value: "-2Gi"'],
    ),
    (
        "min-available",
        "v1beta1",
        dgd("min-available", components=[{"name": "w", "type": "worker", "minAvailable": 1}]),
        ["spec.components[0].minAvailable: Forbidden: minAvailable is only supported when the deployment"],
    ),
    (
        "frontend-sidecar",
        "v1beta1",
        dgd(
            "frontend-sidecar",
            components=[
                {"name": "f", "type": "frontend", "frontendSidecar": "fe", "podTemplate": main_container()}
            ],
        ),
        ['spec.components[0].frontendSidecar: Not found: "fe": must name a container in podTemplate'],
    ),
    (
        "sidecar-image",
        "v1beta1",
        dgd(
            "sidecar-image",
            components=[
                {"name": "w", "podTemplate": {"spec": {"containers": [{"name": "main"}, {"name": "log"}]}}}
            ],
        ),
        ['spec.components[0].podTemplate.spec.containers[1].image: Required value: container "log"'],
    ),
    (
        "dcd-min-available",
        "v1beta1",
        {
            "kind": "DynamoComponentDeployment",
            "metadata": {"name": "dcd-min-available"},
            "spec": {"backendFramework": "vllm", "minAvailable": 2},
        },
        ["spec.minAvailable: Forbidden: minAvailable applies only to components of a Grove-backed"],
    ),
    (
        "model-lora-source",
        "v1alpha1",
        {
            "kind": "DynamoModel",
            "metadata": {"name": "model-lora-source"},
            "spec": {"modelName": "m-lora", "baseModelName": "m", "modelType": "lora"},
        },
        ["spec.source: Required value: a lora model needs spec.source.uri"],
    ),
    (
        "model-uri",
        "v1alpha1",
        {
            "kind": "DynamoModel",
            "metadata": {"name": "model-uri"},
            "spec": {
                "modelName": "m-lora",
                "baseModelName": "m",
                "modelType": "lora",
                "source": {"uri": "ftp://x"},
            },
        },
        ['spec.source.uri: Invalid value: "ftp://x": unsupported URI scheme'],
    ),
    (
        "checkpoint-target",
        "v1alpha1",
        {
            "kind": "DynamoCheckpoint",
            "metadata": {"name": "checkpoint-target"},
            "spec": {
                "identity": {"model": "m", "backendFramework": "vllm"},
                "job": {
                    "podTemplateSpec": {"spec": {"containers": [{"name": "main", "image": "i"}]}},
                    "targetContainerName": "worker",
                },
            },
        },
        ['spec.job.targetContainerName: Not found: "worker": must name a container'],
    ),
    # multinode shapes that cannot launch (the rules are the renderer's: render.multinode)
    (
        "multinode-nnodes-conflict",
        "v1beta1",
        dgd(
            "multinode-nnodes-conflict",
            components=[multinode_worker("sglang", ["--model", "m", "--nnodes", "3"])],
            backendFramework="sglang",
        ),
        [
            'spec.components[0].podTemplate.spec.containers[0].args: Invalid value: "--nnodes 3": '
            "conflicts with the multinode launch, which needs --nnodes 2 (multinode.nodeCount is 2); "
            "remove --nnodes or set it to 2"
        ],
    ),
    (
        "checkpoint-volume-clash",
        "v1beta1",
        dgd(
            "checkpoint-volume-clash",
            components=[
                {
                    "name": "VllmWorker",
                    "type": "worker",
                    "experimental": {"checkpoint": {"enabled": True}},
                    "podTemplate": {
                        "spec": {
                            "containers": [{"name": "main", "image": "vllm:1"}],
                            "volumes": [{"name": "checkpoint-storage", "emptyDir": {}}],
                        }
                    },
                }
            ],
        ),
        [
            'spec.components[0].podTemplate.spec.volumes[0].name: Invalid value: "checkpoint-storage": '
            "'checkpoint-storage' is the name of the operator's checkpoint volume",
            "rename this volume (and the mounts that use it)",
        ],
    ),
    (
        "checkpoint-volume-clash-alpha",
        "v1alpha1",
        dgd_alpha(
            "checkpoint-volume-clash-alpha",
            {
                "VllmWorker": {
                    "componentType": "worker",
                    "checkpoint": {"enabled": True},
                    "extraPodSpec": {
                        "volumes": [{"name": "checkpoint-storage", "emptyDir": {}}],
                        "mainContainer": {"image": "vllm:1"},
                    },
                }
            },
        ),
        ['spec.services[VllmWorker].extraPodSpec.volumes[0].name: Invalid value: "checkpoint-storage"'],
    ),
    (
        "multinode-frontend",
        "v1beta1",
        dgd(
            "multinode-frontend",
            components=[{"name": "Frontend", "type": "frontend", "multinode": {"nodeCount": 2}}],
        ),
        [
            "spec.components[0].multinode: Forbidden: only worker, prefill and decode components run across "
            "nodes (this one is frontend); remove multinode, or set type to worker, prefill or decode"
        ],
    ),
    (
        "multinode-vllm-no-gpus",
        "v1beta1",
        dgd(
            "multinode-vllm-no-gpus",
            components=[multinode_worker("vllm", ["--tensor-parallel-size", "16"], gpus=None)],
        ),
        [
            "spec.components[0].podTemplate.spec.containers[0].resources: Required value: multinode vLLM "
            "needs the GPU count of one node"
        ],
    ),
    # GPU memory service / failover (render.gms.problems) and the EPP's InferencePool API (not served here)
    (
        "gms-inter-pod",
        "v1beta1",
        dgd(
            "gms-inter-pod",
            components=[
                {
                    "name": "w",
                    "type": "worker",
                    "experimental": {"gpuMemoryService": {"mode": "InterPod"}},
                    "podTemplate": main_container(),
                }
            ],
        ),
        [
            "spec.components[0].experimental.gpuMemoryService.mode: Unsupported value: "
            '"InterPod": inter-pod GMS',
            "spec.components[0].podTemplate.spec.containers[0].resources: Required value: GPU memory service",
        ],
    ),
    (
        "failover-alpha-paths",
        "v1alpha1",
        dgd_alpha(
            "failover-alpha-paths",
            {"Worker": {"componentType": "worker", "failover": {"enabled": True, "numShadows": 2}}},
        ),
        ["spec.services[Worker].failover.numShadows: Invalid value: 2: intra-pod failover runs exactly one"],
    ),
    (
        "epp-needs-the-pool-api",
        "v1beta1",
        dgd(
            "epp-needs-the-pool-api", components=[epp(eppConfig={"config": {}}, podTemplate=main_container())]
        ),
        [
            'spec.components[0].type: Forbidden: "epp": an epp component needs the Gateway API Inference '
            "Extension's InferencePool API (inference.networking.k8s.io/v1)"
        ],
    ),
    (
        "pod-snapshot-refused",
        "v1alpha1",
        {
            "kind": "PodSnapshot",
            "metadata": {"name": "pod-snapshot-refused"},
            "spec": {"source": {"podRef": {"name": "worker-0"}}},
        },
        [
            "spec.source: Forbidden: pod snapshots are not captured by this operator",
            "checkpoint a component with a DynamoCheckpoint",
        ],
    ),
]


@pytest.mark.parametrize("name,version,body,expected", CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_create_rule_refused_with_its_message(env, name, version, body, expected):
    kind = body.get("kind", "DynamoGraphDeployment")
    msg = env.refused(lambda: env.create(version, kind, body))
    assert "denied the request" in msg, msg
    for text in expected:
        assert text in msg, msg


def test_multinode_graphs_that_can_launch_are_admitted(env):
    """One per backend: the same rules that refuse the shapes above let these through unchanged."""
    for name, backend, args in (
        ("multinode-ok-vllm", "vllm", ["--tensor-parallel-size", "16"]),
        # TP 4 fits one node of 8 GPUs: upstream deploys it (each node runs its own engine as written)
        ("multinode-ok-vllm-per-node", "vllm", ["--tensor-parallel-size", "4"]),
        ("multinode-ok-sglang", "sglang", ["--model", "m", "--nnodes", "2"]),  # own --nnodes 2 is fine
        ("multinode-ok-trtllm", "trtllm", ["--model", "m"]),
    ):
        body = dgd(name, components=[multinode_worker(backend, args)], backendFramework=backend)
        env.create("v1beta1", "DynamoGraphDeployment", body)
        stored = env.get("v1beta1", "DynamoGraphDeployment", name)
        assert stored["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["args"] == args


def test_all_errors_of_a_request_are_reported_together(env):
    body = dgd(
        "many-errors",
        components=[
            {"name": "w", "type": "worker", "sharedMemorySize": "-1", "minAvailable": 1},
            epp(),
        ],
    )
    msg = env.refused(lambda: env.create("v1beta1", "DynamoGraphDeployment", body))
    for path in (
        "spec.components[0].sharedMemorySize",
        "spec.components[0].minAvailable",
        "spec.components[1].eppConfig",
    ):
        assert path in msg, msg


# ------------------------------------------------------------------------------------------------------------
# defaulting


def test_defaults_are_visible_on_stored_objects(env):
    env.create("v1beta1", "DynamoGraphDeployment", dgd("defaults"))
    got = env.get("v1beta1", "DynamoGraphDeployment", "defaults")
    assert [c.get("replicas") for c in got["spec"]["components"]] == [1, 1]
    assert got["metadata"]["annotations"][ORIGIN] == env.mgr.settings.operator_version

    env.create("v1alpha1", "DynamoGraphDeployment", dgd_alpha("defaults-alpha", {"Frontend": {}}))
    got = env.get("v1alpha1", "DynamoGraphDeployment", "defaults-alpha")
    assert got["spec"]["services"]["Frontend"]["replicas"] == 1
    assert ORIGIN in got["metadata"]["annotations"]

    dcd = {"metadata": {"name": "standalone"}, "spec": {"backendFramework": "sglang", "type": "worker"}}
    env.create("v1beta1", "DynamoComponentDeployment", dcd)
    got = env.get("v1beta1", "DynamoComponentDeployment", "standalone")
    assert got["spec"]["name"] == "standalone" and got["spec"]["replicas"] == 1


def test_existing_annotation_is_kept(env):
    body = dgd("keeps-origin")
    body["metadata"]["annotations"] = {ORIGIN: "0.9.0"}
    env.create("v1beta1", "DynamoGraphDeployment", body)
    got = env.get("v1beta1", "DynamoGraphDeployment", "keeps-origin")
    assert got["metadata"]["annotations"][ORIGIN] == "0.9.0"


# ------------------------------------------------------------------------------------------------------------
# update rules


def test_update_rules(env):
    comps = [
        {"name": "Frontend", "type": "frontend"},
        {
            "name": "Worker",
            "type": "worker",
            "replicas": 2,
            "scalingAdapter": {},
            "podTemplate": main_container(),
        },
    ]
    env.create("v1beta1", "DynamoGraphDeployment", dgd("upd", components=comps))
    cur = env.get("v1beta1", "DynamoGraphDeployment", "upd")

    added = copy.deepcopy(cur)
    added["spec"]["components"].append({"name": "Planner", "type": "planner"})
    msg = env.refused(lambda: env.replace("v1beta1", "DynamoGraphDeployment", added))
    assert (
        "spec.components: Forbidden: the set of components cannot change after creation (added: Planner)"
        in msg
    )

    backend = copy.deepcopy(cur)
    backend["spec"]["backendFramework"] = "sglang"
    msg = env.refused(lambda: env.replace("v1beta1", "DynamoGraphDeployment", backend))
    assert 'spec.backendFramework: Invalid value: "sglang": is immutable (was "vllm")' in msg

    multi = copy.deepcopy(cur)
    multi["spec"]["components"][1]["multinode"] = {"nodeCount": 2}
    msg = env.refused(lambda: env.replace("v1beta1", "DynamoGraphDeployment", multi))
    assert "spec.components[1].multinode: Forbidden: a component cannot switch between single-node and" in msg

    scaled = copy.deepcopy(cur)
    scaled["spec"]["components"][1]["replicas"] = 5
    msg = env.refused(lambda: env.replace("v1beta1", "DynamoGraphDeployment", scaled))
    assert "spec.components[1].replicas: Forbidden: replicas of a component with scalingAdapter" in msg
    someone = env.as_user(f"system:serviceaccount:{NS}:someone")
    msg = env.refused(lambda: env.replace("v1beta1", "DynamoGraphDeployment", scaled, api=someone))
    assert "scalingAdapter" in msg

    planner = env.as_user(PLANNER_SA)
    env.replace("v1beta1", "DynamoGraphDeployment", scaled, api=planner)
    cur = env.get("v1beta1", "DynamoGraphDeployment", "upd")
    assert cur["spec"]["components"][1]["replicas"] == 5
    cur["spec"]["components"][1]["replicas"] = 3
    env.replace("v1beta1", "DynamoGraphDeployment", cur, api=env.as_user(OPERATOR_SA))
    cur = env.get("v1beta1", "DynamoGraphDeployment", "upd")
    assert cur["spec"]["components"][1]["replicas"] == 3

    # replicas of a component without scalingAdapter: anyone may change them
    cur["spec"]["components"][0]["replicas"] = 4
    env.replace("v1beta1", "DynamoGraphDeployment", cur)


def test_terminating_object_is_never_blocked(env):
    body = dgd("terminating")
    body["metadata"]["finalizers"] = ["nvidia.com/finalizer"]
    env.create("v1beta1", "DynamoGraphDeployment", body)
    env.custom.delete_namespaced_custom_object(GROUP, "v1beta1", NS, "dynamographdeployments", "terminating")
    cur = env.get("v1beta1", "DynamoGraphDeployment", "terminating")
    assert cur["metadata"].get("deletionTimestamp")
    cur["spec"]["backendFramework"] = "trtllm"  # refused on a live object
    cur = env.replace("v1beta1", "DynamoGraphDeployment", cur)
    cur["metadata"]["finalizers"] = []
    env.replace("v1beta1", "DynamoGraphDeployment", cur)
    with pytest.raises(ApiException) as ei:
        env.get("v1beta1", "DynamoGraphDeployment", "terminating")
    assert ei.value.status == 404


def test_dgdr_spec_frozen_once_profiling_started(env):
    body = {"metadata": {"name": "req"}, "spec": {"model": "Qwen/Qwen3-0.6B", "backend": "vllm"}}
    env.create("v1beta1", "DynamoGraphDeploymentRequest", body)
    cur = env.get("v1beta1", "DynamoGraphDeploymentRequest", "req")
    cur["spec"]["backend"] = "sglang"
    cur = env.replace("v1beta1", "DynamoGraphDeploymentRequest", cur)  # Pending: may change
    cur["status"] = {"phase": "Profiling"}
    cur = env.custom.replace_namespaced_custom_object_status(
        GROUP, "v1beta1", NS, "dynamographdeploymentrequests", "req", cur
    )
    cur["spec"]["backend"] = "vllm"
    msg = env.refused(lambda: env.replace("v1beta1", "DynamoGraphDeploymentRequest", cur))
    assert "spec: Forbidden: the spec cannot change once profiling has started (now Profiling)" in msg
    # metadata-only updates stay possible
    cur = env.get("v1beta1", "DynamoGraphDeploymentRequest", "req")
    cur["metadata"].setdefault("labels", {})["team"] = "a"
    env.replace("v1beta1", "DynamoGraphDeploymentRequest", cur)


def test_dgdr_with_only_a_model_is_admitted_with_the_default_profiler(env):
    """The seed's one required field is enough: admission writes the profiler image in, visible in both
    versions."""
    env.create(
        "v1beta1", "DynamoGraphDeploymentRequest", {"metadata": {"name": "bare"}, "spec": {"model": "m"}}
    )
    assert env.get("v1beta1", "DynamoGraphDeploymentRequest", "bare")["spec"] == {
        "model": "m",
        "image": DEFAULT_PROFILER_IMAGE,
    }
    alpha = env.get("v1alpha1", "DynamoGraphDeploymentRequest", "bare")["spec"]
    assert alpha["profilingConfig"] == {"profilerImage": DEFAULT_PROFILER_IMAGE}


def test_dgdr_fields_that_would_not_act_are_refused(env):
    body = {
        "metadata": {"name": "thorough"},
        "spec": {"model": "m", "backend": "auto", "searchStrategy": "thorough"},
    }
    msg = env.refused(lambda: env.create("v1beta1", "DynamoGraphDeploymentRequest", body))
    assert 'spec.searchStrategy: Forbidden: searchStrategy "thorough" benchmarks real engines' in msg
    config = {"sweep": {"useAiConfigurator": True}}
    spec = {"model": "m", "backend": "vllm", "profilingConfig": {"profilerImage": "p:1", "config": config}}
    msg = env.refused(
        lambda: env.create(
            "v1alpha1", "DynamoGraphDeploymentRequest", {"metadata": {"name": "sweep"}, "spec": spec}
        )
    )
    assert (
        "spec.profilingConfig.config.sweep.useAiConfigurator: Unsupported value: not passed to the profiler"
        in msg
    )


def test_dynamomodel_immutable_fields(env):
    body = {"metadata": {"name": "mdl"}, "spec": {"modelName": "llama", "baseModelName": "llama"}}
    env.create("v1alpha1", "DynamoModel", body)
    cur = env.get("v1alpha1", "DynamoModel", "mdl")
    cur["spec"]["baseModelName"] = "other"
    msg = env.refused(lambda: env.replace("v1alpha1", "DynamoModel", cur))
    assert 'spec.baseModelName: Invalid value: "other": is immutable (was "llama")' in msg


# ------------------------------------------------------------------------------------------------------------
# conversion


ALPHA_RICH = {
    "metadata": {"name": "roundtrip", "labels": {"team": "a"}},
    "spec": {
        "backendFramework": "vllm",
        "envs": [{"name": "GLOBAL", "value": "1"}],
        "services": {
            "Frontend": {
                "componentType": "frontend",
                "replicas": 1,
                "dynamoNamespace": "legacy",
                "extraPodSpec": {"mainContainer": {"image": "frontend:1"}},
            },
            "VllmDecodeWorker": {
                "componentType": "worker",
                "subComponentType": "decode",
                "replicas": 2,
                "resources": {"limits": {"gpu": "1"}},
                "sharedMemory": {"size": "16Gi"},
                "envs": [{"name": "A", "value": "1"}],
                "scalingAdapter": {"enabled": True},
                "extraPodSpec": {
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                    "mainContainer": {"image": "vllm:1", "args": ["--model", "m"]},
                },
            },
        },
    },
}


def test_v1alpha1_reads_back_as_v1beta1_and_round_trips(env):
    env.create("v1alpha1", "DynamoGraphDeployment", ALPHA_RICH)
    beta = env.get("v1beta1", "DynamoGraphDeployment", "roundtrip")
    assert beta["apiVersion"] == f"{GROUP}/v1beta1"
    comps = {c["name"]: c for c in beta["spec"]["components"]}
    assert set(comps) == {"Frontend", "VllmDecodeWorker"}
    worker = comps["VllmDecodeWorker"]
    assert worker["type"] == "decode" and worker["sharedMemorySize"] == "16Gi"
    assert worker["scalingAdapter"] == {}
    main = worker["podTemplate"]["spec"]["containers"][0]
    assert main["name"] == "main" and main["image"] == "vllm:1"
    assert beta["spec"]["env"] == [{"name": "GLOBAL", "value": "1"}]

    alpha = env.get("v1alpha1", "DynamoGraphDeployment", "roundtrip")
    assert alpha["spec"] == ALPHA_RICH["spec"]

    # write it back through v1beta1 (operator identity: the adapter-owned replicas stay as they are)
    env.replace("v1beta1", "DynamoGraphDeployment", beta)
    alpha2 = env.get("v1alpha1", "DynamoGraphDeployment", "roundtrip")
    assert alpha2["spec"] == ALPHA_RICH["spec"]
    assert alpha2["metadata"]["labels"] == {"team": "a"}


def test_dgdsa_field_rename_through_conversion(env):
    body = {
        "metadata": {"name": "adapter"},
        "spec": {"replicas": 2, "dgdRef": {"name": "roundtrip", "componentName": "VllmDecodeWorker"}},
    }
    env.create("v1beta1", "DynamoGraphDeploymentScalingAdapter", body)
    alpha = env.get("v1alpha1", "DynamoGraphDeploymentScalingAdapter", "adapter")
    assert alpha["spec"]["dgdRef"] == {"name": "roundtrip", "serviceName": "VllmDecodeWorker"}


# ------------------------------------------------------------------------------------------------------------
# certificates


def _bundle(env) -> list[x509.Certificate]:
    data = env.rc.get(_SECRETS, "webhook-server-cert", OPNS)["data"]
    return x509.load_pem_x509_certificates(base64.b64decode(data["ca.crt"]))


def test_certificate_secret_and_injected_ca_bundles(env):
    secret = env.rc.get(_SECRETS, "webhook-server-cert", OPNS)
    assert secret["type"] == "kubernetes.io/tls"
    assert set(secret["data"]) >= {"tls.crt", "tls.key", "ca.crt", "ca.key"}
    cert = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"dynamo-operator-webhook-service.{OPNS}.svc" in sans.get_values_for_type(x509.DNSName)
    assert "127.0.0.1" in [str(i) for i in sans.get_values_for_type(x509.IPAddress)]
    bundle = secret["data"]["ca.crt"]
    for res, name in ((VALIDATING, f"wh-test-{UID}-validating"), (MUTATING, f"wh-test-{UID}-mutating")):
        cfg = env.rc.get(res, name)
        assert all(h["clientConfig"]["caBundle"] == bundle for h in cfg["webhooks"])
    crd = env.rc.get(CRDS, "dynamographdeployments.nvidia.com")
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] == bundle


def test_rotation_in_a_stream_of_admissions_loses_none(env):
    failures: list[str] = []
    done = threading.Event()
    count = [0]

    def stream() -> None:
        i = 0
        while not done.is_set():
            name = f"stream-{i}"
            try:
                env.create("v1beta1", "DynamoGraphDeployment", dgd(name))  # mutate + validate + convert
                env.get("v1beta1", "DynamoGraphDeployment", name)  # convert back
                env.custom.delete_namespaced_custom_object(
                    GROUP, "v1beta1", NS, "dynamographdeployments", name
                )
            except ApiException as e:
                failures.append(f"{name}: {e.status} {e.body}")
            i += 1
            count[0] = i

    t = threading.Thread(target=stream, daemon=True)
    t.start()
    try:
        wait_for(lambda: count[0] >= 3, what="the stream to run")
        first_serial = env.wh.tls.serial
        first_ca = _bundle(env)[0]

        env.wh.certs.rotate_serving()
        wait_for(lambda: env.wh.tls.serial != first_serial, what="a new serving certificate")
        second_serial = env.wh.tls.serial
        at = count[0]
        wait_for(lambda: count[0] >= at + 3, what="admissions after the serving rotation")

        env.wh.certs.rotate_ca()
        wait_for(lambda: len(_bundle(env)) == 2, what="new + old CA published")
        wait_for(lambda: env.wh.tls.serial != second_serial, timeout=30, what="serving cert from the new CA")
        wait_for(
            lambda: len(_bundle(env)) == 1 and _bundle(env)[0].serial_number != first_ca.serial_number,
            timeout=30,
            what="the old CA dropped",
        )
        at = count[0]
        wait_for(lambda: count[0] >= at + 5, what="admissions after the CA rotation")
    finally:
        done.set()
        t.join(30)
    assert not failures, failures[:3]
    assert count[0] >= 10


def test_a_new_or_reset_webhook_configuration_gets_the_bundle_at_once(api_cluster):
    """The periodic check stays at its default (a minute): only the watch can make these waits pass."""
    from dynamo_operator.webhooks.certs import CertManager, TLSContextHolder

    rc = ResourceClient(api_cluster.api_client())
    opns = f"wh-watch-{UID}"
    client.CoreV1Api(rc.api_client).create_namespace(
        client.V1Namespace(metadata=client.V1ObjectMeta(name=opns))
    )
    certs = CertManager(rc, opns, ["127.0.0.1"], TLSContextHolder(), inject_crds=False)
    assert certs.policy.check_interval >= 60
    # the first reconcile is over once the leader loop waits: an injection after that is the watch's
    periodic_wait = threading.Event()
    wait_between_checks = certs._sleep

    def observed_wait(stop: threading.Event, seconds: float) -> None:
        periodic_wait.set()
        wait_between_checks(stop, seconds)

    certs._sleep = observed_wait
    stop = threading.Event()
    threads = [
        threading.Thread(target=fn, args=(stop,), daemon=True) for fn in (certs.run_leader, certs.run_watcher)
    ]
    for t in threads:
        t.start()
    hook = url_webhook(
        1, "/validate", "validate", "DynamoGraphDeployment", "v1beta1", name="w.dynamo.nvidia.com",
        namespace=f"nowhere-{UID}",  # matches no namespace: the shared cluster's admissions never reach it
    )  # fmt: skip
    name = f"wh-watch-{UID}"
    try:
        wait_for(lambda: certs.bundle, what="the CA of the first reconcile")
        wait_for(periodic_wait.is_set, 10, "the leader loop in its minute-long wait")
        b64 = base64.b64encode(certs.bundle).decode()

        def bundle_of() -> str | None:
            return rc.get(VALIDATING, name)["webhooks"][0]["clientConfig"].get("caBundle")

        rc.create(VALIDATING, webhook_configuration("validate", name, opns, [hook]))
        wait_for(lambda: bundle_of() == b64, timeout=10, what="the bundle injected into a new configuration")

        cfg = rc.get(VALIDATING, name)
        del cfg["webhooks"][0]["clientConfig"][
            "caBundle"
        ]  # what `kubectl replace -f` of the chart's file does
        rc.replace(VALIDATING, cfg)
        wait_for(lambda: bundle_of() == b64, timeout=10, what="the bundle injected again after a reset")
    finally:
        stop.set()
        for t in threads:
            t.join(10)
        with contextlib.suppress(ApiException):
            rc.delete(VALIDATING, name)
        with contextlib.suppress(ApiException):
            client.CoreV1Api(rc.api_client).delete_namespace(opns)


# ------------------------------------------------------------------------------------------------------------
# privileged pod template settings (webhooks/validation/pod_privileges.py; the default action, Warn)


def _warnings(headers) -> list[str]:
    """The webhook's field warnings of a response, from its ``Warning: 299 - "<text>"`` headers as kubectl
    prints them (urllib3 joins repeated headers with ", "); the API server's deprecation notice for
    v1alpha1 left out."""
    raw = headers.get("Warning") if headers else None
    found = [m.replace('\\"', '"') for m in re.findall(r'299 - "((?:[^"\\]|\\.)*)"', raw or "")]
    return [w for w in found if w.startswith("spec.")]


def test_privileged_pod_template_settings_are_warned_through_the_api_server(env):
    """Through the real API server: each setting comes back as a warning naming its field (in the
    version written), the object is stored; the operator's own writes get none."""
    pod = {
        "spec": {
            "hostNetwork": True,
            "serviceAccountName": "cluster-reader",
            "containers": [{"name": "main", "image": "vllm:1", "securityContext": {"privileged": True}}],
        }
    }
    body = dgd("privileged", components=[{"name": "Worker", "type": "worker", "podTemplate": pod}])
    body["apiVersion"], body["kind"] = f"{GROUP}/v1beta1", "DynamoGraphDeployment"
    _, status, headers = env.custom.create_namespaced_custom_object_with_http_info(
        GROUP, "v1beta1", NS, "dynamographdeployments", body
    )
    p = "spec.components[0].podTemplate.spec"
    assert status == 201
    assert [w.split(": ", 1)[0] for w in _warnings(headers)] == [
        f"{p}.hostNetwork",
        f"{p}.containers[0].securityContext.privileged",
        f"{p}.serviceAccountName",
    ], headers
    assert "security.workloads.podTemplates" in _warnings(headers)[0]

    dcd = {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "hostnet"},
        "spec": {
            "backendFramework": "vllm",
            "componentType": "worker",
            "extraPodSpec": {"hostNetwork": True, "mainContainer": {"image": "vllm:1"}},
        },
    }
    _, _, headers = env.custom.create_namespaced_custom_object_with_http_info(
        GROUP, "v1alpha1", NS, "dynamocomponentdeployments", dcd
    )
    assert [w.split(": ", 1)[0] for w in _warnings(headers)] == ["spec.extraPodSpec.hostNetwork"]
    for user, expected in ((OPERATOR_SA, 0), (f"system:serviceaccount:{NS}:someone", 1)):
        cur = env.get("v1alpha1", "DynamoComponentDeployment", "hostnet")
        cur["spec"]["replicas"] = 2 + expected
        _, _, headers = env.as_user(user).replace_namespaced_custom_object_with_http_info(
            GROUP, "v1alpha1", NS, "dynamocomponentdeployments", "hostnet", cur
        )
        assert len(_warnings(headers)) == expected, (user, headers)


# ------------------------------------------------------------------------------------------------------------
# accepted, with a field that has no effect (render/notices.py): the warning kubectl prints


def kubectl_apply(env, body: dict) -> subprocess.CompletedProcess[str]:
    """``kubectl apply`` of ``body`` in ``NS``: what a user sees, the AdmissionReview warnings on stderr."""
    return subprocess.run(
        ["kubectl", "apply", "-n", NS, "-f", "-"],
        input=yaml.safe_dump(body),
        env=env.cluster.env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_kubectl_prints_the_warning_of_a_field_with_no_effect(env):
    """``kubectl apply`` of a graph whose worker carries an eppConfig (upstream accepts it and reads it only
    for an epp component): stored, and kubectl prints ``Warning: <field>: <why>`` from the AdmissionReview's
    ``warnings``, in the version written, the same text ``render.notices.warnings`` gives."""
    worker = graphs.component("Worker", image="vllm:1", eppConfig={"config": {"a": 1}})
    beta = dgd("noeffect", components=[{"name": "Frontend", "type": "frontend"}, worker])
    alpha = graphs.dgd_v1alpha1(
        {"Worker": {"componentType": "worker", "eppConfig": {"config": {"a": 1}}}},
        name="noeffect-alpha",
        namespace=None,
        backendFramework="vllm",
    )
    for body in (beta, alpha):
        proc = kubectl_apply(env, body)
        assert proc.returncode == 0, proc.stderr
        (text,) = notices.warnings(body)
        assert f"Warning: {text}" in proc.stderr.splitlines(), proc.stderr
        assert "eppConfig: has no effect unless type is epp" in text
        version = body["apiVersion"].rpartition("/")[2]
        assert env.get(version, "DynamoGraphDeployment", body["metadata"]["name"])  # stored


def test_kubectl_prints_the_ingress_only_settings_a_virtual_service_ignores(env):
    """A v1alpha1 frontend with ``useVirtualService`` beside ``ingressControllerClassName`` and
    ``tls.secretName`` (upstream renders the VirtualService and ignores both): stored, and kubectl prints
    a Warning for each, the text ``render.notices.warnings`` gives (render's stderr and the Event say it
    too: tests/unit/test_render_ingress.py)."""
    ingress = {
        "enabled": True,
        "host": "api",
        "useVirtualService": True,
        "virtualServiceGateway": "istio-system/gw",
        "ingressControllerClassName": "nginx",
        "tls": {"secretName": "api-tls"},
    }
    body = dgd_alpha("vs-ingress-only", {"Frontend": {"componentType": "frontend", "ingress": ingress}})
    proc = kubectl_apply(env, body)
    assert proc.returncode == 0, proc.stderr
    texts = notices.warnings(body)
    assert [t.split(": ", 1)[0] for t in texts] == [
        "spec.services[Frontend].ingress.ingressControllerClassName",
        "spec.services[Frontend].ingress.tls.secretName",
    ]
    for text in texts:
        assert f"Warning: {text}" in proc.stderr.splitlines(), proc.stderr
    assert env.get("v1alpha1", "DynamoGraphDeployment", "vs-ingress-only")  # stored
