"""DynamoGraphDeploymentRequest controller: observes the request's profiling Job, the profiler's output
ConfigMap and the generated DGD, asks ``render.dgdr.step`` what comes next, and does it (create the
profiling ServiceAccount/RoleBinding and Job, create the DGD, write status, record events).

Jobs are owned by their request (their events re-queue it); output ConfigMaps and generated DGDs are
mapped back through their ``dgdr.nvidia.com/name`` / ``dgdr.nvidia.com/namespace`` labels (a DGD may live
in another namespace through ``deploymentOverrides.namespace``, where no owner reference can point).
"""

from __future__ import annotations

import datetime as dt

from dynamo_operator.api.config import lookup
from dynamo_operator.render import dgdr as rd
from dynamo_operator.render.security import harden_job
from dynamo_operator.runtime.client import CONFIGMAPS, ROLEBINDINGS, SERVICEACCOUNTS
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
    name, ns = labels.get(rd.LABEL_DGDR_NAME), labels.get(rd.LABEL_DGDR_NAMESPACE)
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
        copier_image: str = rd.OPERATOR_IMAGE,
        restricted: bool = False,
    ):
        self.client = client
        self.copier_image = copier_image  # images.operator: the profiling Job's output-copier
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

    def observe(self, live: dict) -> rd.Observed:
        md, st = live["metadata"], live.get("status") or {}
        ns, name = md["namespace"], md["name"]
        state = st.get("state") or rd.PENDING
        job = output = dgd = None
        missing_ref, admission = None, ()
        if state == rd.PENDING:
            admission = tuple(admission_errors(live))
            ref = ((live.get("spec") or {}).get("profilingConfig") or {}).get("configMapRef")
            if ref and ref.get("name") and get_or_none(self.client, CONFIGMAPS, ref["name"], ns) is None:
                missing_ref = ref["name"]
        if state == rd.PROFILING:
            job = self._cached_or_live(self.jobs, JOBS, ns, rd.job_name(name))
            output = self.outputs.get(ns, rd.output_configmap_name(name))
            if output is None and rd.job_outcome(job)[0] == "succeeded":
                output = get_or_none(self.client, CONFIGMAPS, rd.output_configmap_name(name), ns)
        dep = st.get("deployment") or {}
        if state in (rd.DEPLOYING, rd.READY) and dep.get("name"):
            dgd = self._cached_or_live(self.dgds, store.DGD, dep.get("namespace") or ns, dep["name"])
        finished = ((job or {}).get("status") or {}).get("completionTime")
        return rd.Observed(
            job=job,
            output=output,
            dgd=dgd,
            job_finished_seconds_ago=_seconds_since(finished),
            config_map_ref_missing=missing_ref,
            admission_errors=admission,
        )

    def _profiling_identity(self, live: dict) -> None:
        """The ServiceAccount the profiling Job runs as (and, cluster-wide, its RoleBinding)."""
        ns = live["metadata"]["namespace"]
        create_child(self.client, SERVICEACCOUNTS, None, rd.profiling_service_account(ns))
        if self.profiling_cluster_role:
            create_child(
                self.client, ROLEBINDINGS, None, rd.profiling_role_binding(ns, self.profiling_cluster_role)
            )

    def _reconcile(self, req: Request, live: dict) -> Result:
        s = rd.step(live, self.observe(live))
        if s.create_job:
            self._profiling_identity(live)
            job = harden_job(rd.profiling_job(live, self.copier_image), self.restricted)
            job = create_child(self.client, JOBS, live, job)
            log().info("profiling job", job=job["metadata"]["name"])
        if s.create_dgd is not None:
            dgd = s.create_dgd
            same_ns = dgd["metadata"]["namespace"] == live["metadata"]["namespace"]
            created = create_child(self.client, store.DGD, live if same_ns else None, dgd)
            log().info("generated graph created", dgd=created["metadata"]["name"])
        status = apply_conditions(s.status, s.conditions, live["metadata"].get("generation"))
        written = self.status.write(live, status)
        if written is not None or not s.conditions:
            for type_, reason, message in s.events:
                self.recorder.event(live, type_, reason, message)
        return Result(requeue_after=s.requeue_after)


CONTROLLER = "DynamoGraphDeploymentRequest"


def register(w: Wiring) -> Controller:
    """Primary DGDRs, owned profiling Jobs; output ConfigMaps and generated DGDs mapped through their
    labels."""
    m = w.manager
    label = rd.LABEL_DGDR_NAME
    jobs = m.informer(JOBS, label_selector=label, resync_period=0)
    outputs = m.informer(CONFIGMAPS, label_selector=label, resync_period=0)
    dgds = m.informer(store.DGD)
    role = lookup(w.config, "rbac.dgdrProfilingClusterRoleName", None) if m.settings.cluster_wide else None
    reconciler = DGDRReconciler(
        m.client,
        w.recorder,
        m.informer(DGDRS).store,
        jobs.store,
        outputs.store,
        dgds.store,
        profiling_cluster_role=role,
        copier_image=lookup(w.config, "images.operator", rd.OPERATOR_IMAGE),
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
