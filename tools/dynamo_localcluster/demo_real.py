"""The demo on the real node: everything runs for real, and it ends with the chat completion a Dynamo graph
deployed by our operator answers.

The control plane with a real kubelet node (``node`` profile: its local-path-provisioner and default
StorageClass) and the images ``make images`` built imported into its containerd; the chart installed on its
defaults, NATS and etcd on (from the images built from their Go modules, their claims Bound), the operator
running as Pods from its image (its hook Jobs as Jobs, its webhooks behind its Service);
``examples/mocker-etcd.yaml`` deployed by the operator on the node, its frontend finding its worker through
the bundled etcd; then ``POST /v1/chat/completions`` to the frontend Service, whose JSON answer is the demo's
last output.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.request
from dataclasses import dataclass

from dynamo_operator.render.etcdaccess import key_root
from dynamo_operator.runtime.etcdadmin import AdminCredentials, EtcdAdmin

from .cluster import REPO_ROOT, LocalCluster
from .demo import DEMO_NAMESPACE, NAMESPACE, RELEASE, Demo, DemoError, wait
from .realnode import layout, storage
from .realnode.node import PLATFORM_IMAGES, built_image, chart_values_args

EXAMPLE = REPO_ROOT / "examples" / "mocker-etcd.yaml"
OPERATOR_SELECTOR = "app.kubernetes.io/name=dynamo-operator,app.kubernetes.io/component=manager"
ETCD_SERVICE_NAME = f"{RELEASE}-etcd.{NAMESPACE}.svc"  # a name the etcd server's certificate carries
REQUEST = {"model": "tiny", "messages": [{"role": "user", "content": "Hello!"}], "max_tokens": 8}


@dataclass
class RealDemo(Demo):
    steps: int = 9

    def up(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.say("dynamo-platform demo: install the platform and run a real Dynamo graph on a local node.")
        self.say("real node: containers run here (root, on a bridge with no way out of this machine).")
        self.say(f"State and logs live in {self.dir}.")
        cluster = self.start_cluster()
        env = cluster.env
        chart_args = ["-n", NAMESPACE, *chart_values_args()]
        self.preflight(env, chart_args)
        self.helm_install_real(cluster, chart_args)
        self.bundled_services(env)
        self.operator_pods(env)
        name = self.apply_graph(env, EXAMPLE)
        dgd = self.wait_graph(env, name, 420, lambda: None)
        self.show(env, dgd)
        answer = self.chat(cluster, name)
        self.finish(cluster, name)
        self.say("")
        self.say(json.dumps(answer, indent=2))

    def start_cluster(self) -> LocalCluster:
        t = self.step("Local control plane and a real node: containerd, kubelet, kube-proxy (+ kwok)")
        images = [built_image(recipe) for recipe in PLATFORM_IMAGES]
        cluster = LocalCluster(
            self.cluster_dir,
            profile="node",
            nodes=2,
            tie_to_parent=False,
            node_images=[(i.ref, i.archive) for i in images],
        )
        cluster.start(timeout=300)
        took = time.monotonic() - t
        self.detail(f"ready in {took:.1f}s: node {layout.NODE_NAME} ({layout.NODE_IP}) and 2 fake GPU nodes")
        for what, seconds in cluster.node.timings.items():  # type: ignore[union-attr]
            self.detail(f"  {what}: {seconds:.1f}s")
        self.detail(f"export KUBECONFIG={cluster.kubeconfig}")
        return cluster

    def helm_install_real(self, cluster: LocalCluster, chart_args: list[str]) -> None:
        """``helm install --wait`` on the chart's defaults, watching the claims: one that will never bind
        stops the install at once and names itself (instead of the whole install timeout)."""
        t = self.step(
            f"helm install {RELEASE} charts/platform -n {NAMESPACE} (NATS, etcd, CRDs, webhooks, hooks)"
        )
        argv = ["helm", "install", RELEASE, str(REPO_ROOT / "charts" / "platform"), "--create-namespace"]
        argv += ["--wait", "--timeout", "420s", *chart_args]
        try:
            with cluster.api_client() as api:
                r = storage.run_watching_claims(argv, cluster.env, api, NAMESPACE, timeout=480)
        except storage.ClaimError as e:
            raise DemoError(f"the install cannot finish: {e}") from e
        if r.returncode != 0:
            raise DemoError(f"`{' '.join(argv)}` failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
        self.detail(f"installed in {time.monotonic() - t:.1f}s")

    def bundled_services(self, env: dict[str, str]) -> None:
        self.step("NATS and etcd: real Pods of the images built from their Go modules, on Bound claims")
        selector = "app.kubernetes.io/name in (nats,etcd)"
        r = self.run(["kubectl", "get", "pods,pvc", "-n", NAMESPACE, "-l", selector, "-o", "wide"], env)
        self.detail(r.stdout)

    def operator_pods(self, env: dict[str, str]) -> None:
        self.step("Operator: real Pods of the image, probed by the kubelet, leading on the Lease")
        r = self.run(["kubectl", "get", "pods", "-n", NAMESPACE, "-l", OPERATOR_SELECTOR, "-o", "wide"], env)
        self.detail(r.stdout)
        lease = ["kubectl", "get", "lease", "dynamo.nvidia.com", "-n", "kube-system", "-o", "json"]
        holder = json.loads(self.run(lease, env).stdout)["spec"].get("holderIdentity")
        self.detail(f"leader: {holder}")

    def chat(self, cluster: LocalCluster, name: str) -> dict:
        self.step(f"POST /v1/chat/completions to the frontend Service {name}-frontend")
        from kubernetes import client

        with cluster.api_client() as api:
            svc = client.CoreV1Api(api).read_namespaced_service(f"{name}-frontend", DEMO_NAMESPACE)
        base = f"http://{svc.spec.cluster_ip}:8000"
        self.detail(f"curl {base}/v1/chat/completions -H 'Content-Type: application/json' \\")
        self.detail(f"  -d '{json.dumps(REQUEST)}'")
        wait(lambda: "tiny" in _models(base), 120, "the frontend to list the model")
        answer: dict = {}

        def ask() -> bool:
            answer.update(_chat(base))
            return answer.get("object") == "chat.completion"

        wait(ask, 60, "a chat completion")
        if not answer:
            raise DemoError("the frontend gave no completion")
        keys = etcd_keys(cluster)
        found = [k for k in keys if k.startswith(f"{key_root(DEMO_NAMESPACE)}v1/instances/") and name in k]
        self.detail(f"the frontend found its worker in the bundled etcd: {found[0] if found else keys}")
        return answer

    def finish(self, cluster: LocalCluster, name: str) -> None:
        self.say("")
        self.say(f"Done in {time.monotonic() - self.started:.0f}s. Try next:")
        self.hints(
            [
                (f"export KUBECONFIG={cluster.kubeconfig}", ""),
                (f"kubectl get dgd,pods -n {DEMO_NAMESPACE} -o wide", "the graph on the real node"),
                (f"kubectl logs -n {DEMO_NAMESPACE} deploy/{name}-mockerworker", "the engine serving"),
                (f"kubectl get pvc -n {NAMESPACE}", "NATS and etcd data on local-path volumes"),
                (
                    f"kubectl apply -n {DEMO_NAMESPACE} -f examples/mocker-kv-router.yaml",
                    "KV router, events over NATS",
                ),
                (f"kubectl logs -n {NAMESPACE} -l {OPERATOR_SELECTOR}", "the operator's JSON logs"),
                ("make demo-down", "stop everything; nothing stays behind"),
            ]
        )
        self.say("")
        self.say("The frontend's answer (the mocker simulates an engine: the token counts are real,")
        self.say("the text is not):")


def _models(base: str) -> list[str]:
    with urllib.request.urlopen(f"{base}/v1/models", timeout=10) as r:
        return [m["id"] for m in json.loads(r.read()).get("data", [])]


def _chat(base: str) -> dict:
    req = urllib.request.Request(
        f"{base}/v1/chat/completions",
        data=json.dumps(REQUEST).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def etcd_admin(cluster: LocalCluster) -> EtcdAdmin:
    """root in the bundled etcd (mutual TLS and RBAC on, the chart's defaults), with the operator's
    credentials (the Secret ``<release>-etcd-admin``), through the Service's ClusterIP; the server's
    certificate is checked against the Service's name."""
    from kubernetes import client

    with cluster.api_client() as api:
        core = client.CoreV1Api(api)
        svc = core.read_namespaced_service(f"{RELEASE}-etcd", NAMESPACE)
        data = core.read_namespaced_secret(f"{RELEASE}-etcd-admin", NAMESPACE).data or {}
    raw = {k: base64.b64decode(v) for k, v in data.items()}
    creds = AdminCredentials(
        ca=raw["ca.crt"], cert=raw["tls.crt"], key=raw["tls.key"], password=raw["password"].decode()
    )
    return EtcdAdmin(f"https://{ETCD_SERVICE_NAME}:2379", creds, connect_to=svc.spec.cluster_ip)


def etcd_keys(cluster: LocalCluster) -> list[str]:
    """Every key in the bundled etcd, as root sees them (each graph namespace's under ``ns/<namespace>/``)."""
    return etcd_admin(cluster).keys()
