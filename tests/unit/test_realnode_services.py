"""What the real-node tier installs beside the chart, as objects (the processes run in tests/realnode): the
LeaderWorkerSet controller (``realnode/lws.py``) and the images its multinode tests run."""

from __future__ import annotations

from dynamo_localcluster.realnode import lws
from support.imagebuild import image_build


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


def test_the_mpi_engine_image_runs_what_the_rendered_launch_calls():
    """``render/multinode.py``'s TensorRT-LLM launch runs sshd, ssh and mpirun/orted as root; the image
    drops the host keys Debian generated (the Secret's are used) and PAM, which refuses logins in a pod."""
    build = image_build()
    recipe = build.recipes()["mpi"]
    assert {"openssh-server", "openssh-client", "openmpi-bin", "python3-mpi4py"} <= set(recipe.packages)
    assert recipe.user is None and build.recipe_config(recipe).user == "0:0"
    script = build.install_script(recipe, 0)
    assert "pip" not in script and "/etc/passwd" not in script
    assert "rm -f /etc/ssh/ssh_host_*" in script and "UsePAM no" in script


def test_the_helm_test_image_has_the_commands_the_charts_test_runs():
    """The chart's ``helm test`` pod runs ``sh -ec`` with ``wget -qO-`` and ``nc -z -w``. Debian's static
    busybox (the first choice) has an ``nc`` without ``-z``: every helm test failed on its usage message."""
    import yaml
    from dynamo_localcluster.realnode.node import PLACEMENT_VALUES

    build = image_build()
    recipe = build.recipes()["helm-test"]
    assert {"wget", "netcat-openbsd"} <= set(recipe.packages)
    tests = yaml.safe_load(PLACEMENT_VALUES.read_text())["tests"]
    assert tests["image"] == recipe.ref and tests["imagePullPolicy"] == "Never"
