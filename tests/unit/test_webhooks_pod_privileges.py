"""Admission on privileged pod template settings (webhooks/validation/pod_privileges.py): a warning per
setting, the allow lists, Deny for what a request adds, v1alpha1 paths, and the configuration keys."""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.api.config import ConfigError, effective, parse_operator_config
from dynamo_operator.webhooks.server import AdmissionSettings, WebhookApp
from dynamo_operator.webhooks.validation import Context, PodTemplatePolicy, validate
from support import graphs
from support.admission import VALIDATE, app_call, review

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"


def worker(pod_extra: dict | None = None, main_sc: dict | None = None, ctype="worker", name="Worker") -> dict:
    main: dict = {"name": "main", "image": IMAGE}
    if main_sc is not None:
        main["securityContext"] = main_sc
    return {"name": name, "type": ctype, "podTemplate": {"spec": {"containers": [main], **(pod_extra or {})}}}


def dgd(*components: dict) -> dict:
    return graphs.dgd(*components, namespace="team", backendFramework="vllm")


def policy(**checks) -> PodTemplatePolicy:
    doc = effective({"security": {"workloads": {"podTemplates": checks}}})
    return PodTemplatePolicy.from_config(doc)


def run(obj: dict, old: dict | None = None, version="v1beta1", kind="DynamoGraphDeployment", **checks):
    ctx = Context(operation="UPDATE" if old else "CREATE", pod_templates=policy(**checks))
    return validate(kind, version, obj, old, ctx)


EVERYTHING = worker(
    {
        "hostNetwork": True,
        "hostPID": True,
        "hostIPC": True,
        "serviceAccountName": "cluster-reader",
        "volumes": [{"name": "dev", "hostPath": {"path": "/dev"}}, {"name": "scratch", "emptyDir": {}}],
        "initContainers": [
            {"name": "tune", "image": "busybox:1.36", "securityContext": {"privileged": True}}
        ],
    },
    main_sc={"capabilities": {"add": ["IPC_LOCK", "NET_BIND_SERVICE", "CAP_SYS_PTRACE"]}},
)


def test_each_setting_is_a_warning_naming_its_field_and_the_fix():
    res = run(dgd(EVERYTHING))
    assert res.allowed
    p = "spec.components[0].podTemplate.spec"
    assert [w.split(": ", 1)[0] for w in res.warnings] == [
        f"{p}.hostNetwork",
        f"{p}.hostPID",
        f"{p}.hostIPC",
        f"{p}.volumes[0].hostPath",
        f"{p}.containers[0].securityContext.capabilities.add",
        f"{p}.initContainers[0].securityContext.privileged",
        f"{p}.serviceAccountName",
    ]
    assert res.warnings[0] == (
        f"{p}.hostNetwork: the pod shares its node's network namespace (every host port and interface); "
        "remove it if the workload does not need it, or allow it in the operator configuration "
        "(security.workloads.podTemplates.allow: [hostNetwork])"
    )
    assert "allowedCapabilities" in res.warnings[4] and "allowedServiceAccounts" in res.warnings[6]


def test_a_plain_graph_and_the_operators_own_accounts_pass_without_a_word():
    graph = dgd(
        worker(),
        worker({"serviceAccountName": "planner-serviceaccount"}, ctype="planner", name="Planner"),
        worker({"serviceAccountName": "default"}, name="Other"),
        worker(main_sc={"capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}}, name="Web"),
    )
    assert run(graph).warnings == []
    # the planner's account on a worker lends it the planner's permissions
    borrowed = dgd(worker({"serviceAccountName": "planner-serviceaccount"}))
    assert [w.split(":")[0] for w in run(borrowed).warnings] == [
        "spec.components[0].podTemplate.spec.serviceAccountName"
    ]


def test_allow_lists_silence_what_they_name():
    res = run(
        dgd(EVERYTHING),
        allow=["hostNetwork", "hostPID", "hostIPC", "hostPath", "privileged"],
        allowedCapabilities=["IPC_LOCK", "SYS_PTRACE"],
        allowedServiceAccounts=["cluster-reader"],
    )
    assert res.warnings == []
    some = run(dgd(EVERYTHING), allow=["addedCapabilities", "serviceAccountName"])
    assert len(some.warnings) == 5


def test_deny_refuses_what_a_request_adds_and_only_warns_about_what_was_there():
    res = run(dgd(EVERYTHING), action="Deny")
    assert not res.allowed and res.warnings == []
    assert [str(e).split(": ")[1] for e in res.errors] == ["Forbidden"] * 7
    assert str(res.errors[0]).startswith(
        "spec.components[0].podTemplate.spec.hostNetwork: Forbidden: true: the pod shares its node's"
    )
    old = dgd(worker({"hostNetwork": True}))
    new = copy.deepcopy(old)
    new["spec"]["components"][0]["replicas"] = 3
    kept = run(new, old, action="Deny")
    assert kept.allowed and len(kept.warnings) == 1
    new["spec"]["components"][0]["podTemplate"]["spec"]["hostPID"] = True
    added = run(new, old, action="Deny")
    assert [e.field for e in added.errors] == ["spec.components[0].podTemplate.spec.hostPID"]
    assert len(added.warnings) == 1  # hostNetwork, already there


def test_v1alpha1_paths_and_a_component_deployment():
    alpha = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "team"},
        "spec": {
            "backendFramework": "vllm",
            "services": {
                "Worker": {
                    "componentType": "worker",
                    "extraPodSpec": {
                        "hostNetwork": True,
                        "mainContainer": {"image": IMAGE, "securityContext": {"privileged": True}},
                    },
                }
            },
        },
    }
    res = run(alpha, version="v1alpha1")
    assert sorted(w.split(": ")[0] for w in res.warnings) == [
        "spec.services[Worker].extraPodSpec.hostNetwork",
        "spec.services[Worker].extraPodSpec.mainContainer.securityContext.privileged",
    ]
    dcd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g-worker", "namespace": "team"},
        "spec": {
            **worker({"volumes": [{"name": "h", "hostPath": {"path": "/var/run"}}]}),
            "backendFramework": "vllm",
        },
    }
    (w,) = run(dcd, kind="DynamoComponentDeployment").warnings
    assert w.startswith("spec.podTemplate.spec.volumes[0].hostPath: a hostPath volume")


def test_restricted_switch_explains_a_template_that_opts_out():
    graph = dgd(worker({"securityContext": {"runAsUser": 0}}))
    assert run(graph).warnings == []
    ctx = Context(pod_templates=PodTemplatePolicy(restricted=True))
    (w,) = validate("DynamoGraphDeployment", "v1beta1", graph, None, ctx).warnings
    assert w.startswith("spec.components[0].podTemplate.spec.securityContext is set, so the operator injects")


def test_the_admission_response_carries_the_warnings():
    app = WebhookApp(AdmissionSettings(pod_templates=policy()))
    _, out = app_call(app, VALIDATE, review(dgd(worker({"hostIPC": True}))))
    assert out["response"]["allowed"] is True
    assert out["response"]["warnings"][0].startswith("spec.components[0].podTemplate.spec.hostIPC: ")
    _, out = app_call(WebhookApp(), VALIDATE, review(dgd(worker({"hostIPC": True}))))  # no settings: warn
    assert len(out["response"]["warnings"]) == 1
    app = WebhookApp(AdmissionSettings(pod_templates=policy(action="Deny")))
    _, out = app_call(app, VALIDATE, review(dgd(worker({"hostIPC": True}))))
    assert out["response"]["allowed"] is False and out["response"]["status"]["code"] == 422


def test_configuration_keys_default_and_validate():
    doc = effective(parse_operator_config({}))
    assert doc["security"]["workloads"] == {
        "restrictedSecurityContext": False,
        "podTemplates": {"action": "Warn"},
        "imagePullSecretDiscovery": True,
    }
    assert PodTemplatePolicy.from_config(doc) == PodTemplatePolicy()
    for bad, field in (
        ({"action": "Block"}, "security.workloads.podTemplates.action"),
        ({"allow": ["hostpath"]}, "security.workloads.podTemplates.allow.0"),
        ({"allowedCapabilities": ["ipc_lock"]}, "security.workloads.podTemplates.allowedCapabilities[0]"),
        (
            {"allowedServiceAccounts": ["Bad_Name"]},
            "security.workloads.podTemplates.allowedServiceAccounts[0]",
        ),
    ):
        with pytest.raises(ConfigError) as ei:
            parse_operator_config({"security": {"workloads": {"podTemplates": bad}}})
        assert [p for p, _ in ei.value.errors] == [field]


def test_the_operators_own_writes_are_not_checked():
    """The DCDs the operator writes carry a DGD's templates, checked (or grandfathered) at the DGD's
    admission: refusing them under Deny would leave a grandfathered graph half-deployed."""
    dcd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "g-worker", "namespace": "team"},
        "spec": {**worker({"hostNetwork": True}), "backendFramework": "vllm"},
    }
    operator = "system:serviceaccount:dynamo-system:dynamo-operator-controller-manager"
    deny = policy(action="Deny")
    by_operator = Context(pod_templates=deny, username=operator, operator_usernames=frozenset({operator}))
    res = validate("DynamoComponentDeployment", "v1beta1", dcd, None, by_operator)
    assert res.allowed and res.warnings == []
    by_author = Context(pod_templates=deny, username="alice", operator_usernames=frozenset({operator}))
    res = validate("DynamoComponentDeployment", "v1beta1", dcd, None, by_author)
    assert [e.field for e in res.errors] == ["spec.podTemplate.spec.hostNetwork"]
