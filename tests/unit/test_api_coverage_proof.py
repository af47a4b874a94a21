"""The coverage table's proof: an "acts" row passes only when its named test ran its named code.

On coverage data written here (one context per test, as ``make unit`` records it), rows built from real
entries: a test that ran the function passes, one that never did is named; a helm-unittest test must set the
value and render the template; code of another kind's controller proves nothing about a field.
"""

from __future__ import annotations

from pathlib import Path

import coverage
import pytest
from dynamo_coverage import index, proof
from dynamo_coverage.rows import all_rows
from dynamo_coverage.status import acts, warned

CODE = "render.probes:frontend_probes"
RAN = "tests/unit/test_render_defaults.py::test_frontend_probes"
IDLE = "tests/unit/test_render_defaults.py::test_global_dynamo_namespace"
PROBE_ROW = "v1alpha1.DynamoComponentDeploymentSharedSpec.livenessProbe"
SUITE = "helm:etcd/tests/pod_values_test.yaml::"
SETS_IMAGE = SUITE + "image.repository and image.pullPolicy reach the etcd container"
DEFAULTS = SUITE + "no imagePullSecrets, nodeSelector, tolerations or affinity by default"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> proof.Runs:
    """Coverage data in which RAN ran two lines of CODE's body (in its run phase, parametrized) and IDLE
    ran only its ``def`` line (what an import does)."""
    (path, func), _ = index.resolve_code(CODE)
    body = sorted(proof.body_lines(func))
    data = coverage.CoverageData(str(tmp_path_factory.mktemp("cov") / "unit"))
    data.set_context(f"{RAN}[x]|run")
    data.add_lines({str(Path(path).resolve()): body[:2]})
    data.set_context(f"{IDLE}|run")
    data.add_lines({str(Path(path).resolve()): [func.lineno]})
    data.write()
    return proof.Runs(Path(data.data_filename()))


def _row(key: str):
    return all_rows()[key]


def test_the_test_that_ran_the_code_proves_the_row_and_one_that_did_not_is_named(runs):
    row = _row(PROBE_ROW)
    assert list(proof.row_problems(row, acts(CODE, RAN), runs)) == []
    said = list(proof.row_problems(row, acts(CODE, IDLE), runs))
    assert said == [f"{IDLE} never ran {CODE}"]


def test_only_tests_of_other_tiers_prove_nothing(runs):
    row = _row(PROBE_ROW)
    integration = "tests/integration/test_controllers_cluster.py::test_scale_remove_hand_edit_and_delete"
    (said,) = proof.row_problems(row, acts(CODE, integration), runs)
    assert said.startswith(f"names no unit test that runs {CODE}")


def test_a_helm_test_must_set_the_value_and_render_the_template(runs):
    row = _row("chart:etcd:image.repository")
    template = "tpl:etcd/templates/statefulset.yaml"
    assert list(proof.row_problems(row, acts(template, SETS_IMAGE), runs)) == []
    said = list(proof.row_problems(row, acts(template, DEFAULTS), runs))
    assert said == [f"{DEFAULTS} never sets image.repository"]
    other = "tpl:etcd/templates/networkpolicy.yaml"
    (said,) = proof.row_problems(row, acts(other, SETS_IMAGE), runs)
    assert "renders templates/statefulset.yaml, none of tpl:etcd/templates/networkpolicy.yaml" in said


def test_a_partial_is_rendered_through_the_templates_that_include_it(runs):
    row = _row("chart:etcd:image.repository")
    assert list(proof.row_problems(row, acts("tpl:etcd/templates/_helpers.tpl", SETS_IMAGE), runs)) == []


def test_code_of_another_kinds_controller_proves_nothing_about_a_field(runs):
    row = _row("v1beta1.DynamoGraphDeploymentStatus.observedGeneration")
    said = list(proof.row_problems(row, acts("render.dgdr:_pending", ()), runs))
    owner, kind = "DynamoGraphDeploymentRequest", "DynamoGraphDeployment"
    assert said == [f"render.dgdr:_pending is {owner}'s code; the field belongs to {kind}"]
    # a graph's component creates its scaling adapter: the adapter controller's code may act for the graph
    adapter = _row("v1beta1.DynamoComponentDeploymentSharedSpec.scalingAdapter")
    assert list(proof.kind_problems(adapter, ["controllers.dgdsa:AdapterSync.apply"])) == []


def test_an_api_field_only_admission_reads_is_not_acting(runs):
    row = _row(PROBE_ROW)
    said = list(proof.row_problems(row, acts("webhooks.validation.dgd:validate_dgd", ()), runs))
    assert said == ["only admission checks read it: the row is refused or warned, not acts"]


def test_a_subchart_value_set_through_the_umbrella_is_set(runs):
    """``dynamo-operator.enabled`` in an umbrella test sets the operator subchart's ``enabled``; a
    dependency's condition (Chart.yaml) applies to every render of the umbrella."""
    row = _row("chart:operator:enabled")
    suite = "helm:platform/tests/platform_test.yaml::"
    test = suite + "the operator can be disabled (no operator checks in the test pod)"
    assert list(proof.row_problems(row, acts("tpl:platform/Chart.yaml", test), runs)) == []
    other = suite + "the helm test pod checks every bundled service"
    assert list(proof.row_problems(row, acts("tpl:platform/Chart.yaml", other), runs)) == [
        f"{other} never sets dynamo-operator.enabled"
    ]


def test_a_warned_rows_tests_are_held_as_an_acting_rows(runs):
    """A warning is admission's (or render's) to give: admission code is its place, but the test that shows
    the warning must run it."""
    row = _row(PROBE_ROW)
    assert list(proof.row_problems(row, warned(CODE, RAN), runs)) == []
    assert list(proof.row_problems(row, warned(CODE, IDLE), runs)) == [f"{IDLE} never ran {CODE}"]
    check_only = warned("webhooks.validation.dgd:validate_dgd", ())
    assert list(proof.row_problems(row, check_only, runs)) == []
