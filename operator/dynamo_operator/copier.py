"""``dynamo-operator publish-profiling-output``: the DGDR profiling Job's ``output-copier`` sidecar.

Why it exists: the sidecar used to run a third-party kubectl image by its floating ``latest`` tag, with
the profiling Job's ServiceAccount token. It now runs the operator's own image, pinned by the chart, and
does the one thing it is for with the Kubernetes client the image already has: publish the profiler's
``profiler_status.yaml`` and ``final_config.yaml`` (files in the shared ``/data`` volume) in the ConfigMap
``dgdr-output-<request>`` that the DGDR controller reads (``render/dgdr_output.py``).

It publishes only when a file changed (no write every interval), stops once ``final_config.yaml`` is
published, and also stops when its pod shows the profiler container terminated without one (the old
script waited forever; the operator then reports ``ProfilingOutputMissing``). The calls it makes are
``get``/``create``/``patch`` on that ConfigMap and ``get`` on its own pod, all within the profiling role.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from pathlib import Path

import click
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException

from dynamo_operator.render.dgdr_job import (
    FINAL_CONFIG,
    LABEL_DGDR_NAME,
    LABEL_DGDR_NAMESPACE,
    PROFILER_CONTAINER,
    STATUS_FILE,
)
from dynamo_operator.runtime.log import get_logger, setup_logging

# the files the profiler writes, published under their own names (render/dgdr_output.py reads them)
FILES = (STATUS_FILE, FINAL_CONFIG)


def read_output(directory: Path) -> dict[str, str]:
    """The profiler's files present in ``directory`` (key = file name)."""
    out = {}
    for name in FILES:
        path = directory / name
        if path.is_file():
            out[name] = path.read_text(encoding="utf-8", errors="replace")
    return out


@dataclass
class Publisher:
    """Writes the output ConfigMap when the files' content changed since the last successful write."""

    api: k8s.CoreV1Api
    namespace: str
    name: str
    labels: dict[str, str]
    _digest: str = field(default="", init=False)

    def publish(self, data: dict[str, str]) -> bool:
        """Create or patch the ConfigMap with ``data``; False when there was nothing new to write."""
        if not data:
            return False
        digest = hashlib.sha256(repr(sorted(data.items())).encode()).hexdigest()
        if digest == self._digest:
            return False
        meta = {"name": self.name, "namespace": self.namespace, "labels": self.labels}
        body = {"metadata": meta, "data": data}
        try:
            self.api.create_namespaced_config_map(self.namespace, body)
        except ApiException as e:
            if e.status != 409:
                raise
            self.api.patch_namespaced_config_map(self.name, self.namespace, body)
        self._digest = digest
        return True


def profiler_terminated(api: k8s.CoreV1Api, namespace: str, pod_name: str | None) -> bool:
    """Whether this pod's ``profiler`` container has terminated (False when unknown)."""
    if not pod_name:
        return False
    try:
        pod = api.read_namespaced_pod(pod_name, namespace)
    except ApiException:
        return False
    for status in (pod.status and pod.status.container_statuses) or []:
        if status.name == PROFILER_CONTAINER and status.state and status.state.terminated:
            return True
    return False


def run(
    api: k8s.CoreV1Api,
    directory: Path,
    publisher: Publisher,
    pod_name: str | None,
    interval: float,
    stop: threading.Event,
) -> str:
    """Publish until the final config is out (``"final"``), the profiler ended without one
    (``"profiler-ended"``) or ``stop`` is set (``"stopped"``). API errors are logged and retried."""
    log = get_logger("profiling-output")
    while True:
        try:
            data = read_output(directory)
            if publisher.publish(data):
                log.info("published profiling output", configmap=publisher.name, keys=sorted(data))
            if FINAL_CONFIG in data:
                return "final"
            if profiler_terminated(api, publisher.namespace, pod_name):
                publisher.publish(read_output(directory))  # whatever the profiler left behind
                return "profiler-ended"
        except ApiException as e:
            log.warning("publishing failed; retrying", status=e.status, reason=e.reason)
        if stop.wait(interval):
            return "stopped"


def _api(kubeconfig: str | None) -> k8s.CoreV1Api:
    if kubeconfig:
        return k8s.CoreV1Api(k8s_config.new_client_from_config(config_file=kubeconfig))
    k8s_config.load_incluster_config()
    return k8s.CoreV1Api()


@click.command("publish-profiling-output")
@click.option("--dir", "directory", default="/data", show_default=True, help="The profiler's output dir.")
@click.option("--configmap", required=True, help="ConfigMap to publish into (dgdr-output-<request>).")
@click.option("--dgdr-name", envvar="DGDR_NAME", required=True, help="The request's name (label).")
@click.option("--dgdr-namespace", envvar="DGDR_NAMESPACE", required=True, help="Its namespace.")
@click.option("--pod-name", envvar="POD_NAME", default=None, help="This pod, to notice the profiler ending.")
@click.option("--interval", type=float, default=10.0, show_default=True, help="Seconds between checks.")
@click.option("--kubeconfig", envvar="KUBECONFIG", default=None, help="Kubeconfig (default: in-cluster).")
def command(
    directory: str,
    configmap: str,
    dgdr_name: str,
    dgdr_namespace: str,
    pod_name: str | None,
    interval: float,
    kubeconfig: str | None,
) -> None:
    """Publish the DGDR profiler's output files in the ConfigMap the operator reads."""
    setup_logging()
    api = _api(kubeconfig)
    labels = {LABEL_DGDR_NAME: dgdr_name, LABEL_DGDR_NAMESPACE: dgdr_namespace}
    publisher = Publisher(api, dgdr_namespace, configmap, labels)
    outcome = run(api, Path(directory), publisher, pod_name, interval, threading.Event())
    get_logger("profiling-output").info("done", outcome=outcome)
