"""The install settings preflight reasons about, read from chart values in one place.

Why one module: the chart's value names are a contract owned by the chart (see the chart document's values
table); every check reads them through `InstallSettings` so a renamed key is fixed here once. Where the
chart document gives a default it is used when the key is absent (e.g. the chart is not at hand).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from dynamo_operator.api.config import DEFAULTS as OPERATOR_CONFIG_DEFAULTS
from dynamo_operator.runtime.settings import DEFAULT_LEADER_ELECTION_ID, DEFAULT_LEADER_ELECTION_NAMESPACE

from .values import Values, lookup, truthy

OPERATOR = "dynamo-operator"
HYBRID_KEY = "namespaceRestriction.hybrid"  # under dynamo-operator.: allows the hybrid layout
DEFAULT_MPI_SECRET = "mpi-run-ssh-secret"
# The operator's own defaults (imported above, and the webhook Secret here): the hooks look where it looks.
DEFAULT_WEBHOOK_SECRET: str = OPERATOR_CONFIG_DEFAULTS["server"]["webhook"]["secretName"]


class OperatorMode(StrEnum):
    CLUSTER_WIDE = "cluster-wide"
    NAMESPACE_RESTRICTED = "namespace-restricted"


class CertMode(StrEnum):
    AUTO = "auto"
    MANUAL = "manual"
    CERT_MANAGER = "cert-manager"


def _first(values: Values, paths: tuple[str, ...], default: Any = None) -> tuple[Any, str | None]:
    """The first of `paths` that is set, with the path it came from (for messages)."""
    for path in paths:
        value = lookup(values, path)
        if value is not None:
            return value, path
    return default, None


@dataclass(frozen=True)
class Persistence:
    """A bundled store's persistence switch: on or off, and an explicit StorageClass if any."""

    component: str
    enabled: bool
    storage_class: str | None
    source_key: str | None


@dataclass(frozen=True)
class OptionalApi:
    """An orchestrator API (Grove, Kai, LWS): whether the chart installs it and whether the operator
    needs it."""

    name: str
    installed_by_chart: bool
    required_by_operator: bool
    crd: str
    source_key: str | None


@dataclass(frozen=True)
class InstallSettings:
    release_name: str
    release_namespace: str
    operator_enabled: bool
    mode: OperatorMode
    target_namespace: str
    leader_election_id: str
    leader_election_namespace: str
    leader_election_id_key_set: bool
    nats_enabled: bool
    nats_addr: str
    etcd_enabled: bool
    etcd_addr: str
    discovery_backend: str
    cert_mode: CertMode
    cert_mode_key: str | None
    persistence: tuple[Persistence, ...]
    optional_apis: tuple[OptionalApi, ...]
    mpi_secret_name: str
    # the hybrid layout (dynamo-operator.namespaceRestriction.hybrid): a namespace-restricted operator beside
    # one cluster-wide operator, which leaves its namespace while its namespace-scope marker lives
    hybrid: bool = False

    @classmethod
    def from_values(
        cls,
        values: Values,
        *,
        release_name: str,
        release_namespace: str,
        namespace_restricted: bool | None = None,
        target_namespace: str | None = None,
        hybrid: bool | None = None,
    ) -> InstallSettings:
        """Derive the settings; the explicit arguments (the hook's flags) win over values."""
        op = f"{OPERATOR}."
        restricted = (
            truthy(lookup(values, op + "namespaceRestriction.enabled", False))
            if namespace_restricted is None
            else namespace_restricted
        )
        mode = OperatorMode.NAMESPACE_RESTRICTED if restricted else OperatorMode.CLUSTER_WIDE
        target = target_namespace or str(lookup(values, op + "namespaceRestriction.targetNamespace") or "")
        target = target or release_namespace
        le_id_value = str(lookup(values, op + "controllerManager.leaderElection.id") or "")
        le_ns = str(lookup(values, op + "controllerManager.leaderElection.namespace") or "")
        if restricted:
            le_ns = target
        return cls(
            release_name=release_name,
            release_namespace=release_namespace,
            operator_enabled=truthy(lookup(values, op + "enabled", True)),
            mode=mode,
            target_namespace=target if restricted else "",
            leader_election_id=le_id_value or DEFAULT_LEADER_ELECTION_ID,
            leader_election_namespace=le_ns or DEFAULT_LEADER_ELECTION_NAMESPACE,
            leader_election_id_key_set=bool(le_id_value),
            nats_enabled=truthy(lookup(values, "nats.enabled", True)),
            nats_addr=str(lookup(values, op + "natsAddr") or "").strip(),
            etcd_enabled=truthy(lookup(values, "etcd.enabled", True)),
            etcd_addr=str(lookup(values, op + "etcdAddr") or "").strip(),
            discovery_backend=str(lookup(values, op + "discoveryBackend") or "kubernetes"),
            **_cert_mode(values),
            persistence=_persistence(values),
            optional_apis=_optional_apis(values),
            mpi_secret_name=str(lookup(values, op + "dynamo.mpiRun.secretName") or DEFAULT_MPI_SECRET),
            hybrid=truthy(lookup(values, op + HYBRID_KEY, False)) if hybrid is None else hybrid,
        )

    @property
    def restricted(self) -> bool:
        return self.mode is OperatorMode.NAMESPACE_RESTRICTED

    @property
    def managed_scope(self) -> str:
        """Human description of what the new operator would manage."""
        return f"namespace {self.target_namespace}" if self.restricted else "all namespaces"


def _cert_mode(values: Values) -> dict[str, Any]:
    op = f"{OPERATOR}.webhook."
    if truthy(lookup(values, op + "certManager.enabled", False)):
        return {"cert_mode": CertMode.CERT_MANAGER, "cert_mode_key": op + "certManager.enabled"}
    raw, key = _first(values, (op + "certProvisionMode", op + "certificateMode", op + "certMode"))
    text = str(raw or "").strip().lower().replace("_", "-")
    if text in ("cert-manager", "certmanager"):
        return {"cert_mode": CertMode.CERT_MANAGER, "cert_mode_key": key}
    if text in ("manual", "external"):
        return {"cert_mode": CertMode.MANUAL, "cert_mode_key": key}
    return {"cert_mode": CertMode.AUTO, "cert_mode_key": key}


def _persistence(values: Values) -> tuple[Persistence, ...]:
    result = []
    # Defaults when the chart is not at hand: bitnami etcd persists by default, NATS (JetStream off) does not.
    for component, default, enabled_keys, class_keys in (
        (
            "nats",
            False,
            ("nats.persistence.enabled", "nats.config.jetstream.fileStore.pvc.enabled"),
            ("nats.persistence.storageClass", "nats.config.jetstream.fileStore.pvc.storageClassName"),
        ),
        (
            "etcd",
            True,
            ("etcd.persistence.enabled",),
            ("etcd.persistence.storageClass", "etcd.global.storageClass", "global.storageClass"),
        ),
    ):
        if not truthy(lookup(values, f"{component}.enabled", True)):
            continue
        enabled, key = _first(values, enabled_keys, default)
        if component == "nats" and key == enabled_keys[1]:
            # The upstream NATS chart only mounts the file store when JetStream itself is on.
            enabled = truthy(enabled) and truthy(lookup(values, "nats.config.jetstream.enabled", False))
        storage_class, _ = _first(values, class_keys)
        result.append(
            Persistence(component, truthy(enabled), str(storage_class) if storage_class else None, key)
        )
    return tuple(result)


def _optional_apis(values: Values) -> tuple[OptionalApi, ...]:
    op = f"{OPERATOR}."
    specs = (
        ("grove", "grove.enabled", "podcliquesets.grove.io", "grove"),
        ("kai-scheduler", "kai-scheduler.enabled", "queues.scheduling.run.ai", "kaiScheduler"),
        ("lws", "lws.enabled", "leaderworkersets.leaderworkerset.x-k8s.io", "lws"),
    )
    result = []
    for name, install_key, crd, orchestrator in specs:
        forced, forced_key = _first(
            values,
            (
                f"{op}orchestrators.{orchestrator}.enabled",
                f"{op}dynamo.orchestrators.{orchestrator}.enabled",
                f"{op}dynamo.{orchestrator}.enabled",
            ),
        )
        installed = truthy(lookup(values, install_key, False))
        result.append(
            OptionalApi(
                name=name,
                installed_by_chart=installed,
                required_by_operator=forced is not None and truthy(forced),
                crd=crd,
                source_key=forced_key if forced is not None else (install_key if installed else None),
            )
        )
    return tuple(result)
