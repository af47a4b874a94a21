"""DynamoModel's pure part: endpoint discovery from worker pods, LoRA fallback coverage, status and
condition reasons (render/model.py)."""

from __future__ import annotations

from dynamo_operator.render import model as rm
from dynamo_operator.render import names

BASE = "Qwen/Qwen3-0.6B"
LORA = {"modelName": "my-lora", "baseModelName": BASE, "modelType": "lora", "source": {"uri": "s3://b/l"}}


def pod(name, ip="127.1.0.5", *, model=BASE, ready=True, ctype="decode", group="ns-g", port=None, **extra):
    labels = {
        names.LABEL_BASE_MODEL_HASH: names.model_hash(model),
        names.LABEL_COMPONENT_TYPE: ctype,
        names.LABEL_DYNAMO_NAMESPACE: group,
        names.LABEL_SELECTOR: f"g-{ctype}",
    }
    ports = [{"name": "system", "containerPort": port}] if port else []
    md = {"name": name, "namespace": "ns", "labels": labels, **extra.pop("metadata", {})}
    return {
        "metadata": md,
        "spec": {"containers": [{"name": "main", "ports": ports}]},
        "status": {
            "phase": extra.pop("phase", "Running"),
            "podIP": ip,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def test_candidates_are_the_base_models_running_pods_with_their_system_port():
    pods = [
        pod("b", "127.1.0.2", port=18081),
        pod("a", "127.1.0.1"),
        pod("other", "127.1.0.3", model="other/model"),
        pod("gone", "127.1.0.4", metadata={"deletionTimestamp": "2026-01-01T00:00:00Z"}),
        pod("noip", ""),
        pod("done", "127.1.0.6", phase="Succeeded"),
    ]
    got = rm.candidates(pods, BASE)
    assert [(c.pod_name, c.address) for c in got] == [
        ("a", "http://127.1.0.1:9090"),
        ("b", "http://127.1.0.2:18081"),
    ]
    assert got[0].kubernetes_ready and not got[0].allow_unavailable and got[0].fallback_group == "ns-g"


def test_ipv6_addresses_are_bracketed():
    assert rm.candidates([pod("a", "fd00::5")], BASE)[0].address == "http://[fd00::5]:9090"


def test_no_endpoints_reports_no_services_and_zero_counters():
    out = rm.model_status(LORA, [], None)
    assert out.fields == {
        "endpoints": [],
        "totalEndpoints": 0,
        "readyEndpoints": 0,
        "loraFallbackCoveredEndpoints": 0,
    }
    assert [(c.type, c.ok, c.reason) for c in out.conditions] == [
        ("ServicesFound", False, "NoServicesFound"),
        ("EndpointsReady", False, "NoEndpoints"),
    ]
    assert names.model_hash(BASE) in out.conditions[0].message and out.requeue_after is None


def test_base_model_endpoints_are_discovered_not_probed():
    spec = {"modelName": BASE, "baseModelName": BASE, "modelType": "base"}
    out = rm.model_status(spec, rm.candidates([pod("a")], BASE), None)
    assert out.fields["endpoints"] == [{"address": "http://127.1.0.5:9090", "podName": "a", "ready": False}]
    assert (out.conditions[-1].reason, out.conditions[-1].ok) == ("EndpointsDiscovered", True)
    assert out.conditions[0].message == "Found 1 service(s): g-decode"


def test_lora_while_probing_then_all_loaded():
    cands = rm.candidates([pod("a", "127.1.0.1"), pod("b", "127.1.0.2")], BASE)
    probing = rm.model_status(LORA, cands, None)
    assert (probing.conditions[-1].reason, probing.conditions[-1].ok) == ("Probing", False)
    outcomes = {c.address: rm.ProbeOutcome(True) for c in cands}
    done = rm.model_status(LORA, cands, outcomes)
    assert done.fields["readyEndpoints"] == 2 and done.fields["totalEndpoints"] == 2
    assert (done.conditions[-1].reason, done.conditions[-1].ok) == ("AllEndpointsReady", True)
    assert done.requeue_after is None


def test_a_failed_endpoint_is_named_and_reprobed_later():
    cands = rm.candidates([pod("a", "127.1.0.1"), pod("b", "127.1.0.2")], BASE)
    outcomes = {
        cands[0].address: rm.ProbeOutcome(True),
        cands[1].address: rm.ProbeOutcome(False, "HTTP 500: boom", 500, 3),
    }
    out = rm.model_status(LORA, cands, outcomes)
    cond = out.conditions[-1]
    assert (cond.reason, cond.ok) == ("NotReady", False)
    assert (
        "1/2 endpoint(s) ready" in cond.message
        and "b (http://127.1.0.2:9090): HTTP 500: boom" in cond.message
    )
    assert out.requeue_after == rm.REPROBE_SECONDS
    assert [e["ready"] for e in out.fields["endpoints"]] == [True, False]


def test_legacy_prefill_is_covered_by_a_capable_prefill_of_its_topology():
    cands = rm.candidates(
        [
            pod("new", "127.1.0.1", ctype="prefill", group="t1"),
            pod("old", "127.1.0.2", ctype="prefill", group="t1"),
            pod("lonely", "127.1.0.3", ctype="prefill", group="t2"),
            pod("unready", "127.1.0.4", ctype="prefill", group="t1", ready=False),
        ],
        BASE,
    )
    by = {c.pod_name: c.address for c in cands}
    outcomes = {
        by["new"]: rm.ProbeOutcome(True),
        by["old"]: rm.ProbeOutcome(False, "HTTP 404: not found", 404),
        by["lonely"]: rm.ProbeOutcome(False, "HTTP 404: not found", 404),
        by["unready"]: rm.ProbeOutcome(False, "HTTP 501: no", 501),
    }
    out = rm.model_status(LORA, cands, outcomes)
    eps = {e["podName"]: e for e in out.fields["endpoints"]}
    assert eps["old"] == {"address": by["old"], "podName": "old", "ready": False, "loraFallbackCovered": True}
    assert eps["lonely"]["loraFallbackCovered"] is False  # no capable prefill in its topology
    assert eps["unready"]["loraFallbackCovered"] is False  # the pod itself is not Ready
    assert "loraFallbackCovered" not in eps["new"]
    assert out.fields["readyEndpoints"] == 1 and out.fields["loraFallbackCoveredEndpoints"] == 1
    assert out.conditions[-1].reason == "NotReady"
    assert "no LoRA management API (HTTP 404)" in out.conditions[-1].message


def test_a_decode_without_the_api_is_never_covered():
    cands = rm.candidates([pod("p", "127.1.0.1", ctype="prefill"), pod("d", "127.1.0.2")], BASE)
    by = {c.pod_name: c.address for c in cands}
    outcomes = {by["d"]: rm.ProbeOutcome(False, "x", 404), by["p"]: rm.ProbeOutcome(True)}
    eps = {e["podName"]: e for e in rm.endpoints(cands, outcomes)}
    assert eps["d"] == {"address": by["d"], "podName": "d", "ready": False}
    out = rm.model_status(LORA, cands, outcomes)
    assert out.fields["loraFallbackCoveredEndpoints"] == 0 and out.conditions[-1].reason == "NotReady"


def test_admission_errors_stop_everything_and_are_reported():
    spec = {"modelName": "x", "baseModelName": BASE, "modelType": "lora"}
    err = "spec.source: Required value: a lora model needs spec.source.uri"
    out = rm.model_status(spec, rm.candidates([pod("a")], BASE), None, [err, "second"])
    assert out.fields == {} and out.requeue_after is None
    assert [(c.type, c.ok, c.reason, c.message) for c in out.conditions] == [
        ("EndpointsReady", False, "InvalidSpec", f"{err}; second")
    ]


def test_load_request_body():
    assert rm.load_request(LORA) == {"lora_name": "my-lora", "source": {"uri": "s3://b/l"}}
    assert rm.pod_selector(BASE) == f"nvidia.com/dynamo-base-model-hash={names.model_hash(BASE)}"
