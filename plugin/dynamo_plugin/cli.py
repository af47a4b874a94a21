"""`helm dynamo`: preflight checks for the dynamo-platform chart, and an install that runs them first.

Run as a Helm plugin, helm itself consumes its global flags (`-n/--namespace`, `--kube-context`,
`--kubeconfig`) and hands them over as HELM_NAMESPACE, HELM_KUBECONTEXT and KUBECONFIG; the options below
read those variables, so `helm dynamo check preflight -n ns` and `helm-dynamo check preflight -n ns` agree.

Exit status: 0 nothing blocks, 1 something blocks (or `helm install` failed), 2 usage error.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click
from dynamo_hooks import checks as checks_mod
from dynamo_hooks.chart import ChartInfo, resolve_chart
from dynamo_hooks.preflight import PreflightInput, build_context, render_chart
from dynamo_hooks.report import EXIT_BLOCKED, EXIT_USAGE, exit_code, to_json, to_text
from dynamo_hooks.values import ValuesError

from .helmargs import HelmArgsError, parse_install_args

DEFAULT_RELEASE = "dynamo-platform"


def _helm_binary() -> str | None:
    """The helm that launched us ($HELM_BIN), else helm on PATH."""
    helm_bin = os.environ.get("HELM_BIN")
    if helm_bin and ((os.path.isabs(helm_bin) and os.access(helm_bin, os.X_OK)) or shutil.which(helm_bin)):
        return helm_bin
    return shutil.which("helm")


def _default_namespace() -> str:
    return os.environ.get("HELM_NAMESPACE") or "default"


def _run_preflight(
    inp: PreflightInput,
    chart: ChartInfo,
    output: str,
    *,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    verbose: bool = False,
    render: bool = True,
) -> int:
    """Run the checks, print the report, and return the exit status."""
    try:
        ctx = build_context(inp, chart)
    except ValuesError as exc:
        click.echo(f"helm dynamo: {exc}", err=True)
        return EXIT_USAGE
    helm = _helm_binary() if render else None
    if helm and chart.path is not None and ctx.reachable:
        ctx.rendered = render_chart(helm, chart.path, inp)
    try:
        results = checks_mod.run_checks(ctx, only=set(only) or None, skip=set(skip) or None)
    except KeyError as exc:
        click.echo(f"helm dynamo: {exc.args[0]}", err=True)
        return EXIT_USAGE
    if output == "json":
        click.echo(to_json(ctx, results))
    else:
        click.echo(to_text(ctx, results, verbose=verbose))
    return exit_code(results)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="dynamo-platform", prog_name="helm dynamo")
def cli() -> None:
    """Preflight checks and guarded installs for the NVIDIA Dynamo platform chart.

    \b
    Commands:
      check preflight   judge the cluster and values before installing (exit 0 ok, 1 blocked)
      check list        the registered checks with their ids and severities
      install           run preflight, then `helm install` with the same arguments
      uninstall         `helm uninstall` that strands nothing (webhooks first; --crds removes the CRDs)
    """


@cli.group()
def check() -> None:
    """Checks against the current cluster."""


_common_options = [
    click.option(
        "-n",
        "--namespace",
        default=_default_namespace,
        show_default="$HELM_NAMESPACE or default",
        help="Release namespace.",
    ),
    click.option("--release-name", default=DEFAULT_RELEASE, show_default=True, help="Helm release name."),
    click.option(
        "-f",
        "--values",
        "values_files",
        multiple=True,
        type=click.Path(dir_okay=False),
        help="Values file (repeatable, later wins).",
    ),
    click.option("--set", "set_values", multiple=True, help="key=value, helm --set syntax (repeatable)."),
    click.option("--set-string", "set_string_values", multiple=True, help="key=value kept as strings."),
    click.option(
        "--chart",
        default=None,
        help="Chart directory or .tgz (default: $DYNAMO_CHART_DIR or this checkout's charts/platform).",
    ),
    click.option("--kubeconfig", envvar="KUBECONFIG", default=None, help="Kubeconfig path ($KUBECONFIG)."),
    click.option("--kube-context", envvar="HELM_KUBECONTEXT", default=None, help="Kubeconfig context."),
    click.option("--create-namespace", is_flag=True, help="The install will create the namespace."),
]


F = TypeVar("F", bound=Callable[..., Any])


def _apply(options: list[Callable[[F], F]]) -> Callable[[F], F]:
    """Apply a shared list of click options (preflight and any future command reuse them)."""

    def decorate(fn: F) -> F:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


@check.command("preflight")
@_apply(_common_options)
@click.option("--output", "-o", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--only", multiple=True, metavar="ID", help="Run only these check ids (repeatable).")
@click.option("--skip", multiple=True, metavar="ID", help="Skip these check ids (repeatable).")
@click.option("-v", "--verbose", is_flag=True, help="Also list skipped checks.")
def preflight(
    namespace: str,
    release_name: str,
    values_files: tuple[str, ...],
    set_values: tuple[str, ...],
    set_string_values: tuple[str, ...],
    chart: str | None,
    kubeconfig: str | None,
    kube_context: str | None,
    create_namespace: bool,
    output: str,
    only: tuple[str, ...],
    skip: tuple[str, ...],
    verbose: bool,
) -> None:
    """Check the cluster and the values before installing dynamo-platform."""
    chart_info, tmp = resolve_chart(chart)
    try:
        inp = PreflightInput(
            release_name=release_name,
            release_namespace=namespace,
            values_files=values_files,
            set_values=set_values,
            set_string_values=set_string_values,
            kubeconfig=kubeconfig,
            kube_context=kube_context,
            create_namespace=create_namespace,
        )
        code = _run_preflight(inp, chart_info, output, only=only, skip=skip, verbose=verbose)
    finally:
        if tmp is not None:
            tmp.cleanup()
    sys.exit(code)


@check.command("list")
@click.option("--output", "-o", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_checks(output: str) -> None:
    """List the registered checks."""
    specs = list(checks_mod.REGISTRY.values())
    if output == "json":
        click.echo(
            json.dumps(
                [{"id": s.id, "title": s.title, "severity": s.severity.value} for s in specs], indent=2
            )
        )
        return
    width = max(len(s.id) for s in specs)
    for s in specs:
        click.echo(f"{s.id:<{width}}  {s.severity.value:<7}  {s.title}")


@cli.command(
    "install",
    context_settings={
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "allow_interspersed_args": False,
    },
)
@click.option(
    "--skip-preflight-check", "skip", multiple=True, metavar="ID", help="Skip a check id (repeatable)."
)
@click.option("--preflight-output", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.argument("helm_args", nargs=-1, type=click.UNPROCESSED)
def install(skip: tuple[str, ...], preflight_output: str, helm_args: tuple[str, ...]) -> None:
    """Run preflight, then `helm install HELM_ARGS...` if nothing blocks.

    \b
    Example: helm dynamo install dynamo-platform ./charts/platform -n dynamo-system --create-namespace
    """
    try:
        parsed = parse_install_args(list(helm_args))
    except HelmArgsError as exc:
        raise click.UsageError(str(exc)) from exc
    namespace = parsed.namespace or _default_namespace()
    helm = _helm_binary()
    if helm is None:
        raise click.UsageError("helm not found: run as `helm dynamo install` or put helm on PATH")
    chart_info, tmp = resolve_chart(parsed.chart)
    try:
        inp = PreflightInput(
            release_name=parsed.release_name or DEFAULT_RELEASE,
            release_namespace=namespace,
            values_files=parsed.values_files,
            set_values=parsed.set_values,
            set_string_values=parsed.set_string_values,
            kubeconfig=parsed.kubeconfig or os.environ.get("KUBECONFIG"),
            kube_context=parsed.kube_context or os.environ.get("HELM_KUBECONTEXT"),
            create_namespace=parsed.create_namespace,
        )
        code = _run_preflight(inp, chart_info, preflight_output, skip=skip)
    finally:
        if tmp is not None:
            tmp.cleanup()
    if code != 0:
        if code == EXIT_BLOCKED:
            click.echo("helm dynamo: preflight blocked the install; nothing was installed.", err=True)
        sys.exit(code)
    # helm consumed -n/--kube-context before starting the plugin, so they are passed on explicitly.
    cmd = [helm, "install", *helm_args]
    if parsed.namespace is None and os.environ.get("HELM_NAMESPACE"):
        cmd += ["--namespace", os.environ["HELM_NAMESPACE"]]
    if parsed.kube_context is None and os.environ.get("HELM_KUBECONTEXT"):
        cmd += ["--kube-context", os.environ["HELM_KUBECONTEXT"]]
    click.echo(f"helm dynamo: preflight passed; running: {' '.join(cmd[1:])}", err=True)
    sys.stdout.flush()
    result = subprocess.run(cmd, check=False)
    sys.exit(0 if result.returncode == 0 else 1)


@cli.command("uninstall")
@click.argument("release", default=DEFAULT_RELEASE)
@click.option(
    "-n",
    "--namespace",
    default=_default_namespace,
    show_default="$HELM_NAMESPACE or default",
    help="Release namespace.",
)
@click.option("--kubeconfig", envvar="KUBECONFIG", default=None, help="Kubeconfig path ($KUBECONFIG).")
@click.option("--kube-context", envvar="HELM_KUBECONTEXT", default=None, help="Kubeconfig context.")
@click.option(
    "--crds",
    is_flag=True,
    help="Also delete Dynamo's CRDs (dynamographdeployments.nvidia.com and the other kinds of the Dynamo "
    "API) and so every Dynamo object in the cluster (refused while another Dynamo operator runs). Other "
    "nvidia.com CRDs, such as the GPU Operator's, are not touched.",
)
@click.option("--keep-secrets", is_flag=True, help="Keep the webhook certificate and MPI SSH key Secrets.")
@click.option("--timeout", default="300s", show_default=True, help="Passed to helm uninstall --wait.")
def uninstall(
    release: str,
    namespace: str,
    kubeconfig: str | None,
    kube_context: str | None,
    crds: bool,
    keep_secrets: bool,
    timeout: str,
) -> None:
    """Uninstall RELEASE without stranding anything: its webhook configurations go first (nothing blocks
    deletes), then `helm uninstall --wait`, then the Lease markers, finalizers and hook-made Secrets Helm
    does not own; with --crds, the CRDs too.

    \b
    Example: helm dynamo uninstall dynamo-platform -n dynamo-system --crds
    """
    from dynamo_hooks import uninstall as un
    from dynamo_hooks.cluster import ClusterError, connect

    helm = _helm_binary()
    if helm is None:
        raise click.UsageError("helm not found: run as `helm dynamo uninstall` or put helm on PATH")
    report = un.Report()
    try:
        cluster = connect(kubeconfig, kube_context)
        info = un.read_release(cluster, release, namespace)
        un.remove_webhooks(cluster, info, report)
        cmd = [helm, "uninstall", release, "--namespace", namespace, "--wait", "--timeout", timeout]
        if kube_context:
            cmd += ["--kube-context", kube_context]
        done = subprocess.run(cmd, check=False, capture_output=True, text=True)
        if done.returncode != 0 and "not found" not in done.stderr:
            click.echo(f"helm dynamo: {' '.join(cmd[1:])} failed:\n{done.stderr.strip()}", err=True)
            sys.exit(1)
        report.add(f"helm uninstall {release}: {(done.stdout or done.stderr).strip()}")
        un.after_helm_uninstall(cluster, info, report, keep_secrets=keep_secrets, crds=crds)
    except (ClusterError, un.UninstallError) as exc:
        for line in report.lines:
            click.echo(line)
        click.echo(f"helm dynamo: uninstall of {release} in {namespace} stopped: {exc}", err=True)
        sys.exit(1)
    for line in report.lines:
        click.echo(line)
    if not crds:
        click.echo(
            "CRDs kept (Helm never deletes them). Their conversion webhook was this release's: until an "
            "operator is installed again, read Dynamo objects at their storage version (v1alpha1), or "
            f"remove them all with: helm dynamo uninstall {release} -n {namespace} --crds"
        )


def main(argv: Sequence[str] | None = None) -> None:
    """Console script `helm-dynamo` (what the plugin launcher runs); usage lines read `helm dynamo`."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="helm dynamo")


if __name__ == "__main__":  # pragma: no cover
    main()
