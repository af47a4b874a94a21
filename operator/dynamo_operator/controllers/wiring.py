"""What every controller's ``register(wiring)`` is given, and the caches the graph family shares.

One convention: each controller module has ``CONTROLLER`` (its name) and ``register(w: Wiring) ->
Controller``, which adds the controller to ``w.manager`` with its primary kind and owned children, relates
other kinds with ``Controller.watch``, and builds its reconciler from ``w``. ``controllers.setup`` only
builds the ``Wiring`` and calls each ``register`` in turn.

The DGD, DCD and scaling-adapter controllers share one ``Deps`` (``Wiring.deps``): the caches of every
kind they read, and one ``RecentWrites`` fed by all of those caches, so a pass of either controller sees the
other's latest writes before its informer does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from dynamo_operator.api.config import effective, lookup
from dynamo_operator.render import RenderContext, etcdaccess, names, natsaccess
from dynamo_operator.render.context import DRA, GROVE, INFERENCE_POOL, ISTIO_DESTINATION_RULE
from dynamo_operator.render.mpisecret import mpi_secret_home
from dynamo_operator.render.pullsecrets import DOCKERCONFIGJSON
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    DEPLOYMENTS,
    PODS,
    PVCS,
    ROLEBINDINGS,
    SECRETS,
    SERVICEACCOUNTS,
    SERVICES,
    ResourceDescriptor,
)
from dynamo_operator.runtime.events import EventRecorder
from dynamo_operator.runtime.informer import Informer
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.tunables import ControllerTunables

from . import caches, component_pods, netpol, store
from .common import Deps
from .discovery import check_required_integrations, detect_integrations
from .sync import (
    DESTINATIONRULES,
    DEVICECLASSES,
    INFERENCEPOOLS,
    INGRESSES,
    LWS,
    NETWORKPOLICIES,
    PODCLIQUES,
    PODCLIQUESCALINGGROUPS,
    PODCLIQUESETS,
    RESOURCECLAIMTEMPLATES,
    VIRTUALSERVICES,
    RecentWrites,
)

# Child caches are label-selected: the operator does not mirror every Deployment of the cluster.
MANAGED_SELECTOR = f"{names.LABEL_MANAGED_BY}={names.MANAGED_BY}"
PULL_SECRET_SELECTOR = f"type={DOCKERCONFIGJSON}"


@dataclass
class Wiring:
    manager: Manager
    recorder: EventRecorder
    config: dict[str, Any]  # the effective OperatorConfiguration document (``api.config.effective``)
    tunables: ControllerTunables = field(default_factory=ControllerTunables)
    detected: frozenset[str] = frozenset()  # integrations the cluster serves (``discovery``)

    @classmethod
    def build(
        cls, manager: Manager, config: Any = None, tunables: ControllerTunables | None = None
    ) -> Wiring:
        """Discover the optional integrations once and start the shared Event recorder."""
        recorder = EventRecorder(manager.client, "dynamo-operator", instance=manager.identity)
        doc = effective(config)
        detected = detect_integrations(manager.client)
        check_required_integrations(doc, detected)  # dra / serviceMesh enabled: true needs the API
        manager.add_runnable(
            lambda stop: recorder.start(), needs_leader=False, stop_fn=recorder.stop, name="event-recorder"
        )
        return cls(manager, recorder, doc, tunables or ControllerTunables(), detected)

    @property
    def lws_enabled(self) -> bool:
        """LeaderWorkerSets are rendered (and cached): the renderer's rule (configuration, discovery)."""
        return RenderContext(operator_config=self.config, detected=self.detected).lws_enabled

    @property
    def grove_served(self) -> bool:
        """Grove's objects can be watched only when their API exists."""
        return GROVE in self.detected

    @property
    def exposure_kinds(self) -> list[ResourceDescriptor]:
        """The kinds that expose components (``render/ingress.py``): Ingresses always (networking.k8s.io/v1
        is part of Kubernetes), VirtualServices when Istio's VirtualService kind was served at startup."""
        return [INGRESSES] + ([VIRTUALSERVICES] if self._render_context.virtual_services_served else [])

    @property
    def _render_context(self) -> RenderContext:
        return RenderContext(operator_config=self.config, detected=self.detected)

    @property
    def mpi_secret_home(self) -> tuple[str, str] | None:
        """(release namespace, name) of the MPI SSH Secret; None when the graph controller provides none in
        graph namespaces (``mpi.sshSecretCopy``)."""
        return mpi_secret_home(RenderContext(operator_config=self.config))

    @property
    def dra_served(self) -> bool:
        """ResourceClaimTemplates (and DeviceClasses) can be watched: resource.k8s.io/v1 is served. Cached
        even with ``dra.enabled: false``, so templates made before are pruned."""
        return DRA in self.detected

    @property
    def inference_pools_served(self) -> bool:
        return INFERENCE_POOL in self.detected

    @property
    def destination_rules_served(self) -> bool:
        """Cached whenever the kind is served (not only with the mesh on): turning the mesh off prunes."""
        return self._render_context.served(ISTIO_DESTINATION_RULE)

    @property
    def network_policies(self) -> bool:
        """The graph controller renders MPI sshd NetworkPolicies (``mpi.sshNetworkPolicy``)."""
        return netpol.enabled(self.config)

    @property
    def device_classes_watched(self) -> bool:
        """A GPU memory service component waits for its DeviceClass: cluster-wide only, since a restricted
        operator's grants are name-limited outside its namespace and DeviceClasses cannot be named ahead of
        time (there the scheduler alone reports a missing class, on the pod)."""
        return self.dra_served and bool(getattr(self.manager.settings, "cluster_wide", True))

    def managed(self, res: ResourceDescriptor) -> Informer:
        """The cache of the operator's own objects of ``res`` (label-selected; lean, ``caches.py``)."""
        return self.manager.informer(
            res, label_selector=MANAGED_SELECTOR, transform=caches.TRANSFORMS.get(res)
        )

    @cached_property
    def graph_informers(self) -> dict[ResourceDescriptor, Informer]:
        """Every cache the graph family reads."""
        m = self.manager
        kinds = [DEPLOYMENTS, SERVICES, CONFIGMAPS, SERVICEACCOUNTS, ROLEBINDINGS, *self.exposure_kinds]
        if self.lws_enabled:
            kinds.append(LWS)
        informers = {res: self.managed(res) for res in kinds}
        if self.grove_served:
            informers[PODCLIQUESETS] = self.managed(PODCLIQUESETS)
            for res in (PODCLIQUES, PODCLIQUESCALINGGROUPS):  # Grove's objects: not labelled by us
                informers[res] = m.informer(res)
        if self.network_policies:  # the MPI sshd NetworkPolicies: cached only when the operator makes them
            informers[NETWORKPOLICIES] = self.managed(NETWORKPOLICIES)
        informers[PVCS] = self.managed(PVCS)  # the claims graphs asked the operator to create (pvc.py)
        if self.dra_served:  # GPU memory service claim templates, and the device classes they name
            informers[RESOURCECLAIMTEMPLATES] = self.managed(RESOURCECLAIMTEMPLATES)
        if self.device_classes_watched:
            informers[DEVICECLASSES] = m.informer(DEVICECLASSES)
        if self.inference_pools_served:  # an EPP's InferencePool
            informers[INFERENCEPOOLS] = self.managed(INFERENCEPOOLS)
        if self.destination_rules_served:  # an EPP's DestinationRule (Istio mesh)
            informers[DESTINATIONRULES] = self.managed(DESTINATIONRULES)
        # components' pods, indexed by component: how many are scheduled (``scheduledReplicas``)
        pods = m.informer(
            PODS, label_selector=component_pods.SELECTOR, resync_period=0, transform=caches.TRANSFORMS[PODS]
        )
        pods.store.add_indexer(component_pods.INDEX, component_pods.index_by_component)
        informers[PODS] = pods
        informers[store.CHECKPOINTS] = m.informer(store.CHECKPOINTS)  # the checkpoint controller's too
        informers[store.DCD] = m.informer(store.DCD, transform=caches.TRANSFORMS[store.DCD])
        informers[store.DGD] = m.informer(store.DGD, transform=caches.TRANSFORMS[store.DGD])
        informers[store.DGDSA] = m.informer(store.DGDSA, resync_period=0)
        return informers

    @cached_property
    def mpi_secrets(self) -> Informer | None:
        """The cache of the one MPI SSH Secret name in the operator's scope (``mpisecret.py``: each graph
        namespace's own keys; their id stamps the multinode pods, ``Deps.render_context``); by name, so the
        grant can name the Secret. None when the operator provides none."""
        home = self.mpi_secret_home
        if home is None:
            return None
        return self.manager.informer(SECRETS, field_selector=f"metadata.name={home[1]}")

    @property
    def pull_secret_discovery(self) -> bool:
        """``security.workloads.imagePullSecretDiscovery`` (default on): components get the dockerconfigjson
        Secrets of their namespace that match their images' registries."""
        return bool(lookup(self.config, "security.workloads.imagePullSecretDiscovery", True))

    def _client_secrets(self, access) -> Informer | None:
        """The cache of one per-namespace client Secret's name (``access``: ``render/etcdaccess.py`` or
        ``render/natsaccess.py``), by name so the grant can name it; None unless the operator issues each
        namespace its own credentials for that service."""
        ctx = RenderContext(operator_config=self.config)
        if not access.enabled(ctx):
            return None
        return self.manager.informer(SECRETS, field_selector=f"metadata.name={access.secret_name(ctx)}")

    @cached_property
    def etcd_clients(self) -> Informer | None:
        return self._client_secrets(etcdaccess)

    @cached_property
    def nats_clients(self) -> Informer | None:
        return self._client_secrets(natsaccess)

    @cached_property
    def pull_secrets(self) -> Informer | None:
        """``kubernetes.io/dockerconfigjson`` Secrets (by a field selector on ``type``), kept without their
        data (``caches.pull_secret``); None when the discovery is off: no Secret is read."""
        if not self.pull_secret_discovery:
            return None
        return self.manager.informer(
            SECRETS, field_selector=PULL_SECRET_SELECTOR, resync_period=0, transform=caches.pull_secret
        )

    @cached_property
    def deps(self) -> Deps:
        """What the DGD, DCD and adapter reconcilers share (built once, on first use)."""
        informers = self.graph_informers
        recent = RecentWrites()
        mpi = [i for i in (self.mpi_secrets, self.etcd_clients, self.nats_clients) if i is not None]
        for inf in [*informers.values(), *mpi]:  # entries for our own writes live until the cache shows them
            inf.add_event_handler(
                on_add=recent.observe, on_update=lambda old, new: recent.observe(new), on_delete=recent.forget
            )
        return Deps(
            client=self.manager.client,
            recorder=self.recorder,
            stores={res: inf.store for res, inf in informers.items()},
            secrets=self.pull_secrets.store if self.pull_secrets is not None else None,
            operator_config=self.config,
            operator_version=self.manager.settings.operator_version,
            recent=recent,
            detected=self.detected,
            tunables=self.tunables,
            mpi_secrets=self.mpi_secrets.store if self.mpi_secrets is not None else None,
            etcd_clients=self.etcd_clients.store if self.etcd_clients is not None else None,
            nats_clients=self.nats_clients.store if self.nats_clients is not None else None,
        )
