"""DynamoGraphDeploymentRequest controller: observes the request's profiling Job, the profiler's output
ConfigMap, the generated DGD and (before profiling) the cluster's GPU nodes and the PVC and ConfigMap the
request names, asks ``render.dgdr.step`` what comes next, and does it (create the profiling
ServiceAccount/RoleBinding and Job, the DGD and the ConfigMaps the profiler packaged with it, write status
and the v1beta1-only status annotation ``nvidia.com/dgdr-status``, record events).

Jobs are owned by their request (their events re-queue it); output ConfigMaps and generated DGDs are
mapped back through their ``dgdr.nvidia.com/name`` / ``dgdr.nvidia.com/namespace`` labels (a DGD may live
in another namespace through ``deploymentOverrides.namespace``, where no owner reference can point).

GPU discovery lists the nodes directly, once, when a request that leaves ``spec.hardware`` fields out is
validated (``gpu.discoveryEnabled: false`` turns it off; a namespace-restricted operator without the
chart's node grant cannot, and says so).
"""

from __future__ import annotations

import datetime as dt

from kubernetes.client.exceptions import ApiException

from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE, OPERATOR_IMAGE, lookup
from dynamo_operator.api.dgdr_conversion import STATUS_ANNOTATION, encode_payload, status_payload
from dynamo_operator.render import dgdr as rd
from dynamo_operator.render import dgdr_job, gpu
from dynamo_operator.render.security import harden_job
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    NODES,
    PVCS,
    ROLEBINDINGS,
    SERVICEACCOUNTS,
)
from dynamo_operator.runtime.controller import Controller, Request, Result
from dynamo_operator.runtime.events import EventRecorder
from dynamo_operator.runtime.informer import Indexer

from . import store
from .common import StatusWriter, log
from .lifecycle import (
    DGDRS,
    JOBS,
    admission_errors,
    apply_conditions,
    create_child,
    get_or_none,
    guarded,
    typed,
)
from .wiring import Wiring


def _seconds_since(timestamp: str | None) -> float | None:
    if not timestamp:
        return None
    try:
        t = dt.datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return None
    return (dt.datetime.now(dt.UTC) - t).total_seconds()


def request_for_labels(obj: dict) -> list[Request]:
    """The request an output ConfigMap or a generated DGD belongs to (its dgdr.nvidia.com labels)."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    name, ns = labels.get(dgdr_job.LABEL_DGDR_NAME), labels.get(dgdr_job.LABEL_DGDR_NAMESPACE)
    return [Request(ns, name)] if name and ns else []


class DGDRReconciler:
    def __init__(
        self,
        client,
        recorder: EventRecorder,
        dgdrs: Indexer,
        jobs: Indexer,
        outputs: Indexer,
        dgds: Indexer,
        profiling_cluster_role: str | None = None,
        settings: rd.Settings | None = None,
        gpu_discovery: bool = True,
        restricted: bool = False,
    ):
        self.client = client
        self.settings = settings or rd.Settings()  # images.profiler and images.operator
        self.gpu_discovery = gpu_discovery  # gpu.discoveryEnabled
        self.restricted = restricted  # security.workloads.restrictedSecurityContext
        self.recorder = recorder
        self.dgdrs, self.jobs, self.outputs, self.dgds = dgdrs, jobs, outputs, dgds
        self.profiling_cluster_role = profiling_cluster_role
        self.status = StatusWriter(client, DGDRS, convert=False)

    def __call__(self, req: Request) -> Result:
        live = typed(self.dgdrs.get(req.namespace, req.name), DGDRS)
        if live is None or live["metadata"].get("deletionTimestamp"):
            return Result()  # the Job and the output go with it (owner references)
        return guarded(self.recorder, live, lambda: self._reconcile(req, live))

    def _cached_or_live(self, store_: Indexer, res, namespace: str, name: str) -> dict | None:
        """The cache's copy, else a direct read: right after a create the cache may not have it yet."""
        obj = store_.get(namespace, name)
        return typed(obj, res) if obj is not None else get_or_none(self.client, res, name, namespace)

    def discover_gpus(self, sku: str | None) -> tuple[gpu.GpuInfo | None, str]:
        """The cluster's GPU hardware from its nodes (of ``sku`` when given), and why there is none when
        there is none."""
        if not self.gpu_discovery:
            return None, "GPU discovery is off: gpu.discoveryEnabled is false in the operator configuration"
        try:
            nodes, _ = self.client.list_all(NODES)
        except ApiException as e:
            if e.status in (401, 403):
                return None, "the operator may not list nodes (namespace-restricted, no GPU discovery grant)"
            raise
        info = gpu.discover(nodes, sku)
        if info is None:
            which = f"a GPU of SKU {sku}" if sku else "GPUs"
            return None, f"no node has {which} and the {gpu.LABEL_PRODUCT} label"
        return info, "found"

    def _pending_observations(self, live: dict) -> dict:
        """What validation needs from the cluster: the PVC and ConfigMap the request names, the GPUs."""
        ns, spec = live["metadata"]["namespace"], dgdr_job.request_spec(live)
        found: dict = {"admission_errors": tuple(admission_errors(live))}
        ref = ((live.get("spec") or {}).get("profilingConfig") or {}).get("configMapRef")
        if ref and ref.get("name") and get_or_none(self.client, CONFIGMAPS, ref["name"], ns) is None:
            found["config_map_ref_missing"] = ref["name"]
        cache = dgdr_job.model_cache(spec)
        if cache and get_or_none(self.client, PVCS, cache[0], ns) is None:
            found["model_cache_missing"] = cache[0]
        hardware = spec.get("hardware") or {}
        if gpu.needs_discovery(hardware):
            found["gpus"], found["gpu_discovery"] = self.discover_gpus(hardware.get("gpuSku"))
        return found

    def observe(self, live: dict) -> rd.Observed:
        md, st = live["metadata"], live.get("status") or {}
        ns, name = md["namespace"], md["name"]
        state = st.get("state") or rd.PENDING
        if state == rd.PENDING:
            return rd.Observed(**self._pending_observations(live))
        job = output = dgd = gpus = None
        if state == rd.PROFILING:
            job = self._cached_or_live(self.jobs, JOBS, ns, dgdr_job.job_name(name))
            output = self.outputs.get(ns, dgdr_job.output_configmap_name(name))
            if output is None and rd.job_outcome(job)[0] == "succeeded":
                output = get_or_none(self.client, CONFIGMAPS, dgdr_job.output_configmap_name(name), ns)
            hardware = dgdr_job.request_spec(live).get("hardware") or {}
            if job is None and gpu.needs_discovery(hardware):  # the Job is created again: same input
                gpus, _ = self.discover_gpus(hardware.get("gpuSku"))
        dep = st.get("deployment") or {}
        if state in (rd.DEPLOYING, rd.READY) and dep.get("name"):
            dgd = self._cached_or_live(self.dgds, store.DGD, dep.get("namespace") or ns, dep["name"])
        finished = ((job or {}).get("status") or {}).get("completionTime")
        return rd.Observed(
            job=job, output=output, dgd=dgd, gpus=gpus, job_finished_seconds_ago=_seconds_since(finished)
        )

    def _profiling_identity(self, live: dict) -> None:
        """The ServiceAccount the profiling Job runs as (and, cluster-wide, its RoleBinding)."""
        ns = live["metadata"]["namespace"]
        create_child(self.client, SERVICEACCOUNTS, None, dgdr_job.profiling_service_account(ns))
        if self.profiling_cluster_role:
            binding = dgdr_job.profiling_role_binding(ns, self.profiling_cluster_role)
            create_child(self.client, ROLEBINDINGS, None, binding)

    def _create_children(self, live: dict, s: rd.Step) -> None:
        if s.create_job is not None:
            self._profiling_identity(live)
            job = harden_job(s.create_job, self.restricted, dgdr_job.override_pod_spec(live))
            job = create_child(self.client, JOBS, live, job)
            log().info("profiling job", job=job["metadata"]["name"])
        ns = live["metadata"]["namespace"]
        for cm in s.create_config_maps:
            create_child(self.client, CONFIGMAPS, live if cm["metadata"]["namespace"] == ns else None, cm)
        if s.create_dgd is not None:
            dgd = s.create_dgd
            created = create_child(
                self.client, store.DGD, live if dgd["metadata"]["namespace"] == ns else None, dgd
            )
            log().info("generated graph created", dgd=created["metadata"]["name"])

    def _write_beta_status(self, live: dict, payload: dict | None) -> None:
        """The v1beta1-only status (``profilingPhase``, ``profilingJobName``, ``deploymentInfo``) in the
        annotation v1beta1 readers see it through, written only when it changed."""
        md = live["metadata"]
        if payload is None or payload == status_payload(md):
            return
        value = encode_payload(payload) if payload else None
        patch = {"metadata": {"annotations": {STATUS_ANNOTATION: value}}}
        try:
            self.client.patch(DGDRS, md["name"], patch, md["namespace"])
        except ApiException as e:
            if e.status != 404:  # gone meanwhile: nothing to report on
                raise

    def _reconcile(self, req: Request, live: dict) -> Result:
        s = rd.step(live, self.observe(live), self.settings)
        self._create_children(live, s)
        status = apply_conditions(s.status, s.conditions, live["metadata"].get("generation"))
        written = self.status.write(live, status)
        self._write_beta_status(live, s.beta_status)
        if written is not None or not s.conditions:
            for type_, reason, message in s.events:
                self.recorder.event(live, type_, reason, message)
        return Result(requeue_after=s.requeue_after)


CONTROLLER = "DynamoGraphDeploymentRequest"


def register(w: Wiring) -> Controller:
    """Primary DGDRs, owned profiling Jobs; output ConfigMaps and generated DGDs mapped through their
    labels."""
    m = w.manager
    label = dgdr_job.LABEL_DGDR_NAME
    jobs = m.informer(JOBS, label_selector=label, resync_period=0)
    outputs = m.informer(CONFIGMAPS, label_selector=label, resync_period=0)
    dgds = m.informer(store.DGD)
    role = lookup(w.config, "rbac.dgdrProfilingClusterRoleName", None) if m.settings.cluster_wide else None
    settings = rd.Settings(
        profiler_image=lookup(w.config, "images.profiler", DEFAULT_PROFILER_IMAGE),
        copier_image=lookup(w.config, "images.operator", OPERATOR_IMAGE),
    )
    reconciler = DGDRReconciler(
        m.client,
        w.recorder,
        m.informer(DGDRS).store,
        jobs.store,
        outputs.store,
        dgds.store,
        profiling_cluster_role=role,
        settings=settings,
        gpu_discovery=bool(lookup(w.config, "gpu.discoveryEnabled", True)),
        restricted=bool(lookup(w.config, "security.workloads.restrictedSecurityContext", False)),
    )
    ctl = m.add_controller(
        CONTROLLER,
        primary=DGDRS,
        reconcile=reconciler,
        owns=[(JOBS, label)],
        workers=w.tunables.request_workers,
        resource_type=DGDRS.kind,
    )
    for inf in (outputs, dgds):
        ctl.watch(inf, request_for_labels)
    return ctl
