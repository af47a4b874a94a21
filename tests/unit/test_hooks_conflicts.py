"""The conflict matrix of the chart document (six scenarios), a pure function of the detected operators.

Discovery from cluster markers (Deployments, namespace-scope and leader Leases) runs against a real apiserver
in ``tests/integration/test_hooks_checks_cluster.py``."""

import pytest
from dynamo_hooks.conflicts import (
    SCENARIOS,
    ExistingOperator,
    Source,
    evaluate,
)
from dynamo_hooks.settings import InstallSettings, OperatorMode

CW = OperatorMode.CLUSTER_WIDE
NR = OperatorMode.NAMESPACE_RESTRICTED


def settings(
    release: str, ns: str, restricted: bool = False, target: str | None = None, hybrid: bool = False
) -> InstallSettings:
    values = {"dynamo-operator": {"namespaceRestriction": {"hybrid": True}}} if hybrid else {}
    return InstallSettings.from_values(
        values,
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
    document = [s for s in SCENARIOS.values() if not s.id.endswith(("same-namespace", "-hybrid"))]
    assert len(document) == 6


@pytest.mark.parametrize(
    ("current", "new", "scenario", "restricted_ns"),
    [
        (
            [existing(CW, "dynamo-system")],
            settings("test", "team-a", True, hybrid=True),
            "cluster-wide/namespace-restricted-hybrid",
            "team-a",
        ),
        (
            [existing(NR, "team-a")],
            settings("prod", "dynamo-system", hybrid=True),
            "namespace-restricted/cluster-wide-hybrid",
            "team-a",
        ),
    ],
)
def test_the_hybrid_layout_is_allowed_with_its_value(current, new, scenario, restricted_ns) -> None:
    """The operator overview's hybrid layout: one cluster-wide operator beside restricted ones, in either
    order of installation, when the release says so; the message says how they share namespaces."""
    (decision,) = evaluate(current, new)
    assert (decision.scenario.id, decision.allowed, decision.fix) == (scenario, True, "")
    assert decision.scenario.reason.startswith("Hybrid layout")
    assert f"While Lease {restricted_ns}/dynamo-operator-namespace-scope is renewed" in decision.message
    assert "takes the namespace back" in decision.message


@pytest.mark.parametrize(
    ("current", "new"),
    [
        ([existing(CW, "dynamo-system")], settings("test", "team-a", True)),
        ([existing(NR, "team-a")], settings("prod", "dynamo-system")),
    ],
)
def test_without_the_value_the_fix_names_the_hybrid_layout(current, new) -> None:
    (decision,) = evaluate(current, new)
    assert not decision.allowed
    assert "--set dynamo-operator.namespaceRestriction.hybrid=true" in decision.fix


def test_the_hybrid_value_does_not_let_two_cluster_wide_operators_in() -> None:
    (decision,) = evaluate([existing(CW, "dynamo-system")], settings("b", "other-system", hybrid=True))
    assert (decision.scenario.id, decision.allowed) == ("cluster-wide/cluster-wide", False)


def test_upgrade_of_the_same_release_is_not_a_conflict() -> None:
    decisions = evaluate([existing(CW, "dynamo-system", release="a")], settings("a", "dynamo-system"))
    assert decisions[0].scenario.id == "none/cluster-wide"
