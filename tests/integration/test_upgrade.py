"""`helm upgrade` from the previous chart version with live graphs, on the local cluster.

The previous version is a committed fixture (tests/fixtures/charts/dynamo-platform-0.1.0.tgz, packaged from
commit 52fbb96), so the test never needs git history. The operator runs as a local process (kwok's nodes run
no containers) with the OperatorConfiguration each chart version installed: the old one before the upgrade,
the new one after. What must hold:

* every child of every graph keeps its UID, and no Deployment's pod template (nor its generation) moves:
  the upgrade changed nothing the operator renders, when the values keep the previous version's etcd
  and NATS modes (plain, no authentication: ``KEEP_PREVIOUS_MODES``);
* then upgraded onto this version's defaults (etcd with mutual TLS and each graph namespace's own access,
  NATS with each namespace's own account), the changes to those graphs, all on Kubernetes discovery, are
  the ``ETCD_ENDPOINTS`` they no longer get and their namespace's NATS certificate (mounted, the
  ``NATS_TLS_*`` paths, ``tls://`` in ``NATS_SERVER``): a one-time roll (docs/upgrades.md); every child
  keeps its UID;
* the CRDs of this version applied over the old ones (Helm never upgrades `crds/`, so that is the
  documented upgrade step) and a storage-version migration (every object read and written back at the
  storage version, then `status.storedVersions` trimmed to it) leave every stored object readable at both
  served versions, v1alpha1 and v1beta1.
"""

from __future__ import annotations

import json

import pytest
import yaml
from dynamo_operator.controllers import store
from dynamo_operator.render import natsaccess as na
from dynamo_operator.runtime.client import custom
from dynamo_operator.webhooks.certs import CRDS
from support.dgd import wait_successful
from support.poll import wait_for
from support.release import CHART, PREVIOUS_CHART, preserved_crds, release, run

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

NS_PREFIX = "upgrade"
EXAMPLES = ["vllm-agg.yaml", "sglang-agg-v1alpha1.yaml"]
CHILD_KINDS = "deployments,services,configmaps,serviceaccounts,dynamocomponentdeployments.nvidia.com"
# the previous version's etcd and NATS modes, kept by values (docs/security-network.md, "Opting out",
# "Upgrading")
KEEP_PREVIOUS_MODES = tuple(
    arg
    for value in (
        "etcd.auth.client.secureTransport=false",
        "etcd.auth.client.enableAuthentication=false",
        "etcd.auth.rbac.create=false",
        "dynamo-operator.etcdAuth.method=none",
        "nats.auth.enabled=false",
        "dynamo-operator.natsAuth.method=none",
    )
    for arg in ("--set", value)
)


def _children(env: dict[str, str], ns: str) -> dict[str, dict]:
    """Every object the operator made in ``ns``: kind/name -> uid, generation, pod template."""
    out = run(env, "kubectl", "get", CHILD_KINDS, "-n", ns, "-o", "json")
    found = {}
    for obj in json.loads(out.stdout)["items"]:
        md = obj["metadata"]
        if not any(
            ref.get("apiVersion", "").startswith("nvidia.com/") for ref in md.get("ownerReferences") or []
        ):
            continue  # kube-root-ca.crt, the default ServiceAccount...
        template = (obj.get("spec") or {}).get("template") if obj["kind"] == "Deployment" else None
        found[f"{obj['kind']}/{md['name']}"] = {
            "uid": md["uid"],
            "generation": md.get("generation"),
            "template": json.dumps(template, sort_keys=True) if template else None,
        }
    return found


def _names(example: str) -> str:
    return yaml.safe_load((CHART.parents[1] / "examples" / example).read_text())["metadata"]["name"]


def _apply_new_crds(client, env: dict[str, str], tmp_path) -> None:
    """The documented step (Helm never upgrades crds/): `kubectl apply --server-side -f crds/`. In a
    cluster the live conversion config is the file's Service plus the caBundle the operator injects; here
    the local operator reaches the apiserver by URL instead, so each CRD keeps its live conversion."""
    docs = []
    for path in sorted((CHART.parents[1] / "crds").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        live = client.get(CRDS, doc["metadata"]["name"])
        doc["spec"]["conversion"] = live["spec"].get("conversion")
        docs.append(doc)
    out = tmp_path / "crds.yaml"
    out.write_text(yaml.safe_dump_all(docs))
    run(env, "kubectl", "apply", "--server-side", "--force-conflicts", "-f", str(out))


def _readable_at_both_versions(client, ns: str) -> None:
    for plural in ("dynamographdeployments", "dynamocomponentdeployments"):
        names = None
        for version in ("v1alpha1", "v1beta1"):
            res = custom(store.GROUP, version, plural, plural)
            items = client.list(res, namespace=ns)["items"]
            got = sorted(o["metadata"]["name"] for o in items)
            assert all(o["apiVersion"] == f"nvidia.com/{version}" for o in items)
            for name in got:  # and one by one, as kubectl get NAME does
                assert client.get(res, name, ns)["metadata"]["name"] == name
            names = got if names is None else names
            assert got == names, f"{plural}: {version} lists {got}, the other version {names}"
        assert names, f"no {plural} in {ns}"


def _migrate_storage(client, ns: str) -> None:
    """What kube-storage-version-migrator does: rewrite every object at the storage version, then record
    that only the storage version is stored."""
    for res in (store.DGD, store.DCD):
        for obj in client.list(res, namespace=ns)["items"]:
            client.replace(res, obj)
    for crd_name in ("dynamographdeployments.nvidia.com", "dynamocomponentdeployments.nvidia.com"):
        crd = client.get(CRDS, crd_name)
        storage = next(v["name"] for v in crd["spec"]["versions"] if v["storage"])
        crd["status"]["storedVersions"] = [storage]
        client.replace(CRDS, crd, subresource="status")
        assert client.get(CRDS, crd_name)["status"]["storedVersions"] == [storage]


def test_upgrade_from_the_previous_chart_keeps_every_child(kube_cluster, client, ns, tmp_path) -> None:
    assert PREVIOUS_CHART.is_file(), f"missing fixture {PREVIOUS_CHART}"
    env = kube_cluster.env
    with preserved_crds(client), release(kube_cluster, tmp_path, "up") as rel:
        rel.install(PREVIOUS_CHART)
        old = run(env, "helm", "list", "-n", rel.namespace, "-o", "json")
        assert json.loads(old.stdout)[0]["chart"] == "dynamo-platform-0.1.0"
        rel.start_operator()
        for example in EXAMPLES:
            run(env, "kubectl", "apply", "-n", ns, "-f", str(CHART.parents[1] / "examples" / example))
        for example in EXAMPLES:
            wait_successful(client, ns, _names(example), timeout=120)
        before = _children(env, ns)
        assert any(k.startswith("Deployment/") for k in before), before

        rel.stop_operator()
        rel.upgrade(CHART, *KEEP_PREVIOUS_MODES)
        new = json.loads(run(env, "helm", "list", "-n", rel.namespace, "-o", "json").stdout)[0]
        assert new["chart"].startswith("dynamo-platform-") and new["chart"] != "dynamo-platform-0.1.0"
        assert new["revision"] == "2"
        _apply_new_crds(client, env, tmp_path)
        rel.start_operator()
        for example in EXAMPLES:
            wait_successful(client, ns, _names(example), timeout=120)
        # settle: a reconcile after the restart has had time to write whatever it would write
        wait_for(
            lambda: _children(env, ns) == before,
            20,
            lambda: (
                "children changed across the upgrade:\n"
                + "\n".join(
                    f"{k}: {before.get(k)} -> {v}"
                    for k, v in _children(env, ns).items()
                    if before.get(k) != v
                )
            ),
            interval=1.0,
        )

        _migrate_storage(client, ns)
        _readable_at_both_versions(client, ns)
        assert _children(env, ns) == before
        rel.stop_operator()
        _onto_the_new_defaults(rel, client, ns, before)


NATS_WIRING = {e["name"] for e in na.env()}  # what each namespace's NATS account adds to a container


def _previous_form(children: dict[str, dict]) -> dict[str, tuple]:
    """kind/name -> (uid, pod template without ETCD_ENDPOINTS and with the NATS account's wiring taken
    back: its variables, its volume and mount, and ``nats://`` for ``tls://``)."""
    out = {}
    for key, child in children.items():
        template = json.loads(child["template"]) if child["template"] else None
        spec = (template or {}).get("spec", {})
        for container in spec.get("containers", []):
            env = [e for e in container.get("env", []) if e["name"] != "ETCD_ENDPOINTS"]
            env = [e for e in env if e["name"] not in NATS_WIRING]
            for e in env:
                if e["name"] == "NATS_SERVER":
                    e["value"] = e["value"].replace("tls://", "nats://", 1)
            container["env"] = env
            mounts = [m for m in container.get("volumeMounts", []) if m["name"] != na.TLS_VOLUME]
            if "volumeMounts" in container:
                container["volumeMounts"] = mounts
        if "volumes" in spec:
            spec["volumes"] = [v for v in spec["volumes"] if v["name"] != na.TLS_VOLUME]
        out[key] = (child["uid"], json.dumps(template, sort_keys=True) if template else None)
    return out


def _onto_the_new_defaults(rel, client, ns: str, before: dict[str, dict]) -> None:
    env = rel.env
    assert any("ETCD_ENDPOINTS" in (c["template"] or "") for c in before.values())  # they had it
    rel.upgrade(CHART)
    config = rel.operator_config().read_text()
    assert "namespaceCertificate" in config and "namespaceAccount" in config
    rel.start_operator()
    for example in EXAMPLES:
        wait_successful(client, ns, _names(example), timeout=120)
    want = _previous_form(before)

    def rolled_once() -> bool:
        now = _children(env, ns)
        templates = [c["template"] for c in now.values() if c["template"]]
        return (
            _previous_form(now) == want
            and not any("ETCD_ENDPOINTS" in t for t in templates)
            and all(na.TLS_VOLUME in t and "tls://" in t for t in templates)
        )

    wait_for(
        rolled_once,
        60,
        lambda: "\n".join(
            f"{k}: {want.get(k)} -> {v}"
            for k, v in _previous_form(_children(env, ns)).items()
            if want.get(k) != v
        ),
        interval=1.0,
    )
    rel.stop_operator()
