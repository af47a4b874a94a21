"""One HTTPS server for admission (validate, mutate) and CRD conversion (``/convert``), default port 9443.

Paths are the chart's (``charts/platform/components/operator/templates/webhook-configuration.yaml``):

* ``/validate-nvidia-com-<version>-<lowercase kind>`` for every kind and served version of
  DynamoGraphDeployment, DynamoComponentDeployment, DynamoGraphDeploymentRequest,
  DynamoGraphDeploymentScalingAdapter, DynamoModel, DynamoCheckpoint, PodSnapshot and PodSnapshotContent
  (both refused when created: ``validation/podsnapshot.py``);
* ``/mutate-nvidia-com-<version>-<lowercase kind>`` for every kind and served version (the chart registers
  DGD, DCD and DGDR; the others answer "allowed, no patch");
* ``/convert`` (ConversionReview v1) for the multi-version kinds.

Protocol: AdmissionReview ``admission.k8s.io/v1`` and ConversionReview ``apiextensions.k8s.io/v1`` in,
the same out. A request that is not one of those (bad JSON, wrong kind or apiVersion, no ``request.uid``)
gets HTTP 400; an unknown path 404; a body over ``max_body`` 413; anything but POST 405. A well-formed
review always gets HTTP 200 with the decision inside, and a bug in a rule becomes a denial with code 500 in
the review, never a dropped connection.

Robustness (``runtime.httpserver``): one deadline per request covering the TLS handshake, headers and body;
body limits per path sized to what the API server sends (``MAX_BODY``, ``MAX_CONVERSION_BODY``); a cap on
bytes in flight; a connection cap that closes idle connections first; readiness from the server's health
(its loop and workers answer), not from what clients queue.

Memory budget: parsing JSON costs up to ~30 times the body's bytes and converting an object three times
that object again, so bytes in flight alone bound nothing. Before a body is parsed its cost is estimated
from its text (:func:`~.streaming.parse_cost`, an upper bound); a body over ``PARSE_BUDGET`` is answered 413
unparsed. A ConversionReview is read an object at a time (:mod:`.streaming`): each object is decoded,
converted (an object already in the desired version is its own answer, not a copy) and encoded before the
next, so a 16 MiB page holds its text, one object and the answer (about twice its size, not seven to
forty-five times), and the GIL is free between objects; in a body large enough to matter an object whose
conversion would cost over ``CONVERT_BUDGET`` fails the conversion. Bodies over ``LARGE_BODY`` (or
``LARGE_COST`` estimated) run one at a time on the server's large lane, the rest on four workers, and small
admission reviews on the loop itself (``INLINE_BODY``: no thread hop), once the detectors the rules consult
have answered. Worst case beside the in-flight bytes: one large admission review (within ``PARSE_BUDGET``)
and four small requests (``LARGE_COST`` each, and their conversions), well under the operator container's
1 GiB with its controllers.

TLS 1.2 or newer; the certificate comes from a :class:`~.certs.TLSContextHolder` for each new connection,
so a rotated certificate is served without a restart. HTTP/1.1 only: the standard library has no HTTP/2
server, so ``security.enableHTTP2`` is accepted but only ``http/1.1`` is offered in ALPN (the API server
falls back to it).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import from_json

from dynamo_operator.api import conversion
from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE
from dynamo_operator.api.registry import GROUP, KINDS
from dynamo_operator.runtime.httpserver import INLINE, LARGE, POOL, HTTPServer, Limits, MiB, Request, Response
from dynamo_operator.runtime.log import get_logger

from . import defaulting, streaming, validation
from .certs import TLSContextHolder
from .streaming import parse_cost

ADMISSION_API_VERSION = "admission.k8s.io/v1"
CONVERSION_API_VERSION = "apiextensions.k8s.io/v1"
CONVERT_PATH = "/convert"
WEBHOOK_KINDS = (
    "DynamoGraphDeployment",
    "DynamoComponentDeployment",
    "DynamoGraphDeploymentRequest",
    "DynamoGraphDeploymentScalingAdapter",
    "DynamoModel",
    "DynamoCheckpoint",
    "PodSnapshot",
    "PodSnapshotContent",
)
MUTATED_KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment", "DynamoGraphDeploymentRequest")
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
# Body limits sized to what the API server sends. It refuses a write whose body is over 3 MiB
# (k8s.io/apiserver MaxRequestBodyBytes, not a flag), and what etcd stores came through that limit, so an
# AdmissionReview carries at most a 3 MiB object and a 3 MiB oldObject, plus an envelope (userInfo, options)
# of a few KiB: 7 MiB leaves a MiB for re-encoding. A ConversionReview carries a list at once: a page of a
# paginated LIST (500 objects with client-go and kubectl) or a watch event; 16 MiB is 500 objects of 32 KiB
# (our DGDs are 2-10 KiB). Anything larger is refused with 413 before a byte of the body is read.
MAX_BODY = 7 * MiB
MAX_CONVERSION_BODY = 16 * MiB
# The memory budget (see the module docstring). A page of real DGDs the size of MAX_CONVERSION_BODY
# estimates at about 190 MiB; a 3 MiB object (the most the API server stores) converts within 128 MiB.
PARSE_BUDGET = 256 * MiB
CONVERT_BUDGET = 128 * MiB
CONVERT_FACTOR = 3  # a conversion holds about three copies of an object beside it (measured: 72x vs 18x)
LARGE_BODY = 256 * 1024
LARGE_COST = 4 * MiB
INLINE_BODY = 64 * 1024  # admission reviews are 2-20 KiB, an UPDATE's two objects 40


def _group_slug() -> str:
    return GROUP.replace(".", "-")


def admission_path(mode: str, version: str, kind: str) -> str:
    """``/validate-nvidia-com-v1beta1-dynamographdeployment`` (``mode`` is validate or mutate)."""
    return f"/{mode}-{_group_slug()}-{version}-{kind.lower()}"


def admission_routes() -> dict[str, tuple[str, str, str]]:
    """path -> (mode, kind, version) for every kind and served version, both modes."""
    routes: dict[str, tuple[str, str, str]] = {}
    for kind in WEBHOOK_KINDS:
        for version in KINDS[kind].versions:
            for mode in ("validate", "mutate"):
                routes[admission_path(mode, version, kind)] = (mode, kind, version)
    return routes


class BadRequest(Exception):
    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


@dataclass
class AdmissionSettings:
    """What the handlers need from the operator."""

    operator_usernames: frozenset[str] = frozenset()
    operator_version: str | None = None
    grove_enabled: Callable[[], bool] = lambda: False
    checkpoint_enabled: bool = True
    profiler_image: str = DEFAULT_PROFILER_IMAGE  # images.profiler: a DGDR's default profiler
    # DRA on (dra.enabled, else resource.k8s.io/v1 served) and the InferencePool API served; unknown = on
    dra_enabled: Callable[[], bool] = lambda: True
    inference_pool_served: Callable[[], bool] = lambda: True
    # namespaces another (namespace-restricted) operator owns: admission allows without checks there
    is_namespace_excluded: Callable[[str | None], bool] = lambda ns: False
    # security.workloads (validation.PodTemplatePolicy); None warns about every privileged setting
    pod_templates: validation.PodTemplatePolicy | None = None
    metrics: Any = None  # runtime.metrics.OperatorMetrics
    log_denials: bool = True
    ingress: dict[str, Any] = field(default_factory=dict)  # the configuration's ingress section
    extra: dict[str, Any] = field(default_factory=dict)


def _review_request(review: Any, kind: str, api_version: str) -> tuple[dict, str]:
    """The ``request`` and its ``uid`` of an AdmissionReview / ConversionReview; a 400 naming what is wrong
    with the envelope otherwise."""
    article = "an" if kind[0] in "AEIOU" else "a"
    if not isinstance(review, dict):
        raise BadRequest(f"body must be a JSON object ({article} {kind})")
    if review.get("apiVersion") != api_version or review.get("kind") != kind:
        raise BadRequest(f"expected {article} {kind} {api_version}")
    req = review.get("request")
    if not isinstance(req, dict):
        raise BadRequest(f"{kind} has no request")
    uid = req.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadRequest(f"{kind} request has no uid")
    return req, uid


# ------------------------------------------------------------------------------------------------------------
# the application: bytes in, (status, JSON) out; no sockets, so it is unit-testable


class WebhookApp:
    def __init__(
        self,
        settings: AdmissionSettings | None = None,
        parse_budget: int = PARSE_BUDGET,
        convert_budget: int = CONVERT_BUDGET,
    ):
        self.settings = settings or AdmissionSettings()
        self.routes = admission_routes()
        self.parse_budget, self.convert_budget = parse_budget, convert_budget
        self.log = get_logger("webhook")
        self.warmed = threading.Event()

    def warm(self) -> None:
        """Ask every detector the rules consult once, so that no review waits for API discovery; reviews
        run on the server's loop only after this (one waiting there would stall every connection)."""
        s = self.settings
        for detector in (s.grove_enabled, s.dra_enabled, s.inference_pool_served):
            try:
                detector()
            except Exception:  # a detector's own failure: reviews ask again, on the workers
                self.log.exception("admission detector failed at start")
                return
        self.warmed.set()

    def serves(self, path: str) -> bool:
        """Whether ``path`` (a query string allowed) is one of this server's webhooks."""
        path = path.split("?", 1)[0]
        return path == CONVERT_PATH or path in self.routes

    def handle(self, path: str, body: bytes | bytearray) -> tuple[int, dict]:
        """The answer to ``body`` at ``path``, the body parsed whole (see :meth:`respond` for the server's
        way, which streams a ConversionReview)."""
        path = path.split("?", 1)[0]
        if not self.serves(path):
            return 404, not_found(path)
        try:
            cost = self._within_budget(body)
            if path == CONVERT_PATH:
                return 200, self.convert(_parse(body), check_each=CONVERT_FACTOR * cost > self.convert_budget)
            return 200, self.admit(self.routes[path], _parse(body))
        except BadRequest as e:
            return e.status, {"error": str(e)}

    def respond(self, path: str, body: bytes | bytearray) -> tuple[int, bytes]:
        """:meth:`handle`'s answer, encoded; a ConversionReview is read, converted and encoded an object
        at a time (``streaming``): one object's tree in memory at once, the GIL free between objects."""
        if path.split("?", 1)[0] != CONVERT_PATH:
            status, payload = self.handle(path, body)
            text = _COMPACT.encode(payload)
            del payload  # the tree goes before the bytes are made
            return status, text.encode()
        try:
            self._within_budget(body)
            try:
                review = streaming.read_conversion_review(streaming.decode(body), self._convert_one)
            except (ValueError, UnicodeDecodeError) as e:
                raise BadRequest(f"body is not JSON: {e}") from None
            return 200, self._conversion_answer(review)
        except BadRequest as e:
            return e.status, _encode({"error": str(e)})

    def _within_budget(self, body: bytes | bytearray) -> int:
        """The body's parse cost; BadRequest 413 over the budget (nothing parsed)."""
        cost = parse_cost(body)
        if cost > self.parse_budget:
            raise BadRequest(
                f"body would take about {cost // MiB} MiB to parse, over the webhook's budget of "
                f"{self.parse_budget // MiB} MiB; send fewer objects at once (a smaller page)",
                413,
            )
        return cost

    # -- admission -------------------------------------------------------------------------------------------
    def admit(self, route: tuple[str, str, str], review: Any) -> dict:
        mode, kind, version = route
        req, uid = _review_request(review, "AdmissionReview", ADMISSION_API_VERSION)
        operation = req.get("operation")
        if operation not in OPERATIONS:
            raise BadRequest(f"AdmissionReview request has an unknown operation {operation!r}")
        started = time.monotonic()
        try:
            response = self._decide(mode, kind, version, req, operation)
        except Exception as e:  # a bug in a rule must not crash the connection or allow by accident
            self.log.exception("admission handler failed", kind=kind, operation=operation)
            response = _deny(500, "InternalError", f"internal error in the {mode} webhook: {e}")
        response["uid"] = uid
        if self.settings.metrics is not None:
            allowed = bool(response.get("allowed"))
            reason = None if allowed else str((response.get("status") or {}).get("reason") or "validation")
            self.settings.metrics.observe_webhook(
                kind, str(operation).lower(), allowed, time.monotonic() - started, reason
            )
        return {"apiVersion": ADMISSION_API_VERSION, "kind": "AdmissionReview", "response": response}

    def _decide(self, mode: str, kind: str, version: str, req: dict, operation: str) -> dict:
        rk = req.get("kind")
        if isinstance(rk, dict) and (rk.get("kind"), rk.get("version")) != (kind, version):
            return _deny(
                400,
                "BadRequest",
                f"this endpoint serves {kind} {version}, not {rk.get('kind')} {rk.get('version')}; "
                "fix the webhook configuration's path",
            )
        if operation in ("DELETE", "CONNECT"):
            return {"allowed": True}
        namespace = req.get("namespace")
        if isinstance(namespace, str) and self.settings.is_namespace_excluded(namespace):
            return {"allowed": True}  # a namespace-restricted operator's own webhook governs it
        obj = req.get("object")
        old = req.get("oldObject") if operation == "UPDATE" else None
        user = req.get("userInfo")
        username = user.get("username") if isinstance(user, dict) else None
        ctx = validation.Context(
            operation=operation,
            username=username if isinstance(username, str) else None,
            operator_usernames=self.settings.operator_usernames,
            grove_enabled=self.settings.grove_enabled(),
            checkpoint_enabled=self.settings.checkpoint_enabled,
            ingress=self.settings.ingress,
            profiler_image=self.settings.profiler_image,
            dra_enabled=self.settings.dra_enabled(),
            inference_pool_served=self.settings.inference_pool_served(),
            pod_templates=self.settings.pod_templates,
        )
        if mode == "mutate":
            if kind not in MUTATED_KINDS:
                return {"allowed": True}
            patch = defaulting.default_patch(kind, version, obj, ctx, self.settings.operator_version)
            out: dict = {"allowed": True}
            if patch:
                out["patchType"] = "JSONPatch"
                out["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
            return out
        result = validation.validate(kind, version, obj, old, ctx)
        if result.allowed:
            out = {"allowed": True}
        else:
            name = (obj.get("metadata") or {}).get("name") if isinstance(obj, dict) else None
            if not isinstance(name, str):
                name = None
            message = validation.denial_message(kind, name, result.errors)
            out = _deny(422, "Invalid", message)
            out["status"]["details"] = {
                "name": name or "",
                "group": GROUP,
                "kind": kind,
                "causes": [
                    {
                        "type": validation.CAUSE_TYPES.get(e.type, "FieldValueInvalid"),
                        "field": e.field,
                        "message": str(e),
                    }
                    for e in result.errors
                ],
            }
            if self.settings.log_denials:
                self.log.info("admission denied", kind=kind, name=name, namespace=req.get("namespace"))
        if result.warnings:
            out["warnings"] = result.warnings[:10]
        return out

    # -- conversion ------------------------------------------------------------------------------------------
    def convert(self, review: Any, check_each: bool = False) -> dict:
        """The ConversionReview's answer, ``review`` parsed whole. ``review`` is taken over: each source
        object is dropped from it as its conversion is made (so a page is held about once, not twice), and
        an object already in the desired version is answered with itself. ``check_each``: refuse an
        object whose conversion would cost over the budget (the caller sets it when the whole body could)."""
        req, uid = _review_request(review, "ConversionReview", CONVERSION_API_VERSION)
        desired = req.get("desiredAPIVersion")
        objects = req.get("objects")
        if not isinstance(desired, str) or not isinstance(objects, list):
            raise BadRequest("ConversionReview request needs desiredAPIVersion and objects")
        response: dict = {"uid": uid}
        try:
            self._target(desired)
            converted = []
            for i, obj in enumerate(objects):
                objects[i] = None
                cost = parse_cost(json.dumps(obj, separators=(",", ":"))) if check_each else 0
                converted.append(self._convert_one(obj, desired, cost))
                del obj
        except Exception as e:
            response["convertedObjects"] = []
            response["result"] = _failure(desired, e)
        else:
            response["convertedObjects"] = converted
            response["result"] = {"status": "Success"}
        return {"apiVersion": CONVERSION_API_VERSION, "kind": "ConversionReview", "response": response}

    def _conversion_answer(self, review: Any) -> bytes:
        """The encoded answer to a review read by ``streaming`` (its objects converted already, unless
        they came before ``desiredAPIVersion``: then they are converted here)."""
        req, uid = _review_request(review, "ConversionReview", CONVERSION_API_VERSION)
        desired, objects = req.get("desiredAPIVersion"), req.get("objects")
        if not isinstance(desired, str) or not isinstance(objects, list):
            raise BadRequest("ConversionReview request needs desiredAPIVersion and objects")
        if not isinstance(objects, streaming.Converted):
            return _encode(self.convert(review))
        error = objects.error
        if error is None:
            try:
                self._target(desired)  # with no objects, the version alone decides
            except conversion.ConversionError as e:
                error = e
        result = {"status": "Success"} if error is None else _failure(desired, error)
        head = f'{{"apiVersion":"{CONVERSION_API_VERSION}","kind":"ConversionReview","response":{{"uid":'
        parts = [head.encode() + _encode(uid) + b',"convertedObjects":[']
        for i, piece in enumerate(objects if error is None else ()):
            parts += (b",", piece) if i else (piece,)
        parts.append(b'],"result":' + _encode(result) + b"}}")
        return b"".join(parts)

    @staticmethod
    def _target(desired: str) -> str:
        group, _, version = desired.rpartition("/")
        if group != GROUP:
            raise conversion.ConversionError(f"cannot convert to {desired!r}: not a {GROUP} version")
        return version

    def _convert_one(self, obj: Any, desired: str, cost: int) -> dict:
        """One object in ``desired``; ``cost`` (its text's parse cost, 0: unchecked) decides whether it
        is too large to convert within the budget."""
        version = self._target(desired)
        if not isinstance(obj, dict):
            raise conversion.ConversionError("every object must be a JSON object")
        if obj.get("apiVersion") != desired and CONVERT_FACTOR * cost > self.convert_budget:
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            name = f"{meta.get('namespace') or ''}/{meta.get('name') or '(unnamed)'}".lstrip("/")
            raise conversion.ConversionError(
                f"{obj.get('kind')} {name} would take about {CONVERT_FACTOR * cost // MiB} MiB to convert, "
                f"over the webhook's budget of {self.convert_budget // MiB} MiB (the API server stores no "
                "object this large: it is not one of the cluster's)"
            )
        return conversion.convert_handed_over(obj, version)


def _failure(desired: str, error: Exception) -> dict:
    return {"status": "Failure", "message": f"conversion to {desired} failed: {error}"}


# json.dumps(value, separators=(",", ":")), without making an encoder for every answer
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def _encode(value: Any) -> bytes:
    return _COMPACT.encode(value).encode()


def not_found(path: str) -> dict:
    return {"error": f"no webhook at {path}"}


def _deny(code: int, reason: str, message: str) -> dict:
    return {
        "allowed": False,
        "status": {"status": "Failure", "code": code, "reason": reason, "message": message},
    }


def _parse(body: bytes | bytearray) -> Any:
    """The body's JSON. pydantic's parser (jiter, in Rust) reads a review in about half ``json.loads``'s
    time, and every text it accepts reads the same as with ``json.loads``; what it refuses (a UTF-8 BOM,
    UTF-16/32, lone surrogate escapes, nesting past its limit, bad JSON) goes to ``json.loads``, so what is
    accepted, and the error a bad body gets, stay ``json.loads``'s. No string cache: it would keep the
    values of past reviews."""
    try:
        return from_json(body, cache_strings=False)
    except ValueError:
        pass
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as e:
        raise BadRequest(f"body is not JSON: {e}") from None


# ------------------------------------------------------------------------------------------------------------
# HTTP(S) transport: the operator's own asyncio HTTP/1.1 server (``runtime.httpserver``)


class WebhookServer:
    """The listening socket and its connections; ``tls=None`` serves plain HTTP (unit tests only).

    ``limits`` bounds what any client can hold (see ``runtime.httpserver``); the body limits are per path:
    ``max_body`` for admission, ``max_conversion_body`` for ``/convert``."""

    def __init__(
        self,
        app: WebhookApp,
        host: str = "0.0.0.0",
        port: int = 9443,
        tls: TLSContextHolder | None = None,
        limits: Limits | None = None,
        max_body: int = MAX_BODY,
        max_conversion_body: int = MAX_CONVERSION_BODY,
        enable_http2: bool = False,
    ):
        self.app = app
        self.host, self.requested_port = host, port
        self.tls = tls
        self.limits = limits or Limits()
        self.max_body, self.max_conversion_body = max_body, max_conversion_body
        self._srv: HTTPServer | None = None
        self.log = get_logger("webhook-server")
        if enable_http2:
            self.log.warning(
                "security.enableHTTP2 is set, but the webhook server speaks HTTP/1.1 only "
                "(no HTTP/2 in the Python standard library); serving HTTP/1.1"
            )

    @property
    def port(self) -> int | None:
        return self._srv.port if self._srv else None

    @property
    def started(self) -> bool:
        return self._srv is not None

    def ready(self) -> bool:
        """Readiness: serving a certificate, and healthy (its loop and workers answer). Not "saturated":
        anyone who reaches the port can fill a queue at will, and readiness that followed it would let
        them take every replica out of the Service; the bounds keep admissions flowing instead."""
        if self._srv is None or (self.tls is not None and not self.tls.ready):
            return False
        return self._srv.healthy()

    def stats(self) -> dict[str, int]:
        return self._srv.stats() if self._srv else {}

    def body_limit(self, method: str, path: str) -> int | Response:
        if not self.app.serves(path):
            # read the body (bounded like any review) and let ``handle`` answer 404: answering from the
            # headers and closing with the body unread makes the kernel reset the connection, and the
            # client sees no response at all (test_property_random_reviews_never_5xx_or_hang, 2 in 5 runs)
            return self.max_body
        if method != "POST":
            return Response(405, b'{"error":"use POST"}', close=True)
        return self.max_conversion_body if path.split("?", 1)[0] == CONVERT_PATH else self.max_body

    def route(self, req: Request) -> str:
        """Where ``req`` runs (on the loop): a large body on the lane that parses one at a time, a small
        admission review on the loop itself once the detectors have answered, the rest on the workers."""
        size = len(req.body)
        if size > LARGE_BODY or parse_cost(req.body) > LARGE_COST:
            return LARGE
        if size <= INLINE_BODY and self.app.warmed.is_set() and req.path.split("?", 1)[0] in self.app.routes:
            return INLINE
        return POOL

    def handle(self, req: Request) -> Response:
        status, body = self.app.respond(req.path, req.body)
        return Response(status, body, "application/json", close=status >= 400)

    def start(self) -> None:
        if self._srv is not None:
            return
        srv = HTTPServer(
            "webhook-server",
            [self.host],
            self.requested_port,
            self.handle,
            self.body_limit,
            self.limits,
            tls_source=self.tls.context if self.tls is not None else None,
            route=self.route,
        )
        srv.start()
        self._srv = srv
        threading.Thread(target=self.app.warm, name="webhook-warm", daemon=True).start()
        self.log.info(
            "serving",
            address=f"{self.host}:{self.port}",
            tls=self.tls is not None,
            maxConnections=self.limits.max_connections,
            requestTimeout=self.limits.request_timeout,
            maxBody=self.max_body,
            maxConversionBody=self.max_conversion_body,
            maxInflightBytes=self.limits.max_inflight_bytes,
        )

    def stop(self) -> None:
        srv, self._srv = self._srv, None
        if srv is not None:
            srv.stop()

    def run(self, stop: threading.Event) -> None:
        """A Manager runnable: serve until ``stop`` is set."""
        self.start()
        stop.wait()
        self.stop()
