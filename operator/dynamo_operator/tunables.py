"""Every tunable of the operator in one typed object, each with its default and the reason for it.

``Tunables`` is built once (``dynamo_operator.settings``) and passed down: the runtime gets ``runtime``, the
controllers ``controllers``, the webhooks ``webhooks``; no module keeps its own constant for any of these.
The OperatorConfiguration does not carry them (its schema is upstream's): they are the implementation's
knobs, changed in code or by a test, and listed with their reasons in docs/settings.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dynamo_operator.runtime.settings import RuntimeTunables

__all__ = ["ControllerTunables", "ModelProbeTunables", "RuntimeTunables", "Tunables", "WebhookTunables"]


@dataclass(frozen=True)
class ModelProbeTunables:
    """The DynamoModel controller's calls to its workers' LoRA endpoints."""

    request_timeout: float = 15.0  # seconds per HTTP call (upstream's value)
    attempts: int = 3  # a worker that is restarting answers a later attempt
    backoff: float = 0.5  # seconds before the 2nd attempt, doubled each time
    threads: int = 4  # models probed at once
    round_concurrency: int = 10  # calls at once within one model's round


@dataclass(frozen=True)
class ControllerTunables:
    """Worker counts, event coalescing and status pacing of the controllers."""

    # Workers of the graph (DGD) controller, and of the scaling-adapter controller.
    graph_workers: int = 4
    # The component (DCD) controller gets this many times the graph controller's workers: a graph has one
    # DCD per component, and each DCD's first pass writes its workload and Services. In a burst of 300 new
    # graphs with four workers each, the DCD controller's were busy the whole time while the graph
    # controller's were idle more than half of it, and every graph waited for its Deployments in the DCD
    # queue.
    component_workers_factor: int = 2
    model_workers: int = 2  # DynamoModel: a pass is cheap, probes run on their own threads
    request_workers: int = 2  # DynamoGraphDeploymentRequest: a handful of objects, each a long profile
    checkpoint_workers: int = 1  # DynamoCheckpoint: a Job per checkpoint, rarely more than one at a time
    # A checkpoint Job whose pod cannot be created, scheduled or started, or whose target serves without
    # exiting (nothing here captures a running process), is reported after this long
    # (render/checkpoint_stall.py): long enough for a scheduler retry or a slow start, short enough that a
    # graph held by WaitForCheckpoint says why within a minute instead of waiting out the Job's hour.
    checkpoint_stall_seconds: float = 60.0
    # A graph's status sums its components' Deployments and DCDs, each of which changes status several
    # times while its pods start; reconciling the graph once per window instead of once per child event
    # coalesces those into fewer status writes (the benchmark's burst wrote each graph's status nine times).
    graph_coalesce_seconds: float = 1.0
    # A status that only reports progress of an object still starting is written at most this often per
    # object; readiness, failures and new generations at once. In a burst of new graphs every component
    # passes through four or five "not ready yet" states, and each graph through as many; those writes
    # were a third of the operator's and slowed every graph's readiness.
    status_progress_seconds: float = 30.0
    # ... and never sooner than this after it was first held back: components of one graph become ready
    # seconds apart, and progress seen a moment before the last of them would be overwritten at once.
    status_progress_settle_seconds: float = 3.0
    # ... and in all, about this many objects' progress per interval: with more objects waiting at once
    # (a burst of new graphs) each one's interval stretches in proportion, so a burst of 500 graphs costs
    # no more progress writes than one of 20 (each graph's first status and its readiness still go out
    # at once). In a 500-graph burst 30 s per object meant hundreds of writes the floor does not make.
    status_progress_share: int = 20
    # How often the resource gauges (graphs by state, pods by component type) are recounted from the caches.
    gauge_interval: float = 10.0
    model_probe: ModelProbeTunables = field(default_factory=ModelProbeTunables)

    @property
    def component_workers(self) -> int:
        return self.component_workers_factor * self.graph_workers


@dataclass(frozen=True)
class WebhookTunables:
    """The admission and conversion server."""

    # A review's thread that wakes up while a reconcile or an informer holds the GIL waits until that
    # thread yields it: by default up to 5 ms, as long again as a whole review takes. The apiserver waits on
    # every review (and on every conversion), so a process that serves webhooks hands the GIL over every
    # 1 ms. (An experiment at 1000 cached graphs with 0.5 ms: the slowest of 4000 direct reviews 20-34 ->
    # 8-11 ms.)
    gil_switch_interval: float = 0.001
    # How long an API-discovery answer (is Grove served?) is reused before it is asked again in the
    # background; a review never waits for discovery after the first.
    discovery_ttl: float = 60.0


@dataclass(frozen=True)
class Tunables:
    runtime: RuntimeTunables = field(default_factory=RuntimeTunables)
    controllers: ControllerTunables = field(default_factory=ControllerTunables)
    webhooks: WebhookTunables = field(default_factory=WebhookTunables)
