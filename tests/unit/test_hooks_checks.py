"""Each registered check against an in-memory cluster, and the text / JSON reports built from them."""

import json

import pytest
from dynamo_hooks.chart import ChartInfo, CrdInfo
from dynamo_hooks.checks import REGISTRY, Severity, Status, run_checks
from dynamo_hooks.fake import DEPLOYMENTS, FakeCluster, operator_deployment
from dynamo_hooks.preflight import PreflightInput, build_context
from dynamo_hooks.report import exit_code, to_json, to_text

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def crd(name: str, versions: list[str], storage: str, stamp: str | None = None) -> dict:
    meta: dict = {"name": name}
    if stamp:
        meta["annotations"] = {"nvidia.com/dynamo-platform-version": stamp}
    return {
        "metadata": meta,
        "spec": {"versions": [{"name": v, "served": True, "storage": v == storage} for v in versions]},
    }


def healthy() -> FakeCluster:
    fake = FakeCluster()
    fake.add("/api/v1/namespaces", {"metadata": {"name": "dynamo-system"}})
    fake.add(
        "/apis/storage.k8s.io/v1/storageclasses",
        {
            "metadata": {
                "name": "standard",
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            }
        },
    )
    fake.add(
        "/api/v1/nodes", {"metadata": {"name": "gpu-0"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}}
    )
    return fake


CHART = ChartInfo(
    path=None,
    version="0.1.0",
    app_version="0.1.0",
    crds=(CrdInfo("dynamographdeployments.nvidia.com", ("v1alpha1", "v1beta1"), "v1alpha1", "0.1.0"),),
)


def run(fake, *sets: str, chart: ChartInfo = CHART, ns: str = "dynamo-system", **kw):
    ctx = build_context(
        PreflightInput("dynamo-platform", ns, set_values=list(sets), **kw), chart, cluster=fake
    )
    return ctx, run_checks(ctx)


def by_id(results, check_id):
    return [r for r in results if r.id == check_id]


def test_healthy_cluster_passes_and_reports() -> None:
    ctx, results = run(healthy())
    assert exit_code(results) == 0, to_text(ctx, results)
    assert {r.id for r in results} == set(REGISTRY)
    text = to_text(ctx, results)
    assert "Result: OK" in text and "operators.conflicts" in text
    doc = json.loads(to_json(ctx, results))
    assert doc["apiVersion"] == "preflight.dynamo.nvidia.com/v1" and doc["summary"]["blocked"] is False
    assert [r["id"] for r in doc["results"]][:2] == ["cluster.api-reachable", "cluster.kubernetes-version"]
    assert set(doc["results"][0]) == {
        "id",
        "title",
        "severity",
        "status",
        "subject",
        "found",
        "fix",
        "details",
    }


def test_unreachable_api_skips_cluster_checks() -> None:
    fake = FakeCluster()
    fake.unreachable = True
    _, results = run(fake)
    assert by_id(results, "cluster.api-reachable")[0].blocking
    assert by_id(results, "operators.conflicts")[0].status is Status.SKIP
    assert exit_code(results) == 1


def test_kubernetes_version_out_of_range() -> None:
    fake = healthy()
    fake.version = "v1.29.4"
    _, results = run(fake)
    r = by_id(results, "cluster.kubernetes-version")[0]
    assert r.blocking and ">=1.30.0-0" in r.found and "default constraint" in r.found


def test_conflict_blocks_with_reason_and_fix() -> None:
    fake = healthy()
    fake.add(DEPLOYMENTS.format(ns="other"), operator_deployment("other", "prod"))
    _, results = run(fake)
    r = by_id(results, "operators.conflicts")[0]
    assert r.blocking and "Multiple cluster managers" in r.found and "helm uninstall prod -n other" in r.fix
    assert r.details["scenario"] == "cluster-wide/cluster-wide"
    _, restricted = run(fake, "dynamo-operator.namespaceRestriction.enabled=true")
    assert (
        "Cluster-wide already manages target namespace" in by_id(restricted, "operators.conflicts")[0].found
    )


def test_rbac_denials_are_listed() -> None:
    fake = healthy()
    fake.allow = lambda attrs: attrs["resource"] not in ("clusterroles", "customresourcedefinitions")
    _, results = run(fake)
    r = by_id(results, "rbac.install-permissions")[0]
    assert r.blocking and "clusterroles.rbac.authorization.k8s.io (cluster-scoped)" in r.found
    assert "customresourcedefinitions" in r.found  # the chart's CRD is not installed yet


def test_missing_namespace_needs_create_namespace() -> None:
    _, results = run(healthy(), ns="nowhere")
    assert any(r.blocking and "namespace nowhere does not exist" in r.found for r in results)
    _, ok = run(healthy(), ns="nowhere", create_namespace=True)
    assert not any("does not exist" in r.found for r in ok)


@pytest.mark.parametrize(
    ("installed", "severity", "word"),
    [
        (crd("dynamographdeployments.nvidia.com", ["v1alpha1"], "v1alpha1"), Severity.WARNING, "older"),
        (
            crd("dynamographdeployments.nvidia.com", ["v1alpha1", "v1beta1", "v1"], "v1"),
            Severity.ERROR,
            "newer",
        ),
        (
            crd("dynamographdeployments.nvidia.com", ["v1alpha1", "v1beta1"], "v1alpha1", "0.3.0"),
            Severity.ERROR,
            "newer",
        ),
    ],
)
def test_crd_skew(installed, severity, word) -> None:
    fake = healthy()
    fake.add(CRDS, installed)
    _, results = run(fake)
    failing = [r for r in by_id(results, "crds.version-skew") if r.status is Status.FAIL]
    assert len(failing) == 1 and failing[0].severity is severity and word in failing[0].found


def test_cert_manager_mode_needs_its_api() -> None:
    _, results = run(healthy(), "dynamo-operator.webhook.certManager.enabled=true")
    r = by_id(results, "webhook.cert-manager")[0]
    assert r.blocking and "certificates.cert-manager.io" in r.found
    fake = healthy()
    for name in ("certificates.cert-manager.io", "issuers.cert-manager.io"):
        fake.add(CRDS, crd(name, ["v1"], "v1"))
    _, ok = run(fake, "dynamo-operator.webhook.certManager.enabled=true")
    assert by_id(ok, "webhook.cert-manager")[0].status is Status.PASS


def test_storage_needs_a_default_class_or_a_named_one() -> None:
    fake = healthy()
    del fake.objects["/apis/storage.k8s.io/v1/storageclasses/standard"]
    _, results = run(fake)
    r = by_id(results, "storage.default-class")[0]
    assert r.blocking and "etcd" in r.found and "etcd.persistence.enabled=false" in r.fix
    _, named = run(healthy(), "etcd.persistence.storageClass=missing")
    assert "'missing'" in by_id(named, "storage.default-class")[0].found
    _, off = run(fake, "etcd.persistence.enabled=false")
    assert by_id(off, "storage.default-class")[0].status is Status.SKIP


def test_no_gpus_is_a_warning_only() -> None:
    fake = healthy()
    fake.objects["/api/v1/nodes/gpu-0"]["status"]["allocatable"] = {"cpu": "8"}
    _, results = run(fake)
    r = by_id(results, "nodes.gpu")[0]
    assert r.status is Status.FAIL and r.severity is Severity.WARNING and exit_code(results) == 0


def test_orchestrator_apis() -> None:
    _, results = run(healthy(), "dynamo-operator.orchestrators.lws.enabled=true")
    lws = next(r for r in by_id(results, "apis.orchestrators") if r.subject == "lws")
    assert lws.blocking and "leaderworkersets.leaderworkerset.x-k8s.io" in lws.found
    fake = healthy()
    fake.add(CRDS, crd("podcliquesets.grove.io", ["v1alpha1"], "v1alpha1"))
    _, results = run(fake, "grove.enabled=true")
    grove = next(r for r in by_id(results, "apis.orchestrators") if r.subject == "grove")
    assert (
        grove.status is Status.FAIL
        and grove.severity is Severity.WARNING
        and "grove.enabled=false" in grove.fix
    )


@pytest.mark.parametrize(
    ("sets", "fragment", "blocking"),
    [
        (["nats.enabled=false", "dynamo-operator.natsAddr=nats://nats.x.svc:4222"], "well formed", False),
        (["nats.enabled=false", "dynamo-operator.natsAddr=http://nats:4222"], "scheme 'http'", True),
        (["nats.enabled=false", "dynamo-operator.natsAddr=nats://nats"], "no port", True),
        (["nats.enabled=false", "dynamo-operator.natsAddr=nats://nats:99999"], "port is not a number", True),
        (["etcd.enabled=false", "dynamo-operator.etcdAddr=etcd.x.svc:2379"], "has no scheme", False),
        (["dynamo-operator.etcdAddr=http://etcd:2379"], "would run unused", False),
    ],
)
def test_external_addresses(sets, fragment, blocking) -> None:
    _, results = run(healthy(), *sets)
    found = by_id(results, "values.external-addresses")
    hit = [r for r in found if fragment in r.found]
    assert hit, [r.found for r in found]
    assert any(r.blocking for r in found) is blocking


def test_custom_leader_election_id_blocks_cluster_wide() -> None:
    _, results = run(healthy(), "dynamo-operator.controllerManager.leaderElection.id=mine")
    assert by_id(results, "values.leader-election")[0].blocking


def test_only_and_skip_select_checks() -> None:
    ctx = build_context(PreflightInput("r", "dynamo-system"), CHART, cluster=healthy())
    assert {r.id for r in run_checks(ctx, only={"nodes.gpu"})} == {"nodes.gpu"}
    assert "nodes.gpu" not in {r.id for r in run_checks(ctx, skip={"nodes.gpu"})}
    with pytest.raises(KeyError, match="unknown check"):
        run_checks(ctx, only={"nope"})
