"""A graph component's ``checkpoint`` (pure): the DynamoCheckpoint the graph manages, and what its DCD
says about it.

For each component with ``experimental.checkpoint.enabled`` (v1alpha1 ``services.<name>.checkpoint``):

* **automatic** (no ``checkpointRef``): the graph creates DynamoCheckpoint ``checkpoint-<id>`` with the
  DGD-scoped ID of ``checkpoint_ids.dgd_checkpoint_id`` (a change of what the component runs gives a new
  ID, so a new capture; the old one goes with the graph's pruning). Its Job runs the component's own
  rendered pod (Dynamo's defaults, the checkpoint PVC; minus the component's selector label, so the
  component's Service never routes to it) with ``checkpoint.job.podTemplate`` merged over it, the target
  container ``checkpoint.targetContainerName`` (default ``main``), an hour's deadline, the component's
  ``/dev/shm``. Its identity is synthesised (model from ``--model``/``--model-path``, else the component
  name; the graph's backend; tensor/pipeline parallel sizes from the launch), ``checkpoint.identity``
  fields win. ``deletionPolicy: Delete`` (default): owned by the graph, deleted with it (and when the
  component stops asking for it). ``Retain``: not owned, left behind for a later ``checkpointRef``.
* **checkpointRef**: the named DynamoCheckpoint, never owned or changed by the graph.

Either way the component's DCD (or, on Grove, the rendered cliques) carries ``checkpointRef: <name>`` and
the resolved ID (annotation ``nvidia.com/dynamo-checkpoint-id``), so its pods restore from it
(``restore.py``), and ``WaitForCheckpoint`` holds its replicas at zero until the checkpoint is Ready.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from . import names
from .checkpoint_ids import (
    ANN_CHECKPOINT_ID,
    FAILED,
    LABEL_CHECKPOINT_ID,
    checkpoint_id_of,
    dgd_checkpoint_id,
    is_ready,
    phase_of,
    problem,
)
from .context import RenderContext
from .errors import RenderError
from .hashing import component_revision, stamp
from .info import component_info, parallel_sizes
from .merge import merge_container, merge_named
from .pod import build_pod_template, shared_memory_size, split_containers
from .restore import gate, require_enabled

CHECKPOINT_API_VERSION = names.V1ALPHA1  # DynamoCheckpoint has no other version
CHECKPOINT_KIND = "DynamoCheckpoint"
ANN_AUTO = "nvidia.com/dynamo-auto-checkpoint"
ANN_DELETION_POLICY = "nvidia.com/dynamo-checkpoint-deletion-policy"
DELETE, RETAIN = "Delete", "Retain"
AUTO_ACTIVE_DEADLINE_SECONDS = 3600
CHECKPOINT_BACKENDS = ("vllm", "sglang", "trtllm")
_RESTORE_ONLY_ENV = frozenset({"SKIP_WAIT_FOR_CHECKPOINT"})  # a capture pod does not look for a checkpoint
_MODEL_FLAGS = ("--model", "--model-path")


def checkpoint_config(component: dict) -> dict | None:
    """A (v1beta1) component's checkpoint settings when checkpointing is enabled."""
    cp = (component.get("experimental") or {}).get("checkpoint")
    return cp if isinstance(cp, dict) and cp.get("enabled") else None


def checkpoint_name(checkpoint_id: str) -> str:
    return f"checkpoint-{checkpoint_id}"


EV_CHECKPOINT_FAILED = "CheckpointFailed"
EV_CHECKPOINT_STALLED = "CheckpointStalled"


@dataclass(frozen=True)
class CheckpointPlan:
    """One component's checkpoint as this pass sees it."""

    component: str
    name: str  # the DynamoCheckpoint
    checkpoint_id: str | None  # None: a referenced checkpoint that does not exist (yet)
    auto: bool  # the graph manages it
    retain: bool  # deletionPolicy Retain: not owned by the graph
    live: dict | None  # the DynamoCheckpoint as the caches know it
    desired: dict | None  # automatic: the DynamoCheckpoint to create
    waiting: str | None  # why the component's replicas are held at zero

    @property
    def ready(self) -> bool:
        return is_ready(self.live)

    def notice(self) -> tuple[str, str] | None:
        """(graph Event reason, message) while the checkpoint failed or its Job is stalled: the graph says so
        too, and what it means for the component."""
        found = problem(self.live)
        if found is None:
            return None
        reason, message = found
        ns = ((self.live or {}).get("metadata") or {}).get("namespace")
        then = (
            "the component stays at zero replicas until it is Ready (startupPolicy WaitForCheckpoint)"
            if self.waiting
            else "the component's pods start cold meanwhile"
        )
        kind = EV_CHECKPOINT_FAILED if phase_of(self.live) == FAILED else EV_CHECKPOINT_STALLED
        where = f"DynamoCheckpoint {ns}/{self.name} of component {self.component}"
        return kind, f"{where}: {reason}: {message}; {then}"

    def status(self) -> dict:
        """``status.checkpoints[<component>]`` (``ComponentCheckpointStatus``)."""
        out: dict = {"checkpointName": self.name, "ready": self.ready}
        if self.checkpoint_id:
            out["checkpointID"] = self.checkpoint_id
            out["identityHash"] = self.checkpoint_id  # deprecated: kept for older status readers
        return out


def _flag(words: list[str], flags: tuple[str, ...]) -> str | None:
    for i, w in enumerate(words):
        for f in flags:
            if w == f and i + 1 < len(words):
                return words[i + 1]
            if w.startswith(f + "="):
                return w[len(f) + 1 :]
    return None


def _identity(component: dict, cp: dict, main: dict, backend: str) -> dict:
    words: list[str] = []
    for part in (main.get("command") or []) + (main.get("args") or []):
        try:
            words.extend(shlex.split(str(part)))
        except ValueError:
            words.extend(str(part).split())
    sizes = parallel_sizes({"args": words})
    ident = {
        "model": _flag(words, _MODEL_FLAGS) or str(component["name"]),
        "backendFramework": backend,
        "tensorParallelSize": sizes["tensor-parallel-size"],
        "pipelineParallelSize": sizes["pipeline-parallel-size"],
    }
    ident.update({k: v for k, v in (cp.get("identity") or {}).items() if v not in (None, "", {})})
    return ident


def job_template_problem(user) -> tuple[str, str] | None:
    """(path under ``checkpoint.job.podTemplate``, what is wrong) when the (schemaless) template is not a
    pod template the operator can merge: objects where Kubernetes has objects, named containers."""
    if user is None:
        return None
    if not isinstance(user, dict):
        return "", "must be a pod template object (metadata, spec)"
    for key in ("metadata", "spec"):
        if user.get(key) is not None and not isinstance(user[key], dict):
            return f".{key}", "must be an object"
    for key in ("labels", "annotations"):
        if (user.get("metadata") or {}).get(key) is not None and not isinstance(user["metadata"][key], dict):
            return f".metadata.{key}", "must be a map of strings"
    for key in ("containers", "initContainers", "volumes"):
        items = (user.get("spec") or {}).get(key)
        if items is None:
            continue
        if not isinstance(items, list) or not all(isinstance(i, dict) and i.get("name") for i in items):
            return f".spec.{key}", "must be a list of objects, each with a name"
    return None


def _merge_template(base: dict, user: dict | None) -> dict:
    """``checkpoint.job.podTemplate`` (checked by ``job_template_problem``) over the rendered pod:
    metadata maps merged (user wins), containers merged by name field-wise (new ones appended), init
    containers and volumes by name, other pod fields replaced."""
    out = copy.deepcopy(base)
    if not user:
        return out
    umeta, meta = user.get("metadata") or {}, out.setdefault("metadata", {})
    for key in ("labels", "annotations"):
        if umeta.get(key):
            meta[key] = {**(meta.get(key) or {}), **umeta[key]}
    pod = out.setdefault("spec", {})
    for key, value in (user.get("spec") or {}).items():
        if key == "containers":
            have = {c.get("name"): i for i, c in enumerate(pod.get("containers") or [])}
            containers = list(pod.get("containers") or [])
            for c in value or []:
                if c.get("name") in have:
                    i = have[c["name"]]
                    containers[i] = merge_container(containers[i], c)
                else:
                    containers.append(copy.deepcopy(c))
            pod["containers"] = containers
        elif key in ("initContainers", "volumes"):
            pod[key] = merge_named(pod.get(key) or [], value)
        elif value is not None:
            pod[key] = copy.deepcopy(value)
    return out


def _job_template(dcd: dict, cp: dict, ctx: RenderContext, target: str) -> dict:
    """The component's own pod (as its DCD renders it) made a capture pod, with the user's template over."""
    template = build_pod_template(component_info(dcd, ctx.discovery_backend), ctx, "main")
    template["metadata"].get("labels", {}).pop(names.LABEL_SELECTOR, None)
    for c in template["spec"]["containers"]:
        if c.get("name") == target:
            c["env"] = [e for e in c.get("env") or [] if e.get("name") not in _RESTORE_ONLY_ENV]
    template["spec"].pop("restartPolicy", None)  # the checkpoint Job sets Never
    return _merge_template(template, (cp.get("job") or {}).get("podTemplate"))


def _shared_memory(dcd: dict) -> dict:
    size = shared_memory_size(dcd.get("spec") or {}, dcd)
    return {"disabled": True} if size is None else {"size": size}


def auto_checkpoint(
    dgd: dict, component: dict, dcd: dict, cp: dict, checkpoint_id: str, ctx: RenderContext
) -> dict:
    """The DynamoCheckpoint a graph creates for ``component`` (hash-stamped, no owner reference)."""
    meta = dgd["metadata"]
    backend = (dcd.get("spec") or {}).get("backendFramework")
    index = dgd["spec"]["components"].index(component)
    if backend not in CHECKPOINT_BACKENDS:
        raise RenderError(
            dgd,
            f"spec.components[{index}].experimental.checkpoint",
            f"an automatic checkpoint needs the backend (vllm, sglang or trtllm), and it is "
            f"{backend or 'unknown'}",
            "set spec.backendFramework, or run python3 -m dynamo.<backend> in the component's main container",
        )
    problem = job_template_problem((cp.get("job") or {}).get("podTemplate"))
    if problem is not None:
        raise RenderError(
            dgd,
            f"spec.components[{index}].experimental.checkpoint.job.podTemplate{problem[0]}",
            problem[1],
            "give a pod template (metadata, spec.containers with names) to merge over the checkpoint "
            "Job's pod",
        )
    target = cp.get("targetContainerName") or names.MAIN_CONTAINER
    main, _ = split_containers(((dcd["spec"].get("podTemplate") or {}).get("spec")) or {})
    policy = cp.get("deletionPolicy") or DELETE
    obj = {
        "apiVersion": CHECKPOINT_API_VERSION,
        "kind": CHECKPOINT_KIND,
        "metadata": {
            "name": checkpoint_name(checkpoint_id),
            "namespace": meta.get("namespace") or "default",
            "labels": {
                LABEL_CHECKPOINT_ID: checkpoint_id,
                names.LABEL_DGD_NAME: meta["name"],
                names.LABEL_COMPONENT: str(component["name"]),
                names.LABEL_MANAGED_BY: names.MANAGED_BY,
            },
            # its artifacts are removed when it is deleted (controllers/checkpoint_storage.py)
            "finalizers": [names.FINALIZER],
            "annotations": {
                ANN_AUTO: "true",
                ANN_DELETION_POLICY: policy,
                names.ANN_OPERATOR_VERSION: ctx.operator_version,
            },
        },
        "spec": {
            "identity": _identity(component, cp, main or {}, str(backend)),
            "job": {
                "podTemplateSpec": _job_template(dcd, cp, ctx, target),
                "targetContainerName": target,
                "sharedMemory": _shared_memory(dcd),
                "activeDeadlineSeconds": AUTO_ACTIVE_DEADLINE_SECONDS,
            },
        },
    }
    return stamp(obj)


def _point_dcd_at(dcd: dict, cp: dict, name: str, checkpoint_id: str | None) -> None:
    """The DCD restores from ``name``: ``checkpointRef`` set (the graph manages the capture, not the DCD:
    ``identity`` and ``job`` dropped), the resolved ID as an annotation."""
    ref = {"enabled": True, "checkpointRef": name}
    for key in ("startupPolicy", "targetContainerName"):
        if cp.get(key):
            ref[key] = cp[key]
    dcd["spec"].setdefault("experimental", {})["checkpoint"] = ref
    if checkpoint_id:
        dcd["metadata"].setdefault("annotations", {})[ANN_CHECKPOINT_ID] = checkpoint_id
        dcd["metadata"]["annotations"] = dict(sorted(dcd["metadata"]["annotations"].items()))


def plan_checkpoints(dgd: dict, dcds: list[dict], ctx: RenderContext) -> dict[str, CheckpointPlan]:
    """Resolve every checkpoint-enabled component's checkpoint, point its DCD (in place) at it and hold
    its replicas at zero while WaitForCheckpoint waits; component name -> plan."""
    meta = dgd["metadata"]
    namespace = meta.get("namespace") or "default"
    out: dict[str, CheckpointPlan] = {}
    for component, dcd in zip(dgd["spec"]["components"], dcds, strict=True):
        cp = checkpoint_config(component)
        if cp is None:
            continue
        index = dgd["spec"]["components"].index(component)
        require_enabled(ctx, dgd, f"spec.components[{index}].experimental.checkpoint.enabled")
        ref = cp.get("checkpointRef")
        if ref:
            name, live = str(ref), ctx.checkpoints.get(str(ref))
            cid = checkpoint_id_of(live) if live is not None else None
        else:
            uid, revision = meta.get("uid") or "", component_revision(dgd, component)
            cid = dgd_checkpoint_id(namespace, meta["name"], uid, component["name"], revision)
            name, live = checkpoint_name(cid), ctx.checkpoints.get(checkpoint_name(cid))
        _point_dcd_at(dcd, cp, name, cid)
        desired = None if ref else auto_checkpoint(dgd, component, dcd, cp, str(cid), ctx)
        waiting = gate(component_info(dcd, ctx.discovery_backend), ctx)
        if waiting:
            dcd["spec"]["replicas"] = 0
        out[component["name"]] = CheckpointPlan(
            component=component["name"],
            name=name,
            checkpoint_id=cid,
            auto=not ref,
            retain=(cp.get("deletionPolicy") or DELETE) == RETAIN,
            live=live,
            desired=desired,
            waiting=waiting,
        )
    return out


def _running(replicas) -> bool:
    return replicas is None or int(replicas) > 0


def hold_running_dcds(
    plans: dict[str, CheckpointPlan], desired: list[dict], live: Mapping[str, dict]
) -> set[str]:
    """WaitForCheckpoint on a component that already runs (its checkpoint changed with its spec, or was
    deleted): rather than scaling it to zero, its live DCD (``live``: v1beta1 by name) stays as it is
    until the checkpoint is Ready, and the component then rolls onto it. ``desired`` (the graph's DCDs) is
    changed in place; returns the held component names."""
    held = set()
    for i, dcd in enumerate(desired):
        comp = (dcd.get("spec") or {}).get("name")
        plan = plans.get(comp)
        cur = live.get(dcd["metadata"]["name"])
        if (
            plan is None
            or not plan.waiting
            or cur is None
            or not _running((cur.get("spec") or {}).get("replicas"))
        ):
            continue
        cmd = cur.get("metadata") or {}
        if names.ANN_SPEC_HASH not in (cmd.get("annotations") or {}):
            continue  # not written by the operator as rendered: nothing to hold on to
        keep = {k: copy.deepcopy(cmd[k]) for k in ("name", "namespace", "labels", "annotations") if k in cmd}
        desired[i] = {
            "apiVersion": dcd["apiVersion"],
            "kind": dcd["kind"],
            "metadata": keep,
            "spec": copy.deepcopy(cur["spec"]),
        }
        held.add(comp)
    return held


def hold_running_cliques(plans: dict[str, CheckpointPlan], pcs: dict, live_pcs: dict | None) -> set[str]:
    """The Grove form of ``hold_running_dcds``: a waiting component whose live clique runs keeps that
    clique as it is in the PodCliqueSet (``pcs``, re-stamped in place); returns the held components."""
    live = {
        c.get("name"): c
        for c in (((live_pcs or {}).get("spec") or {}).get("template") or {}).get("cliques") or []
    }
    cliques = pcs["spec"]["template"]["cliques"]
    held = set()
    for name, plan in plans.items():
        cur = live.get(name.lower())
        if not plan.waiting or cur is None or not _running((cur.get("spec") or {}).get("replicas")):
            continue
        for i, clique in enumerate(cliques):
            if clique["name"] == name.lower():
                cliques[i] = copy.deepcopy(cur)
                held.add(name)
    if held:
        stamp(pcs)
    return held
