"""dynamo-platform operator: API models, pure rendering, controllers, webhooks and runtime.

Imported as ``dynamo_operator``; the source root is ``operator/`` (the design card's layout) but the
import name must not shadow the standard library's ``operator`` module.
"""

__version__ = "0.1.0"
