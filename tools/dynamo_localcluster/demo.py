"""`make demo`: a new user's first five minutes, end to end, on the local control plane.

Why the operator runs as a local process: kwok's fake nodes make Pods Running and Ready without
running any container, so an in-cluster operator Pod would look healthy while doing nothing. The
demo installs the chart with the operator Deployment scaled to zero, points the webhooks at
``https://127.0.0.1:<port>`` and runs ``dynamo-operator run`` on this machine against the cluster:
the same code, the same configuration (read back from the ConfigMap the chart installed).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .cluster import REPO_ROOT, LocalCluster, _pid_alive, _stop_pid, free_port

NAMESPACE = "dynamo-system"
DEMO_NAMESPACE = "dynamo-demo"
RELEASE = "dynamo-platform"
EXAMPLE = REPO_ROOT / "examples" / "vllm-disagg.yaml"
VALUES = REPO_ROOT / "examples" / "demo-values.yaml"
STEPS = 7


class DemoError(RuntimeError):
    pass


@dataclass
class Demo:
    dir: Path
    out: object = sys.stdout
    started: float = field(default_factory=time.monotonic)
    step_no: int = 0

    # ---- output --------------------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)  # type: ignore[arg-type]

    def step(self, text: str) -> float:
        self.step_no += 1
        self.say(f"\n[{self.step_no}/{STEPS}] {text}   (t+{time.monotonic() - self.started:.0f}s)")
        return time.monotonic()

    def detail(self, text: str) -> None:
        for line in text.rstrip().splitlines():
            self.say(f"      {line}")

    # ---- paths ---------------------------------------------------------------------------------
    @property
    def cluster_dir(self) -> Path:
        return self.dir / "cluster"

    @property
    def operator_log(self) -> Path:
        return self.dir / "operator.log"

    @property
    def state_file(self) -> Path:
        return self.dir / "demo.json"

    def run(self, argv: list[str], env: dict[str, str], check: bool = True, timeout: float = 300):
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)
        if check and r.returncode != 0:
            raise DemoError(f"`{' '.join(argv)}` failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
        return r

    # ---- the demo ------------------------------------------------------------------------------
    def up(self) -> None:
        self.down(quiet=True)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.say("dynamo-platform demo: install the platform on a local control plane and deploy a graph.")
        self.say(f"Everything runs on 127.0.0.1; state and logs live in {self.dir}.")

        t = self.step(
            "Local Kubernetes control plane: etcd, kube-apiserver, controller-manager, scheduler, kwok"
        )
        cluster = LocalCluster(self.cluster_dir, profile="cluster", nodes=2, tie_to_parent=False)
        cluster.start()
        env = cluster.env
        self.detail(f"ready in {time.monotonic() - t:.1f}s: 2 fake GPU nodes (8 x nvidia.com/gpu each)")
        self.detail(f"export KUBECONFIG={cluster.kubeconfig}")

        webhook_port = free_port()
        health_port, metrics_port = free_port(), free_port()
        self.state_file.write_text(json.dumps({"webhookPort": webhook_port}))
        url_base = f"https://127.0.0.1:{webhook_port}"
        chart_args = [
            "-n",
            NAMESPACE,
            "-f",
            str(VALUES),
            "--set",
            f"dynamo-operator.webhook.clientConfigURL={url_base}",
        ]

        self.step(f"Preflight: helm dynamo check preflight -n {NAMESPACE} -f examples/demo-values.yaml")
        r = self.run(
            ["helm", "dynamo", "check", "preflight", "--create-namespace", *chart_args], env, check=False
        )
        self.detail(r.stdout)
        if r.returncode != 0:
            raise DemoError(f"preflight blocked the install:\n{r.stdout}{r.stderr}")

        t = self.step(
            f"helm install {RELEASE} charts/platform -n {NAMESPACE} (CRDs, webhooks, RBAC, NATS, etcd)"
        )
        self.run(
            [
                "helm",
                "install",
                RELEASE,
                str(REPO_ROOT / "charts" / "platform"),
                "--create-namespace",
                "--wait",
                "--timeout",
                "300s",
                *chart_args,
            ],
            env,
        )
        self.detail(f"installed in {time.monotonic() - t:.1f}s")
        r = self.run(["kubectl", "get", "crd,statefulset,deploy,svc", "-n", NAMESPACE, "-o", "name"], env)
        names = r.stdout.split()
        crds = [n for n in names if n.startswith("customresourcedefinition") and n.endswith("nvidia.com")]
        self.detail(
            f"{len(crds)} Dynamo CRDs; " + ", ".join(n for n in names if not n.startswith("customres"))
        )

        t = self.step("Operator: dynamo-operator run, as a local process against the cluster")
        self.detail("(kwok's fake nodes run no containers, so the in-cluster operator Deployment is scaled")
        self.detail(f" to 0 and the webhooks call this process at {url_base})")
        config = self.dir / "operator-config.yaml"
        cm = self.run(
            [
                "kubectl",
                "get",
                "configmap",
                "-n",
                NAMESPACE,
                "-l",
                "app.kubernetes.io/name=dynamo-operator",
                "-o",
                "json",
            ],
            env,
        )
        config.write_text(_operator_config(json.loads(cm.stdout), NAMESPACE))
        op_env = {**env, "POD_NAMESPACE": NAMESPACE, "POD_NAME": "dynamo-demo-operator"}
        argv = [
            str(REPO_ROOT / ".venv" / "bin" / "dynamo-operator"),
            "run",
            f"--kubeconfig={cluster.kubeconfig}",
            f"--config={config}",
            "--no-leader-elect",
            f"--health-probe-bind-address=127.0.0.1:{health_port}",
            f"--metrics-bind-address=127.0.0.1:{metrics_port}",
            "--webhook-host=127.0.0.1",
            f"--webhook-port={webhook_port}",
            f"--webhook-url-base={url_base}",
        ]
        with open(self.operator_log, "ab") as log:
            proc = subprocess.Popen(
                argv, env=op_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        (self.dir / "operator.pid").write_text(str(proc.pid))
        _wait(
            lambda: _http_ok(f"http://127.0.0.1:{health_port}/readyz"),
            120,
            "the operator's /readyz",
            alive=lambda: proc.poll() is None,
            log=self.operator_log,
        )
        self.detail(f"ready in {time.monotonic() - t:.1f}s; log: {self.operator_log}")
        self.detail(
            f"health http://127.0.0.1:{health_port}/readyz, metrics https://127.0.0.1:{metrics_port}/metrics"
        )

        self.step(f"kubectl apply -f examples/{EXAMPLE.name} -n {DEMO_NAMESPACE}")
        self.run(["kubectl", "create", "namespace", DEMO_NAMESPACE], env)
        r = self.run(["kubectl", "apply", "-n", DEMO_NAMESPACE, "-f", str(EXAMPLE)], env)
        self.detail(r.stdout)
        name = yaml.safe_load(EXAMPLE.read_text())["metadata"]["name"]

        t = self.step(f"Waiting for DynamoGraphDeployment {name} to become ready")
        last = None
        deadline = time.monotonic() + 180
        dgd: dict = {}
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise DemoError(f"the operator exited ({proc.returncode}); see {self.operator_log}")
            r = self.run(
                ["kubectl", "get", "dgd", name, "-n", DEMO_NAMESPACE, "-o", "json"], env, check=False
            )
            if r.returncode == 0:
                dgd = json.loads(r.stdout)
                line = _progress(dgd)
                if line != last:
                    self.detail(f"+{time.monotonic() - t:5.1f}s  {line}")
                    last = line
                if (dgd.get("status") or {}).get("state") == "successful":
                    break
            time.sleep(0.5)
        else:
            raise DemoError(f"{name} did not become ready in 180s: {last}; see {self.operator_log}")

        self.step("What is there now")
        r = self.run(["kubectl", "get", "dgd,dcd,deploy,svc,pods", "-n", DEMO_NAMESPACE], env)
        self.detail(r.stdout)
        ready = next(
            (c for c in (dgd.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), {}
        )
        self.detail(f"Ready={ready.get('status')} reason={ready.get('reason')}: {ready.get('message')}")
        self.say("")
        self.say(f"Done in {time.monotonic() - self.started:.0f}s. Try next:")
        hints = [
            (f"export KUBECONFIG={cluster.kubeconfig}", ""),
            (f"kubectl get dgd -n {DEMO_NAMESPACE}", "state and readiness"),
            (f"kubectl describe dgd {name} -n {DEMO_NAMESPACE}", "conditions and events"),
            (f"kubectl edit dgd {name} -n {DEMO_NAMESPACE}", "change a component's replicas"),
            (f".venv/bin/dynamo-operator render -f examples/{EXAMPLE.name}", "preview, no cluster needed"),
            (f"tail -f {self.operator_log}", "the operator's JSON logs"),
            ("make demo-down", "stop everything"),
        ]
        width = max(len(cmd) for cmd, _ in hints[1:])
        for cmd, why in hints:
            self.say(f"  {cmd:<{width}}  # {why}" if why else f"  {cmd}")

    def down(self, quiet: bool = False) -> None:
        pid_file = self.dir / "operator.pid"
        if pid_file.exists():
            pid = int(pid_file.read_text().strip() or 0)
            if pid and _pid_alive(pid):
                _stop_pid(pid, None)
            pid_file.unlink()
        cluster = LocalCluster.from_state(self.cluster_dir)
        if cluster is not None:
            cluster.stop()
            if not quiet:
                self.say("demo stopped: operator and local control plane are down")
        elif not quiet:
            self.say("no demo running")


def _operator_config(configmaps: dict, where: str) -> str:
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


def _progress(dgd: dict) -> str:
    status = dgd.get("status") or {}
    parts = [f"state={status.get('state', '-'):<12}"]
    for comp, st in sorted((status.get("components") or {}).items()):
        parts.append(f"{comp} {st.get('readyReplicas', 0) or 0}/{st.get('replicas', 0) or 0}")
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    if ready:
        parts.append(f"Ready={ready.get('status')}")
    return "  ".join(parts)


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as r:
        return r.status == 200


def _wait(check, timeout: float, what: str, alive=lambda: True, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            raise DemoError(f"process exited while waiting for {what}:\n{tail}")
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.3)
    raise DemoError(f"timed out after {timeout:.0f}s waiting for {what}" + (f"; see {log}" if log else ""))


def main(directory: Path, down: bool) -> int:
    demo = Demo(directory)
    if down:
        demo.down()
        return 0
    # Ctrl-C stops the demo cleanly instead of leaving half of it running.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        demo.up()
    except (DemoError, KeyboardInterrupt) as e:
        print(f"\ndemo failed: {e}\nstopping what it started (logs kept in {directory})", file=sys.stderr)
        demo.down(quiet=True)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(Path(os.environ.get("DEMO_DIR", REPO_ROOT / ".cache" / "demo")), "--down" in sys.argv))
