"""``image/build.py`` loaded as a module: it is a script (``python image/build.py``), not a package, so the
tests that check what it builds (the Dockerfile's configuration, the single-binary images' pins, the built
operator image) load it by path here, in one place."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from dynamo_localcluster.cluster import REPO_ROOT


def image_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("image_build", REPO_ROOT / "image" / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["image_build"] = module
    spec.loader.exec_module(module)
    return module
