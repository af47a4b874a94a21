"""The LeaderWorkerSet controller (``sigs.k8s.io/lws`` v0.7.0, the ``lws`` image built from its Go module)
as a real Pod on the node, with the objects its own release ships: namespace ``lws-system``, its
ServiceAccount and RBAC, the webhook Service and an empty Secret its internal certificate manager fills (it
generates a CA and the serving certificate, writes them into that Secret and patches the CA bundle into the
two webhook configurations by name; the Pod mounts the Secret where the controller reads its serving
certificate, and the controller waits for the files there before it sets up its webhooks and controllers),
the mutating and validating webhook configurations (LeaderWorkerSets, and Pods that carry the
``leaderworkerset.sigs.k8s.io/name`` label only), and its Configuration.

The CRDs are not here: the caller creates them first (the tier vendors them, ``tests/fixtures/crds/lws``).
The names follow the upstream release (``lws-`` prefix) because the controller patches its webhook
configurations by those names.
"""

from __future__ import annotations

import datetime as dt
import json

from . import layout

NAMESPACE = "lws-system"
SERVICE_ACCOUNT = "lws-controller-manager"
DEPLOYMENT = "lws-controller-manager"
SERVICE = "lws-webhook-service"
SECRET = "lws-webhook-server-cert"
CONFIG_MAP = "lws-manager-config"
CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"  # the controller's default webhook.certDir
MUTATING = "lws-mutating-webhook-configuration"
VALIDATING = "lws-validating-webhook-configuration"
LABELS = {"app.kubernetes.io/name": "lws", "control-plane": "controller-manager"}
POD_SELECTOR = {"matchExpressions": [{"key": "leaderworkerset.sigs.k8s.io/name", "operator": "Exists"}]}
CONFIGURATION = {
    "apiVersion": "config.lws.x-k8s.io/v1alpha1",
    "kind": "Configuration",
    "leaderElection": {"leaderElect": True},
    "internalCertManagement": {"enable": True},
    # probes on 8081, webhooks on 9443 (the Service's target), metrics on loopback only
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": "127.0.0.1:8443"},
    "webhook": {"port": 9443},
}


# What ``ready`` dry-run creates: the smallest LeaderWorkerSet both webhooks admit (no replicas).
ADMISSION_PROBE = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "admission-probe"},
    "spec": {
        "replicas": 0,
        "leaderWorkerTemplate": {
            "size": 1,
            "workerTemplate": {"spec": {"containers": [{"name": "probe", "image": "probe"}]}},
        },
    },
}


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> dict:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


ALL = ["create", "delete", "get", "list", "patch", "update", "watch"]
CLUSTER_RULES = [
    _rule([""], ["events"], ["create", "get", "list", "patch", "update", "watch"]),
    _rule([""], ["nodes"], ["get", "list", "patch", "update", "watch"]),
    _rule([""], ["pods", "services"], ALL),
    _rule([""], ["pods/finalizers"], ["update"]),
    _rule([""], ["secrets"], ["get", "list", "update", "watch"]),
    _rule(
        ["admissionregistration.k8s.io"],
        ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
        ["get", "list", "update", "watch"],
    ),
    _rule(["apps"], ["controllerrevisions", "statefulsets"], ALL),
    _rule(["apps"], ["controllerrevisions/finalizers", "statefulsets/finalizers"], ["update"]),
    _rule(["apps"], ["controllerrevisions/status", "statefulsets/status"], ["get", "patch", "update"]),
    _rule(["leaderworkerset.x-k8s.io"], ["leaderworkersets"], ALL),
    _rule(["leaderworkerset.x-k8s.io"], ["leaderworkersets/finalizers"], ["update"]),
    _rule(["leaderworkerset.x-k8s.io"], ["leaderworkersets/status"], ["get", "patch", "update"]),
]
LEADER_RULES = [
    _rule([""], ["configmaps"], ALL),
    _rule(["coordination.k8s.io"], ["leases"], ALL),
    _rule([""], ["events"], ["create", "patch"]),
]


def _meta(name: str, namespaced: bool = True) -> dict:
    meta: dict = {"name": name, "labels": dict(LABELS)}
    if namespaced:
        meta["namespace"] = NAMESPACE
    return meta


def _rbac() -> list[dict]:
    rbac = "rbac.authorization.k8s.io/v1"
    subject = [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}]
    role_ref = {"apiGroup": "rbac.authorization.k8s.io"}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(SERVICE_ACCOUNT)},
        {
            "apiVersion": rbac,
            "kind": "ClusterRole",
            "metadata": _meta("lws-manager-role", False),
            "rules": CLUSTER_RULES,
        },
        {
            "apiVersion": rbac,
            "kind": "ClusterRoleBinding",
            "metadata": _meta("lws-manager-rolebinding", False),
            "roleRef": {**role_ref, "kind": "ClusterRole", "name": "lws-manager-role"},
            "subjects": subject,
        },
        {
            "apiVersion": rbac,
            "kind": "Role",
            "metadata": _meta("lws-leader-election-role"),
            "rules": LEADER_RULES,
        },
        {
            "apiVersion": rbac,
            "kind": "RoleBinding",
            "metadata": _meta("lws-leader-election-rolebinding"),
            "roleRef": {**role_ref, "kind": "Role", "name": "lws-leader-election-role"},
            "subjects": subject,
        },
    ]


def _webhook(name: str, path: str, rule: tuple[str, str, list[str]], pods: bool = False) -> dict:
    group, resource, operations = rule
    hook = {
        "name": name,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "clientConfig": {"service": {"name": SERVICE, "namespace": NAMESPACE, "path": path}},
        "rules": [
            {"apiGroups": [group], "apiVersions": ["v1"], "operations": operations, "resources": [resource]}
        ],
    }
    if pods:
        hook["objectSelector"] = POD_SELECTOR  # only the pods of a LeaderWorkerSet, never anyone else's
    return hook


def _webhooks() -> list[dict]:
    lws = ("leaderworkerset.x-k8s.io", "leaderworkersets", ["CREATE", "UPDATE"])
    pods = ("", "pods", ["CREATE", "UPDATE"])
    reg = "admissionregistration.k8s.io/v1"
    mutating = [
        _webhook("mleaderworkerset.kb.io", "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset", lws),
        _webhook("mpod.kb.io", "/mutate--v1-pod", pods, pods=True),
    ]
    validating = [
        _webhook("vleaderworkerset.kb.io", "/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset", lws),
        _webhook("vpod.kb.io", "/validate--v1-pod", pods, pods=True),
    ]
    return [
        {
            "apiVersion": reg,
            "kind": "MutatingWebhookConfiguration",
            "metadata": _meta(MUTATING, False),
            "webhooks": mutating,
        },
        {
            "apiVersion": reg,
            "kind": "ValidatingWebhookConfiguration",
            "metadata": _meta(VALIDATING, False),
            "webhooks": validating,
        },
    ]


def _deployment(image: str) -> dict:
    container = {
        "name": "manager",
        "image": image,
        "imagePullPolicy": "Never",
        "command": ["/manager"],
        "args": ["--config=/etc/lws/controller_manager_config.yaml", "--zap-log-level=info"],
        "ports": [{"name": "webhook", "containerPort": 9443}, {"name": "health", "containerPort": 8081}],
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": 8081},
            "initialDelaySeconds": 15,
            "periodSeconds": 20,
        },
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": 8081},
            "initialDelaySeconds": 5,
            "periodSeconds": 10,
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "config", "mountPath": "/etc/lws", "readOnly": True},
            {"name": "certs", "mountPath": CERT_DIR, "readOnly": True},
        ],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(DEPLOYMENT),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"control-plane": "controller-manager"}},
            "template": {
                "metadata": {"labels": dict(LABELS)},
                "spec": {
                    "serviceAccountName": SERVICE_ACCOUNT,
                    "nodeSelector": layout.NODE_SELECTOR,
                    "tolerations": [layout.TOLERATION],
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532},
                    "terminationGracePeriodSeconds": 10,
                    "containers": [container],
                    "volumes": [
                        {"name": "config", "configMap": {"name": CONFIG_MAP}},
                        # the Secret its certificate manager fills: the kubelet projects it here, where the
                        # manager waits for it (it writes the Secret, never the files) before serving
                        {"name": "certs", "secret": {"secretName": SECRET}},
                    ],
                },
            },
        },
    }


def manifests(image: str) -> list[dict]:
    """Every object of the controller, in creation order (the CRDs excepted)."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(NAMESPACE, False)}
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(SERVICE),
        "spec": {
            "ports": [{"port": 443, "targetPort": 9443}],
            "selector": {"control-plane": "controller-manager"},
        },
    }
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": _meta(SECRET)}
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(CONFIG_MAP),
        "data": {"controller_manager_config.yaml": json.dumps(CONFIGURATION, indent=2)},
    }
    return [namespace, *_rbac(), service, secret, config, *_webhooks(), _deployment(image)]


def install(api, image: str) -> None:
    from kubernetes import utils

    for obj in manifests(image):
        utils.create_from_dict(api, obj)


def ready(api, settled: float = 5.0) -> bool:
    """The controller serving: its pod Ready and settled, and its admission answering. Its readiness
    probe is a plain ping, up long before its certificate manager has the serving certificate in place
    (until then it sets up neither its controllers nor its webhooks, and every LeaderWorkerSet create fails
    on them), so the proof is a server-side dry-run create of a LeaderWorkerSet, which the API server
    passes through both of its webhooks over their Service with the CA bundle the manager patched in."""
    from kubernetes import client

    pods = client.CoreV1Api(api).list_namespaced_pod(
        NAMESPACE, label_selector="control-plane=controller-manager"
    )
    now = dt.datetime.now(dt.UTC)
    running = [
        s
        for p in pods.items
        if not p.metadata.deletion_timestamp
        for s in p.status.container_statuses or []
        if s.ready
        and s.state
        and s.state.running
        and (now - s.state.running.started_at).total_seconds() >= settled
    ]
    if not running:
        return False
    client.CustomObjectsApi(api).create_namespaced_custom_object(
        "leaderworkerset.x-k8s.io", "v1", NAMESPACE, "leaderworkersets", ADMISSION_PROBE, dry_run="All"
    )
    return True
