"""Admission (validating, defaulting) and conversion webhooks over TLS, with self-managed certificates.

``setup_webhooks(manager, config)`` wires everything into a :class:`~dynamo_operator.runtime.Manager`:

* the HTTPS server (:mod:`.server`) on every replica (``server.webhook.host``/``port``, default
  ``0.0.0.0:9443``), ready once it serves a certificate and while its loop and workers answer (readiness
  check ``webhook-server``; not while clients merely queue), on leaders and non-leaders alike;
* the certificate manager (:mod:`.certs`): every replica serves what the Secret (``auto``) or ``certDir``
  (``manual``) holds; the leader creates/rotates the Secret and injects the CA bundle;
* admission skips namespaces held by a namespace-restricted operator (``manager.is_namespace_excluded``).

Local runs reach the webhook by URL (``clientConfig.url: https://127.0.0.1:9443/...``): pass ``url_base``
(CLI ``--webhook-url-base``) so the serving certificate also carries that host (and ``localhost``).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from dynamo_operator.api import registry
from dynamo_operator.api.config import DEFAULT_PROFILER_IMAGE, effective, lookup
from dynamo_operator.certsecret import service_hosts
from dynamo_operator.render.context import DRA, GROVE, INFERENCE_POOL, INTEGRATION_GROUPS
from dynamo_operator.runtime.discovery import ApiGroupDetector
from dynamo_operator.tunables import WebhookTunables

from .certs import CertManager, CertPolicy, TLSContextHolder
from .server import AdmissionSettings, WebhookApp, WebhookServer, admission_path, admission_routes
from .validation import PodTemplatePolicy

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


@dataclass
class _Where:
    """Where the webhook serves and keeps its certificate, from the arguments and the configuration."""

    host: str
    port: int
    cert_dir: str | None
    mode: str
    secret_name: str
    service: str
    namespace: str


def _where(settings: Any, doc: dict, **given: Any) -> _Where:
    mode = str(given["cert_mode"] or lookup(doc, "server.webhook.certProvisionMode")).lower()
    if mode not in ("auto", "manual"):
        raise ValueError(
            f"OperatorConfiguration server.webhook.certProvisionMode is {mode!r}; set it to auto (the "
            "operator manages the certificate) or manual (certificates from certDir, e.g. cert-manager)"
        )
    port = given["port"]
    return _Where(
        host=given["host"] or lookup(doc, "server.webhook.host"),
        port=port if port is not None else int(lookup(doc, "server.webhook.port")),
        cert_dir=given["cert_dir"] or lookup(doc, "server.webhook.certDir"),
        mode=mode,
        secret_name=lookup(doc, "server.webhook.secretName"),
        service=lookup(doc, "server.webhook.serviceName", registry.CONVERSION_SERVICE_NAME),
        namespace=(
            given["namespace"]
            or getattr(settings, "pod_namespace", None)
            or getattr(settings, "restricted_namespace", None)
            or registry.CONVERSION_SERVICE_NAMESPACE
        ),
    )


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
    ttl = tunables.discovery_ttl
    return WebhookApp(
        AdmissionSettings(
            operator_usernames=users,
            operator_version=getattr(manager.settings, "operator_version", None),
            grove_enabled=ApiGroupDetector(manager.client, GROVE_GROUP, grove_cfg, ttl),
            checkpoint_enabled=checkpoint_enabled,
            ingress=dict(lookup(doc, "ingress") or {}),
            profiler_image=lookup(doc, "images.profiler", DEFAULT_PROFILER_IMAGE),
            dra_enabled=ApiGroupDetector(
                manager.client, INTEGRATION_GROUPS[DRA], lookup(doc, "dra.enabled", None), ttl
            ),
            inference_pool_served=ApiGroupDetector(
                manager.client, INTEGRATION_GROUPS[INFERENCE_POOL], None, ttl
            ),
            is_namespace_excluded=manager.is_namespace_excluded,
            pod_templates=PodTemplatePolicy.from_config(doc),
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
    metrics_service: str | None = None,
) -> Webhooks:
    """Create the webhook server and certificate manager and register them with ``manager``.

    Arguments override the OperatorConfiguration ``config`` (model, document or None for the defaults):
    ``server.webhook.{host,port,certDir,certProvisionMode,secretName,serviceName}``,
    ``security.enableHTTP2``, ``orchestrators.grove.enabled``, ``checkpoint.enabled``. ``namespace`` (where
    the Secret lives and what the configurations' namespace label must say) defaults to the manager's
    ``pod_namespace`` (``POD_NAMESPACE``), then its restricted namespace, then ``dynamo-system``.
    ``metrics_service`` (default: env ``METRICS_SERVICE_NAME``, which the chart sets) adds the metrics
    Service's names to the serving certificate, and the manager's secure metrics listener then serves that
    certificate, so a scrape can verify it against the CA (the ServiceMonitor does).
    """
    settings = manager.settings
    tunables = tunables or WebhookTunables()
    doc = effective(config)
    where = _where(
        settings,
        doc,
        host=host,
        port=port,
        cert_dir=cert_dir,
        cert_mode=cert_mode,
        namespace=namespace,
    )
    enable_http2 = bool(lookup(doc, "security.enableHTTP2"))
    metrics_service = metrics_service or os.environ.get("METRICS_SERVICE_NAME") or None
    sys.setswitchinterval(min(sys.getswitchinterval(), tunables.gil_switch_interval))
    tls = TLSContextHolder(enable_http2=enable_http2)
    users = operator_usernames(where.namespace, extra_operator_usernames)
    app = _admission_app(manager, doc, users, checkpoint_enabled, tunables)
    server = WebhookServer(app, host=where.host, port=where.port, tls=tls, enable_http2=enable_http2)
    certs = CertManager(
        client=manager.client,
        namespace=where.namespace,
        hosts=service_hosts(
            where.service, where.namespace, url_base, (metrics_service,) if metrics_service else ()
        ),
        holder=tls,
        mode=where.mode,
        secret_name=where.secret_name,
        cert_dir=where.cert_dir,
        policy=policy or CertPolicy(),
        inject_webhooks=True,
        inject_crds=bool(getattr(settings, "cluster_wide", True)),
        conversion_url=f"{url_base.rstrip('/')}{registry.CONVERSION_PATH}" if url_base else None,
    )
    _register(manager, server, certs, tls, metrics_service)
    return Webhooks(app, server, certs, tls)


def _register(
    manager: Any,
    server: WebhookServer,
    certs: CertManager,
    tls: TLSContextHolder,
    metrics_service: str | None,
) -> None:
    """Every replica serves (and is ready once it serves and its callers trust the CA); the leader alone
    writes the Secret and the caBundles."""
    manager.add_runnable(server.run, needs_leader=False, name="webhook-server")
    manager.add_runnable(certs.run_loader, needs_leader=False, name="webhook-cert-loader")
    manager.add_runnable(certs.run_leader, needs_leader=True, name="webhook-cert-manager")
    manager.add_runnable(certs.run_watcher, needs_leader=True, name="webhook-cabundle-watch")
    manager.add_readiness_check("webhook-server", server.ready)
    manager.add_readiness_check("webhook-callers", certs.callers_trust_us)
    metrics_server = getattr(manager, "metrics_server", None)
    if metrics_service and metrics_server is not None and not getattr(metrics_server, "cert_dir", None):
        metrics_server.serve_certificate_from(tls.context)
