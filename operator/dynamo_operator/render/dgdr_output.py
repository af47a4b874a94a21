"""What a DynamoGraphDeploymentRequest creates from its profiler's output: the generated graph and the
ConfigMaps the profiler packaged with it.

``final_config.yaml`` (published by the output copier in ConfigMap ``dgdr-output-<name>``) is one YAML
document, the DynamoGraphDeployment the profiler recommends, or several: that graph and the ConfigMaps it
mounts (with ``features.planner``, upstream's profiler emits ``planner-config-*`` and
``planner-profile-data-*`` beside the graph). Then, as upstream's controller and profiler do:

1. ``spec.overrides.dgd`` is merged into the graph (``dgd_override``; merging twice changes nothing, so a
   profiler that merged it already gives the same graph);
2. ``spec.modelCache``: the PVC is mounted at ``pvcMountPath`` (default ``/opt/model-cache``) in the
   frontend and every worker component that does not mount it yet (the profiler points the engines'
   model path there);
3. ``spec.features.planner`` (present, even ``{}``, means "deploy a planner"): the graph must have a planner
   component; a profiler that did not add one fails the request rather than deploying without it;
4. v1alpha1's ``deploymentOverrides`` (name, namespace, labels, annotations, workers' image) apply last;
5. the graph is named by ``deploymentOverrides.name``, else ``overrides.dgd``'s ``metadata.name``, else the
   request's name, and labelled ``dgdr.nvidia.com/name`` / ``dgdr.nvidia.com/namespace``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import yaml

from dynamo_operator.api.conversion import convert

from . import names
from .dgd_override import OverrideError, apply_override
from .dgdr_job import FINAL_CONFIG, LABEL_DGDR_NAME, LABEL_DGDR_NAMESPACE, model_cache, output_configmap_name

MOUNTED_TYPES = frozenset({"frontend", *names.WORKER_TYPES})
PLANNER_TYPE = "planner"


class ProfilingOutputError(ValueError):
    """The profiler's output cannot be turned into a DGD; the message says what is wrong."""


@dataclass(frozen=True)
class Generated:
    """The graph to create (v1alpha1, the storage version) and the ConfigMaps it needs."""

    dgd: dict
    config_maps: tuple[dict, ...] = ()


def _documents(dgdr_name: str, output: dict | None) -> list[dict]:
    text = ((output or {}).get("data") or {}).get(FINAL_CONFIG)
    if not text:
        raise ProfilingOutputError(f"ConfigMap {output_configmap_name(dgdr_name)} has no {FINAL_CONFIG}")
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        raise ProfilingOutputError(f"{FINAL_CONFIG} is not YAML: {e}") from e
    for doc in docs:
        kind = doc.get("kind") if isinstance(doc, dict) else type(doc).__name__
        if kind not in (names.DGD_KIND, "ConfigMap"):
            raise ProfilingOutputError(
                f"{FINAL_CONFIG} has a document of kind {kind!r}; it may hold a {names.DGD_KIND} and "
                "the ConfigMaps it mounts"
            )
    return docs


def read_output(dgdr_name: str, output: dict | None) -> tuple[dict, list[dict]]:
    """The generated graph (as the profiler wrote it) and the ConfigMaps beside it."""
    docs = _documents(dgdr_name, output)
    graphs = [d for d in docs if d.get("kind") == names.DGD_KIND]
    if len(graphs) != 1:
        kinds = [d.get("kind") for d in docs] or ["nothing"]
        raise ProfilingOutputError(
            f"{FINAL_CONFIG} is not a {names.DGD_KIND} (it holds {len(graphs)} graphs among {kinds})"
        )
    dgd = graphs[0]
    api = str(dgd.get("apiVersion") or "")
    if api not in (names.V1ALPHA1, names.V1BETA1):
        raise ProfilingOutputError(
            f"{FINAL_CONFIG} has apiVersion {api!r}; want {names.V1ALPHA1} or {names.V1BETA1}"
        )
    if not isinstance(dgd.get("spec"), dict):
        raise ProfilingOutputError(f"{FINAL_CONFIG} has no spec")
    return dgd, [d for d in docs if d.get("kind") == "ConfigMap"]


def mount_model_cache(dgd: dict, pvc: str, mount: str) -> dict:
    """``dgd`` (v1beta1) with the model cache PVC mounted in its frontend and worker components (those that
    mount it already are left as they are)."""
    out = copy.deepcopy(dgd)
    for comp in (out.get("spec") or {}).get("components") or []:
        if comp.get("type") not in MOUNTED_TYPES:
            continue
        pod = comp.setdefault("podTemplate", {}).setdefault("spec", {})
        volumes = pod.setdefault("volumes", [])
        claimed = [v for v in volumes if (v.get("persistentVolumeClaim") or {}).get("claimName") == pvc]
        if not claimed:
            volumes.append({"name": pvc, "persistentVolumeClaim": {"claimName": pvc}})
        volume = claimed[0]["name"] if claimed else pvc
        containers = pod.setdefault("containers", [])
        main = next((c for c in containers if c.get("name") == names.MAIN_CONTAINER), None)
        if main is None:
            main = {"name": names.MAIN_CONTAINER}
            containers.insert(0, main)
        mounts = main.setdefault("volumeMounts", [])
        if not any(m.get("name") == volume for m in mounts):
            mounts.append({"name": volume, "mountPath": mount})
    return out


def _check_planner(dgd: dict, spec: dict) -> None:
    if (spec.get("features") or {}).get("planner") is None:
        return
    if not any(c.get("type") == PLANNER_TYPE for c in (dgd.get("spec") or {}).get("components") or []):
        raise ProfilingOutputError(
            "spec.features.planner is set but the profiler's graph has no planner component: the profiler "
            "image did not add it; use a profiler that deploys the planner (dynamo-planner 1.1 or later) or "
            "remove spec.features.planner"
        )


def _metadata(dgdr: dict, dgd: dict, spec: dict) -> dict:
    md_in = dgdr["metadata"]
    alpha = (dgdr.get("spec") or {}).get("deploymentOverrides") or {}
    override_md = ((spec.get("overrides") or {}).get("dgd") or {}).get("metadata") or {}
    current = dgd.get("metadata") or {}
    md = {
        "name": alpha.get("name") or override_md.get("name") or md_in["name"],
        "namespace": alpha.get("namespace") or md_in["namespace"],
        "labels": {**(current.get("labels") or {}), **(alpha.get("labels") or {})},
        "annotations": {**(current.get("annotations") or {}), **(alpha.get("annotations") or {})},
    }
    md["labels"][LABEL_DGDR_NAME] = md_in["name"]
    md["labels"][LABEL_DGDR_NAMESPACE] = md_in["namespace"]
    if not md["annotations"]:
        del md["annotations"]
    return md


def _workers_image(dgd: dict, image: str | None) -> None:
    for comp in (dgd.get("spec") or {}).get("components") or []:
        if image and comp.get("type") in names.WORKER_TYPES:
            for c in ((comp.get("podTemplate") or {}).get("spec") or {}).get("containers") or []:
                if c.get("name") == names.MAIN_CONTAINER:
                    c["image"] = image


def _config_map(cm: dict, dgdr: dict, namespace: str) -> dict:
    md = cm.get("metadata") or {}
    if not md.get("name"):
        raise ProfilingOutputError(f"{FINAL_CONFIG} has a ConfigMap without a name")
    labels = {**(md.get("labels") or {}), **_managed(dgdr)}
    out = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": md["name"], "namespace": namespace}}
    out["metadata"]["labels"] = labels
    if md.get("annotations"):
        out["metadata"]["annotations"] = dict(md["annotations"])
    for key in ("data", "binaryData"):
        if cm.get(key):
            out[key] = copy.deepcopy(cm[key])
    return out


def _managed(dgdr: dict) -> dict:
    md = dgdr["metadata"]
    return {
        names.LABEL_MANAGED_BY: names.MANAGED_BY,
        LABEL_DGDR_NAME: md["name"],
        LABEL_DGDR_NAMESPACE: md["namespace"],
    }


def generated(dgdr: dict, spec: dict, output: dict | None) -> Generated:
    """What ``dgdr`` (the stored request; ``spec`` its v1beta1 spec) creates from ``output`` (the
    ``dgdr-output`` ConfigMap). Raises ``ProfilingOutputError``."""
    doc, extra = read_output(dgdr["metadata"]["name"], output)
    dgd = convert(doc, "v1beta1") if doc["apiVersion"] == names.V1ALPHA1 else copy.deepcopy(doc)
    override = (spec.get("overrides") or {}).get("dgd")
    if override:
        try:
            dgd = apply_override(dgd, override)
        except OverrideError as e:
            raise ProfilingOutputError(str(e)) from e
    cache = model_cache(spec)
    if cache:
        dgd = mount_model_cache(dgd, *cache)
    _check_planner(dgd, spec)
    dgd["metadata"] = _metadata(dgdr, dgd, spec)
    _workers_image(dgd, ((dgdr.get("spec") or {}).get("deploymentOverrides") or {}).get("workersImage"))
    dgd.pop("status", None)
    namespace = dgd["metadata"]["namespace"]
    return Generated(convert(dgd, "v1alpha1"), tuple(_config_map(cm, dgdr, namespace) for cm in extra))
