"""One HTTPS server for admission (validate, mutate) and CRD conversion (``/convert``), default port 9443.

Paths are the chart's (``charts/platform/components/operator/templates/webhook-configuration.yaml``):

* ``/validate-nvidia-com-<version>-<lowercase kind>`` for every kind and served version of
  DynamoGraphDeployment, DynamoComponentDeployment, DynamoGraphDeploymentRequest,
  DynamoGraphDeploymentScalingAdapter, DynamoModel and DynamoCheckpoint;
* ``/mutate-nvidia-com-<version>-<lowercase kind>`` for every kind and served version (the chart registers
  DGD, DCD and DGDR; the others answer "allowed, no patch");
* ``/convert`` (ConversionReview v1) for the multi-version kinds.

Protocol: AdmissionReview ``admission.k8s.io/v1`` and ConversionReview ``apiextensions.k8s.io/v1`` in,
the same out. A request that is not one of those (bad JSON, wrong kind or apiVersion, no ``request.uid``)
gets HTTP 400; an unknown path 404; a body over ``max_body`` 413; anything but POST 405. A well-formed
review always gets HTTP 200 with the decision inside, and a bug in a rule becomes a denial with code 500 in
the review, never a dropped connection.

Robustness: a per-connection socket timeout (TLS handshake and every read), an overall deadline for reading
one request body, a cap on concurrent connections (extra ones are closed at once), and the body size limit.
TLS 1.2 or newer; the certificate comes from a :class:`~.certs.TLSContextHolder` for each new connection,
so a rotated certificate is served without a restart. HTTP/1.1 only: the standard library has no HTTP/2
server, so ``security.enableHTTP2`` is accepted but only ``http/1.1`` is offered in ALPN (the API server
falls back to it).
"""

from __future__ import annotations

import base64
import http.server
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.api import conversion
from dynamo_operator.api.registry import GROUP, KINDS
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
)
MUTATED_KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment", "DynamoGraphDeploymentRequest")
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
MAX_BODY = 8 * 1024 * 1024  # an object (etcd limit ~1.5 MiB) plus its old object, JSON-escaped


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
    # namespaces another (namespace-restricted) operator owns: admission allows without checks there
    is_namespace_excluded: Callable[[str | None], bool] = lambda ns: False
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
# HTTP(S) transport


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr: tuple[str, int], owner: WebhookServer):
        self.owner = owner
        if ":" in addr[0]:
            self.address_family = socket.AF_INET6
        super().__init__(addr, _Handler)

    def get_request(self):  # the TLS handshake runs in the connection's thread, with a timeout
        sock, addr = self.socket.accept()
        ctx = self.owner.tls.context() if self.owner.tls is not None else None
        if self.owner.tls is not None:
            if ctx is None:  # no certificate yet: refuse rather than serve plain text
                sock.close()
                raise OSError("no serving certificate yet")
            sock = ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def process_request(self, request, client_address):
        if not self.owner.slots.acquire(blocking=False):
            self.shutdown_request(request)  # over the connection cap: close at once
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self.owner.slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.owner.slots.release()

    def handle_error(self, request, client_address):  # no tracebacks on stderr for client errors
        pass


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    server_version = "dynamo-webhook"
    sys_version = ""

    def setup(self) -> None:
        self.timeout = self.server.owner.read_timeout
        # Were headers and body ever to leave in two writes (error paths of the base class), Nagle's
        # algorithm would hold the second for the peer's delayed ACK, 40 ms on Linux (Go sets this too).
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def handle(self) -> None:
        try:
            if isinstance(self.connection, ssl.SSLSocket):
                self.connection.do_handshake()
            # between requests a kept-alive connection may idle longer than a request may take to arrive
            # (Go clients keep idle connections 90 s)
            self.connection.settimeout(self.server.owner.idle_timeout)
            super().handle()
        except (ssl.SSLError, ConnectionError, TimeoutError, OSError):
            self.close_connection = True

    def parse_request(self) -> bool:
        self.connection.settimeout(self.server.owner.read_timeout)  # a request line arrived: now it's timed
        return super().parse_request()

    def _send(self, status: int, payload: dict, close: bool = False) -> None:
        body = json.dumps(payload, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        # headers and body in one write: one TLS record and one segment, so the caller wakes up once
        self._headers_buffer.append(b"\r\n" + body)
        self.flush_headers()
        self.connection.settimeout(self.server.owner.idle_timeout)

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            raise BadRequest("chunked request bodies are not supported; send Content-Length", 411)
        raw = self.headers.get("Content-Length")
        if raw is None:
            raise BadRequest("Content-Length is required", 411)
        try:
            length = int(raw)
        except ValueError:
            raise BadRequest("invalid Content-Length") from None
        if length < 0:
            raise BadRequest("invalid Content-Length")
        limit = self.server.owner.max_body
        if length > limit:
            raise BadRequest(f"request body over {limit} bytes", 413)
        deadline = time.monotonic() + self.server.owner.body_deadline
        chunks, left = [], length
        while left > 0:
            if time.monotonic() > deadline:
                raise BadRequest("request body not received in time", 408)
            chunk = self.rfile.read(min(left, 65536))
            if not chunk:
                raise BadRequest("request body shorter than Content-Length")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def do_POST(self) -> None:
        try:
            body = self._read_body()
        except BadRequest as e:
            self._send(e.status, {"error": str(e)}, close=True)
            return
        except (TimeoutError, OSError):
            self.close_connection = True
            return
        try:
            status, payload = self.server.owner.app.handle(self.path, body)
        except Exception as e:  # defensive: the app already turns errors into responses
            status, payload = 400, {"error": f"cannot handle the request: {e}"}
        self._send(status, payload, close=status >= 400)

    def _not_allowed(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        if 0 < length <= 65536:
            self.rfile.read(length)
        if self.server.owner.app.serves(self.path):
            self._send(405, {"error": "use POST"}, close=True)
        else:
            self._send(404, not_found(self.path.split("?", 1)[0]), close=True)

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _not_allowed


class WebhookServer:
    """The listening socket and its threads; ``tls=None`` serves plain HTTP (unit tests only)."""

    def __init__(
        self,
        app: WebhookApp,
        host: str = "0.0.0.0",
        port: int = 9443,
        tls: TLSContextHolder | None = None,
        read_timeout: float = 10.0,
        idle_timeout: float = 120.0,
        body_deadline: float = 30.0,
        max_body: int = MAX_BODY,
        max_connections: int = 256,
        enable_http2: bool = False,
    ):
        self.app = app
        self.host, self.requested_port = host, port
        self.tls = tls
        self.read_timeout = read_timeout
        self.idle_timeout = idle_timeout
        self.body_deadline = body_deadline
        self.max_body = max_body
        self.slots = threading.BoundedSemaphore(max_connections)
        self._srv: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.log = get_logger("webhook-server")
        if enable_http2:
            self.log.warning(
                "security.enableHTTP2 is set, but the webhook server speaks HTTP/1.1 only "
                "(no HTTP/2 in the Python standard library); serving HTTP/1.1"
            )

    @property
    def port(self) -> int | None:
        return self._srv.server_address[1] if self._srv else None

    @property
    def started(self) -> bool:
        return self._srv is not None

    def ready(self) -> bool:
        return self._srv is not None and (self.tls is None or self.tls.ready)

    def start(self) -> None:
        if self._srv is not None:
            return
        self._srv = _HTTPServer((self.host, self.requested_port), self)
        self._thread = threading.Thread(target=self._srv.serve_forever, name="webhook-server", daemon=True)
        self._thread.start()
        self.log.info("serving", address=f"{self.host}:{self.port}", tls=self.tls is not None)

    def stop(self) -> None:
        srv, self._srv = self._srv, None
        if srv is not None:
            srv.shutdown()
            srv.server_close()

    def run(self, stop: threading.Event) -> None:
        """A Manager runnable: serve until ``stop`` is set."""
        self.start()
        stop.wait()
        self.stop()
