"""OperatorConfiguration (operator.config.dynamo.nvidia.com/v1alpha1): load, default, validate.

The operator reads one YAML file (``--config``, mounted from the chart's ConfigMap). Defaults are filled
in before validation so an empty file or no file at all gives a working cluster-wide operator, and every
error names the offending field with its dotted path (``server.webhook.port: ...``) because the message
ends up in a crash-looping pod's log where nothing else points at the culprit.
"""

from __future__ import annotations

import copy
import difflib
import importlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import yaml

from dynamo_operator import __version__
from dynamo_operator.api.config.unsupported import unsupported_errors
from dynamo_operator.api.quantity import parse_quantity

if TYPE_CHECKING:
    from dynamo_operator.api.config.types import *  # noqa: F403
    from dynamo_operator.api.config.types import CheckpointPVCConfig, OperatorConfiguration

API_VERSION = "operator.config.dynamo.nvidia.com/v1alpha1"
KIND = "OperatorConfiguration"
# this project's operator image at this version: what the chart runs unless told otherwise (never a
# floating tag; the chart passes the image it deploys, digest included, through images.operator)
OPERATOR_IMAGE = f"ghcr.io/dynamo-platform/dynamo-operator:{__version__}"
# a DynamoGraphDeploymentRequest's profiler when it names none (v1beta1 ``spec.image``): upstream defaults
# it to dynamo-planner at the operator's Dynamo release; this is the release of the API reference we
# implement (its examples name dynamo-planner:1.2.1). The chart sets images.profiler from dgdr.profilerImage.
DEFAULT_PROFILER_IMAGE = "nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.2.1"
# the checkpoint cleanup Jobs' image when none is configured (upstream's chart default; a POSIX shell and rm)
DEFAULT_CHECKPOINT_CLEANUP_IMAGE = "busybox:1.36"
# the access modes of the checkpoint claim the operator creates (checkpoint.storage.pvc.create), upstream's
CHECKPOINT_ACCESS_MODES = ("ReadWriteOnce", "ReadWriteMany")

DEFAULTS: dict[str, Any] = {
    "server": {
        "metrics": {"bindAddress": "0.0.0.0", "port": 8080, "secure": True},
        "healthProbe": {"bindAddress": "0.0.0.0", "port": 8081},
        "webhook": {
            "host": "0.0.0.0",
            "port": 9443,
            "certDir": "/tmp/k8s-webhook-server/serving-certs",
            "certProvisionMode": "auto",
            "secretName": "webhook-server-cert",
        },
    },
    "leaderElection": {"enabled": False},
    "namespace": {"restricted": "", "scope": {"leaseDuration": "30s", "leaseRenewInterval": "10s"}},
    "orchestrators": {"grove": {"terminationDelay": "15m"}},
    "checkpoint": {
        "enabled": False,
        "storage": {"type": "pvc", "pvc": {"pvcName": "chrek-pvc", "basePath": "/checkpoints"}},
        "cleanupImage": DEFAULT_CHECKPOINT_CLEANUP_IMAGE,
    },
    "discovery": {"backend": "kubernetes"},
    "gpu": {"discoveryEnabled": True},
    "logging": {"level": "info", "format": "json"},
    "security": {
        "enableHTTP2": False,
        "workloads": {
            "restrictedSecurityContext": False,
            "podTemplates": {"action": "Warn"},
            "imagePullSecretDiscovery": True,
        },
    },
    "images": {"operator": OPERATOR_IMAGE, "profiler": DEFAULT_PROFILER_IMAGE},
    "mpi": {"sshNetworkPolicy": True, "sshSecretCopy": True},
}
ISTIO_DEFAULTS: dict[str, Any] = {"tlsMode": "SIMPLE", "insecureSkipVerify": True}
LOG_LEVELS = ("debug", "info", "warn", "warning", "error")
LOG_FORMATS = ("json", "text")
ISTIO_TLS_MODES = ("DISABLE", "SIMPLE", "ISTIO_MUTUAL", "MUTUAL")

_DURATION_RE = re.compile(r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def __getattr__(name: str) -> Any:
    """The configuration's pydantic models (``types``), loaded on first use: building their classes costs
    a measurable part of ``dynamo-operator render``'s start (issue 34), and rendering without ``--config``
    needs only ``DEFAULTS``, ``effective`` and ``lookup`` from here."""
    types = importlib.import_module(f"{__name__}.types")  # not ``from . import``: that asks __getattr__
    if name in types.__all__:
        return getattr(types, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ConfigError(ValueError):
    """The configuration is invalid; ``errors`` lists ``(field path, message)`` pairs and ``source`` names
    the file they came from (set by ``load_operator_config``), so the one line a crash-looping pod logs says
    which file, which key, and what to do."""

    def __init__(self, errors: list[tuple[str, str]], source: str | None = None) -> None:
        self.errors = errors
        self.source = source
        where = f" in {source}" if source else ""
        super().__init__(
            f"invalid OperatorConfiguration{where}: " + "; ".join(f"{p}: {m}" for p, m in errors)
        )


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string (``30s``, ``1m30s``, ``15m``); ValueError if malformed."""
    if text == "0":
        return 0.0
    if not _DURATION_RE.match(text):
        raise ValueError(f"{text!r} is not a duration (for example 30s, 15m, 1h)")
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(text))


def _merge(defaults: Any, given: Any) -> Any:
    if isinstance(defaults, dict) and isinstance(given, dict):
        out = copy.deepcopy(defaults)
        for key, value in given.items():
            out[key] = _merge(defaults.get(key), value) if key in defaults else copy.deepcopy(value)
        return out
    return copy.deepcopy(given) if given is not None else copy.deepcopy(defaults)


def with_defaults(raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` with every unset field that has a default filled in (explicit values always win)."""
    out = _merge(DEFAULTS, raw)
    mesh = out.get("serviceMesh") or {}
    if mesh.get("provider") == "istio":
        mesh["istio"] = _merge(ISTIO_DEFAULTS, mesh.get("istio") or {})
    return out


def _semantic_errors(cfg: OperatorConfiguration) -> list[tuple[str, str]]:
    errors: list[tuple[str, str]] = unsupported_errors(cfg)  # keys nothing would act on: refused
    server = cfg.server
    assert server is not None and server.metrics and server.health_probe and server.webhook
    for path, port in (
        ("server.metrics.port", server.metrics.port),
        ("server.healthProbe.port", server.health_probe.port),
        ("server.webhook.port", server.webhook.port),
    ):
        if port is None or not 0 <= port <= 65535:
            errors.append((path, f"must be a port number between 0 and 65535, got {port}"))
    if cfg.leader_election and cfg.leader_election.enabled and not cfg.leader_election.id:
        errors.append(("leaderElection.id", "is required when leaderElection.enabled is true"))
    scope = cfg.namespace.scope if cfg.namespace else None
    if scope is not None:
        durations: dict[str, float] = {}
        for path, value in (
            ("namespace.scope.leaseDuration", scope.lease_duration),
            ("namespace.scope.leaseRenewInterval", scope.lease_renew_interval),
        ):
            try:
                durations[path] = parse_duration(value or "")
            except ValueError as exc:
                errors.append((path, str(exc)))
                continue
            if durations[path] <= 0:
                errors.append((path, "must be greater than zero"))
        lease = durations.get("namespace.scope.leaseDuration")
        renew = durations.get("namespace.scope.leaseRenewInterval")
        if lease and renew and renew >= lease:
            errors.append(("namespace.scope.leaseRenewInterval", "must be shorter than leaseDuration"))
    grove = cfg.orchestrators.grove if cfg.orchestrators else None
    if grove is not None and grove.termination_delay is not None:
        try:
            parse_duration(grove.termination_delay)
        except ValueError as exc:
            errors.append(("orchestrators.grove.terminationDelay", str(exc)))
    infra = cfg.infrastructure
    if infra is not None and infra.model_express_url:
        parsed = urlparse(infra.model_express_url)
        if not parsed.scheme or not parsed.netloc:
            errors.append(("infrastructure.modelExpressURL", f"{infra.model_express_url!r} is not a URL"))
    if cfg.logging is not None:
        if cfg.logging.level not in LOG_LEVELS:
            errors.append(("logging.level", f"must be one of {', '.join(LOG_LEVELS)}"))
        if cfg.logging.format not in LOG_FORMATS:
            errors.append(("logging.format", f"must be one of {', '.join(LOG_FORMATS)}"))
    mesh = cfg.service_mesh
    if mesh is not None and mesh.provider not in (None, "", "istio"):
        errors.append(("serviceMesh.provider", "must be 'istio' or empty"))
    if mesh is not None and mesh.istio is not None:
        if mesh.istio.tls_mode not in ISTIO_TLS_MODES:
            errors.append(("serviceMesh.istio.tlsMode", f"must be one of {', '.join(ISTIO_TLS_MODES)}"))
        if mesh.istio.tls_mode == "MUTUAL":
            for name, value in (
                ("clientCertificate", mesh.istio.client_certificate),
                ("privateKey", mesh.istio.private_key),
            ):
                if not value:
                    errors.append((f"serviceMesh.istio.{name}", "is required when tlsMode is MUTUAL"))
    storage = cfg.checkpoint.storage if cfg.checkpoint else None
    if storage is not None and storage.type not in (None, "pvc", "s3", "oci"):
        errors.append(("checkpoint.storage.type", "must be pvc (s3 and oci are accepted but ignored)"))
    errors += _checkpoint_claim_errors(storage.pvc if storage is not None else None)
    return errors + _credential_errors(cfg) + _workload_errors(cfg) + _rbac_errors(cfg) + _ingress_errors(cfg)


def _checkpoint_claim_errors(pvc: CheckpointPVCConfig | None) -> list[tuple[str, str]]:
    """The claim the operator creates with ``create`` (render/checkpoint_storage.py) must be creatable:
    a positive size and one of upstream's access modes; its name and mount path are Kubernetes'."""
    if pvc is None:
        return []
    path = "checkpoint.storage.pvc"
    errors = []
    if pvc.pvc_name is not None and not _DNS_SUBDOMAIN.match(pvc.pvc_name):
        errors.append(
            (f"{path}.pvcName", f"{pvc.pvc_name!r} is not a claim name (a lower-case DNS subdomain)")
        )
    if pvc.base_path is not None and not pvc.base_path.startswith("/"):
        errors.append((f"{path}.basePath", f"{pvc.base_path!r} must be an absolute path (the mount path)"))
    if pvc.access_mode and pvc.access_mode not in CHECKPOINT_ACCESS_MODES:
        modes = " or ".join(CHECKPOINT_ACCESS_MODES)
        errors.append((f"{path}.accessMode", f"{pvc.access_mode!r} is not supported; use {modes}"))
    if pvc.create and not pvc.size:
        errors.append((f"{path}.size", "is required with create: true (the storage the claim requests)"))
    elif pvc.size:
        try:
            positive = parse_quantity(pvc.size) > 0
        except ValueError:
            positive = False
        if not positive:
            errors.append((f"{path}.size", f"{pvc.size!r} is not a positive quantity such as 100Gi"))
    return errors


_ANNOTATION_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
_GATEWAY = re.compile(r"^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def _ingress_errors(cfg: OperatorConfiguration) -> list[tuple[str, str]]:
    """The ingress policy's lists spelled as Kubernetes and Istio spell them, so a typo does not silently
    allow nothing (or, for a suffix, refuse every host)."""
    ingress = cfg.ingress
    if ingress is None:
        return []
    checks = (
        ("allowedAnnotations", ingress.allowed_annotations, _ANNOTATION_KEY, 'an annotation key (or "*")'),
        ("allowedHostSuffixes", ingress.allowed_host_suffixes, _DNS_SUBDOMAIN, "a lower-case DNS domain"),
        ("allowedGateways", ingress.allowed_gateways, _GATEWAY, "an Istio gateway (namespace/name)"),
    )
    errors = []
    for key, values, pattern, what in checks:
        for i, value in enumerate(values or []):
            if not (pattern.match(value) or (key == "allowedAnnotations" and value == "*")):
                errors.append((f"ingress.{key}[{i}]", f"{value!r} is not {what}"))
    return errors


def _rbac_errors(cfg: OperatorConfiguration) -> list[tuple[str, str]]:
    """A discovery Role lives in one namespace: it is bound only by a namespace-restricted operator, and
    a graph's discovery account is bound to one role, never two."""
    rbac = cfg.rbac
    if rbac is None or not rbac.discovery_role_name:
        return []
    path = "rbac.discoveryRoleName"
    if not (cfg.namespace and cfg.namespace.restricted):
        return [
            (
                path,
                "a Role exists in one namespace only, so it is used only with namespace.restricted; "
                "a cluster-wide operator binds rbac.discoveryClusterRoleName instead",
            )
        ]
    if rbac.discovery_cluster_role_name:
        return [(path, "set either discoveryRoleName or discoveryClusterRoleName, not both")]
    if not _DNS_SUBDOMAIN.match(rbac.discovery_role_name):
        return [(path, f"{rbac.discovery_role_name!r} is not a Role name (a lower-case DNS subdomain)")]
    return []


_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_CAPABILITY = re.compile(r"^(CAP_)?[A-Z][A-Z0-9_]*$")


def _workload_errors(cfg: OperatorConfiguration) -> list[tuple[str, str]]:
    """The allow lists of the pod template check: capability and ServiceAccount names as Kubernetes spells
    them, so a typo does not silently allow nothing."""
    workloads = cfg.security.workloads if cfg.security else None
    checks = workloads.pod_templates if workloads else None
    if checks is None:
        return []
    path = "security.workloads.podTemplates"
    errors = [
        (f"{path}.allowedCapabilities[{i}]", f"{c!r} is not a capability name (upper case, e.g. IPC_LOCK)")
        for i, c in enumerate(checks.allowed_capabilities or [])
        if not _CAPABILITY.match(c)
    ]
    errors += [
        (f"{path}.allowedServiceAccounts[{i}]", f"{n!r} is not a ServiceAccount name (a DNS subdomain)")
        for i, n in enumerate(checks.allowed_service_accounts or [])
        if not _DNS_SUBDOMAIN.match(n)
    ]
    return errors


def _credential_errors(cfg: OperatorConfiguration) -> list[tuple[str, str]]:
    """The NATS / etcd credential references: a method needs the Secret that holds it, and the reverse."""
    infra = cfg.infrastructure
    errors: list[tuple[str, str]] = []
    sections = (
        ("infrastructure.natsAuth", infra.nats_auth if infra else None, True),
        ("infrastructure.natsTLS", infra.nats_tls if infra else None, False),
        ("infrastructure.etcdAuth", infra.etcd_auth if infra else None, True),
    )
    for path, section, has_method in sections:
        if section is None:
            continue
        name = section.secret_name
        method = getattr(section, "method", None)
        if has_method and method and not name:
            errors.append((f"{path}.secretName", f"is required with method {method}: name the Secret"))
        if has_method and name and not method:
            errors.append((f"{path}.method", f"is required with secretName {name!r}: say how to use it"))
        if not has_method and getattr(section, "client_certificate", None) and not name:
            errors.append((f"{path}.secretName", "is required with clientCertificate: name the Secret"))
        if name and not _DNS_SUBDOMAIN.match(name):
            errors.append((f"{path}.secretName", f"{name!r} is not a Secret name (lower-case DNS subdomain)"))
    return (
        errors
        + _credentials_without_address(cfg)
        + _namespace_certificate_errors(infra.etcd_auth if infra else None)
        + _namespace_account_errors(infra.nats_auth if infra else None, infra.nats_tls if infra else None)
    )


# credential section -> (the address it is for, the variable the workloads get it in, the service)
_CREDENTIAL_ADDRESS = (
    ("natsAuth", "nats_auth", "natsAddress", "nats_address", "NATS_SERVER", "NATS"),
    ("natsTLS", "nats_tls", "natsAddress", "nats_address", "NATS_SERVER", "NATS"),
    ("etcdAuth", "etcd_auth", "etcdAddress", "etcd_address", "ETCD_ENDPOINTS", "etcd"),
)


def _credentials_without_address(cfg: OperatorConfiguration) -> list[tuple[str, str]]:
    """Credentials for a server the workloads are not pointed at are inert (the per-namespace methods issue
    nothing at all without the address: ``natsaccess.enabled``, ``etcdaccess.enabled``), which no one
    configuring them means: refused, naming the missing address. There is no warning channel here on
    purpose: a warning in a pod's start-up log is as easy to miss as silence."""
    infra = cfg.infrastructure
    if infra is None:
        return []
    errors = []
    for key, attr, address_key, address_attr, var, service in _CREDENTIAL_ADDRESS:
        section = getattr(infra, attr)
        if section is None or not section.model_dump(exclude_none=True) or getattr(infra, address_attr):
            continue
        errors.append(
            (
                f"infrastructure.{key}",
                f"is set but infrastructure.{address_key} is empty: the workloads get no {var}, so nothing"
                f" would use it; set infrastructure.{address_key} to the {service} server the graphs use,"
                f" or remove infrastructure.{key}",
            )
        )
    return errors


# the fields only the per-namespace methods read (render/natsaccess.py, render/etcdaccess.py)
NAMESPACE_ACCOUNT_FIELDS = (
    ("adminSecretName", "admin_secret_name"),
    ("adminSecretNamespace", "admin_secret_namespace"),
    ("accountsConfigMap", "accounts_config_map"),
    ("monitorURL", "monitor_url"),
)
NAMESPACE_CERTIFICATE_FIELDS = (
    ("adminSecretName", "admin_secret_name"),
    ("adminSecretNamespace", "admin_secret_namespace"),
    ("proxyImage", "proxy_image"),
)


def _only_with(
    path: str, method: str, section: Any, fields: tuple[tuple[str, str], ...]
) -> list[tuple[str, str]]:
    """A field of the per-namespace method set with another method: nothing reads it, so it is refused."""
    return [
        (
            f"{path}.{key}",
            f"is read only with method {method} (method is {section.method or 'unset'}); remove it",
        )
        for key, attr in fields
        if getattr(section, attr)
    ]


def _namespace_account_errors(nats: Any, tls: Any) -> list[tuple[str, str]]:
    """natsAuth namespaceAccount needs what the operator issues from and the accounts file it keeps; the
    namespace's certificate is the pods' TLS material, so a shared natsTLS Secret beside it is refused."""
    if nats is None:
        return []
    path = "infrastructure.natsAuth"
    if nats.method != "namespaceAccount":
        return _only_with(path, "namespaceAccount", nats, NAMESPACE_ACCOUNT_FIELDS)
    needed = (
        ("adminSecretName", nats.admin_secret_name, "the Secret with the NATS CA (ca.crt, ca.key)"),
        ("adminSecretNamespace", nats.admin_secret_namespace, "the namespace of adminSecretName"),
        ("accountsConfigMap", nats.accounts_config_map, "the ConfigMap whose accounts.conf NATS includes"),
    )
    errors = [
        (f"{path}.{key}", f"is required with method namespaceAccount: {what}")
        for key, v, what in needed
        if not v
    ]
    if tls is not None and tls.secret_name:
        errors.append(
            (
                "infrastructure.natsTLS.secretName",
                "must be empty with natsAuth.method namespaceAccount: each namespace's own Secret holds the"
                " CA and its certificate",
            )
        )
    return errors


def _namespace_certificate_errors(etcd: Any) -> list[tuple[str, str]]:
    """etcdAuth namespaceCertificate needs what the operator issues from and what the pods run."""
    if etcd is None:
        return []
    path = "infrastructure.etcdAuth"
    if etcd.method != "namespaceCertificate":
        return _only_with(path, "namespaceCertificate", etcd, NAMESPACE_CERTIFICATE_FIELDS)
    needed = (
        ("adminSecretName", etcd.admin_secret_name, "the Secret with the CA and the etcd root credentials"),
        ("adminSecretNamespace", etcd.admin_secret_namespace, "the namespace of adminSecretName"),
        ("proxyImage", etcd.proxy_image, "an etcd image for the etcd-proxy sidecar (etcd grpc-proxy)"),
    )
    return [
        (f"{path}.{key}", f"is required with method namespaceCertificate: {what}")
        for key, v, what in needed
        if not v
    ]


def _loc(loc: tuple[Any, ...]) -> str:
    return ".".join(
        str(p) for p in loc if not (isinstance(p, str) and p.startswith(("function-", "literal[")))
    )


def _model_at(path: list[str]) -> Any:
    """The pydantic model a dotted path of camelCase keys leads to (None past a leaf or a map)."""
    from dynamo_operator.api.config.types import OperatorConfiguration
    from dynamo_operator.api.meta import resolved_fields

    model: Any = OperatorConfiguration
    for key in path:
        fields = {(f.alias or n): f for n, f in resolved_fields(model).items()}
        field = fields.get(key)
        if field is None:
            return None
        model = next(
            (
                a
                for a in (field.annotation, *getattr(field.annotation, "__args__", ()))
                if hasattr(a, "model_fields")
            ),
            None,
        )
    return model


def _explain(error: Any) -> tuple[str, str]:
    """(field path, message with the fix) for one pydantic error: an unknown key gets the closest known
    key at that level; a wrong type says what was given."""
    from dynamo_operator.api.meta import resolved_fields

    path = _loc(error["loc"])
    if error["type"] == "extra_forbidden":
        parts = path.split(".")
        model = _model_at(parts[:-1])
        known = sorted((f.alias or n) for n, f in resolved_fields(model).items()) if model is not None else []
        close = difflib.get_close_matches(parts[-1], known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"known keys here: {', '.join(known)}"
        return path, f"unknown key ({hint}); fix the spelling or remove it"
    given = error.get("input")
    shown = "" if isinstance(given, dict | list) else f" (got {given!r})"
    return path, f"{error['msg']}{shown}"


def parse_operator_config(raw: dict[str, Any] | None) -> OperatorConfiguration:
    """Default and validate an already-parsed configuration document."""
    from pydantic import ValidationError

    from dynamo_operator.api.config.types import OperatorConfiguration

    if raw is not None and not isinstance(raw, Mapping):
        raise ConfigError([("<document>", f"must be a mapping of keys, not a {type(raw).__name__}")])
    raw = dict(raw or {})
    errors: list[tuple[str, str]] = []
    if raw.get("apiVersion", API_VERSION) != API_VERSION:
        errors.append(("apiVersion", f"must be {API_VERSION}"))
    if raw.get("kind", KIND) != KIND:
        errors.append(("kind", f"must be {KIND}"))
    if errors:
        raise ConfigError(errors)
    body = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind")}
    try:
        cfg = OperatorConfiguration.model_validate(with_defaults(body))
    except ValidationError as exc:
        raise ConfigError([_explain(e) for e in exc.errors()]) from None
    errors = _semantic_errors(cfg)
    if errors:
        raise ConfigError(errors)
    return cfg


def load_operator_config(path: str | Path | None) -> OperatorConfiguration:
    """Read, default and validate the configuration file at ``path`` (defaults only when ``None``)."""
    if path is None:
        return parse_operator_config({})
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            [("<file>", f"cannot be read ({exc}); check the --config path")], str(path)
        ) from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError([("<file>", f"is not valid YAML: {exc}")], str(path)) from None
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(
            [
                (
                    "<file>",
                    f"must hold one mapping (apiVersion, kind, server, ...), not a {type(raw).__name__}",
                )
            ],
            str(path),
        )
    try:
        return parse_operator_config(raw)
    except ConfigError as exc:
        raise ConfigError(exc.errors, str(path)) from None


def effective(config: OperatorConfiguration | Mapping[str, Any] | None) -> dict[str, Any]:
    """The configuration as its JSON document (camelCase keys) with every default filled in.

    Why every reader goes through this: the runtime, the webhooks, the controllers and the renderer all read
    the configuration, and a reader that carried its own fallback (a port, a Secret name, a storage path)
    would drift from ``DEFAULTS``. Accepts the validated model, a plain mapping (tests, partial documents) or
    None (defaults only)."""
    if config is None:
        raw: dict[str, Any] = {}
    elif isinstance(config, Mapping):
        raw = {k: v for k, v in dict(config).items() if k not in ("apiVersion", "kind")}
    else:  # the model (a pydantic model is no Mapping); checked without importing its module
        raw = config.model_dump(by_alias=True, exclude_none=True, mode="json")
    return with_defaults(raw)


def lookup(doc: Mapping[str, Any], path: str, default: Any = None) -> Any:
    """``lookup(effective(cfg), "server.webhook.port")``: a dotted camelCase path; ``default`` only for
    fields the configuration has no default for (an unset optional value)."""
    cur: Any = doc
    for key in path.split("."):
        if not isinstance(cur, Mapping) or key not in cur:
            return default
        cur = cur[key]
    return default if cur is None else cur
