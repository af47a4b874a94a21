"""The operator's controller runtime on the official ``kubernetes`` client (no controller framework).

Why not kopf: no Lease leader election (peering CRDs instead), edge-triggered handlers with progress in
annotations, no conversion webhooks; its value (watching + admission shell) is the small part.  So this
package re-implements the controller-runtime pieces the operator needs, with the same semantics: informers
(``informer``), a de-duplicating rate-limited work queue (``workqueue``), level-triggered controllers with
owner mapping (``controller``), Lease leader election (``leaderelection``), namespace-scope markers
(``nsscope``), prometheus metrics (``metrics``), health/metrics servers (``servers``) and the ``Manager`` that
ties them together.  The runtime reads no configuration: it is given ``RuntimeSettings`` (``settings``);
``dynamo_operator.settings`` maps the OperatorConfiguration and the CLI flags to them.
"""

from .client import (
    CONFIGMAPS,
    DEPLOYMENTS,
    EVENTS,
    LEASES,
    NAMESPACES,
    PODS,
    PVCS,
    SECRETS,
    SERVICEACCOUNTS,
    SERVICES,
    ResourceClient,
    ResourceDescriptor,
    custom,
    load_api_client,
    owner_controller,
)
from .controller import Controller, ReconcileContext, Request, Result, owner_requests, reconcile_context
from .informer import ClientListWatcher, Indexer, Informer
from .leaderelection import LeaderElector
from .log import get_logger, setup_logging
from .manager import Manager
from .metrics import OperatorMetrics, classify_error
from .nsscope import MARKER_LEASE_NAME, NamespaceExclusions, NamespaceScopeMarker
from .settings import RuntimeSettings, RuntimeTunables
from .workqueue import WorkQueue

__all__ = [
    "CONFIGMAPS",
    "DEPLOYMENTS",
    "EVENTS",
    "LEASES",
    "MARKER_LEASE_NAME",
    "NAMESPACES",
    "PODS",
    "PVCS",
    "SECRETS",
    "SERVICEACCOUNTS",
    "SERVICES",
    "ClientListWatcher",
    "Controller",
    "Indexer",
    "Informer",
    "LeaderElector",
    "Manager",
    "NamespaceExclusions",
    "NamespaceScopeMarker",
    "OperatorMetrics",
    "ReconcileContext",
    "Request",
    "ResourceClient",
    "ResourceDescriptor",
    "Result",
    "RuntimeSettings",
    "RuntimeTunables",
    "WorkQueue",
    "classify_error",
    "custom",
    "get_logger",
    "load_api_client",
    "owner_controller",
    "owner_requests",
    "reconcile_context",
    "setup_logging",
]
