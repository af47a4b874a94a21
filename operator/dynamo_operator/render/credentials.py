"""NATS / etcd credentials passed to every component (OperatorConfiguration ``infrastructure.natsAuth``,
``natsTLS`` and ``etcdAuth``, a dynamo-platform extension; nothing is added while they are unset).

The variable names are the Dynamo runtime's own (``lib/runtime/src/config/environment_names.rs``):

* NATS: ``NATS_AUTH_USERNAME`` + ``NATS_AUTH_PASSWORD``, ``NATS_AUTH_TOKEN`` or
  ``NATS_AUTH_CREDENTIALS_FILE`` (a path); TLS: ``NATS_TLS_CA_CERT_PATH``, ``NATS_TLS_CLIENT_CERT_PATH``,
  ``NATS_TLS_CLIENT_KEY_PATH`` (paths). With TLS ``NATS_SERVER`` gets the ``tls://`` scheme (``env.py``):
  the runtime 1.6.1 refuses TLS files with a ``nats://`` address. Each namespace's own NATS account
  (``natsaccess.py``, method ``namespaceAccount``) mounts the namespace's certificate instead.
* etcd: ``ETCD_AUTH_USERNAME`` + ``ETCD_AUTH_PASSWORD``, or ``ETCD_AUTH_CA`` + ``ETCD_AUTH_CLIENT_CERT`` +
  ``ETCD_AUTH_CLIENT_KEY``, which the runtime's etcd client parses as PEM *text* (``Certificate::from_pem``
  on the variable's value), so they come from the Secret's keys directly, not as file paths.

Secrets are referenced in the component's own namespace (a pod can read no other); the operator reads
none of them. Values travel as ``secretKeyRef``s, files as a read-only Secret volume whose private parts
are 0440 (root and the pod's fsGroup, 1000 by default).
"""

from __future__ import annotations

from . import natsaccess
from .context import RenderContext

NATS_AUTH_VOLUME = "dynamo-nats-auth"
NATS_AUTH_DIR = "/etc/dynamo/nats-auth"
NATS_CREDS_KEY = "nats.creds"
NATS_TLS_VOLUME = "dynamo-nats-tls"
NATS_TLS_DIR = "/etc/dynamo/nats-tls"
CA_KEY, CERT_KEY, KEY_KEY = "ca.crt", "tls.crt", "tls.key"
PUBLIC_MODE, PRIVATE_MODE = 0o444, 0o440


def _secret_env(var: str, secret: str, key: str) -> dict:
    return {"name": var, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def _value(name: str, value: str) -> dict:
    return {"name": name, "value": value}


def nats_env(ctx: RenderContext) -> list[dict]:
    """NATS_AUTH_* and NATS_TLS_* for ``infrastructure.natsAuth`` / ``natsTLS``."""
    env: list[dict] = []
    method = ctx.config("infrastructure", "natsAuth", "method")
    secret = ctx.config("infrastructure", "natsAuth", "secretName")
    if method == "userPassword":
        env += [
            _secret_env("NATS_AUTH_USERNAME", secret, "username"),
            _secret_env("NATS_AUTH_PASSWORD", secret, "password"),
        ]
    elif method == "token":
        env.append(_secret_env("NATS_AUTH_TOKEN", secret, "token"))
    elif method == "credentialsFile":
        env.append(_value("NATS_AUTH_CREDENTIALS_FILE", f"{NATS_AUTH_DIR}/{NATS_CREDS_KEY}"))
    elif method == natsaccess.METHOD:
        return natsaccess.env() if natsaccess.enabled(ctx) else []
    if ctx.config("infrastructure", "natsTLS", "secretName"):
        env.append(_value("NATS_TLS_CA_CERT_PATH", f"{NATS_TLS_DIR}/{CA_KEY}"))
        if ctx.config("infrastructure", "natsTLS", "clientCertificate"):
            env += [
                _value("NATS_TLS_CLIENT_CERT_PATH", f"{NATS_TLS_DIR}/{CERT_KEY}"),
                _value("NATS_TLS_CLIENT_KEY_PATH", f"{NATS_TLS_DIR}/{KEY_KEY}"),
            ]
    return env


def etcd_env(ctx: RenderContext) -> list[dict]:
    """ETCD_AUTH_* for ``infrastructure.etcdAuth``."""
    method = ctx.config("infrastructure", "etcdAuth", "method")
    secret = ctx.config("infrastructure", "etcdAuth", "secretName")
    if method == "userPassword":
        return [
            _secret_env("ETCD_AUTH_USERNAME", secret, "username"),
            _secret_env("ETCD_AUTH_PASSWORD", secret, "password"),
        ]
    if method == "clientCertificate":
        return [
            _secret_env("ETCD_AUTH_CA", secret, CA_KEY),
            _secret_env("ETCD_AUTH_CLIENT_CERT", secret, CERT_KEY),
            _secret_env("ETCD_AUTH_CLIENT_KEY", secret, KEY_KEY),
        ]
    return []


def credential_env(ctx: RenderContext) -> list[dict]:
    """Every credential variable, NATS first (appended after the infrastructure addresses)."""
    return nats_env(ctx) + etcd_env(ctx)


def _secret_volume(name: str, secret: str, items: list[tuple[str, int]]) -> dict:
    return {
        "name": name,
        "secret": {
            "secretName": secret,
            "items": [{"key": k, "path": k, "mode": mode} for k, mode in items],
        },
    }


def credential_volumes(ctx: RenderContext) -> tuple[list[dict], list[dict]]:
    """(volumes, ``main`` mounts) for the credentials that are files: a NATS credentials file and the
    NATS TLS material. Only the keys the runtime is told about are projected."""
    volumes: list[dict] = []
    mounts: list[dict] = []
    if ctx.config("infrastructure", "natsAuth", "method") == "credentialsFile":
        secret = ctx.config("infrastructure", "natsAuth", "secretName")
        volumes.append(_secret_volume(NATS_AUTH_VOLUME, secret, [(NATS_CREDS_KEY, PRIVATE_MODE)]))
        mounts.append({"name": NATS_AUTH_VOLUME, "mountPath": NATS_AUTH_DIR, "readOnly": True})
    if natsaccess.enabled(ctx):  # the namespace's own certificate (natsaccess.py); no shared TLS Secret
        return [natsaccess.volume(ctx)], [natsaccess.mount()]
    secret = ctx.config("infrastructure", "natsTLS", "secretName")
    if secret:
        items = [(CA_KEY, PUBLIC_MODE)]
        if ctx.config("infrastructure", "natsTLS", "clientCertificate"):
            items += [(CERT_KEY, PUBLIC_MODE), (KEY_KEY, PRIVATE_MODE)]
        volumes.append(_secret_volume(NATS_TLS_VOLUME, secret, items))
        mounts.append({"name": NATS_TLS_VOLUME, "mountPath": NATS_TLS_DIR, "readOnly": True})
    return volumes, mounts
