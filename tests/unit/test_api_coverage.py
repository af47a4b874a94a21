"""docs/api-coverage.md cannot go stale: every field of every kind (both versions), of the
OperatorConfiguration and every chart value has an entry (acts / refused / storage-only, or pending on a
change in flight), every entry's reference resolves, every refusal happens, and the table is what the
registry renders (``make coverage-doc`` regenerates it)."""

from __future__ import annotations

import pytest
from dynamo_coverage import check, doc, index
from dynamo_coverage.registry import entries, pending
from dynamo_coverage.rows import all_rows, chart_rows
from dynamo_coverage.status import Acts, Refused, StorageOnly, acts


def test_every_row_is_covered_and_every_reference_resolves() -> None:
    found = check.problems()
    assert not found, "coverage registry problems:\n  " + "\n  ".join(found)


def test_the_table_is_up_to_date() -> None:
    assert doc.DOC.read_text() == doc.render(), "docs/api-coverage.md is stale: run `make coverage-doc`"


def test_every_pending_entry_is_still_needed() -> None:
    """A pending row that got its real entry (or whose field is gone) must leave PENDING."""
    table, rows = entries(), all_rows()
    stale = [k for k in pending() if k in table or k not in rows]
    assert not stale, f"drop these from PENDING: {stale}"


def test_rows_come_from_both_versions_nested_types_the_configuration_and_every_chart() -> None:
    rows = all_rows()
    assert "v1beta1.DynamoComponentDeploymentSharedSpec.podTemplate" in rows
    assert "v1alpha1.DynamoComponentDeploymentSharedSpec.extraPodSpec" in rows
    assert "v1beta1.GPUMemoryServiceSpec.deviceClassName" in rows  # nested under experimental
    assert "config.CheckpointPVCConfig.pvcName" in rows
    assert {k.split(":")[1] for k in chart_rows()} == {
        "platform",
        "operator",
        "nats",
        "etcd",
        "grove",
        "kai-scheduler",
    }
    assert "chart:operator:dynamo.dockerRegistry.server" in rows


def test_a_reference_that_does_not_mention_the_field_is_reported() -> None:
    row = all_rows()["v1beta1.DynamoComponentDeploymentSharedSpec.replicas"]
    bad = acts("render.names:dns_label", "tests/unit/test_api_coverage.py::test_the_table_is_up_to_date")
    assert any("does not mention 'replicas'" in p for p in check._entry_problems(row, bad, all_rows(), False))
    gone = acts("render.nowhere:nothing", "tests/unit/test_nothing.py::test_nothing")
    problems = list(check._entry_problems(row, gone, all_rows(), False))
    assert any("cannot be imported" in p for p in problems) and any("no file" in p for p in problems)


def test_a_refusal_that_does_not_happen_is_reported() -> None:
    row = all_rows()["v1beta1.DynamoComponentDeploymentSharedSpec.replicas"]
    accepted = Refused(
        "admission",
        {"spec.components[0].replicas": 3},
        "not supported",
        (),
        "DynamoGraphDeployment",
        "v1beta1",
    )
    assert any("did not refuse" in p for p in check.refusal_problems(row, accepted))
    config = Refused("config", {"logging": {"level": "debug"}}, "not supported")
    assert any("was accepted" in p for p in check.refusal_problems(row, config))


def test_a_storage_only_quote_must_be_the_references() -> None:
    row = all_rows()["v1alpha1.Autoscaling.minReplicas"]
    assert not list(check._entry_problems(row, StorageOnly("Deprecated: This field is ignored."), {}, False))
    assert list(check._entry_problems(row, StorageOnly("made up"), {}, False))


@pytest.mark.parametrize("key", ["v1beta1.DynamoComponentDeploymentSharedSpec.replicas"])
def test_the_index_sees_dict_keys_attributes_and_module_constants(key: str) -> None:
    status = entries()[key]
    assert isinstance(status, Acts)
    found, err = index.resolve_code(status.code[0])
    assert found is not None, err
    assert index.mentions(found, "replicas")
