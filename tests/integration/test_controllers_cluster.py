"""The DGD and DCD controllers on the real control plane ("cluster" profile: kube-controller-manager with
its garbage collector, the scheduler and kwok nodes, so Deployments get Pods that become Running and Ready).

The operator runs in-process (``support.dgd.Operator``: a Manager with ``controllers.setup``, leader
election off, health and metrics on 127.0.0.1).  DGDs and DCDs are read and written in the storage version
(v1alpha1), which never calls the conversion webhook.  Every wait is bounded.
"""

from __future__ import annotations

import copy
import time

import pytest
from dynamo_operator.controllers import store
from dynamo_operator.controllers.diff import first_difference
from dynamo_operator.render import RenderContext, names, render_all
from dynamo_operator.runtime.client import (
    DEPLOYMENTS,
    ROLEBINDINGS,
    SERVICEACCOUNTS,
    SERVICES,
)
from support import graphs
from support.crs import events_of
from support.dgd import apply_dgd, dgd_status, get, ready, wait_successful
from support.operator import Operator
from support.poll import stays, wait_for
from support.processes import http_get, operator_process

pytestmark = pytest.mark.cluster

NS_PREFIX = "ctl"  # the ``ns`` fixture's namespaces
WAIT = 90.0


@pytest.fixture
def operator(kube_cluster, crds):
    with Operator(kube_cluster) as op:
        yield op


# -- helpers -------------------------------------------------------------------------------------------------


def graph(ns: str, name: str = "g", decode_replicas: int = 2, planner: bool = True) -> dict:
    """Frontend, a vLLM prefill worker, ``decode_replicas`` decode workers (one GPU each) and a Planner."""
    comps = [
        graphs.component("Frontend", "frontend"),
        graphs.component(
            "VllmPrefillWorker", "prefill", command=[*graphs.VLLM, "--is-prefill-worker"], gpus=1
        ),
        graphs.component("VllmDecodeWorker", "decode", replicas=decode_replicas, command=graphs.VLLM, gpus=1),
    ]
    if planner:
        comps.append(graphs.component("Planner", "planner"))
    return graphs.dgd(*comps, name=name, namespace=ns)


def component_names(dgd: dict) -> list[str]:
    return [f"{dgd['metadata']['name']}-{c['name'].lower()}" for c in dgd["spec"]["components"]]


def children_versions(client, ns) -> dict[str, str]:
    out = {}
    for res in (store.DGD, store.DCD, DEPLOYMENTS, SERVICES, SERVICEACCOUNTS):
        for o in client.list(res, ns).get("items") or []:
            if res is SERVICEACCOUNTS and o["metadata"]["name"] == "default":
                continue
            out[f"{res.kind}/{o['metadata']['name']}"] = o["metadata"]["resourceVersion"]
    return out


def assert_scheduled_replicas(client, ns: str, want: dict[str, int]) -> None:
    """``scheduledReplicas`` (the pods the scheduler placed, kwok's nodes here) reaches each component's
    replica count in the graph's status and in its DCD's (the pod cache may trail the Deployment's)."""

    def graph_counts() -> dict:
        comps = dgd_status(client, ns).get("components") or {}
        return {c: (comps.get(c) or {}).get("scheduledReplicas") for c in want}

    wait_for(lambda: graph_counts() == want, WAIT, f"scheduledReplicas {want} in the graph's status")
    for component, n in want.items():
        name = f"g-{component.lower()}"
        wait_for(
            lambda name=name, n=n: (
                (
                    (store.to_internal(client.get(store.DCD, name, ns)).get("status") or {}).get("component")
                    or {}
                ).get("scheduledReplicas")
                == n
            ),
            WAIT,
            f"scheduledReplicas {n} in DCD {name}'s status",
        )


def assert_preview_is_live(client, ns: str, dgd: dict, dgd_uid: str) -> None:
    """What ``dynamo-operator render`` previews is what runs: every rendered field is live, and the owner
    references are set (controller references on owned children, plain ones on shared children)."""
    for obj in render_all(dgd, RenderContext()):
        res = {
            "Deployment": DEPLOYMENTS,
            "Service": SERVICES,
            "ServiceAccount": SERVICEACCOUNTS,
            "RoleBinding": ROLEBINDINGS,
        }.get(obj["kind"], store.DCD)
        live = get(client, res, obj["metadata"]["name"], ns)
        assert live is not None, obj["metadata"]["name"]
        if obj["kind"] == names.DCD_KIND:
            assert live["metadata"]["ownerReferences"][0]["uid"] == dgd_uid
            live = store.to_internal(live)
        assert (
            live["metadata"]["annotations"][names.ANN_SPEC_HASH]
            == obj["metadata"]["annotations"][names.ANN_SPEC_HASH]
        )
        refs = live["metadata"]["ownerReferences"]
        if obj["kind"] in ("ServiceAccount", "RoleBinding"):  # shared: plain owner references
            assert refs and not any(r.get("controller") for r in refs)
        else:
            assert refs[0]["controller"] and refs[0]["blockOwnerDeletion"]
        if "spec" in obj:
            assert first_difference(obj["spec"], live["spec"], "spec") is None


def assert_documented_defaults(client, ns: str) -> None:
    """The injected defaults, read on the live Deployments and on a DCD's status."""
    front = client.get(DEPLOYMENTS, "g-frontend", ns)
    pod = front["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] == 60 and pod["restartPolicy"] == "Always"
    assert pod["securityContext"]["fsGroup"] == 1000
    shm = next(v for v in pod["volumes"] if v.get("emptyDir", {}).get("medium") == "Memory")
    assert shm["emptyDir"]["sizeLimit"] == "8Gi"
    main = next(c for c in pod["containers"] if c["name"] == "main")
    env = {e["name"]: e.get("value") for e in main.get("env") or []}
    assert env["DYN_NAMESPACE"] == f"{ns}-g"
    assert main["livenessProbe"] and main["readinessProbe"]
    labels = front["spec"]["template"]["metadata"]["labels"]
    assert labels[names.LABEL_COMPONENT_TYPE] == "frontend" and labels[names.LABEL_DGD_NAME] == "g"
    planner = client.get(DEPLOYMENTS, "g-planner", ns)["spec"]["template"]["spec"]
    assert planner["serviceAccountName"] == names.PLANNER_SERVICE_ACCOUNT
    dcd = store.to_internal(client.get(store.DCD, "g-vllmdecodeworker", ns))
    avail = next(c for c in dcd["status"]["conditions"] if c["type"] == "Available")
    assert avail["status"] == "True" and dcd["status"]["observedGeneration"] == dcd["metadata"]["generation"]


def creation_events(client, ns: str, kind: str, name: str) -> list[str]:
    """Messages of the SuccessfulCreate Events on one object: one per pass, naming every child."""
    return [
        message for _, reason, message in events_of(client, ns, name, kind) if reason == "SuccessfulCreate"
    ]


def created_children(client, ns: str, kind: str, name: str) -> list[str]:
    """The children named by the object's SuccessfulCreate Events (``Kind ns/name`` each)."""
    return [
        x.strip()
        for m in creation_events(client, ns, kind, name)
        for x in m.removeprefix("Created ").split(",")
    ]


def assert_creation_events(client, ns: str, dgd: dict) -> None:
    """The graph announces its DCDs and its discovery account once, in one Event; its DCDs do not
    announce their routine creations (the graph's Event names them), while a DCD applied on its own does."""
    wait_for(lambda: created_children(client, ns, names.DGD_KIND, "g"), 15)
    graph_children = sorted(created_children(client, ns, names.DGD_KIND, "g"))
    want = [f"{names.DCD_KIND} {ns}/{n}" for n in component_names(dgd)]
    assert graph_children == sorted([*want, f"ServiceAccount {ns}/g-k8s-service-discovery"]), graph_children
    assert len(creation_events(client, ns, names.DGD_KIND, "g")) == 1
    standalone = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": names.DCD_KIND,
        "metadata": {"name": "solo", "namespace": ns},
        "spec": {
            "name": "Frontend",
            "type": "frontend",
            "podTemplate": dgd["spec"]["components"][0]["podTemplate"],
        },
    }
    client.create(store.DCD, store.to_wire(standalone))
    wait_for(lambda: created_children(client, ns, names.DCD_KIND, "solo"), 15)
    assert sorted(created_children(client, ns, names.DCD_KIND, "solo")) == [
        f"Deployment {ns}/solo",
        f"Service {ns}/solo",
    ]
    assert creation_events(client, ns, names.DCD_KIND, "g-vllmdecodeworker") == []
    client.delete(store.DCD, "solo", ns)


def wait_gauges(operator, ns: str) -> None:
    """The resource and managed-pod gauges count the graph and its decode pods."""
    wait_for(
        lambda: (
            operator.mgr.registry.get_sample_value(
                "dynamo_operator_resources_total",
                {"resource_type": names.DGD_KIND, "namespace": ns, "status": "successful"},
            )
            == 1
        ),
        20,
    )
    wait_for(
        lambda: (
            operator.mgr.registry.get_sample_value(
                "dynamo_operator_managed_pods_total", {"component_type": "decode", "namespace": ns}
            )
            == 2
        ),
        20,
    )


# -- tests ---------------------------------------------------------------------------------------------------


def test_graph_reaches_successful_with_documented_defaults(client, ns, operator):
    t0 = time.monotonic()
    dgd = graph(ns)
    created = apply_dgd(client, dgd)
    status = wait_successful(client, ns, generation=1, timeout=WAIT)
    elapsed = time.monotonic() - t0
    cond = ready(status)
    assert cond["status"] == "True" and cond["reason"] == "all_resources_are_ready", cond
    assert status["observedGeneration"] == created["metadata"]["generation"] == 1
    comps = status["components"]
    assert set(comps) == {"Frontend", "VllmPrefillWorker", "VllmDecodeWorker", "Planner"}
    assert comps["VllmDecodeWorker"]["readyReplicas"] == 2 and comps["VllmDecodeWorker"]["replicas"] == 2
    assert {k: v for k, v in comps["Frontend"].items() if k != "scheduledReplicas"} == {
        "componentKind": "Deployment",
        "componentNames": ["g-frontend"],
        "runtimeNamespace": f"{ns}-g",
        "replicas": 1,
        "updatedReplicas": 1,
        "readyReplicas": 1,
        "availableReplicas": 1,
    }
    assert_scheduled_replicas(client, ns, {"Frontend": 1, "VllmDecodeWorker": 2})
    assert_preview_is_live(client, ns, dgd, created["metadata"]["uid"])
    assert_documented_defaults(client, ns)
    assert_creation_events(client, ns, dgd)
    wait_gauges(operator, ns)
    print(f"graph successful after {elapsed:.1f}s")


def test_scale_remove_hand_edit_and_delete(client, ns, operator):
    apply_dgd(client, graph(ns))
    wait_successful(client, ns, generation=1, timeout=WAIT)

    # scaling a component moves its Deployment and the status follows
    apply_dgd(client, graph(ns, decode_replicas=3))
    wait_for(
        lambda: client.get(DEPLOYMENTS, "g-vllmdecodeworker", ns)["spec"]["replicas"] == 3,
        30,
    )
    status = wait_successful(client, ns, generation=2, timeout=WAIT)
    assert status["components"]["VllmDecodeWorker"]["readyReplicas"] == 3
    assert_scheduled_replicas(client, ns, {"VllmDecodeWorker": 3})  # follows the scale-up

    # a hand-edited Deployment is put back
    dep = client.get(DEPLOYMENTS, "g-frontend", ns)
    want_image = dep["spec"]["template"]["spec"]["containers"][0]["image"]
    edited = copy.deepcopy(dep)
    edited["spec"]["template"]["spec"]["containers"][0]["image"] = "example.com/evil:1"
    edited["spec"]["template"]["spec"]["nodeSelector"] = {"hand": "edit"}
    client.replace(DEPLOYMENTS, edited)

    def restored():
        spec = client.get(DEPLOYMENTS, "g-frontend", ns)["spec"]["template"]["spec"]
        return spec["containers"][0]["image"] == want_image and "nodeSelector" not in spec

    wait_for(restored, 30)
    # ... and so is a hand-edited Service
    svc = client.get(SERVICES, "g-frontend", ns)
    want_port = svc["spec"]["ports"][0]["port"]
    svc["spec"]["ports"][0]["port"] = 1
    client.replace(SERVICES, svc)
    wait_for(
        lambda: client.get(SERVICES, "g-frontend", ns)["spec"]["ports"][0]["port"] == want_port,
        30,
    )

    # removing a component deletes its DCD, and the garbage collector its Deployment, Service and account
    apply_dgd(client, graph(ns, decode_replicas=3, planner=False))
    wait_for(
        lambda: get(client, store.DCD, "g-planner", ns) is None,
        30,
    )
    wait_for(
        lambda: (
            get(client, DEPLOYMENTS, "g-planner", ns) is None
            and get(client, SERVICES, "g-planner", ns) is None
            and get(client, SERVICEACCOUNTS, names.PLANNER_SERVICE_ACCOUNT, ns) is None
        ),
        60,
    )
    status = wait_successful(client, ns, generation=3, timeout=WAIT)
    assert "Planner" not in status["components"]

    # deleting the DGD removes everything through owner references (kube-controller-manager's GC)
    client.delete(store.DGD, "g", ns)
    wait_for(
        lambda: (
            not (client.list(store.DCD, ns).get("items") or [])
            and not (client.list(DEPLOYMENTS, ns).get("items") or [])
            and not [s for s in client.list(SERVICES, ns).get("items") or []]
        ),
        60,
        lambda: (client.list(store.DCD, ns).get("items"), client.list(DEPLOYMENTS, ns).get("items")),
    )


def _in(ns: str, requests: list[tuple]) -> list[tuple]:
    return [r for r in requests if f"/namespaces/{ns}/" in r[1]]


def _deployments_settled(client, ns: str) -> bool:
    items = client.list(DEPLOYMENTS, ns).get("items") or []
    for d in items:
        want = (d.get("spec") or {}).get("replicas", 1)
        st_ = d.get("status") or {}
        fields = ("replicas", "readyReplicas", "availableReplicas", "updatedReplicas")
        counts = [st_.get(k, 0) for k in fields]
        if st_.get("observedGeneration") != d["metadata"]["generation"] or counts != [want] * 4:
            return False
    return bool(items)


def test_restarted_operator_makes_no_writes_for_converged_objects(client, ns, kube_cluster, crds):
    with Operator(kube_cluster) as first:
        apply_dgd(client, graph(ns))
        wait_successful(client, ns, generation=1, timeout=WAIT)
        # The world must be still before the restart: kube-controller-manager keeps updating Deployment
        # status (available, updated replicas) for a while after the pods are Ready, and a status the
        # second operator then corrects would be a right write, not a wasted one.
        wait_for(lambda: _deployments_settled(client, ns), WAIT)
        assert first.idle(quiet=3.0)
        converged = len(first.client.accepted)
        # converged: nothing more while running either. Only this namespace counts: the operator watches
        # every namespace, and earlier tests' namespaces are still being torn down around it.
        stays(lambda: _in(ns, first.client.accepted[converged:]) == [], 2, "no write for the converged graph")
    before = children_versions(client, ns)
    status_before = client.get(store.DGD, "g", ns).get("status")
    t0 = time.monotonic()
    with Operator(kube_cluster) as second:
        # every DGD and DCD in this namespace reconciled at least once, then quiet
        n_objects = 1 + len(component_names(graph(ns)))
        wait_for(lambda: second.reconciles() >= n_objects, 30)
        assert second.idle(quiet=3.0)
        restart_writes = _in(ns, second.client.accepted)
    after = children_versions(client, ns)
    print(f"restart check took {time.monotonic() - t0:.1f}s; {second.reconciles()} reconciles")
    print(f"refused requests after the restart: {second.client.refused}")
    bodies = [(m, p, (b or {}).get("status")) for m, p, b in second.client.writes_in(ns)]
    assert restart_writes == [], f"status before the restart: {status_before}\nwrites: {bodies}"
    assert after == before


def test_dynamo_operator_run_process(client, ns, kube_cluster, crds, tmp_path):
    """``dynamo-operator run`` registers the controllers itself (``controllers.setup``)."""
    with operator_process(
        kube_cluster,
        tmp_path / "operator.log",
        "--no-leader-elect",
        "--no-webhooks",  # admission/conversion webhooks have their own tests
    ) as proc:
        small = graph(ns, name="solo")
        small["spec"]["components"] = small["spec"]["components"][:1]
        apply_dgd(client, small)
        wait_successful(client, ns, name="solo", generation=1, timeout=WAIT)
        _, text = http_get(f"http://127.0.0.1:{proc.metrics}/metrics")
        assert (
            f'dynamo_operator_reconcile_total{{namespace="{ns}",resource_type="DynamoGraphDeployment"' in text
        )
    assert proc.returncode == 0, proc.log_tail()
