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

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Name -> submodule. Loaded on first use (PEP 562), so importing one submodule (``runtime.settings`` for a
# constant, ``runtime.nsscope`` for a Lease name) does not load the manager, the servers and the rest: the
# install hook's entry point stays small.
_EXPORTS = {
    **dict.fromkeys(
        (
            "CONFIGMAPS",
            "DEPLOYMENTS",
            "EVENTS",
            "LEASES",
            "NAMESPACES",
            "PODS",
            "PVCS",
            "SECRETS",
            "SERVICEACCOUNTS",
            "SERVICES",
            "ResourceClient",
            "ResourceDescriptor",
            "custom",
            "load_api_client",
            "owner_controller",
        ),
        "client",
    ),
    **dict.fromkeys(
        ("Controller", "ReconcileContext", "Request", "Result", "owner_requests", "reconcile_context"),
        "controller",
    ),
    **dict.fromkeys(("ClientListWatcher", "Indexer", "Informer"), "informer"),
    "LeaderElector": "leaderelection",
    "get_logger": "log",
    "setup_logging": "log",
    "Manager": "manager",
    "OperatorMetrics": "metrics",
    "classify_error": "metrics",
    **dict.fromkeys(("MARKER_LEASE_NAME", "NamespaceExclusions", "NamespaceScopeMarker"), "nsscope"),
    **dict.fromkeys(("RuntimeSettings", "RuntimeTunables"), "settings"),
    "WorkQueue": "workqueue",
}

if TYPE_CHECKING:  # for type checkers and IDEs: the same names, eagerly
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


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
