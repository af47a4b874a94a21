"""The real node's storage: rancher's local-path-provisioner as a Pod on the node and a default StorageClass.

What kind and k3s ship, built here from its Go module (``make node-tools``, image ``local-path-provisioner``):
a claim of the default class (``local-path``, ``WaitForFirstConsumer``) gets a hostPath PersistentVolume on
the node, a directory under ``layout.ROOT`` (``STORAGE_DIR``), so the node's teardown removes every volume
with the rest of the node. The provisioner makes and removes those directories through short-lived helper
Pods; they need a shell, ``mkdir`` and ``rm``: they run the operator image (Debian's ``/bin/sh`` and
coreutils), which the node profile always imports, as root (the directories belong to the host).

``claim_problems`` tells a claim that will never bind (its class does not exist, there is no default class,
or no provisioner answers for its class) from one still on its way, so a wait on claims reports the first
kind at once instead of running into its timeout.
"""

from __future__ import annotations

import contextlib
import json
import time

from . import layout

NAMESPACE = "local-path-storage"
HELPER_RECIPE = "operator"  # the image (image/build.py recipe) the helper Pods run
NAME = "local-path-provisioner"
CONFIG_MAP = "local-path-config"
STORAGE_CLASS = "local-path"
PROVISIONER = "rancher.io/local-path"
STORAGE_DIR = layout.ROOT / "local-path"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
# How long a provisionable claim may wait for its provisioner's first word ("Provisioning") before it is
# reported as one nobody serves (local-path answers within a second or two of the consumer's scheduling).
ANSWER_GRACE_SECONDS = 45.0
SETUP = 'set -eu\nmkdir -m 0777 -p "$VOL_DIR"\n'
TEARDOWN = 'set -eu\nrm -rf "$VOL_DIR"\n'


def _meta(name: str, namespaced: bool = True) -> dict:
    meta = {"name": name, "labels": {"app.kubernetes.io/name": NAME}}
    if namespaced:
        meta["namespace"] = NAMESPACE
    return meta


def _rbac() -> list[dict]:
    read = ["get", "list", "watch"]
    cluster_rules = [
        {"apiGroups": [""], "resources": ["nodes", "persistentvolumeclaims", "configmaps"], "verbs": read},
        {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": read},
        {
            "apiGroups": [""],
            "resources": ["persistentvolumes"],
            "verbs": ["get", "list", "watch", "create", "patch", "update", "delete"],
        },
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
        {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": read},
    ]
    # the helper Pods, in its own namespace only (the provisioner runs without leader election)
    own_rules = [
        {
            "apiGroups": [""],
            "resources": ["pods"],
            "verbs": ["get", "list", "watch", "create", "patch", "update", "delete"],
        }
    ]
    subject = [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}]
    rbac = "rbac.authorization.k8s.io/v1"
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME)},
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": _meta(NAME, False), "rules": cluster_rules},
        {
            "apiVersion": rbac,
            "kind": "ClusterRoleBinding",
            "metadata": _meta(NAME, False),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
            "subjects": subject,
        },
        {"apiVersion": rbac, "kind": "Role", "metadata": _meta(NAME), "rules": own_rules},
        {
            "apiVersion": rbac,
            "kind": "RoleBinding",
            "metadata": _meta(NAME),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": NAME},
            "subjects": subject,
        },
    ]


def _helper_pod(helper_image: str) -> dict:
    """The template of the helper Pods (the provisioner adds the command, the volumes and the node)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "helper-pod"},
        "spec": {
            "tolerations": [layout.TOLERATION],
            "securityContext": {"runAsUser": 0, "runAsGroup": 0},
            "containers": [{"name": "helper-pod", "image": helper_image, "imagePullPolicy": "Never"}],
        },
    }


def _config_map(helper_image: str) -> dict:
    config = {"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": [str(STORAGE_DIR)]}]}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(CONFIG_MAP),
        "data": {
            "config.json": json.dumps(config, indent=2),
            "setup": SETUP,
            "teardown": TEARDOWN,
            "helperPod.yaml": json.dumps(_helper_pod(helper_image), indent=2),  # JSON is YAML
        },
    }


def _deployment(image: str, helper_image: str) -> dict:
    argv = ["/usr/bin/local-path-provisioner", "start", "--config", "/etc/config/config.json"]
    argv += ["--service-account-name", NAME, "--configmap-name", CONFIG_MAP, "--helper-image", helper_image]
    container = {
        "name": NAME,
        "image": image,
        "imagePullPolicy": "Never",
        "command": argv,
        "env": [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}],
        "volumeMounts": [{"name": "config", "mountPath": "/etc/config", "readOnly": True}],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    labels = {"app.kubernetes.io/name": NAME}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(NAME),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": NAME,
                    "nodeSelector": layout.NODE_SELECTOR,
                    "tolerations": [layout.TOLERATION],
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532},
                    "containers": [container],
                    "volumes": [{"name": "config", "configMap": {"name": CONFIG_MAP}}],
                },
            },
        },
    }


def manifests(image: str, helper_image: str) -> list[dict]:
    """Every object of the node's storage, in creation order."""
    storage_class = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {**_meta(STORAGE_CLASS, False), "annotations": {DEFAULT_CLASS_ANNOTATION: "true"}},
        "provisioner": PROVISIONER,
        "volumeBindingMode": "WaitForFirstConsumer",
        "reclaimPolicy": "Delete",
    }
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(NAMESPACE, False)}
    objects = [namespace, *_rbac(), _config_map(helper_image), _deployment(image, helper_image)]
    return [*objects, storage_class]


def install(api, image: str, helper_image: str) -> None:
    """Creates the objects (``api``: a kubernetes ``ApiClient``); then wait for ``provisioner_ready``."""
    from kubernetes import utils

    for obj in manifests(image, helper_image):
        utils.create_from_dict(api, obj)


def provisioner_ready(api, settled: float = 5.0) -> bool:
    """The provisioner's Pod Ready and running for ``settled`` seconds without a restart (it has no health
    endpoint: a bad configuration shows as an exit seconds after the start)."""
    import datetime as dt

    from kubernetes import client

    selector = f"app.kubernetes.io/name={NAME}"
    pods = client.CoreV1Api(api).list_namespaced_pod(NAMESPACE, label_selector=selector).items
    now = dt.datetime.now(dt.UTC)
    for pod in pods:
        statuses = pod.status.container_statuses or []
        if pod.metadata.deletion_timestamp or not statuses:
            continue
        (status,) = statuses
        running = status.state.running if status.state else None
        started = running.started_at if running else None
        if (
            status.ready
            and status.restart_count == 0
            and started
            and (now - started).total_seconds() >= settled
        ):
            return True
    return False


# ---- claims that will never bind -----------------------------------------------------------------------


def _default_classes(classes: dict) -> list[str]:
    annotated = (
        n for n, c in classes.items() if (c.metadata.annotations or {}).get(DEFAULT_CLASS_ANNOTATION)
    )
    return sorted(annotated)


def _answered(core, claim) -> bool:
    """Whether a provisioner spoke about the claim (its first event, or a volume already made)."""
    events = core.list_namespaced_event(
        claim.metadata.namespace, field_selector=f"involvedObject.uid={claim.metadata.uid}"
    )
    return any(
        e.reason in ("Provisioning", "ProvisioningSucceeded", "ProvisioningFailed") for e in events.items
    )


def _provisionable_since(claim, now: float) -> float | None:
    """Since when a provisioner should be at work: once a consumer is scheduled for WaitForFirstConsumer
    (the ``selected-node`` annotation), at once for Immediate binding (the PV controller's
    ``storage-provisioner`` annotation); None before. The time is the claim's last change (its newest
    managedFields entry), which is no earlier than either annotation."""
    annotations = claim.metadata.annotations or {}
    provisioner_keys = ("volume.kubernetes.io/selected-node", "volume.kubernetes.io/storage-provisioner")
    if not any(k in annotations for k in provisioner_keys):
        return None
    times = [m.time.timestamp() for m in claim.metadata.managed_fields or [] if m.time]
    created = claim.metadata.creation_timestamp
    return max(times) if times else (created.timestamp() if created else now)


def claim_problems(
    api, namespace: str, now: float | None = None, grace: float = ANSWER_GRACE_SECONDS
) -> list[str]:
    """One line per Pending claim of ``namespace`` that will never bind, naming the claim, its class and
    the fix; claims still on their way (no consumer yet, provisioner at work) are not problems."""
    from kubernetes import client

    core = client.CoreV1Api(api)
    now = time.time() if now is None else now
    classes = {c.metadata.name: c for c in client.StorageV1Api(api).list_storage_class().items}
    problems = []
    for claim in core.list_namespaced_persistent_volume_claim(namespace).items:
        if (claim.status.phase or "Pending") != "Pending":
            continue
        what = f"PersistentVolumeClaim {namespace}/{claim.metadata.name}"
        name = claim.spec.storage_class_name
        if name is None and not _default_classes(classes):
            problems.append(f"{what} names no StorageClass and the cluster has no default one: set one")
        elif name and name not in classes:
            problems.append(f"{what}: StorageClass {name!r} does not exist (classes: {sorted(classes)})")
        elif name is not None and name != "":
            since = _provisionable_since(claim, now)
            late = since is not None and now - since > grace
            if late and not _answered(core, claim):
                provisioner = classes[name].provisioner
                problems.append(
                    f"{what}: no provisioner answered for StorageClass {name!r} ({provisioner}) in "
                    f"{grace:.0f}s; nothing serves that class here (use {STORAGE_CLASS!r})"
                )
    return problems


def wait_bound(
    api, namespace: str, names: list[str], timeout: float, grace: float = ANSWER_GRACE_SECONDS
) -> float:
    """Waits until the named claims are Bound; returns the seconds it took. Raises at once, naming the
    claim and why, when one of them will never bind (``claim_problems``), and at ``timeout`` otherwise."""
    from kubernetes import client

    core = client.CoreV1Api(api)
    started = time.monotonic()
    while True:
        phases = {n: core.read_namespaced_persistent_volume_claim(n, namespace).status.phase for n in names}
        if all(p == "Bound" for p in phases.values()):
            return time.monotonic() - started
        ours = [f"{namespace}/{n}" for n in names]
        problems = [
            p for p in claim_problems(api, namespace, grace=grace) if p.split()[1].rstrip(":") in ours
        ]
        if problems:
            raise ClaimError("; ".join(problems))
        if time.monotonic() - started > timeout:
            raise ClaimError(f"claims not Bound after {timeout:.0f}s: {phases}")
        time.sleep(1.0)


class ClaimError(RuntimeError):
    """A claim will never bind, or did not within its bound; the message names it and why."""


def run_watching_claims(argv: list[str], env: dict[str, str], api, namespace: str, timeout: float):
    """Runs ``argv`` (``helm install --wait``, which would wait its whole timeout on a claim that never
    binds) while watching the claims of ``namespace``: a claim that will never bind stops the command and
    raises ClaimError naming it. Returns the finished ``CompletedProcess``-like result otherwise."""
    import subprocess

    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                problems = claim_problems(api, namespace)
            except Exception:  # the namespace may not exist yet, the API may be busy: look again
                problems = []
            if problems:
                raise ClaimError("; ".join(problems))
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=2.0)
    finally:
        if proc.poll() is None:
            proc.kill()
        out, err = proc.communicate()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
