"""Each graph namespace's own NATS account (OperatorConfiguration ``infrastructure.natsAuth.method:
namespaceAccount``, the platform's default with its bundled NATS).

What the namespace gets, all from the operator (``controllers/natsaccess.py`` issues and lists):

* a NATS **account** ``ns-<namespace>`` (JetStream on) in the accounts file the bundled NATS includes
  (``accounts.conf`` of the ConfigMap ``natsAuth.accountsConfigMap`` in the release namespace), whose one
  user is the certificate subject ``CN=ns:<namespace>`` (``tls { verify_and_map: true }``). Accounts are
  separate subject spaces: the runtime's subjects, streams and KV buckets need no prefix and no permission
  list, and no namespace sees another's;
* a **certificate** for that subject, signed by the platform's NATS CA, in the Secret
  ``natsAuth.secretName`` of the namespace (``ca.crt``, ``tls.crt``, ``tls.key``);
* in every graph pod's runtime containers: the Secret mounted read-only (``tls.key`` 0440) and
  ``NATS_TLS_CA_CERT_PATH`` / ``NATS_TLS_CLIENT_CERT_PATH`` / ``NATS_TLS_CLIENT_KEY_PATH`` pointing at it.

Two facts of the Dynamo runtime 1.6.1 (shown against a nats-server with ``verify_and_map``,
docs/security-network.md) shape the rest: it refuses a TLS configuration unless ``NATS_SERVER`` uses the
``tls://`` scheme, so the address's scheme is ``tls://`` here (host and port unchanged); and with no
``NATS_AUTH_*`` set it logs in as user ``user`` (password ``user``), which a server that takes the user from
the certificate refuses, so ``NATS_AUTH_USERNAME`` and ``NATS_AUTH_PASSWORD`` are set empty (nothing sent).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from . import names
from .context import RenderContext

METHOD = "namespaceAccount"
TLS_VOLUME, TLS_DIR = "dynamo-nats-client", "/etc/dynamo/nats-client"
LABEL_NATS_CLIENT = "nvidia.com/dynamo-nats-client"
ANN_ISSUED_FOR = "nvidia.com/dynamo-nats-client-for"  # the namespace the certificate was issued for
SECRET_TYPE = "kubernetes.io/tls"
ACCOUNTS_KEY = "accounts.conf"
SYSTEM_ACCOUNT = "SYS"
_ACCOUNT_LINE = re.compile(
    r'^  ns-([a-z0-9]([-a-z0-9]*[a-z0-9])?): \{ jetstream: enabled, users: \[ \{ user: "CN=ns:\1" \} \] \}$'
)


def common_name(namespace: str) -> str:
    """The Common Name of a namespace's certificate (as etcd's: ``ns:<namespace>``)."""
    return f"ns:{namespace}"


def user_name(namespace: str) -> str:
    """The account's one user: the certificate's subject as nats-server's ``verify_and_map`` writes it."""
    return f"CN={common_name(namespace)}"


def account_name(namespace: str) -> str:
    return f"ns-{namespace}"


def enabled(ctx: RenderContext) -> bool:
    return ctx.config("infrastructure", "natsAuth", "method") == METHOD and bool(
        ctx.config("infrastructure", "natsAddress")
    )


def admin_secret(ctx: RenderContext) -> tuple[str, str]:
    """(namespace, name) of the Secret with the NATS CA and its key (``ca.crt``, ``ca.key``), what the
    controller signs each namespace's certificate with; the accounts ConfigMap lives in that namespace too."""
    auth = ("infrastructure", "natsAuth")
    return str(ctx.config(*auth, "adminSecretNamespace")), str(ctx.config(*auth, "adminSecretName"))


def accounts_config_map(ctx: RenderContext) -> tuple[str, str]:
    """(namespace, name) of the ConfigMap whose ``accounts.conf`` the bundled NATS includes."""
    auth = ("infrastructure", "natsAuth")
    return str(ctx.config(*auth, "adminSecretNamespace")), str(ctx.config(*auth, "accountsConfigMap"))


def monitor_url(ctx: RenderContext) -> str:
    """The NATS server's monitoring endpoint ("" when not configured): where an account's load is seen."""
    return str(ctx.config("infrastructure", "natsAuth", "monitorURL") or "").rstrip("/")


def secret_name(ctx: RenderContext) -> str:
    return str(ctx.config("infrastructure", "natsAuth", "secretName"))


def client_secret(namespace: str, ctx: RenderContext) -> dict:
    """The Secret the operator keeps in ``namespace`` (without data: the controller issues it)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": secret_name(ctx),
            "namespace": namespace,
            "labels": {LABEL_NATS_CLIENT: "true", names.LABEL_MANAGED_BY: names.MANAGED_BY},
            "annotations": {ANN_ISSUED_FOR: namespace, names.ANN_OPERATOR_VERSION: ctx.operator_version},
        },
        "type": SECRET_TYPE,
    }


def is_ours(secret: dict) -> bool:
    labels = (secret.get("metadata") or {}).get("labels") or {}
    return labels.get(names.LABEL_MANAGED_BY) == names.MANAGED_BY and labels.get(LABEL_NATS_CLIENT) == "true"


def accounts_conf(namespaces: set[str] | list[str]) -> str:
    """The accounts file: the system account, then one account per namespace (sorted), each with JetStream
    on (the runtime keeps its KV buckets in streams) and its one certificate-mapped user."""
    lines = [f"  {SYSTEM_ACCOUNT}: {{}}"]
    lines += [
        f'  {account_name(ns)}: {{ jetstream: enabled, users: [ {{ user: "{user_name(ns)}" }} ] }}'
        for ns in sorted(set(namespaces))
    ]
    return "# written by the Dynamo operator (render/natsaccess.py): one account per graph namespace\n" + (
        "accounts: {\n" + "\n".join(lines) + "\n}\n"
    )


def listed_namespaces(text: str) -> set[str]:
    """The namespaces whose accounts ``text`` (an ``accounts_conf`` output) lists."""
    return {m.group(1) for m in map(_ACCOUNT_LINE.match, text.splitlines()) if m}


def server_address(address: str) -> str:
    """``NATS_SERVER`` for a client that speaks TLS: the runtime 1.6.1 insists on the ``tls://`` scheme
    then (it refuses ``nats://`` with TLS configured); host and port stay."""
    parts = urlsplit(address if "//" in address else f"nats://{address}")
    if parts.scheme == "tls":
        return address
    return urlunsplit(("tls", parts.netloc, parts.path, parts.query, parts.fragment))


def env() -> list[dict]:
    """The runtime's NATS variables of this mode (after ``NATS_SERVER``): the three files, and empty
    ``NATS_AUTH_USERNAME`` / ``NATS_AUTH_PASSWORD`` so that it sends no user of its own (its default is
    ``user``/``user``, which the certificate-mapped server refuses)."""
    return [
        {"name": "NATS_AUTH_USERNAME", "value": ""},
        {"name": "NATS_AUTH_PASSWORD", "value": ""},
        {"name": "NATS_TLS_CA_CERT_PATH", "value": f"{TLS_DIR}/ca.crt"},
        {"name": "NATS_TLS_CLIENT_CERT_PATH", "value": f"{TLS_DIR}/tls.crt"},
        {"name": "NATS_TLS_CLIENT_KEY_PATH", "value": f"{TLS_DIR}/tls.key"},
    ]


def volume(ctx: RenderContext) -> dict:
    items = [("ca.crt", 0o444), ("tls.crt", 0o444), ("tls.key", 0o440)]
    return {
        "name": TLS_VOLUME,
        "secret": {
            "secretName": secret_name(ctx),
            "items": [{"key": k, "path": k, "mode": m} for k, m in items],
        },
    }


def mount() -> dict:
    return {"name": TLS_VOLUME, "mountPath": TLS_DIR, "readOnly": True}
