"""DynamoModel controller: finds the worker pods of the model's base model, loads a LoRA adapter on each
over HTTP (their system port), and reports per-endpoint state, counters and the ``ServicesFound`` /
``EndpointsReady`` conditions (``render/model.py`` decides all of it).

The HTTP calls never run on the work queue: a reconcile hands them to ``Prober`` (a small thread pool)
and returns; when the calls finish, the pool re-queues the model and the next reconcile writes what they
found.  A work-queue worker therefore never waits on a slow or dead endpoint, and one model's probes do
not delay another model's reconcile.  Each call has a timeout, and connection errors and 5xx answers are
retried a bounded number of times with a short backoff; an endpoint that failed is probed again after
``REPROBE_SECONDS``.  LoRA models carry the ``nvidia.com/finalizer`` finalizer: deleting one unloads the
adapter (``DELETE /v1/loras/<name>``, best effort) before the object goes.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from dynamo_operator.render import model as rm
from dynamo_operator.runtime.client import PODS
from dynamo_operator.runtime.controller import Controller, Request, Result
from dynamo_operator.runtime.events import EventRecorder
from dynamo_operator.runtime.informer import Indexer
from dynamo_operator.runtime.log import get_logger
from dynamo_operator.tunables import ModelProbeTunables

from .common import StatusWriter, log, short_error
from .lifecycle import (
    DYNAMO_MODELS,
    FINALIZER,
    admission_errors,
    announce,
    apply_conditions,
    guarded,
    set_finalizer,
    typed,
)
from .wiring import Wiring

LOAD, UNLOAD = "load", "unload"


REPLY_READ_LIMIT = 4096  # an error reply is read only this far: a worker cannot make us buffer megabytes
REPLY_EXCERPT_CHARS = 200


def reply_excerpt(raw: bytes) -> str:
    """The part of a worker's error reply that goes into the model's status (readable by all who see it).

    The reply is the worker's text, not ours: control characters (terminal escapes, newlines that would forge
    log or `kubectl describe` lines) become spaces, runs of whitespace collapse, and the length is capped."""
    text = raw.decode(errors="replace")
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = " ".join(text.split())
    if len(text) > REPLY_EXCERPT_CHARS:
        text = text[: REPLY_EXCERPT_CHARS - 1] + "…"
    return text


def call_endpoint(
    method: str, url: str, body: dict | None, timeout: float, attempts: int, backoff: float
) -> rm.ProbeOutcome:
    """One endpoint call with retries on connection errors and 5xx; a 4xx answer is final."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data is not None else {}
    last = rm.ProbeOutcome(False, "not called")
    for attempt in range(1, attempts + 1):
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                resp.read()
                return rm.ProbeOutcome(True, "", resp.status, attempt)
        except urllib.error.HTTPError as e:
            text = reply_excerpt(e.read(REPLY_READ_LIMIT))
            last = rm.ProbeOutcome(False, f"HTTP {e.code}: {text}".strip(": "), e.code, attempt)
            if e.code < 500 or e.code in rm.MANAGEMENT_UNAVAILABLE:
                return last
        except (OSError, ValueError) as e:  # refused, timed out, reset, bad URL
            cause = getattr(e, "reason", None)
            err = cause if isinstance(cause, BaseException) else e
            last = rm.ProbeOutcome(False, f"{type(err).__name__}: {err}", None, attempt)
        if attempt < attempts:
            time.sleep(backoff * (2 ** (attempt - 1)))
    return last


class Prober:
    """Runs endpoint calls off the work queue and remembers the latest finished round per model.

    A round is identified by a key (model uid, generation, operation, adapter, the candidate endpoints);
    ``result`` returns a finished round only for the exact key asked, so a changed spec or endpoint set
    starts a new round instead of reusing stale answers."""

    def __init__(
        self,
        tunables: ModelProbeTunables | None = None,
        on_done: Callable[[Request], None] = lambda req: None,
    ):
        t = tunables or ModelProbeTunables()
        self.on_done = on_done  # the controller's enqueue (set once the controller exists)
        self.timeout, self.attempts, self.backoff = t.request_timeout, t.attempts, t.backoff
        self.round_concurrency = t.round_concurrency
        self.pool = ThreadPoolExecutor(max_workers=t.threads, thread_name_prefix="dynamomodel-probe")
        self._lock = threading.Lock()
        self._done: dict[Request, tuple[tuple, dict[str, rm.ProbeOutcome], float]] = {}
        self._running: dict[Request, tuple] = {}
        self.rounds = 0
        self.log = get_logger("dynamomodel-prober")

    def latest(self, req: Request, key: tuple) -> tuple[dict[str, rm.ProbeOutcome], float] | None:
        """(outcomes, age in seconds) of the last finished round for exactly ``key``, else None."""
        with self._lock:
            entry = self._done.get(req)
        if entry is None or entry[0] != key:
            return None
        return entry[1], time.monotonic() - entry[2]

    def running(self, req: Request, key: tuple) -> bool:
        with self._lock:
            return self._running.get(req) == key

    def submit(self, req: Request, key: tuple, calls: list[tuple[str, str, str, dict | None]]) -> None:
        """Start a round of ``calls`` ((address, method, url, body) each) unless this key is running."""
        with self._lock:
            if self._running.get(req) == key:
                return
            self._running[req] = key
        self.pool.submit(self._round, req, key, calls)

    def forget(self, req: Request) -> None:
        with self._lock:
            self._done.pop(req, None)

    def _round(self, req: Request, key: tuple, calls: list[tuple[str, str, str, dict | None]]) -> None:
        outcomes: dict[str, rm.ProbeOutcome] = {}
        try:
            # the endpoints of one round in parallel (bounded, as upstream's 10), so one dead endpoint
            # costs its own timeouts, not everyone's
            with ThreadPoolExecutor(max_workers=min(self.round_concurrency, len(calls) or 1)) as ex:
                futures = {
                    address: ex.submit(call_endpoint, m, url, body, self.timeout, self.attempts, self.backoff)
                    for address, m, url, body in calls
                }
                for address, fut in futures.items():
                    outcomes[address] = fut.result()
        except Exception as e:  # never lose the round: report it as failed
            self.log.exception("probe round failed", model=str(req))
            for address, *_ in calls:
                outcomes.setdefault(address, rm.ProbeOutcome(False, short_error(e)))
        with self._lock:
            self._done[req] = (key, outcomes, time.monotonic())
            if self._running.get(req) == key:
                del self._running[req]
            self.rounds += 1
        self.on_done(req)

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def _lora_url(address: str, *segments: str) -> str:
    return (
        address.rstrip("/") + "/v1/loras" + "".join("/" + urllib.parse.quote(s, safe="/") for s in segments)
    )


def load_calls(spec: dict, cands: list[rm.Candidate]) -> list[tuple[str, str, str, dict | None]]:
    body = rm.load_request(spec)
    return [(c.address, "POST", _lora_url(c.address), body) for c in cands]


def unload_calls(spec: dict, cands: list[rm.Candidate]) -> list[tuple[str, str, str, dict | None]]:
    return [(c.address, "DELETE", _lora_url(c.address, spec["modelName"]), None) for c in cands]


class DynamoModelReconciler:
    def __init__(self, client, recorder: EventRecorder, models: Indexer, pods: Indexer, prober: Prober):
        self.client = client
        self.recorder = recorder
        self.models = models
        self.pods = pods
        self.prober = prober
        self.status = StatusWriter(client, DYNAMO_MODELS, convert=False)

    def models_for_pod(self, pod: dict) -> list[Request]:
        """Requests of the DynamoModels of the pod's namespace whose base model the pod serves."""
        md = pod.get("metadata") or {}
        ns, h = md.get("namespace") or "", (md.get("labels") or {}).get(rm.names.LABEL_BASE_MODEL_HASH)
        if not h:
            return []
        return [
            Request(ns, m["metadata"]["name"])
            for m in self.models.list(ns)
            if rm.names.model_hash((m.get("spec") or {}).get("baseModelName") or "") == h
        ]

    def __call__(self, req: Request) -> Result:
        live = typed(self.models.get(req.namespace, req.name), DYNAMO_MODELS)
        if live is None:
            self.prober.forget(req)
            return Result()
        return guarded(self.recorder, live, lambda: self._reconcile(req, live))

    def _reconcile(self, req: Request, live: dict) -> Result:
        md, spec = live["metadata"], live.get("spec") or {}
        cands = rm.candidates(self.pods.list(req.namespace), spec.get("baseModelName") or "")
        errors = admission_errors(live)
        lora = rm.is_lora(spec) and not errors
        if md.get("deletionTimestamp"):
            return self._finalize(req, live, spec, cands, lora)
        if lora and FINALIZER not in (md.get("finalizers") or []):
            live = set_finalizer(self.client, DYNAMO_MODELS, live, True)
        outcomes = None
        if lora and cands:
            key = (md.get("uid"), md.get("generation"), LOAD, rm.source_uri(spec), tuple(cands))
            latest = self.prober.latest(req, key)
            outcomes = latest[0] if latest else None
            fresh = latest is not None and (
                all(o.loaded for o in latest[0].values()) or latest[1] < rm.REPROBE_SECONDS
            )
            if not fresh and not self.prober.running(req, key):
                # the last round's answers stay in status while the new round runs
                log().info("loading the adapter", endpoints=len(cands), model=spec.get("modelName"))
                self.prober.submit(req, key, load_calls(spec, cands))
        computed = rm.model_status(spec, cands, outcomes, errors)
        old = live.get("status") or {}
        new = apply_conditions({**old, **computed.fields}, computed.conditions, md.get("generation"))
        if self.status.write(live, new) is not None:
            announce(
                self.recorder,
                live,
                old,
                new,
                (rm.SERVICES_FOUND, rm.ENDPOINTS_READY),
                quiet=(rm.REASON_PROBING,),
            )
        return Result(requeue_after=computed.requeue_after)

    def _finalize(
        self, req: Request, live: dict, spec: dict, cands: list[rm.Candidate], lora: bool
    ) -> Result:
        md = live["metadata"]
        if FINALIZER not in (md.get("finalizers") or []):
            return Result()
        if lora and cands:
            key = (md.get("uid"), UNLOAD, spec.get("modelName"), tuple(cands))
            latest = self.prober.latest(req, key)
            if latest is None:
                if not self.prober.running(req, key):
                    self.prober.submit(req, key, unload_calls(spec, cands))
                return Result()  # the finished round re-queues the model
            outcomes = latest[0]
            failed = [a for a, o in outcomes.items() if not (o.loaded or o.management_unavailable)]
            if failed:  # best effort: report and let the object go
                self.recorder.warning(
                    live,
                    "UnloadFailed",
                    f"could not unload the adapter from {len(failed)} endpoint(s): {', '.join(failed)}",
                )
            else:
                self.recorder.normal(live, "Unloaded", f"adapter unloaded from {len(outcomes)} endpoint(s)")
        set_finalizer(self.client, DYNAMO_MODELS, live, False)
        self.prober.forget(req)
        return Result()


CONTROLLER = "DynamoModel"


def register(w: Wiring) -> Controller:
    """Primary DynamoModels; worker pods labelled with a base-model hash re-queue the models of their base
    model; finished probe rounds re-queue their model."""
    m = w.manager
    pods = m.informer(PODS, label_selector=rm.names.LABEL_BASE_MODEL_HASH, resync_period=0)
    models = m.informer(DYNAMO_MODELS).store
    prober = Prober(w.tunables.model_probe)
    reconciler = DynamoModelReconciler(m.client, w.recorder, models, pods.store, prober)
    ctl = m.add_controller(
        CONTROLLER,
        primary=DYNAMO_MODELS,
        reconcile=reconciler,
        workers=w.tunables.model_workers,
        resource_type=DYNAMO_MODELS.kind,
    )
    prober.on_done = ctl.enqueue
    ctl.watch(pods, reconciler.models_for_pod)
    m.add_runnable(lambda stop: None, needs_leader=False, stop_fn=prober.shutdown, name="dynamomodel-prober")
    return ctl
