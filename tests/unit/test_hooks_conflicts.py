"""The conflict matrix of the chart document (six scenarios) and operator discovery from cluster markers."""

import pytest
from dynamo_hooks.conflicts import (
    NAMESPACE_SCOPE_LEASE,
    SCENARIOS,
    ExistingOperator,
    Source,
    discover,
    evaluate,
)
from dynamo_hooks.fake import DEPLOYMENTS, LEASES, FakeCluster, lease, operator_deployment
from dynamo_hooks.settings import InstallSettings, OperatorMode

CW = OperatorMode.CLUSTER_WIDE
NR = OperatorMode.NAMESPACE_RESTRICTED


def settings(release: str, ns: str, restricted: bool = False, target: str | None = None) -> InstallSettings:
    return InstallSettings.from_values(
        {},
        release_name=release,
        release_namespace=ns,
        namespace_restricted=restricted,
        target_namespace=target,
    )


def existing(mode: OperatorMode, ns: str, release: str = "other") -> ExistingOperator:
    return ExistingOperator(
        mode=mode,
        namespace=ns,
        target_namespace=ns if mode is NR else None,
        source=Source.DEPLOYMENT,
        object_ref=f"Deployment {ns}/{release}-dynamo-operator-controller-manager",
        release_name=release,
        release_namespace=ns,
    )


@pytest.mark.parametrize(
    ("current", "new", "scenario", "allowed", "reason"),
    [
        ([], settings("a", "dynamo-system"), "none/cluster-wide", True, "No conflicts"),
        ([], settings("a", "team-a", True), "none/namespace-restricted", True, "No conflicts"),
        (
            [existing(CW, "dynamo-system")],
            settings("b", "other-system"),
            "cluster-wide/cluster-wide",
            False,
            "Multiple cluster managers",
        ),
        (
            [existing(CW, "dynamo-system")],
            settings("b", "team-a", True),
            "cluster-wide/namespace-restricted",
            False,
            "Cluster-wide already manages target namespace",
        ),
        (
            [existing(NR, "team-a")],
            settings("b", "dynamo-system"),
            "namespace-restricted/cluster-wide",
            False,
            "Would conflict with existing namespace operators",
        ),
        (
            [existing(NR, "team-a")],
            settings("b", "team-b", True),
            "namespace-restricted/namespace-restricted-other-namespace",
            True,
            "Different scopes",
        ),
        (
            [existing(NR, "team-a")],
            settings("b", "team-b", True, target="team-a"),
            "namespace-restricted/namespace-restricted-same-namespace",
            False,
            "Target namespace already has",
        ),
    ],
)
def test_matrix(current, new, scenario, allowed, reason) -> None:
    decisions = evaluate(current, new)
    assert [d.scenario.id for d in decisions] == [scenario]
    assert decisions[0].allowed is allowed
    assert decisions[0].scenario.reason.startswith(reason)
    if not allowed:
        assert "helm uninstall other" in decisions[0].fix
        assert decisions[0].existing is not None and decisions[0].existing.object_ref in decisions[0].message


def test_matrix_covers_the_chart_document_table() -> None:
    rows = {(s.existing, s.new, s.allowed, s.reason) for s in SCENARIOS.values()}
    assert ("Cluster-wide", "Cluster-wide", False, "Multiple cluster managers") in rows
    assert ("Namespace-restricted A", "Namespace-restricted B (diff ns)", True, "Different scopes") in rows
    assert len([s for s in SCENARIOS.values() if not s.id.endswith("same-namespace")]) == 6


def test_upgrade_of_the_same_release_is_not_a_conflict() -> None:
    decisions = evaluate([existing(CW, "dynamo-system", release="a")], settings("a", "dynamo-system"))
    assert decisions[0].scenario.id == "none/cluster-wide"


def test_discover_by_deployment_labels_and_modes() -> None:
    fake = FakeCluster()
    fake.add(DEPLOYMENTS.format(ns="dynamo-system"), operator_deployment("dynamo-system", "prod"))
    fake.add(
        DEPLOYMENTS.format(ns="team-a"),
        operator_deployment("team-a", "test", restricted_namespace="team-a", annotate_mode=False),
    )
    unrelated = operator_deployment("x", "x")
    unrelated["metadata"]["labels"]["app.kubernetes.io/name"] = "something-else"
    fake.add(DEPLOYMENTS.format(ns="x"), unrelated)
    found = discover(fake, leader_election_id="dynamo.nvidia.com")
    by_ns = {op.namespace: op for op in found.operators}
    assert set(by_ns) == {"dynamo-system", "team-a"}
    assert by_ns["dynamo-system"].mode is CW and by_ns["dynamo-system"].release_name == "prod"
    assert by_ns["team-a"].mode is NR and by_ns["team-a"].target_namespace == "team-a"
    assert by_ns["team-a"].version == "0.1.0"


def test_discover_namespace_scope_leases_live_and_expired() -> None:
    fake = FakeCluster()
    fake.add(LEASES.format(ns="team-a"), lease("team-a", NAMESPACE_SCOPE_LEASE, "op-pod-abc-0.2.0"))
    fake.add(
        LEASES.format(ns="team-old"),
        lease("team-old", NAMESPACE_SCOPE_LEASE, "op-pod-x-0.1.0", renewed_seconds_ago=300),
    )
    found = discover(fake, leader_election_id="dynamo.nvidia.com")
    assert [(op.mode, op.target_namespace, op.source) for op in found.operators] == [
        (NR, "team-a", Source.NAMESPACE_SCOPE_LEASE)
    ]
    assert found.operators[0].version == "0.2.0"
    assert any("team-old" in m for m in found.stale_markers)


def test_lease_marks_a_default_mode_deployment_as_restricted() -> None:
    fake = FakeCluster()
    dep = operator_deployment("team-a", "t", annotate_mode=False)
    fake.add(DEPLOYMENTS.format(ns="team-a"), dep)
    fake.add(LEASES.format(ns="team-a"), lease("team-a", NAMESPACE_SCOPE_LEASE, "t-pod-0.1.0"))
    found = discover(fake, leader_election_id="dynamo.nvidia.com")
    assert len(found.operators) == 1
    assert found.operators[0].mode is NR and found.operators[0].release_name == "t"


def test_leader_lease_reveals_an_unlabelled_cluster_wide_operator() -> None:
    fake = FakeCluster()
    fake.add(LEASES.format(ns="kube-system"), lease("kube-system", "dynamo.nvidia.com", "mystery-pod_1234"))
    found = discover(fake, leader_election_id="dynamo.nvidia.com")
    assert [(op.mode, op.source) for op in found.operators] == [(CW, Source.LEADER_LEASE)]
    decisions = evaluate(found.operators, settings("new", "dynamo-system"))
    assert not decisions[0].allowed


def test_leader_lease_held_by_a_known_deployment_is_not_counted_twice() -> None:
    fake = FakeCluster()
    fake.add(DEPLOYMENTS.format(ns="dynamo-system"), operator_deployment("dynamo-system", "prod"))
    holder = "prod-dynamo-operator-controller-manager-5d9f-abcde_1234"
    fake.add(LEASES.format(ns="kube-system"), lease("kube-system", "dynamo.nvidia.com", holder))
    found = discover(fake, leader_election_id="dynamo.nvidia.com")
    assert len(found.operators) == 1 and found.operators[0].source is Source.DEPLOYMENT


def test_expired_leader_lease_is_ignored() -> None:
    fake = FakeCluster()
    fake.add(
        LEASES.format(ns="kube-system"),
        lease("kube-system", "dynamo.nvidia.com", "gone_1", renewed_seconds_ago=120, duration=15),
    )
    assert discover(fake, leader_election_id="dynamo.nvidia.com").operators == []


def test_forbidden_lists_become_limitations_not_crashes() -> None:
    fake = FakeCluster()
    fake.forbidden_paths = {"/apis/apps/v1/deployments", "/apis/coordination.k8s.io"}
    found = discover(fake, leader_election_id="dynamo.nvidia.com")
    assert found.operators == [] and len(found.limitations) == 3
