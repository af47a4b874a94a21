"""What the renderer may not fetch itself: operator configuration, pull-secret index, versions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator import __version__
from dynamo_operator.api.config import effective, lookup

from .pullsecrets import PullSecretIndex


@dataclass(frozen=True)
class RenderContext:
    """Inputs of rendering that come from outside the object.

    ``operator_config``: the OperatorConfiguration (model or dict in its JSON shape) or None for defaults.
    ``pull_secrets``: image-pull-secret index (see ``pullsecrets.build_index``); empty means none found.
    ``operator_version``: stamped on every child as ``nvidia.com/dynamo-operator-version``.
    ``checkpoint_hashes``: DynamoCheckpoint name -> identity hash, for components that reference one.
    """

    operator_config: Any = None
    pull_secrets: PullSecretIndex = field(default_factory=PullSecretIndex)
    operator_version: str = __version__
    checkpoint_hashes: Mapping[str, str] = field(default_factory=dict)

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
