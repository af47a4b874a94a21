"""Assemble a preflight run: chart, values, settings and a cluster connection, then the checks.

Shared by the `helm dynamo` plugin and the `dynamo-hooks check-conflicts` hook so both judge an install the
same way; only their inputs differ (the plugin has values files and the chart, the hook has flags).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from .chart import ChartInfo
from .checks import CheckContext, RenderedObject
from .cluster import Cluster, ClusterError, connect
from .settings import InstallSettings
from .values import compute_values


@dataclass
class PreflightInput:
    release_name: str
    release_namespace: str
    values_files: Sequence[str] = ()
    set_values: Sequence[str] = ()
    set_string_values: Sequence[str] = ()
    kubeconfig: str | None = None
    kube_context: str | None = None
    namespace_restricted: bool | None = None
    target_namespace: str | None = None
    hybrid: bool | None = None  # the hook's --hybrid (else dynamo-operator.namespaceRestriction.hybrid)
    create_namespace: bool = False
    read_deployments: bool = True  # False in the chart's hook (its RBAC reads no Deployments)


def build_context(inp: PreflightInput, chart: ChartInfo, *, cluster: Cluster | None = None) -> CheckContext:
    """Compute values and settings and connect (unless a cluster is given); values errors propagate."""
    values = compute_values(chart.default_values, inp.values_files, inp.set_values, inp.set_string_values)
    settings = InstallSettings.from_values(
        values,
        release_name=inp.release_name,
        release_namespace=inp.release_namespace,
        namespace_restricted=inp.namespace_restricted,
        target_namespace=inp.target_namespace,
        hybrid=inp.hybrid,
    )
    error: ClusterError | None = None
    if cluster is None:
        try:
            cluster = connect(inp.kubeconfig, inp.kube_context)
        except ClusterError as exc:
            error = exc
    return CheckContext(
        settings=settings,
        chart=chart,
        values=values,
        cluster=cluster,
        connect_error=error,
        create_namespace=inp.create_namespace,
        read_deployments=inp.read_deployments,
    )


def render_chart(
    helm: str, chart_dir: Path, inp: PreflightInput, timeout: float = 60.0
) -> list[RenderedObject] | None:
    """Objects `helm template` renders for these inputs, or None when rendering is not possible here.

    Rendering gives the RBAC check the exact kinds and namespaces the install creates. It is best
    effort: a chart that needs `helm dependency build` first, or a missing helm, falls back to the
    static list.
    """
    cmd = [helm, "template", inp.release_name, str(chart_dir), "--namespace", inp.release_namespace]
    for f in inp.values_files:
        cmd += ["--values", f]
    for expr in inp.set_values:
        cmd += ["--set", expr]
    for expr in inp.set_string_values:
        cmd += ["--set-string", expr]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    objects = []
    for doc in yaml.safe_load_all(proc.stdout):
        if isinstance(doc, dict) and doc.get("kind") and doc.get("apiVersion"):
            if doc["kind"].endswith("List"):
                continue
            meta = doc.get("metadata") or {}
            objects.append(RenderedObject(str(doc["apiVersion"]), str(doc["kind"]), meta.get("namespace")))
    return objects
