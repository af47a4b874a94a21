"""The demo on kwok's fake nodes, for machines that cannot run the real node.

Why the operator runs as a local process here: kwok's fake nodes make Pods Running and Ready without running
any container, so an in-cluster operator Pod would look healthy while doing nothing. The demo installs the
chart with the operator Deployment scaled to zero, points the webhooks at ``https://127.0.0.1:<port>`` and
runs ``dynamo-operator run`` on this machine against the cluster: the same code, the same configuration (read
back from the ConfigMap the chart installed).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from dataclasses import dataclass

import yaml

from .cluster import REPO_ROOT, LocalCluster, free_port
from .demo import DEMO_NAMESPACE, NAMESPACE, Demo, DemoError, http_ok, wait

EXAMPLE = REPO_ROOT / "examples" / "vllm-disagg.yaml"
VALUES = REPO_ROOT / "examples" / "demo-values.yaml"


@dataclass
class KwokDemo(Demo):
    reason: str = ""

    def up(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.say("dynamo-platform demo: install the platform on a local control plane and deploy a graph.")
        self.say(f"kwok demo (fake nodes, no container runs): {self.reason}.")
        self.say(f"Everything runs on 127.0.0.1; state and logs live in {self.dir}.")
        cluster = self.start_cluster()
        env = cluster.env
        ports = {"webhook": free_port(), "health": free_port(), "metrics": free_port()}
        (self.dir / "demo.json").write_text(json.dumps({"webhookPort": ports["webhook"]}))
        url_base = f"https://127.0.0.1:{ports['webhook']}"
        chart_args = ["-n", NAMESPACE, "-f", str(VALUES)]
        chart_args += ["--set", f"dynamo-operator.webhook.clientConfigURL={url_base}"]
        self.preflight(env, chart_args)
        self.helm_install(env, chart_args)
        proc = self.start_operator(cluster, ports, url_base)
        name = self.apply_graph(env, EXAMPLE)

        def operator_alive() -> None:
            if proc.poll() is not None:
                raise DemoError(f"the operator exited ({proc.returncode}); see {self.operator_log}")

        dgd = self.wait_graph(env, name, 180, operator_alive)
        self.show(env, dgd)
        self.finish(cluster, name)

    def start_cluster(self) -> LocalCluster:
        t = self.step(
            "Local Kubernetes control plane: etcd, kube-apiserver, controller-manager, scheduler, kwok"
        )
        cluster = LocalCluster(self.cluster_dir, profile="cluster", nodes=2, tie_to_parent=False)
        cluster.start()
        self.detail(f"ready in {time.monotonic() - t:.1f}s: 2 fake GPU nodes (8 x nvidia.com/gpu each)")
        self.detail(f"export KUBECONFIG={cluster.kubeconfig}")
        return cluster

    def start_operator(self, cluster: LocalCluster, ports: dict[str, int], url: str) -> subprocess.Popen:
        t = self.step("Operator: dynamo-operator run, as a local process against the cluster")
        self.detail("(kwok's fake nodes run no containers, so the in-cluster operator Deployment is scaled")
        self.detail(f" to 0 and the webhooks call this process at {url})")
        env = cluster.env
        config = self.dir / "operator-config.yaml"
        selector = "app.kubernetes.io/name=dynamo-operator"
        cm = self.run(["kubectl", "get", "configmap", "-n", NAMESPACE, "-l", selector, "-o", "json"], env)
        config.write_text(operator_config(json.loads(cm.stdout), NAMESPACE))
        argv = [str(REPO_ROOT / ".venv" / "bin" / "dynamo-operator"), "run"]
        argv += [f"--kubeconfig={cluster.kubeconfig}", f"--config={config}", "--no-leader-elect"]
        argv += [f"--health-probe-bind-address=127.0.0.1:{ports['health']}"]
        argv += [f"--metrics-bind-address=127.0.0.1:{ports['metrics']}", "--webhook-host=127.0.0.1"]
        argv += [f"--webhook-port={ports['webhook']}", f"--webhook-url-base={url}"]
        op_env = {**env, "POD_NAMESPACE": NAMESPACE, "POD_NAME": "dynamo-demo-operator"}
        with open(self.operator_log, "ab") as log:
            proc = subprocess.Popen(
                argv, env=op_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        (self.dir / "operator.pid").write_text(str(proc.pid))
        ready = f"http://127.0.0.1:{ports['health']}/readyz"
        alive = lambda: proc.poll() is None  # noqa: E731
        wait(lambda: http_ok(ready), 120, "the operator's /readyz", alive, self.operator_log)
        self.detail(f"ready in {time.monotonic() - t:.1f}s; log: {self.operator_log}")
        self.detail(f"health {ready}, metrics https://127.0.0.1:{ports['metrics']}/metrics")
        return proc

    def finish(self, cluster: LocalCluster, name: str) -> None:
        self.say("")
        self.say(f"Done in {time.monotonic() - self.started:.0f}s. Try next:")
        render = f".venv/bin/dynamo-operator render -f examples/{EXAMPLE.name}"
        self.hints(
            [
                (f"export KUBECONFIG={cluster.kubeconfig}", ""),
                (f"kubectl get dgd -n {DEMO_NAMESPACE}", "state and readiness"),
                (f"kubectl describe dgd {name} -n {DEMO_NAMESPACE}", "conditions and events"),
                (f"kubectl edit dgd {name} -n {DEMO_NAMESPACE}", "change a component's replicas"),
                (render, "preview, no cluster needed"),
                (f"tail -f {self.operator_log}", "the operator's JSON logs"),
                ("make demo-down", "stop everything"),
            ]
        )


def operator_config(configmaps: dict, where: str) -> str:
    """The OperatorConfiguration the chart installed, so the local process runs with it."""
    for cm in configmaps.get("items", []):
        for value in (cm.get("data") or {}).values():
            with contextlib.suppress(yaml.YAMLError):
                doc = yaml.safe_load(value)
                if isinstance(doc, dict) and doc.get("kind") == "OperatorConfiguration":
                    return value
    raise DemoError(
        f"no ConfigMap labelled app.kubernetes.io/name=dynamo-operator in namespace {where} holds an "
        "OperatorConfiguration; check that the chart's operator is enabled (dynamo-operator.enabled) and "
        f"look with: kubectl get configmap -n {where} -l app.kubernetes.io/name=dynamo-operator -o yaml"
    )
