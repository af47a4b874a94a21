"""The claims of ``spec.pvcs`` with ``create: true`` (render/pvc.py) and each namespace's own MPI SSH Secret
(render/mpisecret.py, the keys it should hold: controllers/mpisecret.py ``wanted_keys``): what the graph
controller writes, from the same functions ``render`` shows."""

from __future__ import annotations

import base64
import copy

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator import sshkeys
from dynamo_operator.api.conversion import convert
from dynamo_operator.controllers.mpisecret import wanted_keys
from dynamo_operator.render import RenderContext, render_all
from dynamo_operator.render.mpisecret import (
    ANN_COPIED_FROM,
    ANN_KEYS_FOR,
    is_ours,
    key_id,
    keys_made_here,
    mpi_ssh_secret,
)
from dynamo_operator.render.names import ANN_MPI_SSH_KEY_ID as ANN_ID
from dynamo_operator.render.pvc import created_by, graph_pvcs, pvc_problems
from dynamo_operator.render.validate import to_v1beta1
from dynamo_operator.sshkeys import MPI_SSH_KEYS

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


def test_a_multinode_trtllm_graph_elsewhere_gets_a_secret_of_its_namespaces_own():
    secret = mpi_ssh_secret(graph(TRTLLM, "team"), RenderContext(operator_config=MPI))
    assert secret["metadata"]["name"] == "mpi-run-ssh-secret" and secret["metadata"]["namespace"] == "team"
    assert secret["type"] == "Opaque" and "data" not in secret  # the keys are the controller's to make
    assert secret["metadata"]["annotations"][ANN_KEYS_FOR] == "team"
    assert ANN_COPIED_FROM not in secret["metadata"]["annotations"]
    assert is_ours(secret) and keys_made_here(secret) and not is_ours({"metadata": {"labels": {}}})


def _stored(ns: str, data: dict[str, bytes], annotations: dict) -> dict:
    secret = mpi_ssh_secret(graph(TRTLLM, ns), RenderContext(operator_config=MPI))
    secret["metadata"]["annotations"] = annotations
    secret["data"] = {k: base64.b64encode(v).decode() for k, v in data.items()}
    return secret


def test_an_earlier_operators_copy_of_the_shared_key_gets_keys_of_its_own():
    """The upgrade migration: a copy (annotated copied-from, the shared key) and a Secret whose keys were
    made for another namespace get new keys of both kinds; keys made here are kept."""
    shared, _ = sshkeys.complete_keys({})
    old_copy = _stored("team", shared, {ANN_COPIED_FROM: "dynamo-system/mpi-run-ssh-secret"})
    moved = _stored("team", shared, {ANN_KEYS_FOR: "other-team"})
    for secret in (old_copy, moved):
        data, why = wanted_keys(secret)
        assert why and "team" in why
        for key in (sshkeys.PRIVATE_KEY, sshkeys.HOST_KEY):
            assert data[key] != secret["data"][key]
        assert set(data) == set(MPI_SSH_KEYS) and key_id({"data": data}) != key_id(secret)
    assert "copied from dynamo-system/mpi-run-ssh-secret" in wanted_keys(old_copy)[1]
    own = _stored("team", shared, {ANN_KEYS_FOR: "team"})
    assert wanted_keys(own) == (own["data"], "")  # never rotated


def test_keys_made_here_are_completed_never_rotated():
    """An edited derived entry is restored from the private keys (no new key); a private key made
    unreadable or deleted by hand is made anew (the pods roll onto it: the key id changes)."""
    data, _ = sshkeys.complete_keys({})
    own = _stored("team", data, {ANN_KEYS_FOR: "team"})
    edited = copy.deepcopy(own)
    edited["data"][sshkeys.PUBLIC_KEY] = base64.b64encode(b"ssh-rsa bogus").decode()
    del edited["data"][sshkeys.KNOWN_HOSTS]
    assert wanted_keys(edited) == (own["data"], "")
    broken = copy.deepcopy(own)
    broken["data"][sshkeys.HOST_KEY] = base64.b64encode(b"not a key").decode()
    new, why = wanted_keys(broken)
    assert why == "host.key missing or unreadable: made anew"
    assert new[sshkeys.PRIVATE_KEY] == own["data"][sshkeys.PRIVATE_KEY]
    assert new[sshkeys.HOST_KEY] != own["data"][sshkeys.HOST_KEY] and key_id({"data": new}) != key_id(own)


def test_the_key_id_follows_every_entry_the_pods_read_and_nothing_else():
    data, _ = sshkeys.complete_keys({})
    secret = _stored("team", data, {ANN_KEYS_FOR: "team"})
    assert key_id(secret) == key_id(copy.deepcopy(secret)) and len(key_id(secret)) == 16
    for key in MPI_SSH_KEYS:
        changed = copy.deepcopy(secret)
        changed["data"][key] = base64.b64encode(b"x").decode()
        assert key_id(changed) != key_id(secret), key
    assert key_id({**secret, "data": {**secret["data"], "token": "eA=="}}) == key_id(secret)
    assert key_id(None) is None and key_id({"data": {"token": "eA=="}}) is None


def test_multinode_trtllm_pods_carry_the_namespaces_key_id():
    """What rolls the pods when the keys change: the id on the leader's and workers' templates (LWS and
    Grove), on no other pod, and nothing without an id (``render``, copying off)."""
    doc = copy.deepcopy(TRTLLM)
    doc["metadata"]["namespace"] = "team"
    for detected in ({"lws"}, {"grove"}):
        ctx = RenderContext(operator_config=MPI, detected=frozenset(detected), mpi_ssh_key_id="0123abcd")
        templates = list(_pod_templates(render_all(doc, ctx)))
        stamped = [t for t in templates if (t.get("metadata") or {}).get("annotations", {}).get(ANN_ID)]
        assert len(stamped) == 2 and all(t["metadata"]["annotations"][ANN_ID] == "0123abcd" for t in stamped)
        assert len(templates) > len(stamped)  # the frontend is not stamped
        bare = RenderContext(operator_config=MPI, detected=frozenset(detected))
        assert not any(ANN_ID in str(t) for t in _pod_templates(render_all(doc, bare)))


def _pod_templates(objs: list[dict]):
    for obj in objs:
        spec = obj.get("spec") or {}
        if obj["kind"] == "LeaderWorkerSet":
            yield spec["leaderWorkerTemplate"]["leaderTemplate"]
            yield spec["leaderWorkerTemplate"]["workerTemplate"]
        elif obj["kind"] == "Deployment":
            yield spec["template"]
        elif obj["kind"] == "PodCliqueSet":
            for clique in spec["template"]["cliques"]:
                yield {"metadata": {"annotations": clique.get("annotations") or {}}, "spec": clique["spec"]}


@pytest.mark.parametrize(
    ("doc", "ns", "config"),
    [
        (TRTLLM, "dynamo-system", MPI),  # the release namespace: its pods mount the install hook's Secret
        (TRTLLM, "team", {"mpi": {**MPI["mpi"], "sshSecretCopy": False}}),  # the operator provides none
        (TRTLLM, "team", {}),  # no Secret configured
        (GRAPH, "team", MPI),  # no multinode TensorRT-LLM component
    ],
)
def test_no_secret_where_none_is_needed(doc, ns, config):
    assert mpi_ssh_secret(graph(doc, ns), RenderContext(operator_config=config)) is None


def test_render_shows_the_secret_without_data():
    doc = copy.deepcopy(TRTLLM)
    doc["metadata"]["namespace"] = "team"
    objs = render_all(doc, RenderContext(operator_config=MPI, detected=frozenset({"lws"})))
    (secret,) = [o for o in objs if o["kind"] == "Secret"]
    assert secret["metadata"]["name"] == "mpi-run-ssh-secret" and "data" not in secret


def test_a_secrets_keys_are_parsed_once_however_often_it_is_checked(monkeypatch):
    """Every reconcile of a graph with an MPI component checks its namespace's Secret; the private keys'
    public halves are remembered (``sshkeys.DERIVED_KEYS_CACHED``), so the keys are parsed once, and a
    changed key is parsed anew."""
    data, _ = sshkeys.complete_keys({})
    loads = []
    real = sshkeys.serialization.load_ssh_private_key

    def counting(pem, password):
        loads.append(pem)
        return real(pem, password)

    monkeypatch.setattr(sshkeys.serialization, "load_ssh_private_key", counting)
    sshkeys.keypair_from_private.cache_clear()
    for _ in range(5):
        again, made = sshkeys.complete_keys(data)
        assert again == data and made == []
    assert len(loads) == 2, len(loads)  # the user key and the host key, once each
    other, _ = sshkeys.complete_keys({})
    sshkeys.complete_keys(other)
    assert len(loads) == 4
