"""A dynamo-platform Helm release on the local cluster with its operator running as a local process, the way
`make demo` runs it (kwok's nodes run no containers): the chart's operator Deployment is scaled to zero,
the webhooks point at ``https://127.0.0.1:<port>``, and ``dynamo-operator run`` reads the
OperatorConfiguration the chart installed.

A cluster-wide operator takes over the CRDs' conversion webhook; ``preserved_crds`` puts the session's
back afterwards (or re-creates the CRDs an uninstall test removed), so later tests see the cluster as
they expect it.
"""

from __future__ import annotations

import contextlib
import copy
import json
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from dynamo_localcluster.cluster import REPO_ROOT, free_port
from dynamo_operator.webhooks.certs import CRDS
from kubernetes.client.exceptions import ApiException

from support.poll import wait_for

from .crds import wait_established
from .processes import OperatorProcess, spawn_operator

CHART = REPO_ROOT / "charts" / "platform"
# The chart as of commit 52fbb96 (`helm package` of `git archive 52fbb96 charts crds`), the version an
# upgrade starts from; see tests/fixtures/charts/README.md.
PREVIOUS_CHART = REPO_ROOT / "tests" / "fixtures" / "charts" / "dynamo-platform-0.1.0.tgz"
# kwok has no volume provisioner and runs no containers: persistence off, the operator as a local process.
LOCAL_VALUES = {
    "dynamo-operator": {"controllerManager": {"replicas": 0}},
    "nats": {"config": {"jetstream": {"fileStore": {"pvc": {"enabled": False}}}}},
    "etcd": {"persistence": {"enabled": False}},
}


def run(
    env: dict[str, str], *args: str, timeout: float = 400, check: bool = True
) -> subprocess.CompletedProcess:
    proc = subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=timeout, check=False)
    if check:
        assert proc.returncode == 0, (
            f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


@dataclass
class Release:
    """One Helm release and, while ``operator`` is set, its local operator process."""

    cluster: object
    name: str
    namespace: str
    workdir: Path
    sets: list[str] = field(default_factory=list)
    webhook_port: int = field(default_factory=free_port)
    operator: OperatorProcess | None = None

    @property
    def env(self) -> dict[str, str]:
        return self.cluster.env

    @property
    def url_base(self) -> str:
        return f"https://127.0.0.1:{self.webhook_port}"

    def helm_args(self) -> list[str]:
        values = self.workdir / "values.yaml"
        values.write_text(yaml.safe_dump(LOCAL_VALUES))
        args = ["--namespace", self.namespace, "--values", str(values)]
        args += ["--set", f"dynamo-operator.webhook.clientConfigURL={self.url_base}"]
        for s in self.sets:
            args += ["--set", s]
        return args

    def install(self, chart: Path, *extra: str) -> None:
        run(
            self.env,
            "helm",
            "install",
            self.name,
            str(chart),
            "--create-namespace",
            "--wait",
            "--timeout",
            "300s",
            *self.helm_args(),
            *extra,
        )

    def upgrade(self, chart: Path, *extra: str) -> subprocess.CompletedProcess:
        return run(
            self.env,
            "helm",
            "upgrade",
            self.name,
            str(chart),
            "--wait",
            "--timeout",
            "300s",
            *self.helm_args(),
            *extra,
        )

    def operator_config(self) -> Path:
        """The OperatorConfiguration the chart installed, as a file for the local process."""
        out = run(
            self.env,
            "kubectl",
            "get",
            "configmap",
            "-n",
            self.namespace,
            "-l",
            f"app.kubernetes.io/instance={self.name},app.kubernetes.io/name=dynamo-operator",
            "-o",
            "yaml",
        )
        items = [cm for cm in yaml.safe_load(out.stdout)["items"] if "config.yaml" in (cm.get("data") or {})]
        assert len(items) == 1, f"want one OperatorConfiguration ConfigMap, got {len(items)}"
        path = self.workdir / f"operator-config-{uuid.uuid4().hex[:6]}.yaml"
        path.write_text(items[0]["data"]["config.yaml"])
        self._config = yaml.safe_load(items[0]["data"]["config.yaml"]) or {}
        return path

    def config_doc(self) -> dict:
        """The OperatorConfiguration the running operator was started with."""
        return getattr(self, "_config", {})

    def start_operator(self, *extra: str) -> OperatorProcess:
        """``dynamo-operator run`` with the chart's configuration; ``extra`` flags come last (they win)."""
        assert self.operator is None, "the operator already runs"
        env = {**self.env, "POD_NAMESPACE": self.namespace, "POD_NAME": f"{self.name}-local-operator"}
        log = self.workdir / f"operator-{uuid.uuid4().hex[:6]}.log"
        proc = spawn_operator(
            self.cluster,
            log,
            "--config",
            str(self.operator_config()),
            "--no-leader-elect",
            "--webhook-host=127.0.0.1",
            f"--webhook-port={self.webhook_port}",
            f"--webhook-url-base={self.url_base}",
            *extra,
            env=env,
        )
        self.operator = proc
        proc.wait_ready(timeout=90)
        # /readyz means the webhook server serves; its CA reaches the webhook configurations (and, for a
        # cluster-wide operator, the CRDs' conversion) a moment later, and only then do writes get through.
        wait_for(
            self._webhooks_wired,
            60,
            lambda: f"the operator's CA never reached its webhook configurations:\n{proc.log_tail()}",
            interval=0.5,
        )
        return proc

    def _webhooks_wired(self) -> bool:
        secret = run(
            self.env,
            "kubectl",
            "get",
            "secret",
            "-n",
            self.namespace,
            "webhook-server-cert",
            "-o",
            "json",
            check=False,
        )
        if secret.returncode != 0:
            return False
        ca = json.loads(secret.stdout).get("data", {}).get("ca.crt")
        configs = run(
            self.env,
            "kubectl",
            "get",
            "validatingwebhookconfigurations,mutatingwebhookconfigurations",
            "-l",
            f"nvidia.com/dynamo-operator-namespace={self.namespace}",
            "-o",
            "json",
        )
        bundles = [
            w["clientConfig"].get("caBundle")
            for c in json.loads(configs.stdout)["items"]
            for w in c["webhooks"]
        ]
        if not ca or not bundles or any(b != ca for b in bundles):
            return False
        if self.config_doc().get("namespace", {}).get("restricted"):
            return True  # a restricted operator leaves the cluster-scoped CRDs alone
        crds = json.loads(run(self.env, "kubectl", "get", "crd", "-o", "json").stdout)["items"]
        for crd in crds:
            conv = crd["spec"].get("conversion") or {}
            if crd["spec"]["group"] == "nvidia.com" and conv.get("strategy") == "Webhook":
                cc = conv["webhook"]["clientConfig"]
                if not str(cc.get("url", "")).startswith(self.url_base) or cc.get("caBundle") != ca:
                    return False
        return True

    def stop_operator(self, kill: bool = False) -> None:
        """SIGTERM (the operator releases what it holds) or, with ``kill``, SIGKILL (it releases nothing)."""
        if self.operator is None:
            return
        if kill:
            self.operator.reap()
        else:
            self.operator.stop()
        self.operator = None

    def cleanup(self) -> None:
        self.stop_operator()
        run(
            self.env,
            "helm",
            "uninstall",
            self.name,
            "--namespace",
            self.namespace,
            "--wait",
            "--timeout",
            "300s",
            check=False,
        )
        run(
            self.env,
            "kubectl",
            "delete",
            "namespace",
            self.namespace,
            "--wait=false",
            "--ignore-not-found",
            check=False,
        )


@contextlib.contextmanager
def release(cluster, workdir: Path, prefix: str, *sets: str) -> Iterator[Release]:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    rel = Release(cluster, name, f"{name}-ns", workdir, list(sets))
    try:
        yield rel
    finally:
        rel.cleanup()


def _crd_spec_copy(crd: dict) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": crd["metadata"]["name"], "labels": crd["metadata"].get("labels") or {}},
        "spec": copy.deepcopy(crd["spec"]),
    }


@contextlib.contextmanager
def preserved_crds(client) -> Iterator[list[dict]]:
    """Yield the live nvidia.com CRDs; afterwards put their conversion config back, or re-create the
    ones that were deleted, and wait until they are Established."""
    saved = [_crd_spec_copy(c) for c in client.list(CRDS)["items"] if c["spec"]["group"] == "nvidia.com"]
    try:
        yield saved
    finally:
        for want in saved:
            name = want["metadata"]["name"]
            for _ in range(5):
                try:
                    live = client.get(CRDS, name)
                except ApiException as e:
                    if e.status != 404:
                        raise
                    client.create(CRDS, copy.deepcopy(want))  # deleted (404): a terminating CRD still answers
                    break
                if live["spec"].get("conversion") == want["spec"].get("conversion"):
                    break
                live["spec"]["conversion"] = want["spec"].get("conversion")
                try:
                    client.replace(CRDS, live)
                    break
                except ApiException as e:
                    if e.status != 409:
                        raise
        for want in saved:
            wait_established(client.api_client, want["metadata"]["name"], timeout=60)
