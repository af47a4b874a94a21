"""DynamoGraphDeploymentRequest (DGDR), the pure part: the phase machine (``step``) the controller follows.

The controller (``controllers/dgdr.py``) observes the cluster (the Job, the output ConfigMap, the DGD, the
GPU nodes, the PVCs and ConfigMaps the request names), calls ``step`` and carries out what it returns:
create the Job, the generated DGD and its ConfigMaps, write the status and the v1beta1-only status
annotation, record the events. Every decision is here so a unit test can walk each transition without a
cluster. The profiling Job is ``dgdr_job``; the profiler's output becomes the graph in ``dgdr_output``.

States (v1alpha1 ``status.state``, the storage version; v1beta1 readers see ``status.phase``, see
``api/dgdr_conversion``): ``Pending`` (spec validated) → ``Profiling`` (the Job runs) → ``Deploying``
(``autoApply``: the DGD is created and rolled out) → ``Ready`` (the DGD is ``successful``, or with
``autoApply: false`` the generated DGD waits in ``status.generatedDeployment``); ``Failed`` (invalid spec,
failed Job, missing or unusable profiler output) and ``DeploymentDeleted`` (the auto-created DGD was
deleted; it is not re-created) are terminal. A Ready request whose DGD degrades goes back to
``Deploying``. Conditions, each with a typed reason: ``Validation``, ``Profiling``, ``SpecGenerated``,
``DeploymentReady`` and the summary ``Succeeded``. The v1beta1-only status (``profilingPhase`` while
profiling, ``profilingJobName`` once the Job exists, ``deploymentInfo`` while a DGD is followed) is
``Step.beta_status``.

The profiler writes ``/data/final_config.yaml`` (the DGD it recommends, possibly with ConfigMaps) and
``/data/profiler_status.yaml`` (its sub-phase); the Job's ``output-copier`` sidecar publishes both in the
ConfigMap ``dgdr-output-<name>``, which is where the operator reads them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import get_args

import yaml

from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE, OPERATOR_IMAGE
from dynamo_operator.api.v1beta1.models import ProfilingPhase

from . import names
from .conditions import Cond

# the Job's names, re-exported for the callers that know the request by this module
from .dgdr_job import COPIER_CONTAINER as COPIER_CONTAINER
from .dgdr_job import (
    FINAL_CONFIG,
    STATUS_FILE,
    job_name,
    output_configmap_name,
    profiler_spec,
    profiling_job,
    request_spec,
)
from .dgdr_job import LABEL_DGDR_NAME as LABEL_DGDR_NAME
from .dgdr_job import LABEL_DGDR_NAMESPACE as LABEL_DGDR_NAMESPACE
from .dgdr_job import PROFILER_CONTAINER as PROFILER_CONTAINER
from .dgdr_job import PROFILING_SA as PROFILING_SA
from .dgdr_job import profiling_role_binding as profiling_role_binding
from .dgdr_job import profiling_service_account as profiling_service_account
from .dgdr_output import ProfilingOutputError, generated
from .gpu import GpuInfo, enrich, needs_discovery

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
INITIALIZING, DONE = "Initializing", "Done"
# what the profiler cannot run without (api reference: the operator fills them from GPU discovery)
PROFILER_HARDWARE = ("gpuSku", "numGpusPerNode")


def auto_apply(spec: dict) -> bool:
    return spec.get("autoApply") is not False  # upstream's default: true


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
        return INITIALIZING, "profiling in progress"
    return str(doc["phase"]), str(doc.get("message") or f"profiler phase {doc['phase']}")


def deployment_info(dgd: dict | None) -> dict:
    """v1beta1 ``status.deploymentInfo`` of a followed DGD (wire form): its components' replicas summed."""
    services = ((dgd or {}).get("status") or {}).get("services") or {}
    replicas = available = 0
    for s in services.values():
        replicas += s.get("replicas") or 0
        got = s.get("availableReplicas")
        available += (s.get("readyReplicas") or 0) if got is None else got
    return {"replicas": replicas, "availableReplicas": available}


@dataclass(frozen=True)
class Settings:
    """What the operator configuration decides: the profiler image when a request names none
    (``images.profiler``) and the output copier's (``images.operator``)."""

    profiler_image: str = DEFAULT_PROFILER_IMAGE
    copier_image: str = OPERATOR_IMAGE


@dataclass(frozen=True)
class Observed:
    """What the controller saw for one request."""

    job: dict | None = None
    output: dict | None = None  # the dgdr-output ConfigMap
    dgd: dict | None = None  # the DGD named in status.deployment (wire form)
    job_finished_seconds_ago: float | None = None
    config_map_ref_missing: str | None = None  # name of a missing profilingConfig.configMapRef
    model_cache_missing: str | None = None  # name of a missing modelCache.pvcName
    gpus: GpuInfo | None = None  # the cluster's GPU hardware (None: none found, or not looked at)
    gpu_discovery: str = "not run"  # why gpus is None, for the message asking for spec.hardware
    admission_errors: tuple[str, ...] = ()  # the admission rules' objections (webhooks.validation)


@dataclass
class Step:
    """What to do: the new status, the children to create, events, when to look again."""

    status: dict
    conditions: list[Cond] = field(default_factory=list)
    create_job: dict | None = None
    create_dgd: dict | None = None
    create_config_maps: tuple[dict, ...] = ()
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (Normal|Warning, reason, message)
    requeue_after: float | None = None
    # the v1beta1-only status (annotation nvidia.com/dgdr-status); None leaves it as it is
    beta_status: dict | None = None


def _fail(
    st: dict, conds: list[Cond], reason: str, message: str, cond_type: str, beta: dict | None = None
) -> Step:
    st["state"] = FAILED
    return Step(
        st,
        [*conds, Cond(cond_type, False, reason, message), Cond(SUCCEEDED, False, reason, message)],
        events=[("Warning", reason, message)],
        beta_status=beta,
    )


def _both(cond_type: str, ok: bool, reason: str, message: str) -> list[Cond]:
    """``cond_type`` and the summary ``Succeeded`` saying the same."""
    return [Cond(cond_type, ok, reason, message), Cond(SUCCEEDED, ok, reason, message)]


def _job_only(dgdr: dict) -> dict:
    return {"profilingJobName": job_name(dgdr["metadata"]["name"])}


def step(dgdr: dict, seen: Observed, settings: Settings | None = None) -> Step:
    """The next step of the phase machine for ``dgdr`` (wire form, v1alpha1) given what was observed: one
    handler per state, each a pure function of the request, its status so far and ``seen``."""
    settings = settings or Settings()
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
        return _pending(dgdr, st, seen, settings)
    if state == PROFILING:
        return _profiling(dgdr, st, seen, settings)
    if state in (DEPLOYING, READY) and (st.get("deployment") or {}).get("name"):
        return _deploying(dgdr, st, seen, state)
    if state == READY:
        return Step(st, beta_status=_job_only(dgdr))  # autoApply off: the generated spec waits in status
    return _fail(st, [], R_INVALID_SPEC, f"unknown state {state!r}", VALIDATION)


def cluster_errors(spec: dict, seen: Observed) -> list[str]:
    """What the request names that the cluster does not have (the rest is admission's,
    ``webhooks.validation``): each reason names the field and the fix."""
    errors = []
    if seen.config_map_ref_missing:
        errors.append(
            f"spec.profilingConfig.configMapRef: ConfigMap {seen.config_map_ref_missing!r} not found "
            "in the request's namespace: create it or remove the reference"
        )
    if seen.model_cache_missing:
        errors.append(
            f"spec.modelCache.pvcName: PersistentVolumeClaim {seen.model_cache_missing!r} not found in the "
            "request's namespace: create it (holding the model weights) or remove spec.modelCache"
        )
    hardware = spec.get("hardware") or {}
    if needs_discovery(hardware):
        hardware = enrich(hardware, seen.gpus)
    missing = [f"spec.hardware.{k}" for k in PROFILER_HARDWARE if hardware.get(k) is None]
    if missing:
        errors.append(
            f"{' and '.join(missing)}: the profiler needs the GPU hardware and GPU discovery could not find "
            f"it ({seen.gpu_discovery}): set spec.hardware.gpuSku and spec.hardware.numGpusPerNode"
        )
    return errors


def _pending(dgdr: dict, st: dict, seen: Observed, settings: Settings) -> Step:
    """Validate the spec; a valid request starts profiling."""
    st["observedGeneration"] = dgdr["metadata"].get("generation")
    spec = request_spec(dgdr)
    errors = [*seen.admission_errors, *cluster_errors(spec, seen)]
    if errors:
        return _fail(st, [], R_INVALID_SPEC, "; ".join(errors), VALIDATION, beta={})
    st["state"] = PROFILING
    msg = f"profiling Job {job_name(dgdr['metadata']['name'])} created"
    return Step(
        st,
        [
            Cond(VALIDATION, True, R_SPEC_VALID, "spec is valid"),
            *_both(PROFILING_COND, False, R_JOB_CREATED, msg),
        ],
        create_job=_job(dgdr, spec, seen, settings),
        events=[("Normal", R_JOB_CREATED, msg)],
        beta_status={**_job_only(dgdr), "profilingPhase": INITIALIZING},
    )


def _job(dgdr: dict, spec: dict, seen: Observed, settings: Settings) -> dict:
    return profiling_job(dgdr, profiler_spec(spec, settings.profiler_image, seen.gpus), settings.copier_image)


def _profiling(dgdr: dict, st: dict, seen: Observed, settings: Settings) -> Step:
    """Follow the Job: re-create it if it vanished, report the profiler's sub-phase while it runs, fail
    with it, and read its output once it succeeded."""
    outcome, message = job_outcome(seen.job)
    if outcome == "missing":  # deleted by hand while profiling: create it again
        job = _job(dgdr, request_spec(dgdr), seen, settings)
        beta = {**_job_only(dgdr), "profilingPhase": INITIALIZING}
        return Step(st, create_job=job, requeue_after=RECHECK_SECONDS, beta_status=beta)
    if outcome == "failed":
        msg = f"profiling Job {job_name(dgdr['metadata']['name'])} failed: {message}"
        return _fail(st, [], R_JOB_FAILED, msg, PROFILING_COND, beta=_job_only(dgdr))
    if outcome == "running":
        phase, msg = sub_phase(seen.output)
        conds = _both(PROFILING_COND, False, R_RUNNING if phase == INITIALIZING else phase, msg)
        return Step(st, conds, beta_status={**_job_only(dgdr), "profilingPhase": phase})
    if seen.output is None or FINAL_CONFIG not in (seen.output.get("data") or {}):
        return _awaiting_output(dgdr, st, seen)
    try:
        made = generated(dgdr, request_spec(dgdr), seen.output)
    except ProfilingOutputError as e:
        msg = f"profiler output unusable: {e}"
        return _fail(st, [], R_OUTPUT_INVALID, msg, PROFILING_COND, beta=_job_only(dgdr))
    st["profilingResults"] = f"configmap/{output_configmap_name(dgdr['metadata']['name'])}"
    out = _generated(dgdr, st, made.dgd)
    out.create_config_maps = made.config_maps
    return out


def _awaiting_output(dgdr: dict, st: dict, seen: Observed) -> Step:
    """The Job succeeded but its output has not reached the cache: wait, up to ``OUTPUT_GRACE_SECONDS``."""
    waited = seen.job_finished_seconds_ago or 0.0
    cm = output_configmap_name(dgdr["metadata"]["name"])
    if waited < OUTPUT_GRACE_SECONDS:
        msg = f"profiling Job completed; waiting for its output in ConfigMap {cm}"
        return Step(
            st,
            _both(PROFILING_COND, False, R_WAITING_OUTPUT, msg),
            requeue_after=RECHECK_SECONDS,
            beta_status={**_job_only(dgdr), "profilingPhase": DONE},
        )
    msg = f"profiling Job completed but ConfigMap {cm} has no {FINAL_CONFIG} after {int(waited)}s"
    return _fail(st, [], R_OUTPUT_MISSING, msg, PROFILING_COND, beta=_job_only(dgdr))


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
            beta_status=_job_only(dgdr),
        )
    st["state"] = DEPLOYING
    st["deployment"] = {"name": name, "namespace": ns, "created": False}
    msg = f"generated {names.DGD_KIND} {ns}/{name}"
    return Step(
        st,
        [*done, Cond(SPEC_GENERATED, True, R_GENERATED, msg)],
        events=[("Normal", R_GENERATED, msg)],
        requeue_after=0.1,
        beta_status=_job_only(dgdr),
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
            conds = _both(DEPLOYMENT_READY, False, R_DELETED, msg)
            return Step(st, conds, events=[("Warning", R_DELETED, msg)], beta_status=_job_only(dgdr))
        if st.get("generatedDeployment"):
            return Step(st, create_dgd=st["generatedDeployment"], requeue_after=RECHECK_SECONDS)
        return _fail(st, [], R_OUTPUT_MISSING, "status.generatedDeployment is empty", SPEC_GENERATED)
    dgd_state = (seen.dgd.get("status") or {}).get("state") or "initializing"
    st["deployment"] = {**dep, "created": True, "state": dgd_state}
    beta = {**_job_only(dgdr), "deploymentInfo": deployment_info(seen.dgd)}
    if dgd_state == "successful":
        st["state"] = READY
        msg = f"{names.DGD_KIND} {target} is successful"
        events = [("Normal", R_DEPLOYED, msg)] if state == DEPLOYING else []
        return Step(st, _both(DEPLOYMENT_READY, True, R_DEPLOYED, msg), events=events, beta_status=beta)
    st["state"] = DEPLOYING
    msg = f"{names.DGD_KIND} {target} is {dgd_state}"
    if state == READY:
        conds = _both(DEPLOYMENT_READY, False, R_DEGRADED, msg)
        return Step(st, conds, events=[("Warning", R_DEGRADED, msg)], beta_status=beta)
    return Step(st, _both(DEPLOYMENT_READY, False, R_IN_PROGRESS, msg), beta_status=beta)
