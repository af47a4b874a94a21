"""The controllers' pure GMS / EPP helpers: the DeviceClass check and the watch map that re-queues the
components waiting for a class, the startup check of integrations the configuration requires, and
``dynamo-operator render`` showing the new children."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from dynamo_operator.controllers.discovery import check_required_integrations
from dynamo_operator.controllers.gms import missing_device_classes, owners_of_class
from dynamo_operator.runtime.controller import Request
from dynamo_operator.runtime.informer import Indexer
from support import yamlc
from support.graphs import epp_graph, gms_graph


def spec(device: str | None = None) -> dict:
    gms = {"deviceClassName": device} if device else {}
    return {"type": "worker", "experimental": {"gpuMemoryService": gms}}


def classes(*names: str) -> Indexer:
    store = Indexer()
    for n in names:
        store.upsert({"metadata": {"name": n}})
    return store


def test_missing_device_classes():
    assert missing_device_classes([spec(), spec("a.example")], classes("gpu.nvidia.com", "a.example")) is None
    message = missing_device_classes([spec(), spec("a.example"), {"type": "frontend"}], classes("a.example"))
    assert message.startswith("DeviceClass gpu.nvidia.com not found: GPU memory service claims its GPUs")
    assert missing_device_classes([{"type": "worker"}], classes()) is None  # no GMS, no class needed
    assert missing_device_classes([spec()], None) is None  # no DRA API: admission refuses GMS already


def test_a_device_class_requeues_the_objects_that_claim_from_it():
    dcds = Indexer()
    for name, device in (("a", "x.example"), ("b", None), ("c", "y.example")):
        dcds.upsert({"metadata": {"name": name, "namespace": "ns"}, "spec": spec(device)})
    dcds.upsert({"metadata": {"name": "plain", "namespace": "ns"}, "spec": {"type": "worker"}})
    map_fn = owners_of_class(dcds, lambda o: [o["spec"]])
    assert map_fn({"metadata": {"name": "x.example"}}) == [Request("ns", "a")]
    assert map_fn({"metadata": {"name": "gpu.nvidia.com"}}) == [Request("ns", "b")]
    assert map_fn({"metadata": {"name": "z.example"}}) == []


@pytest.mark.parametrize(
    ("config", "detected", "fragment"),
    [
        (
            {"dra": {"enabled": True}},
            set(),
            "dra.enabled is true but the cluster does not serve resource.k8s.io/v1",
        ),
        (
            {"serviceMesh": {"enabled": True, "provider": "istio"}},
            set(),
            "serviceMesh.enabled is true but the cluster does not serve destinationrules in "
            "networking.istio.io/v1beta1",
        ),
    ],
)
def test_an_integration_the_configuration_requires_must_be_served(config, detected, fragment):
    with pytest.raises(ValueError, match="install that API") as exc:
        check_required_integrations(config, frozenset(detected))
    assert fragment in str(exc.value)


def test_integrations_left_to_detection_or_served_start():
    check_required_integrations({}, frozenset())
    check_required_integrations({"dra": {"enabled": False}}, frozenset())
    check_required_integrations({"dra": {"enabled": True}}, frozenset({"dra"}))
    check_required_integrations({"serviceMesh": {"enabled": True, "provider": ""}}, frozenset())


def test_render_shows_the_claim_template_pool_and_destination_rule(tmp_path):
    from dynamo_operator.render.cli import render_command

    (tmp_path / "g.yaml").write_text(yaml.safe_dump_all([gms_graph(failover=True), epp_graph()]))
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"serviceMesh": {"provider": "istio"}}))
    args = ["-f", str(tmp_path / "g.yaml"), "--config", str(tmp_path / "c.yaml")]
    for flag in ("dra", "inferencePool", "istio"):
        args += ["--detected", flag]
    result = CliRunner().invoke(render_command, args)
    assert result.exit_code == 0, result.output
    kinds = [(d["kind"], d["metadata"]["name"]) for d in yamlc.load_all(result.output)]
    for want in (
        ("ResourceClaimTemplate", "g-worker-gpu"),
        ("InferencePool", "gaie-pool"),
        ("DestinationRule", "gaie-epp"),
    ):
        assert want in kinds
    # without the APIs: each is refused, naming the field and the flag
    result = CliRunner().invoke(render_command, ["-f", str(tmp_path / "g.yaml")])
    assert result.exit_code != 0
    assert "spec.components[1].experimental.gpuMemoryService" in result.output
    assert "DRA is off" in result.output
