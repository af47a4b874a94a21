"""The operator's controllers: DynamoGraphDeployment → DynamoComponentDeployments → workloads.

``setup(manager, config, tunables)`` (called by ``dynamo-operator run``) registers, each through its module's
``register(wiring)`` (``wiring``: the one convention):

* ``DynamoGraphDeployment`` controller (``dgd.DGDReconciler``): primary DGDs; owns DCDs, or on the Grove
  pathway its PodCliqueSet and the components' Services and ConfigMaps; reacts to its components'
  Deployments and Grove's PodCliques / PodCliqueScalingGroups (mapped through the
  ``nvidia.com/dynamo-graph-deployment-name`` label, or the owning PodCliqueSet's);
* ``DynamoComponentDeployment`` controller (``dcd.DCDReconciler``): primary DCDs; owns Deployments,
  Services, ConfigMaps (and LeaderWorkerSets when enabled); the shared planner/epp ServiceAccounts and
  RoleBindings map to every DCD referencing them;
* ``DynamoGraphDeploymentScalingAdapter`` controller (``dgdsa.AdapterReconciler``): primary DGDSAs; a DGD
  change re-queues the adapters that reference it; the DGD controller owns (creates/deletes) adapters;
* ``DynamoModel`` (``dynamomodel``), ``DynamoGraphDeploymentRequest`` (``dgdr``) and ``DynamoCheckpoint``
  (``checkpoint``) controllers;
* the topology-label controller (``topology``): a worker pod of a graph with
  ``spec.experimental.kvTransferPolicy`` gets its node's topology label(s) once scheduled;
* the image-pull-secret watch: ``kubernetes.io/dockerconfigjson`` Secrets (field selector on ``type``); any
  change re-queues the DCDs of that namespace, whose pod specs may gain or lose a discovered secret;
* an Event recorder (``runtime.events``) and a periodic gauge refresher (``gauges``) for
  ``dynamo_operator_resources_total`` and ``dynamo_operator_managed_pods_total``.

Child caches are label-selected (``app.kubernetes.io/managed-by=dynamo-operator``), so the operator does
not cache every Deployment of the cluster.  Both controllers read and write DGDs/DCDs in the storage
version through ``store`` and render with the same functions as ``dynamo-operator render``.

Optional integrations (Grove, LeaderWorkerSet, Kai) are discovered once at startup (``discovery``): their
informers exist only when their APIs are served; ``orchestrators.<name>.enabled`` overrides discovery for
rendering (a restart picks up an integration installed later).
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.runtime.controller import Controller
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.tunables import ControllerTunables, Tunables

from . import checkpoint, dcd, dgd, dgdr, dgdsa, dynamomodel, gauges, store, topology
from .wiring import MANAGED_SELECTOR, PULL_SECRET_SELECTOR, Wiring

DGD_CONTROLLER = dgd.CONTROLLER
DCD_CONTROLLER = dcd.CONTROLLER
DGDSA_CONTROLLER = dgdsa.CONTROLLER
# every controller of the operator, in registration order
REGISTER = (
    dcd.register,
    dgd.register,
    dgdsa.register,
    dynamomodel.register,
    dgdr.register,
    checkpoint.register,
    topology.register,
)

__all__ = [
    "DCD_CONTROLLER",
    "DGDSA_CONTROLLER",
    "DGD_CONTROLLER",
    "MANAGED_SELECTOR",
    "PULL_SECRET_SELECTOR",
    "REGISTER",
    "setup",
    "store",
]


def setup(
    manager: Manager, config: Any = None, tunables: Tunables | ControllerTunables | None = None
) -> dict[str, Controller]:
    """Register every controller, the Event recorder and the resource gauges on ``manager``.

    ``config``: the OperatorConfiguration (model, document or None for the defaults); ``tunables``: the
    operator's ``Tunables`` (or only its ``controllers`` section)."""
    if isinstance(tunables, Tunables):
        tunables = tunables.controllers
    w = Wiring.build(manager, config, tunables)
    controllers = {}
    for register in REGISTER:
        ctl = register(w)
        controllers[ctl.name] = ctl
    gauges.register(w)
    return controllers
