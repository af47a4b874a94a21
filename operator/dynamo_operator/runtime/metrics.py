"""Operator metrics (prometheus-client) under upstream Dynamo's names and labels, plus work-queue metrics.

Every ``Manager`` owns its own ``CollectorRegistry`` (several managers run in one test process); nothing is
registered in prometheus-client's global registry.  Names and labels follow upstream
``internal/observability/metrics.go``:

=============================================== ========= =============================================
metric                                          type      labels
=============================================== ========= =============================================
dynamo_operator_reconcile_duration_seconds      histogram resource_type, namespace, result
dynamo_operator_reconcile_total                 counter   resource_type, namespace, result
dynamo_operator_reconcile_errors_total          counter   resource_type, namespace, error_type
dynamo_operator_resources_total                 gauge     resource_type, namespace, status
dynamo_operator_managed_pods_total              gauge     component_type, namespace
dynamo_operator_webhook_duration_seconds        histogram resource_type, operation
dynamo_operator_webhook_requests_total          counter   resource_type, operation, result
dynamo_operator_webhook_denials_total           counter   resource_type, operation, reason
workqueue_depth / workqueue_adds_total / workqueue_queue_duration_seconds / workqueue_work_duration_seconds /
workqueue_retries_total / workqueue_unfinished_work_seconds / workqueue_longest_running_processor_seconds
                                                          name (the controller), as in controller-runtime
controller_runtime_reconcile_total / controller_runtime_reconcile_errors_total /
controller_runtime_active_workers
                                                          controller (, result)
=============================================== ========= =============================================

``result`` is ``success``, ``error`` or ``requeue``; ``error_type`` / ``reason`` come from ``classify_error``.
"""

from __future__ import annotations

import socket
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

RECONCILE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
WEBHOOK_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
QUEUE_BUCKETS = tuple(1e-8 * 10**i for i in range(10))  # 10ns .. 1s x 10, like client-go

ERROR_TYPES = (
    "not_found",
    "already_exists",
    "conflict",
    "validation",
    "bad_request",
    "unauthorized",
    "forbidden",
    "timeout",
    "server_timeout",
    "unavailable",
    "rate_limited",
    "internal",
)


def classify_error(exc: BaseException | None) -> str:
    """Map an exception to upstream's error_type categories (apimachinery ``errors.Is*`` equivalents)."""
    status = getattr(exc, "status", None)
    reason = ""
    body = getattr(exc, "body", None)
    if isinstance(body, str) and '"reason"' in body:
        import json

        try:
            reason = (json.loads(body) or {}).get("reason", "")
        except ValueError:
            reason = ""
    if isinstance(status, int) and status:
        if status == 404:
            return "not_found"
        if status == 409:
            return "already_exists" if reason == "AlreadyExists" else "conflict"
        if status == 422:
            return "validation"
        if status == 400:
            return "bad_request"
        if status == 401:
            return "unauthorized"
        if status == 403:
            return "forbidden"
        if status == 504:
            return "timeout" if reason == "Timeout" else "server_timeout"
        if status == 503:
            return "unavailable"
        if status == 429:
            return "rate_limited"
        if status == 500 and reason == "ServerTimeout":
            return "server_timeout"
        return "internal"
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return "timeout"
    if isinstance(exc, (ConnectionError,)):
        return "unavailable"
    if isinstance(exc, ValueError):
        return "validation"
    return "internal"


class WorkQueueMetrics:
    """Per-queue view implementing ``workqueue.QueueMetricsSink``."""

    def __init__(self, m: OperatorMetrics, name: str):
        self._depth = m.workqueue_depth.labels(name=name)
        self._adds = m.workqueue_adds.labels(name=name)
        self._latency = m.workqueue_queue_duration.labels(name=name)
        self._work = m.workqueue_work_duration.labels(name=name)
        self._retries = m.workqueue_retries.labels(name=name)
        self._unfinished = m.workqueue_unfinished_work.labels(name=name)
        self._longest = m.workqueue_longest_running.labels(name=name)

    def add(self) -> None:
        self._adds.inc()

    def depth(self, n: int) -> None:
        self._depth.set(n)

    def queue_latency(self, seconds: float) -> None:
        self._latency.observe(seconds)

    def work_duration(self, seconds: float) -> None:
        self._work.observe(seconds)

    def retry(self) -> None:
        self._retries.inc()

    def set_in_flight(self, oldest_seconds: float, total_seconds: float) -> None:
        self._longest.set(oldest_seconds)
        self._unfinished.set(total_seconds)


# (attribute, type, name, help, labels, extra keyword arguments): one row per metric, in upstream's names.
_OPERATOR_METRICS: tuple[tuple[str, type, str, str, tuple[str, ...], dict[str, Any]], ...] = (
    (
        "reconcile_duration",
        Histogram,
        "dynamo_operator_reconcile_duration_seconds",
        "Duration of reconcile operations in seconds",
        ("resource_type", "namespace", "result"),
        {"buckets": RECONCILE_BUCKETS},
    ),
    (
        "reconcile_total",
        Counter,
        "dynamo_operator_reconcile_total",
        "Total number of reconcile operations",
        ("resource_type", "namespace", "result"),
        {},
    ),
    (
        "reconcile_errors",
        Counter,
        "dynamo_operator_reconcile_errors_total",
        "Total number of reconcile errors by error type",
        ("resource_type", "namespace", "error_type"),
        {},
    ),
    (
        "resources_total",
        Gauge,
        "dynamo_operator_resources_total",
        "Number of resources managed by the operator by state",
        ("resource_type", "namespace", "status"),
        {},
    ),
    (
        "managed_pods",
        Gauge,
        "dynamo_operator_managed_pods_total",
        "Number of pods managed by the operator by component type",
        ("component_type", "namespace"),
        {},
    ),
    (
        "webhook_duration",
        Histogram,
        "dynamo_operator_webhook_duration_seconds",
        "Duration of webhook admission requests in seconds",
        ("resource_type", "operation"),
        {"buckets": WEBHOOK_BUCKETS},
    ),
    (
        "webhook_requests",
        Counter,
        "dynamo_operator_webhook_requests_total",
        "Total number of webhook admission requests",
        ("resource_type", "operation", "result"),
        {},
    ),
    (
        "webhook_denials",
        Counter,
        "dynamo_operator_webhook_denials_total",
        "Total number of webhook admission denials by reason",
        ("resource_type", "operation", "reason"),
        {},
    ),
)
# controller-runtime / client-go work-queue and controller metrics
_RUNTIME_METRICS: tuple[tuple[str, type, str, str, tuple[str, ...], dict[str, Any]], ...] = (
    ("workqueue_depth", Gauge, "workqueue_depth", "Current depth of workqueue", ("name",), {}),
    (
        "workqueue_adds",
        Counter,
        "workqueue_adds_total",
        "Total number of adds handled by workqueue",
        ("name",),
        {},
    ),
    (
        "workqueue_queue_duration",
        Histogram,
        "workqueue_queue_duration_seconds",
        "How long in seconds an item stays in workqueue before being requested",
        ("name",),
        {"buckets": QUEUE_BUCKETS},
    ),
    (
        "workqueue_work_duration",
        Histogram,
        "workqueue_work_duration_seconds",
        "How long in seconds processing an item from workqueue takes",
        ("name",),
        {"buckets": QUEUE_BUCKETS},
    ),
    (
        "workqueue_retries",
        Counter,
        "workqueue_retries_total",
        "Total number of retries handled by workqueue",
        ("name",),
        {},
    ),
    (
        "workqueue_unfinished_work",
        Gauge,
        "workqueue_unfinished_work_seconds",
        "Seconds of work in progress not yet observed by work_duration",
        ("name",),
        {},
    ),
    (
        "workqueue_longest_running",
        Gauge,
        "workqueue_longest_running_processor_seconds",
        "Seconds the longest running processor for workqueue has been running",
        ("name",),
        {},
    ),
    (
        "controller_reconcile_total",
        Counter,
        "controller_runtime_reconcile_total",
        "Total number of reconciliations per controller",
        ("controller", "result"),
        {},
    ),
    (
        "controller_reconcile_errors",
        Counter,
        "controller_runtime_reconcile_errors_total",
        "Total number of reconciliation errors per controller",
        ("controller",),
        {},
    ),
    (
        "controller_active_workers",
        Gauge,
        "controller_runtime_active_workers",
        "Number of currently used workers per controller",
        ("controller",),
        {},
    ),
    (
        "leader",
        Gauge,
        "leader_election_master_status",
        "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 master",
        ("name",),
        {},
    ),
)


class OperatorMetrics:
    """Every metric of the operator in one ``CollectorRegistry``, as attributes named in the tables above
    (``reconcile_total``, ``workqueue_depth``, ...)."""

    reconcile_duration: Histogram
    reconcile_total: Counter
    reconcile_errors: Counter
    resources_total: Gauge
    managed_pods: Gauge
    webhook_duration: Histogram
    webhook_requests: Counter
    webhook_denials: Counter
    workqueue_depth: Gauge
    workqueue_adds: Counter
    workqueue_queue_duration: Histogram
    workqueue_work_duration: Histogram
    workqueue_retries: Counter
    workqueue_unfinished_work: Gauge
    workqueue_longest_running: Gauge
    controller_reconcile_total: Counter
    controller_reconcile_errors: Counter
    controller_active_workers: Gauge
    leader: Gauge

    def __init__(self, registry: CollectorRegistry | None = None):
        self.registry = registry or CollectorRegistry(auto_describe=True)
        for attr, kind, name, doc, labels, extra in (*_OPERATOR_METRICS, *_RUNTIME_METRICS):
            setattr(self, attr, kind(name, doc, list(labels), registry=self.registry, **extra))
        # each review's children, looked up once: ``labels()`` takes a lock and builds a key every call
        self._webhook_children: dict[tuple[str, str, bool], tuple[Any, Any]] = {}

    def queue(self, name: str) -> WorkQueueMetrics:
        return WorkQueueMetrics(self, name)

    # -- helpers used by controllers and webhooks -----------------------------------------------------------
    def observe_reconcile(
        self,
        resource_type: str,
        namespace: str,
        result: str,
        seconds: float,
        error: BaseException | None = None,
    ) -> None:
        self.reconcile_duration.labels(resource_type, namespace, result).observe(seconds)
        self.reconcile_total.labels(resource_type, namespace, result).inc()
        if error is not None:
            self.reconcile_errors.labels(resource_type, namespace, classify_error(error)).inc()

    def observe_webhook(
        self,
        resource_type: str,
        operation: str,
        allowed: bool,
        seconds: float,
        denial_reason: str | None = None,
    ) -> None:
        key = (resource_type, operation, allowed)
        children = self._webhook_children.get(key)
        if children is None:  # bounded: the webhook's kinds x operations x allowed
            outcome = "allowed" if allowed else "denied"
            children = self._webhook_children[key] = (
                self.webhook_duration.labels(resource_type, operation),
                self.webhook_requests.labels(resource_type, operation, outcome),
            )
        children[0].observe(seconds)
        children[1].inc()
        if not allowed:
            self.webhook_denials.labels(resource_type, operation, denial_reason or "validation").inc()

    def set_resource_counts(self, resource_type: str, counts: dict[tuple[str, str], int]) -> None:
        """Replace the gauge values for one resource type: counts[(namespace, status)] = n."""
        new = {(resource_type, ns, st): n for (ns, st), n in counts.items()}
        self._replace(self.resources_total, new, lambda labels: labels[0] == resource_type)

    def set_managed_pods(self, counts: dict[tuple[str, str], int]) -> None:
        """counts[(component_type, namespace)] = n, replacing all previous values."""
        self._replace(self.managed_pods, dict(counts), lambda labels: True)

    @staticmethod
    def _replace(gauge: Gauge, values: dict[tuple, Any], owned: Any) -> None:
        existing = list(gauge._metrics.keys())  # prometheus-client has no public listing of children
        for labels in existing:
            if labels not in values and owned(labels):
                gauge.remove(*labels)
        for labels, n in values.items():
            gauge.labels(*labels).set(n)
