"""The ``app.kubernetes.io`` labels the operator stamps on what it writes, defined once.

A leaf module (imports nothing) so that ``runtime/``, ``webhooks/`` and ``render/`` can all use it without an
import cycle; ``render.names`` re-exports the managed-by pair next to the other label keys.
"""

LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_PART_OF = "app.kubernetes.io/part-of"
LABEL_APP_COMPONENT = "app.kubernetes.io/component"
MANAGED_BY = "dynamo-operator"
PART_OF = "dynamo-operator"  # the chart's operator subchart labels its objects the same way
# On the chart's webhook configurations: which ones the operator injects its CA into, and the namespace of
# the release that owns them (the conflict hook reads it, so it lives here rather than in webhooks.certs).
WEBHOOK_INJECTION_LABEL = "nvidia.com/dynamo-webhook-cabundle-injection"
WEBHOOK_NAMESPACE_LABEL = "nvidia.com/dynamo-operator-namespace"
