"""The DGD and DCD controllers on the real control plane ("cluster" profile: kube-controller-manager with
its garbage collector, the scheduler and kwok nodes, so Deployments get Pods that become Running and Ready).

The operator runs in-process (a Manager with ``controllers.setup``, leader election off, health and
metrics on 127.0.0.1).  DGDs and DCDs are read and written in the storage version (v1alpha1), which never
calls the conversion webhook.  Every wait is bounded.
"""

from __future__ import annotations

import contextlib
import copy
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from dynamo_operator.controllers import setup, store
from dynamo_operator.controllers.diff import first_difference
from dynamo_operator.render import RenderContext, names, render_all
from dynamo_operator.runtime.client import (
    DEPLOYMENTS,
    EVENTS,
    NAMESPACES,
    SERVICEACCOUNTS,
    SERVICES,
    ResourceClient,
    custom,
)
from dynamo_operator.runtime.informer import wait_until
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.runtime.settings import RuntimeSettings
from kubernetes.client.exceptions import ApiException

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
CRDS = custom("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False)
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0"
WAIT = 90.0


# -- fixtures ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(kube_cluster):
    return ResourceClient(kube_cluster.api_client())


@pytest.fixture(scope="module")
def crds(client, dynamo_crds):
    """The generated CRDs, served (incl. conversion) by the session's ``dynamo_crds`` fixture."""
    assert wait_until(lambda: _listable(client, store.DGD) and _listable(client, store.DCD), 30)
    beta = custom(store.GROUP, "v1beta1", store.DGD.plural, store.DGD.kind)
    assert wait_until(lambda: _listable(client, beta), 30)
    return dynamo_crds


def _listable(client, res) -> bool:
    try:
        client.list(res, limit=1)
        return True
    except ApiException:
        return False


@pytest.fixture
def ns(client, crds):
    name = f"ctl-{uuid.uuid4().hex[:8]}"
    client.create(NAMESPACES, {"metadata": {"name": name}})
    yield name
    with contextlib.suppress(ApiException):
        client.delete(NAMESPACES, name)


class Operator:
    """An in-process operator; ``writes`` counts every non-GET request it sends."""

    def __init__(self, kube_cluster):
        self.mgr = Manager(
            RuntimeSettings(
                metrics_bind_address="0",
                health_probe_bind_address="127.0.0.1:0",
                metrics_secure=False,
                leader_elect=False,
            ),
            kube_cluster.api_client(),
        )
        self.writes: list[tuple[str, str]] = []
        self.refused: list[tuple[str, str, int]] = []
        inner = self.mgr.client.request

        def counting(method, path, *a, **kw):
            # A write is a mutation the server accepted; a create refused as AlreadyExists (a cache
            # that had not seen the object yet) changes nothing and is recorded apart.
            try:
                out = inner(method, path, *a, **kw)
            except ApiException as e:
                if method != "GET":
                    self.refused.append((method, path, e.status))
                raise
            if method != "GET":
                self.writes.append((method, path))
            return out

        self.mgr.client.request = counting
        self.controllers = setup(self.mgr)

    def __enter__(self):
        self.mgr.start()
        assert self.mgr.wait_for_cache_sync(30)
        assert wait_until(lambda: all(c.running for c in self.controllers.values()), 30)
        return self

    def __exit__(self, *exc):
        self.mgr.stop()
        assert self.mgr.wait(30)

    def reconciles(self) -> int:
        return sum(c.reconciles for c in self.controllers.values())

    def idle(self, quiet: float = 2.0, timeout: float = 30.0) -> bool:
        """Wait until no reconcile ran for ``quiet`` seconds and the queues are empty."""
        deadline = time.monotonic() + timeout
        last, since = self.reconciles(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.2)
            now = self.reconciles()
            busy = any(c.queue is not None and len(c.queue) for c in self.controllers.values())
            if now != last or busy:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return True
        return False


@pytest.fixture
def operator(kube_cluster, crds):
    with Operator(kube_cluster) as op:
        yield op


# -- helpers -------------------------------------------------------------------------------------------------


def graph(ns: str, name: str = "g", decode_replicas: int = 2, planner: bool = True) -> dict:
    worker_cmd = ["python3", "-m", "dynamo.vllm"]
    comps = [
        {
            "name": "Frontend",
            "type": "frontend",
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
        },
        {
            "name": "VllmPrefillWorker",
            "type": "prefill",
            "podTemplate": {
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": IMAGE,
                            "command": [*worker_cmd, "--is-prefill-worker"],
                            "resources": {"limits": {"nvidia.com/gpu": "1"}},
                        }
                    ]
                }
            },
        },
        {
            "name": "VllmDecodeWorker",
            "type": "decode",
            "replicas": decode_replicas,
            "podTemplate": {
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": IMAGE,
                            "command": worker_cmd,
                            "resources": {"limits": {"nvidia.com/gpu": "1"}},
                        }
                    ]
                }
            },
        },
    ]
    if planner:
        comps.append(
            {
                "name": "Planner",
                "type": "planner",
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
            }
        )
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": names.DGD_KIND,
        "metadata": {"name": name, "namespace": ns},
        "spec": {"components": comps},
    }


def apply_dgd(client, dgd: dict) -> dict:
    wire = store.to_wire(dgd)
    md = dgd["metadata"]
    for _ in range(5):
        try:
            cur = client.get(store.DGD, md["name"], md["namespace"])
        except ApiException as e:
            if e.status != 404:
                raise
            return client.create(store.DGD, wire)
        cur["spec"] = wire["spec"]
        try:
            return client.replace(store.DGD, cur)
        except ApiException as e:
            if e.status != 409:
                raise
    raise AssertionError("could not update the DGD")


def get(client, res, name, ns):
    try:
        return client.get(res, name, ns)
    except ApiException as e:
        if e.status == 404:
            return None
        raise


def dgd_status(client, ns, name="g") -> dict:
    obj = get(client, store.DGD, name, ns)
    return store.to_internal(obj).get("status") or {} if obj else {}


def ready_condition(status: dict) -> dict:
    return next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})


def wait_successful(client, ns, name="g", generation=None, timeout=WAIT) -> dict:
    def ok():
        s = dgd_status(client, ns, name)
        return s.get("state") == "successful" and (
            generation is None or s.get("observedGeneration") == generation
        )

    assert wait_until(ok, timeout, interval=0.5), dgd_status(client, ns, name)
    return dgd_status(client, ns, name)


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


# -- tests ---------------------------------------------------------------------------------------------------


def test_graph_reaches_successful_with_documented_defaults(client, ns, operator):
    t0 = time.monotonic()
    dgd = graph(ns)
    created = apply_dgd(client, dgd)
    status = wait_successful(client, ns, generation=1)
    elapsed = time.monotonic() - t0
    ready = ready_condition(status)
    assert ready["status"] == "True" and ready["reason"] == "all_resources_are_ready", ready
    assert status["observedGeneration"] == created["metadata"]["generation"] == 1
    comps = status["components"]
    assert set(comps) == {"Frontend", "VllmPrefillWorker", "VllmDecodeWorker", "Planner"}
    assert comps["VllmDecodeWorker"]["readyReplicas"] == 2 and comps["VllmDecodeWorker"]["replicas"] == 2
    assert comps["Frontend"] == {
        "componentKind": "Deployment",
        "componentNames": ["g-frontend"],
        "runtimeNamespace": f"{ns}-g",
        "replicas": 1,
        "updatedReplicas": 1,
        "readyReplicas": 1,
        "availableReplicas": 1,
    }
    # what `dynamo-operator render` previews is what runs: every rendered field is live, owner refs are set
    preview = render_all(dgd, RenderContext())
    dgd_uid = created["metadata"]["uid"]
    for obj in preview:
        res = {"Deployment": DEPLOYMENTS, "Service": SERVICES, "ServiceAccount": SERVICEACCOUNTS}.get(
            obj["kind"], store.DCD
        )
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
        if obj["kind"] == "ServiceAccount":
            assert refs and not any(r.get("controller") for r in refs)
        else:
            assert refs[0]["controller"] and refs[0]["blockOwnerDeletion"]
        content = "spec" if "spec" in obj else None
        if content:
            assert first_difference(obj[content], live[content], content) is None
    # documented defaults on the live Deployments
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
    # DCD status and events
    dcd = store.to_internal(client.get(store.DCD, "g-vllmdecodeworker", ns))
    avail = next(c for c in dcd["status"]["conditions"] if c["type"] == "Available")
    assert avail["status"] == "True" and dcd["status"]["observedGeneration"] == dcd["metadata"]["generation"]

    def reasons():
        return {e.get("reason") for e in client.list(EVENTS, ns).get("items") or []}

    assert wait_until(
        lambda: {"CreateDynamoComponentDeployment", "CreateDeployment", "CreateService"} <= reasons(), 15
    ), reasons()
    # gauges
    assert wait_until(
        lambda: (
            operator.mgr.registry.get_sample_value(
                "dynamo_operator_resources_total",
                {"resource_type": names.DGD_KIND, "namespace": ns, "status": "successful"},
            )
            == 1
        ),
        20,
    )
    assert wait_until(
        lambda: (
            operator.mgr.registry.get_sample_value(
                "dynamo_operator_managed_pods_total", {"component_type": "decode", "namespace": ns}
            )
            == 2
        ),
        20,
    )
    print(f"graph successful after {elapsed:.1f}s")


def test_scale_remove_hand_edit_and_delete(client, ns, operator):
    apply_dgd(client, graph(ns))
    wait_successful(client, ns, generation=1)

    # scaling a component moves its Deployment and the status follows
    apply_dgd(client, graph(ns, decode_replicas=3))
    assert wait_until(lambda: client.get(DEPLOYMENTS, "g-vllmdecodeworker", ns)["spec"]["replicas"] == 3, 30)
    status = wait_successful(client, ns, generation=2)
    assert status["components"]["VllmDecodeWorker"]["readyReplicas"] == 3

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

    assert wait_until(restored, 30)
    # ... and so is a hand-edited Service
    svc = client.get(SERVICES, "g-frontend", ns)
    want_port = svc["spec"]["ports"][0]["port"]
    svc["spec"]["ports"][0]["port"] = 1
    client.replace(SERVICES, svc)
    assert wait_until(
        lambda: client.get(SERVICES, "g-frontend", ns)["spec"]["ports"][0]["port"] == want_port, 30
    )

    # removing a component deletes its DCD, and the garbage collector its Deployment, Service and account
    apply_dgd(client, graph(ns, decode_replicas=3, planner=False))
    assert wait_until(lambda: get(client, store.DCD, "g-planner", ns) is None, 30)
    assert wait_until(
        lambda: (
            get(client, DEPLOYMENTS, "g-planner", ns) is None
            and get(client, SERVICES, "g-planner", ns) is None
            and get(client, SERVICEACCOUNTS, names.PLANNER_SERVICE_ACCOUNT, ns) is None
        ),
        60,
    )
    status = wait_successful(client, ns, generation=3)
    assert "Planner" not in status["components"]

    # deleting the DGD removes everything through owner references (kube-controller-manager's GC)
    client.delete(store.DGD, "g", ns)
    assert wait_until(
        lambda: (
            not (client.list(store.DCD, ns).get("items") or [])
            and not (client.list(DEPLOYMENTS, ns).get("items") or [])
            and not [s for s in client.list(SERVICES, ns).get("items") or []]
        ),
        60,
    ), (client.list(store.DCD, ns).get("items"), client.list(DEPLOYMENTS, ns).get("items"))


def test_restarted_operator_makes_no_writes_for_converged_objects(client, ns, kube_cluster, crds):
    with Operator(kube_cluster) as first:
        apply_dgd(client, graph(ns))
        wait_successful(client, ns, generation=1)
        assert first.idle(quiet=3.0)
        converged = len(first.writes)
        time.sleep(2)
        assert first.writes[converged:] == []  # converged: nothing more while running either
    before = children_versions(client, ns)
    t0 = time.monotonic()
    with Operator(kube_cluster) as second:
        # every DGD and DCD in this namespace reconciled at least once, then quiet
        n_objects = 1 + len(component_names(graph(ns)))
        assert wait_until(lambda: second.reconciles() >= n_objects, 30)
        assert second.idle(quiet=3.0)
        restart_writes = list(second.writes)
    after = children_versions(client, ns)
    print(f"restart check took {time.monotonic() - t0:.1f}s; {second.reconciles()} reconciles")
    print(f"refused requests after the restart: {second.refused}")
    assert restart_writes == []
    assert after == before


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http_get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return 0, str(e)


def test_dynamo_operator_run_process(client, ns, kube_cluster, crds, tmp_path):
    """``dynamo-operator run`` registers the controllers itself (``controllers.setup``)."""
    health, metrics = _free_port(), _free_port()
    argv = [
        sys.executable,
        "-m",
        "dynamo_operator.cli",
        "run",
        "--kubeconfig",
        kube_cluster.kubeconfig,
        "--no-leader-elect",
        "--health-probe-bind-address",
        f"127.0.0.1:{health}",
        "--metrics-bind-address",
        f"127.0.0.1:{metrics}",
        "--metrics-insecure",
        "--no-webhooks",  # admission/conversion webhooks have their own tests
    ]
    log = tmp_path / "operator.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, env=kube_cluster.env, stdout=out, stderr=subprocess.STDOUT)
        try:
            assert wait_until(lambda: _http_get(f"http://127.0.0.1:{health}/readyz")[0] == 200, 30), (
                log.read_text()[-3000:]
            )
            small = graph(ns, name="solo")
            small["spec"]["components"] = small["spec"]["components"][:1]
            apply_dgd(client, small)
            wait_successful(client, ns, name="solo", generation=1)
            _, text = _http_get(f"http://127.0.0.1:{metrics}/metrics")
            assert (
                f'dynamo_operator_reconcile_total{{namespace="{ns}",resource_type="DynamoGraphDeployment"'
                in text
            )
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
    assert proc.returncode == 0, log.read_text()[-3000:]
