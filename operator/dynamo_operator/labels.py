"""The ``app.kubernetes.io`` labels the operator stamps on what it writes, defined once.

A leaf module (imports nothing) so that ``runtime/``, ``webhooks/`` and ``render/`` can all use it without an
import cycle; ``render.names`` re-exports the managed-by pair next to the other label keys.
"""

LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_PART_OF = "app.kubernetes.io/part-of"
LABEL_APP_COMPONENT = "app.kubernetes.io/component"
MANAGED_BY = "dynamo-operator"
PART_OF = "dynamo-operator"  # the chart's operator subchart labels its objects the same way
