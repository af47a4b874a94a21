"""Hypothesis-generated DGDs and DCDs, valid and invalid, through admission (validate + mutate, both API
versions) and the renderer the reconcilers call.

What must hold for every input, however broken: the webhook answers (never an HTTP 5xx, never an
AdmissionReview status 5xx: that is a bug in a rule, and the apiserver would show the user an "internal
error"); a denial names the field at fault in its message and in ``status.details.causes``; and whatever
admission lets through renders or is refused with a ``RenderError`` (the reconciler's clear error), never a
``KeyError``/``TypeError`` that would crash-loop a reconcile.
"""

from __future__ import annotations

import base64
import copy
import json
import uuid

import pytest
from dynamo_operator.api import v1beta1
from dynamo_operator.render import RenderError, render_all
from dynamo_operator.webhooks.defaulting import apply_patch
from dynamo_operator.webhooks.server import AdmissionSettings, WebhookApp, admission_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from support.fuzz import dcds, dgds

APP = WebhookApp(AdmissionSettings(log_denials=False))
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def review(obj: dict, kind: str, version: str, operation: str = "CREATE", old: dict | None = None) -> dict:
    req = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": "nvidia.com", "version": version, "kind": kind},
        "operation": operation,
        "namespace": "fuzz",
        "name": (obj.get("metadata") or {}).get("name"),
        "object": obj,
        "userInfo": {"username": "fuzzer"},
    }
    if old is not None:
        req["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}


def call(mode: str, obj: dict, kind: str, version: str, **kw) -> dict:
    status, body = APP.handle(
        admission_path(mode, version, kind), json.dumps(review(obj, kind, version, **kw)).encode()
    )
    assert status == 200, (status, body)
    response = body["response"]
    code = (response.get("status") or {}).get("code", 200)
    assert code < 500, f"{mode} webhook answered {code} for {kind}: {response}"
    return response


def admit_and_render(obj: dict, kind: str) -> None:
    """What the apiserver does (mutate, then validate the mutated object), then what the reconciler does."""
    mutated = call("mutate", obj, kind, "v1beta1")
    if mutated.get("patch"):
        patch = json.loads(base64.b64decode(mutated["patch"]))
        obj = apply_patch(obj, patch)
    verdict = call("validate", obj, kind, "v1beta1")
    if not verdict["allowed"]:
        message = verdict["status"]["message"]
        causes = verdict["status"]["details"]["causes"]
        assert causes, verdict
        for cause in causes:
            assert cause["field"], f"a denial cause names no field: {verdict}"
            assert cause["field"].split("[")[0].split(".")[0] in message or cause["field"] in message, verdict
        return
    # an UPDATE from this object to itself is always a legal no-op
    again = call("validate", obj, kind, "v1beta1", operation="UPDATE", old=copy.deepcopy(obj))
    assert again["allowed"], f"an unchanged object is refused on UPDATE: {again}"
    try:
        render_all(obj)
    except RenderError as e:
        assert str(e).startswith(kind), e  # names the object, then the field and the fix
        # The apiserver checks the CRD's structural schema before any webhook; the API models are that
        # schema. What passes both must render: a refusal only the reconciler sees is one the user never
        # sees at `kubectl apply` time.
        # Two known exceptions. Admission does not require the main container's image (minimal graphs
        # without one are accepted, as upstream does); the reconciler refuses it naming that field (on a
        # DCD, or on the graph's component). And an empty metadata.name never reaches a webhook: the
        # apiserver's own object validation refuses it first.
        image_missing = e.path == "spec.podTemplate.spec.containers[main].image" or (
            e.path.endswith("podTemplate.spec.containers") and "no container named 'main'" in str(e)
        )
        if not image_missing and e.path != "metadata.name":
            assert not schema_accepts(obj, kind), f"admitted and schema-valid, yet not renderable: {e}"
    # any other exception propagates: that is a reconciler crash


def schema_accepts(obj: dict, kind: str) -> bool:
    try:
        getattr(v1beta1, kind).model_validate(obj)
    except (ValidationError, ValueError, TypeError):
        return False
    return True


@FUZZ
@given(dgds())
def test_fuzzed_dgds_never_5xx_and_render_or_fail_clearly(dgd: dict) -> None:
    admit_and_render(dgd, "DynamoGraphDeployment")


@FUZZ
@given(dcds())
def test_fuzzed_dcds_never_5xx_and_render_or_fail_clearly(dcd: dict) -> None:
    admit_and_render(dcd, "DynamoComponentDeployment")


@FUZZ
@given(dgds(), st.sampled_from(["validate", "mutate"]))
def test_fuzzed_v1alpha1_reviews_never_5xx(dgd: dict, mode: str) -> None:
    """v1alpha1 endpoints get v1beta1-shaped garbage (as after a wrong conversion): refused, never a 5xx."""
    obj = dict(dgd, apiVersion="nvidia.com/v1alpha1")
    call(mode, obj, "DynamoGraphDeployment", "v1alpha1")


@pytest.mark.parametrize("body", [b"", b"{", b"[]", b'{"kind":"AdmissionReview"}', b"\xff\xfe"])
def test_malformed_bodies_are_4xx(body: bytes) -> None:
    status, _ = APP.handle(admission_path("validate", "v1beta1", "DynamoGraphDeployment"), body)
    assert 400 <= status < 500
