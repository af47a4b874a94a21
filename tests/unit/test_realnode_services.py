"""What the real-node tier installs beside the chart, as objects (the processes run in tests/realnode): the
LeaderWorkerSet controller (``realnode/lws.py``)."""

from __future__ import annotations

from dynamo_localcluster.realnode import lws


def _deployment() -> dict:
    (deployment,) = [o for o in lws.manifests("lws:test") if o["kind"] == "Deployment"]
    return deployment


def test_the_lws_controller_reads_its_serving_certificate_from_the_secret_its_manager_fills():
    """Its certificate manager writes the Secret and waits for the files in the certificate directory;
    with an emptyDir there (the first manifests) the files never came, the controller set up neither
    webhooks nor controllers, and every LeaderWorkerSet create failed on its webhook (connection refused)."""
    spec = _deployment()["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == lws.CERT_DIR]
    (volume,) = [v for v in spec["volumes"] if v["name"] == mount["name"]]
    assert volume == {"name": mount["name"], "secret": {"secretName": lws.SECRET}}
    assert "certDir" not in lws.CONFIGURATION["webhook"]  # the controller's default: CERT_DIR
    assert lws.CONFIGURATION["internalCertManagement"] == {"enable": True}


def test_the_lws_objects_carry_the_names_its_certificate_manager_patches():
    """The controller patches the CA bundle into its webhook configurations by name, and its serving
    certificate names its Service (``lws-webhook-service.<namespace>.svc``)."""
    kinds = {(o["kind"], o["metadata"]["name"]) for o in lws.manifests("lws:test")}
    assert ("MutatingWebhookConfiguration", "lws-mutating-webhook-configuration") in kinds
    assert ("ValidatingWebhookConfiguration", "lws-validating-webhook-configuration") in kinds
    assert ("Service", "lws-webhook-service") in kinds and ("Secret", "lws-webhook-server-cert") in kinds
    hooks = [h for o in lws.manifests("lws:test") for h in o.get("webhooks") or []]
    assert {h["clientConfig"]["service"]["name"] for h in hooks} == {lws.SERVICE}
    # the pod webhooks see only a LeaderWorkerSet's pods, never anyone else's
    assert all("objectSelector" in h for h in hooks if h["rules"][0]["resources"] == ["pods"])
