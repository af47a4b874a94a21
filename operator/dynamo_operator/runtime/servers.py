"""Health-probe and metrics HTTP servers (standard-library ``http.server``, one thread per connection).

* Health: ``/healthz`` (liveness: registered health checks, default ``ping``) and ``/readyz`` (readiness:
  informer caches synced plus every registered readiness check, e.g. the webhook server).  ``?verbose`` lists
  the checks.
* Metrics: ``/metrics`` from the Manager's own ``CollectorRegistry``.  Secure by default, like
  controller-runtime's ``filters.WithAuthenticationAndAuthorization``: HTTPS (the given cert/key, else a
  self-signed one generated at start), a bearer token is checked with a TokenReview, then the user is checked
  with a SubjectAccessReview for the non-resource URL ``/metrics`` verb ``get``.  No/invalid token → 401, not
  allowed → 403.  Decisions are cached for ``auth_cache_ttl`` seconds.  Plain HTTP without auth when insecure.
  Only HTTP/1.1 is served (the standard-library server does not speak HTTP/2, which is also the CVE-2023-44487
  mitigation upstream applies by default).
* Metrics behind a service listener (the chart's layout, upstream's kube-rbac-proxy era): the metrics bind
  address (``127.0.0.1:8080``) serves plain HTTP to the pod itself only, and a second listener
  (``--metrics-service-bind-address``, the chart's ``:8443`` port ``https``) serves the same registry to the
  metrics Service with the authentication above.  The plain listener must then be on loopback, so
  unauthenticated metrics never leave the pod.

A bind address ``host:port`` with an empty host (``:8080``) means all interfaces; ``0`` disables the server;
port ``0`` picks a free port (read it back from ``server.port``).
"""

from __future__ import annotations

import abc
import datetime as dt
import hashlib
import http.server
import os
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from .client import ResourceClient
from .log import get_logger

Check = Callable[[], bool | None]


def parse_bind_address(addr: str | None) -> tuple[str, int] | None:
    """``":8080"`` → ("0.0.0.0", 8080); ``"127.0.0.1:0"`` → ephemeral; ``"0"``/empty → None (disabled)."""
    if addr is None:
        return None
    addr = str(addr).strip()
    if addr in ("", "0"):
        return None
    if addr.startswith("["):  # [::1]:8080
        host, _, port = addr[1:].partition("]:")
    else:
        host, _, port = addr.rpartition(":")
    if not port.isdigit():
        raise ValueError(f"invalid bind address {addr!r}: want host:port")
    return (host or "0.0.0.0", int(port))


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    ssl_context: ssl.SSLContext | None = None

    def __init__(self, addr: tuple[str, int], handler: type, app: Any):
        self.app = app
        if ":" in addr[0]:
            self.address_family = socket.AF_INET6
        super().__init__(addr, handler)

    def get_request(self):  # TLS handshake happens lazily in the connection thread, not in accept()
        sock, addr = self.socket.accept()
        if self.ssl_context is not None:
            sock = self.ssl_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr access log
        pass

    def do_GET(self) -> None:
        try:
            status, ctype, body = self.server.app.handle(self)
        except ssl.SSLError:
            return
        except Exception as e:  # pragma: no cover - defensive
            status, ctype, body = 500, "text/plain", f"internal error: {e}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle(self) -> None:
        try:
            if isinstance(self.connection, ssl.SSLSocket):
                self.connection.settimeout(self.timeout)
                self.connection.do_handshake()
            super().handle()
        except (ssl.SSLError, ConnectionError, TimeoutError, OSError):
            pass


class BaseServer(abc.ABC):
    name = "server"

    def __init__(self, bind_address: str | None):
        self.addr = parse_bind_address(bind_address)
        self._srv: _Server | None = None
        self._thread: threading.Thread | None = None
        self.log = get_logger(self.name)

    @property
    def enabled(self) -> bool:
        return self.addr is not None

    @property
    def port(self) -> int | None:
        return self._srv.server_address[1] if self._srv else None

    @property
    def url(self) -> str | None:
        if not self._srv:
            return None
        host = self._srv.server_address[0]
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1"
        return f"{self.scheme}://{host}:{self.port}"

    scheme = "http"

    def _ssl_context(self) -> ssl.SSLContext | None:
        return None

    def start(self) -> None:
        if self.addr is None:
            return
        self._srv = _Server(self.addr, _Handler, self)
        self._srv.ssl_context = self._ssl_context()
        self._thread = threading.Thread(target=self._srv.serve_forever, name=self.name, daemon=True)
        self._thread.start()
        self.log.info("serving", address=f"{self.addr[0]}:{self.port}", scheme=self.scheme)

    def stop(self) -> None:
        if self._srv is not None:
            self._srv.shutdown()
            self._srv.server_close()
            self._srv = None

    @abc.abstractmethod
    def handle(self, req: _Handler) -> tuple[int, str, bytes]:
        """Answer one request: (status, content type, body)."""


class HealthServer(BaseServer):
    name = "health-probe-server"

    def __init__(self, bind_address: str | None):
        super().__init__(bind_address)
        self.health_checks: dict[str, Check] = {"ping": lambda: True}
        self.ready_checks: dict[str, Check] = {}

    def _run(self, checks: dict[str, Check]) -> tuple[bool, list[str]]:
        ok = True
        lines = []
        for name, fn in list(checks.items()):
            try:
                passed = fn() is not False
                err = ""
            except Exception as e:
                passed, err = False, str(e)
            ok &= passed
            lines.append(f"[+]{name} ok" if passed else f"[-]{name} failed: {err or 'not ready'}")
        return ok, lines

    def handle(self, req: _Handler) -> tuple[int, str, bytes]:
        path, _, query = req.path.partition("?")
        path = path.rstrip("/") or "/"
        if path in ("/healthz", "/livez"):
            checks, what = self.health_checks, "healthz"
        elif path == "/readyz":
            checks, what = self.ready_checks, "readyz"
        else:
            return 404, "text/plain", b"404 page not found\n"
        ok, lines = self._run(checks)
        verbose = "verbose" in query
        if ok:
            body = "\n".join([*lines, f"{what} check passed"]) + "\n" if verbose else "ok"
            return 200, "text/plain; charset=utf-8", body.encode()
        body = "\n".join([*lines, f"{what} check failed"]) + "\n"
        return 500, "text/plain; charset=utf-8", body.encode()


def self_signed_cert(hosts: list[str], days: int = 365) -> tuple[bytes, bytes]:
    """An in-memory serving certificate (PEM cert, PEM key) for ``hosts`` (DNS names or IPs)."""
    from dynamo_operator.pki import self_signed_serving

    return self_signed_serving(hosts, dt.timedelta(days=days), "dynamo-operator-metrics")


class Authenticator:
    """TokenReview + SubjectAccessReview for a non-resource URL, with a small TTL cache."""

    def __init__(self, client: ResourceClient, ttl: float = 10.0):
        self.client = client
        self.ttl = ttl
        self._cache: dict[tuple[str, str, str], tuple[float, int, str]] = {}
        self._lock = threading.Lock()

    def check(self, auth_header: str | None, path: str, verb: str = "get") -> tuple[int, str]:
        """(http status, message): 200 allowed, 401 unauthenticated, 403 forbidden, 500 review failed."""
        if not auth_header or not auth_header.lower().startswith("bearer "):
            return 401, "Unauthorized"
        token = auth_header[7:].strip()
        if not token:
            return 401, "Unauthorized"
        key = (hashlib.sha256(token.encode()).hexdigest(), path, verb)
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
            if hit and hit[0] > now:
                return hit[1], hit[2]
        result = self._review(token, path, verb)
        if result[0] in (200, 401, 403):
            with self._lock:
                if len(self._cache) > 1024:
                    self._cache.clear()
                self._cache[key] = (now + self.ttl, *result)
        return result

    def _review(self, token: str, path: str, verb: str) -> tuple[int, str]:
        try:
            tr = self.client.create_raw(
                "/apis/authentication.k8s.io/v1/tokenreviews",
                {
                    "apiVersion": "authentication.k8s.io/v1",
                    "kind": "TokenReview",
                    "spec": {"token": token},
                },
            )
        except Exception as e:
            return 500, f"token review failed: {e}"
        st = tr.get("status") or {}
        if not st.get("authenticated"):
            return 401, "Unauthorized"
        user = st.get("user") or {}
        try:
            sar = self.client.create_raw(
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                {
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "SubjectAccessReview",
                    "spec": {
                        "user": user.get("username"),
                        "uid": user.get("uid"),
                        "groups": user.get("groups") or [],
                        "extra": user.get("extra") or {},
                        "nonResourceAttributes": {"path": path, "verb": verb},
                    },
                },
            )
        except Exception as e:
            return 500, f"subject access review failed: {e}"
        if (sar.get("status") or {}).get("allowed"):
            return 200, "ok"
        return 403, f"Forbidden (user={user.get('username')}, verb={verb}, resource=, subresource=)"


def is_loopback(host: str) -> bool:
    """Whether a bind host only accepts connections from this machine (this pod's network namespace)."""
    return host == "localhost" or host == "::1" or host.startswith("127.")


class MetricsServer(BaseServer):
    name = "metrics-server"

    def __init__(
        self,
        bind_address: str | None,
        registry: CollectorRegistry,
        secure: bool = True,
        client: ResourceClient | None = None,
        cert_dir: str | None = None,
        cert_name: str = "tls.crt",
        key_name: str = "tls.key",
        auth_cache_ttl: float = 10.0,
        service_bind_address: str | None = None,
    ):
        super().__init__(bind_address)
        self.registry = registry
        # The listener the metrics Service reaches; this one then only serves the pod itself.
        self.service: MetricsServer | None = None
        if parse_bind_address(service_bind_address) is not None:
            if self.addr is not None and not is_loopback(self.addr[0]):
                raise ValueError(
                    f"--metrics-bind-address={bind_address} would serve unauthenticated metrics on "
                    f"{self.addr[0]} while --metrics-service-bind-address={service_bind_address} serves "
                    "them to the Service: bind metrics to 127.0.0.1 (e.g. 127.0.0.1:8080) or drop "
                    "--metrics-service-bind-address"
                )
            self.service = MetricsServer(
                service_bind_address,
                registry,
                secure=secure,
                client=client,
                cert_dir=cert_dir,
                cert_name=cert_name,
                key_name=key_name,
                auth_cache_ttl=auth_cache_ttl,
            )
            self.service.name = "metrics-service-server"
            self.service.log = get_logger(self.service.name)
            secure = False
        self.secure = secure
        self.cert_dir = cert_dir
        self.cert_name = cert_name
        self.key_name = key_name
        if secure and client is None:
            raise ValueError("secure metrics serving needs a kube client for TokenReview/SubjectAccessReview")
        self.auth = Authenticator(client, auth_cache_ttl) if secure and client is not None else None
        self._tmp: tempfile.TemporaryDirectory | None = None

    @property
    def scheme(self) -> str:  # type: ignore[override]
        return "https" if self.secure else "http"

    def _ssl_context(self) -> ssl.SSLContext | None:
        if not self.secure:
            return None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_alpn_protocols(["http/1.1"])
        cert = key = None
        if self.cert_dir:
            cert = os.path.join(self.cert_dir, self.cert_name)
            key = os.path.join(self.cert_dir, self.key_name)
            if not (os.path.exists(cert) and os.path.exists(key)):
                self.log.warning(
                    "metrics cert not found, generating a self-signed one", certDir=self.cert_dir
                )
                cert = key = None
        if cert is None:
            host = self.addr[0] if self.addr else "127.0.0.1"
            hosts = sorted({"localhost", "127.0.0.1", socket.gethostname(), *([host] if host else [])})
            hosts = [h for h in hosts if h not in ("0.0.0.0", "::")]
            pem_cert, pem_key = self_signed_cert(hosts)
            self._tmp = tempfile.TemporaryDirectory(prefix="dynamo-metrics-cert-")
            cert = os.path.join(self._tmp.name, "tls.crt")
            key = os.path.join(self._tmp.name, "tls.key")
            with open(cert, "wb") as f:
                f.write(pem_cert)
            with os.fdopen(os.open(key, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
                f.write(pem_key)
        ctx.load_cert_chain(cert, key)
        return ctx

    def handle(self, req: _Handler) -> tuple[int, str, bytes]:
        path = req.path.partition("?")[0]
        if path != "/metrics":
            return 404, "text/plain", b"404 page not found\n"
        if self.auth is not None:
            status, msg = self.auth.check(req.headers.get("Authorization"), "/metrics", "get")
            if status != 200:
                return status, "text/plain; charset=utf-8", (msg + "\n").encode()
        encoder, ctype = choose_encoder(req.headers.get("Accept", ""))
        return 200, ctype, encoder(self.registry)

    def start(self) -> None:
        super().start()
        if self.service is not None:
            self.service.start()

    def stop(self) -> None:
        if self.service is not None:
            self.service.stop()
        super().stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
