"""nvidia.com/v1alpha1 models; every kind and type of the package is importable from here."""

from dynamo_operator.api.v1alpha1.models import *  # noqa: F403
from dynamo_operator.api.v1alpha1.models import __all__ as _models_all

GROUP = "nvidia.com"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"

__all__ = [*_models_all, "API_VERSION", "GROUP", "VERSION"]
