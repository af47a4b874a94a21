"""Health-probe and metrics servers, on the operator's asyncio HTTP/1.1 server (``runtime.httpserver``):
a connection cap that closes idle connections first, one deadline per request, no thread per connection.

* Health: ``/healthz`` (liveness: registered health checks, default ``ping``) and ``/readyz`` (readiness:
  informer caches synced plus every registered readiness check, e.g. the webhook server). Everyone gets the
  status; the checks' details (``?verbose``, a failure's reasons) only callers inside the pod (loopback) or
  with a token allowed ``get`` on the path. With an empty bind host (the chart's ``:8081``) it listens on the
  pod's IP (``POD_IP``, from the downward API) and loopback only.
* Metrics: ``/metrics`` from the Manager's own ``CollectorRegistry``.  Secure by default, like
  controller-runtime's ``filters.WithAuthenticationAndAuthorization``: HTTPS (``--metrics-cert-dir``, else the
  webhook serving certificate, which carries the metrics Service's names and chains to the CA the
  ServiceMonitor verifies, else a throwaway self-signed one), a bearer token is checked with a TokenReview,
  then the user with a SubjectAccessReview for the non-resource URL ``/metrics`` verb ``get``.  No/invalid
  token → 401, not allowed → 403, too many unknown tokens → 429 (see :class:`Authenticator`).  Plain HTTP
  without auth when insecure.
  Only HTTP/1.1 is served (the standard-library server does not speak HTTP/2, which is also the CVE-2023-44487
  mitigation upstream applies by default).
* Metrics behind a service listener (the chart's layout, upstream's kube-rbac-proxy era): the metrics bind
  address (``127.0.0.1:8080``) serves plain HTTP to the pod itself only, and a second listener
  (``--metrics-service-bind-address``, the chart's ``:8443`` port ``https``) serves the same registry to the
  metrics Service with the authentication above.  The plain listener must then be on loopback, so
  unauthenticated metrics never leave the pod.

A bind address ``host:port`` with an empty host (``:8080``) means all interfaces (the health server: see
above); ``0`` disables the server;
port ``0`` picks a free port (read it back from ``server.port``).
"""

from __future__ import annotations

import abc
import datetime as dt
import hashlib
import os
import socket
import ssl
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from .client import ResourceClient
from .httpserver import HTTPServer, Limits, Request, Response, TLSSource
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


# Health and metrics serve a probe or a scrape at a time: small caps, short deadlines. Every bound of
# ``runtime.httpserver`` applies (idle connections closed first at the cap, one deadline per request).
PROBE_LIMITS = Limits(
    max_connections=64,
    request_timeout=5.0,
    idle_timeout=60.0,
    write_timeout=10.0,
    max_header_bytes=16 * 1024,
    max_inflight_bytes=8 * 1024 * 1024,
    workers=2,
)


def _get_only(method: str, path: str) -> int | Response:
    """Health and metrics take GET (and HEAD) without a body."""
    if method in ("GET", "HEAD"):
        return 0
    return Response(405, b"405 method not allowed\n", close=True)


def is_loopback(host: str) -> bool:
    """Whether a bind host only accepts connections from this machine (this pod's network namespace), or a
    peer address is this pod itself."""
    host = host.removeprefix("::ffff:")
    return host == "localhost" or host == "::1" or host.startswith("127.")


class BaseServer(abc.ABC):
    name = "server"
    scheme = "http"

    def __init__(self, bind_address: str | None, limits: Limits = PROBE_LIMITS):
        self.bind_address = bind_address
        self.addr = parse_bind_address(bind_address)
        self.limits = limits
        self._srv: HTTPServer | None = None
        self.log = get_logger(self.name)

    @property
    def enabled(self) -> bool:
        return self.addr is not None

    @property
    def port(self) -> int | None:
        return self._srv.port if self._srv else None

    @property
    def url(self) -> str | None:
        if not self._srv or self.addr is None:
            return None
        host = self.hosts()[-1]
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1"
        return f"{self.scheme}://{host}:{self.port}"

    def hosts(self) -> list[str]:
        """The addresses to listen on (one listener each, same port)."""
        return [self.addr[0]] if self.addr else []

    def _tls_source(self) -> TLSSource | None:
        return None

    def start(self) -> None:
        if self.addr is None:
            return
        srv = HTTPServer(
            self.name, self.hosts(), self.addr[1], self._serve, _get_only, self.limits, self._tls_source()
        )
        srv.start()
        self._srv = srv
        self.log.info(
            "serving", address=",".join(f"{h}:{self.port}" for h in self.hosts()), scheme=self.scheme
        )

    def stop(self) -> None:
        if self._srv is not None:
            self._srv.stop()
            self._srv = None

    def _serve(self, req: Request) -> Response:
        status, ctype, body = self.handle(req)
        return Response(status, b"" if req.method == "HEAD" else body, ctype)

    @abc.abstractmethod
    def handle(self, req: Request) -> tuple[int, str, bytes]:
        """Answer one request: (status, content type, body)."""


def probe_hosts(bind_address: str | None, pod_ip: str | None) -> list[str]:
    """Where the health server listens. An empty host (the chart's ``:8081``) means this pod's own
    addresses: its IP, where the kubelet probes, and loopback (``kubectl port-forward``), not every
    interface; without ``POD_IP`` (a process outside a pod) all interfaces, as before."""
    addr = parse_bind_address(bind_address)
    if addr is None:
        return []
    explicit = str(bind_address).strip().rpartition(":")[0].strip("[]")
    if explicit or not pod_ip:
        return [addr[0]]
    return list(dict.fromkeys([pod_ip, "127.0.0.1"]))


class HealthServer(BaseServer):
    """``/healthz`` and ``/readyz``: status for everyone, the checks' details (``?verbose``, or a failure's
    reasons) only for callers inside the pod (loopback: ``kubectl exec`` or ``port-forward``, which the API
    server authorizes) or, when ``auth`` is set, with a bearer token allowed ``get`` on the path."""

    name = "health-probe-server"

    def __init__(
        self, bind_address: str | None, pod_ip: str | None = None, auth: Authenticator | None = None
    ):
        super().__init__(bind_address)
        self.pod_ip = pod_ip if pod_ip is not None else os.environ.get("POD_IP") or None
        self.auth = auth
        self.health_checks: dict[str, Check] = {"ping": lambda: True}
        self.ready_checks: dict[str, Check] = {}
        self._failing: frozenset[str] = frozenset()

    def hosts(self) -> list[str]:
        return probe_hosts(self.bind_address, self.pod_ip)

    def _run(self, checks: dict[str, Check]) -> tuple[bool, list[tuple[str, bool, str]]]:
        ok = True
        results = []
        for name, fn in list(checks.items()):
            try:
                passed = fn() is not False
                err = ""
            except Exception as e:
                passed, err = False, str(e)
            ok &= passed
            results.append((name, passed, err or "not ready"))
        return ok, results

    def _trusted(self, req: Request, path: str) -> bool:
        if is_loopback(req.peer):
            return True
        if self.auth is None or not req.header("authorization"):
            return False
        return self.auth.check(req.header("authorization"), path, "get")[0] == 200

    def handle(self, req: Request) -> tuple[int, str, bytes]:
        path, _, query = req.path.partition("?")
        path = path.rstrip("/") or "/"
        if path in ("/healthz", "/livez"):
            checks, what = self.health_checks, "healthz"
        elif path == "/readyz":
            checks, what = self.ready_checks, "readyz"
        else:
            return 404, "text/plain", b"404 page not found\n"
        ok, results = self._run(checks)
        if what == "readyz":
            self._note_failing(results)
        verbose = "verbose" in query
        if ok and not verbose:
            return 200, "text/plain; charset=utf-8", b"ok"
        detail = (verbose or not ok) and self._trusted(req, path)
        lines = [
            f"[+]{name} ok" if passed else f"[-]{name} failed: {err if detail else 'reason withheld'}"
            for name, passed, err in results
        ]
        body = "\n".join([*lines, f"{what} check {'passed' if ok else 'failed'}"]) + "\n"
        return (200 if ok else 500), "text/plain; charset=utf-8", body.encode()

    def _note_failing(self, results: list[tuple[str, bool, str]]) -> None:
        """Log readiness changes with their reasons (the details probes no longer get)."""
        failing = frozenset(name for name, passed, _ in results if not passed)
        if failing != self._failing:
            reasons = {name: err[:300] for name, passed, err in results if not passed}
            self.log.info("readiness changed", ready=not failing, failing=reasons)
            self._failing = failing


def self_signed_cert(hosts: list[str], days: int = 365) -> tuple[bytes, bytes]:
    """An in-memory serving certificate (PEM cert, PEM key) for ``hosts`` (DNS names or IPs)."""
    from dynamo_operator.pki import self_signed_serving

    return self_signed_serving(hosts, dt.timedelta(days=days), "dynamo-operator-metrics")


class TokenBucket:
    """``rate`` events a second, up to ``burst`` at once (thread-safe)."""

    def __init__(self, rate: float, burst: int):
        self.rate, self.burst = rate, burst
        self._tokens, self._at = float(burst), time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
            if self._tokens >= 1:
                self._tokens -= 1
                return True
            return False


class Authenticator:
    """TokenReview + SubjectAccessReview for a non-resource URL, as controller-runtime's
    ``WithAuthenticationAndAuthorization`` does, made cheap for anyone who is not a real caller:

    * decisions (allowed, forbidden, and unauthenticated: negative caching) are kept ``ttl`` seconds in a
      bounded LRU keyed by the token's SHA-256 (never the token), so a flood of made-up tokens evicts only
      the least recently used entries, not everyone's;
    * a token never seen authenticated costs a TokenReview only within ``review_rate`` per second (burst
      ``review_burst``); beyond that it gets 429 without one. Tokens authenticated within the last hour are
      exempt, so Prometheus keeps scraping while made-up tokens are refused."""

    def __init__(
        self,
        client: ResourceClient,
        ttl: float = 10.0,
        max_entries: int = 4096,
        review_rate: float = 5.0,
        review_burst: int = 20,
        known_for: float = 3600.0,
    ):
        self.client = client
        self.ttl, self.max_entries, self.known_for = ttl, max_entries, known_for
        self._cache: OrderedDict[tuple[str, str, str], tuple[float, int, str]] = OrderedDict()
        self._known: OrderedDict[str, float] = OrderedDict()  # token hash -> last authenticated
        self._bucket = TokenBucket(review_rate, review_burst)
        self._lock = threading.Lock()
        self.reviews = 0  # TokenReviews sent (tests and logs)

    def check(self, auth_header: str | None, path: str, verb: str = "get") -> tuple[int, str]:
        """(http status, message): 200 allowed, 401 unauthenticated, 403 forbidden, 429 too many unknown
        tokens, 500 review failed."""
        if not auth_header or not auth_header.lower().startswith("bearer "):
            return 401, "Unauthorized"
        token = auth_header[7:].strip()
        if not token:
            return 401, "Unauthorized"
        digest = hashlib.sha256(token.encode()).hexdigest()
        key = (digest, path, verb)
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
            if hit and hit[0] > now:
                self._cache.move_to_end(key)
                return hit[1], hit[2]
            known = now - self._known.get(digest, float("-inf")) < self.known_for
        if not known and not self._bucket.take():
            return 429, "Too Many Requests: too many unknown tokens, retry later"
        self.reviews += 1
        result = self._review(token, path, verb)
        if result[0] in (200, 401, 403):
            self._remember(key, now, result)
        return result

    def _remember(self, key: tuple[str, str, str], now: float, result: tuple[int, str]) -> None:
        with self._lock:
            self._cache[key] = (now + self.ttl, *result)
            self._cache.move_to_end(key)
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
            if result[0] != 401:  # authenticated (allowed or not)
                self._known[key[0]] = now
                self._known.move_to_end(key[0])
                while len(self._known) > self.max_entries:
                    self._known.popitem(last=False)

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
        self._provider: TLSSource | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    @property
    def scheme(self) -> str:  # type: ignore[override]
        return "https" if self.secure else "http"

    @property
    def secure_listener(self) -> MetricsServer | None:
        """The listener that authenticates (the Service's, when there is one)."""
        if self.service is not None:
            return self.service
        return self if self.secure else None

    def serve_certificate_from(self, provider: TLSSource) -> None:
        """Serve the certificate ``provider`` returns for each new connection (the operator's webhook
        serving certificate, issued by the CA the ServiceMonitor verifies against, with the metrics
        Service's names) instead of a throwaway self-signed one. ``--metrics-cert-dir`` still wins."""
        listener = self.secure_listener
        if listener is not None:
            listener._provider = provider

    def _tls_source(self) -> TLSSource | None:
        if not self.secure:
            return None
        cert = key = None
        if self.cert_dir:
            cert = os.path.join(self.cert_dir, self.cert_name)
            key = os.path.join(self.cert_dir, self.key_name)
            if not (os.path.exists(cert) and os.path.exists(key)):
                self.log.warning("metrics cert not found in certDir", certDir=self.cert_dir)
                cert = key = None
        if cert is None and self._provider is not None:
            return self._provider
        if cert is None or key is None:
            cert, key = self._self_signed()
        ctx = server_context()
        ctx.load_cert_chain(cert, key)
        return lambda: ctx

    def _self_signed(self) -> tuple[str, str]:
        """A throwaway certificate (files in a private temporary directory): for a run with no CA to chain to
        (local runs, tests); clients cannot verify it."""
        self.log.warning("serving metrics with a self-signed certificate (no CA to verify it against)")
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
        return cert, key

    def handle(self, req: Request) -> tuple[int, str, bytes]:
        path = req.path.partition("?")[0]
        if path != "/metrics":
            return 404, "text/plain", b"404 page not found\n"
        if self.auth is not None:
            status, msg = self.auth.check(req.header("authorization") or None, "/metrics", "get")
            if status != 200:
                return status, "text/plain; charset=utf-8", (msg + "\n").encode()
        encoder, ctype = choose_encoder(req.header("accept"))
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


def server_context() -> ssl.SSLContext:
    """TLS 1.2+, HTTP/1.1 only (the standard library has no HTTP/2 server)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx
