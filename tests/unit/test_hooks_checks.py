"""The checks that judge values alone, check selection, and the text / JSON reports, with no cluster.

Every check that reads the cluster runs against a real apiserver in
``tests/integration/test_hooks_checks_cluster.py``."""

import json

import pytest
from dynamo_hooks.chart import ChartInfo
from dynamo_hooks.checks import REGISTRY, CheckContext, Result, Severity, Status, run_checks
from dynamo_hooks.cluster import ClusterError
from dynamo_hooks.report import exit_code, to_json, to_text
from dynamo_hooks.settings import InstallSettings
from dynamo_hooks.values import compute_values

CHART = ChartInfo(path=None, version="0.1.0", app_version="0.1.0")


def context(*sets: str, ns: str = "dynamo-system") -> CheckContext:
    """A context without a cluster (never connects): only the checks that need none can run."""
    values = compute_values(CHART.default_values, [], list(sets), [])
    settings = InstallSettings.from_values(values, release_name="dynamo-platform", release_namespace=ns)
    return CheckContext(
        settings=settings,
        chart=CHART,
        values=values,
        cluster=None,
        connect_error=ClusterError(0, "no cluster in unit tests"),
    )


def by_id(results, check_id):
    return [r for r in results if r.id == check_id]


def passing(check_id: str) -> Result:
    spec = REGISTRY[check_id]
    return Result(check_id, spec.title, spec.severity, Status.PASS, "fine", "", "", {})


def test_report_of_passing_results() -> None:
    ctx = context()
    results = [passing(check_id) for check_id in REGISTRY]
    assert exit_code(results) == 0
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


def test_report_of_a_blocking_result() -> None:
    ctx = context()
    spec = REGISTRY["operators.conflicts"]
    blocked = Result(spec.id, spec.title, Severity.ERROR, Status.FAIL, "conflict", "uninstall it", "", {})
    results = [passing("cluster.api-reachable"), blocked]
    assert exit_code(results) == 1
    assert "BLOCKED" in to_text(ctx, results)
    assert json.loads(to_json(ctx, results))["summary"]["blocked"] is True


def test_without_a_cluster_the_cluster_checks_are_skipped() -> None:
    results = run_checks(context())
    assert by_id(results, "cluster.api-reachable")[0].blocking
    assert all(r.status is Status.SKIP for r in results if REGISTRY[r.id].needs_cluster)


@pytest.mark.parametrize(
    ("sets", "fragment", "blocking"),
    [
        (["nats.enabled=false", "dynamo-operator.natsAddr=nats://nats.x.svc:4222"], "well formed", False),
        (["nats.enabled=false", "dynamo-operator.natsAddr=http://nats:4222"], "scheme 'http'", True),
        (["nats.enabled=false", "dynamo-operator.natsAddr=nats://nats"], "no port", True),
        (["nats.enabled=false", "dynamo-operator.natsAddr=nats://nats:99999"], "port is not a number", True),
        (["etcd.enabled=false", "dynamo-operator.etcdAddr=etcd.x.svc:2379"], "has no scheme", False),
        (["dynamo-operator.etcdAddr=http://etcd:2379"], "would run unused", False),
        (["nats.enabled=false", "etcd.enabled=false"], "does not need nats", False),
        (["nats.enabled=false", "etcd.enabled=false"], "does not need etcd", False),
        (["etcd.enabled=false", "dynamo-operator.discoveryBackend=etcd"], "needs etcd", True),
    ],
)
def test_external_addresses(sets, fragment, blocking) -> None:
    found = run_checks(context(*sets), only={"values.external-addresses"})
    hit = [r for r in found if fragment in r.found]
    assert hit, [r.found for r in found]
    assert any(r.blocking for r in found) is blocking


def test_custom_leader_election_id_blocks_cluster_wide() -> None:
    results = run_checks(
        context("dynamo-operator.controllerManager.leaderElection.id=mine"), only={"values.leader-election"}
    )
    assert by_id(results, "values.leader-election")[0].blocking


def test_only_and_skip_select_checks() -> None:
    ctx = context()
    assert {r.id for r in run_checks(ctx, only={"nodes.gpu"})} == {"nodes.gpu"}
    assert "nodes.gpu" not in {r.id for r in run_checks(ctx, skip={"nodes.gpu"})}
    with pytest.raises(KeyError, match="unknown check"):
        run_checks(ctx, only={"nope"})


def test_version_skew_counts_only_the_crds_of_enabled_subcharts():
    """Helm installs a subchart's crds/ only when its condition holds: the Grove and Kai CRDs must not be
    compared (or announced as "will be installed") for a release that leaves those subcharts off."""
    from dynamo_hooks.chart import load_chart
    from dynamo_localcluster.cluster import REPO_ROOT

    chart = load_chart(REPO_ROOT / "charts" / "platform")
    groups = lambda crds: {c.name.split(".", 1)[1] for c in crds}  # noqa: E731
    off = {**chart.default_values, "grove": {"enabled": False}, "kai-scheduler": {"enabled": False}}
    on = {**chart.default_values, "grove": {"enabled": True}, "kai-scheduler": {"enabled": True}}
    assert groups(chart.crds_installed_with(off)) == {"nvidia.com"}
    assert groups(chart.crds_installed_with(on)) == {"nvidia.com", "grove.io", "scheduling.run.ai"}
