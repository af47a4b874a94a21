"""Multinode graphs on the real local control plane, with the vendored Grove, LWS and Kai CRDs installed.

* Every object the renderer makes for each multinode example, on both pathways, is created with strict
  server-side field validation (an unknown field fails instead of being pruned) and reads back unchanged.
* A running operator applies each example: on Grove one PodCliqueSet per graph, on LWS one LeaderWorkerSet
  (+ headless Service) per multinode component. kwok runs no Grove or LWS controller, so those components
  can never become ready here, and the DGD status must say exactly that, naming the object.
* The multinode TensorRT-LLM pods carry their namespace's MPI SSH key id on both pathways, and new keys
  change every such template (issue 30).
* That ``helm install`` with ``grove.enabled=true`` brings these CRDs is checked by
  test_chart_install.py::test_grove_and_kai_subcharts_bring_the_crds_a_podcliqueset_needs.

The module removes the third-party CRDs when it ends: operators in other modules auto-detect Grove.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.controllers.diff import first_difference
from dynamo_operator.render import RenderContext, render_all
from dynamo_operator.render import grove as rgrove
from dynamo_operator.render.cli import dump_yaml
from dynamo_operator.render.mpisecret import key_id
from dynamo_operator.render.names import ANN_MPI_SSH_KEY_ID
from support import examples
from support.poll import wait_for
from support.processes import operator_process

pytestmark = pytest.mark.cluster

NS_PREFIX = "mn"
EXAMPLES = examples.MULTINODE
PATHWAYS = ["grove", "lws"]
MPI = {"sshSecretName": "mpi-run-ssh-secret", "sshSecretNamespace": "dynamo-system"}
OPERATOR = [str(REPO_ROOT / ".venv" / "bin" / "dynamo-operator")]


def kubectl(
    env: dict, *args: str, input: str | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    r = subprocess.run(["kubectl", *args], env=env, input=input, capture_output=True, text=True, timeout=120)
    if check:
        assert r.returncode == 0, f"kubectl {' '.join(args)}: {r.stderr}"
    return r


@pytest.fixture
def namespace(kube_cluster, third_party_crds) -> Iterator[str]:
    name = f"{NS_PREFIX}-{uuid.uuid4().hex[:6]}"
    kubectl(kube_cluster.env, "create", "namespace", name)
    yield name
    kubectl(kube_cluster.env, "delete", "namespace", name, "--wait=false", check=False)


def example(name: str) -> dict:
    return yaml.safe_load((REPO_ROOT / "examples" / f"{name}.yaml").read_text())


def _get(env: dict, *args: str) -> dict | None:
    r = kubectl(env, "get", *args, "-o", "json", check=False)
    return json.loads(r.stdout) if r.returncode == 0 else None


@pytest.mark.parametrize("pathway", PATHWAYS)
@pytest.mark.parametrize("name", EXAMPLES)
def test_rendered_children_are_accepted_strictly_and_read_back_unchanged(
    kube_cluster, namespace, name, pathway
):
    env = kube_cluster.env
    doc = example(name)
    doc["metadata"]["namespace"] = namespace
    ctx = RenderContext(operator_config={"mpi": MPI}, detected=frozenset({pathway, "kaiScheduler"}))
    objects = [o for o in render_all(doc, ctx) if o["kind"] != "DynamoComponentDeployment"]
    kinds = {o["kind"] for o in objects}
    assert ("PodCliqueSet" in kinds) == (pathway == "grove") and ("LeaderWorkerSet" in kinds) == (
        pathway == "lws"
    )
    kubectl(env, "create", "--validate=strict", "-f", "-", input=dump_yaml(objects))
    for o in objects:
        if o["kind"] not in ("PodCliqueSet", "LeaderWorkerSet"):
            continue
        live = _get(env, o["kind"].lower(), o["metadata"]["name"], "-n", namespace)
        assert live is not None
        assert first_difference(o["spec"], live["spec"], "spec", quantity=False) is None


def _config(tmp_path: Path, orchestrators: dict) -> Path:
    path = tmp_path / "operator-config.yaml"
    doc = {
        "apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1",
        "kind": "OperatorConfiguration",
        "orchestrators": orchestrators,
        "mpi": MPI,
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def _ready_condition(env: dict, ns: str, dgd: str, contains: str, timeout: float = 90) -> dict:
    """The DGD's status once its Ready condition's message contains ``contains`` (bounded wait)."""
    last: dict = {}

    def mentioned() -> dict:
        obj = _get(env, "dgd", dgd, "-n", ns)
        last["status"] = status = (obj or {}).get("status") or {}
        ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), None)
        return status if ready and contains in ready.get("message", "") else {}

    return wait_for(
        mentioned, timeout, lambda: f"DGD {ns}/{dgd}: Ready mentioning {contains!r}: {last}", interval=0.5
    )


@contextlib.contextmanager
def _operator(kube_cluster, tmp_path: Path, orchestrators: dict):
    with operator_process(
        kube_cluster,
        tmp_path / "operator.log",
        "--no-leader-elect",
        "--no-webhooks",
        "--config",
        str(_config(tmp_path, orchestrators)),
        metrics=False,
        command=OPERATOR,
    ) as proc:
        yield proc


def _apply(env: dict, ns: str, name: str) -> None:
    kubectl(env, "apply", "-n", ns, "-f", str(REPO_ROOT / "examples" / f"{name}.yaml"))


def test_on_grove_each_example_is_one_podcliqueset_and_status_says_grove_is_missing(
    kube_cluster, third_party_crds, tmp_path
):
    env = kube_cluster.env
    namespaces = {n: f"{NS_PREFIX}-g-{uuid.uuid4().hex[:6]}" for n in EXAMPLES}
    try:
        with _operator(kube_cluster, tmp_path, {}) as proc:  # Grove and LWS both detected: Grove wins
            for name, ns in namespaces.items():
                kubectl(env, "create", "namespace", ns)
                _apply(env, ns, name)
            for name, ns in namespaces.items():
                doc = example(name)
                doc["metadata"]["namespace"] = ns
                pcs = rgrove.pcs_name(doc)
                status = _ready_condition(
                    env, ns, name, f"PodCliqueSet {ns}/{pcs} was accepted but no Grove operator", 90
                )
                ready = next(c for c in status["conditions"] if c["type"] == "Ready")
                assert (ready["status"], ready["reason"]) == ("False", "orchestrator_not_running"), (
                    proc.log_tail()
                )
                assert status["state"] == "initializing"  # nothing of the graph exists: no pods can
                live = _get(env, "podcliqueset", pcs, "-n", ns)
                assert live is not None
                ref = live["metadata"]["ownerReferences"][0]
                assert (ref["kind"], ref["name"], ref["controller"]) == ("DynamoGraphDeployment", name, True)
                assert (_get(env, "dcd", "-n", ns) or {}).get("items") == []
                for comp in doc["spec"]["components"]:
                    kind, obj = rgrove.podclique_names(doc, comp)
                    assert f"{comp['name']}: {kind} {obj} does not exist" in ready["message"]
                    assert status["components"][comp["name"]]["componentKind"] == kind
    finally:
        for ns in namespaces.values():
            kubectl(env, "delete", "namespace", ns, "--wait=false", check=False)


def test_on_lws_each_multinode_component_is_a_leaderworkerset_and_status_says_lws_is_missing(
    kube_cluster, third_party_crds, tmp_path
):
    env = kube_cluster.env
    namespaces = {n: f"{NS_PREFIX}-l-{uuid.uuid4().hex[:6]}" for n in EXAMPLES}
    try:
        with _operator(kube_cluster, tmp_path, {"grove": {"enabled": False}}) as proc:  # LWS detected
            for name, ns in namespaces.items():
                kubectl(env, "create", "namespace", ns)
                _apply(env, ns, name)
            for name, ns in namespaces.items():
                doc = example(name)
                multinode = [
                    c for c in doc["spec"]["components"] if (c.get("multinode") or {}).get("nodeCount")
                ]
                # the single-node Frontend is a Deployment kwok makes ready: only multinode parts stay missing
                wait_for(
                    lambda ns=ns, name=name: (
                        (_get(env, "dgd", name, "-n", ns) or {})
                        .get("status", {})
                        .get("components", {})
                        .get("Frontend", {})
                        .get("readyReplicas")
                        == 1
                    ),
                    90,
                    lambda: proc.log_tail(),
                    interval=0.5,
                )
                first = f"{name}-{multinode[0]['name'].lower()}-0"
                status = _ready_condition(
                    env,
                    ns,
                    name,
                    f"LeaderWorkerSet {ns}/{first} was accepted but no LeaderWorkerSet controller",
                )
                ready = next(c for c in status["conditions"] if c["type"] == "Ready")
                assert (ready["status"], ready["reason"]) == ("False", "orchestrator_not_running"), ready
                assert status["state"] == "pending"
                assert "Frontend" not in ready["message"].split("not ready:")[1]
                for comp in multinode:
                    lws_name = f"{name}-{comp['name'].lower()}-0"
                    lws = _get(env, "leaderworkerset", lws_name, "-n", ns)
                    assert lws is not None
                    assert lws["spec"]["leaderWorkerTemplate"]["size"] == comp["multinode"]["nodeCount"]
                    svc = _get(env, "service", lws_name, "-n", ns)
                    assert svc is not None and svc["spec"]["clusterIP"] == "None"
                    assert f"{comp['name']}: LeaderWorkerSet {ns}/{lws_name} was accepted" in ready["message"]
                    assert status["components"][comp["name"]]["componentKind"] == "LeaderWorkerSet"
                    dcd = _get(env, "dcd", f"{name}-{comp['name'].lower()}", "-n", ns)
                    available = next(c for c in dcd["status"]["conditions"] if c["type"] == "Available")
                    assert (available["status"], available["reason"]) == (
                        "False",
                        "LeaderWorkerSetNotReconciled",
                    )
    finally:
        for ns in namespaces.values():
            kubectl(env, "delete", "namespace", ns, "--wait=false", check=False)


def _key_ids(env: dict, ns: str, pathway: str) -> set[str]:
    """The MPI SSH key ids on the trtllm-multinode example's multinode pod templates (its LeaderWorkerSet's
    leader and worker, or its PodCliqueSet's cliques), one per template carrying one."""
    if pathway == "lws":
        lws = _get(env, "leaderworkerset", "trtllm-multinode-trtllmworker-0", "-n", ns) or {"spec": {}}
        tpl = lws["spec"].get("leaderWorkerTemplate") or {}
        metas = [(tpl.get(t) or {}).get("metadata") or {} for t in ("leaderTemplate", "workerTemplate")]
    else:
        pcs = _get(env, "podcliqueset", rgrove.pcs_name(example("trtllm-multinode")), "-n", ns) or {
            "spec": {}
        }
        metas = list(((pcs["spec"].get("template") or {}).get("cliques")) or [])
    found = [(m.get("annotations") or {}).get(ANN_MPI_SSH_KEY_ID) for m in metas]
    return {f for f in found if f}


def _stamped_with_the_secret(env: dict, ns: str, pathway: str, not_id: str | None = None) -> str | None:
    """The namespace Secret's key id once every multinode template carries it (and it is not ``not_id``)."""
    want = key_id(_get(env, "secret", MPI["sshSecretName"], "-n", ns))
    return want if want and want != not_id and _key_ids(env, ns, pathway) == {want} else None


def test_new_mpi_keys_roll_the_multinode_pods_on_both_pathways(kube_cluster, third_party_crds, tmp_path):
    """Issue 30: a namespace's multinode TensorRT-LLM pod templates (leader and worker of a LeaderWorkerSet,
    the cliques of a PodCliqueSet) carry the id of that namespace's own MPI SSH keys, never another's; the
    Secret deleted, new keys are made and every template takes the new id: the pods roll onto them
    together (kwok runs no LWS or Grove controller: the template change is what makes them roll)."""
    env = kube_cluster.env
    namespaces = {p: f"{NS_PREFIX}-k-{uuid.uuid4().hex[:6]}" for p in PATHWAYS}
    try:
        with _operator(kube_cluster, tmp_path, {}) as proc:  # Grove wins, unless a graph opts out
            for pathway, ns in namespaces.items():
                kubectl(env, "create", "namespace", ns)
                doc = example("trtllm-multinode")
                doc["metadata"]["namespace"] = ns
                if pathway == "lws":
                    doc["metadata"]["annotations"] = {"nvidia.com/enable-grove": "false"}
                kubectl(env, "apply", "-f", "-", input=json.dumps(doc))
            first = {
                p: wait_for(
                    lambda p=p, ns=ns: _stamped_with_the_secret(env, ns, p), 90, lambda: proc.log_tail()
                )
                for p, ns in namespaces.items()
            }
            assert first["lws"] != first["grove"]  # each namespace its own keys
            for ns in namespaces.values():
                kubectl(env, "delete", "secret", MPI["sshSecretName"], "-n", ns)
            for p, ns in namespaces.items():
                wait_for(
                    lambda p=p, ns=ns: _stamped_with_the_secret(env, ns, p, not_id=first[p]),
                    90,
                    lambda p=p, ns=ns: f"{p}: {_key_ids(env, ns, p)} {proc.log_tail()}",
                )
    finally:
        for ns in namespaces.values():
            kubectl(env, "delete", "namespace", ns, "--wait=false", check=False)


def _status(env: dict, kind: str, name: str, ns: str, status: dict) -> None:
    kubectl(
        env,
        "patch",
        kind,
        name,
        "-n",
        ns,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": status}),
    )


def _play_grove(env: dict, ns: str, name: str, pcs_name: str) -> str:
    """Create what Grove would for the graph's PodCliqueSet (a PodClique owned by it, a scaling group found
    by its label) and report the set's status; returns the scaling group's name."""
    pcs = _get(env, "podcliqueset", pcs_name, "-n", ns)
    owner = {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "name": pcs_name,
        "uid": pcs["metadata"]["uid"],
        "controller": True,
    }
    _status(
        env,
        "podcliqueset",
        pcs_name,
        ns,
        {
            "observedGeneration": pcs["metadata"]["generation"],
            "availableReplicas": 0,
            "updatedReplicas": 0,
        },
    )
    frontend = rgrove.child_name(pcs_name, "frontend")
    clique = {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodClique",
        "metadata": {"name": frontend, "namespace": ns, "ownerReferences": [owner]},
        "spec": {
            "roleName": "frontend",
            "replicas": 1,
            "podSpec": {"containers": [{"name": "main", "image": "x"}]},
        },
    }
    group_name = rgrove.child_name(pcs_name, "sglangworker")
    group = {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueScalingGroup",
        "metadata": {
            "name": group_name,
            "namespace": ns,
            "labels": {"nvidia.com/dynamo-graph-deployment-name": name},
            "ownerReferences": [owner],
        },
        "spec": {"cliqueNames": ["sglangworker-ldr", "sglangworker-wkr"], "replicas": 1},
    }
    kubectl(
        env,
        "create",
        "-f",
        "-",
        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [clique, group]}),
    )
    return group_name


def test_grove_status_is_read_back_from_podcliques_and_scaling_groups(
    kube_cluster, third_party_crds, tmp_path
):
    """This test plays the Grove operator kwok lacks (creating the PodClique and scaling group Grove would,
    and reporting their status), to prove the readback: the graph turns ready when Grove says so, and not
    before. The PodClique is found through its owning PodCliqueSet, the scaling group through its label."""
    env = kube_cluster.env
    name, ns = "sglang-multinode", f"{NS_PREFIX}-r-{uuid.uuid4().hex[:6]}"
    kubectl(env, "create", "namespace", ns)
    try:
        with _operator(kube_cluster, tmp_path, {"grove": {"enabled": True}}) as proc:
            _apply(env, ns, name)
            doc = example(name)
            doc["metadata"]["namespace"] = ns
            pcs_name = rgrove.pcs_name(doc)
            _ready_condition(env, ns, name, f"PodCliqueSet {ns}/{pcs_name} was accepted")
            group_name = _play_grove(env, ns, name, pcs_name)
            counts = {"scheduleGatedReplicas": 0, "scheduledReplicas": 1, "updatedReplicas": 1, "replicas": 1}
            frontend = rgrove.child_name(pcs_name, "frontend")
            _status(env, "podclique", frontend, ns, {**counts, "readyReplicas": 1})
            _status(env, "podcliquescalinggroup", group_name, ns, {**counts, "availableReplicas": 0})

            # both reports reach the status, each through its own watch event, in either order
            def both_reported() -> bool:
                st = ((_get(env, "dgd", name, "-n", ns) or {}).get("status")) or {}
                ready = next((c for c in st.get("conditions") or [] if c["type"] == "Ready"), {})
                return (st.get("components", {}).get("Frontend", {}).get("readyReplicas") == 1) and (
                    f"PodCliqueScalingGroup {group_name}: 0/1 replica groups available"
                    in ready.get("message", "")
                )

            wait_for(both_reported, 60, lambda: proc.log_tail(), interval=0.5)
            status = _get(env, "dgd", name, "-n", ns)["status"]
            assert status["state"] == "pending"
            assert "Frontend" not in next(c for c in status["conditions"] if c["type"] == "Ready")["message"]
            _status(env, "podcliquescalinggroup", group_name, ns, {**counts, "availableReplicas": 1})
            wait_for(
                lambda: (
                    ((_get(env, "dgd", name, "-n", ns) or {}).get("status") or {}).get("state")
                    == "successful"
                ),
                60,
                lambda: proc.log_tail(),
                interval=0.5,
            )
            status = _get(env, "dgd", name, "-n", ns)["status"]
            ready = next(c for c in status["conditions"] if c["type"] == "Ready")
            assert (ready["status"], ready["reason"]) == ("True", "all_resources_are_ready")
            assert status["components"]["SglangWorker"] == {
                "componentKind": "PodCliqueScalingGroup",
                "componentNames": [group_name],
                "replicas": 1,
                "updatedReplicas": 1,
                "availableReplicas": 1,
                "scheduledReplicas": 1,  # Grove's own count, read back
                "runtimeNamespace": f"{ns}-{name}",
            }
    finally:
        kubectl(env, "delete", "namespace", ns, "--wait=false", check=False)
