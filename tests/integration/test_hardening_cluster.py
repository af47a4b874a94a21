"""Opt-in hardening on the real local control plane ("cluster" profile), with the chart's own output.

* The chart rendered with ``ci/hardened-values.yaml`` (NATS user/password + mutual TLS, etcd mutual TLS,
  sshd NetworkPolicies) gives the operator its configuration and the Secrets the subcharts generate;
  the operator, running with exactly that configuration, renders a graph whose every component carries
  the runtime's NATS_AUTH_* / NATS_TLS_* / ETCD_AUTH_* variables and the TLS volume, and every Secret
  key they reference exists in the namespace. A multinode TensorRT-LLM graph gets its sshd
  NetworkPolicy, which the API server accepts and which the graph's deletion takes along; the chart's
  grant lets the operator's ServiceAccount write NetworkPolicies (SubjectAccessReview).
  (That the hardened chart installs and passes ``helm test`` for real is ``ct install`` on the real node:
  tests/realnode/test_01_ct_install.py, with the same file.)
* ``security.workloads.restrictedSecurityContext``: a graph's pods are admitted into a namespace that
  enforces the restricted Pod Security level (the API server's own admission; with the switch off they
  are not, which this test was seen to catch), and a pod without the injected settings is refused there.
* The DGDR profiling copier (``dynamo-operator publish-profiling-output``) runs as the profiling Job's
  ServiceAccount under the chart's profiling ClusterRole: it publishes the profiler's files and stops
  when the final config is out, or when its pod shows the profiler terminated.

kwok runs no container, so what a kubelet would do with the references is asserted on the objects.
"""

from __future__ import annotations

import copy
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator import copier
from dynamo_operator.controllers.sync import NETWORKPOLICIES
from dynamo_operator.render import dgdr as rd
from dynamo_operator.runtime.client import CONFIGMAPS, DEPLOYMENTS, PODS, SECRETS, ResourceClient, custom
from kubernetes import client as k8s
from support import yamlc
from support.crs import running_operator
from support.dgd import get
from support.poll import wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "hard"
# first of the modules sharing the vendored CRDs (support.order): its first tests expect the Deployment
# pathway, which auto-detection picks only while the CRDs are absent
LEADS_CARRIED = ("third_party_crds",)
WAIT = 60.0
# the examples are v1beta1; the API server converts them (the session's conversion webhook)
DGD_V1BETA1 = custom("nvidia.com", "v1beta1", "dynamographdeployments", "DynamoGraphDeployment")
CHART = REPO_ROOT / "charts" / "platform"
HARDENED = CHART / "ci" / "hardened-values.yaml"


def helm_template(env: dict, release: str, namespace: str) -> list[dict]:
    r = subprocess.run(
        ["helm", "template", release, str(CHART), "-n", namespace, "--values", str(HARDENED)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return [d for d in yamlc.load_all(r.stdout) if d]


def kubectl_apply(env: dict, docs: list[dict]) -> None:
    r = subprocess.run(
        ["kubectl", "apply", "-f", "-"],
        input=yaml.safe_dump_all(docs),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr


def kubectl_delete(env: dict, docs: list[dict]) -> None:
    subprocess.run(
        ["kubectl", "delete", "--ignore-not-found", "--wait=false", "-f", "-"],
        input=yaml.safe_dump_all(docs),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def one(docs: list[dict], kind: str, name_suffix: str) -> dict:
    (found,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"].endswith(name_suffix)]
    return found


@pytest.fixture(scope="module")
def chart(kube_cluster) -> Iterator[dict]:
    """The hardened chart rendered for a release in a fresh namespace: its Secrets applied there (what
    `helm install` would create), its cluster-scoped NetworkPolicy and profiling grants applied."""
    env = kube_cluster.env
    release = f"{NS_PREFIX}-{uuid.uuid4().hex[:6]}"
    namespace = f"{release}-ns"
    docs = helm_template(env, release, namespace)
    config = yaml.safe_load(one(docs, "ConfigMap", "-operator-config")["data"]["config.yaml"])
    secrets = [d for d in docs if d["kind"] == "Secret" and d["metadata"]["name"].startswith(release)]
    grants = [
        d
        for d in docs
        if d["kind"] in ("ClusterRole", "ClusterRoleBinding")
        and d["metadata"]["name"].endswith(("-networkpolicies", "-dgdr-profiling"))
    ]
    subprocess.run(["kubectl", "create", "namespace", namespace], env=env, check=True, capture_output=True)
    kubectl_apply(env, secrets + grants)
    try:
        yield {"release": release, "namespace": namespace, "config": config, "docs": docs, "env": env}
    finally:
        kubectl_delete(env, grants)
        subprocess.run(
            ["kubectl", "delete", "namespace", namespace, "--wait=false"], env=env, capture_output=True
        )


def _secret_keys(rc: ResourceClient, namespace: str, name: str) -> set[str]:
    secret = get(rc, SECRETS, name, namespace)
    assert secret is not None, f"Secret {namespace}/{name} referenced by a component does not exist"
    return set((secret.get("data") or {}).keys())


def _references(pod: dict) -> list[tuple[str, str]]:
    """(Secret, key) of every secretKeyRef and projected Secret item of a pod template's main container."""
    spec = pod["spec"]
    refs = [
        (e["valueFrom"]["secretKeyRef"]["name"], e["valueFrom"]["secretKeyRef"]["key"])
        for e in spec["containers"][0].get("env") or []
        if "secretKeyRef" in (e.get("valueFrom") or {})
    ]
    for v in spec.get("volumes") or []:
        for item in (v.get("secret") or {}).get("items") or []:
            refs.append((v["secret"]["secretName"], item["key"]))
    return refs


def test_the_operator_passes_the_charts_credentials_to_every_component(kube_cluster, chart, client, crds):
    cfg, ns, release = chart["config"], chart["namespace"], chart["release"]
    infra = cfg["infrastructure"]
    assert infra["etcdAddress"] == f"https://{release}-etcd.{ns}.svc.cluster.local:2379"
    assert infra["natsAddress"] == f"nats://{release}-nats.{ns}.svc.cluster.local:4222"  # form unchanged
    dgd = yaml.safe_load((REPO_ROOT / "examples" / "vllm-agg.yaml").read_text())
    dgd["metadata"]["namespace"] = ns
    with running_operator(kube_cluster, config=cfg):
        client.create(DGD_V1BETA1, dgd)
        names = [f"{dgd['metadata']['name']}-{c['name'].lower()}" for c in dgd["spec"]["components"]]
        deployments = [
            wait_for(lambda n=n: get(client, DEPLOYMENTS, n, ns), WAIT, f"Deployment {ns}/{n}") for n in names
        ]
    for dep in deployments:
        pod = dep["spec"]["template"]
        env = {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}
        assert env["NATS_AUTH_USERNAME"]["valueFrom"]["secretKeyRef"] == {
            "name": f"{release}-nats-client",
            "key": "username",
        }
        assert env["NATS_TLS_CA_CERT_PATH"]["value"] == "/etc/dynamo/nats-tls/ca.crt"
        assert env["NATS_TLS_CLIENT_KEY_PATH"]["value"] == "/etc/dynamo/nats-tls/tls.key"
        # etcd: each namespace's own access (the default), for graphs on etcd discovery only, through the
        # pod's sidecars (test_render_etcd_access.py; test_rbac_cluster.py with a real etcd): this graph is
        # on Kubernetes discovery, so no etcd address and no shared etcd credential at all
        assert cfg["infrastructure"]["etcdAuth"]["method"] == "namespaceCertificate"
        assert not [n for n in env if n.startswith("ETCD_")], sorted(env)
        mounts = {m["name"]: m for m in pod["spec"]["containers"][0]["volumeMounts"]}
        assert mounts["dynamo-nats-tls"] == {
            "name": "dynamo-nats-tls",
            "mountPath": "/etc/dynamo/nats-tls",
            "readOnly": True,
        }
        refs = _references(pod)
        assert len(refs) >= 5  # user, password, the NATS ca/cert/key files
        for secret, key in refs:  # what the kubelet would resolve: every one exists
            assert key in _secret_keys(client, ns, secret), (secret, key)


def test_a_multinode_tensorrt_llm_graph_gets_its_sshd_policy(
    kube_cluster, chart, client, crds, third_party_crds
):
    cfg = copy.deepcopy(chart["config"])
    cfg["orchestrators"] = {"grove": {"enabled": False}, "lws": {"enabled": True}}
    ns = chart["namespace"]
    dgd = yaml.safe_load((REPO_ROOT / "examples" / "trtllm-multinode.yaml").read_text())
    dgd["metadata"]["namespace"] = ns
    name = f"{dgd['metadata']['name']}-mpi-ssh"
    with running_operator(kube_cluster, config=cfg):
        created = client.create(DGD_V1BETA1, dgd)
        policy = wait_for(lambda: get(client, NETWORKPOLICIES, name, ns), WAIT, f"NetworkPolicy {ns}/{name}")
        assert policy["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
        assert policy["spec"]["podSelector"]["matchExpressions"][0]["values"] == ["TrtllmWorker"]
        ports = policy["spec"]["ingress"][1]["ports"]
        assert {"protocol": "TCP", "port": 2223, "endPort": 65535} in ports  # endPort kept by the API
        # edited by hand: the operator writes it back
        client.patch(NETWORKPOLICIES, name, {"spec": {"ingress": [{}]}}, ns)
        wait_for(
            lambda: (
                (get(client, NETWORKPOLICIES, name, ns) or {}).get("spec", {}).get("ingress")
                == policy["spec"]["ingress"]
            ),
            WAIT,
            "the policy restored",
        )
    # the operator's ServiceAccount may write NetworkPolicies anywhere (the chart's grant, cluster-wide)
    sa = f"system:serviceaccount:{ns}:{chart['release']}-dynamo-operator-controller-manager"
    review = k8s.AuthorizationV1Api(kube_cluster.api_client()).create_subject_access_review(
        {
            "spec": {
                "user": sa,
                "resourceAttributes": {
                    "group": "networking.k8s.io",
                    "resource": "networkpolicies",
                    "verb": "create",
                    "namespace": "some-team",
                },
            }
        }
    )
    assert review.status.allowed, review.status


# -- the DGDR profiling copier, as the profiling Job's ServiceAccount -------------------------------------


@pytest.fixture
def profiling_identity(kube_cluster, chart) -> Iterator[tuple[str, k8s.CoreV1Api]]:
    """A namespace with the dgdr-profiling-job ServiceAccount bound to the chart's profiling ClusterRole
    (as the operator binds it), and a CoreV1Api that impersonates it."""
    env = kube_cluster.env
    ns = f"{NS_PREFIX}-prof-{uuid.uuid4().hex[:6]}"
    role = chart["config"]["rbac"]["dgdrProfilingClusterRoleName"]
    subprocess.run(["kubectl", "create", "namespace", ns], env=env, check=True, capture_output=True)
    kubectl_apply(env, [rd.profiling_service_account(ns), rd.profiling_role_binding(ns, role)])
    api_client = kube_cluster.api_client()
    api_client.set_default_header("Impersonate-User", f"system:serviceaccount:{ns}:{rd.PROFILING_SA}")
    try:
        yield ns, k8s.CoreV1Api(api_client)
    finally:
        subprocess.run(["kubectl", "delete", "namespace", ns, "--wait=false"], env=env, capture_output=True)


def _run_copier(api, ns: str, directory: Path, pod_name: str | None = None):
    labels = {rd.LABEL_DGDR_NAME: "req", rd.LABEL_DGDR_NAMESPACE: ns}
    publisher = copier.Publisher(api, ns, rd.output_configmap_name("req"), labels)
    stop = threading.Event()
    result: dict = {}
    thread = threading.Thread(
        target=lambda: result.setdefault(
            "outcome", copier.run(api, directory, publisher, pod_name, 0.2, stop)
        ),
        daemon=True,
    )
    thread.start()
    return thread, stop, result, publisher


def test_the_copier_publishes_the_profilers_output_under_the_profiling_role(
    profiling_identity, tmp_path, client
):
    ns, api = profiling_identity
    thread, stop, result, publisher = _run_copier(api, ns, tmp_path)
    try:
        (tmp_path / rd.STATUS_FILE).write_text("phase: SweepingDecode\nmessage: tp=2\n")
        cm_name = publisher.name
        wait_for(
            lambda: ((get(client, CONFIGMAPS, cm_name, ns) or {}).get("data") or {}).get(rd.STATUS_FILE),
            WAIT,
            "the status published",
        )
        cm = get(client, CONFIGMAPS, cm_name, ns)
        assert cm["metadata"]["labels"] == {rd.LABEL_DGDR_NAME: "req", rd.LABEL_DGDR_NAMESPACE: ns}
        assert rd.sub_phase(cm) == ("SweepingDecode", "tp=2")  # what the DGDR controller reads
        (tmp_path / rd.FINAL_CONFIG).write_text("kind: DynamoGraphDeployment\n")
        thread.join(WAIT)
        assert result.get("outcome") == "final"
        data = get(client, CONFIGMAPS, cm_name, ns)["data"]
        assert set(data) == {rd.STATUS_FILE, rd.FINAL_CONFIG}
    finally:
        stop.set()
        thread.join(10)


def test_the_copier_stops_when_the_profiler_ended_without_a_result(
    kube_cluster, profiling_identity, tmp_path, client
):
    ns, api = profiling_identity
    # a pod nobody schedules, whose status says the profiler terminated (what the kubelet would report)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "profile-online-req-x", "namespace": ns},
        "spec": {
            "schedulerName": "nobody",
            "containers": [
                {"name": rd.PROFILER_CONTAINER, "image": "p:1"},
                {"name": rd.COPIER_CONTAINER, "image": "c:1"},
            ],
        },
    }
    client.create(PODS, pod, ns)
    terminated = {
        "name": rd.PROFILER_CONTAINER,
        "image": "p:1",
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "state": {"terminated": {"exitCode": 1, "reason": "Error"}},
    }
    k8s.CoreV1Api(kube_cluster.api_client()).patch_namespaced_pod_status(
        pod["metadata"]["name"], ns, {"status": {"containerStatuses": [terminated]}}
    )
    (tmp_path / rd.STATUS_FILE).write_text("phase: Failed\nmessage: out of memory\n")
    thread, stop, result, publisher = _run_copier(api, ns, tmp_path, pod["metadata"]["name"])
    try:
        thread.join(WAIT)
        assert result.get("outcome") == "profiler-ended"
        data = get(client, CONFIGMAPS, publisher.name, ns)["data"]
        assert set(data) == {rd.STATUS_FILE}  # what the profiler left is published; no final config
    finally:
        stop.set()
        thread.join(10)


# -- security.workloads.restrictedSecurityContext under the API server's own Pod Security admission -------


def _without_injected_security(template: dict) -> dict:
    """A Deployment's pod template as the operator renders it with the switch off (the documented
    ``fsGroup`` only, no container securityContext): what the switch adds, taken away again."""
    spec = copy.deepcopy(template["spec"])
    spec["securityContext"] = {"fsGroup": spec["securityContext"]["fsGroup"]}
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            c.pop("securityContext", None)
    return spec


def test_restricted_security_context_lets_graph_pods_into_an_enforced_restricted_namespace(
    kube_cluster, client, crds
):
    """With ``restrictedSecurityContext`` on, the ReplicaSets of a graph in a namespace enforcing the
    restricted Pod Security level create their pods (kube-controller-manager, admitted by the API
    server's Pod Security admission); the same pods without the injected settings are refused there."""
    env = kube_cluster.env
    ns = f"{NS_PREFIX}-psa-{uuid.uuid4().hex[:6]}"
    subprocess.run(["kubectl", "create", "namespace", ns], env=env, check=True, capture_output=True)
    label = "pod-security.kubernetes.io/enforce=restricted"
    subprocess.run(["kubectl", "label", "namespace", ns, label], env=env, check=True, capture_output=True)
    dgd = yaml.safe_load((REPO_ROOT / "examples" / "vllm-agg.yaml").read_text())
    dgd["metadata"]["namespace"] = ns
    # Grove off explicitly: the Deployment pathway is the one under test, whatever third-party CRDs another
    # test of the session has installed (with Grove's, auto-detection would render a PodCliqueSet)
    cfg = {
        "security": {"workloads": {"restrictedSecurityContext": True}},
        "orchestrators": {"grove": {"enabled": False}},
    }
    names = [f"{dgd['metadata']['name']}-{c['name'].lower()}" for c in dgd["spec"]["components"]]
    try:
        with running_operator(kube_cluster, config=cfg):
            client.create(DGD_V1BETA1, dgd)
            deployments = [
                wait_for(lambda n=n: get(client, DEPLOYMENTS, n, ns), WAIT, f"Deployment {ns}/{n}")
                for n in names
            ]
            pods = k8s.CoreV1Api(kube_cluster.api_client())
            for dep in deployments:
                selector = ",".join(f"{k}={v}" for k, v in dep["spec"]["selector"]["matchLabels"].items())
                wait_for(
                    lambda s=selector: pods.list_namespaced_pod(ns, label_selector=s).items,
                    WAIT,
                    f"a pod of {dep['metadata']['name']} admitted under enforce=restricted",
                )
        bare = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "switch-off", "namespace": ns},
            "spec": _without_injected_security(deployments[1]["spec"]["template"]),
        }
        with pytest.raises(k8s.ApiException) as refused:
            pods.create_namespaced_pod(ns, bare, dry_run="All")
        assert refused.value.status == 403 and "violates PodSecurity" in refused.value.body
    finally:
        subprocess.run(["kubectl", "delete", "namespace", ns, "--wait=false"], env=env, capture_output=True)
