"""Scaling adapters (DGDSA) on the real control plane: the DGD controller creates one adapter per component
with ``scalingAdapter``; ``kubectl scale dgdsa`` and a real ``autoscaling/v2`` HPA (kube-controller-manager's
HPA controller, through the ``/scale`` subresource) drive the component's Deployment; removing
``scalingAdapter`` deletes the adapter without moving the replicas.

No metrics server runs, so the HPA computes no utilisation; what it does do for real is read ``/scale``
(selector, ``status.replicas``) and enforce ``minReplicas``, which is how the tests make it scale.
"""

from __future__ import annotations

import json
import subprocess
import threading

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from dynamo_operator.controllers.dgdsa import DGDSA
from dynamo_operator.render import names
from dynamo_operator.runtime.client import (
    DEPLOYMENTS,
    EVENTS,
    HPAS,
    ROLEBINDINGS,
    ROLES,
    SERVICEACCOUNTS,
    custom,
)
from support import graphs, rbac, yamlc
from support.dgd import apply_dgd, dgd_status, get, wait_successful
from support.operator import Operator
from support.poll import stays, wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "scale"
WAIT = 90.0
EXAMPLES = REPO_ROOT / "examples"
DGDSA_BETA = custom(names.GROUP, "v1beta1", DGDSA.plural, DGDSA.kind)


@pytest.fixture(scope="module")
def operator(kube_cluster, crds):
    """One in-process operator for the module: each test works in a namespace of its own."""
    with Operator(kube_cluster) as op:
        yield op


def graph(ns: str, decode_replicas: int = 2) -> dict:
    """A Frontend and vLLM decode workers scaled through an adapter."""
    decode = graphs.component(
        "Decode", "decode", replicas=decode_replicas, command=graphs.VLLM, scalingAdapter={}
    )
    return graphs.dgd(graphs.component("Frontend", "frontend"), decode, namespace=ns)


def run_kubectl(kube_cluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", *args], env=kube_cluster.env, capture_output=True, text=True, timeout=60, check=False
    )


def kubectl(kube_cluster, *args: str) -> str:
    out = run_kubectl(kube_cluster, *args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def component_replicas(client, ns: str, component: str = "Decode", dgd: str = "g") -> int | None:
    obj = get(client, store.DGD, dgd, ns)
    comp = next(c for c in store.to_internal(obj)["spec"]["components"] if c["name"] == component)
    return comp.get("replicas")


def deployment_replicas(client, ns: str, name: str = "g-decode") -> int | None:
    dep = get(client, DEPLOYMENTS, name, ns)
    return None if dep is None else dep["spec"].get("replicas")


def event_reasons(client, ns: str, kind: str) -> set[str]:
    items = client.list(EVENTS, ns).get("items") or []
    return {e.get("reason") for e in items if (e.get("involvedObject") or {}).get("kind") == kind}


def wait_ready_replicas(client, ns: str, n: int, component: str = "Decode", dgd: str = "g") -> dict:
    def ok(s: dict) -> bool:
        comp = (s.get("components") or {}).get(component) or {}
        return s.get("state") == st.STATE_SUCCESSFUL and comp.get("readyReplicas") == n

    wait_for(lambda: ok(dgd_status(client, ns, dgd)), WAIT, lambda: dgd_status(client, ns, dgd), interval=0.3)
    return dgd_status(client, ns, dgd)


def _assert_adapter_seeded(client, ns: str, dgd_uid: str) -> str:
    """One adapter, for the component that asked for it, owned by the DGD, seeded with its replicas;
    returns the label selector its status publishes."""
    wait_for(
        lambda: get(client, DGDSA_BETA, "g-decode", ns) is not None,
        WAIT,
    )
    assert get(client, DGDSA_BETA, "g-frontend", ns) is None
    adapter = client.get(DGDSA_BETA, "g-decode", ns)
    ref = adapter["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["uid"], ref["controller"]) == (
        "DynamoGraphDeployment",
        dgd_uid,
        True,
    )
    assert adapter["spec"] == {"replicas": 2, "dgdRef": {"name": "g", "componentName": "Decode"}}
    selector = f"{names.LABEL_DGD_NAME}=g,{names.LABEL_COMPONENT}=Decode"
    wait_for(
        lambda: (get(client, DGDSA_BETA, "g-decode", ns).get("status") or {}).get("selector") == selector,
        WAIT,
    )
    return selector


def _hand_back_keeps_the_replicas(client, ns: str) -> None:
    """Hand replicas back: drop ``scalingAdapter`` (a patch that leaves replicas alone); the adapter goes
    away and the Deployment never leaves 3 replicas (sampled every 0.1 s throughout)."""
    seen: list[int | None] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            seen.append(deployment_replicas(client, ns))
            stop.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        client.patch(store.DGD, "g", {"spec": {"services": {"Decode": {"scalingAdapter": None}}}}, ns)
        wait_for(
            lambda: get(client, DGDSA_BETA, "g-decode", ns) is None,
            WAIT,
        )
        wait_successful(client, ns, generation=3, timeout=WAIT)
        stays(lambda: deployment_replicas(client, ns) == 3, 2, "the Deployment at 3 replicas")
    finally:
        stop.set()
        sampler.join(10)
    assert seen and set(seen) == {3}, seen


def test_adapter_lifecycle_kubectl_scale_and_hand_back(client, ns, operator, kube_cluster):
    dgd = apply_dgd(client, graph(ns, decode_replicas=2))
    wait_successful(client, ns, generation=1, timeout=WAIT)

    selector = _assert_adapter_seeded(client, ns, dgd["metadata"]["uid"])

    # /scale as an autoscaler sees it: the selector finds exactly the component's pods
    scale = json.loads(
        kubectl(kube_cluster, "-n", ns, "get", "--raw", DGDSA_BETA.object_path("g-decode", ns, "scale"))
    )
    assert scale["spec"]["replicas"] == 2 and scale["status"]["replicas"] == 2
    assert scale["status"]["selector"] == selector
    pods = json.loads(kubectl(kube_cluster, "-n", ns, "get", "pods", "-l", selector, "-o", "json"))["items"]
    assert len(pods) == 2 and all(p["metadata"]["labels"][names.LABEL_COMPONENT] == "Decode" for p in pods)

    # kubectl scale dgdsa flows to the DGD, the Deployment and the pods
    kubectl(kube_cluster, "-n", ns, "scale", "dgdsa", "g-decode", "--replicas=3")
    wait_for(lambda: component_replicas(client, ns) == 3, WAIT)
    wait_for(lambda: deployment_replicas(client, ns) == 3, WAIT)
    s = wait_ready_replicas(client, ns, 3)
    assert s["observedGeneration"] == 2
    scaled = client.get(DGDSA_BETA, "g-decode", ns)
    assert scaled["status"]["replicas"] == 3 and scaled["status"].get("lastScaleTime")
    wait_for(
        lambda: "Scaled" in event_reasons(client, ns, DGDSA.kind),
        30,
    )
    described = kubectl(kube_cluster, "-n", ns, "describe", "dgdsa", "g-decode")
    assert "Scaled component Decode of g from 2 to 3 replicas" in described

    _hand_back_keeps_the_replicas(client, ns)
    assert component_replicas(client, ns) == 3
    wait_for(
        lambda: "AdapterDeleted" in event_reasons(client, ns, names.DGD_KIND),
        30,
    )
    # the component's replicas are the DGD's own again: editing them scales directly
    live = store.to_internal(client.get(store.DGD, "g", ns))
    next(c for c in live["spec"]["components"] if c["name"] == "Decode")["replicas"] = 1
    apply_dgd(client, live)
    wait_for(lambda: deployment_replicas(client, ns) == 1, WAIT)


def test_example_hpa_drives_the_example_graph_through_scale(client, ns, operator):
    """examples/vllm-disagg-scaling.yaml + examples/hpa-vllm-disagg-scaling.yaml, as a user applies them."""
    graph_doc = yaml.safe_load((EXAMPLES / "vllm-disagg-scaling.yaml").read_text())
    hpa = yaml.safe_load((EXAMPLES / "hpa-vllm-disagg-scaling.yaml").read_text())
    graph_doc["metadata"]["namespace"] = hpa["metadata"]["namespace"] = ns
    name = graph_doc["metadata"]["name"]
    target = hpa["spec"]["scaleTargetRef"]["name"]
    assert target == f"{name}-vllmdecodeworker"
    apply_dgd(client, graph_doc)
    wait_successful(client, ns, name=name, generation=1, timeout=WAIT)
    wait_for(
        lambda: ((get(client, DGDSA, target, ns) or {}).get("status") or {}).get("selector"),
        WAIT,
    )
    assert get(client, DGDSA, f"{name}-vllmprefillworker", ns) is not None
    assert get(client, DGDSA, f"{name}-frontend", ns) is None
    client.create(HPAS, hpa)  # accepted by the apiserver as written

    def hpa_condition(type_: str) -> dict:
        obj = client.get(HPAS, hpa["metadata"]["name"], ns)
        return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == type_), {})

    # kube-controller-manager's HPA controller resolved the adapter through /scale ...
    wait_for(
        lambda: hpa_condition("AbleToScale").get("status") == "True",
        WAIT,
        lambda: client.get(HPAS, hpa["metadata"]["name"], ns).get("status"),
    )
    # ... and, the graph being below minReplicas (2), scaled it: adapter -> DGD -> Deployment -> ready pods
    wait_for(
        lambda: client.get(DGDSA, target, ns)["spec"]["replicas"] == 2,
        WAIT,
    )
    wait_for(
        lambda: component_replicas(client, ns, "VllmDecodeWorker", name) == 2,
        WAIT,
    )
    wait_ready_replicas(client, ns, 2, "VllmDecodeWorker", name)
    wait_for(
        lambda: (
            (client.get(HPAS, hpa["metadata"]["name"], ns).get("status") or {}).get("currentReplicas") == 2
        ),
        WAIT,
    )
    assert client.get(DGDSA, target, ns)["status"]["replicas"] == 2
    # the prefill adapter was not touched
    assert component_replicas(client, ns, "VllmPrefillWorker", name) == 1


def test_planner_service_account_may_scale_through_the_adapter(client, ns, operator, kube_cluster):
    """The chart's planner rules, bound in the namespace to ``planner-serviceaccount``: the planner scales
    through ``/scale`` (as ``kubectl scale`` does: read, then write) and cannot edit the graph itself."""
    rendered = subprocess.run(
        [
            "helm",
            "template",
            "x",
            str(REPO_ROOT / "charts/platform/components/operator"),
            "--show-only",
            "templates/workload-rbac.yaml",
        ],
        env=kube_cluster.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert rendered.returncode == 0, rendered.stderr
    role = next(
        d for d in yamlc.load_all(rendered.stdout) if d and d["metadata"]["name"].endswith("-planner")
    )
    sa = "planner-serviceaccount"
    client.create(SERVICEACCOUNTS, {"metadata": {"name": sa, "namespace": ns}})
    client.create(ROLES, {"metadata": {"name": "planner", "namespace": ns}, "rules": role["rules"]})
    client.create(
        ROLEBINDINGS,
        {
            "metadata": {"name": "planner", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "planner"},
            "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}],
        },
    )
    apply_dgd(client, graph(ns, decode_replicas=1))
    wait_successful(client, ns, generation=1, timeout=WAIT)
    wait_for(
        lambda: get(client, DGDSA, "g-decode", ns) is not None,
        WAIT,
    )
    planner = rbac.service_account_user(ns, sa)
    scale = ("update", "dynamographdeploymentscalingadapters", "--subresource=scale", "-n", ns)
    rbac.wait_allowed(kube_cluster.env, planner, *scale)
    as_planner = f"--as={planner}"
    kubectl(kube_cluster, as_planner, "-n", ns, "scale", "dgdsa", "g-decode", "--replicas=2")
    wait_for(lambda: deployment_replicas(client, ns) == 2, WAIT)
    patch = '{"spec":{"services":{"Decode":{"replicas":5}}}}'
    denied = run_kubectl(kube_cluster, as_planner, "-n", ns, "patch", "dgd", "g", "--type=merge", "-p", patch)
    assert denied.returncode != 0 and "forbidden" in denied.stderr.lower(), denied.stderr
