"""Kubernetes client bootstrap and a small dynamic client over the official ``kubernetes`` package.

Why the official client and not lightkube/kr8s/kopf: it is the one library the whole project already depends
on (hooks, plugin, tests), it covers every API group, handles kubeconfig contexts, exec credential plugins and
in-cluster token refresh.  What it lacks is a *dynamic* resource client and informers, so this module adds a
thin ``ResourceClient`` that speaks plain JSON dicts for any resource (core types and custom resources alike)
by reusing the client's request serialisation and authentication (``ApiClient.param_serialize`` +
``call_api``). Plain dicts keep the runtime independent of generated model classes and make owner mapping,
caching and status writes uniform for ``ConfigMap`` and ``DynamoGraphDeployment`` alike.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import kubernetes
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import ReadTimeoutError

from dynamo_operator import __version__
from dynamo_operator.runtime.settings import CONNECTION_POOL_SIZE

# Like client-go's "<binary>/<version>": the apiserver's audit log and metrics then tell the operator's
# requests from kubectl's or a test's (the library's default names only the code generator).
USER_AGENT = f"dynamo-operator/{__version__}"


@dataclass(frozen=True)
class ResourceDescriptor:
    """Identifies a resource type: ``group`` is "" for the core API group."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_kind(self) -> str:
        return f"{self.kind}.{self.group}" if self.group else self.kind

    def base_path(self, namespace: str | None = None) -> str:
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{root}/namespaces/{namespace}/{self.plural}"
        return f"{root}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None, subresource: str | None = None) -> str:
        path = f"{self.base_path(namespace)}/{name}"
        return f"{path}/{subresource}" if subresource else path

    def matches(self, api_version: str, kind: str) -> bool:
        """True when an ownerReference's apiVersion/kind names this resource (any version of the group)."""
        group = api_version.split("/", 1)[0] if "/" in api_version else ""
        return kind == self.kind and group == self.group

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


def custom(group: str, version: str, plural: str, kind: str, namespaced: bool = True) -> ResourceDescriptor:
    return ResourceDescriptor(group, version, plural, kind, namespaced)


CONFIGMAPS = ResourceDescriptor("", "v1", "configmaps", "ConfigMap")
SECRETS = ResourceDescriptor("", "v1", "secrets", "Secret")
SERVICES = ResourceDescriptor("", "v1", "services", "Service")
SERVICEACCOUNTS = ResourceDescriptor("", "v1", "serviceaccounts", "ServiceAccount")
PODS = ResourceDescriptor("", "v1", "pods", "Pod")
EVENTS = ResourceDescriptor("", "v1", "events", "Event")
PVCS = ResourceDescriptor("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
NAMESPACES = ResourceDescriptor("", "v1", "namespaces", "Namespace", namespaced=False)
NODES = ResourceDescriptor("", "v1", "nodes", "Node", namespaced=False)
DEPLOYMENTS = ResourceDescriptor("apps", "v1", "deployments", "Deployment")
LEASES = ResourceDescriptor("coordination.k8s.io", "v1", "leases", "Lease")
ROLES = ResourceDescriptor("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLEBINDINGS = ResourceDescriptor("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
HPAS = ResourceDescriptor("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler")


def load_api_client(
    kubeconfig: str | None = None,
    context: str | None = None,
    pool_maxsize: int = CONNECTION_POOL_SIZE,
    client_side_retries: bool = True,
    user_agent: str = USER_AGENT,
) -> ApiClient:
    """Kubeconfig (explicit path, else ``$KUBECONFIG``, else ``~/.kube/config``) or the in-cluster service
    account.

    In a pod (``KUBERNETES_SERVICE_HOST`` set) without an explicit kubeconfig the in-cluster config wins, like
    controller-runtime's ``GetConfig``.  The urllib3 pool is sized for the informers' long-running watches
    (one connection each) plus the workers' requests; the default (cpu*5) starves on small nodes.
    """
    cfg = Configuration()
    explicit = kubeconfig or os.environ.get("KUBECONFIG")
    if not explicit and os.environ.get("KUBERNETES_SERVICE_HOST"):
        kubernetes.config.load_incluster_config(client_configuration=cfg)
    else:
        path = explicit.split(os.pathsep)[0] if explicit else None
        kubernetes.config.load_kube_config(config_file=path, context=context, client_configuration=cfg)
    cfg.connection_pool_maxsize = pool_maxsize
    if client_side_retries and hasattr(cfg, "client_go_retries"):
        cfg.client_go_retries = True
    api = ApiClient(cfg)
    api.user_agent = user_agent
    share_tls_context(api)
    return api


def _pool_manager(api_client: ApiClient) -> Any:
    """The urllib3 ``PoolManager`` under ``api_client``, or None for a client without one (a test double)."""
    return getattr(getattr(api_client, "rest_client", None), "pool_manager", None)


# What urllib3 reads from files or PEM on every new connection unless it is given a context that holds them.
_PER_CONNECTION_TLS_FILES = (
    "ca_certs",
    "ca_cert_dir",
    "ca_cert_data",
    "cert_file",
    "key_file",
    "key_password",
)


def share_tls_context(api_client: ApiClient) -> None:
    """Give ``api_client``'s connections one TLS context, loaded once, instead of one built per connection.

    Without it urllib3 creates a context for every new connection and reloads the CA bundle and the client
    certificate and key into it (a file read and a PEM parse each): two thirds of the CPU of opening a
    connection, and an informer opens one for every watch it starts (a closed watch's connection is never
    reused). The profile of the main integration stream put 7% of its samples there. client-go reads these
    files once when it builds its transport, too: a rotated CA or client certificate file is seen after a
    restart, as there. Verification is unchanged: urllib3 still sets the same verify mode and checks the
    host name on each connection. Idempotent; a client with its own ``ssl_context`` is left alone."""
    import ssl

    from urllib3.util.ssl_ import create_urllib3_context, resolve_cert_reqs

    pm = _pool_manager(api_client)
    kw = getattr(pm, "connection_pool_kw", None)
    if pm is None or kw is None or kw.get("ssl_context") is not None:
        return
    ctx = create_urllib3_context(cert_reqs=resolve_cert_reqs(kw.get("cert_reqs")))
    if kw.get("ca_certs") or kw.get("ca_cert_dir") or kw.get("ca_cert_data"):
        ctx.load_verify_locations(kw.get("ca_certs"), kw.get("ca_cert_dir"), kw.get("ca_cert_data"))
    elif ctx.verify_mode != ssl.CERT_NONE:
        ctx.load_default_certs()  # what urllib3 does for a connection without a CA of its own
    if kw.get("cert_file"):
        ctx.load_cert_chain(kw["cert_file"], kw.get("key_file"), kw.get("key_password"))
    for name in _PER_CONNECTION_TLS_FILES:
        kw.pop(name, None)
    kw["ssl_context"] = ctx
    pm.clear()  # pools made before this hold the old arguments


def size_connection_pool(api_client: ApiClient, maxsize: int) -> None:
    """Keep up to ``maxsize`` idle connections per apiserver in ``api_client``'s pools, as
    ``load_api_client`` does for the clients it makes. A client built elsewhere (``kubernetes``' default is
    5 a CPU, 10 on two cores) and handed to a ``Manager`` otherwise runs its informers' watches and workers'
    requests through the smaller pool, and every connection past it is closed after one use ("Connection
    pool is full, discarding connection"), the next request paying a new TLS handshake."""
    pm = _pool_manager(api_client)
    kw = getattr(pm, "connection_pool_kw", None)
    if pm is None or kw is None or kw.get("maxsize") == maxsize:
        return
    kw["maxsize"] = maxsize
    pm.clear()  # pools made before this hold the old size


class StaleLeaderWrite(RuntimeError):
    """A write refused in this process because it no longer (or not yet) holds the leader lease.

    Raised before anything is sent: the apiserver has no fencing token a write could carry, so the only place
    a paused-then-resumed former leader can be stopped from overwriting its successor is here."""


WriteFence = Callable[[str, str], None]
# The apiserver logs a request under the ID its client sends in this header (it makes one up otherwise).
AUDIT_ID_HEADER = "Audit-ID"
LateWriteReport = Callable[[str, str, str, float], None]  # method, path, audit id, seconds since the fence


# The fence check of the write this thread is sending, if any (read by the fenced connection classes).
_FENCE = threading.local()


def _fenced_connection(base: type) -> type:
    """``base`` (a urllib3 connection class) that holds a fenced request's bytes back until the request is
    complete, runs the fence check, then writes them in one go. Without this, a process stopped between the
    check and the send (or between sending the headers and the body) resumes and finishes a write it no
    longer may make.

    The connection is opened before the check, and the bytes go straight to the socket's C-level write
    after it: every Python frame between the two (``http.client``'s ``send``, ``ssl``'s ``sendall``) is a
    point where the thread may hand the GIL over and wait, on a loaded machine for milliseconds, and a
    process frozen during that wait resumes into the write (docs/reliability.md)."""

    class Fenced(base):  # type: ignore[misc, valid-type]
        _held: bytearray | None = None

        def request(self, method, url, body=None, headers=None, **kw):  # type: ignore[override]
            check = getattr(_FENCE, "check", None)
            if check is None:
                return super().request(method, url, body, headers, **kw)
            self._held = bytearray()
            try:
                super().request(method, url, body, headers, **kw)
                data = bytes(self._held)
            finally:
                self._held = None
            if self.sock is None:  # plain HTTP connects on its first send: not between check and write
                self.connect()
            write = _raw_write(self.sock)
            check()
            sent = write(data)
            if sent < len(data):  # a TLS record or a socket buffer short of the whole request (rare)
                self.sock.sendall(memoryview(data)[sent:])
            return None

        def send(self, data):  # type: ignore[override]
            if self._held is None:
                return super().send(data)
            if hasattr(data, "read"):
                data = data.read()
            self._held += data.encode() if isinstance(data, str) else bytes(data)
            return None

    Fenced.__name__ = f"Fenced{base.__name__}"
    return Fenced


def _raw_write(sock: Any) -> Callable[[bytes], int]:
    """The socket's own write, in C: an ``SSLSocket``'s TLS object (its ``sendall`` is Python, looping over
    ``send``), or a plain socket's ``send``. Returns how many bytes it took."""
    tls = getattr(sock, "_sslobj", None)
    return tls.write if tls is not None else sock.send


def install_fenced_transport(api_client: ApiClient) -> None:
    """Make ``api_client``'s connections honour write fences (see ``_fenced_connection``); requests without
    a fence (reads, leases) are untouched. Idempotent."""
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    pm = _pool_manager(api_client)
    if pm is None or getattr(pm, "_dynamo_fenced", False):
        return

    class FencedHTTPPool(HTTPConnectionPool):
        ConnectionCls = _fenced_connection(HTTPConnectionPool.ConnectionCls)

    class FencedHTTPSPool(HTTPSConnectionPool):
        ConnectionCls = _fenced_connection(HTTPSConnectionPool.ConnectionCls)

    pm.pool_classes_by_scheme = {"http": FencedHTTPPool, "https": FencedHTTPSPool}
    pm.clear()
    pm._dynamo_fenced = True


class ResourceClient:
    """JSON-dict CRUD + list/watch for any ``ResourceDescriptor``.

    ``write_fence(method, path)``, when set, runs immediately before every non-GET request is handed to the
    transport and raises (``StaleLeaderWrite``) to refuse it; the manager sets it on the controllers' client
    when leader election is on, so a replica that lost its lease cannot write (see ``Manager``).

    A fenced write carries its own ``Audit-ID`` header (the apiserver's audit log keeps the client's), and
    one the apiserver accepted more than ``late_write_after`` seconds after its fence passed is reported to
    ``on_late_write(method, path, audit_id, seconds)``: a write that passed the fence while the lease was
    held but was frozen, or held up, until a successor could hold it. No client-side check can stop such a
    write; the report names it, so the audit log shows which writes they were."""

    def __init__(
        self, api_client: ApiClient, request_timeout: float = 30.0, write_fence: WriteFence | None = None
    ):
        self.api_client = api_client
        self.request_timeout = request_timeout
        self.write_fence = write_fence
        self.late_write_after: float | None = None
        self.on_late_write: LateWriteReport | None = None

    # -- transport ------------------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        query: list[tuple[str, Any]] | None = None,
        body: Any = None,
        content_type: str | None = None,
        timeout: Any = None,
        stream: bool = False,
        fenced: bool = True,
    ) -> Any:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type or "application/json"
        query = [(k, v) for k, v in (query or []) if v is not None and v != ""]
        timeout = timeout if timeout is not None else self.request_timeout
        ac = self.api_client
        scope = self._fence(method, path, fenced)
        if scope.fenced:
            headers[AUDIT_ID_HEADER] = str(uuid.uuid4())
        if hasattr(ac, "param_serialize"):  # kubernetes >= 35 (pydantic generator)
            method_, url, hdrs, body_, _post = ac.param_serialize(
                method=method,
                resource_path=path,
                query_params=query,
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            with scope:
                resp = ac.call_api(method_, url, header_params=hdrs, body=body_, _request_timeout=timeout)
            raw = resp.response
        else:  # older generator: call_api raises on non-2xx itself
            scope.check()
            raw = ac.call_api(
                path,
                method,
                query_params=query,
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
                _request_timeout=timeout,
            )
        if not 200 <= raw.status <= 299:
            data = raw.data
            raise ApiException(status=raw.status, reason=raw.reason, http_resp=_Preloaded(raw, data))
        if scope.fenced:
            self._report_if_late(method, path, headers[AUDIT_ID_HEADER], scope)
        if stream:
            return raw
        data = raw.data
        return json.loads(data) if data else None

    def _fence(self, method: str, path: str, fenced: bool) -> _FenceScope:
        """Checked once now (nothing is built for a refused write) and, when the transport is fenced
        (``install_fenced_transport``), again as the request's bytes leave."""
        fence = self.write_fence if fenced and method != "GET" else None
        scope = _FenceScope(None if fence is None else (lambda: fence(method, path)))
        scope.check()
        return scope

    def _report_if_late(self, method: str, path: str, audit_id: str, scope: _FenceScope) -> None:
        limit, report = self.late_write_after, self.on_late_write
        if limit is None or report is None or scope.checked_at is None:
            return
        seconds = time.monotonic() - scope.checked_at
        if seconds >= limit:
            report(method, path, audit_id, seconds)

    # -- verbs ----------------------------------------------------------------------------------------------
    def list(
        self,
        res: ResourceDescriptor,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
    ) -> dict:
        query = [
            ("labelSelector", label_selector),
            ("fieldSelector", field_selector),
            ("resourceVersion", resource_version),
            ("limit", limit),
            ("continue", continue_),
        ]
        return self.request("GET", res.base_path(namespace), query)

    def list_all(
        self,
        res: ResourceDescriptor,
        namespace: str | None = None,
        transform: Callable[[dict], dict] | None = None,
        limit: int = 500,
        **kw: Any,
    ) -> tuple[list, str]:
        """Paginated list (``limit`` objects a page); returns (items, resourceVersion of the list).
        ``transform`` is applied to each item as its page arrives, so a caller keeping a lean copy never
        holds every full page at once."""
        items: list = []
        cont = None
        while True:
            out = self.list(res, namespace, limit=limit, continue_=cont, **kw)
            for it in out.get("items") or []:
                it.setdefault("apiVersion", res.api_version)
                it.setdefault("kind", res.kind)
                items.append(transform(it) if transform else it)
            md = out.get("metadata") or {}
            cont = md.get("continue")
            if not cont:
                return items, md.get("resourceVersion", "")

    def watch(
        self,
        res: ResourceDescriptor,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int = 300,
        bookmarks: bool = True,
        inactivity_timeout: float | None = None,
        send_initial_events: bool = False,
    ) -> WatchStream:
        """A watch the server ends after ``timeout_seconds``; ``inactivity_timeout``: seconds without a byte
        after which the stream raises ``WatchSilent`` (default: 30 s past the server's end).
        ``send_initial_events``: a watch-list, starting with an ``ADDED`` event for every object (the
        latest state) and a bookmark annotated ``k8s.io/initial-events-end`` after the last."""
        query = [
            ("watch", "true"),
            ("resourceVersion", resource_version),
            ("allowWatchBookmarks", "true" if bookmarks or send_initial_events else None),
            ("sendInitialEvents", "true" if send_initial_events else None),
            ("resourceVersionMatch", "NotOlderThan" if send_initial_events else None),
            ("labelSelector", label_selector),
            ("fieldSelector", field_selector),
            ("timeoutSeconds", timeout_seconds),
        ]
        silence = inactivity_timeout if inactivity_timeout is not None else timeout_seconds + 30
        raw = self.request("GET", res.base_path(namespace), query, timeout=(10, silence), stream=True)
        return WatchStream(raw, silence)

    def get(self, res: ResourceDescriptor, name: str, namespace: str | None = None) -> dict:
        return self.request("GET", res.object_path(name, namespace))

    def create(self, res: ResourceDescriptor, body: dict, namespace: str | None = None) -> dict:
        body.setdefault("apiVersion", res.api_version)
        body.setdefault("kind", res.kind)
        ns = namespace or (body.get("metadata") or {}).get("namespace")
        return self.request("POST", res.base_path(ns), body=body)

    def replace(self, res: ResourceDescriptor, body: dict, subresource: str | None = None) -> dict:
        md = body["metadata"]
        return self.request("PUT", res.object_path(md["name"], md.get("namespace"), subresource), body=body)

    def patch(
        self,
        res: ResourceDescriptor,
        name: str,
        patch: Any,
        namespace: str | None = None,
        subresource: str | None = None,
        patch_type: str = "application/merge-patch+json",
        field_manager: str | None = None,
        force: bool | None = None,
    ) -> dict:
        query = [("fieldManager", field_manager), ("force", "true" if force else None)]
        return self.request(
            "PATCH",
            res.object_path(name, namespace, subresource),
            query,
            body=patch,
            content_type=patch_type,
        )

    def apply(self, res: ResourceDescriptor, body: dict, field_manager: str, subresource: str | None = None):
        """Server-side apply (JSON is valid YAML for the apply-patch content type)."""
        md = body["metadata"]
        body.setdefault("apiVersion", res.api_version)
        body.setdefault("kind", res.kind)
        return self.patch(
            res,
            md["name"],
            body,
            md.get("namespace"),
            subresource,
            patch_type="application/apply-patch+yaml",
            field_manager=field_manager,
            force=True,
        )

    def delete(
        self,
        res: ResourceDescriptor,
        name: str,
        namespace: str | None = None,
        propagation: str | None = "Background",
        preconditions: dict | None = None,
    ) -> dict | None:
        body: dict = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation:
            body["propagationPolicy"] = propagation
        if preconditions:
            body["preconditions"] = preconditions
        return self.request("DELETE", res.object_path(name, namespace), body=body)

    def create_raw(self, path: str, body: dict) -> dict:
        """POST to an arbitrary path (TokenReview, SubjectAccessReview, TokenRequest...): reviews change
        nothing, so they are never fenced (every replica authenticates metrics scrapes)."""
        return self.request("POST", path, body=body, fenced=False)


class _FenceScope:
    """Publishes a write's fence check to this thread's connection for the duration of one request, and
    remembers when the check last ran (the clock is read before the check, so the time is never late)."""

    def __init__(self, check: Callable[[], None] | None):
        self._check = check
        self.checked_at: float | None = None

    @property
    def fenced(self) -> bool:
        return self._check is not None

    def check(self) -> None:
        if self._check is not None:
            self.checked_at = time.monotonic()
            self._check()

    def __enter__(self) -> _FenceScope:
        _FENCE.check = None if self._check is None else self.check
        return self

    def __exit__(self, *exc: object) -> None:
        _FENCE.check = None


class _Preloaded:
    """Adapter so ApiException can read status/reason/headers/body from an already-read urllib3 response."""

    def __init__(self, raw: Any, data: bytes):
        self.status = raw.status
        self.reason = raw.reason
        self.headers = raw.headers
        self.data = data


class WatchSilent(Exception):
    """No byte arrived on a watch for its inactivity timeout: the connection is dead without having been
    closed (the apiserver would have ended a healthy watch, or sent a bookmark, before then)."""


class WatchStream:
    """Iterates watch events (dicts with ``type`` and ``object``) from a streaming response; ``close()`` stops
    it from another thread. A read that waits ``silence`` seconds raises ``WatchSilent``."""

    def __init__(self, raw: Any, silence: float | None = None):
        self._raw = raw
        self.silence = silence
        self.closed = False

    def __iter__(self) -> Iterator[dict]:
        buf = bytearray()
        try:
            for chunk in self._raw.stream(amt=None, decode_content=True):
                if self.closed:
                    return
                buf.extend(chunk)
                while True:
                    nl = buf.find(b"\n")
                    if nl < 0:
                        break
                    line = bytes(buf[:nl]).strip()
                    del buf[: nl + 1]
                    if line:
                        yield json.loads(line)
        except ReadTimeoutError as e:
            if self.closed:
                return
            raise WatchSilent(f"no data on the watch for {self.silence}s") from e
        except Exception:
            if self.closed:
                return
            raise
        finally:
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        # shutdown() (urllib3 >= 2.3) unblocks a read in progress on another thread; the connection is then
        # dropped rather than returned to the pool.
        for meth in ("shutdown", "close"):
            fn = getattr(self._raw, meth, None)
            if fn is not None:
                with contextlib.suppress(Exception):
                    fn()


def is_status(exc: BaseException, *codes: int) -> bool:
    return isinstance(exc, ApiException) and exc.status in codes


def owner_controller(obj: dict) -> dict | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def obj_key(obj: dict) -> str:
    md = obj.get("metadata") or {}
    ns = md.get("namespace")
    return f"{ns}/{md.get('name')}" if ns else str(md.get("name"))
