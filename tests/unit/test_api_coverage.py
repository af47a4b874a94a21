"""docs/api-coverage.md cannot go stale: every field of every kind (both versions), of the
OperatorConfiguration and every chart value has an entry (acts / refused / storage-only, or pending on a
change in flight), every entry's reference resolves, every refusal happens, and the table is what the
registry renders (``make coverage-doc`` regenerates it)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from dynamo_coverage import check, converted, doc, index
from dynamo_coverage.registry import entries, pending
from dynamo_coverage.rows import CHART_DIRS, all_rows, chart_rows
from dynamo_coverage.status import Acts, Converted, Refused, StorageOnly, Unresolved, acts, warned

# rows with no evidence yet (registry/unresolved.py): the number may only go down
MAX_UNRESOLVED = 0


def test_every_row_is_covered_and_every_reference_resolves() -> None:
    """Install refusals need helm: tests/unit/test_api_coverage_helm.py (the tools tier) runs them."""
    found = check.problems(run_refusals=check.NO_TOOLS)
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
    # the type's text counts too (a type kept only for older profilers), never another type's
    pareto = all_rows()["v1beta1.ParetoConfig.config"]
    kept = StorageOnly("Deprecated: The profiler no longer generates Pareto configurations.")
    assert not list(check._entry_problems(pareto, kept, {}, False))
    assert list(check._entry_problems(row, kept, {}, False))


@pytest.mark.parametrize("key", ["v1beta1.DynamoComponentDeploymentSharedSpec.replicas"])
def test_the_index_sees_dict_keys_attributes_and_module_constants(key: str) -> None:
    status = entries()[key]
    assert isinstance(status, Acts)
    found, err = index.resolve_code(status.code[0])
    assert found is not None, err
    assert index.mentions(found, "replicas")


def test_unresolved_rows_only_go_down():
    unresolved = sorted(k for k, s in entries().items() if isinstance(s, Unresolved))
    assert len(unresolved) <= MAX_UNRESOLVED, (
        f"new unresolved rows; act, refuse or cite the seed: {unresolved}"
    )
    assert all(s.why for k, s in entries().items() if isinstance(s, Unresolved))


def test_pending_rows_name_a_branch_in_flight():
    assert not pending(), "every branch of issue 21 has merged: give these rows real entries"


def test_code_that_names_the_field_out_of_its_context_is_reported():
    """``phase`` of a DGD's restart status read by the checkpoint phase machine is not evidence."""
    row = all_rows()["v1alpha1.RestartStatus.phase"]
    wrong = acts("render.checkpoint:step", "tests/unit/test_api_coverage.py::test_the_table_is_up_to_date")
    found = list(check._entry_problems(row, wrong, all_rows(), False))
    assert any("none of the names it is reached through" in p for p in found), found


def test_code_that_names_the_field_only_in_prose_does_not_read_it():
    """A message telling the user to set ``deviceClassName`` is not a reader of it: the function that reads
    it off the struct it is handed is, though it names nothing else of the struct."""
    row = all_rows()["v1beta1.GPUMemoryServiceSpec.deviceClassName"]
    (said,) = check._code_problems(row, ("controllers.gms:missing_device_classes",))
    assert said == "controllers.gms:missing_device_classes does not mention 'deviceClassName'"
    assert not list(check._code_problems(row, ("render.gms:device_class",)))  # gms.get("deviceClassName")


def test_a_test_that_never_names_the_field_is_reported():
    row = all_rows()["v1beta1.DynamoComponentDeploymentSharedSpec.replicas"]
    ref = "tests/unit/test_api_coverage.py::test_the_table_is_up_to_date"
    assert any("never names 'replicas'" in p for p in check._test_problems(ref, row))


def test_a_v1alpha1_field_parked_in_the_annotation_is_not_converted():
    rows = all_rows()
    parked = rows["v1alpha1.DynamoComponentDeploymentSharedSpec.dynamoNamespace"]
    assert any("changes nothing in its v1beta1 form" in p for p in converted.problems(parked))
    carried = rows["v1alpha1.MultinodeSpec.nodeCount"]
    assert not list(converted.problems(carried))
    assert isinstance(entries()["v1alpha1.ServiceReplicaStatus.readyReplicas"], Converted)


def test_a_parent_the_sample_creates_is_not_the_fields_effect():
    """``status.service.componentName`` is derived from ``componentNames`` on the way to v1alpha1 and
    dropped on the way back: setting it on an object without a status creates ``status.service``, which
    converts to ``status.component`` by itself; both sides of the comparison get that parent."""
    rows = all_rows()
    derived = rows["v1alpha1.ServiceReplicaStatus.componentName"]
    assert any("changes nothing in its v1beta1 form" in p for p in converted.problems(derived))
    assert not list(converted.problems(rows["v1alpha1.ServiceReplicaStatus.replicas"]))


def test_a_chart_value_only_passed_as_an_env_var_nobody_reads_is_reported(tmp_path):
    """The operator chart once passed values as env vars nothing read (DYNAMO_INTERNAL_IMAGES_DEBUGGER...)."""
    row = all_rows()["chart:operator:dynamo.virtualServiceSupportsHTTPS"]
    template = tmp_path / "components" / "operator" / "templates" / "deployment.yaml"
    template.parent.mkdir(parents=True)
    template.write_text(
        "- name: DYNAMO_READ_BY_NOBODY\n  value: {{ .Values.dynamo.virtualServiceSupportsHTTPS | quote }}\n"
    )
    assert check.dead_env(row, template) == "DYNAMO_READ_BY_NOBODY"
    deployment = CHART_DIRS["operator"] / "templates" / "deployment.yaml"
    assert check.dead_env(row, deployment) is None  # the chart passes no such env any more
    etcd = all_rows()["chart:etcd:quotaBackendBytes"]  # etcd reads its own ETCD_* env
    assert check.dead_env(etcd, CHART_DIRS["etcd"] / "templates" / "statefulset.yaml") is None


def test_a_field_that_changes_nothing_rendered_is_reported():
    rows = all_rows()
    assert not list(converted.rendered_problems(rows["v1beta1.WorkloadSpec.concurrency"]))  # in --config
    ignored = rows["v1alpha1.Autoscaling.minReplicas"]  # nothing reads it (the reference: "ignored")
    assert any("changes nothing render_all renders" in p for p in converted.rendered_problems(ignored))


def test_a_field_behind_a_switch_is_proven_with_the_switch_on():
    """An ingress host acts only with ``ingress.enabled``; a claim's size only with ``create``: alone
    they change nothing, with their context they change what is rendered (and the context alone is the
    baseline, so the difference is the field's)."""
    rows, table = all_rows(), entries()
    host = rows["v1alpha1.IngressSpec.host"]
    assert any("changes nothing render_all renders" in p for p in converted.rendered_problems(host))
    assert not list(converted.rendered_problems(host, table[host.key].context))
    size = rows["v1alpha1.PVC.size"]
    assert any("changes nothing render_all renders" in p for p in converted.rendered_problems(size))
    assert not list(converted.rendered_problems(size, table[size.key].context))
    # a context that sets the field's own value to the sample's shows no difference: reported
    same = {**table[size.key].context, "spec.pvcs.size": converted.SENTINEL}
    assert any("changes nothing render_all renders" in p for p in converted.rendered_problems(size, same))
    elsewhere = {"spec.services.ingress.enabled": True}  # not on the way to the graph's spec.pvcs
    assert any("not on the way" in p for p in converted.rendered_problems(size, elsewhere))


def test_a_warned_sample_must_be_admitted_with_its_warning_and_render_must_say_the_same():
    """The rule for inputs: what upstream accepts and ignores is admitted with a warning naming it, from one
    source (``render.notices``). A worker's eppConfig (only an epp component reads it) is the example."""
    worker = {"spec.components[0].eppConfig": {"config": {"a": 1}}}
    ok = warned("render.notices:_epp_config", (), sample=worker, message="has no effect unless type is epp")
    ok = replace(ok, kind="DynamoGraphDeployment", version="v1beta1")
    assert list(check.admission_warning_problems(ok)) == []
    silent = replace(ok, message="a warning nobody gives")
    (said,) = check.admission_warning_problems(silent)
    assert said.startswith("admission gave no warning with 'a warning nobody gives'")
    refused_sample = replace(ok, sample={**worker, "spec.components[0].replicas": -1})
    (said,) = check.admission_warning_problems(refused_sample)
    assert said.startswith("admission refused the warned sample: spec.components[0].replicas")
