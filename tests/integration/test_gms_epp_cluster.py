"""GPU memory service and EPP children on the real local control plane ("cluster" profile, Kubernetes 1.36,
which serves resource.k8s.io/v1), reconciled by the operator running as the chart's own ServiceAccount
(impersonated, bound to the chart's manager ClusterRole): every write below goes through the grants the
chart gives, so a missing rule fails here.

* A GPU memory service worker (intra-pod failover): its ResourceClaimTemplate is created, owned by the
  component's DCD, replaced when the GPU count changes (its spec is immutable), held back with the reason
  in status while its DeviceClass is missing and created once the class appears, and deleted when
  ``gpuMemoryService`` is removed; the Deployment's pods claim from it and run engine-0 / engine-1 beside the
  gms-server sidecar.
* An EPP graph without the InferencePool API fails with a status naming the API. With the vendored
  InferencePool and DestinationRule CRDs installed: the graph's ``<dgd>-pool`` and the EPP Service's
  DestinationRule are created and owned by the graph, follow the graph and the service mesh settings, and
  go when the mesh is turned off / the EPP component is removed; the workers carry the labels the EPP and
  its pool select on.

The module removes the two CRDs when it ends: operators in other modules auto-detect them.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator

import pytest
from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from dynamo_operator.controllers.sync import (
    DESTINATIONRULES,
    DEVICECLASSES,
    INFERENCEPOOLS,
    RESOURCECLAIMTEMPLATES,
)
from dynamo_operator.runtime.client import DEPLOYMENTS
from support import graphs, yamlc
from support.crds import INTEGRATION_CRD_FILES, wait_established
from support.dgd import apply_dgd, dgd_status, get
from support.operator import Operator, chart_operator_identity
from support.poll import wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "gms"
WAIT = 60.0
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"
# Istio's two kinds come together, as an Istio install serves them (the operator detects each kind on its
# own: test_exposure_storage_cluster.py installs the VirtualService CRD alone)
CRD_FILES = INTEGRATION_CRD_FILES
CONTAINER_MODE = {"nvidia.com/dynamo-kube-discovery-mode": "container"}


def kubectl(env: dict, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run(["kubectl", *args], env=env, input=input, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"kubectl {' '.join(args)}: {r.stderr}"
    return r


# -- the operator, as the chart's ServiceAccount ------------------------------------------------------------


@pytest.fixture(scope="module")
def operator_identity(kube_cluster) -> Iterator[str]:
    """The user name of the chart's operator ServiceAccount, its cluster-wide grants applied."""
    with chart_operator_identity(kube_cluster, NS_PREFIX) as user:
        yield user


def operator_as(kube_cluster, user: str, config: dict | None = None) -> Operator:
    """The operator's controllers in this process, every request made as ``user``."""
    return Operator(kube_cluster, config, user=user)


def controller_of(obj: dict) -> dict:
    (ref,) = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("controller")]
    return ref


# -- GPU memory service -------------------------------------------------------------------------------------


def device_class(name: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}, "spec": {}}


@pytest.fixture
def classes(client) -> Iterator[list[str]]:
    """DeviceClasses a test creates (cluster-scoped), deleted afterwards."""
    made: list[str] = []
    yield made
    for name in made:
        with contextlib.suppress(Exception):
            client.delete(DEVICECLASSES, name)


def gms_graph(ns: str, gpus: str = "2", device: str = "gpu.gms-test.example", gms: bool = True) -> dict:
    """One vLLM worker asking for ``gpus`` GPUs, with the GPU memory service on ``device`` (and failover)."""
    experimental = {"gpuMemoryService": {"deviceClassName": device}, "failover": {}} if gms else None
    worker = graphs.component(
        "Worker",
        image=IMAGE,
        command=graphs.VLLM,
        args=["--model", "Qwen/Qwen3-0.6B"],
        gpus=gpus,
        **({"experimental": experimental} if experimental else {}),
    )
    metadata = {"annotations": dict(CONTAINER_MODE)}
    return graphs.dgd(worker, name="g", namespace=ns, metadata=metadata, backendFramework="vllm")


def template_of(client, ns: str) -> dict | None:
    return get(client, RESOURCECLAIMTEMPLATES, "g-worker-gpu", ns)


def exactly(rct: dict | None) -> dict:
    return (
        ((((rct or {}).get("spec") or {}).get("spec") or {}).get("devices") or {})
        .get("requests", [{}])[0]
        .get("exactly", {})
    )


def test_a_gpu_memory_service_worker_claims_its_gpus_from_its_own_template(
    kube_cluster, client, ns, operator_identity, classes
):
    client.create(DEVICECLASSES, device_class("gpu.gms-test.example"))
    classes.append("gpu.gms-test.example")
    with operator_as(kube_cluster, operator_identity):
        apply_dgd(client, gms_graph(ns))
        rct = wait_for(lambda: template_of(client, ns), WAIT, "the ResourceClaimTemplate")
        dcd = get(client, store.DCD, "g-worker", ns)
        ref = controller_of(rct)
        assert (ref["kind"], ref["name"], ref["uid"]) == (
            "DynamoComponentDeployment",
            "g-worker",
            dcd["metadata"]["uid"],
        )
        assert exactly(rct) == {
            "deviceClassName": "gpu.gms-test.example",
            "allocationMode": "ExactCount",
            "count": 2,
        }
        dep = wait_for(lambda: get(client, DEPLOYMENTS, "g-worker", ns), WAIT, "the worker Deployment")
        pod = dep["spec"]["template"]["spec"]
        assert [c["name"] for c in pod["containers"]] == ["engine-0", "engine-1"]
        assert [c["name"] for c in pod["initContainers"]] == ["gms-server"]
        assert pod["resourceClaims"] == [
            {"name": "intrapod-shared-gpu", "resourceClaimTemplateName": "g-worker-gpu"}
        ]
        assert all("nvidia.com/gpu" not in (c["resources"].get("limits") or {}) for c in pod["containers"])

        # more GPUs: the template's spec is immutable, so it is replaced
        apply_dgd(client, gms_graph(ns, gpus="4"))
        new = wait_for(
            lambda: exactly(template_of(client, ns)).get("count") == 4 and template_of(client, ns),
            WAIT,
            "4 GPUs",
        )
        assert new["metadata"]["uid"] != rct["metadata"]["uid"]

        # a DeviceClass the cluster does not have: nothing is changed, the graph's status says why
        apply_dgd(client, gms_graph(ns, gpus="4", device="gpu.late.example"))
        status = wait_for(
            lambda: (s := dgd_status(client, ns)).get("state") == st.STATE_FAILED and s, WAIT, "failed"
        )
        ready = st.condition(status, st.READY)
        assert ready["reason"] == "device_class_not_found"
        assert "DeviceClass gpu.late.example not found" in ready["message"]
        assert "deviceClassName" in ready["message"]
        assert exactly(template_of(client, ns))["deviceClassName"] == "gpu.gms-test.example"
        # the class appears (a DRA driver installed): the component goes on without another edit
        client.create(DEVICECLASSES, device_class("gpu.late.example"))
        classes.append("gpu.late.example")
        wait_for(
            lambda: exactly(template_of(client, ns)).get("deviceClassName") == "gpu.late.example",
            WAIT,
            "the new class",
        )

        # gpuMemoryService removed: the template goes, the GPUs are requested as before
        apply_dgd(client, gms_graph(ns, gpus="4", gms=False))
        wait_for(lambda: template_of(client, ns) is None, WAIT, "the template deleted")
        dep = wait_for(
            lambda: (
                (d := get(client, DEPLOYMENTS, "g-worker", ns))
                and d["spec"]["template"]["spec"]["containers"][0]["name"] == "main"
                and d
            ),
            WAIT,
            "the plain worker",
        )
        main = dep["spec"]["template"]["spec"]["containers"][0]
        assert main["resources"]["limits"]["nvidia.com/gpu"] == "4"
        assert "resourceClaims" not in dep["spec"]["template"]["spec"]


# -- EPP ---------------------------------------------------------------------------------------------------


def epp_graph(ns: str, epp: bool = True, global_ns: bool = False) -> dict:
    """Disaggregated Decode (with a frontend sidecar) and Prefill workers, behind an EPP if ``epp``."""
    args = ["--model", "m"]
    sidecar = {
        "name": "sidecar-frontend",
        "image": IMAGE,
        "args": ["-m", "dynamo.frontend", "--router-mode", "direct"],
    }
    components = [
        graphs.component(
            "Decode",
            "decode",
            image=IMAGE,
            command=graphs.VLLM,
            args=args,
            sidecars=[sidecar],
            frontendSidecar="sidecar-frontend",
        ),
        graphs.component("Prefill", "prefill", image=IMAGE, command=graphs.VLLM, args=args),
    ]
    if epp:
        plugins = [{"type": "label-filter"}]
        epp_config = {"config": {"plugins": plugins}}
        components.insert(
            0,
            graphs.component(
                "Epp", "epp", image="epp:1", globalDynamoNamespace=global_ns, eppConfig=epp_config
            ),
        )
    return graphs.dgd(*components, name="gaie", namespace=ns, backendFramework="vllm")


def test_an_epp_graph_without_the_inference_pool_api_says_so(kube_cluster, client, ns, operator_identity):
    """Runs before the module installs the InferencePool CRD."""
    with operator_as(kube_cluster, operator_identity):
        apply_dgd(client, epp_graph(ns))
        status = wait_for(
            lambda: (s := dgd_status(client, ns, "gaie")).get("state") == st.STATE_FAILED and s,
            WAIT,
            "failed",
        )
    message = (st.condition(status, st.READY) or {}).get("message", "")
    assert "an epp component needs" in message and "inference.networking.k8s.io/v1" in message
    assert get(client, DEPLOYMENTS, "gaie-epp", ns) is None  # nothing runs against a pool that cannot exist


@pytest.fixture(scope="module")
def epp_crds(kube_cluster, crds) -> Iterator[None]:
    """The vendored InferencePool, DestinationRule and VirtualService CRDs, removed when the module ends
    (until their API groups are no longer served)."""
    env = kube_cluster.env
    names = [yamlc.load(p.read_text())["metadata"]["name"] for p in CRD_FILES]
    for path in CRD_FILES:
        kubectl(env, "apply", "--server-side", "--force-conflicts", "-f", str(path))
    for name in names:
        wait_established(kube_cluster.api_client(), name)
    try:
        yield
    finally:
        from dynamo_hooks.cluster import connect
        from dynamo_hooks.crd_delete import delete_crds, describe_left

        cluster = connect(env["KUBECONFIG"])
        left = delete_crds(cluster, names, 90)
        assert not left, describe_left(cluster, left)

        def served() -> bool:
            r = subprocess.run(
                ["kubectl", "api-versions"], env=env, capture_output=True, text=True, timeout=60
            )
            return "inference.networking.k8s.io/" in r.stdout or "networking.istio.io/" in r.stdout

        wait_for(lambda: not served(), 90, "the API groups are still served", interval=0.5)


def mesh(tls: str | None = "SIMPLE") -> dict:
    return (
        {"serviceMesh": {"provider": "istio", "istio": {"tlsMode": tls}}}
        if tls
        else {"serviceMesh": {"provider": ""}}
    )


def test_an_epp_graph_owns_its_inference_pool_and_destination_rule(
    kube_cluster, client, ns, operator_identity, epp_crds
):
    pool_of = lambda: get(client, INFERENCEPOOLS, "gaie-pool", ns)  # noqa: E731
    rule_of = lambda: get(client, DESTINATIONRULES, "gaie-epp", ns)  # noqa: E731
    with operator_as(kube_cluster, operator_identity, mesh("SIMPLE")):
        created = apply_dgd(client, epp_graph(ns))
        pool = wait_for(pool_of, WAIT, "the InferencePool")
        rule = wait_for(rule_of, WAIT, "the DestinationRule")
        for obj in (pool, rule):
            ref = controller_of(obj)
            assert (ref["kind"], ref["name"], ref["uid"]) == (
                "DynamoGraphDeployment",
                "gaie",
                created["metadata"]["uid"],
            )
        assert pool["spec"]["selector"]["matchLabels"] == {
            "nvidia.com/dynamo-component-class": "worker",
            "nvidia.com/dynamo-namespace": f"{ns}-gaie",
        }
        assert pool["spec"]["targetPorts"] == [{"number": 8000}]
        assert pool["spec"]["endpointPickerRef"]["name"] == "gaie-epp"
        assert pool["spec"]["endpointPickerRef"]["port"] == {"number": 9002}
        assert rule["spec"]["host"] == f"gaie-epp.{ns}.svc.cluster.local"
        assert rule["spec"]["trafficPolicy"]["tls"] == {"mode": "SIMPLE", "insecureSkipVerify": True}
        # what selects on what: the EPP's arguments name the pool, the workers carry the labels
        epp = wait_for(lambda: get(client, DEPLOYMENTS, "gaie-epp", ns), WAIT, "the EPP Deployment")
        args = epp["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[args.index("-pool-name") + 1] == "gaie-pool"
        for name, sub in (("gaie-decode", "decode"), ("gaie-prefill", "prefill")):
            dep = wait_for(lambda n=name: get(client, DEPLOYMENTS, n, ns), WAIT, f"Deployment {name}")
            labels = dep["spec"]["template"]["metadata"]["labels"]
            assert labels["nvidia.com/dynamo-sub-component-type"] == sub
            assert labels["nvidia.com/dynamo-component-class"] == "worker"
        sidecar = get(client, DEPLOYMENTS, "gaie-decode", ns)["spec"]["template"]["spec"]["containers"][1]
        assert sidecar["command"] == ["python3"] and sidecar["ports"][0]["containerPort"] == 8000

        # the graph changes what the pool selects
        apply_dgd(client, epp_graph(ns, global_ns=True))
        wait_for(
            lambda: (
                (pool_of() or {})
                .get("spec", {})
                .get("selector", {})
                .get("matchLabels", {})
                .get("nvidia.com/dynamo-namespace")
                == "dynamo"
            ),
            WAIT,
            "the pool's selector updated",
        )
    # the mesh settings change (a new configuration restarts the operator)
    with operator_as(kube_cluster, operator_identity, mesh("ISTIO_MUTUAL")):
        wait_for(
            lambda: (
                (rule_of() or {}).get("spec", {}).get("trafficPolicy", {}).get("tls", {}).get("mode")
                == "ISTIO_MUTUAL"
            ),
            WAIT,
            "the new TLS mode",
        )
    # the mesh turned off: the rule goes, the pool stays; the EPP removed: the pool goes too
    with operator_as(kube_cluster, operator_identity, mesh(None)):
        wait_for(lambda: rule_of() is None, WAIT, "the DestinationRule deleted")
        assert pool_of() is not None
        apply_dgd(client, epp_graph(ns, epp=False))
        wait_for(lambda: pool_of() is None, WAIT, "the InferencePool deleted")
        wait_for(
            lambda: (
                "nvidia.com/dynamo-component-class"
                not in get(client, DEPLOYMENTS, "gaie-decode", ns)["spec"]["template"]["metadata"]["labels"]
            ),
            WAIT,
            "the workers no longer in a pool",
        )
