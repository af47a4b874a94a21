"""DynamoModel, the pure part: which worker pods serve a base model, and the status their probes give.

The controller (``controllers/dynamomodel.py``) does the I/O: it lists the pods, calls each endpoint's
system port and writes the status this module computes.  Keeping the decisions here means a unit test can
pin every status field and condition reason without a cluster or an HTTP server.

Endpoints are the worker pods labelled ``nvidia.com/dynamo-base-model-hash=<hash of spec.baseModelName>``
(the label ``render/pod.py`` puts on every component with a ``modelRef``; upstream reaches the same pods
through the EndpointSlices of the model's headless Service). A pod counts once it has an IP and is not
terminating; its address is ``http://<podIP>:<system port>`` (the container port named ``system``, 9090 by
default).

LoRA models are loaded on every endpoint (``POST /v1/loras``); base models are only discovered (their
endpoints stay ``ready: false``: nothing is probed).  A prefill endpoint that answers that it has no LoRA
management API (404/405/501: a worker from before the API existed, met during a rolling upgrade) is
*fallback-covered* when another prefill of the same runtime topology (``nvidia.com/dynamo-namespace``)
loaded the adapter and the pod itself is Ready; covered endpoints are counted apart from ready ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import names
from .conditions import Cond
from .ports import SYSTEM_PORT, SYSTEM_PORT_NAME

LORA = "lora"
REPROBE_SECONDS = 30.0  # upstream's requeue while an endpoint failed or is not serving

SERVICES_FOUND = "ServicesFound"
ENDPOINTS_READY = "EndpointsReady"
REASON_SERVICES_FOUND = "ServicesFound"
REASON_NO_SERVICES = "NoServicesFound"
REASON_NO_ENDPOINTS = "NoEndpoints"
REASON_DISCOVERED = "EndpointsDiscovered"
REASON_ALL_READY = "AllEndpointsReady"
REASON_NOT_READY = "NotReady"
REASON_PROBING = "Probing"
REASON_INVALID_SPEC = "InvalidSpec"

# HTTP statuses meaning "this worker has no LoRA management API" (not "the load failed").
MANAGEMENT_UNAVAILABLE = frozenset({404, 405, 501})


@dataclass(frozen=True)
class Candidate:
    """One worker pod that may serve the model."""

    address: str
    pod_name: str
    kubernetes_ready: bool
    allow_unavailable: bool  # a prefill worker: may lack the LoRA API during a rolling upgrade
    fallback_group: str  # its runtime topology (Dynamo namespace); "" when unknown
    component: str  # the DCD (``nvidia.com/selector``) it belongs to


@dataclass(frozen=True)
class ProbeOutcome:
    """What calling one endpoint gave: loaded, or the error (and its HTTP status when it answered)."""

    loaded: bool
    error: str = ""
    http_status: int | None = None
    attempts: int = 1

    @property
    def management_unavailable(self) -> bool:
        return not self.loaded and self.http_status in MANAGEMENT_UNAVAILABLE


def is_lora(spec: dict) -> bool:
    """A model whose spec.modelType is lora has the adapter at spec.source loaded on every endpoint of
    spec.baseModelName, each probed; base and adapter models are only discovered."""
    return (spec.get("modelType") or "base") == LORA


def source_uri(spec: dict) -> str:
    return str((spec.get("source") or {}).get("uri") or "")


def pod_selector(base_model_name: str) -> str:
    return f"{names.LABEL_BASE_MODEL_HASH}={names.model_hash(base_model_name)}"


def _system_port(pod: dict) -> int:
    containers = (pod.get("spec") or {}).get("containers") or []
    ordered = sorted(containers, key=lambda c: c.get("name") != names.MAIN_CONTAINER)
    for c in ordered:
        for p in c.get("ports") or []:
            if p.get("name") == SYSTEM_PORT_NAME and p.get("containerPort"):
                return int(p["containerPort"])
    return SYSTEM_PORT


def _pod_ready(pod: dict) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _host(ip: str) -> str:
    return f"[{ip}]" if ":" in ip else ip


def candidates(pods: list[dict], base_model_name: str) -> list[Candidate]:
    """The endpoints of a base model among ``pods`` (any pods; those of other models are skipped)."""
    want = names.model_hash(base_model_name)
    out = []
    for pod in pods:
        md, st = pod.get("metadata") or {}, pod.get("status") or {}
        labels = md.get("labels") or {}
        if labels.get(names.LABEL_BASE_MODEL_HASH) != want or md.get("deletionTimestamp"):
            continue
        ip = st.get("podIP")
        if not ip or st.get("phase") in ("Succeeded", "Failed"):
            continue
        out.append(
            Candidate(
                address=f"http://{_host(ip)}:{_system_port(pod)}",
                pod_name=md.get("name") or "",
                kubernetes_ready=_pod_ready(pod),
                allow_unavailable=labels.get(names.LABEL_COMPONENT_TYPE) == "prefill",
                fallback_group=labels.get(names.LABEL_DYNAMO_NAMESPACE) or "",
                component=labels.get(names.LABEL_SELECTOR) or "",
            )
        )
    return sorted(out, key=lambda c: (c.pod_name, c.address))


def load_request(spec: dict) -> dict:
    """The body of ``POST <endpoint>/v1/loras``."""
    return {"lora_name": spec["modelName"], "source": {"uri": source_uri(spec)}}


def endpoints(cands: list[Candidate], outcomes: dict[str, ProbeOutcome] | None) -> list[dict]:
    """``status.endpoints``: per endpoint ``ready`` (its load succeeded) and ``loraFallbackCovered``."""
    outcomes = outcomes or {}
    capable_groups = {
        c.fallback_group
        for c in cands
        if c.allow_unavailable and c.fallback_group and outcomes.get(c.address, ProbeOutcome(False)).loaded
    }
    out = []
    for c in cands:
        o = outcomes.get(c.address)
        ep = {"address": c.address, "podName": c.pod_name, "ready": bool(o and o.loaded)}
        if o is not None and c.allow_unavailable and o.management_unavailable:
            ep["loraFallbackCovered"] = bool(
                c.fallback_group and c.fallback_group in capable_groups and c.kubernetes_ready
            )
        out.append(ep)
    return out


@dataclass
class ModelStatus:
    """The status fields to write, the conditions to set, and when to probe again (None: on events only)."""

    fields: dict
    conditions: list[Cond]
    requeue_after: float | None = None


def model_status(
    spec: dict,
    cands: list[Candidate],
    outcomes: dict[str, ProbeOutcome] | None,
    errors: list[str] | None = None,
) -> ModelStatus:
    """The status of a DynamoModel from its endpoints and their probe outcomes.

    ``outcomes`` is None while a LoRA model's probes are still running (reported as ``Probing``);
    ``errors`` are the admission rules' objections to the spec (nothing is probed then)."""
    if errors:
        return ModelStatus({}, [Cond(ENDPOINTS_READY, False, REASON_INVALID_SPEC, "; ".join(errors))])
    if not cands:
        base = spec["baseModelName"]
        msg = f"no running worker pod serves base model {base!r} (pods labelled {pod_selector(base)})"
        zero = {"endpoints": [], "totalEndpoints": 0, "readyEndpoints": 0, "loraFallbackCoveredEndpoints": 0}
        return ModelStatus(
            zero,
            [
                Cond(SERVICES_FOUND, False, REASON_NO_SERVICES, msg),
                Cond(ENDPOINTS_READY, False, REASON_NO_ENDPOINTS, "No endpoints found"),
            ],
        )
    components = sorted({c.component for c in cands if c.component})
    found = (
        f"Found {len(components)} service(s): {', '.join(components)}" if components else "Found worker pods"
    )
    conds = [Cond(SERVICES_FOUND, True, REASON_SERVICES_FOUND, found)]
    eps = endpoints(cands, outcomes)
    ready = sum(1 for e in eps if e["ready"])
    covered = sum(1 for e in eps if e.get("loraFallbackCovered"))
    fields = {
        "endpoints": eps,
        "totalEndpoints": len(eps),
        "readyEndpoints": ready,
        "loraFallbackCoveredEndpoints": covered,
    }
    if not is_lora(spec):
        msg = f"{len(eps)} endpoint(s) discovered (base models are not probed)"
        return ModelStatus(fields, [*conds, Cond(ENDPOINTS_READY, True, REASON_DISCOVERED, msg)])
    if outcomes is None:
        msg = f"loading the adapter on {len(eps)} endpoint(s)"
        return ModelStatus(fields, [*conds, Cond(ENDPOINTS_READY, False, REASON_PROBING, msg)])
    bad = [e for e in eps if not (e["ready"] or e.get("loraFallbackCovered"))]
    if not bad:
        extra = f", {covered} covered by a capable prefill" if covered else ""
        msg = f"{ready}/{len(eps)} endpoint(s) loaded the adapter{extra}"
        return ModelStatus(fields, [*conds, Cond(ENDPOINTS_READY, True, REASON_ALL_READY, msg)])
    detail = "; ".join(f"{e['podName']} ({e['address']}): {_why(outcomes.get(e['address']))}" for e in bad)
    msg = f"{ready}/{len(eps)} endpoint(s) ready; not ready: {detail}"
    return ModelStatus(fields, [*conds, Cond(ENDPOINTS_READY, False, REASON_NOT_READY, msg)], REPROBE_SECONDS)


def _why(o: ProbeOutcome | None) -> str:
    if o is None:
        return "not probed yet"
    if o.management_unavailable:
        return f"no LoRA management API (HTTP {o.http_status}) and no capable prefill covers it"
    return o.error or "not serving the adapter"
