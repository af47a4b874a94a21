"""Pure pieces of the controllers: semantic diff, status computations, the wire-version seam, events."""

from __future__ import annotations

import pytest
import yaml
from dynamo_operator.controllers import diff, store
from dynamo_operator.controllers import status as st
from dynamo_operator.render import RenderContext, names, render_component, render_graph
from dynamo_operator.runtime.events import COMBINED_PREFIX, EventCorrelator, EventRecorder
from kubernetes.client.exceptions import ApiException

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"


# -- diff ----------------------------------------------------------------------------------------------------


def test_subset_tolerates_defaults_and_dropped_empty_values():
    want = {"containers": [{"name": "main", "env": [{"name": "A", "value": ""}], "ports": [{"port": 1}]}]}
    have = {
        "containers": [
            {
                "name": "main",
                "env": [{"name": "A"}],
                "ports": [{"port": 1, "protocol": "TCP"}],
                "imagePullPolicy": "IfNotPresent",
            }
        ],
        "dnsPolicy": "ClusterFirst",
    }
    assert diff.first_difference(want, have) is None
    assert diff.first_difference({"readOnly": False, "n": 0, "m": {}, "l": []}, {}) is None


def test_subset_reports_changed_removed_and_added_list_items():
    want = {"containers": [{"name": "main", "image": "a"}]}
    assert diff.first_difference(want, {"containers": [{"name": "main", "image": "b"}]}) == (
        "containers[0].image: want 'a', have 'b'"
    )
    assert "want 1 items, have 2" in diff.first_difference(want, {"containers": [want["containers"][0]] * 2})
    assert "missing" in diff.first_difference({"a": {"b": 1}}, {"a": {}})


def test_quantities_compare_by_value_only_where_they_are_quantities():
    assert (
        diff.first_difference(
            {"resources": {"limits": {"cpu": "0.5"}}}, {"resources": {"limits": {"cpu": "500m"}}}
        )
        is None
    )
    assert diff.first_difference({"sizeLimit": "1024Mi"}, {"sizeLimit": "1Gi"}) is None
    assert diff.first_difference({"env": "1.0"}, {"env": "1"}) is not None


def test_same_is_two_way():
    assert diff.same({"a": "1"}, {"a": "1"})
    assert not diff.same({"a": "1"}, {"a": "1", "b": "2"})


# -- status --------------------------------------------------------------------------------------------------


def dep(spec_replicas=2, gen=1, observed=1, replicas=2, updated=2, ready=2, available=2):
    return {
        "metadata": {"generation": gen},
        "spec": {"replicas": spec_replicas},
        "status": {
            "observedGeneration": observed,
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": available,
        },
    }


@pytest.mark.parametrize(
    ("d", "want", "ready", "kind", "text"),
    [
        (None, 1, False, st.NOT_CREATED, "not created"),
        (dep(), 2, True, "", "2/2 replicas ready"),
        (dep(spec_replicas=1), 2, False, st.UPDATING, "asks for 1 replicas, want 2"),
        (dep(gen=2), 2, False, st.UPDATING, "generation 2 not observed"),
        (dep(updated=1), 2, False, st.UPDATING, "1/2 replicas updated"),
        (dep(replicas=3), 2, False, st.UPDATING, "1 old replica"),
        (dep(ready=1, available=1), 2, False, st.PODS_NOT_READY, "1/2 replicas ready"),
        (dep(spec_replicas=0, replicas=0), 0, True, "", "scaled to zero"),
    ],
)
def test_deployment_readiness(d, want, ready, kind, text):
    r = st.deployment_readiness(d, want)
    assert (r.ready, r.kind) == (ready, kind)
    assert text in r.message


def test_conditions_keep_transition_time_while_status_holds():
    c1 = st.set_condition(None, "Ready", "False", "x", "m", 1, now="2020-01-01T00:00:00Z")
    c2 = st.set_condition(c1, "Ready", "False", "y", "m2", 2, now="2021-01-01T00:00:00Z")
    assert c2[0]["lastTransitionTime"] == "2020-01-01T00:00:00Z" and c2[0]["reason"] == "y"
    c3 = st.set_condition(c2, "Ready", "True", "z", "ok", 2, now="2022-01-01T00:00:00Z")
    assert c3[0]["lastTransitionTime"] == "2022-01-01T00:00:00Z"
    assert len(st.set_condition(c3, "Other", "True", "a", "b")) == 2


def comp(name, ready, kind="", msg="", exists=True):
    return st.ComponentState(name, st.Readiness(ready, kind, msg), {}, exists)


def test_dgd_ready_reasons_name_the_components():
    assert st.dgd_ready_condition([comp("A", True), comp("B", True)])[:2] == (
        st.STATE_SUCCESSFUL,
        st.REASON_ALL_READY,
    )
    state, reason, message = st.dgd_ready_condition(
        [comp("A", True), comp("B", False, st.PODS_NOT_READY, "1/2 replicas ready")]
    )
    assert (state, reason) == (st.STATE_PENDING, st.REASON_PODS_NOT_READY)
    assert message == "1/2 components ready; not ready: B: 1/2 replicas ready"
    assert st.dgd_ready_condition([comp("A", False, st.UPDATING), comp("B", False, st.PODS_NOT_READY)])[
        1
    ] == (st.REASON_MIXED)
    state, reason, _ = st.dgd_ready_condition([comp("A", False, st.NOT_CREATED, exists=False)])
    assert (state, reason) == (st.STATE_INITIALIZING, st.REASON_NOT_CREATED)


def test_the_graph_status_carries_its_state_ready_condition_generation_and_components():
    """What the DGD controller writes (``dgd_status``): the state, the Ready condition with its reason at
    the observed generation, the components' replica status (None keeps the last ones, as a failure
    does)."""
    parts = {"Worker": {"componentKind": "Deployment", "replicas": 2, "readyReplicas": 1}}
    first = st.dgd_status(None, 4, st.STATE_PENDING, st.REASON_PODS_NOT_READY, "1/2 ready", parts, now="t1")
    assert (first["state"], first["observedGeneration"], first["components"]) == ("pending", 4, parts)
    (ready,) = first["conditions"]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "False", "pods_not_ready")
    assert ready["observedGeneration"] == 4 and ready["lastTransitionTime"] == "t1"
    done = st.dgd_status(first, 5, st.STATE_SUCCESSFUL, st.REASON_ALL_READY, "all ready", None, now="t2")
    assert (done["state"], done["observedGeneration"], done["components"]) == ("successful", 5, parts)
    assert [(c["status"], c["reason"], c["lastTransitionTime"]) for c in done["conditions"]] == [
        ("True", "all_resources_are_ready", "t2")
    ]


def test_the_component_status_carries_its_selector_generation_and_both_conditions():
    """What the DCD controller writes (``dcd_status``): the pod selector, the observed generation, the
    workload's replica status and the Available and DynamoComponentReady conditions."""
    selector = {names.LABEL_SELECTOR: "g-worker"}
    part = {"componentKind": "Deployment", "componentNames": ["g-worker"], "replicas": 1}
    waiting = st.Readiness(False, st.PODS_NOT_READY, "0/1 replicas ready")
    new = st.dcd_status(None, 2, selector, part, waiting, now="t1")
    assert (new["observedGeneration"], new["podSelector"], new["component"]) == (2, selector, part)
    assert {c["type"]: (c["status"], c["reason"]) for c in new["conditions"]} == {
        "Available": ("False", "DeploymentNotReady"),
        "DynamoComponentReady": ("False", "ComponentNotReady"),
    }
    ready = st.dcd_status(new, 3, selector, part, st.Readiness(True, "", "1/1 replicas ready"), now="t2")
    assert ready["observedGeneration"] == 3
    assert {c["type"]: c["status"] for c in ready["conditions"]} == {
        "Available": "True",
        "DynamoComponentReady": "True",
    }


# -- wire seam -----------------------------------------------------------------------------------------------

GRAPH = f"""
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata: {{name: g1, namespace: ns1}}
spec:
  env: [{{name: G, value: "1"}}]
  components:
    - name: Frontend
      type: frontend
      podTemplate: {{spec: {{containers: [{{name: main, image: {IMAGE}}}]}}}}
    - name: Planner
      type: planner
      podTemplate: {{spec: {{containers: [{{name: main, image: {IMAGE}}}]}}}}
    - name: VllmDecodeWorker
      type: decode
      replicas: 2
      sharedMemorySize: 16Gi
      podTemplate:
        spec:
          containers:
            - {{name: main, image: {IMAGE}, command: [python3, -m, dynamo.vllm],
                resources: {{limits: {{nvidia.com/gpu: "1"}}}}}}
            - {{name: sidecar, image: busybox}}
"""


def test_rendered_dcds_survive_the_wire_version_round_trip():
    dgd = yaml.safe_load(GRAPH)
    assert store.to_internal(store.to_wire(dgd)) == dgd
    for dcd in render_graph(dgd, RenderContext()):
        wire = store.to_wire(dcd)
        assert wire["apiVersion"] == f"nvidia.com/{store.WIRE_VERSION}"
        back = store.to_internal(wire)
        assert diff.first_difference(dcd, back) is None
        assert render_component(back) == render_component(dcd)


def test_status_converts_with_its_object():
    wire = store.to_wire(yaml.safe_load(GRAPH))
    status = {"state": "pending", "components": {"Frontend": {"componentKind": "Deployment", "replicas": 1}}}
    out = store.status_to_wire(wire, status)
    if store.WIRE_VERSION == "v1alpha1":
        assert "services" in out and "components" not in out
    wire["status"] = out
    assert store.to_internal(wire)["status"] == status


# -- events --------------------------------------------------------------------------------------------------

OBJ = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "o", "namespace": "n", "uid": "u1"}}


class Clock:
    def __init__(self):
        self.t = 1_700_000_000.0

    def __call__(self):
        return self.t


def test_identical_events_patch_the_count():
    c = EventCorrelator("test", clock=Clock())
    a = c.correlate(OBJ, "Normal", "R", "m")
    b = c.correlate(OBJ, "Normal", "R", "m")
    assert a.verb == "create" and a.body["count"] == 1 and a.body["involvedObject"]["uid"] == "u1"
    assert b.verb == "patch" and b.name == a.name and b.body["count"] == 2
    assert c.correlate(OBJ, "Warning", "R", "m").verb == "create"


def test_similar_events_aggregate_after_ten_messages():
    c = EventCorrelator("test", clock=Clock())
    outs = [c.correlate(OBJ, "Normal", "R", f"m{i}") for i in range(12)]
    assert all(not o.body["message"].startswith(COMBINED_PREFIX) for o in outs[:9])
    assert outs[9].body["message"] == COMBINED_PREFIX + "m9" and outs[9].verb == "create"
    assert outs[10].verb == "patch" and outs[10].name == outs[9].name


def test_spam_filter_drops_after_the_burst_and_refills():
    clock = Clock()
    c = EventCorrelator("test", clock=clock, burst=3, qps=1.0)
    assert [c.correlate(OBJ, "Normal", "R", "m") is not None for _ in range(4)] == [True, True, True, False]
    clock.t += 1.0
    assert c.correlate(OBJ, "Normal", "R", "m") is not None


class EventsClient:
    def __init__(self):
        self.calls = []
        self.existing = set()

    def create(self, res, body, namespace=None):
        self.calls.append(("create", body["metadata"]["name"], body.get("count")))
        self.existing.add(body["metadata"]["name"])
        return body

    def patch(self, res, name, body, namespace=None, **kw):
        self.calls.append(("patch", name, body.get("count")))
        if name not in self.existing:
            raise ApiException(status=404, reason="Not Found")
        return body


def test_recorder_recreates_an_expired_event():
    client = EventsClient()
    rec = EventRecorder(client, "test", sync=True)
    rec.normal(OBJ, "R", "m")
    rec.normal(OBJ, "R", "m")
    client.existing.clear()  # the apiserver expired it
    rec.normal(OBJ, "R", "m")
    verbs = [c[0] for c in client.calls]
    assert verbs == ["create", "patch", "patch", "create"]
    assert client.calls[-1][2] == 1 and client.calls[-1][1] != client.calls[0][1]
    rec.normal(OBJ, "R", "m")
    assert client.calls[-1][:2] == ("patch", client.calls[-2][1])


def test_async_recorder_flushes_and_stops():
    client = EventsClient()
    rec = EventRecorder(client, "test")
    rec.start()
    for i in range(5):
        rec.warning(OBJ, "R", f"m{i}")
    assert rec.flush(5)
    rec.stop()
    assert rec.sent == 5 and len(client.calls) == 5


# -- setup ---------------------------------------------------------------------------------------------------


def test_setup_registers_both_controllers_with_label_selected_caches(monkeypatch):
    from dynamo_operator.controllers import (
        DCD_CONTROLLER,
        DGD_CONTROLLER,
        DGDSA_CONTROLLER,
        MANAGED_SELECTOR,
        setup,
    )
    from dynamo_operator.runtime.manager import Manager
    from dynamo_operator.settings import load_config, settings_from_config
    from dynamo_operator.tunables import ControllerTunables
    from kubernetes.client import ApiClient

    settings = settings_from_config(
        load_config(None), metrics_bind_address="0", health_probe_bind_address="0"
    )
    mgr = Manager(settings.runtime, ApiClient())
    # no apiserver here: API discovery of the optional integrations would dial localhost
    monkeypatch.setattr("dynamo_operator.controllers.wiring.detect_integrations", lambda client: frozenset())
    tunables = ControllerTunables(graph_workers=3)
    ctls = setup(mgr, settings.config, tunables)
    assert {DGD_CONTROLLER, DCD_CONTROLLER, DGDSA_CONTROLLER} <= set(ctls)
    assert ctls[DGD_CONTROLLER].workers == 3
    assert ctls[DCD_CONTROLLER].workers == tunables.component_workers > 3  # components outnumber graphs
    caches = {(str(res), sel, fsel) for (res, _ns, sel, fsel) in mgr._informers}
    assert ("deployments.apps", MANAGED_SELECTOR, None) in caches
    assert ("serviceaccounts", MANAGED_SELECTOR, None) in caches
    assert ("secrets", None, "type=kubernetes.io/dockerconfigjson") in caches
    assert ("dynamographdeployments.nvidia.com", None, None) in caches
    # no unselected cache of a core kind (the operator must not mirror every Deployment of the cluster)
    assert not [c for c in caches if c[0] in ("deployments.apps", "services", "configmaps") and c[1] is None]


def _wired(monkeypatch, config: dict):
    """The controllers ``setup`` registers for the configuration ``config`` (no apiserver: nothing runs)."""
    from dynamo_operator.controllers import setup
    from dynamo_operator.runtime.manager import Manager
    from dynamo_operator.settings import settings_from_config
    from kubernetes.client import ApiClient

    settings = settings_from_config(config, metrics_bind_address="0", health_probe_bind_address="0")
    monkeypatch.setattr("dynamo_operator.controllers.wiring.detect_integrations", lambda client: frozenset())
    return setup(Manager(settings.runtime, ApiClient()), settings.config)


def test_the_request_controller_takes_its_images_role_and_gpu_discovery_from_the_configuration(monkeypatch):
    """images.profiler and images.operator become the profiling Job's images, the cluster-wide operator
    binds the Job to rbac.dgdrProfilingClusterRoleName, and gpu.discoveryEnabled false stops the node
    listing (the requests then say why no GPU was found)."""
    from dynamo_operator.controllers.dgdr import CONTROLLER

    config = {
        "images": {"profiler": "mirror.example/profiler:1", "operator": "mirror.example/operator:1"},
        "rbac": {"dgdrProfilingClusterRoleName": "team-profiling"},
        "gpu": {"discoveryEnabled": False},
    }
    reconciler = _wired(monkeypatch, config)[CONTROLLER].reconcile_fn
    assert reconciler.settings.profiler_image == "mirror.example/profiler:1"
    assert reconciler.settings.copier_image == "mirror.example/operator:1"
    assert reconciler.profiling_cluster_role == "team-profiling"
    assert reconciler.discover_gpus(None) == (
        None,
        "GPU discovery is off: gpu.discoveryEnabled is false in the operator configuration",
    )
    restricted = _wired(monkeypatch, {**config, "namespace": {"restricted": "team-a"}})[CONTROLLER]
    assert restricted.reconcile_fn.profiling_cluster_role is None  # a Role in its namespace instead


def test_pull_secret_discovery_off_registers_no_secret_cache(monkeypatch):
    """security.workloads.imagePullSecretDiscovery false: the operator reads no Secret at all for pull
    secrets (no cache of dockerconfigjson Secrets), so a platform that keeps registry credentials out of
    the operator's reach can."""
    from dynamo_operator.controllers import setup
    from dynamo_operator.runtime.manager import Manager
    from dynamo_operator.settings import settings_from_config
    from kubernetes.client import ApiClient

    def secret_caches(config: dict) -> list:
        settings = settings_from_config(config, metrics_bind_address="0", health_probe_bind_address="0")
        mgr = Manager(settings.runtime, ApiClient())
        setup(mgr, settings.config)
        return [
            k
            for k in mgr._informers
            if str(k[0]) == "secrets" and k[3] == "type=kubernetes.io/dockerconfigjson"
        ]

    monkeypatch.setattr("dynamo_operator.controllers.wiring.detect_integrations", lambda client: frozenset())
    assert secret_caches({}) != []
    assert secret_caches({"security": {"workloads": {"imagePullSecretDiscovery": False}}}) == []
