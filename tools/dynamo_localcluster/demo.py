"""`make demo`: a new user's first five minutes, end to end, on the local control plane.

Two paths, chosen by what this machine can do (``realnode.preflight``), announced in one line:

- **real node** (root, the kernel features, the tools built): the chart is installed for real, the operator
  runs as Pods from the image ``make image`` built, it deploys ``examples/mocker-agg.yaml`` (Dynamo's frontend
  and mocker engine) on the node, and the demo ends with the chat completion the frontend answers
  (``demo_real``).
- **kwok** (anywhere else): kwok's fake nodes make Pods Running and Ready without running any container, so
  the operator runs as a local process against the cluster and the demo ends with the graph ``successful``
  (``demo_kwok``).

This module holds what both share: output, commands, bounded waits, the state directory and ``--down``.
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .cluster import REPO_ROOT, LocalCluster, _pid_alive, _stop_pid

NAMESPACE = "dynamo-system"
DEMO_NAMESPACE = "dynamo-demo"
RELEASE = "dynamo-platform"


class DemoError(RuntimeError):
    pass


@dataclass
class Demo:
    """Output, commands and waits shared by both demo paths."""

    dir: Path
    out: object = sys.stdout
    started: float = field(default_factory=time.monotonic)
    step_no: int = 0
    steps: int = 7

    # ---- output --------------------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)  # type: ignore[arg-type]

    def step(self, text: str) -> float:
        self.step_no += 1
        self.say(f"\n[{self.step_no}/{self.steps}] {text}   (t+{time.monotonic() - self.started:.0f}s)")
        return time.monotonic()

    def detail(self, text: str) -> None:
        for line in text.rstrip().splitlines():
            self.say(f"      {line}")

    def hints(self, hints: list[tuple[str, str]]) -> None:
        width = max(len(cmd) for cmd, _ in hints[1:])
        for cmd, why in hints:
            self.say(f"  {cmd:<{width}}  # {why}" if why else f"  {cmd}")

    # ---- paths ---------------------------------------------------------------------------------
    @property
    def cluster_dir(self) -> Path:
        return self.dir / "cluster"

    @property
    def operator_log(self) -> Path:
        return self.dir / "operator.log"

    # ---- commands and waits --------------------------------------------------------------------
    def run(self, argv: list[str], env: dict[str, str], check: bool = True, timeout: float = 300):
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)
        if check and r.returncode != 0:
            raise DemoError(f"`{' '.join(argv)}` failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
        return r

    def preflight(self, env: dict[str, str], chart_args: list[str]) -> None:
        values = next((a for a in chart_args if a.endswith(".yaml")), "")
        self.step(f"Preflight: helm dynamo check preflight -n {NAMESPACE} -f {Path(values).name}")
        r = self.run(
            ["helm", "dynamo", "check", "preflight", "--create-namespace", *chart_args], env, check=False
        )
        self.detail(r.stdout)
        if r.returncode != 0:
            raise DemoError(f"preflight blocked the install:\n{r.stdout}{r.stderr}")

    def helm_install(self, env: dict[str, str], chart_args: list[str]) -> None:
        t = self.step(
            f"helm install {RELEASE} charts/platform -n {NAMESPACE} (CRDs, webhooks, RBAC, hook Jobs)"
        )
        argv = ["helm", "install", RELEASE, str(REPO_ROOT / "charts" / "platform"), "--create-namespace"]
        self.run([*argv, "--wait", "--timeout", "420s", *chart_args], env, timeout=480)
        self.detail(f"installed in {time.monotonic() - t:.1f}s")
        r = self.run(["kubectl", "get", "crd,statefulset,deploy,svc", "-n", NAMESPACE, "-o", "name"], env)
        names = r.stdout.split()
        crds = [n for n in names if n.startswith("customresourcedefinition") and n.endswith("nvidia.com")]
        self.detail(
            f"{len(crds)} Dynamo CRDs; " + ", ".join(n for n in names if not n.startswith("customres"))
        )

    def apply_graph(self, env: dict[str, str], example: Path) -> str:
        self.step(f"kubectl apply -f examples/{example.name} -n {DEMO_NAMESPACE}")
        self.run(["kubectl", "create", "namespace", DEMO_NAMESPACE], env)
        r = self.run(["kubectl", "apply", "-n", DEMO_NAMESPACE, "-f", str(example)], env)
        self.detail(r.stdout)
        return yaml.safe_load(example.read_text())["metadata"]["name"]

    def wait_graph(self, env: dict[str, str], name: str, timeout: float, alive: Callable[[], None]) -> dict:
        """Prints each change of the graph's progress until it is ``successful``; returns the DGD."""
        t = self.step(f"Waiting for DynamoGraphDeployment {name} to become ready")
        last, deadline = None, time.monotonic() + timeout
        while time.monotonic() < deadline:
            alive()
            r = self.run(
                ["kubectl", "get", "dgd", name, "-n", DEMO_NAMESPACE, "-o", "json"], env, check=False
            )
            if r.returncode == 0:
                dgd = json.loads(r.stdout)
                line = progress(dgd)
                if line != last:
                    self.detail(f"+{time.monotonic() - t:5.1f}s  {line}")
                    last = line
                if (dgd.get("status") or {}).get("state") == "successful":
                    return dgd
            time.sleep(0.5)
        raise DemoError(f"{name} did not become ready in {timeout:.0f}s: {last}")

    def show(self, env: dict[str, str], dgd: dict) -> None:
        self.step("What is there now")
        r = self.run(["kubectl", "get", "dgd,dcd,deploy,svc,pods", "-n", DEMO_NAMESPACE, "-o", "wide"], env)
        self.detail(r.stdout)
        conds = (dgd.get("status") or {}).get("conditions") or []
        ready = next((c for c in conds if c.get("type") == "Ready"), {})
        self.detail(f"Ready={ready.get('status')} reason={ready.get('reason')}: {ready.get('message')}")


def progress(dgd: dict) -> str:
    status = dgd.get("status") or {}
    parts = [f"state={status.get('state', '-'):<12}"]
    for comp, st in sorted((status.get("components") or {}).items()):
        parts.append(f"{comp} {st.get('readyReplicas', 0) or 0}/{st.get('replicas', 0) or 0}")
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    if ready:
        parts.append(f"Ready={ready.get('status')}")
    return "  ".join(parts)


def http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2) as r:
        return r.status == 200


def wait(check, timeout: float, what: str, alive=lambda: True, log: Path | None = None) -> None:
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


def down(directory: Path, quiet: bool = False, out=sys.stdout) -> None:
    """Stops whatever a demo started in ``directory``: the local operator process (kwok path) and the control
    plane, with the real node's complete teardown when it had one."""
    pid_file = directory / "operator.pid"
    if pid_file.exists():
        pid = int(pid_file.read_text().strip() or 0)
        if pid and _pid_alive(pid):
            _stop_pid(pid, None)
        pid_file.unlink()
    cluster = LocalCluster.from_state(directory / "cluster")
    if cluster is None:
        if not quiet:
            print("no demo running", file=out)
        return
    cluster.stop()
    if cluster.node_leftovers:
        raise DemoError("the real node left: " + "; ".join(cluster.node_leftovers))
    if not quiet:
        what = "operator and control plane"
        if cluster.profile == "node":
            what = "operator, control plane and real node"
        print(f"demo stopped: {what} are down", file=out)


def main(directory: Path, stop: bool, kwok: bool = False) -> int:
    if stop:
        try:
            down(directory)
        except DemoError as e:
            print(f"demo-down: {e}", file=sys.stderr)
            return 1
        return 0
    from . import demo_kwok, demo_real
    from .realnode import preflight

    reason = "asked for the kwok demo (--kwok)" if kwok else preflight.reason()
    # Ctrl-C (or a SIGTERM) stops the demo cleanly instead of leaving half of it running.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        down(directory, quiet=True)
        if reason is None:
            demo_real.RealDemo(directory).up()
        else:
            demo_kwok.KwokDemo(directory, reason=reason).up()
    except (DemoError, KeyboardInterrupt, RuntimeError) as e:
        print(f"\ndemo failed: {e}\nstopping what it started (logs kept in {directory})", file=sys.stderr)
        with contextlib.suppress(DemoError):
            down(directory, quiet=True)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    args = sys.argv[1:]
    sys.exit(main(Path(os.environ.get("DEMO_DIR", REPO_ROOT / ".cache" / "demo")), "--down" in args))
