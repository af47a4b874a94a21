"""Admission (validating, defaulting) and conversion webhooks over TLS, with self-managed certificates.

``setup_webhooks(manager, config)`` wires everything into a :class:`~dynamo_operator.runtime.Manager`:

* the HTTPS server (:mod:`.server`) on every replica (``server.webhook.host``/``port``, default
  ``0.0.0.0:9443``), ready once it serves a certificate (readiness check ``webhook-server``);
* the certificate manager (:mod:`.certs`): every replica serves what the Secret (``auto``) or ``certDir``
  (``manual``) holds; the leader creates/rotates the Secret and injects the CA bundle;
* admission skips namespaces held by a namespace-restricted operator (``manager.is_namespace_excluded``).

Local runs reach the webhook by URL (``clientConfig.url: https://127.0.0.1:9443/...``): pass ``url_base``
(CLI ``--webhook-url-base``) so the serving certificate also carries that host (and ``localhost``).
"""

from __future__ import annotations

import os
import sys
import urllib.parse
from dataclasses import dataclass
from typing import Any

from dynamo_operator.api import registry
from dynamo_operator.api.config import effective, lookup
from dynamo_operator.render.context import GROVE, INTEGRATION_GROUPS
from dynamo_operator.runtime.discovery import ApiGroupDetector
from dynamo_operator.tunables import WebhookTunables

from .certs import CertManager, CertPolicy, TLSContextHolder
from .server import AdmissionSettings, WebhookApp, WebhookServer, admission_path, admission_routes

GROVE_GROUP = INTEGRATION_GROUPS[GROVE]

__all__ = [
    "CertManager",
    "CertPolicy",
    "TLSContextHolder",
    "WebhookApp",
    "WebhookServer",
    "Webhooks",
    "admission_path",
    "admission_routes",
    "service_hosts",
    "setup_webhooks",
]


def service_hosts(service: str, namespace: str, url_base: str | None = None) -> list[str]:
    """Serving-certificate hosts: the Service's DNS names, plus the URL's host (and localhost) when given."""
    hosts = [
        f"{service}.{namespace}.svc",
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc.cluster.local",
    ]
    if url_base:
        host = urllib.parse.urlsplit(url_base).hostname
        if host:
            hosts.append(host)
        if host in ("127.0.0.1", "::1", "localhost"):
            hosts += ["localhost", "127.0.0.1"]
    return list(dict.fromkeys(hosts))


@dataclass
class Webhooks:
    app: WebhookApp
    server: WebhookServer
    certs: CertManager
    tls: TLSContextHolder


def operator_usernames(namespace: str | None, extra: tuple[str, ...] = ()) -> frozenset[str]:
    """The operator's service account (downward API ``POD_SERVICE_ACCOUNT`` + namespace), plus ``extra``."""
    names = set(extra)
    sa = os.environ.get("POD_SERVICE_ACCOUNT")
    if sa and namespace:
        names.add(f"system:serviceaccount:{namespace}:{sa}")
    return frozenset(names)


def _admission_app(
    manager: Any,
    doc: dict,
    users: frozenset[str],
    checkpoint_enabled: bool | None,
    tunables: WebhookTunables,
) -> WebhookApp:
    """The admission and conversion handlers, with what the rules need to know about the operator."""
    if checkpoint_enabled is None:
        checkpoint_enabled = bool(lookup(doc, "checkpoint.enabled"))
    grove_cfg = lookup(doc, "orchestrators.grove.enabled")
    return WebhookApp(
        AdmissionSettings(
            operator_usernames=users,
            operator_version=getattr(manager.settings, "operator_version", None),
            grove_enabled=ApiGroupDetector(manager.client, GROVE_GROUP, grove_cfg, tunables.discovery_ttl),
            checkpoint_enabled=checkpoint_enabled,
            ingress=dict(lookup(doc, "ingress") or {}),
            is_namespace_excluded=manager.is_namespace_excluded,
            metrics=getattr(manager, "metrics", None),
        )
    )


def setup_webhooks(
    manager: Any,
    config: Any = None,
    *,
    host: str | None = None,
    port: int | None = None,
    cert_dir: str | None = None,
    cert_mode: str | None = None,
    url_base: str | None = None,
    namespace: str | None = None,
    policy: CertPolicy | None = None,
    extra_operator_usernames: tuple[str, ...] = (),
    checkpoint_enabled: bool | None = None,
    tunables: WebhookTunables | None = None,
) -> Webhooks:
    """Create the webhook server and certificate manager and register them with ``manager``.

    Arguments override the OperatorConfiguration ``config`` (model, document or None for the defaults):
    ``server.webhook.{host,port,certDir,certProvisionMode,secretName,serviceName}``,
    ``security.enableHTTP2``, ``orchestrators.grove.enabled``, ``checkpoint.enabled``. ``namespace`` (where
    the Secret lives and what the configurations' namespace label must say) defaults to the manager's
    ``pod_namespace`` (``POD_NAMESPACE``), then its restricted namespace, then ``dynamo-system``.
    """
    settings = manager.settings
    tunables = tunables or WebhookTunables()
    doc = effective(config)
    host = host or lookup(doc, "server.webhook.host")
    port = port if port is not None else int(lookup(doc, "server.webhook.port"))
    cert_dir = cert_dir or lookup(doc, "server.webhook.certDir")
    mode = str(cert_mode or lookup(doc, "server.webhook.certProvisionMode")).lower()
    if mode not in ("auto", "manual"):
        raise ValueError(
            f"OperatorConfiguration server.webhook.certProvisionMode is {mode!r}; set it to auto (the "
            "operator manages the certificate) or manual (certificates from certDir, e.g. cert-manager)"
        )
    secret_name = lookup(doc, "server.webhook.secretName")
    service = lookup(doc, "server.webhook.serviceName", registry.CONVERSION_SERVICE_NAME)
    namespace = (
        namespace
        or getattr(settings, "pod_namespace", None)
        or getattr(settings, "restricted_namespace", None)
        or registry.CONVERSION_SERVICE_NAMESPACE
    )
    enable_http2 = bool(lookup(doc, "security.enableHTTP2"))
    cluster_wide = bool(getattr(settings, "cluster_wide", True))
    sys.setswitchinterval(min(sys.getswitchinterval(), tunables.gil_switch_interval))
    tls = TLSContextHolder(enable_http2=enable_http2)
    users = operator_usernames(namespace, extra_operator_usernames)
    app = _admission_app(manager, doc, users, checkpoint_enabled, tunables)
    server = WebhookServer(app, host=host, port=port, tls=tls, enable_http2=enable_http2)
    certs = CertManager(
        client=manager.client,
        namespace=namespace,
        hosts=service_hosts(service, namespace, url_base),
        holder=tls,
        mode=mode,
        secret_name=secret_name,
        cert_dir=cert_dir,
        policy=policy or CertPolicy(),
        inject_webhooks=True,
        inject_crds=cluster_wide,
        conversion_url=f"{url_base.rstrip('/')}{registry.CONVERSION_PATH}" if url_base else None,
    )
    manager.add_runnable(server.run, needs_leader=False, name="webhook-server")
    manager.add_runnable(certs.run_loader, needs_leader=False, name="webhook-cert-loader")
    manager.add_runnable(certs.run_leader, needs_leader=True, name="webhook-cert-manager")
    manager.add_runnable(certs.run_watcher, needs_leader=True, name="webhook-cabundle-watch")
    manager.add_readiness_check("webhook-server", server.ready)
    manager.add_readiness_check("webhook-callers", certs.callers_trust_us)
    return Webhooks(app, server, certs, tls)
