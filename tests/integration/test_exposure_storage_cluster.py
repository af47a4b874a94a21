"""Ingress, VirtualService, PersistentVolumeClaim and the MPI SSH Secret on the real local control
plane ("cluster" profile), with the operator running as the chart's own ServiceAccount (impersonated), so
every write below also proves the chart grants it, and with the chart's own operator configuration.

* a v1alpha1 component's ``ingress`` becomes an Ingress owned by its DCD (host, class, TLS, labels,
  annotations), restored after a hand edit, updated when the graph changes, deleted when the ingress is
  turned off; the configuration's ``dynamo.ingress.*`` exposes a v1beta1 graph's frontend; the graph's
  ``Exposed`` condition lists the endpoints; ``componentType: main`` (the frontend's old name) reaches the
  DCD and the pods;
* the ingress policy: a stored graph's configuration snippet, once the configuration no longer allows
  it, withholds its Ingress (deleted) and the graph's ``Exposed`` condition says why;
* ``useVirtualService``: on a cluster without Istio's API the graph says so (``Exposed`` False) and still
  runs; with the (minimal, test-only) VirtualService CRD the VirtualService is created, owned, read back as
  rendered, updated and deleted;
* ``spec.pvcs`` with ``create: true``: the claim is created without an owner, mounted, grown when
  ``size`` grows, kept when the entry goes and when the graph is deleted; a claim the user made is never
  written;
* the MPI SSH Secret: each multinode TensorRT-LLM graph's namespace gets keys of its own (two namespaces
  never share one, nor the release namespace's), an earlier operator's copy of the shared Secret is
  migrated, a second pass and a restarted operator write nothing, the graph owns it, a hand edit of a
  derived entry is restored and a deleted Secret made again, released when the graph no longer needs it,
  collected with the graph; the user's own Secret of that name untouched.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import subprocess
import uuid
from collections.abc import Iterator

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.controllers import status as st
from dynamo_operator.controllers import store
from dynamo_operator.controllers.notices import REASON as NOTICE
from dynamo_operator.controllers.sync import INGRESSES, VIRTUALSERVICES, controller_ref
from dynamo_operator.runtime.client import DEPLOYMENTS, NAMESPACES, PVCS, SECRETS, custom
from kubernetes.client.exceptions import ApiException
from support import graphs, yamlc
from support.crds import wait_established
from support.crs import events_of
from support.dgd import apply_dgd, dgd_status, edit_object, get
from support.operator import Operator
from support.poll import wait_for

pytestmark = pytest.mark.cluster

NS_PREFIX = "p2x"
WAIT = 60.0
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.7.0"
CHART = REPO_ROOT / "charts" / "platform"
# only Istio's VirtualService CRD, not its DestinationRule: the operator detects Istio's kinds one by one
# (controllers/discovery.py) and caches only the served one, so it runs (its caches sync) with this alone
ISTIO_CRD = REPO_ROOT / "tests" / "fixtures" / "crds" / "istio" / "networking.istio.io_virtualservices.yaml"
DGD_V1BETA1 = custom("nvidia.com", "v1beta1", "dynamographdeployments", "DynamoGraphDeployment")
STORAGECLASSES = custom("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False)
PVS = custom("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
RBAC_KINDS = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
# what `helm install` creates with the RBAC that bounds it: the MPI copies' admission policy
POLICY_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")


def kubectl(env: dict, *args: str, stdin: str | None = None, check: bool = True) -> str:
    r = subprocess.run(["kubectl", *args], input=stdin, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 or not check, r.stderr
    return r.stdout


# -- the chart's identity and configuration ----------------------------------------------------------------


@pytest.fixture(scope="module")
def chart(kube_cluster) -> Iterator[dict]:
    """The chart rendered for a release in a fresh namespace: its RBAC applied (what `helm install` would
    create), its operator configuration, and an API client that acts as its operator ServiceAccount."""
    env = kube_cluster.env
    release = f"{NS_PREFIX}-{uuid.uuid4().hex[:6]}"
    namespace = f"{release}-sys"
    values = {
        "dynamo-operator": {
            "dynamo": {
                "ingress": {"enabled": True, "className": "nginx", "tlsSecretName": "wild-tls"},
                "ingressHostSuffix": "example.com",
            }
        }
    }
    r = subprocess.run(
        ["helm", "template", release, str(CHART), "-n", namespace, "-f", "-"],
        input=yaml.safe_dump(values),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    docs = [d for d in yamlc.load_all(r.stdout) if d]
    cm = next(
        d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-operator-config")
    )
    rbac = [d for d in docs if d["kind"] in RBAC_KINDS + POLICY_KINDS]
    # what the operator reads for each graph namespace's NATS account (the chart's default): the NATS CA and
    # the accounts file, as `helm install` would create them
    nats = [f"{release}-nats-admin", f"{release}-nats-accounts"]
    rbac += [d for d in docs if d["kind"] in ("Secret", "ConfigMap") and d["metadata"]["name"] in nats]
    created = []  # only the namespaces this fixture made are deleted (never kube-system)
    for ns in sorted({d["metadata"].get("namespace") for d in rbac} - {None}):
        if (
            subprocess.run(["kubectl", "create", "namespace", ns], env=env, capture_output=True).returncode
            == 0
        ):
            created.append(ns)
    kubectl(env, "apply", "-f", "-", stdin=yaml.safe_dump_all(rbac))
    sa = next(
        d for d in docs if d["kind"] == "ServiceAccount" and "controller-manager" in d["metadata"]["name"]
    )
    user = f"system:serviceaccount:{namespace}:{sa['metadata']['name']}"
    try:
        yield {
            "release": release,
            "namespace": namespace,
            "config": yaml.safe_load(cm["data"]["config.yaml"]),
            "user": user,
        }
    finally:
        kubectl(
            env, "delete", "--ignore-not-found", "--wait=false", "-f", "-", stdin=yaml.safe_dump_all(rbac)
        )
        for ns in created:
            kubectl(env, "delete", "namespace", ns, "--wait=false", check=False)


def operator_as(kube_cluster, chart: dict, config: dict | None = None) -> Operator:
    """The operator's controllers in this process (a context manager), every request made as the chart's
    ServiceAccount: its caches sync only if the chart grants the list/watch of everything it caches."""
    return Operator(kube_cluster, config if config is not None else chart["config"], user=chart["user"])


@pytest.fixture
def fresh_ns(client, crds) -> Iterator[str]:
    name = f"{NS_PREFIX}-{uuid.uuid4().hex[:8]}"
    client.create(NAMESPACES, {"metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiException):
        client.delete(NAMESPACES, name)


# -- graphs ------------------------------------------------------------------------------------------------


def alpha_graph(ns: str, name: str = "g", frontend: dict | None = None, **spec) -> dict:
    """A v1alpha1 Frontend (with ``frontend``'s fields) and a one-GPU vLLM Worker; ``spec`` adds fields."""
    services = {
        "Frontend": graphs.alpha_service(
            "frontend", image=IMAGE, command=["python3", "-m", "dynamo.frontend"], **(frontend or {})
        ),
        "Worker": graphs.alpha_service("worker", image=IMAGE, command=graphs.VLLM, gpus=1),
    }
    return graphs.dgd_v1alpha1(services, name=name, namespace=ns, backendFramework="vllm", **spec)


def stored_dgd(client, ns: str, name: str = "g") -> dict:
    return client.get(store.DGD, name, ns)


def edit_graph(client, ns: str, change, name: str = "g", res=store.DGD) -> None:
    """Change the graph's spec (stored v1alpha1 form, or ``res``'s version) with ``change(spec)``; retried
    on a 409 (the operator writes the graph's status and annotations meanwhile)."""
    edit_object(client, res, name, ns, lambda obj: change(obj["spec"]))


def exposed(client, ns: str, name: str = "g") -> dict:
    return st.condition(dgd_status(client, ns, name), st.EXPOSED) or {}


# -- Ingress -----------------------------------------------------------------------------------------------


INGRESS = {
    "enabled": True,
    "host": "api",
    "ingressControllerClassName": "traefik",
    "tls": {"secretName": "api-tls"},
    "labels": {"team": "llm"},
    "annotations": {"traefik.ingress.kubernetes.io/router.priority": "10"},
}


def test_a_v1alpha1_ingress_is_an_owned_ingress_kept_as_the_graph_says(kube_cluster, chart, client, fresh_ns):
    ns = fresh_ns
    graph = alpha_graph(ns, frontend={"ingress": INGRESS})
    graph["spec"]["services"]["Main"] = {
        "componentType": "main",
        "extraPodSpec": {"mainContainer": {"image": IMAGE, "command": ["sleep", "inf"]}},
    }
    with operator_as(kube_cluster, chart):
        apply_dgd(client, graph)
        ing = wait_for(lambda: get(client, INGRESSES, "g-frontend", ns), WAIT, "Ingress g-frontend")
        dcd = client.get(store.DCD, "g-frontend", ns)
        ref = controller_ref(ing)
        assert (ref["kind"], ref["name"], ref["uid"]) == (
            "DynamoComponentDeployment",
            "g-frontend",
            dcd["metadata"]["uid"],
        )
        assert dcd["spec"]["ingress"] == INGRESS  # the stored (v1alpha1) DCD holds it where a user would
        spec = ing["spec"]
        assert spec["ingressClassName"] == "traefik"
        rule = spec["rules"][0]
        assert rule["host"] == "api.example.com"  # the chart's dynamo.ingressHostSuffix
        assert rule["http"]["paths"][0]["backend"]["service"] == {
            "name": "g-frontend",
            "port": {"number": 8000},
        }
        assert spec["tls"] == [{"hosts": ["api.example.com"], "secretName": "api-tls"}]
        assert ing["metadata"]["labels"]["team"] == "llm"
        assert ing["metadata"]["annotations"]["traefik.ingress.kubernetes.io/router.priority"] == "10"
        cond = wait_for(
            lambda: exposed(client, ns).get("status") == "True" and exposed(client, ns), WAIT, "Exposed"
        )
        assert f"Frontend at https://api.example.com (Ingress {ns}/g-frontend)" in cond["message"]
        # componentType main reaches the DCD (stored as written) and the pods' labels
        main = wait_for(lambda: get(client, DEPLOYMENTS, "g-main", ns), WAIT, "Deployment g-main")
        assert main["spec"]["template"]["metadata"]["labels"]["nvidia.com/dynamo-component-type"] == "main"
        assert client.get(store.DCD, "g-main", ns)["spec"]["componentType"] == "main"

        # a hand edit is written back
        client.patch(INGRESSES, "g-frontend", {"spec": {"ingressClassName": "other"}}, ns)
        wait_for(
            lambda: get(client, INGRESSES, "g-frontend", ns)["spec"].get("ingressClassName") == "traefik",
            WAIT,
            "the Ingress restored",
        )
        # the graph changes: the Ingress follows
        edit_graph(client, ns, lambda s: s["services"]["Frontend"]["ingress"].update(host="chat"))
        wait_for(
            lambda: (
                get(client, INGRESSES, "g-frontend", ns)["spec"]["rules"][0]["host"] == "chat.example.com"
            ),
            WAIT,
            "the new host",
        )
        # turned off: the Ingress goes, and the condition names only Main, a frontend (componentType main,
        # upstream's old name of the type) that the chart's ingress settings expose by default
        edit_graph(client, ns, lambda s: s["services"]["Frontend"]["ingress"].update(enabled=False))
        wait_for(lambda: get(client, INGRESSES, "g-frontend", ns) is None, WAIT, "the Ingress deleted")

        def only_main() -> bool:
            message = (exposed(client, ns) or {}).get("message") or ""
            return "Main at https://g.example.com" in message and "Frontend at" not in message

        wait_for(only_main, WAIT, "an Exposed condition naming only Main")


SNIPPET = "nginx.ingress.kubernetes.io/configuration-snippet"


def test_the_ingress_policy_withholds_a_stored_graphs_injection(kube_cluster, chart, client, fresh_ns):
    """A graph stored before the policy (or before the configuration allowed less) stops injecting at once:
    with the snippet allowed its Ingress carries it; under the chart's default policy the operator deletes
    that Ingress and says why in the graph's Exposed condition, while the graph keeps running."""
    ns = fresh_ns
    ingress = {**INGRESS, "annotations": {SNIPPET: "more_set_headers 'X-Injected: 1';"}}
    allowing = copy.deepcopy(chart["config"])
    allowing["ingress"]["allowedAnnotations"] = [SNIPPET]
    with operator_as(kube_cluster, chart, allowing):
        apply_dgd(client, alpha_graph(ns, frontend={"ingress": ingress}))
        ing = wait_for(lambda: get(client, INGRESSES, "g-frontend", ns), WAIT, "Ingress g-frontend")
        assert ing["metadata"]["annotations"][SNIPPET].startswith("more_set_headers")
    assert chart["config"]["ingress"]["allowedAnnotations"] == []  # the chart's default
    with operator_as(kube_cluster, chart):
        wait_for(lambda: get(client, INGRESSES, "g-frontend", ns) is None, WAIT, "the Ingress withheld")
        cond = wait_for(
            lambda: exposed(client, ns).get("status") == "False" and exposed(client, ns), WAIT, "Exposed"
        )
        assert cond["reason"] == "IngressPolicy"
        assert cond["message"].startswith(
            f"Frontend: not exposed: spec.ingress.annotations[{SNIPPET}]: is a configuration snippet"
        )
        assert get(client, DEPLOYMENTS, "g-frontend", ns) is not None  # the graph still runs


def test_the_charts_ingress_settings_expose_a_v1beta1_frontend(kube_cluster, chart, client, fresh_ns):
    ns = fresh_ns
    graph = yaml.safe_load((REPO_ROOT / "examples" / "vllm-agg.yaml").read_text())
    graph["metadata"]["namespace"] = ns
    with operator_as(kube_cluster, chart):
        client.create(DGD_V1BETA1, graph)
        ing = wait_for(
            lambda: get(client, INGRESSES, "vllm-agg-frontend", ns), WAIT, "Ingress vllm-agg-frontend"
        )
        assert ing["spec"]["ingressClassName"] == "nginx"  # dynamo.ingress.className
        assert ing["spec"]["rules"][0]["host"] == "vllm-agg.example.com"  # the graph's name + the suffix
        assert ing["spec"]["tls"] == [{"hosts": ["vllm-agg.example.com"], "secretName": "wild-tls"}]
        assert get(client, INGRESSES, "vllm-agg-vllmdecodeworker", ns) is None  # frontends only


# -- VirtualService ----------------------------------------------------------------------------------------


VS_INGRESS = {
    "enabled": True,
    "host": "api",
    "useVirtualService": True,
    "virtualServiceGateway": "istio-system/gw",
    "ingressControllerClassName": "nginx",  # upstream ignores it beside useVirtualService: a warning Event
}


@contextlib.contextmanager
def istio_crd(kube_cluster) -> Iterator[None]:
    env = kube_cluster.env
    kubectl(env, "apply", "--server-side", "-f", str(ISTIO_CRD))
    try:
        wait_established(kube_cluster.api_client(), "virtualservices.networking.istio.io")
        yield
    finally:
        kubectl(env, "delete", "-f", str(ISTIO_CRD), "--ignore-not-found")
        wait_for(
            lambda: "networking.istio.io/" not in kubectl(env, "api-versions"),
            90,
            "networking.istio.io no longer served",
            interval=0.5,
        )


def test_a_virtual_service_where_istio_is_served_and_a_condition_where_it_is_not(
    kube_cluster, chart, client, fresh_ns
):
    ns = fresh_ns
    config = copy.deepcopy(chart["config"])
    with operator_as(kube_cluster, chart, config):  # no Istio API: reported, the graph still runs
        apply_dgd(client, alpha_graph(ns, frontend={"ingress": VS_INGRESS}))
        cond = wait_for(
            lambda: exposed(client, ns).get("status") == "False" and exposed(client, ns), WAIT, "Exposed"
        )
        assert cond["reason"] == "VirtualServiceUnavailable"
        assert "networking.istio.io" in cond["message"] and "useVirtualService" in cond["message"]
        wait_for(lambda: get(client, DEPLOYMENTS, "g-frontend", ns), WAIT, "the frontend's Deployment")
        assert get(client, INGRESSES, "g-frontend", ns) is None  # instead of an Ingress, not beside one
        noticed = wait_for(
            lambda: [m for _, r, m in events_of(client, ns, "g") if r == NOTICE], WAIT, "FieldHasNoEffect"
        )
        assert noticed == [
            "spec.components[0].ingress.ingressControllerClassName: has no effect: useVirtualService renders "
            "a VirtualService instead of an Ingress, so no Ingress controller is selected; remove it, or set "
            "useVirtualService: false for an Ingress"
        ]
    config["ingress"]["virtualServiceSupportsHTTPS"] = True
    with istio_crd(kube_cluster), operator_as(kube_cluster, chart, config):
        vs = wait_for(
            lambda: get(client, VIRTUALSERVICES, "g-frontend", ns), WAIT, "VirtualService g-frontend"
        )
        dcd = client.get(store.DCD, "g-frontend", ns)
        assert controller_ref(vs)["uid"] == dcd["metadata"]["uid"]
        assert vs["spec"] == {  # read back whole: every rendered field fits the schema (none pruned)
            "hosts": ["api.example.com"],
            "gateways": ["istio-system/gw"],
            "http": [
                {
                    "match": [{"uri": {"prefix": "/"}}],
                    "route": [{"destination": {"host": "g-frontend", "port": {"number": 8000}}}],
                }
            ],
        }
        cond = wait_for(
            lambda: exposed(client, ns).get("status") == "True" and exposed(client, ns), WAIT, "Exposed"
        )
        assert f"Frontend at https://api.example.com (VirtualService {ns}/g-frontend)" in cond["message"]
        edit_graph(
            client, ns, lambda s: s["services"]["Frontend"]["ingress"].update(virtualServiceGateway="gw2")
        )
        wait_for(
            lambda: get(client, VIRTUALSERVICES, "g-frontend", ns)["spec"]["gateways"] == ["gw2"],
            WAIT,
            "the new gateway",
        )
        edit_graph(client, ns, lambda s: s["services"]["Frontend"].pop("ingress"))
        wait_for(
            lambda: get(client, VIRTUALSERVICES, "g-frontend", ns) is None, WAIT, "the VirtualService deleted"
        )
        # the chart's ingress settings (an Ingress class) expose the frontend again, as an Ingress
        wait_for(lambda: get(client, INGRESSES, "g-frontend", ns), WAIT, "the configured Ingress")


# -- PersistentVolumeClaims --------------------------------------------------------------------------------


@pytest.fixture
def expandable_class(kube_cluster, client) -> Iterator[str]:
    """A StorageClass that allows expansion (no provisioner: volumes are made by hand and bound by the
    controller-manager's PV controller)."""
    name = f"{NS_PREFIX}-{uuid.uuid4().hex[:6]}"
    client.create(
        STORAGECLASSES,
        {
            "metadata": {"name": name},
            "provisioner": "kubernetes.io/no-provisioner",
            "allowVolumeExpansion": True,
            "volumeBindingMode": "Immediate",
        },
    )
    yield name
    with contextlib.suppress(ApiException):
        client.delete(STORAGECLASSES, name)


def test_claims_are_created_grown_and_never_deleted(kube_cluster, chart, client, fresh_ns, expandable_class):
    ns, sc = fresh_ns, expandable_class
    mine = {
        "metadata": {"name": "users-own"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": sc,
        },
    }
    client.create(PVCS, mine, ns)
    before = client.get(PVCS, "users-own", ns)["metadata"]["resourceVersion"]
    cache = {
        "name": "cache",
        "create": True,
        "storageClass": sc,
        "size": "1Gi",
        "volumeAccessMode": "ReadWriteOnce",
    }
    theirs = {**cache, "name": "users-own", "size": "3Gi"}  # listed with create: true, but the user's
    graph = alpha_graph(ns, pvcs=[cache, theirs])
    graph["spec"]["services"]["Worker"]["volumeMounts"] = [{"name": "cache", "mountPoint": "/cache"}]
    pv = f"{ns}-cache"
    client.create(
        PVS,
        {
            "metadata": {"name": pv},
            "spec": {
                "capacity": {"storage": "5Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": sc,
                "persistentVolumeReclaimPolicy": "Retain",
                "hostPath": {"path": f"/tmp/{pv}"},
                "claimRef": {"namespace": ns, "name": "cache"},
            },
        },
    )
    try:
        with operator_as(kube_cluster, chart):
            apply_dgd(client, graph)
            pvc = wait_for(lambda: get(client, PVCS, "cache", ns), WAIT, "the claim")
            assert "ownerReferences" not in pvc["metadata"]  # its data never goes with the graph
            assert pvc["metadata"]["labels"]["nvidia.com/dynamo-graph-deployment-name"] == "g"
            assert pvc["spec"]["storageClassName"] == sc and pvc["spec"]["accessModes"] == ["ReadWriteOnce"]
            dep = wait_for(lambda: get(client, DEPLOYMENTS, "g-worker", ns), WAIT, "the worker's Deployment")
            volumes = dep["spec"]["template"]["spec"]["volumes"]
            assert {"name": "cache", "persistentVolumeClaim": {"claimName": "cache"}} in volumes
            wait_for(lambda: get(client, PVCS, "cache", ns)["status"].get("phase") == "Bound", WAIT, "bound")
            # grown when the graph asks for more
            edit_graph(client, ns, lambda s: s["pvcs"][0].update(size="2Gi"))
            wait_for(
                lambda: get(client, PVCS, "cache", ns)["spec"]["resources"]["requests"]["storage"] == "2Gi",
                WAIT,
                "the claim grown",
            )
            # the entry goes: the claim stays
            edit_graph(client, ns, lambda s: s.pop("pvcs"))
            gen = stored_dgd(client, ns)["metadata"]["generation"]
            wait_for(
                lambda: dgd_status(client, ns).get("observedGeneration") == gen, WAIT, "the change observed"
            )
            assert get(client, PVCS, "cache", ns) is not None
            # the graph goes: its DCDs are collected, the claim stays
            client.delete(store.DGD, "g", ns)
            wait_for(
                lambda: get(client, store.DCD, "g-worker", ns) is None, WAIT, "the graph's DCDs collected"
            )
            assert get(client, PVCS, "cache", ns) is not None
        # the user's claim was never written (and not grown to the 3Gi the graph listed)
        assert client.get(PVCS, "users-own", ns)["metadata"]["resourceVersion"] == before
    finally:
        with contextlib.suppress(ApiException):
            client.delete(PVS, pv)


# -- the MPI SSH Secret ------------------------------------------------------------------------------------


def trtllm_graph(ns: str, name: str = "trtllm-multinode") -> dict:
    doc = yaml.safe_load((REPO_ROOT / "examples" / "trtllm-multinode.yaml").read_text())
    doc["metadata"] = {"name": name, "namespace": ns}
    return doc


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


MPI_LABELS = {"app.kubernetes.io/managed-by": "dynamo-operator", "nvidia.com/dynamo-mpi-ssh-secret": "true"}
MPI_KEYS = ("private.key", "private.key.pub", "authorized_keys", "host.key", "host.key.pub", "known_hosts")


def _keys_of(client, ns: str, name: str) -> dict | None:
    """The Secret's data once it holds keys made for ``ns`` (the mark the operator sets), else None."""
    secret = get(client, SECRETS, name, ns)
    annotations = ((secret or {}).get("metadata") or {}).get("annotations") or {}
    if annotations.get("nvidia.com/dynamo-mpi-ssh-keys-for") != ns:
        return None
    return secret["data"]


def _an_earlier_operators_copy(client, ns: str, home: str, name: str, original: dict) -> None:
    """What the operator before issue 30 left in a graph namespace: a copy of the shared Secret."""
    body = {
        "metadata": {
            "name": name,
            "labels": dict(MPI_LABELS),
            "annotations": {"nvidia.com/dynamo-copied-from": f"{home}/{name}"},
        },
        "type": "Opaque",
        "data": dict(original["data"]),
    }
    client.create(SECRETS, body, ns)


def _graphs_settle(client, graphs: list[tuple[str, str]], bump: bool) -> None:
    """Each graph's pass has run since now: its spec changed (``bump``: the frontend's replicas), then its
    observedGeneration caught up."""
    for ns, graph_name in graphs:
        if bump:
            edit_graph(
                client,
                ns,
                lambda s: s["components"][0].update(replicas=3 - s["components"][0]["replicas"]),
                graph_name,
                DGD_V1BETA1,
            )
        gen = client.get(DGD_V1BETA1, graph_name, ns)["metadata"]["generation"]
        wait_for(
            lambda ns=ns, n=graph_name, g=gen: dgd_status(client, ns, n).get("observedGeneration") == g,
            WAIT,
            f"{ns}/{graph_name} reconciled",
        )


def _own_keys_follow_their_secret(client, ns: str, name: str, graph_uid: str) -> None:
    """Owned by the graph (not as controller); a derived entry edited by hand is restored from the private
    keys (same keys); the Secret deleted by hand is made again with new keys."""
    secret = client.get(SECRETS, name, ns)
    refs = secret["metadata"]["ownerReferences"]
    assert [(r["kind"], r["uid"], r.get("controller")) for r in refs] == [
        ("DynamoGraphDeployment", graph_uid, None)
    ]
    keys = secret["data"]
    client.patch(SECRETS, name, {"data": {"known_hosts": b64("* ssh-rsa bogus")}}, ns)
    wait_for(
        lambda: (_keys_of(client, ns, name) or {}).get("known_hosts") == keys["known_hosts"], WAIT, "restored"
    )
    assert _keys_of(client, ns, name) == keys
    client.delete(SECRETS, name, ns)
    again = wait_for(lambda: _keys_of(client, ns, name), WAIT, "made again")
    assert again["private.key"] != keys["private.key"] and again["host.key"] != keys["host.key"]


def _secret_goes_with_its_last_user(client, ns: str, name: str) -> None:
    """No longer multinode: the graph lets go and the Secret is deleted; multinode again, then the graph
    deleted: the garbage collector takes the Secret along."""

    def single_node(spec: dict) -> None:
        for comp in spec["components"]:
            comp.pop("multinode", None)

    edit_graph(client, ns, single_node, "trtllm-multinode", DGD_V1BETA1)
    wait_for(lambda: get(client, SECRETS, name, ns) is None, WAIT, "the Secret deleted")
    # multinode again, then the graph deleted: the garbage collector takes the Secret along
    edit_graph(client, ns, lambda s: s.update(trtllm_graph(ns)["spec"]), "trtllm-multinode", DGD_V1BETA1)
    wait_for(lambda: _keys_of(client, ns, name), WAIT, "the Secret again")
    client.delete(DGD_V1BETA1, "trtllm-multinode", ns)
    # (the garbage collector takes its time here: 18 s measured on an idle machine)
    wait_for(lambda: get(client, SECRETS, name, ns) is None, 3 * WAIT, "the Secret collected with the graph")


def _namespaces(client, base: str, *suffixes: str) -> list[str]:
    made = [f"{base}-{s}" for s in suffixes]
    for ns in made:
        client.create(NAMESPACES, {"metadata": {"name": ns}})
    return made


def test_each_namespace_gets_mpi_keys_of_its_own(kube_cluster, chart, client, fresh_ns):
    """Issue 30: two graph namespaces get different keys, neither the release namespace's; an earlier
    operator's copy of the shared Secret is migrated to keys of its own; a second pass, and a restarted
    operator, change nothing (resourceVersions equal); the user's own Secret of that name is never written.
    The operator runs as the chart's ServiceAccount under its admission policy."""
    home, name = chart["namespace"], chart["config"]["mpi"]["sshSecretName"]
    config = copy.deepcopy(chart["config"])
    assert config["mpi"]["sshSecretNamespace"] == home and config["mpi"]["sshSecretCopy"] is True
    config["orchestrators"] = {"grove": {"enabled": False}}  # no LWS either: the DCDs fail, the graph goes on
    original = {"metadata": {"name": name}, "type": "Opaque", "data": {"private.key": b64("shared")}}
    with contextlib.suppress(ApiException):
        client.create(SECRETS, original, home)
    original = client.get(SECRETS, name, home)
    ns_a, (ns_b, ns_c) = fresh_ns, _namespaces(client, fresh_ns, "b", "c")
    _an_earlier_operators_copy(client, ns_a, home, name, original)
    users = {"metadata": {"name": name}, "type": "Opaque", "data": {"private.key": b64("theirs")}}
    users_rv = client.create(SECRETS, users, ns_c)["metadata"]["resourceVersion"]
    graphs = [(ns, "trtllm-multinode") for ns in (ns_a, ns_b, ns_c)]
    try:
        with operator_as(kube_cluster, chart, config):
            uid = {
                ns: client.create(DGD_V1BETA1, trtllm_graph(ns))["metadata"]["uid"]
                for ns in (ns_a, ns_b, ns_c)
            }
            a = wait_for(lambda: _keys_of(client, ns_a, name), WAIT, "the copy migrated to keys of its own")
            b = wait_for(lambda: _keys_of(client, ns_b, name), WAIT, "keys made for the second namespace")
            assert sorted(a) == sorted(b) == sorted(MPI_KEYS)
            assert all(a[k] != b[k] for k in MPI_KEYS)  # nothing shared between the two namespaces
            assert original["data"]["private.key"] not in (a["private.key"], b["private.key"])
            migrated = client.get(SECRETS, name, ns_a)["metadata"]
            assert "nvidia.com/dynamo-copied-from" not in migrated.get("annotations", {})
            _graphs_settle(client, graphs, bump=False)
            versions = {
                ns: client.get(SECRETS, name, ns)["metadata"]["resourceVersion"] for ns in (ns_a, ns_b)
            }
            _graphs_settle(client, graphs, bump=True)  # a second pass of each graph: nothing written
            assert {
                ns: client.get(SECRETS, name, ns)["metadata"]["resourceVersion"] for ns in versions
            } == versions
        with operator_as(kube_cluster, chart, config):  # a new operator, its caches empty: keys kept
            _graphs_settle(client, graphs, bump=True)
            assert {
                ns: client.get(SECRETS, name, ns)["metadata"]["resourceVersion"] for ns in versions
            } == versions
            assert client.get(SECRETS, name, ns_c)["metadata"]["resourceVersion"] == users_rv  # the user's
            assert client.get(SECRETS, name, home)["data"] == original["data"]  # never written either
            _own_keys_follow_their_secret(client, ns_b, name, uid[ns_b])
            _secret_goes_with_its_last_user(client, ns_a, name)
    finally:
        for ns in (ns_b, ns_c):
            with contextlib.suppress(ApiException):
                client.delete(NAMESPACES, ns)
        with contextlib.suppress(ApiException):
            client.delete(SECRETS, name, home)


def test_the_copy_grant_names_the_secret(kube_cluster, chart):
    """What the chart grants for the namespaces' MPI SSH Secrets: create anywhere (Kubernetes cannot narrow
    create by name), list/watch/update/delete on that one name (no Secret of another name can be deleted),
    no get (they are read from their cache)."""
    from kubernetes import client as k8s

    api = k8s.AuthorizationV1Api(kube_cluster.api_client())
    name = chart["config"]["mpi"]["sshSecretName"]

    def allowed(verb: str, secret: str | None, namespace: str = "team-z") -> bool:
        attrs = {"resource": "secrets", "verb": verb, "namespace": namespace}
        if secret:
            attrs["name"] = secret
        review = api.create_subject_access_review(
            {"spec": {"user": chart["user"], "resourceAttributes": attrs}}
        )
        return bool(review.status.allowed)

    assert allowed("create", None)
    assert all(allowed(v, name) for v in ("list", "watch", "update", "delete"))
    assert not allowed("get", name)  # the copies are read from their cache
    assert not allowed("delete", "some-other-secret")
    # cluster-wide, the ClusterRole's name-limited list/watch covers the release namespace too (the admission
    # policy refuses any write there); the Role that read the original there is gone (test_rbac_chart.py)
    assert allowed("watch", name, chart["namespace"])


def test_the_copy_create_is_bounded_by_the_admission_policy(kube_cluster, chart, client, fresh_ns):
    """RBAC grants create on any Secret; the chart's ValidatingAdmissionPolicy lets the operator's
    ServiceAccount write only a namespace's MPI SSH Secret: a token Secret, another name, the release
    namespace, missing labels, a foreign key, or the user's own Secret of that name are refused (dry runs,
    as the operator)."""
    from kubernetes import client as k8s

    name = chart["config"]["mpi"]["sshSecretName"]
    api = kube_cluster.api_client()
    api.set_default_header("Impersonate-User", chart["user"])
    core = k8s.CoreV1Api(api)
    labels = {"app.kubernetes.io/managed-by": "dynamo-operator", "nvidia.com/dynamo-mpi-ssh-secret": "true"}

    def secret(secret_name: str = name, **extra) -> dict:
        body = {"metadata": {"name": secret_name, "labels": dict(labels)}, "type": "Opaque"}
        body["data"] = {"private.key": b64("k")}
        for key, value in extra.items():
            body[key] = value
        return body

    def status(call) -> tuple[int, str]:
        try:
            call()
            return 200, ""
        except ApiException as e:
            return e.status, str(e.body)

    def create(body: dict, ns: str = fresh_ns) -> tuple[int, str]:
        return status(lambda: core.create_namespaced_secret(ns, body, dry_run="All"))

    token = secret(
        type="kubernetes.io/service-account-token",
        metadata={
            "name": name,
            "labels": labels,
            "annotations": {"kubernetes.io/service-account.name": "default"},
        },
    )
    token.pop("data")
    # the policy takes effect once the API server has loaded it: bounded wait on its first refusal
    wait_for(lambda: create(token)[0] == 403, WAIT, "the policy in force")
    refused = {
        "a service-account-token Secret": create(token),
        "another name": create(secret("other")),
        "in the release namespace": create(secret(), chart["namespace"]),
        "without the copy's labels": create({**secret(), "metadata": {"name": name}}),
        "with a key of its own": create(secret(data={"private.key": b64("k"), "token": b64("t")})),
    }
    for what, (code, body) in refused.items():
        assert code == 403 and "ValidatingAdmissionPolicy" in body, (what, code, body)
    assert create(secret()) == (200, "")  # a namespace's own MPI SSH Secret
    users = {"metadata": {"name": name}, "type": "Opaque", "data": {"private.key": b64("theirs")}}
    client.create(SECRETS, users, fresh_ns)  # the user's own Secret of that name: not to be taken over
    mine = client.get(SECRETS, name, fresh_ns)
    mine["metadata"]["labels"] = dict(labels)
    for what, call in {
        "update": lambda: core.replace_namespaced_secret(name, fresh_ns, mine, dry_run="All"),
        "delete": lambda: core.delete_namespaced_secret(name, fresh_ns, dry_run="All"),
    }.items():
        code, body = status(call)
        assert code == 403 and "ValidatingAdmissionPolicy" in body, (what, code, body)
