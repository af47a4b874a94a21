"""The operator's administration of etcd's users and roles (per-namespace access, ``render/etcdaccess.py``).

Over etcd's JSON gateway (``/v3/auth/...`` on the client port, HTTPS), so no gRPC library is needed. The
gateway refuses a client certificate that carries a Common Name, so the operator presents one without
(the chart issues it) and authenticates as etcd's ``root`` with its password for a token; the token goes
in the ``Authorization`` header. Every call is idempotent: ``ensure_*`` calls treat "already exists"
as done, ``remove_namespace`` treats "not found" as done.

Bootstrap (``ensure_auth``): while etcd's authentication is off, the operator creates ``root`` with its
password and turns authentication on; from then on every client needs a user. Until then etcd answers
only holders of a certificate from its CA (``--client-cert-auth``), and only the operator has one.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import ssl
import tempfile
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

ROOT = "root"
RETRY_TOKEN = ("invalid auth token", "revision of auth store is old", "user name is empty")
ALREADY = ("already exists", "already granted", "is already having")
NOT_FOUND = ("not found",)
AUTH_OFF = "authentication is not enabled"


class EtcdAdminError(Exception):
    """etcd refused an administrative call (the message is etcd's)."""


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode("ascii")


def prefix_end(prefix: str) -> str:
    """The exclusive end of the key range starting with ``prefix`` (its last byte plus one)."""
    raw = prefix.encode()
    return (raw[:-1] + bytes([raw[-1] + 1])).decode()


@dataclass(frozen=True)
class AdminCredentials:
    """From the admin Secret: the CA etcd's certificate is verified against, the operator's client
    certificate and key (no Common Name) and root's password."""

    ca: bytes
    cert: bytes
    key: bytes
    password: str


def _context(creds: AdminCredentials) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=creds.ca.decode())
    with tempfile.TemporaryDirectory(prefix="etcd-admin-") as d:  # the ssl module loads keys from files
        cert, key = os.path.join(d, "tls.crt"), os.path.join(d, "tls.key")
        for path, data in ((cert, creds.cert), (key, creds.key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        ctx.load_cert_chain(cert, key)
    return ctx


class EtcdAdmin:
    """Users, roles and key ranges of one etcd, as ``root``. Thread-safe (one call at a time)."""

    def __init__(
        self, endpoint: str, creds: AdminCredentials, timeout: float = 10.0, connect_to: str | None = None
    ):
        """``connect_to``: an address to open instead of the endpoint's host, whose name the server's
        certificate is still checked against (a Service's ClusterIP from outside the cluster's DNS)."""
        first = endpoint.split(",")[0].strip()
        parts = urlsplit(first if "//" in first else f"https://{first}")
        self.host, self.port = parts.hostname or "", parts.port or 2379
        self.connect_to = connect_to
        self.creds = creds
        self.timeout = timeout
        self._ctx = _context(creds)
        self._token: str | None = None
        self._lock = threading.Lock()

    def _post(self, path: str, body: dict, token: str | None) -> dict:
        conn = http.client.HTTPSConnection(self.host, self.port, context=self._ctx, timeout=self.timeout)
        if self.connect_to:
            raw = socket.create_connection((self.connect_to, self.port), timeout=self.timeout)
            conn.sock = self._ctx.wrap_socket(raw, server_hostname=self.host)
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = token
        try:
            conn.request("POST", path, json.dumps(body), headers)
            resp = conn.getresponse()
            data = json.loads(resp.read() or b"{}")
        finally:
            conn.close()
        error = data.get("error") or (data.get("message") if resp.status >= 300 else None)
        if error:
            raise EtcdAdminError(str(error))
        return data

    def _authenticate(self) -> str | None:
        """A root token; None while authentication is off (calls then need none)."""
        try:
            return self._post("/v3/auth/authenticate", {"name": ROOT, "password": self.creds.password}, None)[
                "token"
            ]
        except EtcdAdminError as e:
            if AUTH_OFF in str(e):
                return None
            raise

    def call(self, path: str, body: dict) -> dict:
        """One administrative call as root, authenticating again once when the token went stale."""
        with self._lock:
            if self._token is None:
                self._token = self._authenticate()
            try:
                return self._post(path, body, self._token)
            except EtcdAdminError as e:
                if not any(m in str(e) for m in RETRY_TOKEN):
                    raise
                self._token = self._authenticate()
                return self._post(path, body, self._token)

    def _ensure(self, path: str, body: dict) -> None:
        try:
            self.call(path, body)
        except EtcdAdminError as e:
            if not any(m in str(e) for m in ALREADY):
                raise

    def _remove(self, path: str, body: dict) -> None:
        try:
            self.call(path, body)
        except EtcdAdminError as e:
            if not any(m in str(e) for m in NOT_FOUND):
                raise

    def ensure_auth(self) -> None:
        """``root`` with its password and role, and authentication on (nothing when it already is)."""
        with self._lock:
            self._token = self._authenticate()
        if self._token is not None:
            return
        self._ensure("/v3/auth/user/add", {"name": ROOT, "password": self.creds.password})
        self._ensure("/v3/auth/user/grant", {"user": ROOT, "role": ROOT})
        self.call("/v3/auth/enable", {})
        with self._lock:
            self._token = None

    def ensure_namespace(self, user: str, prefix: str) -> None:
        """``user`` (no password: it authenticates by its certificate's Common Name) with a role of its name
        granting read and write on the keys starting with ``prefix``, and only those."""
        self._ensure("/v3/auth/user/add", {"name": user, "options": {"no_password": True}})
        self._ensure("/v3/auth/role/add", {"name": user})
        perm = {"permType": "READWRITE", "key": _b64(prefix), "range_end": _b64(prefix_end(prefix))}
        self.call("/v3/auth/role/grant", {"name": user, "perm": perm})
        self._ensure("/v3/auth/user/grant", {"user": user, "role": user})

    def remove_namespace(self, user: str, prefix: str) -> None:
        """The user, its role and every key under ``prefix`` (a namespace that has no graph left)."""
        self._remove("/v3/auth/user/delete", {"name": user})
        self._remove("/v3/auth/role/delete", {"role": user})
        self.call("/v3/kv/deleterange", {"key": _b64(prefix), "range_end": _b64(prefix_end(prefix))})

    def keys(self, prefix: str = "") -> list[str]:
        """Every key starting with ``prefix`` (all keys when empty), as root sees them."""
        start, end = (_b64(prefix), _b64(prefix_end(prefix))) if prefix else (_b64("\0"), _b64("\0"))
        found = self.call("/v3/kv/range", {"key": start, "range_end": end, "keys_only": True}).get("kvs")
        return [base64.b64decode(kv["key"]).decode(errors="replace") for kv in found or []]

    def users(self) -> list[str]:
        return list(self.call("/v3/auth/user/list", {}).get("users") or [])
