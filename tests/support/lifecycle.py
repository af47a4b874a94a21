"""What a user does that the operator answers, on a real control plane: one function per kind of graph or
request, each waiting (bounded) for the operator's visible answer. kwok runs no containers, so what the
profiler, a checkpoint or a worker would do is done here as the user. ``exercise`` runs them all; the RBAC
test (test_rbac_cluster.py) runs it under the operator's ServiceAccount to use every grant it has."""

from __future__ import annotations

import contextlib
import copy
import json
import subprocess
import tempfile
from pathlib import Path

import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.controllers import store
from dynamo_operator.controllers.lifecycle import CHECKPOINTS, DGDRS, DYNAMO_MODELS, FINALIZER, JOBS
from dynamo_operator.controllers.sync import (
    DESTINATIONRULES,
    DEVICECLASSES,
    INFERENCEPOOLS,
    LWS,
    NETWORKPOLICIES,
    PODCLIQUESETS,
    RESOURCECLAIMTEMPLATES,
)
from dynamo_operator.controllers.topology import CLUSTER_TOPOLOGIES, EV_SOURCE
from dynamo_operator.render import dgdr as rd
from dynamo_operator.render import graph_checkpoint as rgc
from dynamo_operator.render import grove as rgrove
from dynamo_operator.render import names
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    EVENTS,
    PODS,
    PVCS,
    SERVICES,
    ResourceClient,
    custom,
)
from kubernetes.client.exceptions import ApiException

from support import graphs, rbac
from support.dgd import edit_object
from support.poll import wait_for

EXAMPLES = REPO_ROOT / "examples"
WAIT = 120.0
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"
DGDSA = custom(
    "nvidia.com", "v1alpha1", "dynamographdeploymentscalingadapters", "DynamoGraphDeploymentScalingAdapter"
)
PVS = custom("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
BETA_DGDR = custom("nvidia.com", "v1beta1", "dynamographdeploymentrequests", "DynamoGraphDeploymentRequest")
# What the operator's configuration needs for the EPP's DestinationRule (render/epp.py).
SERVICE_MESH = {"serviceMesh": {"provider": "istio", "istio": {"tlsMode": "ISTIO_MUTUAL"}}}
GMS_DEVICE_CLASS = "gpu.lifecycle.example"


def run(env: dict[str, str], *args: str, stdin: str | None = None, check: bool = True, timeout: float = 400):
    """A command; with ``check``, its failure fails the test with its output."""
    proc = subprocess.run(list(args), env=env, input=stdin, capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, (
            f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def _example(name: str, namespace: str, annotations: dict | None = None) -> dict:
    doc = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    doc["metadata"]["namespace"] = namespace
    doc["metadata"].setdefault("annotations", {}).update(annotations or {})
    return doc


def get_or_none(client: ResourceClient, res, name: str, ns: str | None = None) -> dict | None:
    try:
        return client.get(res, name, ns)
    except ApiException as e:
        if e.status == 404:
            return None
        raise


def _at(obj: dict | None, *path: str):
    """``obj[path[0]][path[1]]...``, None where anything is missing."""
    for key in path:
        obj = (obj or {}).get(key)
    return obj


def _state(client: ResourceClient, ns: str, name: str) -> str | None:
    return _at(get_or_none(client, store.DGD, name, ns), "status", "state")


def _kubectl_create(env: dict[str, str], doc: dict) -> None:
    run(env, "kubectl", "create", "-f", "-", stdin=yaml.safe_dump(doc))


BETA_DGD = custom("nvidia.com", "v1beta1", "dynamographdeployments", "DynamoGraphDeployment")
DEPLOYMENTS = custom("apps", "v1", "deployments", "Deployment")


def graphs_on_components(env: dict[str, str], client: ResourceClient, ns: str) -> None:
    """The component pathway (Grove opted out): a planner graph with scaling adapters becomes DCDs,
    Deployments, Services, the planner's ServiceAccount (and, cluster-wide, RoleBinding) and two adapters;
    scaling an adapter patches the graph; dropping one component's scalingAdapter deletes its adapter. A
    multinode graph becomes LeaderWorkerSets."""
    off = {"nvidia.com/enable-grove": "false"}
    _kubectl_create(env, _example("vllm-disagg-planner", ns, off))
    wait_for(
        lambda: _state(client, ns, "vllm-planner") == "successful",
        WAIT,
        lambda: _state(client, ns, "vllm-planner"),
    )
    run(env, "kubectl", "scale", "-n", ns, "dgdsa", "vllm-planner-vllmdecodeworker", "--replicas=2")

    def replicas() -> int | None:
        return _at(get_or_none(client, DEPLOYMENTS, "vllm-planner-vllmdecodeworker", ns), "spec", "replicas")

    wait_for(
        lambda: replicas() == 2,
        WAIT,
        lambda: f"the adapter's scale never reached the Deployment ({replicas()})",
    )
    _edit_graph(
        client,
        ns,
        "vllm-planner",
        lambda graph: _component(graph, "VllmPrefillWorker").pop("scalingAdapter", None),
    )
    wait_for(lambda: get_or_none(client, DGDSA, "vllm-planner-vllmprefillworker", ns) is None, WAIT)
    # a second planner in the namespace shares planner-serviceaccount (and its RoleBinding): one more owner
    # when the operator made it; none when it is the restricted chart's, which the operator uses as it is
    # (tests/integration/test_restricted_shared_accounts.py: the garbage collector would delete it)
    second = _example("vllm-disagg-planner", ns, off)
    second["metadata"]["name"] = "second-planner"
    second["spec"]["components"] = [
        c for c in second["spec"]["components"] if c["type"] in ("frontend", "planner")
    ]
    _kubectl_create(env, second)

    def owners() -> int:
        sa = get_or_none(
            client, custom("", "v1", "serviceaccounts", "ServiceAccount"), "planner-serviceaccount", ns
        )
        return len(_at(sa, "metadata", "ownerReferences") or [])

    account = custom("", "v1", "serviceaccounts", "ServiceAccount")
    by = _at(
        get_or_none(client, account, "planner-serviceaccount", ns),
        "metadata",
        "labels",
        names.LABEL_MANAGED_BY,
    )
    if by == names.MANAGED_BY:
        wait_for(lambda: owners() >= 2, WAIT, lambda: f"planner-serviceaccount has {owners()} owner(s)")
    else:
        assert by == "Helm", by
        wait_for(lambda: get_or_none(client, store.DCD, "second-planner-planner", ns), WAIT, "second planner")
        wait_for(
            lambda: get_or_none(client, DEPLOYMENTS, "second-planner-planner", ns), WAIT, "its Deployment"
        )
        assert owners() == 0, f"the chart's planner-serviceaccount has {owners()} owner(s)"
    multinode = _example("vllm-disagg-multinode", ns, off)
    for comp in multinode["spec"]["components"]:  # one GPU a node: the kwok nodes have 16 in all
        for container in comp["podTemplate"]["spec"]["containers"]:
            if "nvidia.com/gpu" in container.get("resources", {}).get("limits", {}):
                container["resources"]["limits"]["nvidia.com/gpu"] = "1"
                container["args"] = [a if a != "16" else "2" for a in container.get("args", [])]
    _kubectl_create(env, multinode)
    lws = "vllm-disagg-multinode-decode-0"
    wait_for(lambda: get_or_none(client, LWS, lws, ns) is not None, WAIT, "no LeaderWorkerSet")


# What the Dynamo runtime's Kubernetes discovery calls (render/discovery.py; the chart's discoveryRules):
# the (API group, resource, verb) cells a graph's discovery account holds in its namespace, and no others.
DISCOVERY_CELLS = frozenset(
    [("", "pods", v) for v in ("get", "list", "watch")]
    + [("discovery.k8s.io", "endpointslices", v) for v in ("get", "list", "watch")]
    + [
        ("nvidia.com", "dynamoworkermetadatas", v)
        for v in ("create", "get", "list", "watch", "update", "patch", "delete")
    ]
)
# What every authenticated identity may do (system:basic-user): ask what it may do itself.
SELF_REVIEW_GROUPS = ("authorization.k8s.io", "authentication.k8s.io")
# kubectl's client-side schema check lists CRDs, which no workload may (nor needs to)
NO_SCHEMA_CHECK = ("--validate=false",)
ROLEBINDINGS_RES = custom("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")


def _impersonating(namespace: str, sa: str) -> list[str]:
    """kubectl flags that make a request as that ServiceAccount (its user and groups, as a pod's token)."""
    groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated")
    return [f"--as=system:serviceaccount:{namespace}:{sa}", *(f"--as-group={g}" for g in groups)]


def _rules_cells(env: dict[str, str], ns: str, sa: str) -> set[tuple[str, str, str]]:
    """What the API server says the ServiceAccount may do in ``ns`` (a SelfSubjectRulesReview made as the
    account), as (group, resource, verb) cells; the self reviews every user has left out."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": ns},
    }
    out = run(
        env,
        "kubectl",
        "create",
        *NO_SCHEMA_CHECK,
        "-o",
        "json",
        "-f",
        "-",
        *_impersonating(ns, sa),
        stdin=json.dumps(review),
    )
    status = json.loads(out.stdout)["status"]
    assert not status.get("incomplete"), status
    cells = set()
    for rule in status.get("resourceRules") or []:
        assert not rule.get("resourceNames"), rule
        for group in rule.get("apiGroups") or []:
            if group in SELF_REVIEW_GROUPS:
                continue
            cells |= {(group, r, v) for r in rule.get("resources") or [] for v in rule.get("verbs") or []}
    return cells


def graph_pod(client: ResourceClient, ns: str, sa: str) -> dict:
    """A pod that runs as the ServiceAccount ``sa`` (a graph's discovery account), once there is one."""

    def first() -> dict | None:
        pods = client.list(PODS, ns)["items"]
        return next((p for p in pods if (p.get("spec") or {}).get("serviceAccountName") == sa), None)

    wait_for(lambda: first() is not None, WAIT, f"no pod runs as {sa}")
    pod = first()
    assert pod is not None
    return pod


def pod_env(env: dict[str, str], ns: str, sa: str, pod: str) -> dict[str, str]:
    """An environment whose kubeconfig holds a token of ``sa`` bound to the Pod ``pod`` (as the pod gets)."""
    path = Path(tempfile.mkdtemp(prefix="pod-token-")) / f"{pod}.kubeconfig"
    rbac.token_kubeconfig(env, env["KUBECONFIG"], ns, sa, path, pod=pod)
    return {**env, "KUBECONFIG": str(path)}


def worker_metadata(pod: dict, name: str | None = None) -> dict:
    """The DynamoWorkerMetadata the Dynamo runtime applies for a worker: named after its pod, owned by it."""
    md = pod["metadata"]
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoWorkerMetadata",
        "metadata": {
            "name": name or md["name"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": md["name"], "uid": md["uid"]}],
        },
        "spec": {"data": {"endpoints": {}}},
    }


def discovery_identity(env: dict[str, str], client: ResourceClient, ns: str, cluster_wide: bool) -> None:
    """The discovery account of ``graphs_on_components``' planner graph: the operator bound it (cluster-wide
    to the chart's ClusterRole, namespace-restricted to the chart's Role in the namespace, the one role a
    restricted operator may bind), the binding is owned by the graph alone, and the account may make
    exactly the runtime's discovery calls there, and nothing elsewhere."""
    graph = "vllm-planner"
    sa = f"{graph}-k8s-service-discovery"

    def owners() -> list[tuple[str, str]]:
        binding = get_or_none(client, ROLEBINDINGS_RES, sa, ns) or {}
        return [(r["kind"], r["name"]) for r in _at(binding, "metadata", "ownerReferences") or []]

    want = [(names.DGD_KIND, graph)]
    wait_for(lambda: owners() == want, WAIT, lambda: f"{sa} owned by {owners()}, not by its graph alone")
    binding = client.get(ROLEBINDINGS_RES, sa, ns)
    assert binding["roleRef"]["kind"] == ("ClusterRole" if cluster_wide else "Role"), binding["roleRef"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa, "namespace": ns}], binding
    assert _rules_cells(env, ns, sa) == set(DISCOVERY_CELLS)
    # a discovery call made as the account: a worker publishing and withdrawing its metadata (with its pod's
    # token: a ServiceAccount writes only its own pod's, admission-policies.yaml), a frontend listing the
    # EndpointSlices
    me = _impersonating(ns, sa)
    pod = graph_pod(client, ns, sa)
    as_pod = pod_env(env, ns, sa, pod["metadata"]["name"])
    run(
        as_pod,
        "kubectl",
        "create",
        *NO_SCHEMA_CHECK,
        "-n",
        ns,
        "-f",
        "-",
        stdin=json.dumps(worker_metadata(pod)),
    )
    run(env, "kubectl", "get", "endpointslices", "-n", ns, *me)
    run(as_pod, "kubectl", "delete", "dynamoworkermetadatas", "-n", ns, pod["metadata"]["name"])
    for denied in (
        ("get", "secrets", "-n", ns),
        ("create", "pods", "-n", ns),
        ("list", "endpointslices", "-n", "default"),
        ("create", "dynamoworkermetadatas", "-n", "default"),
    ):
        r = run(env, "kubectl", "auth", "can-i", *denied, *me, check=False)
        assert r.stdout.strip() == "no", f"{sa} may {' '.join(denied)}: {r.stdout}{r.stderr}"


EPP_GRAPH = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "epp-graph", "annotations": {"nvidia.com/enable-grove": "false"}},
    "spec": {
        "backendFramework": "vllm",
        "components": [
            {
                "name": "Frontend",
                "type": "frontend",
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
            },
            {
                "name": "Epp",
                "type": "epp",
                "eppConfig": {"config": {"plugins": [{"type": "kv-cache-scorer"}]}},
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
            },
            {
                "name": "Worker",
                "type": "worker",
                "modelRef": {"name": "Qwen/Qwen3-0.6B"},
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {"name": "main", "image": IMAGE, "resources": {"limits": {"nvidia.com/gpu": "1"}}}
                        ]
                    }
                },
            },
        ],
    },
}


def _edit_graph(client: ResourceClient, ns: str, name: str, change) -> None:
    """Apply ``change(graph)`` to the live v1beta1 graph (retried on a conflict), as `kubectl edit` does."""
    edit_object(client, BETA_DGD, name, ns, change)


def _component(graph: dict, name: str) -> dict:
    return next(c for c in graph["spec"]["components"] if c["name"] == name)


def graph_with_epp(env: dict[str, str], client: ResourceClient, ns: str) -> None:
    """An EPP component (its ServiceAccount, RoleBinding cluster-wide, and inline config as a ConfigMap) and a
    worker serving a base model (its headless model Service). Then the user edits the EPP config (the
    ConfigMap is updated), moves it to a ConfigMap of their own (ours is pruned) and drops the modelRef (the
    model Service is pruned); a namespace admin edits a component Service twice (written back twice: the
    second UpdateService Event is an aggregated patch)."""
    _kubectl_create(env, {**EPP_GRAPH, "metadata": {**EPP_GRAPH["metadata"], "namespace": ns}})
    config, model_svc = "epp-graph-epp-epp-config", "epp-graph-worker-model"
    wait_for(lambda: get_or_none(client, CONFIGMAPS, config, ns) is not None, WAIT, "no EPP ConfigMap")
    wait_for(lambda: get_or_none(client, SERVICES, model_svc, ns) is not None, WAIT, "no model Service")
    _edit_graph(
        client, ns, "epp-graph", lambda g: _component(g, "Epp")["eppConfig"]["config"].update(plugins=[])
    )
    wait_for(lambda: "plugins: []" in str(_at(get_or_none(client, CONFIGMAPS, config, ns), "data")), WAIT)
    client.create(
        CONFIGMAPS, {"metadata": {"name": "my-epp", "namespace": ns}, "data": {"epp.yaml": "plugins: []\n"}}
    )

    def own_config(graph: dict) -> None:
        _component(graph, "Epp")["eppConfig"] = {"configMapRef": {"name": "my-epp", "key": "epp.yaml"}}
        _component(graph, "Worker").pop("modelRef")

    _edit_graph(client, ns, "epp-graph", own_config)
    wait_for(lambda: get_or_none(client, CONFIGMAPS, config, ns) is None, WAIT, "our EPP ConfigMap stayed")
    wait_for(lambda: get_or_none(client, SERVICES, model_svc, ns) is None, WAIT, "the model Service stayed")
    for _ in range(2):
        drifted = client.get(SERVICES, "epp-graph-worker", ns)
        selector = dict(drifted["spec"]["selector"])
        drifted["spec"]["selector"] = {k: "by-hand" for k in selector}
        client.replace(SERVICES, drifted)
        wait_for(
            lambda sel=selector: client.get(SERVICES, "epp-graph-worker", ns)["spec"]["selector"] == sel,
            WAIT,
            "the operator did not write the Service back",
        )
    epp_pool_and_rule(client, ns)


def epp_pool_and_rule(client: ResourceClient, ns: str) -> None:
    """The graph's InferencePool and its EPP Service's DestinationRule (the operator runs with
    ``SERVICE_MESH``): hand edits of either are written back. (Both go with the graph, by the garbage
    collector: admission keeps a graph's set of components fixed, so the operator never prunes them here.)"""
    pool, rule = "epp-graph-pool", "epp-graph-epp"
    wait_for(lambda: get_or_none(client, INFERENCEPOOLS, pool, ns) is not None, WAIT, "no pool")
    wait_for(lambda: get_or_none(client, DESTINATIONRULES, rule, ns) is not None, WAIT, "no DestinationRule")
    _drift(client, INFERENCEPOOLS, pool, ns, lambda spec: spec.update(targetPorts=[{"number": 1}]))
    _drift(client, DESTINATIONRULES, rule, ns, lambda spec: spec.update(host="elsewhere.example"))


def _drift(client: ResourceClient, res, name: str, ns: str, change) -> None:
    """A hand edit of a child's spec (retried on a conflict); the operator writes its spec back."""
    wanted: dict = {}

    def edit(live: dict) -> None:
        wanted.clear()
        wanted.update(copy.deepcopy(live["spec"]))
        change(live["spec"])

    edit_object(client, res, name, ns, edit)
    wait_for(
        lambda: _at(get_or_none(client, res, name, ns), "spec") == wanted,
        WAIT,
        lambda: f"the operator did not write {res.kind} {name} back",
    )


def gpu_memory_service(client: ResourceClient, ns: str, cluster_wide: bool) -> None:
    """A GPU memory service worker: its ResourceClaimTemplate is created (cluster-wide, once the operator's
    DeviceClass informer has seen the class), replaced when the GPU count changes (its spec is immutable)
    and deleted when ``gpuMemoryService`` is removed."""
    with contextlib.suppress(ApiException):
        client.create(DEVICECLASSES, {"metadata": {"name": GMS_DEVICE_CLASS}, "spec": {}})

    def graph(gpus: str, gms: bool = True) -> dict:
        experimental = {"gpuMemoryService": {"deviceClassName": GMS_DEVICE_CLASS}, "failover": {}}
        worker = graphs.component(
            "Worker", image=IMAGE, gpus=gpus, **({"experimental": experimental} if gms else {})
        )
        annotations = {
            "nvidia.com/enable-grove": "false",
            "nvidia.com/dynamo-kube-discovery-mode": "container",
        }
        metadata = {"annotations": annotations}
        return graphs.dgd(worker, name="gms", namespace=ns, metadata=metadata, backendFramework="vllm")

    template = "gms-worker-gpu"
    client.create(BETA_DGD, graph("2"))
    wait_for(
        lambda: get_or_none(client, RESOURCECLAIMTEMPLATES, template, ns) is not None,
        WAIT,
        "no ResourceClaimTemplate",
    )
    first = client.get(RESOURCECLAIMTEMPLATES, template, ns)["metadata"]["uid"]
    _edit_graph(client, ns, "gms", lambda g: g.update(spec=graph("4")["spec"]))
    wait_for(
        lambda: (
            _at(get_or_none(client, RESOURCECLAIMTEMPLATES, template, ns), "metadata", "uid")
            not in (None, first)
        ),
        WAIT,
        "the ResourceClaimTemplate was not replaced",
    )
    _edit_graph(client, ns, "gms", lambda g: g.update(spec=graph("4", gms=False)["spec"]))
    wait_for(
        lambda: get_or_none(client, RESOURCECLAIMTEMPLATES, template, ns) is None,
        WAIT,
        "the ResourceClaimTemplate stayed",
    )
    client.delete(BETA_DGD, "gms", ns)
    with contextlib.suppress(ApiException):
        client.delete(DEVICECLASSES, GMS_DEVICE_CLASS)


def graph_with_kv_transfer_policy(client: ResourceClient, ns: str, cluster_wide: bool) -> None:
    """A graph whose ``spec.experimental.kvTransferPolicy`` names a Grove ClusterTopology: cluster-wide, its
    scheduled worker gets the level's label (one get of the node and of the topology, a patch of the pod);
    namespace-restricted, the operator reads no Node and says so in a Warning Event on the pod."""
    topology = f"{ns}-topology"
    levels = [{"domain": "host", "key": "kubernetes.io/hostname"}]
    with contextlib.suppress(ApiException):
        client.create(CLUSTER_TOPOLOGIES, {"metadata": {"name": topology}, "spec": {"levels": levels}})
    worker = graphs.component("Decode", "decode", image=IMAGE, command=graphs.VLLM, gpus=1)
    policy = {"clusterTopologyName": topology, "domain": "host"}
    metadata = {"annotations": {"nvidia.com/enable-grove": "false"}}
    graph = graphs.dgd(
        worker, name="kvt", namespace=ns, metadata=metadata, experimental={"kvTransferPolicy": policy}
    )
    client.create(BETA_DGD, graph)

    def labelled() -> bool:
        pods = client.list(PODS, ns, label_selector="nvidia.com/selector=kvt-decode").get("items") or []
        return any("nvidia.com/dynamo-topology.host" in (p["metadata"].get("labels") or {}) for p in pods)

    def warned() -> bool:
        return any(e.get("reason") == EV_SOURCE for e in client.list(EVENTS, ns).get("items") or [])

    if cluster_wide:
        wait_for(labelled, WAIT, "no topology label on the worker pod")
    else:
        wait_for(warned, WAIT, "no Event saying the restricted operator reads no Node")
    client.delete(BETA_DGD, "kvt", ns)
    with contextlib.suppress(ApiException):
        client.delete(CLUSTER_TOPOLOGIES, topology)


def leaderworkerset_drift(client: ResourceClient, ns: str) -> None:
    """A hand edit of a LeaderWorkerSet's spec is written back."""
    lws = "vllm-disagg-multinode-decode-0"
    live = client.get(LWS, lws, ns)
    size = live["spec"]["leaderWorkerTemplate"]["size"]
    live["spec"]["leaderWorkerTemplate"]["size"] = size + 1
    client.replace(LWS, live)
    wait_for(
        lambda: client.get(LWS, lws, ns)["spec"]["leaderWorkerTemplate"]["size"] == size,
        WAIT,
        "the operator did not write the LeaderWorkerSet back",
    )


def graph_on_grove(env: dict[str, str], client: ResourceClient, ns: str) -> None:
    """The Grove pathway: one PodCliqueSet, updated when the graph changes; then the graph switched off
    Grove."""
    _kubectl_create(env, _example("vllm-agg", ns))
    pcs = rgrove.pcs_name(_example("vllm-agg", ns))
    wait_for(lambda: get_or_none(client, PODCLIQUESETS, pcs, ns) is not None, WAIT, "no PodCliqueSet")
    generation = client.get(PODCLIQUESETS, pcs, ns)["metadata"]["generation"]
    run(
        env,
        "kubectl",
        "patch",
        "-n",
        ns,
        "dgd",
        "vllm-agg",
        "--type=json",
        "-p",
        '[{"op": "replace", "path": "/spec/components/1/replicas", "value": 2}]',
    )
    wait_for(
        lambda: client.get(PODCLIQUESETS, pcs, ns)["metadata"]["generation"] > generation,
        WAIT,
        "the PodCliqueSet was not updated",
    )
    # the user takes the graph off Grove: its PodCliqueSet is pruned, DCDs appear
    off = {"nvidia.com/enable-grove": "false"}

    def off_grove(graph: dict) -> None:
        graph["metadata"].setdefault("annotations", {}).update(off)
        for comp in graph["spec"]["components"]:
            comp.pop("minAvailable", None)  # defaulted on Grove; refused off it

    _edit_graph(client, ns, "vllm-agg", off_grove)
    wait_for(lambda: get_or_none(client, PODCLIQUESETS, pcs, ns) is None, WAIT, "the PodCliqueSet stayed")
    wait_for(lambda: get_or_none(client, store.DCD, "vllm-agg-frontend", ns) is not None, WAIT, "no DCD")


def request_profiling(env: dict[str, str], client: ResourceClient, ns: str, cluster_wide: bool) -> None:
    """A DGDR: the operator creates the profiling ServiceAccount (and, cluster-wide, its RoleBinding) and Job;
    the test publishes what the profiler would; the operator creates the generated graph. A restricted
    operator cannot discover GPUs, so there the request names its hardware."""
    doc = yaml.safe_load((EXAMPLES / "dgdr-mocker.yaml").read_text())
    doc["metadata"]["namespace"] = ns
    if not cluster_wide:
        doc["spec"]["profilingConfig"]["config"]["hardware"] = {"gpuType": "h100_sxm", "numGpusPerNode": 8}
    name = doc["metadata"]["name"]
    _kubectl_create(env, doc)
    wait_for(lambda: get_or_none(client, JOBS, rd.job_name(name), ns) is not None, WAIT, "no profiling Job")
    graph = yaml.safe_load((EXAMPLES / "vllm-agg.yaml").read_text())
    graph["metadata"] = {"name": "profiled", "annotations": {"nvidia.com/enable-grove": "false"}}
    client.create(
        CONFIGMAPS,
        {
            "metadata": {
                "name": rd.output_configmap_name(name),
                "namespace": ns,
                "labels": {rd.LABEL_DGDR_NAME: name, rd.LABEL_DGDR_NAMESPACE: ns},
            },
            "data": {rd.FINAL_CONFIG: yaml.safe_dump(graph), rd.STATUS_FILE: "phase: Done\nmessage: done\n"},
        },
    )

    def state() -> str | None:
        return _at(get_or_none(client, DGDRS, name, ns), "status", "state")

    wait_for(lambda: state() == "Ready", WAIT, lambda: f"DGDR state {state()}")
    missing = copy.deepcopy(doc)
    missing["metadata"]["name"] = "needs-config"
    missing["spec"]["profilingConfig"] = {
        **doc["spec"]["profilingConfig"],
        "configMapRef": {"name": "absent"},
    }
    missing["spec"]["profilingConfig"].pop("config", None)
    _kubectl_create(env, missing)
    wait_for(
        lambda: "absent" in json.dumps(_at(get_or_none(client, DGDRS, "needs-config", ns), "status") or {}),
        WAIT,
        "the DGDR did not report its missing ConfigMap",
    )


def request_with_model_cache(
    env: dict[str, str], client: ResourceClient, ns: str, cluster_wide: bool
) -> None:
    """A v1beta1 DGDR whose model cache is a user's PVC (the operator reads it before profiling);
    cluster-wide without hardware, which the operator learns from the GPU nodes, restricted with it (a
    restricted operator may not list nodes)."""
    client.create(
        PVCS,
        {
            "metadata": {"name": "models", "namespace": ns},
            "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}},
        },
    )
    spec: dict = {
        "model": "Qwen/Qwen3-0.6B",
        "modelCache": {"pvcName": "models", "pvcModelPath": "qwen3-0.6b", "pvcMountPath": "/opt/models"},
    }
    if not cluster_wide:
        spec["hardware"] = {"gpuSku": "h100_sxm", "numGpusPerNode": 8, "totalGpus": 16}
    _kubectl_create(
        env,
        {
            "apiVersion": BETA_DGDR.api_version,
            "kind": "DynamoGraphDeploymentRequest",
            "metadata": {"name": "cached", "namespace": ns},
            "spec": spec,
        },
    )
    wait_for(
        lambda: get_or_none(client, JOBS, rd.job_name("cached"), ns) is not None,
        WAIT,
        lambda: (
            "no profiling Job for the cached request: "
            f"{_at(get_or_none(client, DGDRS, 'cached', ns), 'status')}"
        ),
    )


def model_and_checkpoint(env: dict[str, str], client: ResourceClient, ns: str) -> None:
    """A LoRA DynamoModel (the operator adds its finalizer and reports status) and a DynamoCheckpoint (its Job
    runs to completion on kwok, the operator records it and deletes the Job)."""
    _kubectl_create(
        env,
        {
            **yaml.safe_load((EXAMPLES / "dynamomodel-lora.yaml").read_text()),
            "metadata": {"name": "lora", "namespace": ns},
        },
    )
    wait_for(
        lambda: (
            FINALIZER
            in ((get_or_none(client, DYNAMO_MODELS, "lora", ns) or {}).get("metadata") or {}).get(
                "finalizers", []
            )
        ),
        WAIT,
        "the LoRA model never got its finalizer",
    )
    ckpt = {
        "apiVersion": CHECKPOINTS.api_version,
        "kind": "DynamoCheckpoint",
        "metadata": {"name": "warm", "namespace": ns},
        "spec": {
            "identity": {"model": "Qwen/Qwen3-0.6B", "backendFramework": "vllm"},
            "job": {
                "podTemplateSpec": {
                    "spec": {
                        "containers": [
                            {"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"}
                        ]
                    }
                }
            },
        },
    }
    _kubectl_create(env, ckpt)

    def phase() -> str | None:
        return _at(get_or_none(client, CHECKPOINTS, "warm", ns), "status", "phase")

    wait_for(lambda: phase() == "Ready", WAIT, lambda: f"checkpoint phase {phase()}")
    wait_for(lambda: get_or_none(client, JOBS, "checkpoint-warm", ns) is None, WAIT, "checkpoint Job kept")


def checkpoint_storage(client: ResourceClient, ns: str, host_path: str | None = None) -> str:
    """The checkpoint PVC the configuration names (``chrek-pvc``), as a cluster admin provides it: bound to a
    hostPath PersistentVolume (no provisioner here), so restore-shaped pods and checkpoint Jobs schedule.
    ``host_path``: the directory behind it (on the real node, where containers really write)."""
    pv = f"chrek-{ns}"
    client.create(
        PVS,
        {
            "metadata": {"name": pv},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteMany"],
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
                "hostPath": {"path": host_path or f"/tmp/{pv}"},
            },
        },
    )
    client.create(
        PVCS,
        {
            "metadata": {"name": "chrek-pvc", "namespace": ns},
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "",
                "volumeName": pv,
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
        ns,
    )
    return pv


CKPT_GRAPH = "ckpt-graph"
UNSCHEDULABLE = {"spec": {"nodeSelector": {"dynamo-test/no-such-node": "true"}}}


def _checkpoint_graph(ns: str, image: str, deletion_policy: str) -> dict:
    """A frontend and a worker whose ``checkpoint`` asks for a graph-made DynamoCheckpoint it waits for; its
    Job cannot be scheduled, so the checkpoint becomes Ready only when the test says so (the agent's work)."""
    checkpoint = {
        "enabled": True,
        "startupPolicy": "WaitForCheckpoint",
        "deletionPolicy": deletion_policy,
        "job": {"podTemplate": UNSCHEDULABLE},
    }
    worker_main = {"name": "main", "image": image, "command": ["python3", "-m", "dynamo.vllm"]}
    return {
        "apiVersion": names.V1BETA1,
        "kind": names.DGD_KIND,
        "metadata": {
            "name": CKPT_GRAPH,
            "namespace": ns,
            "annotations": {"nvidia.com/enable-grove": "false"},
        },
        "spec": {
            "backendFramework": "vllm",
            "components": [
                {
                    "name": "Frontend",
                    "type": "frontend",
                    "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
                },
                {
                    "name": "Worker",
                    "type": "worker",
                    "experimental": {"checkpoint": checkpoint},
                    "podTemplate": {"spec": {"containers": [worker_main]}},
                },
            ],
        },
    }


def _graph_checkpoints(client: ResourceClient, ns: str) -> dict[str, dict]:
    """The automatic DynamoCheckpoints of ``CKPT_GRAPH``, by name."""
    items = client.list(CHECKPOINTS, ns).get("items") or []
    return {
        c["metadata"]["name"]: c
        for c in items
        if (c["metadata"].get("labels") or {}).get(names.LABEL_DGD_NAME) == CKPT_GRAPH
        and (c["metadata"].get("annotations") or {}).get(rgc.ANN_AUTO) == "true"
    }


def _mark_ready(client: ResourceClient, ns: str, name: str) -> None:
    """What a checkpoint agent reports once the checkpoint is written: phase Ready (status subresource)."""
    for _ in range(10):
        cur = client.get(CHECKPOINTS, name, ns)
        cur["status"] = {**(cur.get("status") or {}), "phase": "Ready"}
        try:
            client.replace(CHECKPOINTS, cur, subresource="status")
            return
        except ApiException as e:
            if e.status != 409:
                raise
    raise AssertionError(f"could not mark DynamoCheckpoint {ns}/{name} Ready")


def graph_with_checkpoint(env: dict[str, str], client: ResourceClient, ns: str) -> None:
    """A component's ``checkpoint`` (docs/checkpoints.md): the graph creates its DynamoCheckpoint (Retain:
    unowned) and holds the worker at zero replicas (WaitForCheckpoint) until the checkpoint is Ready; the
    user switches deletionPolicy to Delete (the operator patches its owner reference onto it), then changes
    the worker's image (a new checkpoint is created, the old owned one deleted)."""
    checkpoint_storage(client, ns)
    _kubectl_create(env, _checkpoint_graph(ns, IMAGE, "Retain"))
    wait_for(lambda: len(_graph_checkpoints(client, ns)) == 1, WAIT, "no graph checkpoint")
    (first,) = _graph_checkpoints(client, ns)
    deployment = f"{CKPT_GRAPH}-worker"

    def replicas() -> int | None:
        return _at(get_or_none(client, DEPLOYMENTS, deployment, ns), "spec", "replicas")

    wait_for(lambda: replicas() == 0, WAIT, lambda: f"the worker was not held ({replicas()})")
    _mark_ready(client, ns, first)
    wait_for(lambda: replicas() == 1, WAIT, lambda: f"the worker was not released ({replicas()})")

    def delete_policy(graph: dict) -> None:
        _component(graph, "Worker")["experimental"]["checkpoint"]["deletionPolicy"] = "Delete"

    _edit_graph(client, ns, CKPT_GRAPH, delete_policy)
    wait_for(
        lambda: bool(_at(get_or_none(client, CHECKPOINTS, first, ns), "metadata", "ownerReferences")),
        WAIT,
        "the graph did not take ownership of its checkpoint",
    )

    def new_image(graph: dict) -> None:
        _component(graph, "Worker")["podTemplate"]["spec"]["containers"][0]["image"] = IMAGE + "-b"

    _edit_graph(client, ns, CKPT_GRAPH, new_image)
    wait_for(
        lambda: (cps := set(_graph_checkpoints(client, ns))) != set() and first not in cps,
        WAIT,
        lambda: (
            f"the old checkpoint was not replaced: {sorted(_graph_checkpoints(client, ns))}\n"
            + _jobs_and_pods(client, ns)
        ),
    )


def _jobs_and_pods(client: ResourceClient, ns: str) -> str:
    """What a checkpoint waits on (its capture or cleanup Job, and their pods on kwok's nodes), for a
    timeout's message: a checkpoint that stays is a Job that did not end, and the message should say why."""
    lines = []
    for job in client.list(JOBS, ns)["items"]:
        st = job.get("status") or {}
        conds = [(c["type"], c["status"], c.get("reason")) for c in st.get("conditions") or []]
        lines.append(f"Job {job['metadata']['name']}: active={st.get('active')} conditions={conds}")
    for pod in client.list(PODS, ns)["items"]:
        st = pod.get("status") or {}
        conds = [
            (c["type"], c["status"], c.get("reason"), *([c["message"]] if c.get("message") else []))
            for c in st.get("conditions") or []
        ]
        node = pod["spec"].get("nodeName")
        lines.append(f"Pod {pod['metadata']['name']}: {st.get('phase')} node={node} {conds}")
    held = "; ".join(f"{node} {sum(v.values())} ({v})" for node, v in sorted(gpus_held(client).items()))
    return "\n".join([*lines, f"GPUs held: {held or 'none'}"])


def gpus_held(client: ResourceClient) -> dict[str, dict[str, int]]:
    """GPUs requested by the live pods bound to each node, by namespace (the kwok nodes' capacity is set in
    dynamo_localcluster's ``_create_nodes``): a pod that cannot be scheduled is most often one that finds
    them all taken, perhaps by an earlier test's."""
    held: dict[str, dict[str, int]] = {}
    for pod in client.list(PODS)["items"]:
        node = pod["spec"].get("nodeName")
        if not node or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        gpus = sum(
            int(((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu", 0))
            for c in pod["spec"]["containers"]
        )
        if gpus:
            by_ns = held.setdefault(node, {})
            by_ns[pod["metadata"]["namespace"]] = by_ns.get(pod["metadata"]["namespace"], 0) + gpus
    return held


def pull_secret(env: dict[str, str], ns: str) -> None:
    """A registry Secret in a graph namespace: the pull-secret index sees it (its watch) and re-queues."""
    run(
        env,
        "kubectl",
        "create",
        "secret",
        "docker-registry",
        "-n",
        ns,
        "regcred",
        "--docker-server=nvcr.io",
        "--docker-username=$oauthtoken",
        "--docker-password=x",
    )


def finalize_every_kind(client: ResourceClient, ns: str) -> None:
    """One object of each Dynamo kind carrying the operator's finalizer (as an operator of any version
    leaves them behind), so the uninstall hook's update of every kind it may update is exercised."""
    # No PodSnapshot: this operator refuses their creation at admission (it runs no snapshot agent), so a
    # user cannot leave one here; the uninstall hook's update of them is in ALLOWED_UNUSED.
    targets = {
        store.DGD: "vllm-planner",
        store.DCD: "vllm-planner-frontend",
        DGDRS: "qwen3-mocker",
        DGDSA: "vllm-planner-vllmdecodeworker",
        CHECKPOINTS: "warm",
    }
    for res, name in targets.items():
        edit_object(client, res, name, ns, _with_finalizer)


def _with_finalizer(obj: dict) -> None:
    finalizers = obj["metadata"].get("finalizers") or []
    obj["metadata"]["finalizers"] = finalizers if FINALIZER in finalizers else [*finalizers, FINALIZER]


INGRESSES = custom("networking.k8s.io", "v1", "ingresses", "Ingress")
VIRTUALSERVICES = custom("networking.istio.io", "v1beta1", "virtualservices", "VirtualService")
STORAGECLASSES = custom("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False)
SECRETS = custom("", "v1", "secrets", "Secret")


def _exposed_graph(name: str, ns: str, ingress: dict) -> dict:
    """A v1alpha1 graph (off Grove) whose frontend has the (v1alpha1-only) ``ingress``."""
    frontend = graphs.alpha_service(
        "frontend", image=IMAGE, command=["python3", "-m", "dynamo.frontend"], ingress=ingress
    )
    return graphs.dgd_v1alpha1(
        {"Frontend": frontend},
        name=name,
        namespace=ns,
        metadata={"annotations": {"nvidia.com/enable-grove": "false"}},
        backendFramework="vllm",
    )


def _edit_alpha(client: ResourceClient, ns: str, name: str, change) -> None:
    """Apply ``change(spec)`` to the stored (v1alpha1) graph, retried on a conflict."""
    edit_object(client, store.DGD, name, ns, lambda graph: change(graph["spec"]))


def _frontend_ingress(spec: dict) -> dict:
    return spec["services"]["Frontend"]["ingress"]


def graph_behind_ingress(env: dict[str, str], client: ResourceClient, ns: str) -> None:
    """A v1alpha1 frontend with ``ingress``: its Ingress is created, updated when the host changes, deleted
    when the ingress is turned off."""
    name, ing = "exposed", "exposed-frontend"
    ingress = {"enabled": True, "host": "chat", "hostSuffix": "example.com"}
    _kubectl_create(env, _exposed_graph(name, ns, ingress))

    def host() -> str | None:
        rules = _at(get_or_none(client, INGRESSES, ing, ns), "spec", "rules") or [{}]
        return rules[0].get("host")

    wait_for(lambda: host() == "chat.example.com", WAIT, lambda: f"the Ingress (host {host()})")
    _edit_alpha(client, ns, name, lambda s: _frontend_ingress(s).update(host="talk"))
    wait_for(lambda: host() == "talk.example.com", WAIT, lambda: f"the Ingress updated (kept {host()})")
    _edit_alpha(client, ns, name, lambda s: _frontend_ingress(s).update(enabled=False))
    wait_for(lambda: get_or_none(client, INGRESSES, ing, ns) is None, WAIT, "the Ingress deleted")


def graph_behind_virtual_service(env: dict[str, str], client: ResourceClient, ns: str) -> None:
    """The same through Istio (``useVirtualService``; the test cluster serves the vendored VirtualService
    CRD): created, updated, deleted."""
    name, vs = "meshed", "meshed-frontend"
    ingress = {
        "enabled": True,
        "host": "mesh",
        "hostSuffix": "example.com",
        "useVirtualService": True,
        "virtualServiceGateway": "istio-system/gateway",
    }
    _kubectl_create(env, _exposed_graph(name, ns, ingress))

    def hosts() -> list | None:
        return _at(get_or_none(client, VIRTUALSERVICES, vs, ns), "spec", "hosts")

    wait_for(lambda: hosts() == ["mesh.example.com"], WAIT, lambda: f"the VirtualService ({hosts()})")
    _edit_alpha(client, ns, name, lambda s: _frontend_ingress(s).update(host="grid"))
    wait_for(lambda: hosts() == ["grid.example.com"], WAIT, lambda: f"the VirtualService updated ({hosts()})")
    _edit_alpha(client, ns, name, lambda s: _frontend_ingress(s).update(enabled=False))
    wait_for(lambda: get_or_none(client, VIRTUALSERVICES, vs, ns) is None, WAIT, "the VirtualService deleted")


def graph_with_claims(env: dict[str, str], client: ResourceClient, ns: str) -> None:
    """``spec.pvcs`` with ``create: true``: the claim is made (after a GET that finds none), bound to a
    volume made by hand (the controller-manager binds it), and grown by a patch when ``size`` grows."""
    sc, pv = f"{ns}-expandable", f"{ns}-cache"
    client.create(
        STORAGECLASSES,
        {
            "metadata": {"name": sc},
            "provisioner": "kubernetes.io/no-provisioner",
            "allowVolumeExpansion": True,
            "volumeBindingMode": "Immediate",
        },
    )
    client.create(
        PVS,
        {
            "metadata": {"name": pv},
            "spec": {
                "capacity": {"storage": "5Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": sc,
                "persistentVolumeReclaimPolicy": "Retain",
                "hostPath": {"path": f"/tmp/{pv}"},
                "claimRef": {"namespace": ns, "name": "cache"},
            },
        },
    )
    claim = {
        "name": "cache",
        "create": True,
        "storageClass": sc,
        "size": "1Gi",
        "volumeAccessMode": "ReadWriteOnce",
    }
    graph = _exposed_graph("claims", ns, {"enabled": False})
    graph["spec"]["pvcs"] = [claim]
    graph["spec"]["services"]["Frontend"]["volumeMounts"] = [{"name": "cache", "mountPoint": "/cache"}]
    _kubectl_create(env, graph)

    def storage() -> str | None:
        return _at(get_or_none(client, PVCS, "cache", ns), "spec", "resources", "requests", "storage")

    wait_for(lambda: storage() == "1Gi", WAIT, "the claim")
    wait_for(lambda: _at(get_or_none(client, PVCS, "cache", ns), "status", "phase") == "Bound", WAIT, "bound")
    _edit_alpha(client, ns, "claims", lambda s: s["pvcs"][0].update(size="2Gi"))
    wait_for(lambda: storage() == "2Gi", WAIT, lambda: f"the claim grown (requests {storage()})")


def graph_with_mpi_ssh(env: dict[str, str], client: ResourceClient, ns: str, own_secret: bool) -> None:
    """A multinode TensorRT-LLM graph: the operator keeps its sshd NetworkPolicy (create; a hand edit
    written back: update) and, ``own_secret`` (a namespace other than the install hook's Secret's), the
    namespace's own MPI SSH Secret (create; a hand-edited derived entry restored: update). (Their deletes,
    when the last graph stops running multinode, are out of reach here: admission forbids that switch.)"""
    doc = _example("trtllm-multinode", ns, {"nvidia.com/enable-grove": "false"})
    for comp in doc["spec"]["components"]:  # one GPU a node, as graphs_on_components does
        for container in comp["podTemplate"]["spec"]["containers"]:
            if "nvidia.com/gpu" in container.get("resources", {}).get("limits", {}):
                container["resources"]["limits"]["nvidia.com/gpu"] = "1"
                container["args"] = [a if a != "16" else "2" for a in container.get("args", [])]
    _kubectl_create(env, doc)
    policy = f"{doc['metadata']['name']}-mpi-ssh"

    def ingress() -> list | None:
        return _at(get_or_none(client, NETWORKPOLICIES, policy, ns), "spec", "ingress")

    rules = wait_for(ingress, WAIT, "the sshd NetworkPolicy")
    client.patch(NETWORKPOLICIES, policy, {"spec": {"ingress": [{}]}}, ns)  # admits everything
    wait_for(lambda: ingress() == rules, WAIT, "the sshd NetworkPolicy written back")
    if not own_secret:
        return
    name = "mpi-run-ssh-secret"

    def known_hosts() -> str | None:
        return _at(get_or_none(client, SECRETS, name, ns), "data", "known_hosts")

    wait_for(lambda: known_hosts() is not None, WAIT, "the namespace's MPI SSH Secret")
    pinned = known_hosts()
    client.patch(SECRETS, name, {"data": {"known_hosts": "Ym9ndXM="}}, ns)
    wait_for(lambda: known_hosts() == pinned, WAIT, "the known_hosts restored from the host key")


def graphs_on_etcd(env: dict[str, str], client: ResourceClient, ns: str) -> None:
    """Two graphs on etcd discovery (per-namespace etcd access, the chart's default; the operator given a
    real etcd, support/chartetcd.py): the first makes the namespace's etcd user and its Secret (create), the
    second is added as an owner (update). Their pods pend on kwok. (The Secret's delete, when the last graph
    stops using etcd, is out of reach: admission keeps a graph's discovery backend.)"""
    for name in ("etcd-a", "etcd-b"):
        doc = _example("mocker-etcd", ns)
        doc["metadata"]["name"] = name
        _kubectl_create(env, doc)

    def owners() -> set[str]:
        secret = get_or_none(client, SECRETS, "dynamo-etcd-client", ns)
        return {r["name"] for r in _at(secret, "metadata", "ownerReferences") or []}

    wait_for(
        lambda: owners() == {"etcd-a", "etcd-b"}, WAIT, "the namespace's etcd client Secret, both owners"
    )


def exercise(
    env: dict[str, str],
    client: ResourceClient,
    ns: str,
    *,
    cluster_wide: bool,
    mpi_secret_namespace: str | None = None,
) -> None:
    """Everything above, in the namespace ``ns`` (the operator runs with ``SERVICE_MESH``, the
    InferencePool, DestinationRule and VirtualService CRDs installed); ends with one object of each Dynamo
    kind finalized. ``mpi_secret_namespace``: where the install hook's MPI SSH Secret is (the namespace's own
    is exercised when that is not ``ns``)."""
    pull_secret(env, ns)
    graphs_on_components(env, client, ns)
    discovery_identity(env, client, ns, cluster_wide)
    leaderworkerset_drift(client, ns)
    graph_with_epp(env, client, ns)
    gpu_memory_service(client, ns, cluster_wide)
    graph_with_kv_transfer_policy(client, ns, cluster_wide)
    graph_on_grove(env, client, ns)
    request_profiling(env, client, ns, cluster_wide)
    request_with_model_cache(env, client, ns, cluster_wide)
    model_and_checkpoint(env, client, ns)
    graph_with_checkpoint(env, client, ns)
    graph_behind_ingress(env, client, ns)
    graph_behind_virtual_service(env, client, ns)
    graph_with_claims(env, client, ns)
    graph_with_mpi_ssh(env, client, ns, mpi_secret_namespace is not None and mpi_secret_namespace != ns)
    finalize_every_kind(client, ns)
