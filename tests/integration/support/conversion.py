"""CRD conversion served from the test process (the operator's webhook server on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator

from dynamo_localcluster.cluster import REPO_ROOT, LocalCluster


def serve_crds(cluster: LocalCluster) -> Iterator[list[str]]:
    """Apply the generated CRDs with their conversion served by the operator's own webhook server on
    127.0.0.1 for as long as the generator is open (a namespace-restricted operator leaves conversion to
    someone else; the session's ``dynamo_crds`` fixture and the RBAC proof use this)."""
    import base64
    import datetime as dt
    import time

    import yaml
    from dynamo_operator.api import registry
    from dynamo_operator.pki import issue_ca, issue_serving
    from dynamo_operator.runtime.client import ResourceClient
    from dynamo_operator.webhooks.certs import CRDS as crds_res
    from dynamo_operator.webhooks.certs import TLSContextHolder
    from dynamo_operator.webhooks.server import AdmissionSettings, WebhookApp, WebhookServer
    from kubernetes.client.exceptions import ApiException

    client = ResourceClient(cluster.api_client())
    ca_crt, ca_key = issue_ca(dt.timedelta(days=1))
    crt, key = issue_serving(ca_crt, ca_key, ["127.0.0.1"], dt.timedelta(hours=12))
    tls = TLSContextHolder()
    tls.update(crt, key)
    server = WebhookServer(WebhookApp(AdmissionSettings()), host="127.0.0.1", port=0, tls=tls)
    server.start()
    conversion = {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "url": f"https://127.0.0.1:{server.port}{registry.CONVERSION_PATH}",
                "caBundle": base64.b64encode(ca_crt).decode(),
            },
        },
    }
    names = []
    for path in sorted((REPO_ROOT / "crds").glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if crd["spec"].get("conversion", {}).get("strategy") == "Webhook":
            crd["spec"]["conversion"] = conversion
        names.append(crd["metadata"]["name"])
        for _ in range(5):
            try:
                live = client.get(crds_res, crd["metadata"]["name"])
            except ApiException as e:
                if e.status != 404:
                    raise
                client.create(crds_res, crd)
                break
            crd["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
            try:
                client.replace(crds_res, crd)
                break
            except ApiException as e:
                if e.status != 409:
                    raise
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        conds = [((client.get(crds_res, n).get("status") or {}).get("conditions") or []) for n in names]
        if all(any(c["type"] == "Established" and c["status"] == "True" for c in cs) for cs in conds):
            break
        time.sleep(0.2)
    try:
        yield names
    finally:
        server.stop()
