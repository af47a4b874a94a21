"""Admission of the fields only v1alpha1 has (webhooks/validation/alpha_only.py): a component's
``ingress`` and the graph's ``pvcs``, judged on the v1alpha1 form wherever it lives and reported at their
v1alpha1 paths, with the configuration's ingress defaults."""

from __future__ import annotations

import copy
import json

from dynamo_operator.api.conversion import convert
from dynamo_operator.webhooks.server import AdmissionSettings, WebhookApp
from dynamo_operator.webhooks.validation import Context, denial_message, validate
from support import graphs

IMAGE = "img"
CACHE = {
    "name": "cache",
    "create": True,
    "storageClass": "fast",
    "size": "50Gi",
    "volumeAccessMode": "ReadWriteOnce",
}


def alpha_dgd(ingress=None, pvcs=None, ctype="frontend") -> dict:
    """v1alpha1 graph ``team/g``: one service, Frontend, of ``ctype`` with ``ingress``; ``pvcs``: claims."""
    front = graphs.alpha_service(ctype, image=IMAGE, **({"ingress": ingress} if ingress is not None else {}))
    spec = {"pvcs": pvcs} if pvcs is not None else {}
    return graphs.dgd_v1alpha1({"Frontend": front}, name="g", namespace="team", **spec)


def errors(obj, old=None, ctx=None, version="v1alpha1", kind="DynamoGraphDeployment") -> list[str]:
    return [str(e) for e in validate(kind, version, obj, old, ctx).errors]


def test_a_valid_ingress_and_claims_are_admitted():
    ok = {"enabled": True, "host": "api", "hostPrefix": "llm-", "hostSuffix": "example.com"}
    assert errors(alpha_dgd(ok, [CACHE, {"name": "mine"}])) == []
    assert errors(alpha_dgd({"enabled": False})) == []  # off: the other settings do not matter


def test_ingress_errors_name_the_v1alpha1_field():
    assert errors(alpha_dgd({"enabled": True})) == [
        "spec.services[Frontend].ingress.host: Required value: required when enabled is true: the host is "
        "<hostPrefix><host>.<hostSuffix>"
    ]
    (err,) = errors(alpha_dgd({"enabled": True, "host": "a", "useVirtualService": True}))
    assert err.startswith("spec.services[Frontend].ingress.virtualServiceGateway: Required value")
    (err,) = errors(alpha_dgd({"enabled": True, "host": "a"}, ctype="router"))
    assert err.startswith(
        "spec.services[Frontend].ingress.enabled: Invalid value: true: the component has no"
    )
    assert "componentType router" in err
    assert errors(alpha_dgd({"enabled": True, "host": "a"}, ctype="main")) == []  # main is the frontend


def test_the_configured_gateway_satisfies_use_virtual_service():
    obj = alpha_dgd({"enabled": True, "host": "a", "useVirtualService": True})
    assert errors(obj, ctx=Context(ingress={"virtualServiceGateway": "istio-system/gw"})) == []


def test_a_v1beta1_object_carrying_the_record_is_judged_too():
    """The record is where a v1alpha1 field lives once read as v1beta1; the same rules apply there."""
    beta = convert(alpha_dgd({"enabled": True, "host": "UPPER"}), "v1beta1")
    (err,) = errors(beta, version="v1beta1")
    assert err.startswith("spec.services[Frontend].ingress.host: Invalid value")


def test_a_standalone_dcd_ingress():
    dcd = graphs.alpha_dcd({"enabled": True, "host": "a", "virtualServiceGateway": "gw"}, image=IMAGE)
    (err,) = errors(dcd, kind="DynamoComponentDeployment")
    assert err.startswith("spec.ingress.virtualServiceGateway: Invalid value")
    assert "useVirtualService: true" in err


def test_claims_the_operator_must_create_need_their_fields():
    assert errors(alpha_dgd(pvcs=[{"name": "cache", "create": True, "size": "50Gi"}])) == [
        "spec.pvcs[0].storageClass: Required value: required when create is true (the operator creates the "
        "claim with it)",
        "spec.pvcs[0].volumeAccessMode: Required value: required when create is true (the operator creates "
        "the claim with it)",
    ]
    assert errors(alpha_dgd(pvcs=[CACHE, CACHE])) == [
        "spec.pvcs[1].name: Duplicate value: repeats spec.pvcs[0]; give each PVC one entry"
    ]


def test_a_created_claim_may_grow_but_not_change_what_needs_a_new_volume():
    old = alpha_dgd(pvcs=[CACHE])
    grown = alpha_dgd(pvcs=[{**CACHE, "size": "80Gi"}])
    assert errors(grown, old) == []
    moved = alpha_dgd(pvcs=[{**CACHE, "storageClass": "slow", "size": "10Gi"}])
    errs = errors(moved, old)
    assert [e.split(":")[0] for e in errs] == ["spec.pvcs[0].storageClass", "spec.pvcs[0].size"]
    assert "delete the PVC yourself" in errs[0] and "cannot shrink" in errs[1]


def test_the_webhook_names_the_object_and_uses_the_configurations_ingress():
    """Through the HTTP handler: the denial names the object; the settings' ingress reaches the rules."""
    obj = alpha_dgd({"enabled": True, "host": "a", "useVirtualService": True})
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "kind": {"group": "nvidia.com", "version": "v1alpha1", "kind": "DynamoGraphDeployment"},
            "operation": "CREATE",
            "namespace": "team",
            "object": obj,
            "userInfo": {"username": "admin"},
        },
    }
    path = "/validate-nvidia-com-v1alpha1-dynamographdeployment"
    _, out = WebhookApp(AdmissionSettings(log_denials=False)).handle(path, json.dumps(review).encode())
    resp = out["response"]
    assert resp["allowed"] is False
    assert resp["status"]["message"].startswith(
        'DynamoGraphDeployment.nvidia.com "g" is invalid: '
        "spec.services[Frontend].ingress.virtualServiceGateway"
    )
    settings = AdmissionSettings(log_denials=False, ingress={"virtualServiceGateway": "gw"})
    _, out = WebhookApp(settings).handle(path, json.dumps(copy.deepcopy(review)).encode())
    assert out["response"]["allowed"] is True


def test_denial_message_lists_every_alpha_error():
    obj = alpha_dgd({"enabled": True}, [{"name": "x", "create": True}])
    errs = validate("DynamoGraphDeployment", "v1alpha1", obj).errors
    assert len(errs) == 4
    assert denial_message("DynamoGraphDeployment", "g", errs).startswith(
        'DynamoGraphDeployment.nvidia.com "g" is invalid: [spec.services[Frontend].ingress.host'
    )


def test_a_graph_service_name_that_differs_from_its_key_is_refused():
    """The services key names the component; a serviceName saying otherwise would be overridden silently."""
    obj = alpha_dgd()
    obj["spec"]["services"]["Frontend"]["serviceName"] = "Frontend"
    assert errors(obj) == []  # the key's own name changes nothing
    obj["spec"]["services"]["Frontend"]["serviceName"] = "api"
    (err,) = errors(obj)
    assert err.startswith("spec.services[Frontend].serviceName: Forbidden: the key of spec.services names")
    assert "remove serviceName or rename the key" in err
    beta = convert(copy.deepcopy(obj), "v1beta1")  # the same graph written as v1beta1 keeps the record
    assert any("serviceName" in e for e in errors(beta, version="v1beta1"))
