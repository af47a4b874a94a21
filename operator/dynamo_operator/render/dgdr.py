"""DynamoGraphDeploymentRequest (DGDR), the pure part: the profiling Job, reading the profiler's output,
the generated DGD, and the phase machine (``step``) the controller follows.

The controller (``controllers/dgdr.py``) observes the cluster (the Job, the output ConfigMap, the DGD),
calls ``step`` and carries out what it returns: create the Job, create the DGD, write the status, record
the events.  Every decision is here so a unit test can walk each transition without a cluster.

States (v1alpha1 ``status.state``, the storage version): ``Pending`` (spec validated) → ``Profiling``
(the Job runs) → ``Deploying`` (``autoApply``: the DGD is created and rolled out) → ``Ready`` (the DGD is
``successful``, or with ``autoApply: false`` the generated DGD waits in ``status.generatedDeployment``);
``Failed`` (invalid spec, failed Job, missing or unusable profiler output) and ``DeploymentDeleted`` (the
auto-created DGD was deleted; it is not re-created) are terminal.  A Ready request whose DGD degrades goes
back to ``Deploying``.  Conditions, each with a typed reason: ``Validation``, ``Profiling``,
``SpecGenerated``, ``DeploymentReady`` and the summary ``Succeeded``.

The profiler writes ``/data/final_config.yaml`` (the DGD it recommends) and ``/data/profiler_status.yaml``
(its sub-phase); the Job's ``output-copier`` sidecar publishes both in the ConfigMap ``dgdr-output-<name>``
(labels ``dgdr.nvidia.com/name`` and ``dgdr.nvidia.com/namespace``), which is where the operator reads them.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import get_args

import yaml

from dynamo_operator.api.config import OPERATOR_IMAGE
from dynamo_operator.api.conversion import convert
from dynamo_operator.api.v1beta1.models import ProfilingPhase

from . import names
from .conditions import Cond

# names and labels
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
CONFIG_ENV = "DYNAMO_PROFILING_CONFIG"
# how long a succeeded Job's output may take to show up before the request fails (the sidecar writes it
# as its last step; the ConfigMap and the Job completion reach the operator's caches independently)
OUTPUT_GRACE_SECONDS = 120.0
RECHECK_SECONDS = 5.0

# states
PENDING, PROFILING, DEPLOYING, READY = "Pending", "Profiling", "Deploying", "Ready"
FAILED, DEPLOYMENT_DELETED = "Failed", "DeploymentDeleted"
TERMINAL = frozenset({FAILED, DEPLOYMENT_DELETED})
IMMUTABLE = frozenset({PROFILING, DEPLOYING, READY})

# condition types and reasons
VALIDATION, PROFILING_COND, SPEC_GENERATED = "Validation", "Profiling", "SpecGenerated"
DEPLOYMENT_READY, SUCCEEDED = "DeploymentReady", "Succeeded"
R_SPEC_VALID, R_INVALID_SPEC = "SpecValid", "InvalidSpec"
R_JOB_CREATED, R_RUNNING, R_WAITING_OUTPUT = "ProfilingJobCreated", "ProfilingRunning", "WaitingForOutput"
R_COMPLETED, R_JOB_FAILED = "Completed", "ProfilingFailed"
R_OUTPUT_MISSING, R_OUTPUT_INVALID = "ProfilingOutputMissing", "InvalidProfilingOutput"
R_GENERATED, R_AWAITING_APPLY = "SpecGenerated", "AwaitingManualApply"
R_IN_PROGRESS, R_DEPLOYED, R_DEGRADED, R_DELETED = (
    "DeploymentInProgress",
    "DeploymentReady",
    "DeploymentDegraded",
    "DeploymentDeleted",
)
# the profiler's sub-phases (profiler_status.yaml ``phase``), reported as the Profiling reason
SUB_PHASES = get_args(ProfilingPhase)


class ProfilingOutputError(ValueError):
    """The profiler's output cannot be turned into a DGD; the message says what is wrong."""


def job_name(dgdr_name: str) -> str:
    return names.dns_label(JOB_PREFIX + dgdr_name)


def output_configmap_name(dgdr_name: str) -> str:
    return names.dns_label(OUTPUT_PREFIX + dgdr_name, 253)


def auto_apply(spec: dict) -> bool:
    return spec.get("autoApply") is not False  # upstream's default: true


def validate(dgdr: dict) -> list[str]:
    """What profiling needs beyond the admission rules (``webhooks.validation``, which the controller
    also applies): each reason names the field and the fix."""
    spec = dgdr.get("spec") or {}
    md = dgdr.get("metadata") or {}
    errors = []
    prof = spec.get("profilingConfig") or {}
    if not str(prof.get("profilerImage") or "").strip():
        errors.append(
            "spec.profilingConfig.profilerImage is empty: set the profiler image "
            "(for example nvcr.io/nvidia/ai-dynamo/dynamo-planner:<version>)"
        )
    config = prof.get("config")
    if config is not None and not isinstance(config, dict):
        errors.append("spec.profilingConfig.config must be a mapping (the profile_sla configuration)")
    for key, label in (("deployment", "model"), ("engine", "backend")):
        section = (config or {}).get(key) if isinstance(config, dict) else None
        if isinstance(section, dict) and label in section:
            errors.append(
                f"spec.profilingConfig.config.{key}.{label} is set by the operator from spec."
                f"{'model' if label == 'model' else 'backend'}: remove it"
            )
    overrides = spec.get("deploymentOverrides") or {}
    for key in ("name", "namespace"):
        value = overrides.get(key)
        if value and names.dns_label(value) != value:
            errors.append(
                f"spec.deploymentOverrides.{key} {value!r} is not a valid Kubernetes name: use lower-case "
                "letters, digits and '-', at most 63 characters"
            )
    if overrides and not auto_apply(spec):
        errors.append(
            "spec.deploymentOverrides applies only with autoApply: remove it or set autoApply: true"
        )
    if len(JOB_PREFIX + (md.get("name") or "")) > 63:
        errors.append(
            f"metadata.name is too long for the profiling Job name ({JOB_PREFIX}<name> must fit 63 "
            "characters): use a name of at most 48 characters"
        )
    return errors


def profiler_config(dgdr: dict) -> dict:
    """The profiler's configuration: ``profilingConfig.config`` with ``deployment.model``,
    ``engine.backend``, the mocker switch and the output directory filled in from the request."""
    spec = dgdr.get("spec") or {}
    prof = spec.get("profilingConfig") or {}
    cfg = copy.deepcopy(prof.get("config") or {})
    deployment = cfg.setdefault("deployment", {})
    deployment["model"] = spec.get("model")
    if spec.get("useMocker"):
        deployment["useMocker"] = True
    engine = cfg.setdefault("engine", {})
    engine["backend"] = spec.get("backend")
    ref = prof.get("configMapRef")
    if ref:
        engine["config"] = f"/config/{ref.get('key') or 'disagg.yaml'}"
    cfg.setdefault("output_dir", OUTPUT_DIR)
    return cfg


def _labels(dgdr: dict) -> dict:
    md = dgdr["metadata"]
    return {
        names.LABEL_MANAGED_BY: names.MANAGED_BY,
        LABEL_DGDR_NAME: md["name"],
        LABEL_DGDR_NAMESPACE: md["namespace"],
    }


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


def profiling_job(dgdr: dict, copier_image: str = OPERATOR_IMAGE) -> dict:
    """The profiling Job: the ``profiler`` container (the request's image) and the ``output-copier``
    sidecar (``copier_image``: the operator's own) sharing ``/data`` (an emptyDir, or
    ``profilingConfig.outputPVC``)."""
    md, spec = dgdr["metadata"], dgdr.get("spec") or {}
    prof = spec.get("profilingConfig") or {}
    volumes: list[dict] = [
        {"name": "output", "persistentVolumeClaim": {"claimName": prof["outputPVC"]}}
        if prof.get("outputPVC")
        else {"name": "output", "emptyDir": {}}
    ]
    mounts = [{"name": "output", "mountPath": OUTPUT_DIR}]
    ref = prof.get("configMapRef")
    if ref:
        volumes.append({"name": "base-config", "configMap": {"name": ref["name"]}})
        mounts.append({"name": "base-config", "mountPath": "/config", "readOnly": True})
    profiler = {
        "name": PROFILER_CONTAINER,
        "image": prof["profilerImage"],
        "command": ["python3", "-m", "dynamo.profiler.profile_sla"],
        "args": ["--config-env", CONFIG_ENV],
        "env": [{"name": CONFIG_ENV, "value": json.dumps(profiler_config(dgdr), sort_keys=True)}],
        "volumeMounts": mounts,
    }
    if prof.get("resources"):
        profiler["resources"] = copy.deepcopy(prof["resources"])
    pod_spec: dict = {
        "serviceAccountName": PROFILING_SA,
        "restartPolicy": "Never",
        "containers": [profiler, output_copier(dgdr, copier_image)],
        "volumes": volumes,
    }
    if prof.get("tolerations"):
        pod_spec["tolerations"] = copy.deepcopy(prof["tolerations"])
    if prof.get("nodeSelector"):
        pod_spec["nodeSelector"] = dict(prof["nodeSelector"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name(md["name"]), "namespace": md["namespace"], "labels": _labels(dgdr)},
        "spec": {
            "backoffLimit": 0,
            "template": {"metadata": {"labels": _labels(dgdr)}, "spec": pod_spec},
        },
    }


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


def job_outcome(job: dict | None) -> tuple[str, str]:
    """("missing" | "running" | "succeeded" | "failed", message) of a Job."""
    if job is None:
        return "missing", "profiling Job not found"
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("status") != "True":
            continue
        if c.get("type") == "Complete":
            return "succeeded", c.get("message") or "profiling Job completed"
        if c.get("type") == "Failed":
            return "failed", f"{c.get('reason') or 'Failed'}: {c.get('message') or 'profiling Job failed'}"
    return "running", "profiling Job running"


def sub_phase(output: dict | None) -> tuple[str, str]:
    """(sub-phase, message) from the output ConfigMap's ``profiler_status.yaml`` (Initializing if none)."""
    text = ((output or {}).get("data") or {}).get(STATUS_FILE)
    try:
        doc = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        doc = None
    if not isinstance(doc, dict) or doc.get("phase") not in SUB_PHASES:
        return "Initializing", "profiling in progress"
    return str(doc["phase"]), str(doc.get("message") or f"profiler phase {doc['phase']}")


def generated_dgd(dgdr: dict, output: dict | None) -> dict:
    """The DGD to create, in the storage version (v1alpha1), from the profiler's ``final_config.yaml`` with
    ``deploymentOverrides`` applied. Raises ``ProfilingOutputError``."""
    text = ((output or {}).get("data") or {}).get(FINAL_CONFIG)
    if not text:
        raise ProfilingOutputError(
            f"ConfigMap {output_configmap_name(dgdr['metadata']['name'])} has no {FINAL_CONFIG}"
        )
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ProfilingOutputError(f"{FINAL_CONFIG} is not YAML: {e}") from e
    kind = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
    if not isinstance(doc, dict) or kind != names.DGD_KIND:
        raise ProfilingOutputError(f"{FINAL_CONFIG} is not a {names.DGD_KIND} (kind {kind!r})")
    api = str(doc.get("apiVersion") or "")
    if api not in (f"{names.GROUP}/v1alpha1", f"{names.GROUP}/v1beta1"):
        raise ProfilingOutputError(
            f"{FINAL_CONFIG} has apiVersion {api!r}; want {names.GROUP}/v1alpha1 or v1beta1"
        )
    if not isinstance(doc.get("spec"), dict):
        raise ProfilingOutputError(f"{FINAL_CONFIG} has no spec")
    dgd = convert(doc, "v1beta1") if api.endswith("/v1alpha1") else copy.deepcopy(doc)
    md_in = dgdr["metadata"]
    overrides = (dgdr.get("spec") or {}).get("deploymentOverrides") or {}
    md = {
        "name": overrides.get("name") or md_in["name"],
        "namespace": overrides.get("namespace") or md_in["namespace"],
        "labels": {**((dgd.get("metadata") or {}).get("labels") or {}), **(overrides.get("labels") or {})},
        "annotations": {
            **((dgd.get("metadata") or {}).get("annotations") or {}),
            **(overrides.get("annotations") or {}),
        },
    }
    md["labels"][LABEL_DGDR_NAME] = md_in["name"]
    md["labels"][LABEL_DGDR_NAMESPACE] = md_in["namespace"]
    if not md["annotations"]:
        del md["annotations"]
    dgd["metadata"] = md
    image = overrides.get("workersImage")
    for comp in (dgd.get("spec") or {}).get("components") or []:
        if image and comp.get("type") in names.WORKER_TYPES:
            for c in ((comp.get("podTemplate") or {}).get("spec") or {}).get("containers") or []:
                if c.get("name") == names.MAIN_CONTAINER:
                    c["image"] = image
    dgd.pop("status", None)
    return convert(dgd, "v1alpha1")


@dataclass(frozen=True)
class Observed:
    """What the controller saw for one request."""

    job: dict | None = None
    output: dict | None = None  # the dgdr-output ConfigMap
    dgd: dict | None = None  # the DGD named in status.deployment (wire form)
    job_finished_seconds_ago: float | None = None
    config_map_ref_missing: str | None = None  # name of a missing profilingConfig.configMapRef
    admission_errors: tuple[str, ...] = ()  # the admission rules' objections (webhooks.validation)


@dataclass
class Step:
    """What to do: the new status, the children to create, events, when to look again."""

    status: dict
    conditions: list[Cond] = field(default_factory=list)
    create_job: bool = False
    create_dgd: dict | None = None
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (Normal|Warning, reason, message)
    requeue_after: float | None = None


def _fail(st: dict, conds: list[Cond], reason: str, message: str, cond_type: str) -> Step:
    st["state"] = FAILED
    return Step(
        st,
        [*conds, Cond(cond_type, False, reason, message), Cond(SUCCEEDED, False, reason, message)],
        events=[("Warning", reason, message)],
    )


def _both(cond_type: str, ok: bool, reason: str, message: str) -> list[Cond]:
    """``cond_type`` and the summary ``Succeeded`` saying the same."""
    return [Cond(cond_type, ok, reason, message), Cond(SUCCEEDED, ok, reason, message)]


def step(dgdr: dict, seen: Observed) -> Step:
    """The next step of the phase machine for ``dgdr`` (wire form, v1alpha1) given what was observed: one
    handler per state, each a pure function of the request, its status so far and ``seen``."""
    md, spec = dgdr["metadata"], dgdr.get("spec") or {}
    st = copy.deepcopy(dgdr.get("status") or {})
    state = st.get("state") or PENDING
    gen = md.get("generation")
    if state in TERMINAL:
        return Step(st)
    if state in IMMUTABLE and gen is not None and st.get("observedGeneration") not in (None, gen):
        msg = (
            f"spec changes are not applied once profiling started (state {state}); delete and re-create "
            "the request to change it"
        )
        return Step(st, events=[("Warning", "SpecChangeRejected", msg)])
    st["backend"] = spec.get("backend")
    if state == PENDING:
        return _pending(dgdr, st, seen)
    if state == PROFILING:
        return _profiling(dgdr, st, seen)
    if state in (DEPLOYING, READY) and (st.get("deployment") or {}).get("name"):
        return _deploying(dgdr, st, seen, state)
    if state == READY:
        return Step(st)  # autoApply off: the generated spec waits in status
    return _fail(st, [], R_INVALID_SPEC, f"unknown state {state!r}", VALIDATION)


def _pending(dgdr: dict, st: dict, seen: Observed) -> Step:
    """Validate the spec; a valid request starts profiling."""
    st["observedGeneration"] = dgdr["metadata"].get("generation")
    errors = [*seen.admission_errors, *validate(dgdr)]
    if seen.config_map_ref_missing:
        errors.append(
            f"spec.profilingConfig.configMapRef: ConfigMap {seen.config_map_ref_missing!r} not found "
            "in the request's namespace: create it or remove the reference"
        )
    if errors:
        return _fail(st, [], R_INVALID_SPEC, "; ".join(errors), VALIDATION)
    st["state"] = PROFILING
    msg = f"profiling Job {job_name(dgdr['metadata']['name'])} created"
    return Step(
        st,
        [
            Cond(VALIDATION, True, R_SPEC_VALID, "spec is valid"),
            *_both(PROFILING_COND, False, R_JOB_CREATED, msg),
        ],
        create_job=True,
        events=[("Normal", R_JOB_CREATED, msg)],
    )


def _profiling(dgdr: dict, st: dict, seen: Observed) -> Step:
    """Follow the Job: re-create it if it vanished, report the profiler's sub-phase while it runs, fail
    with it, and read its output once it succeeded."""
    outcome, message = job_outcome(seen.job)
    if outcome == "missing":  # deleted by hand while profiling: create it again
        return Step(st, create_job=True, requeue_after=RECHECK_SECONDS)
    if outcome == "failed":
        msg = f"profiling Job {job_name(dgdr['metadata']['name'])} failed: {message}"
        return _fail(st, [], R_JOB_FAILED, msg, PROFILING_COND)
    if outcome == "running":
        phase, msg = sub_phase(seen.output)
        return Step(st, _both(PROFILING_COND, False, R_RUNNING if phase == "Initializing" else phase, msg))
    if seen.output is None or FINAL_CONFIG not in (seen.output.get("data") or {}):
        return _awaiting_output(dgdr, st, seen)
    try:
        dgd = generated_dgd(dgdr, seen.output)
    except ProfilingOutputError as e:
        return _fail(st, [], R_OUTPUT_INVALID, f"profiler output unusable: {e}", PROFILING_COND)
    return _generated(dgdr, st, dgd)


def _awaiting_output(dgdr: dict, st: dict, seen: Observed) -> Step:
    """The Job succeeded but its output has not reached the cache: wait, up to ``OUTPUT_GRACE_SECONDS``."""
    waited = seen.job_finished_seconds_ago or 0.0
    cm = output_configmap_name(dgdr["metadata"]["name"])
    if waited < OUTPUT_GRACE_SECONDS:
        msg = f"profiling Job completed; waiting for its output in ConfigMap {cm}"
        return Step(st, _both(PROFILING_COND, False, R_WAITING_OUTPUT, msg), requeue_after=RECHECK_SECONDS)
    msg = f"profiling Job completed but ConfigMap {cm} has no {FINAL_CONFIG} after {int(waited)}s"
    return _fail(st, [], R_OUTPUT_MISSING, msg, PROFILING_COND)


def _generated(dgdr: dict, st: dict, dgd: dict) -> Step:
    """Profiling done: keep the generated DGD in status; deploy it with ``autoApply``, else stop (Ready)."""
    st["generatedDeployment"] = dgd
    done = [Cond(PROFILING_COND, True, R_COMPLETED, "profiling completed")]
    name, ns = dgd["metadata"]["name"], dgd["metadata"]["namespace"]
    if not auto_apply(dgdr.get("spec") or {}):
        st["state"] = READY
        msg = (
            f"generated {names.DGD_KIND} {ns}/{name} is in status.generatedDeployment; autoApply is "
            "off: apply it yourself"
        )
        return Step(
            st,
            [
                *done,
                Cond(SPEC_GENERATED, True, R_AWAITING_APPLY, msg),
                Cond(SUCCEEDED, True, R_GENERATED, msg),
            ],
            events=[("Normal", R_GENERATED, msg)],
        )
    st["state"] = DEPLOYING
    st["deployment"] = {"name": name, "namespace": ns, "created": False}
    msg = f"generated {names.DGD_KIND} {ns}/{name}"
    return Step(
        st,
        [*done, Cond(SPEC_GENERATED, True, R_GENERATED, msg)],
        events=[("Normal", R_GENERATED, msg)],
        requeue_after=0.1,
    )


def _deploying(dgdr: dict, st: dict, seen: Observed, state: str) -> Step:
    """Deploying or Ready with a DGD of ours: create it once, then follow its state (a deleted DGD is
    terminal; a successful one is Ready; a Ready one that degrades goes back to Deploying)."""
    dep = st["deployment"]
    target = f"{dep.get('namespace') or dgdr['metadata']['namespace']}/{dep['name']}"
    if seen.dgd is None:
        if dep.get("created"):
            st["state"] = DEPLOYMENT_DELETED
            st["deployment"] = {k: v for k, v in dep.items() if k != "state"}
            msg = (
                f"{names.DGD_KIND} {target} was deleted; it is not re-created: delete this request and "
                "create it again to redeploy"
            )
            return Step(
                st, _both(DEPLOYMENT_READY, False, R_DELETED, msg), events=[("Warning", R_DELETED, msg)]
            )
        if st.get("generatedDeployment"):
            return Step(st, create_dgd=st["generatedDeployment"], requeue_after=RECHECK_SECONDS)
        return _fail(st, [], R_OUTPUT_MISSING, "status.generatedDeployment is empty", SPEC_GENERATED)
    dgd_state = (seen.dgd.get("status") or {}).get("state") or "initializing"
    st["deployment"] = {**dep, "created": True, "state": dgd_state}
    if dgd_state == "successful":
        st["state"] = READY
        msg = f"{names.DGD_KIND} {target} is successful"
        events = [("Normal", R_DEPLOYED, msg)] if state == DEPLOYING else []
        return Step(st, _both(DEPLOYMENT_READY, True, R_DEPLOYED, msg), events=events)
    st["state"] = DEPLOYING
    msg = f"{names.DGD_KIND} {target} is {dgd_state}"
    if state == READY:
        return Step(
            st, _both(DEPLOYMENT_READY, False, R_DEGRADED, msg), events=[("Warning", R_DEGRADED, msg)]
        )
    return Step(st, _both(DEPLOYMENT_READY, False, R_IN_PROGRESS, msg))
