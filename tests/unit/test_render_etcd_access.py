"""Each graph namespace's own etcd access as rendered (``infrastructure.etcdAuth.method:
namespaceCertificate``, the chart's default with its bundled etcd; ``render/etcdaccess.py``): the pods of a
graph on etcd discovery get the tunnel and proxy sidecars, the namespace's certificate as files in the
tunnel alone, and ``ETCD_ENDPOINTS`` their own proxy with no credential; graphs on Kubernetes discovery get
none of it; ``render_all`` shows the namespace's Secret without its certificate.
(tests/integration/test_etcd_access.py runs the sidecars' commands against a real etcd.)"""

from __future__ import annotations

import copy

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.api.config import ConfigError, parse_operator_config
from dynamo_operator.render import RenderContext, render_all
from dynamo_operator.render import etcdaccess as ea

ETCD_GRAPH = yaml.safe_load((REPO_ROOT / "examples" / "mocker-etcd.yaml").read_text())
ETCD_ADDRESS = "https://dp-etcd.dynamo-system.svc.cluster.local:2379"


# what the chart writes with its defaults (charts/platform/components/operator/templates/_infrastructure.tpl)
ETCD_AUTH = {
    "method": "namespaceCertificate",
    "secretName": "dynamo-etcd-client",
    "adminSecretName": "dp-etcd-admin",
    "adminSecretNamespace": "dynamo-system",
    "proxyImage": "quay.io/coreos/etcd:v3.5.21",
}


def config(**etcd_auth) -> dict:
    return {
        "images": {"operator": "ghcr.io/dynamo-platform/dynamo-operator:0.1.0"},
        "infrastructure": {"etcdAddress": ETCD_ADDRESS, "etcdAuth": {**ETCD_AUTH, **etcd_auth}},
    }


def context(**etcd_auth) -> RenderContext:
    return RenderContext(operator_config=parse_operator_config(config(**etcd_auth)))


def rendered(ctx: RenderContext, backend: str | None = "etcd") -> list[dict]:
    graph = copy.deepcopy(ETCD_GRAPH)
    graph["metadata"]["namespace"] = "team-a"
    if backend is None:
        del graph["metadata"]["annotations"]
    return render_all(graph, ctx)


def pods(objs: list[dict]) -> list[dict]:
    return [o["spec"]["template"]["spec"] for o in objs if o["kind"] == "Deployment"]


def test_a_graph_on_etcd_reaches_it_through_its_sidecars_with_no_credential_in_the_runtime() -> None:
    found = pods(rendered(context(secretName="team-etcd", proxyImage="registry.example/etcd:v3.5.21")))
    assert len(found) == 2  # the frontend and the worker
    for pod in found:
        tunnel, proxy = pod["initContainers"][-2:]
        assert (tunnel["name"], proxy["name"]) == (ea.TUNNEL_CONTAINER, ea.PROXY_CONTAINER)
        assert tunnel["restartPolicy"] == proxy["restartPolicy"] == "Always"  # native sidecars
        assert tunnel["image"] == "ghcr.io/dynamo-platform/dynamo-operator:0.1.0"
        assert tunnel["args"] == [
            "--listen=127.0.0.1:23791",
            "--upstream=dp-etcd.dynamo-system.svc.cluster.local:2379",
            f"--tls-dir={ea.TLS_DIR}",
            "--watch-listen=127.0.0.1:23790",  # the runtime's ETCD_ENDPOINTS: the watch keeper
            "--watch-upstream=127.0.0.1:23792",
        ]
        assert proxy["image"] == "registry.example/etcd:v3.5.21"
        assert proxy["args"] == [
            "--endpoints=http://127.0.0.1:23791",
            "--listen-addr=127.0.0.1:23792",
            "--namespace=ns/team-a/",
        ]
        assert ea.PROXY_ADDRESS == "http://127.0.0.1:23790"
        assert not proxy.get("volumeMounts")  # the certificate is the tunnel's alone
        (volume,) = [v for v in pod["volumes"] if v["name"] == ea.TLS_VOLUME]
        assert volume["secret"]["secretName"] == "team-etcd"
        modes = {i["key"]: i["mode"] for i in volume["secret"]["items"]}
        assert modes == {"ca.crt": 0o444, "tls.crt": 0o444, "tls.key": 0o440}
        main = pod["containers"][0]
        env = {e["name"]: e for e in main["env"]}
        assert env["ETCD_ENDPOINTS"] == {"name": "ETCD_ENDPOINTS", "value": ea.PROXY_ADDRESS}
        assert not [n for n in env if n.startswith("ETCD_AUTH")], sorted(env)
        assert not [m for m in main.get("volumeMounts", []) if m["name"] == ea.TLS_VOLUME]


def test_the_namespace_secret_is_shown_without_its_certificate() -> None:
    (secret,) = [o for o in rendered(context()) if o["kind"] == "Secret"]
    assert secret["metadata"]["name"] == "dynamo-etcd-client"  # etcdAuth.secretName's default
    assert secret["metadata"]["namespace"] == "team-a" and secret["type"] == "kubernetes.io/tls"
    assert secret["metadata"]["labels"][ea.LABEL_ETCD_CLIENT] == "true"
    assert "data" not in secret


def test_a_graph_on_kubernetes_discovery_gets_no_etcd_at_all() -> None:
    objs = rendered(context(), backend=None)
    assert not [o for o in objs if o["kind"] == "Secret"]
    for pod in pods(objs):
        names = [c["name"] for c in pod.get("initContainers", [])]
        assert ea.TUNNEL_CONTAINER not in names and ea.PROXY_CONTAINER not in names
        assert "ETCD_ENDPOINTS" not in {e["name"] for e in pod["containers"][0]["env"]}


@pytest.mark.parametrize("field", ["secretName", "adminSecretName", "adminSecretNamespace", "proxyImage"])
def test_the_configuration_refuses_the_method_without_each_of_its_fields(field: str) -> None:
    cfg = config()
    del cfg["infrastructure"]["etcdAuth"][field]
    with pytest.raises(ConfigError, match=f"infrastructure.etcdAuth.{field}: is required with method"):
        parse_operator_config(cfg)


def test_the_operator_reads_the_admin_secret_the_configuration_names() -> None:
    """adminSecretName and adminSecretNamespace: where the controller reads the CA, its certificate and
    root's password (the chart writes its release's <release>-etcd-admin there)."""
    assert ea.admin_secret(context()) == ("dynamo-system", "dp-etcd-admin")
    theirs = context(adminSecretName="my-etcd-admin", adminSecretNamespace="platform")
    assert ea.admin_secret(theirs) == ("platform", "my-etcd-admin")
