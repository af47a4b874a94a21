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
bytes in flight; a connection cap that closes idle connections first; readiness false while saturated.
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

from dynamo_operator.api import conversion
from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE
from dynamo_operator.api.registry import GROUP, KINDS
from dynamo_operator.runtime.httpserver import HTTPServer, Limits, MiB, Request, Response
from dynamo_operator.runtime.log import get_logger

from . import defaulting, validation
from .certs import TLSContextHolder

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
    def __init__(self, settings: AdmissionSettings | None = None):
        self.settings = settings or AdmissionSettings()
        self.routes = admission_routes()
        self.log = get_logger("webhook")

    def serves(self, path: str) -> bool:
        """Whether ``path`` (a query string allowed) is one of this server's webhooks."""
        path = path.split("?", 1)[0]
        return path == CONVERT_PATH or path in self.routes

    def handle(self, path: str, body: bytes) -> tuple[int, dict]:
        path = path.split("?", 1)[0]
        if not self.serves(path):
            return 404, not_found(path)
        try:
            if path == CONVERT_PATH:
                return 200, self.convert(_parse(body))
            return 200, self.admit(self.routes[path], _parse(body))
        except BadRequest as e:
            return e.status, {"error": str(e)}

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
    def convert(self, review: Any) -> dict:
        req, uid = _review_request(review, "ConversionReview", CONVERSION_API_VERSION)
        desired = req.get("desiredAPIVersion")
        objects = req.get("objects")
        if not isinstance(desired, str) or not isinstance(objects, list):
            raise BadRequest("ConversionReview request needs desiredAPIVersion and objects")
        response: dict = {"uid": uid}
        try:
            group, _, version = desired.rpartition("/")
            if group != GROUP:
                raise conversion.ConversionError(f"cannot convert to {desired!r}: not a {GROUP} version")
            converted = []
            for obj in objects:
                if not isinstance(obj, dict):
                    raise conversion.ConversionError("every object must be a JSON object")
                converted.append(conversion.convert(obj, version))
        except Exception as e:
            response["convertedObjects"] = []
            response["result"] = {"status": "Failure", "message": f"conversion to {desired} failed: {e}"}
        else:
            response["convertedObjects"] = converted
            response["result"] = {"status": "Success"}
        return {"apiVersion": CONVERSION_API_VERSION, "kind": "ConversionReview", "response": response}


def not_found(path: str) -> dict:
    return {"error": f"no webhook at {path}"}


def _deny(code: int, reason: str, message: str) -> dict:
    return {
        "allowed": False,
        "status": {"status": "Failure", "code": code, "reason": reason, "message": message},
    }


def _parse(body: bytes) -> Any:
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
        """Readiness: serving a certificate, and not saturated (a connection refused at the cap lately, or
        requests waiting for in-flight bytes), so a Service sends the API server to a replica with room."""
        if self._srv is None or (self.tls is not None and not self.tls.ready):
            return False
        return not self._srv.saturated()

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

    def handle(self, req: Request) -> Response:
        status, payload = self.app.handle(req.path, req.body)
        body = json.dumps(payload, separators=(",", ":")).encode()
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
        )
        srv.start()
        self._srv = srv
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
