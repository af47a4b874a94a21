"""Each graph namespace's own access to etcd (OperatorConfiguration ``infrastructure.etcdAuth.method:
namespaceCertificate``, the platform's default with its bundled etcd).

What the namespace gets, all from the operator (``controllers/etcdaccess.py`` issues and grants):

* an etcd **user** ``ns:<namespace>`` whose one role grants read and write on the key range
  ``ns/<namespace>/`` and nothing else (etcd RBAC; the user is the Common Name of the client certificate);
* a **certificate** for that Common Name, signed by the platform's etcd CA, in the Secret
  ``etcdAuth.secretName`` of the namespace (``ca.crt``, ``tls.crt``, ``tls.key``);
* in every pod of a graph on etcd discovery, two **sidecars** (native: init containers that keep
  running): ``etcd-tunnel`` (the operator's image, ``dynamo-operator etcd-tunnel``) opens each connection to
  etcd as mutual TLS with the certificate, read as files; ``etcd-proxy`` (etcd's own ``grpc-proxy``) prefixes
  every key with ``ns/<namespace>/``. The runtime is given ``ETCD_ENDPOINTS=http://127.0.0.1:23790`` and no
  credential at all: the tunnel's process serves it there (``etcdwatch.py``: etcd's proxy would end each
  of the runtime's watches at once, and the runtime would re-list and re-watch in a loop) and forwards to
  the proxy on 23792, which reaches etcd through the tunnel on 23791.

Why a proxy and not only a role per key prefix: the Dynamo runtime 1.6.1 reads ``v1/instances/`` and
``v1/mdc/`` whole (every namespace's registrations; its frontend filters them afterwards), so any role
that lets a graph work would let it read every other namespace's keys. Under the proxy the runtime's
``v1/...`` is ``ns/<namespace>/v1/...``: its global reads see its namespace alone, whatever key families
a later runtime adds. Why the tunnel: etcd's grpc-proxy refuses a client certificate with a Common Name,
and etcd names a certificate's user by its Common Name only; the runtime reads etcd credentials only from
environment variables (PEM text), so files reach etcd through the tunnel instead.

Graphs in one namespace share its root (the namespace is Kubernetes' boundary: whoever creates pods there
can mount its Secrets). Pods of graphs on Kubernetes discovery get neither sidecars nor ``ETCD_ENDPOINTS``.
"""

from __future__ import annotations

import copy
from urllib.parse import urlsplit

from . import names
from .context import RenderContext
from .errors import RenderError

METHOD = "namespaceCertificate"
# the runtime's (the watch keeper in the tunnel's process), the tunnel's, the gRPC proxy's
RUNTIME_PORT, TUNNEL_PORT, PROXY_PORT = 23790, 23791, 23792
PROXY_ADDRESS = f"http://127.0.0.1:{RUNTIME_PORT}"
TUNNEL_CONTAINER, PROXY_CONTAINER = "etcd-tunnel", "etcd-proxy"
TLS_VOLUME, TLS_DIR = "dynamo-etcd-client", "/etc/dynamo/etcd-client"
LABEL_ETCD_CLIENT = "nvidia.com/dynamo-etcd-client"
ANN_ISSUED_FOR = "nvidia.com/dynamo-etcd-client-for"  # the namespace the certificate was issued for
SECRET_TYPE = "kubernetes.io/tls"
SIDECAR_RESOURCES = {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}}
SIDECAR_SECURITY = {
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def user_name(namespace: str) -> str:
    """The etcd user (and role) of a namespace; the Common Name of its certificate."""
    return f"ns:{namespace}"


def key_root(namespace: str) -> str:
    """The key range a namespace owns; namespace names are DNS labels, so no root is another's prefix."""
    return f"ns/{namespace}/"


def enabled(ctx: RenderContext) -> bool:
    return ctx.config("infrastructure", "etcdAuth", "method") == METHOD and bool(
        ctx.config("infrastructure", "etcdAddress")
    )


def uses_etcd(discovery_backend: str) -> bool:
    return discovery_backend == "etcd"


def admin_secret(ctx: RenderContext) -> tuple[str, str]:
    """(namespace, name) of the Secret with the etcd CA and its key, the operator's client certificate (no
    Common Name) and root's password: what the controller signs with and administers etcd as."""
    auth = ("infrastructure", "etcdAuth")
    return str(ctx.config(*auth, "adminSecretNamespace")), str(ctx.config(*auth, "adminSecretName"))


def graph_uses_etcd(dgd: dict, ctx: RenderContext) -> bool:
    """A (v1beta1) graph has a component on etcd discovery: the rule ``info.component_info`` applies to
    each component (its pod template's annotation, else the graph's, else ``discovery.backend``)."""
    graph = ((dgd.get("metadata") or {}).get("annotations") or {}).get(names.ANN_DISCOVERY_BACKEND)
    for comp in (dgd.get("spec") or {}).get("components") or []:
        pod = ((comp.get("podTemplate") or {}).get("metadata") or {}).get("annotations") or {}
        if uses_etcd(pod.get(names.ANN_DISCOVERY_BACKEND) or graph or ctx.discovery_backend):
            return True
    return False


def secret_name(ctx: RenderContext) -> str:
    """``etcdAuth.secretName``: the client Secret's name in every graph namespace."""
    return str(ctx.config("infrastructure", "etcdAuth", "secretName"))


def client_secret(namespace: str, ctx: RenderContext) -> dict:
    """The Secret the operator keeps in ``namespace`` (without data: the controller issues it)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": secret_name(ctx),
            "namespace": namespace,
            "labels": {LABEL_ETCD_CLIENT: "true", names.LABEL_MANAGED_BY: names.MANAGED_BY},
            "annotations": {ANN_ISSUED_FOR: namespace, names.ANN_OPERATOR_VERSION: ctx.operator_version},
        },
        "type": SECRET_TYPE,
    }


def is_ours(secret: dict) -> bool:
    labels = (secret.get("metadata") or {}).get("labels") or {}
    return labels.get(names.LABEL_MANAGED_BY) == names.MANAGED_BY and labels.get(LABEL_ETCD_CLIENT) == "true"


def upstream(ctx: RenderContext, dcd: dict) -> tuple[str, str]:
    """(host:port, host) of the etcd the tunnel opens: the first of ``etcdAddress``'s endpoints."""
    first = str(ctx.config("infrastructure", "etcdAddress")).split(",")[0].strip()
    parts = urlsplit(first if "//" in first else f"https://{first}")
    if not parts.hostname:
        raise RenderError(
            dcd,
            "spec",
            f"infrastructure.etcdAddress {first!r} names no host",
            "set etcdAddress to https://host:port",
        )
    host = parts.hostname
    return f"{host if ':' not in host else f'[{host}]'}:{parts.port or 2379}", host


def _tls_volume(ctx: RenderContext) -> dict:
    secret = secret_name(ctx)
    items = [("ca.crt", 0o444), ("tls.crt", 0o444), ("tls.key", 0o440)]
    return {
        "name": TLS_VOLUME,
        "secret": {"secretName": secret, "items": [{"key": k, "path": k, "mode": m} for k, m in items]},
    }


def sidecars(namespace: str, ctx: RenderContext, dcd: dict) -> tuple[list[dict], list[dict]]:
    """(init containers that keep running, volumes): the tunnel first (the proxy connects through it)."""
    address, _ = upstream(ctx, dcd)
    tunnel = {
        "name": TUNNEL_CONTAINER,
        "image": str(ctx.config("images", "operator")),
        "restartPolicy": "Always",
        "command": ["dynamo-operator", "etcd-tunnel"],
        "args": [
            f"--listen=127.0.0.1:{TUNNEL_PORT}",
            f"--upstream={address}",
            f"--tls-dir={TLS_DIR}",
            f"--watch-listen=127.0.0.1:{RUNTIME_PORT}",
            f"--watch-upstream=127.0.0.1:{PROXY_PORT}",
        ],
        "resources": copy.deepcopy(SIDECAR_RESOURCES),
        "securityContext": copy.deepcopy(SIDECAR_SECURITY),
        "volumeMounts": [{"name": TLS_VOLUME, "mountPath": TLS_DIR, "readOnly": True}],
    }
    proxy = {
        "name": PROXY_CONTAINER,
        "image": str(ctx.config("infrastructure", "etcdAuth", "proxyImage")),
        "restartPolicy": "Always",
        "command": ["/usr/local/bin/etcd", "grpc-proxy", "start"],
        "args": [
            f"--endpoints=http://127.0.0.1:{TUNNEL_PORT}",
            f"--listen-addr=127.0.0.1:{PROXY_PORT}",
            f"--namespace={key_root(namespace)}",
        ],
        "resources": copy.deepcopy(SIDECAR_RESOURCES),
        "securityContext": copy.deepcopy(SIDECAR_SECURITY),
    }
    return [tunnel, proxy], [_tls_volume(ctx)]
