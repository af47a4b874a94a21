"""AdmissionReviews and calls into the webhook application, for the admission unit tests (pure: no server,
no cluster)."""

from __future__ import annotations

import json


def review(obj, operation="CREATE", old=None, kind="DynamoGraphDeployment", version="v1beta1", **req):
    """An AdmissionReview v1 of ``obj`` (namespace ``team``, user ``admin``); ``req``: more request fields."""
    r = {
        "uid": "u-1",
        "kind": {"group": "nvidia.com", "version": version, "kind": kind},
        "operation": operation,
        "namespace": "team",
        "object": obj,
        "userInfo": {"username": "admin"},
        **req,
    }
    if old is not None:
        r["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": r}


def app_call(app, path, payload):
    """The webhook application's answer to ``payload`` (bytes as sent, anything else as JSON) at ``path``."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return app.handle(path, body)


VALIDATE = "/validate-nvidia-com-v1beta1-dynamographdeployment"
MUTATE = "/mutate-nvidia-com-v1beta1-dynamographdeployment"
