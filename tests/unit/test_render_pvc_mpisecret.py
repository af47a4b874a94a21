"""The claims of ``spec.pvcs`` with ``create: true`` (render/pvc.py) and the MPI SSH Secret's copy
(render/mpisecret.py): what the graph controller writes, from the same functions ``render`` shows."""

from __future__ import annotations

import copy

import pytest
import yaml
from dynamo_hooks import sshkeys
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.api.conversion import convert
from dynamo_operator.render import RenderContext, render_all
from dynamo_operator.render.mpisecret import MPI_SSH_KEYS, is_copy, mpi_secret_copy
from dynamo_operator.render.pvc import created_by, graph_pvcs, pvc_problems
from dynamo_operator.render.validate import to_v1beta1

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"
CACHE = {
    "name": "model-cache",
    "create": True,
    "storageClass": "fast",
    "size": "100Gi",
    "volumeAccessMode": "ReadWriteMany",
}
GRAPH = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "llm", "namespace": "team"},
    "spec": {
        "pvcs": [CACHE, {"name": "users-own"}],
        "services": {
            "Frontend": {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"image": IMAGE}}},
            "Worker": {
                "componentType": "worker",
                "volumeMounts": [{"name": "model-cache", "mountPoint": "/models"}],
                "extraPodSpec": {
                    "mainContainer": {"image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"]}
                },
            },
        },
    },
}
TRTLLM = yaml.safe_load((REPO_ROOT / "examples" / "trtllm-multinode.yaml").read_text())
MPI = {"mpi": {"sshSecretName": "mpi-run-ssh-secret", "sshSecretNamespace": "dynamo-system"}}


def test_create_true_entries_become_claims_without_owner():
    (pvc,) = graph_pvcs(GRAPH, RenderContext())
    assert (pvc["apiVersion"], pvc["kind"]) == ("v1", "PersistentVolumeClaim")
    assert pvc["metadata"]["name"] == "model-cache" and pvc["metadata"]["namespace"] == "team"
    assert pvc["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "100Gi"}},
        "storageClassName": "fast",
    }
    assert "ownerReferences" not in pvc["metadata"]  # never garbage-collected with the graph
    assert created_by(pvc, "llm") and not created_by(pvc, "other")
    assert not created_by({"metadata": {"labels": {}}}, "llm")  # a user's claim is never ours


def test_claims_come_from_the_conversion_record_too_and_pods_mount_them():
    beta = convert(GRAPH, "v1beta1")
    assert "pvcs" not in beta["spec"]
    assert graph_pvcs(beta, RenderContext()) == graph_pvcs(GRAPH, RenderContext())
    objs = render_all(GRAPH, RenderContext())
    assert [o["metadata"]["name"] for o in objs if o["kind"] == "PersistentVolumeClaim"] == ["model-cache"]
    dep = next(o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == "llm-worker")
    volumes = dep["spec"]["template"]["spec"]["volumes"]
    assert {"name": "model-cache", "persistentVolumeClaim": {"claimName": "model-cache"}} in volumes


def test_a_v1beta1_graph_has_no_claims():
    beta = to_v1beta1(convert(GRAPH, "v1beta1"))
    beta["metadata"].pop("annotations")
    assert graph_pvcs(beta, RenderContext()) == []


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ([CACHE], []),
        ([{"name": "x", "create": False}], []),
        (
            [{"name": "x", "create": True}],
            [
                ((0, "storageClass"), "Required"),
                ((0, "size"), "Required"),
                ((0, "volumeAccessMode"), "Required"),
            ],
        ),
        ([{**CACHE, "volumeAccessMode": "ReadWriteSometimes"}], [((0, "volumeAccessMode"), "NotSupported")]),
        ([{**CACHE, "size": "0"}], [((0, "size"), "Invalid")]),
        ([{**CACHE, "size": "lots"}], [((0, "size"), "Invalid")]),
        ([CACHE, CACHE], [((1, "name"), "Duplicate")]),
        ([{"name": "Bad_Name"}], [((0, "name"), "Invalid")]),
    ],
)
def test_pvc_problems(entries, expected):
    assert [(p, t) for p, t, _ in pvc_problems(entries, None)] == expected


def test_a_created_claim_can_grow_but_not_shrink_or_change_class_or_mode():
    grown = {**CACHE, "size": "200Gi"}
    assert pvc_problems([grown], [CACHE]) == []
    problems = pvc_problems([{**CACHE, "size": "10Gi", "storageClass": "slow"}], [CACHE])
    assert {(p, t) for p, t, _ in problems} == {
        ((0, "storageClass"), "Forbidden"),
        ((0, "size"), "Forbidden"),
    }
    assert all("delete" in m or "shrink" in m for _, _, m in problems)
    assert pvc_problems([{**CACHE, "volumeAccessMode": "ReadWriteOnce"}], [{**CACHE, "create": False}]) == []


def graph(doc: dict, ns: str) -> dict:
    obj = copy.deepcopy(doc)
    obj["metadata"]["namespace"] = ns
    return to_v1beta1(obj)


def test_a_multinode_trtllm_graph_elsewhere_gets_a_copy_of_the_mpi_secret():
    source = {"type": "Opaque", "data": {"private.key": "a2V5", "private.key.pub": "cHVi"}}
    copy_ = mpi_secret_copy(graph(TRTLLM, "team"), RenderContext(operator_config=MPI), source)
    assert copy_["metadata"]["name"] == "mpi-run-ssh-secret" and copy_["metadata"]["namespace"] == "team"
    assert copy_["data"] == source["data"] and copy_["type"] == "Opaque"
    assert (
        copy_["metadata"]["annotations"]["nvidia.com/dynamo-copied-from"]
        == "dynamo-system/mpi-run-ssh-secret"
    )
    assert is_copy(copy_) and not is_copy({"metadata": {"labels": {}}})


def test_the_copy_holds_only_the_mpi_keys_in_an_opaque_secret():
    """What the chart's admission policy lets the operator write (templates/mpi-secret-rbac.yaml): a source
    of another type or with keys of its own still gives an Opaque copy of the three MPI keys."""
    data = {"private.key": "a2V5", "authorized_keys": "cHVi", "token": "c2VjcmV0", "ca.crt": "Y2E="}
    source = {"type": "kubernetes.io/ssh-auth", "data": data}
    copy_ = mpi_secret_copy(graph(TRTLLM, "team"), RenderContext(operator_config=MPI), source)
    assert copy_["type"] == "Opaque"
    assert copy_["data"] == {"private.key": "a2V5", "authorized_keys": "cHVi"}


def test_the_copyable_keys_are_the_ones_the_install_hook_writes():
    user = sshkeys.generate_keypair(key_size=1024).secret_data()
    written = {**user, **sshkeys.generate_host_key().secret_data()}
    assert set(MPI_SSH_KEYS) == set(written)  # the user key pair, authorized_keys, the pinned host key


@pytest.mark.parametrize(
    ("doc", "ns", "config"),
    [
        (TRTLLM, "dynamo-system", MPI),  # the graph lives with the source: its pods mount the original
        (TRTLLM, "team", {"mpi": {**MPI["mpi"], "sshSecretCopy": False}}),  # copying turned off
        (TRTLLM, "team", {}),  # no source configured
        (GRAPH, "team", MPI),  # no multinode TensorRT-LLM component
    ],
)
def test_no_copy_where_none_is_needed(doc, ns, config):
    assert mpi_secret_copy(graph(doc, ns), RenderContext(operator_config=config)) is None


def test_render_shows_the_copy_without_data():
    doc = copy.deepcopy(TRTLLM)
    doc["metadata"]["namespace"] = "team"
    objs = render_all(doc, RenderContext(operator_config=MPI, detected=frozenset({"lws"})))
    (secret,) = [o for o in objs if o["kind"] == "Secret"]
    assert secret["metadata"]["name"] == "mpi-run-ssh-secret" and "data" not in secret
