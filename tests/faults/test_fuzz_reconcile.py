"""Hypothesis-generated DGDs (valid and invalid) through the real apiserver, its admission webhooks and a
running operator: the apiserver never answers 5xx, and for everything it admits the reconciler writes a
status for the current generation (``failed`` with the field named, when the spec cannot be rendered)
without a single reconcile error or crashed worker."""

from __future__ import annotations

import json

import pytest
from dynamo_operator.controllers import store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kubernetes.client.exceptions import ApiException
from plane import Plane, graph
from support.crds import DGD_BETA
from support.fuzz import dgds
from support.poll import wait_for

pytestmark = [pytest.mark.api, pytest.mark.slow]

dns = st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True)


@st.composite
def plausible(draw) -> dict:
    """Graphs a user might write: mostly valid, with the mistakes that pass admission (a component with no
    main image) or fail it narrowly (a bad replica count, an unknown backend)."""
    dgd = graph("x", draw(dns))
    spec = dgd["spec"]
    spec["backendFramework"] = draw(st.sampled_from(["vllm", "sglang", "trtllm", "nope"]))
    for comp in spec["components"]:
        comp["replicas"] = draw(st.integers(-1, 3))
        main = comp["podTemplate"]["spec"]["containers"][0]
        if draw(st.integers(0, 4)) == 0:
            del main["image"]
        if draw(st.booleans()):
            main["env"] = [{"name": draw(dns).upper(), "value": draw(st.text(max_size=8))}]
        if draw(st.booleans()):
            main["args"] = draw(st.lists(st.text(max_size=8), max_size=3))
    if draw(st.booleans()):
        spec["components"][1]["name"] = draw(st.sampled_from(["VllmWorker", "Frontend", "w2", "-x"]))
    return dgd


def test_fuzzed_graphs_through_apiserver_and_reconciler(plane: Plane):
    ns = plane.namespace()
    operator = plane.start_operator("op-fuzz")
    operator.wait_ready(60)
    admitted: dict[str, int] = {}  # name -> generation
    refused: list[str] = []

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(dgds(), plausible(), plausible()))
    def apply(dgd: dict) -> None:
        dgd["metadata"] = {"name": dgd["metadata"]["name"], "namespace": ns}
        try:
            out = plane.client.create(DGD_BETA, dgd, ns)
        except ApiException as e:
            assert e.status < 500, f"the apiserver answered {e.status}: {e.body}"
            if e.status != 409:
                body = json.loads(e.body or "{}")
                refused.append(body.get("message", ""))
            return
        admitted[out["metadata"]["name"]] = out["metadata"]["generation"]

    apply()
    assert refused and all(msg for msg in refused), refused[:3]
    assert admitted, "nothing generated was admitted: the reconciler saw no input"

    def status_of(name: str) -> dict:
        return store.to_internal(plane.client.get(store.DGD, name, ns)).get("status") or {}

    def settled() -> bool:
        return all(status_of(n).get("observedGeneration") == g for n, g in admitted.items())

    wait_for(
        settled,
        60,
        lambda: {n: status_of(n) for n, g in admitted.items() if status_of(n).get("observedGeneration") != g},
        interval=1.0,
    )
    failed = {n: status_of(n) for n in admitted if status_of(n).get("state") == "failed"}
    for name, status in failed.items():
        ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
        assert "spec." in ready.get("message", ""), f"{name} failed without naming the field: {status}"
    log = operator.log.read_text()
    crashes = [ln for ln in log.splitlines() if "Reconciler error" in ln or "worker failed" in ln]
    assert not crashes, crashes[:3]
    assert operator.poll() is None, operator.log_tail()
    print(
        f"\n[fault] fuzzed DGDs via the apiserver: refused={len(refused)}, admitted={len(admitted)}, "
        f"reconciled to failed (field named)={len(failed)}, reconcile errors={len(crashes)}"
    )
