"""DynamoGraphDeploymentRequest: a model to profile, fields that reach the profiler in a shape it takes, and
a spec frozen once profiling has started.

Both versions are judged on their v1beta1 form (what the profiler is given, ``render/dgdr_job``); v1alpha1
also on what only it has: its profiler blob (``profilingConfig.config``), whose keys reach the profiler only
where v1beta1 has a field for them (``api/dgdr_conversion.BLOB_FIELDS``), and ``deploymentOverrides``.
Everything refused here says why it would not act and what to write instead.
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.api.dgdr_conversion import BLOB_FIELDS, GPU_SKUS
from dynamo_operator.render import names
from dynamo_operator.render.dgd_override import override_errors
from dynamo_operator.render.dgdr_job import JOB_PREFIX, job_override_errors

from .field import FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED, ErrorList
from .shared import canonical, d

# DGDR phases (v1beta1) / states (v1alpha1) in which profiling has started: the spec is frozen from then on.
DGDR_FROZEN_PHASES = ("Profiling", "Deploying", "Ready", "Deployed")
DGDR_FROZEN_STATES = ("Profiling", "Deploying", "Ready", "DeploymentDeleted")
MAX_NAME = 63 - len(JOB_PREFIX)  # the profiling Job is profile-online-<name>
# v1alpha1 blob keys the operator sets itself, and what sets them
OPERATOR_SET = {
    ("deployment", "model"): "spec.model",
    ("engine", "backend"): "spec.backend",
    ("engine", "config"): "spec.profilingConfig.configMapRef (mounted at /config/disagg.yaml)",
    ("deployment", "useMocker"): "spec.useMocker",
    ("output_dir",): "the operator (the profiler writes to /data)",
}
# v1alpha1 blob keys without a v1beta1 field, and the v1beta1 field that does the job
BLOB_HINTS = {
    "sweep": "nvidia.com/v1beta1 spec.searchStrategy (rapid: AI Configurator; thorough: real engines)",
    "hardware": "nvidia.com/v1beta1 spec.hardware (gpuSku, vramMb, totalGpus, numGpusPerNode)",
    "sla": "nvidia.com/v1beta1 spec.sla (ttft, itl, e2eLatency, optimizationType) and spec.workload",
    "deployment": "nvidia.com/v1beta1 spec.modelCache and spec.overrides.dgd",
}


def profiling_started(raw_old: dict, version: str) -> str | None:
    """The old object's state (v1alpha1) or phase (v1beta1) when profiling has started, else None."""
    status = d(raw_old.get("status"))
    if version == "v1alpha1":
        state = status.get("state")
        return state if state in DGDR_FROZEN_STATES else None
    phase = status.get("phase")
    return phase if phase in DGDR_FROZEN_PHASES else None


def _positive(c: ErrorList, spec: dict, section: str, keys: tuple[str, ...], why: str) -> None:
    for key in keys:
        value = d(spec.get(section)).get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
        ):
            c.add(("spec", section, key), INVALID, f"must be a positive number ({why})", value)


def _check_targets(c: ErrorList, spec: dict) -> None:
    """What the profiler would refuse or silently drop in ``sla``, ``workload`` and ``hardware``."""
    sla, workload = d(spec.get("sla")), d(spec.get("workload"))
    _positive(c, spec, "sla", ("ttft", "itl", "e2eLatency"), "a latency target in milliseconds")
    _positive(c, spec, "workload", ("isl", "osl", "concurrency", "requestRate"), "the expected traffic")
    _positive(c, spec, "hardware", ("vramMb", "totalGpus", "numGpusPerNode"), "the GPUs to plan for")
    if sla.get("e2eLatency") is not None and (sla.get("ttft") is not None or sla.get("itl") is not None):
        c.add(
            ("spec", "sla", "e2eLatency"),
            FORBIDDEN,
            "an end-to-end latency target replaces ttft and itl (the profiler would ignore them): set either "
            "e2eLatency or ttft and itl",
        )
    if workload.get("concurrency") is not None and workload.get("requestRate") is not None:
        c.add(
            ("spec", "workload", "requestRate"),
            FORBIDDEN,
            "the profiler takes the load as concurrency or as requestRate, not both: keep one",
        )
    if spec.get("searchStrategy") == "thorough" and spec.get("backend") == "auto":
        c.add(
            ("spec", "searchStrategy"),
            FORBIDDEN,
            'searchStrategy "thorough" benchmarks real engines of one backend and cannot pick one: set '
            "spec.backend to sglang, trtllm or vllm, or use searchStrategy rapid",
        )


def _check_model_cache(c: ErrorList, spec: dict) -> None:
    cache = d(spec.get("modelCache"))
    if cache and not cache.get("pvcName"):
        c.add(
            ("spec", "modelCache", "pvcName"),
            REQUIRED,
            "name the PersistentVolumeClaim holding the model weights (without it the cache does nothing), "
            "or remove spec.modelCache",
        )
    mount = cache.get("pvcMountPath")
    if isinstance(mount, str) and mount and not mount.startswith("/"):
        c.add(("spec", "modelCache", "pvcMountPath"), INVALID, "must be an absolute path", mount)


def _check_overrides(c: ErrorList, spec: dict) -> None:
    overrides = d(spec.get("overrides"))
    if "profilingJob" in overrides:
        for path, what in job_override_errors(overrides["profilingJob"]):
            c.add(("spec", "overrides", "profilingJob", *([path] if path else [])), FORBIDDEN, what)
    if "dgd" in overrides:
        for path, what in override_errors(overrides["dgd"]):
            c.add(("spec", "overrides", "dgd", *([path] if path else [])), INVALID, what)


def _leaves(tree: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    if isinstance(tree, dict) and tree:
        return [leaf for k, v in tree.items() for leaf in _leaves(v, (*path, str(k)))]
    return [(path, tree)]


def _check_blob_leaf(c: ErrorList, path: tuple[str, ...], value: Any) -> None:
    where = ("spec", "profilingConfig", "config", *path)
    mapped = next((f for f in BLOB_FIELDS if path[: len(f[0])] == f[0]), None)
    if mapped is not None:
        if len(path) == len(mapped[0]) and not mapped[2](value):
            want = (
                "one of " + ", ".join(sorted(GPU_SKUS))
                if path == ("hardware", "gpuType")
                else "a " + type_name(path)
            )
            c.add(where, INVALID, f"must be {want} (the profiler's {'.'.join(mapped[1])})", value)
        return
    owner = next((who for key, who in OPERATOR_SET.items() if path[: len(key)] == key), None)
    if owner is not None:
        c.add(where, FORBIDDEN, f"set by the operator from {owner}: remove it")
        return
    hint = BLOB_HINTS.get(path[0])
    c.add(
        where,
        NOT_SUPPORTED,
        "not passed to the profiler, which receives the request in its v1beta1 form and has no field for "
        f"it: remove it{f'; use {hint}' if hint else ''}",
    )


def type_name(path: tuple[str, ...]) -> str:
    if path[0] == "sla" and path[-1] in ("isl", "osl"):
        return "whole number of tokens"
    if path[0] == "sla":
        return "number of milliseconds"
    if path == ("planner",):
        return "planner configuration object"
    return "whole number" if path == ("hardware", "numGpusPerNode") else "string"


def _check_alpha(c: ErrorList, raw: dict) -> None:
    """What only v1alpha1 says: its profiler blob and its deployment overrides."""
    spec = d(raw.get("spec"))
    blob = d(spec.get("profilingConfig")).get("config")
    if isinstance(blob, dict):
        for path, value in _leaves(blob):
            if path and value != {}:
                _check_blob_leaf(c, path, value)
    overrides = d(spec.get("deploymentOverrides"))
    for key in ("name", "namespace"):
        value = overrides.get(key)
        if value and names.dns_label(value) != value:
            c.add(
                ("spec", "deploymentOverrides", key),
                INVALID,
                "not a valid Kubernetes name: use lower-case letters, digits and '-', at most 63 characters",
                value,
            )
    if overrides and spec.get("autoApply") is False:
        c.add(
            ("spec", "deploymentOverrides"),
            FORBIDDEN,
            "applies only to the graph autoApply creates: remove it or set autoApply: true",
        )
    if spec.get("enableGpuDiscovery") is not None:
        c.warn(
            "spec.enableGpuDiscovery is deprecated and has no effect: GPU discovery runs whenever the "
            "operator may list nodes (gpu.discoveryEnabled)"
        )


def validate_dgdr(c: ErrorList, obj: dict, raw: dict, raw_old: dict | None, version: str) -> None:
    """``obj`` in v1beta1; ``raw``/``raw_old`` as the request carried them (in ``version``). An update that
    leaves the spec as it was is not judged again (a request admitted before a rule existed stays
    updatable: its labels, and the status annotation the controller keeps)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        c.add(("spec",), REQUIRED, "a DynamoGraphDeploymentRequest needs a spec with the model to deploy")
        return
    if raw_old is not None and canonical(raw.get("spec")) == canonical(raw_old.get("spec")):
        return
    model = spec.get("model")
    if not isinstance(model, str) or not model.strip():
        c.add(("spec", "model"), REQUIRED, 'name the model to deploy, e.g. "Qwen/Qwen3-0.6B"')
    name = d(obj.get("metadata")).get("name")
    if isinstance(name, str) and len(name) > MAX_NAME:
        c.add(
            ("metadata", "name"),
            INVALID,
            f"too long for the profiling Job's name ({JOB_PREFIX}<name>, 63 characters): use at most "
            f"{MAX_NAME} characters",
            name,
        )
    _check_targets(c, spec)
    _check_model_cache(c, spec)
    _check_overrides(c, spec)
    if version == "v1alpha1":
        _check_alpha(c, raw)
    if raw_old is None:
        return
    started = profiling_started(raw_old, version)
    if started and canonical(raw.get("spec")) != canonical(raw_old.get("spec")):
        c.add(
            ("spec",),
            FORBIDDEN,
            f"the spec cannot change once profiling has started (now {started}); delete and recreate the "
            "DynamoGraphDeploymentRequest to change it",
        )
