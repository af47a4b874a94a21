"""`dynamo-localcluster up|down|status`: the local control plane for people (make cluster-up, the demo).

Unlike the pytest fixtures, a cluster started here outlives the command, so its process ids are kept
in ``<dir>/state.json`` for ``down``.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from .cluster import ClusterError, LocalCluster


@click.group()
def main() -> None:
    """A real Kubernetes control plane (etcd, kube-apiserver, ...) as local processes on 127.0.0.1."""


@main.command()
@click.option(
    "--profile", type=click.Choice(["api", "cluster", "node"]), default="cluster", show_default=True
)
@click.option("--dir", "directory", type=click.Path(path_type=Path), default=Path(".cache/localcluster"))
@click.option("--nodes", type=int, default=2, show_default=True, help="fake kwok nodes (cluster profile)")
def up(profile: str, directory: Path, nodes: int) -> None:
    """Start a control plane in DIR and print the KUBECONFIG line."""
    existing = LocalCluster.from_state(directory)
    if existing and all(c.alive() for c in existing.components):
        click.echo(f"already running ({existing.profile}): export KUBECONFIG={existing.kubeconfig}")
        return
    if existing:
        existing.stop()
    images = []
    if profile == "node":  # whatever `make images` built, imported into the node
        from .realnode.node import PLATFORM_IMAGES, NodeError, built_image

        for recipe in PLATFORM_IMAGES:
            with contextlib.suppress(NodeError):
                image = built_image(recipe)
                images.append((image.ref, image.archive))
    cluster = LocalCluster(directory, profile=profile, nodes=nodes, tie_to_parent=False, node_images=images)
    click.echo(f"starting the '{profile}' control plane in {cluster.dir} ...", err=True)
    try:
        cluster.start()
    except (ClusterError, RuntimeError) as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(1)
    click.echo(f"ready in {cluster.startup_seconds:.1f}s; logs in {cluster.logs}", err=True)
    click.echo(f"export KUBECONFIG={cluster.kubeconfig}")


@main.command()
@click.option("--dir", "directory", type=click.Path(path_type=Path), default=Path(".cache/localcluster"))
def down(directory: Path) -> None:
    """Stop the control plane started in DIR (no-op when none is running)."""
    cluster = LocalCluster.from_state(directory)
    if cluster is None:
        click.echo(f"no local cluster in {directory}; nothing to stop", err=True)
        return
    cluster.stop()
    click.echo("stopped", err=True)


@main.command()
@click.option("--dir", "directory", type=click.Path(path_type=Path), default=Path(".cache/localcluster"))
def status(directory: Path) -> None:
    """Show each component's pid and whether it is alive."""
    cluster = LocalCluster.from_state(directory)
    if cluster is None:
        click.echo(
            f"no local cluster in {directory}: start one with `dynamo-localcluster up --dir {directory}`"
        )
        sys.exit(1)
    for c in cluster.components:
        click.echo(f"{c.name:26} pid {c.pid:<8} {'running' if c.alive() else 'DEAD'}  log {c.log}")
    click.echo(f"export KUBECONFIG={cluster.kubeconfig}")
    sys.exit(0 if all(c.alive() for c in cluster.components) else 1)


@main.command("node-check")
@click.option("--machine", is_flag=True, help="Only what the machine offers (root, kernel): not built tools.")
@click.option("--quiet", is_flag=True, help="No output; the exit status says it.")
def node_check(machine: bool, quiet: bool) -> None:
    """Exit 0 when this machine can run the real node, else print why and exit 1."""
    from .realnode import preflight

    problems = preflight.machine_problems() if machine else preflight.problems()
    if not quiet:
        for p in problems:
            click.echo(f"real node: {p}", err=True)
        if not problems:
            click.echo("real node: this machine can run it", err=True)
    sys.exit(1 if problems else 0)


@main.command("node-clean")
def node_clean() -> None:
    """Tear down whatever a real node left on this machine (processes, mounts, bridge, iptables chains,
    cgroups, sysctls); safe to run at any time, also when nothing is left. Another node's kubelet, pods and
    chains (k3s, kubeadm, kind) are never touched."""
    from .realnode import teardown

    ours = teardown.State.load() is not None  # without it, KUBE-* chains are another node's
    left = teardown.teardown()
    left += [x for x in teardown.leftovers(include_kube=ours) if x not in left]
    for item in left:
        click.echo(f"still there: {item}", err=True)
    click.echo("clean" if not left else f"{len(left)} item(s) left", err=True)
    sys.exit(1 if left else 0)


@main.command()
@click.option("--dir", "directory", type=click.Path(path_type=Path), default=Path(".cache/demo"))
@click.option("--down", is_flag=True, help="Stop the demo's operator and control plane (and real node).")
@click.option("--kwok", is_flag=True, help="The kwok demo (fake nodes) even where the real node could run.")
def demo(directory: Path, down: bool, kwok: bool) -> None:
    """Install the platform on a local control plane and deploy a graph: on a real node where this machine
    can run one (ending with a chat completion), else on kwok's fake nodes."""
    from .demo import main as demo_main

    sys.exit(demo_main(directory.resolve(), down, kwok))
