"""nvidia.com/v1beta1 models; every kind and type of the package is importable from here."""

from dynamo_operator.api.v1beta1.models import *  # noqa: F403
from dynamo_operator.api.v1beta1.models import __all__ as _models_all

GROUP = "nvidia.com"
VERSION = "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"

__all__ = [*_models_all, "API_VERSION", "GROUP", "VERSION"]
