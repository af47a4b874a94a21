"""What the renderer may not fetch itself: operator configuration, pull-secret index, versions."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .pullsecrets import PullSecretIndex


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def config_value(config: Any, *path: str, default: Any = None) -> Any:
    """Read ``path`` (camelCase JSON names) from an OperatorConfiguration model, a dict, or None."""
    cur = config
    for key in path:
        if cur is None:
            return default
        if isinstance(cur, Mapping):
            if key in cur:
                cur = cur[key]
            elif _camel_to_snake(key) in cur:
                cur = cur[_camel_to_snake(key)]
            else:
                return default
        else:
            found = False
            for attr in (_camel_to_snake(key), key, key.lower()):
                if hasattr(cur, attr):
                    cur = getattr(cur, attr)
                    found = True
                    break
            if not found:
                return default
    if cur is None or cur == "":
        return default
    return getattr(cur, "value", cur) if not isinstance(cur, str | int | float | bool | dict | list) else cur


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
    operator_version: str = "0.1.0"
    checkpoint_hashes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        cfg = self.operator_config
        if cfg is not None and hasattr(cfg, "model_dump"):
            cfg = cfg.model_dump(by_alias=True, exclude_none=True, mode="json")
        object.__setattr__(self, "_config", cfg)

    def config(self, *path: str, default: Any = None) -> Any:
        """A value of the operator configuration by its camelCase JSON path, or ``default``."""
        return config_value(self._config, *path, default=default)

    @property
    def discovery_backend(self) -> str:
        return str(self.config("discovery", "backend", default="kubernetes"))
