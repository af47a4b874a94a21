"""The nvidia.com API (v1alpha1, v1beta1), the operator configuration, CRD generation and conversion.

The pydantic models are the single source of truth: CRDs are rendered from them (:mod:`.crdgen`), the
webhooks validate and convert with them, and controllers read objects through them.
"""
