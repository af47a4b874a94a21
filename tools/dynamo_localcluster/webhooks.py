"""Admission webhook registrations for an operator run as a local process (tests, faults, benchmarks).

On the local control plane the webhook server is a process on 127.0.0.1, not a Service, so its configurations
name a URL. They carry the labels the operator's certificate manager looks for, so it injects its CA bundle
exactly as into the chart's configurations; built in one place so every harness registers the same shape.
"""

from __future__ import annotations

from dynamo_operator.api import registry
from dynamo_operator.webhooks.certs import INJECTION_LABEL, NAMESPACE_LABEL

LOOPBACK = "127.0.0.1"


def url_webhook(
    port: int, path: str, mode: str, kind: str, version: str, *, name: str, namespace: str | None = None
) -> dict:
    """One webhook entry calling ``https://127.0.0.1:<port><path>`` for CREATE/UPDATE of ``kind`` at
    ``version``; ``namespace`` limits it to that namespace (other tests share the cluster)."""
    hook: dict = {
        "name": name,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "timeoutSeconds": 10,
        "matchPolicy": "Exact",
        "clientConfig": {"url": f"https://{LOOPBACK}:{port}{path}"},
        "rules": [
            {
                "apiGroups": [registry.GROUP],
                "apiVersions": [version],
                "operations": ["CREATE", "UPDATE"],
                "resources": [registry.KINDS[kind].plural],
                "scope": "Namespaced",
            }
        ],
    }
    if namespace is not None:
        hook["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    return hook


def webhook_configuration(mode: str, name: str, operator_namespace: str, hooks: list[dict]) -> dict:
    """A Validating (``mode`` "validate") or Mutating configuration, labelled for CA injection by the
    operator of ``operator_namespace``."""
    kind = "ValidatingWebhookConfiguration" if mode == "validate" else "MutatingWebhookConfiguration"
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {
            "name": name,
            "labels": {INJECTION_LABEL: "true", NAMESPACE_LABEL: operator_namespace},
        },
        "webhooks": hooks,
    }
