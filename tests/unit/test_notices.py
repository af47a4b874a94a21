"""Accepted with a field that has no effect (``render/notices.py``): one warning, from one function, said
the same by admission, ``dynamo-operator render`` (stderr) and the controllers (an Event, once per
generation). The cluster tiers prove the same through the real API server, kubectl and a running operator
(``test_webhooks_api.py``, ``test_controllers_behaviour.py``)."""

from __future__ import annotations

import copy

import yaml
from click.testing import CliRunner
from dynamo_operator.api.conversion import convert
from dynamo_operator.controllers.notices import REASON, NoticeEvents
from dynamo_operator.render import notices
from dynamo_operator.render.cli import render_command
from dynamo_operator.webhooks.validation import Context, validate
from support import graphs, yamlc

EPP_NOTE = "has no effect unless type is epp"


def graph_with_ignored_epp_config() -> dict:
    """A worker carrying an eppConfig: upstream accepts it and reads it only for an epp component."""
    worker = graphs.component("Worker", command=graphs.VLLM, gpus=1, eppConfig={"config": {"a": 1}})
    return graphs.dgd(graphs.component("Frontend", "frontend"), worker, name="g", namespace="team")


class Recorder:
    """Stands in for ``EventRecorder`` (its writes are the runtime's, tested in test_sync_events.py)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def warning(self, obj: dict, reason: str, message: str) -> None:
        self.events.append((obj["metadata"]["name"], reason, message))


def test_the_notice_names_the_field_in_the_version_written():
    beta = graph_with_ignored_epp_config()
    (text,) = notices.warnings(beta)
    assert text.startswith(f"spec.components[1].eppConfig: {EPP_NOTE}")
    (alpha_text,) = notices.warnings(convert(beta, "v1alpha1"))
    assert alpha_text.startswith(f"spec.services[Worker].eppConfig: {EPP_NOTE}")
    assert notices.warnings({"kind": "DynamoModel"}) == []
    assert notices.warnings({"kind": "DynamoGraphDeployment", "apiVersion": "nvidia.com/v1alpha1"}) == []


def test_admission_returns_the_notices_as_warnings_and_admits():
    for obj in (graph_with_ignored_epp_config(), convert(graph_with_ignored_epp_config(), "v1alpha1")):
        version = obj["apiVersion"].rpartition("/")[2]
        result = validate("DynamoGraphDeployment", version, obj, None, Context())
        assert result.allowed, result.errors
        assert result.warnings == notices.warnings(obj)


def test_the_operators_own_writes_get_no_notices():
    """The DCDs the operator writes carry the graph's components: the graph's warning already said it."""
    ctx = Context(
        username="system:serviceaccount:x:op", operator_usernames=frozenset({"system:serviceaccount:x:op"})
    )
    result = validate("DynamoGraphDeployment", "v1beta1", graph_with_ignored_epp_config(), None, ctx)
    assert result.allowed and result.warnings == []


def test_render_prints_the_same_warning_on_stderr(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(yaml.safe_dump(graph_with_ignored_epp_config()))
    result = CliRunner().invoke(render_command, ["-f", str(path)])
    assert result.exit_code == 0, result.output
    (text,) = notices.warnings(graph_with_ignored_epp_config())
    assert result.stderr.splitlines() == [f"Warning: {path}#0: DynamoGraphDeployment team/g: {text}"]
    kinds = {o["kind"] for o in yamlc.load_all(result.stdout)}
    assert {"DynamoComponentDeployment", "Deployment"} <= kinds  # stdout: YAML only


def test_the_controller_records_each_notice_once_per_generation():
    live = convert(graph_with_ignored_epp_config(), "v1alpha1")
    live["metadata"].update(uid="u1", generation=1)
    internal = convert(live, "v1beta1")
    rec = Recorder()
    events = NoticeEvents(rec)  # type: ignore[arg-type]
    for _ in range(3):  # every pass of one generation: one Event
        events.record(live, internal)
    (text,) = notices.warnings(internal)
    assert rec.events == [("g", REASON, text)]

    internal["status"] = {"observedGeneration": 1}
    restarted = NoticeEvents(rec)  # type: ignore[arg-type]
    restarted.record(live, internal)  # a new process: the status says the generation was seen
    assert len(rec.events) == 1

    live2, internal2 = copy.deepcopy(live), copy.deepcopy(internal)
    live2["metadata"]["generation"] = internal2["metadata"]["generation"] = 2
    restarted.record(live2, internal2)  # edited: recorded again, as kubectl apply warned again
    assert rec.events == [("g", REASON, text)] * 2


def test_a_graph_without_notices_records_nothing():
    live = graphs.dgd(graphs.component("Frontend", "frontend"), name="g", namespace="team")
    live["metadata"].update(uid="u2", generation=1)
    rec = Recorder()
    NoticeEvents(rec).record(live, live)  # type: ignore[arg-type]
    assert rec.events == []
