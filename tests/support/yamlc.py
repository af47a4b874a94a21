"""YAML parsed by libyaml (PyYAML's C loader) for the tests' large inputs: rendered charts and vendored CRDs.

PyYAML's pure-Python loader took a fifth of the main integration process's Python CPU (py-spy: parsing the
vendored Grove, KAI and LWS CRDs for their names on every module that installs them), and a rendered chart is
hundreds of kilobytes. The C loader resolves the same YAML 1.1 safe types; the product code keeps its own
loader, so what the tests check of it is unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the pure-Python one where libyaml is missing


def load(text: str) -> Any:
    return yaml.load(text, Loader=_LOADER)


def load_all(text: str) -> Iterator[Any]:
    return yaml.load_all(text, Loader=_LOADER)
