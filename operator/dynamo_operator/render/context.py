"""What the renderer may not fetch itself: operator configuration, pull-secret index, versions."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator import __version__
from dynamo_operator.api.config import effective, lookup

from .names import ANN_ENABLE_GROVE
from .pullsecrets import PullSecretIndex

# integrations the operator detects by API discovery: name -> the API path below /apis that must be served
# (a group, or group/version where one version is what the operator writes)
GROVE, LWS, KAI_SCHEDULER = "grove", "lws", "kaiScheduler"
DRA, INFERENCE_POOL, ISTIO = "dra", "inferencePool", "istio"
INTEGRATION_GROUPS: Mapping[str, str] = {
    GROVE: "grove.io",
    LWS: "leaderworkerset.x-k8s.io",
    KAI_SCHEDULER: "scheduling.run.ai",
    DRA: "resource.k8s.io/v1",  # ResourceClaimTemplates of GPU memory service components
    INFERENCE_POOL: "inference.networking.k8s.io/v1",  # the InferencePool of an EPP component
    ISTIO: "networking.istio.io/v1beta1",  # the EPP's DestinationRule, components' VirtualServices
}
# Istio's two kinds are detected one by one (a cluster may serve one CRD without the other): a kind's cache
# is started only when that kind is served. ``ISTIO`` in ``detected`` stands for both (``render --detected
# istio``; the controllers add it when both are served).
ISTIO_VIRTUAL_SERVICE, ISTIO_DESTINATION_RULE = "istioVirtualService", "istioDestinationRule"
INTEGRATION_KINDS: Mapping[str, tuple[str, str]] = {  # name -> (API path below /apis, resource plural)
    ISTIO_VIRTUAL_SERVICE: (INTEGRATION_GROUPS[ISTIO], "virtualservices"),
    ISTIO_DESTINATION_RULE: (INTEGRATION_GROUPS[ISTIO], "destinationrules"),
}
ISTIO_KINDS = (ISTIO_VIRTUAL_SERVICE, ISTIO_DESTINATION_RULE)
# the configuration key that overrides detection (true/false; absent = detect), per integration; the
# InferencePool API has none (upstream's neither): an EPP component needs it served
OVERRIDE_KEYS: Mapping[str, str | None] = {
    GROVE: "orchestrators.grove.enabled",
    LWS: "orchestrators.lws.enabled",
    KAI_SCHEDULER: "orchestrators.kaiScheduler.enabled",
    DRA: "dra.enabled",
    INFERENCE_POOL: None,
    ISTIO: "serviceMesh.enabled",
    ISTIO_DESTINATION_RULE: "serviceMesh.enabled",
    ISTIO_VIRTUAL_SERVICE: None,
}


@dataclass(frozen=True)
class RenderContext:
    """Inputs of rendering that come from outside the object.

    ``operator_config``: the OperatorConfiguration (model or dict in its JSON shape) or None for defaults.
    ``pull_secrets``: image-pull-secret index (see ``pullsecrets.build_index``); empty means none found.
    ``operator_version``: stamped on every child as ``nvidia.com/dynamo-operator-version``.
    ``checkpoints``: the namespace's DynamoCheckpoints by name (the controllers' cache; ``render
    --checkpoints`` stands in for it): the IDs components restore and the readiness WaitForCheckpoint
    waits for.
    ``detected``: integrations whose APIs the cluster serves (``grove``, ``lws``, ``kaiScheduler``, ``dra``,
    ``inferencePool``, ``istio``: the keys of ``INTEGRATION_GROUPS``; ``istioVirtualService``,
    ``istioDestinationRule``: of ``INTEGRATION_KINDS``); the controllers discover them, ``render
    --detected`` pretends them.
    ``mpi_ssh_key_id``: the id of the namespace's MPI SSH Secret's keys (``mpisecret.key_id``), stamped on
    multinode TensorRT-LLM pod templates so new keys roll those pods; None where the operator does not see
    the Secret (``render``, ``mpi.sshSecretCopy: false``).
    """

    operator_config: Any = None
    pull_secrets: PullSecretIndex = field(default_factory=PullSecretIndex)
    operator_version: str = __version__
    checkpoints: Mapping[str, dict] = field(default_factory=dict)
    detected: Collection[str] = frozenset()
    mpi_ssh_key_id: str | None = None

    def __post_init__(self) -> None:
        # every default filled in once (api.config.DEFAULTS), so no renderer carries a fallback of its own
        object.__setattr__(self, "_config", effective(self.operator_config))

    def config(self, *path: str, default: Any = None) -> Any:
        """A value of the operator configuration by its camelCase JSON path; ``default`` only for optional
        fields the configuration has no default for."""
        return lookup(self._config, ".".join(path), default)

    @property
    def discovery_backend(self) -> str:
        return str(self.config("discovery", "backend"))

    def integration_enabled(self, name: str) -> bool:
        """The integration's override key (``OVERRIDE_KEYS``, e.g. ``orchestrators.<name>.enabled``) when
        the configuration sets it, else whether it was detected (upstream's rule: nil = auto-detect,
        true/false = override)."""
        key = OVERRIDE_KEYS.get(name)
        configured = self.config(*key.split("."), default=None) if key else None
        return bool(configured) if configured is not None else self.served(name)

    def served(self, name: str) -> bool:
        """The integration's API was detected (one of Istio's kinds also when ``istio``, both, was)."""
        return name in self.detected or (name in ISTIO_KINDS and ISTIO in self.detected)

    @property
    def grove_enabled(self) -> bool:
        return self.integration_enabled(GROVE)

    @property
    def lws_enabled(self) -> bool:
        return self.integration_enabled(LWS)

    @property
    def kai_enabled(self) -> bool:
        return self.integration_enabled(KAI_SCHEDULER)

    @property
    def virtual_services_served(self) -> bool:
        """Istio's networking.istio.io/v1beta1 serves VirtualServices: they can be created (no
        configuration key: a component that asks for one gets it exactly when the API is there)."""
        return self.served(ISTIO_VIRTUAL_SERVICE)

    @property
    def dra_enabled(self) -> bool:
        """GPU memory service may replace GPU requests by DRA claims (``dra.enabled``, else detected)."""
        return self.integration_enabled(DRA)

    @property
    def inference_pool_served(self) -> bool:
        """The Gateway API Inference Extension's InferencePool API is served (no configuration key)."""
        return INFERENCE_POOL in self.detected

    @property
    def istio_mesh(self) -> bool:
        """EPP DestinationRules are rendered: ``serviceMesh.provider`` is istio and the mesh is enabled
        (``serviceMesh.enabled``, else the DestinationRule API detected)."""
        provider = self.config("serviceMesh", "provider", default=None)
        return provider == "istio" and self.integration_enabled(ISTIO_DESTINATION_RULE)

    def uses_grove(self, dgd: dict) -> bool:
        return grove_pathway(dgd, self.grove_enabled)


def grove_pathway(dgd: dict, grove_enabled: bool) -> bool:
    """The one pathway decision (renderer, controllers, admission): a DGD runs on Grove (one PodCliqueSet)
    when Grove is enabled or detected and the DGD does not opt out with ``nvidia.com/enable-grove:
    "false"`` (any case); otherwise each component becomes a DCD (Deployment, or LeaderWorkerSet when
    multinode)."""
    ann = (dgd.get("metadata") or {}).get("annotations") or {}
    return bool(grove_enabled) and str(ann.get(ANN_ENABLE_GROVE, "")).lower() != "false"
