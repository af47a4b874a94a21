"""DynamoGraphDeploymentRequest: the field mappings between v1alpha1 (the storage version) and v1beta1.

The two versions say the same things in different places. v1alpha1 keeps the SLA, the workload, the model
cache and the planner configuration inside the profiler's configuration blob
(``spec.profilingConfig.config``, the profile_sla format); v1beta1 has typed fields for them. Each mapping
below moves one value between its two homes, in both directions, and only when the value has the type its
destination's schema accepts (anything else stays where it is and reaches the other version through the
converter's difference record, see ``conversion``):

=============================================  =============================================
v1alpha1                                       v1beta1
=============================================  =============================================
``model``, ``backend``, ``autoApply``          the same
``useMocker``                                  ``features.mocker.enabled``
``profilingConfig.profilerImage``              ``image``
``profilingConfig.config.sla.ttft`` / ``itl``  ``sla.ttft`` / ``sla.itl``
``profilingConfig.config.sla.isl`` / ``osl``   ``workload.isl`` / ``workload.osl``
``...config.deployment.modelCache.pvcName``    ``modelCache.pvcName``
``...config.deployment.modelCache.modelPathInPvc``  ``modelCache.pvcModelPath``
``...config.deployment.modelCache.pvcMountPath``    ``modelCache.pvcMountPath``
``...config.hardware.numGpusPerNode``          ``hardware.numGpusPerNode``
``...config.hardware.gpuType`` (a SKU)         ``hardware.gpuSku``
``...config.planner``                          ``features.planner``
``profilingConfig.resources``                  ``overrides.profilingJob`` ``.template.spec.containers``
                                               ``[name=profiler].resources``
``profilingConfig.tolerations``, ``nodeSelector``  ``overrides.profilingJob.template.spec`` ``.tolerations``,
                                               ``.nodeSelector``
``status.state``                               ``status.phase`` (``Ready`` of a created graph is ``Deployed``;
                                               ``DeploymentDeleted`` is ``Failed``, as v1beta1 ends it)
``status.deployment.name``                     ``status.dgdName`` (else the generated graph's name)
``status.generatedDeployment``                 ``status.profilingResults.selectedConfig``
annotation ``nvidia.com/dgdr-status``          ``status.profilingPhase``, ``profilingJobName``,
                                               ``deploymentInfo``
=============================================  =============================================

The last row is the one v1beta1-only part of the status the controller writes: a status write through the
status subresource cannot carry metadata, so these three fields have a home of their own on the stored
object, the annotation ``nvidia.com/dgdr-status`` (a JSON object), which the controller keeps current and
which v1beta1 readers see as status fields. Everything else that only one version can say (``searchStrategy``,
``overrides.dgd``, ``hardware.totalGpus``, ``deploymentOverrides``, ``outputPVC``...) travels in the
converter's difference annotation, and the controller reads each field in the version that has it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, get_args

from .jsontree import copy_keys, copy_tree, get_path, put, set_path
from .v1beta1.models import GPUSKUType

Obj = dict[str, Any]

STATUS_ANNOTATION = "nvidia.com/dgdr-status"
BETA_STATUS_FIELDS = ("profilingPhase", "profilingJobName", "deploymentInfo")
PROFILER_CONTAINER = "profiler"
GPU_SKUS = frozenset(get_args(GPUSKUType))


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _text(v: Any) -> bool:
    return isinstance(v, str)


def _sku(v: Any) -> bool:
    return isinstance(v, str) and v in GPU_SKUS


def _mapping(v: Any) -> bool:
    return isinstance(v, dict)


# (path in profilingConfig.config, path in the v1beta1 spec, the values both schemas accept)
BLOB_FIELDS: tuple[tuple[tuple[str, ...], tuple[str, ...], Callable[[Any], bool]], ...] = (
    (("sla", "ttft"), ("sla", "ttft"), _number),
    (("sla", "itl"), ("sla", "itl"), _number),
    (("sla", "isl"), ("workload", "isl"), _integer),
    (("sla", "osl"), ("workload", "osl"), _integer),
    (("deployment", "modelCache", "pvcName"), ("modelCache", "pvcName"), _text),
    (("deployment", "modelCache", "modelPathInPvc"), ("modelCache", "pvcModelPath"), _text),
    (("deployment", "modelCache", "pvcMountPath"), ("modelCache", "pvcMountPath"), _text),
    (("hardware", "numGpusPerNode"), ("hardware", "numGpusPerNode"), _integer),
    (("hardware", "gpuType"), ("hardware", "gpuSku"), _sku),
    (("planner",), ("features", "planner"), _mapping),
)

_STATE_TO_PHASE = {
    "Pending": "Pending",
    "Initializing": "Pending",
    "Profiling": "Profiling",
    "Deploying": "Deploying",
    "Ready": "Ready",
    "Failed": "Failed",
    "DeploymentDeleted": "Failed",
}
_PHASE_TO_STATE = {
    "Pending": "Pending",
    "Profiling": "Profiling",
    "Ready": "Ready",
    "Deploying": "Deploying",
    "Deployed": "Ready",
    "Failed": "Failed",
}


def _d(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


# --------------------------------------------------------------------------------------------------
# spec


def _move(src: Obj, dst: Obj, to_beta: bool) -> None:
    """Every ``BLOB_FIELDS`` value of ``src`` (the blob, or the v1beta1 spec) into ``dst``."""
    for alpha_path, beta_path, accepts in BLOB_FIELDS:
        frm, to = (alpha_path, beta_path) if to_beta else (beta_path, alpha_path)
        value = get_path(src, frm)
        if value is not None and accepts(value):
            set_path(dst, to, copy_tree(value))


def _job_override_from_alpha(prof: Obj) -> Obj:
    pod: Obj = {}
    if "resources" in prof:
        pod["containers"] = [{"name": PROFILER_CONTAINER, "resources": copy_tree(prof["resources"])}]
    copy_keys(prof, pod, ("tolerations", "nodeSelector"))
    return {"template": {"spec": pod}} if pod else {}


def _job_override_to_alpha(job: Any, prof: Obj) -> None:
    pod = _d(get_path(job, ("template", "spec")))
    containers = pod.get("containers")
    if isinstance(containers, list) and len(containers) == 1 and isinstance(containers[0], dict):
        first = containers[0]
        if first.get("name") in (None, PROFILER_CONTAINER) and "resources" in first:
            prof["resources"] = copy_tree(first["resources"])
    copy_keys(pod, prof, ("tolerations", "nodeSelector"))


def spec_to_beta(spec: Obj) -> Obj:
    out: Obj = {}
    copy_keys(spec, out, ("model", "backend", "autoApply"))
    prof = _d(spec.get("profilingConfig"))
    if prof.get("profilerImage"):
        out["image"] = prof["profilerImage"]
    _move(_d(prof.get("config")), out, to_beta=True)
    if "useMocker" in spec:
        set_path(out, ("features", "mocker", "enabled"), spec["useMocker"])
    job = _job_override_from_alpha(prof)
    if job:
        set_path(out, ("overrides", "profilingJob"), job)
    return out


def spec_to_alpha(spec: Obj) -> Obj:
    out: Obj = {"model": spec.get("model", ""), "backend": spec.get("backend", "auto")}
    copy_keys(spec, out, ("autoApply",))
    prof: Obj = {"profilerImage": spec.get("image", "")}
    blob: Obj = {}
    _move(spec, blob, to_beta=False)
    put(prof, "config", blob)
    _job_override_to_alpha(get_path(spec, ("overrides", "profilingJob")), prof)
    out["profilingConfig"] = prof
    enabled = get_path(spec, ("features", "mocker", "enabled"))
    if enabled is not None:
        out["useMocker"] = enabled
    return out


# --------------------------------------------------------------------------------------------------
# status


def status_payload(metadata: Any) -> Obj:
    """The v1beta1-only status fields kept in ``STATUS_ANNOTATION`` (empty when absent or unreadable)."""
    raw = _d(_d(metadata).get("annotations")).get(STATUS_ANNOTATION)
    try:
        doc = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        doc = None
    return {k: doc[k] for k in BETA_STATUS_FIELDS if k in doc} if isinstance(doc, dict) else {}


def encode_payload(payload: Obj) -> str:
    return json.dumps(payload, separators=(",", ":"), sort_keys=True)


def status_to_beta(status: Obj, payload: Obj) -> Obj:
    st: Obj = {}
    dep = _d(status.get("deployment"))
    state = status.get("state")
    if state in _STATE_TO_PHASE:
        st["phase"] = "Deployed" if state == "Ready" and dep.get("created") else _STATE_TO_PHASE[state]
    copy_keys(status, st, ("conditions", "observedGeneration"))
    generated = status.get("generatedDeployment")
    name = dep.get("name") or get_path(generated, ("metadata", "name"))
    if isinstance(name, str) and name:
        st["dgdName"] = name
    if "generatedDeployment" in status:
        st["profilingResults"] = {"selectedConfig": copy_tree(generated)}
    for key in BETA_STATUS_FIELDS:
        if key in payload:
            st[key] = copy_tree(payload[key])
    return st


def status_to_alpha(status: Obj) -> tuple[Obj, Obj]:
    """The v1alpha1 status and the payload of ``STATUS_ANNOTATION``."""
    st: Obj = {}
    phase = status.get("phase")
    if phase in _PHASE_TO_STATE:
        st["state"] = _PHASE_TO_STATE[phase]
    copy_keys(status, st, ("conditions", "observedGeneration"))
    selected = _d(status.get("profilingResults")).get("selectedConfig")
    name = status.get("dgdName")
    # a generated graph not (yet) deployed is named by its own metadata; a deployed one by status.deployment
    if name and (phase in ("Deploying", "Deployed") or name != get_path(selected, ("metadata", "name"))):
        st["deployment"] = {"name": name, **({"created": True} if phase == "Deployed" else {})}
    if isinstance(selected, dict) and "apiVersion" in selected and "kind" in selected:
        st["generatedDeployment"] = copy_tree(selected)
    payload = {k: copy_tree(status[k]) for k in BETA_STATUS_FIELDS if k in status}
    return st, payload


# --------------------------------------------------------------------------------------------------
# whole objects (the converter's mapper interface: the body of the converted object)


def to_beta(obj: Obj) -> Obj:
    body: Obj = {"spec": spec_to_beta(_d(obj.get("spec")))}
    payload = status_payload(obj.get("metadata"))
    if "metadata" in obj:
        md = copy_tree(obj["metadata"])
        annotations = _d(md.get("annotations"))
        if STATUS_ANNOTATION in annotations:
            del annotations[STATUS_ANNOTATION]
            if not annotations:
                del md["annotations"]
        body["metadata"] = md
    if "status" in obj or payload:
        body["status"] = status_to_beta(_d(obj.get("status")), payload)
    return body


def to_alpha(obj: Obj) -> Obj:
    body: Obj = {"spec": spec_to_alpha(_d(obj.get("spec")))}
    payload: Obj = {}
    if "status" in obj:
        body["status"], payload = status_to_alpha(_d(obj["status"]))
    if "metadata" in obj or payload:
        md = copy_tree(_d(obj.get("metadata")))
        if payload:
            md.setdefault("annotations", {})[STATUS_ANNOTATION] = encode_payload(payload)
        body["metadata"] = md
    return body
