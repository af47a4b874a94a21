"""A DynamoGraphDeploymentRequest's profiling Job, rendered as upstream's (v1beta1) controller renders it.

* The ``profiler`` container runs ``python -m dynamo.profiler --config <the request's v1beta1 spec as JSON>
  --output-dir /data`` in the request's image (``spec.image``; else the operator configuration's
  ``images.profiler``). The spec is the request's own, read in v1beta1 whatever version it was written in
  (``request_spec``), with two additions the profiler needs: the image, and the ``hardware`` fields the
  request leaves out, filled from cluster discovery (``render/gpu.py``). So everything the request says
  (``sla``, ``workload``, ``hardware``, ``searchStrategy``, ``modelCache``, ``features``, ``overrides``,
  ``backend``, ``model``, ``autoApply``) reaches the profiler under the seed's field names.
* ``modelCache.pvcName`` is mounted read-only at ``modelCache.pvcMountPath`` (default ``/opt/model-cache``).
* v1alpha1's ``profilingConfig.outputPVC`` replaces the ``/data`` emptyDir; its ``configMapRef`` (the base
  graph) is mounted at ``/config/disagg.yaml``.
* The ``output-copier`` sidecar (the operator's own image) publishes the profiler's files in ConfigMap
  ``dgdr-output-<name>`` (``copier.py``).
* ``overrides.profilingJob`` is merged into the Job by upstream's allow-list (``apply_job_override``); what
  is outside it is refused at admission (``job_override_errors``), naming the field.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE, OPERATOR_IMAGE
from dynamo_operator.api.conversion import convert

from . import names
from .gpu import GpuInfo, enrich, needs_discovery

DGDR_KIND = "DynamoGraphDeploymentRequest"
JOB_PREFIX = "profile-online-"
OUTPUT_PREFIX = "dgdr-output-"
PROFILING_SA = "dgdr-profiling-job"
LABEL_DGDR_NAME = "dgdr.nvidia.com/name"
LABEL_DGDR_NAMESPACE = "dgdr.nvidia.com/namespace"
PROFILER_CONTAINER = "profiler"
COPIER_CONTAINER = "output-copier"
OUTPUT_DIR = "/data"
FINAL_CONFIG = "final_config.yaml"
STATUS_FILE = "profiler_status.yaml"
CONFIG_DIR = "/config"
BASE_CONFIG_KEY = "disagg.yaml"
MODEL_CACHE_VOLUME = "model-cache"
DEFAULT_MODEL_CACHE_MOUNT = "/opt/model-cache"
PROFILER_COMMAND = ["python", "-m", "dynamo.profiler"]
WORKING_DIR = "/workspace"
HF_TOKEN_SECRET, HF_TOKEN_KEY = "hf-token-secret", "HF_TOKEN"
PROFILER_UID = 1000
TOKEN_VOLUME = "output-copier-kube-api-access"
TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def job_name(dgdr_name: str) -> str:
    return names.dns_label(JOB_PREFIX + dgdr_name)


def output_configmap_name(dgdr_name: str) -> str:
    return names.dns_label(OUTPUT_PREFIX + dgdr_name, 253)


def labels(dgdr: dict) -> dict:
    md = dgdr["metadata"]
    return {
        names.LABEL_MANAGED_BY: names.MANAGED_BY,
        LABEL_DGDR_NAME: md["name"],
        LABEL_DGDR_NAMESPACE: md["namespace"],
    }


PROTECTED_LABELS = frozenset({names.LABEL_MANAGED_BY, LABEL_DGDR_NAME, LABEL_DGDR_NAMESPACE})


# --------------------------------------------------------------------------------------------------
# what the profiler is given


def request_spec(dgdr: dict) -> dict:
    """The request's spec in v1beta1 (the version the profiler speaks), from either version (an object
    without apiVersion is the stored one, v1alpha1)."""
    if str(dgdr.get("apiVersion", "")).endswith("/v1beta1"):
        return copy.deepcopy(dgdr.get("spec") or {})
    stored = {"apiVersion": names.V1ALPHA1, "kind": DGDR_KIND, **dgdr}
    return convert(stored, "v1beta1").get("spec") or {}


def override_pod_spec(dgdr: dict) -> dict | None:
    """The pod spec of the request's ``overrides.profilingJob``: the author's, so a ``securityContext``
    there opts the profiling pod out of the restricted settings (render/security.py's rule)."""
    override = (request_spec(dgdr).get("overrides") or {}).get("profilingJob")
    pod = ((override or {}).get("template") or {}).get("spec") if isinstance(override, dict) else None
    return pod if isinstance(pod, dict) else None


def profiler_image(spec: dict, default: str = DEFAULT_PROFILER_IMAGE) -> str:
    image = spec.get("image")
    return image if isinstance(image, str) and image.strip() else default


def profiler_spec(
    spec: dict, default_image: str = DEFAULT_PROFILER_IMAGE, gpus: GpuInfo | None = None
) -> dict:
    """What ``--config`` carries: the v1beta1 spec with the image and the discovered hardware filled in."""
    out = copy.deepcopy(spec)
    out["image"] = profiler_image(spec, default_image)
    hardware = out.get("hardware") or {}
    if gpus is not None and needs_discovery(hardware):
        out["hardware"] = enrich(hardware, gpus)
    return out


def model_cache(spec: dict) -> tuple[str, str] | None:
    """(PVC, mount path) of ``modelCache``, None when it names no PVC."""
    cache = spec.get("modelCache") or {}
    if not cache.get("pvcName"):
        return None
    return cache["pvcName"], cache.get("pvcMountPath") or DEFAULT_MODEL_CACHE_MOUNT


# --------------------------------------------------------------------------------------------------
# the Job


def output_copier(dgdr: dict, image: str) -> dict:
    """The ``output-copier`` sidecar: the operator's own image (``images.operator``, pinned by the chart)
    running ``dynamo-operator publish-profiling-output`` (``copier.py``), which publishes the profiler's
    files in ``dgdr-output-<name>`` and exits when the final config is out or the profiler ended. It reads
    ``/data`` only and runs unprivileged (restricted Pod Security profile)."""
    md = dgdr["metadata"]
    return {
        "name": COPIER_CONTAINER,
        "image": image,
        "command": ["dynamo-operator", "publish-profiling-output"],
        "args": ["--dir", OUTPUT_DIR, "--configmap", output_configmap_name(md["name"])],
        "env": [
            {"name": "DGDR_NAME", "value": md["name"]},
            {"name": "DGDR_NAMESPACE", "value": md["namespace"]},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        ],
        "volumeMounts": [{"name": "output", "mountPath": OUTPUT_DIR, "readOnly": True}],
        "securityContext": {
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }


def _volumes(dgdr: dict, spec: dict) -> tuple[list[dict], list[dict]]:
    """The pod's volumes and the profiler's mounts: output, model cache, base config."""
    prof = (dgdr.get("spec") or {}).get("profilingConfig") or {}
    pvc = prof.get("outputPVC")
    volumes = [
        {"name": "output", "persistentVolumeClaim": {"claimName": pvc}}
        if pvc
        else {"name": "output", "emptyDir": {}}
    ]
    mounts = [{"name": "output", "mountPath": OUTPUT_DIR}]
    cache = model_cache(spec)
    if cache:
        claim = {"claimName": cache[0], "readOnly": True}
        volumes.append({"name": MODEL_CACHE_VOLUME, "persistentVolumeClaim": claim})
        mounts.append({"name": MODEL_CACHE_VOLUME, "mountPath": cache[1], "readOnly": True})
    ref = prof.get("configMapRef")
    if ref:
        items = [{"key": ref.get("key") or BASE_CONFIG_KEY, "path": BASE_CONFIG_KEY}]
        volumes.append({"name": "base-config", "configMap": {"name": ref["name"], "items": items}})
        mounts.append({"name": "base-config", "mountPath": CONFIG_DIR, "readOnly": True})
    return volumes, mounts


def _profiler(dgdr: dict, spec: dict, mounts: list[dict]) -> dict:
    md = dgdr["metadata"]
    token = {"name": HF_TOKEN_SECRET, "key": HF_TOKEN_KEY, "optional": True}
    return {
        "name": PROFILER_CONTAINER,
        "image": spec["image"],
        "command": list(PROFILER_COMMAND),
        "args": ["--config", json.dumps(spec, sort_keys=True), "--output-dir", OUTPUT_DIR],
        "workingDir": WORKING_DIR,
        "env": [
            {"name": "HUGGING_FACE_HUB_TOKEN", "valueFrom": {"secretKeyRef": token}},
            {"name": "DGDR_NAME", "value": md["name"]},
            {"name": "DGDR_NAMESPACE", "value": md["namespace"]},
            {"name": "DGDR_UID", "value": md.get("uid") or ""},
        ],
        "volumeMounts": mounts,
    }


def profiling_job(dgdr: dict, spec: dict | None = None, copier_image: str = OPERATOR_IMAGE) -> dict:
    """The profiling Job of ``dgdr`` (the stored request) for ``spec`` (``profiler_spec``: what the profiler
    is given; by default the request's own with the default image, no discovery), with
    ``spec.overrides.profilingJob`` merged in."""
    md = dgdr["metadata"]
    spec = profiler_spec(request_spec(dgdr)) if spec is None else spec
    volumes, mounts = _volumes(dgdr, spec)
    pod_spec: dict = {
        "serviceAccountName": PROFILING_SA,
        "restartPolicy": "Never",
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": PROFILER_UID,
            "runAsGroup": PROFILER_UID,
            "fsGroup": PROFILER_UID,
        },
        "containers": [_profiler(dgdr, spec, mounts), output_copier(dgdr, copier_image)],
        "volumes": volumes,
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name(md["name"]), "namespace": md["namespace"], "labels": labels(dgdr)},
        "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": labels(dgdr)}, "spec": pod_spec}},
    }
    override = (spec.get("overrides") or {}).get("profilingJob")
    return apply_job_override(job, override) if isinstance(override, dict) else job


def profiling_service_account(namespace: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": PROFILING_SA,
            "namespace": namespace,
            "labels": {names.LABEL_MANAGED_BY: names.MANAGED_BY},
        },
    }


def profiling_role_binding(namespace: str, cluster_role: str) -> dict:
    """Binds ``dgdr-profiling-job`` to ``rbac.dgdrProfilingClusterRoleName`` (cluster-wide operators)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": PROFILING_SA,
            "namespace": namespace,
            "labels": {names.LABEL_MANAGED_BY: names.MANAGED_BY},
        },
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role},
        "subjects": [{"kind": "ServiceAccount", "name": PROFILING_SA, "namespace": namespace}],
    }


def request_children(
    dgdr: dict, profiler_image_: str, copier_image: str, cluster_role: str | None
) -> list[dict]:
    """What the controller creates for a new request before profiling output exists: the profiling
    ServiceAccount, its RoleBinding (cluster-wide), the Job. ``dgdr`` in either version."""
    stored = dgdr if str(dgdr.get("apiVersion", "")).endswith("/v1alpha1") else convert(dgdr, "v1alpha1")
    ns = stored["metadata"]["namespace"]
    out = [profiling_service_account(ns)]
    if cluster_role:
        out.append(profiling_role_binding(ns, cluster_role))
    out.append(profiling_job(stored, profiler_spec(request_spec(stored), profiler_image_), copier_image))
    return out


# --------------------------------------------------------------------------------------------------
# overrides.profilingJob: upstream's allow-list


JOB_FIELDS = (
    "backoffLimit",
    "activeDeadlineSeconds",
    "ttlSecondsAfterFinished",
    "completions",
    "parallelism",
    "suspend",
)
POD_REPLACED = (
    "tolerations",
    "nodeSelector",
    "affinity",
    "priorityClassName",
    "serviceAccountName",
    "runtimeClassName",
    "dnsPolicy",
    "dnsConfig",
    "terminationGracePeriodSeconds",
    "topologySpreadConstraints",
    "automountServiceAccountToken",
)
POD_MERGED = ("securityContext", "volumes", "initContainers", "imagePullSecrets", "containers")
CONTAINER_FIELDS = ("name", "image", "resources", "securityContext", "env", "volumeMounts", "envFrom")


def _named_merge(base: list, extra: list, key: str = "name") -> list:
    """``base`` with each item of ``extra`` replacing the one of its name, or appended."""
    out = copy.deepcopy(base)
    index = {item.get(key): i for i, item in enumerate(out)}
    for item in extra:
        if item.get(key) in index:
            out[index[item.get(key)]] = copy.deepcopy(item)
        else:
            index[item.get(key)] = len(out)
            out.append(copy.deepcopy(item))
    return out


def _merge_container(container: dict, override: dict) -> None:
    for key in ("image", "resources", "securityContext"):
        if override.get(key):
            container[key] = copy.deepcopy(override[key])
    for key in ("env", "volumeMounts"):
        if override.get(key):
            container[key] = _named_merge(container.get(key) or [], override[key])
    if override.get("envFrom"):
        container["envFrom"] = [*(container.get("envFrom") or []), *copy.deepcopy(override["envFrom"])]


def _copier_token(pod: dict) -> None:
    """With ``automountServiceAccountToken: false`` the copier still needs its token (it writes the output
    ConfigMap): a projected ServiceAccount token mounted where the Kubernetes client looks for it."""
    sources = [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}},
    ]
    pod["volumes"] = _named_merge(pod["volumes"], [{"name": TOKEN_VOLUME, "projected": {"sources": sources}}])
    for c in pod["containers"]:
        if c["name"] == COPIER_CONTAINER:
            c["volumeMounts"].append({"name": TOKEN_VOLUME, "mountPath": TOKEN_DIR, "readOnly": True})


def _merge_pod(pod: dict, override: dict) -> None:
    for key in POD_REPLACED:
        if override.get(key) not in (None, "", [], {}):
            pod[key] = copy.deepcopy(override[key])
    if override.get("securityContext"):
        pod["securityContext"] = {
            **pod.get("securityContext", {}),
            **copy.deepcopy(override["securityContext"]),
        }
    for key in ("volumes", "initContainers"):
        if override.get(key):
            pod[key] = _named_merge(pod.get(key) or [], override[key])
    secrets = [
        s for s in override.get("imagePullSecrets") or [] if s not in (pod.get("imagePullSecrets") or [])
    ]
    if secrets:
        pod["imagePullSecrets"] = [*(pod.get("imagePullSecrets") or []), *copy.deepcopy(secrets)]
    containers = override.get("containers") or []
    if containers:
        _merge_container(pod["containers"][0], containers[0])
    if override.get("automountServiceAccountToken") is False:
        _copier_token(pod)


def apply_job_override(job: dict, override: dict) -> dict:
    """``job`` with ``override`` (a JobSpec) merged as upstream does: the Job's scalar settings, the pod
    template's labels (not the operator's own) and annotations, the pod settings of ``POD_REPLACED``
    (replaced), its security context (merged), volumes and init containers (by name), image pull secrets
    (added), and the first container's fields onto the profiler (env and mounts by name, envFrom added)."""
    out = copy.deepcopy(job)
    spec = out["spec"]
    for key in JOB_FIELDS:
        if override.get(key) is not None:
            spec[key] = override[key]
    template = override.get("template") or {}
    tmd = template.get("metadata") or {}
    md = spec["template"]["metadata"]
    md["labels"].update({k: v for k, v in (tmd.get("labels") or {}).items() if k not in PROTECTED_LABELS})
    if tmd.get("annotations"):
        md["annotations"] = {**md.get("annotations", {}), **tmd["annotations"]}
    _merge_pod(spec["template"]["spec"], template.get("spec") or {})
    return out


def _unsupported(path: str, supported: tuple[str, ...], what: str) -> tuple[str, str]:
    return path, f"not applied to the profiling Job ({what} can set {', '.join(supported)}): remove it"


def _container_errors(containers: Any) -> list[tuple[str, str]]:
    base = "template.spec.containers"
    if not isinstance(containers, list) or not all(isinstance(c, dict) for c in containers):
        return [(base, "must be a list with one entry: the profiler container's overrides")]
    errors = []
    if len(containers) > 1:
        errors.append((base, "only one entry (the profiler container) is merged: drop the others"))
    for i, c in enumerate(containers[:1]):
        if c.get("name") not in (None, PROFILER_CONTAINER):
            errors.append(
                (f"{base}[{i}].name", f"the entry overrides the {PROFILER_CONTAINER!r} container: name it so")
            )
        bad = [k for k in c if k not in CONTAINER_FIELDS]
        errors += [_unsupported(f"{base}[{i}].{k}", CONTAINER_FIELDS, "a container override") for k in bad]
    return errors


def _template_errors(template: dict) -> list[tuple[str, str]]:
    tmd = template.get("metadata") or {}
    errors = [
        _unsupported(f"template.{k}", ("metadata", "spec"), "an override")
        for k in template
        if k not in ("metadata", "spec")
    ]
    meta_keys = ("labels", "annotations")
    errors += [
        _unsupported(f"template.metadata.{k}", meta_keys, "an override") for k in tmd if k not in meta_keys
    ]
    for key in sorted(set(tmd.get("labels") or {}) & PROTECTED_LABELS):
        errors.append(
            (f"template.metadata.labels.{key}", "set by the operator (it finds its Job by it): remove it")
        )
    pod = template.get("spec") or {}
    allowed = (*POD_REPLACED, *POD_MERGED)
    errors += [_unsupported(f"template.spec.{k}", allowed, "a pod override") for k in pod if k not in allowed]
    if "containers" in pod:
        errors += _container_errors(pod["containers"])
    return errors


def job_override_errors(override: Any) -> list[tuple[str, str]]:
    """Why ``override`` (``spec.overrides.profilingJob``) would not act: (path relative to it, what to do)."""
    if not isinstance(override, dict):
        return [("", "must be a Job spec (template, backoffLimit, ...)")]
    top = (*JOB_FIELDS, "template")
    errors = [_unsupported(k, top, "an override") for k in override if k not in top]
    template = override.get("template") or {}
    if not isinstance(template, dict):
        return [*errors, ("template", "must be a pod template (metadata, spec)")]
    return errors + _template_errors(template)
