"""`dynamo-hooks`: the commands of the chart's hook Jobs (install: one Job chaining three; uninstall: two).

The argv is a contract with the chart templates:

    dynamo-hooks check-conflicts --release-namespace NS --release-name R \
        [--namespace-restricted] [--target-namespace NS] [--hybrid]
    dynamo-hooks ensure-mpi-ssh-secret --namespace NS --secret-name NAME
    dynamo-hooks ensure-webhook-certs --namespace NS --secret-name NAME --service-name SVC
    dynamo-hooks uninstall-cleanup --phase before|after --release-namespace NS --release-name R \
        [--deployment NAME] [--target-namespace NS] [--leader-election-id ID] \
        [--leader-election-namespace NS] [--secret NAME]...

Commands chain (click's chain mode): the chart's one install Job runs
``dynamo-hooks check-conflicts ... ensure-mpi-ssh-secret ... ensure-webhook-certs ...`` in one pod. Every
step's arguments are parsed before the first step runs (a usage error changes nothing), the steps run in
the order given, and the first that fails ends the run with its status: a blocked install writes no Secret.

Exit status: 0 done (or nothing blocks), 1 the install must stop (the reason is printed on stderr, which
`kubectl logs` of the failed hook Job shows), 2 usage error, 3 the API could not be used.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click

from .chart import load_chart
from .checks import Status, run_checks
from .cluster import ClusterError, connect
from .preflight import PreflightInput, build_context
from .report import EXIT_BLOCKED, summarize
from .secrets import EnsureResult, HookError, ensure_mpi_ssh_secret, ensure_webhook_certs
from .settings import DEFAULT_WEBHOOK_SECRET

EXIT_API = 3


def _emit(output: str, payload: dict[str, Any], text: str, *, err: bool = False) -> None:
    if output == "json":
        click.echo(json.dumps(payload, indent=2))
    else:
        click.echo(text, err=err)


@click.group(chain=True, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option(
    "--kubeconfig",
    envvar="KUBECONFIG",
    default=None,
    help="Kubeconfig path; in a hook Job, none (in-cluster).",
)
@click.option("--context", "kube_context", default=None, help="Kubeconfig context.")
@click.option("--output", "-o", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def main(ctx: click.Context, kubeconfig: str | None, kube_context: str | None, output: str) -> None:
    """Install hooks of the dynamo-platform chart: conflict guard, MPI SSH key, webhook certificates."""
    ctx.obj = {"kubeconfig": kubeconfig, "context": kube_context, "output": output}


@main.command("check-conflicts")
@click.option("--release-namespace", required=True, help="Namespace of the Helm release being installed.")
@click.option(
    "--release-name", required=True, help="Name of the Helm release (its own operator is not a conflict)."
)
@click.option("--namespace-restricted", is_flag=True, help="The new operator is namespace-restricted.")
@click.option(
    "--target-namespace", default=None, help="Namespace a restricted operator manages (default: release ns)."
)
@click.option(
    "--hybrid",
    is_flag=True,
    help="The hybrid layout (dynamo-operator.namespaceRestriction.hybrid): a namespace-restricted operator "
    "beside one cluster-wide operator, which leaves its namespace while its namespace-scope marker lives.",
)
@click.option(
    "--leader-election-id", default=None, help="Leader-election Lease name (default dynamo.nvidia.com)."
)
@click.option("--leader-election-namespace", default=None, help="Its namespace (default kube-system).")
@click.option(
    "--read-deployments/--no-read-deployments",
    default=False,
    show_default=True,
    help="Also find operators by their Deployments in all namespaces (needs list on deployments.apps "
    "cluster-wide, which the chart's hook ServiceAccount does not have: it finds them by webhook "
    "configuration and Lease).",
)
@click.pass_context
def check_conflicts(
    ctx: click.Context,
    release_namespace: str,
    release_name: str,
    namespace_restricted: bool,
    target_namespace: str | None,
    hybrid: bool,
    leader_election_id: str | None,
    leader_election_namespace: str | None,
    read_deployments: bool,
) -> None:
    """Block the install when another Dynamo operator conflicts (the chart document's matrix)."""
    opts = ctx.obj
    sets = []
    if leader_election_id:
        sets.append(f"dynamo-operator.controllerManager.leaderElection.id={leader_election_id}")
    if leader_election_namespace:
        sets.append(f"dynamo-operator.controllerManager.leaderElection.namespace={leader_election_namespace}")
    inp = PreflightInput(
        release_name=release_name,
        release_namespace=release_namespace,
        set_values=sets,
        kubeconfig=opts["kubeconfig"],
        kube_context=opts["context"],
        namespace_restricted=namespace_restricted,
        target_namespace=target_namespace,
        hybrid=True if hybrid else None,
        read_deployments=read_deployments,
    )
    context = build_context(inp, load_chart(None))
    results = run_checks(context, only={"cluster.api-reachable", "operators.conflicts"})
    payload = {"summary": summarize(results), "results": [r.to_dict() for r in results]}
    if not context.reachable:
        _fail(ctx, f"cannot reach the Kubernetes API: {context.connect_error}", EXIT_API, **payload)
    blocked = [r for r in results if r.blocking]
    lines = []
    for r in results:
        if r.id == "cluster.api-reachable":
            continue
        mark = {"pass": "ok", "skip": "skipped", "fail": r.severity.value}[r.status.value]
        lines.append(f"[{mark}] {r.found}")
        if r.fix and r.status is Status.FAIL:
            lines.append(f"        fix: {r.fix}")
    if blocked:
        lines.insert(0, f"dynamo-hooks: install of release {release_name} in {release_namespace} is BLOCKED")
        _emit(opts["output"], payload, "\n".join(lines), err=True)
        sys.exit(EXIT_BLOCKED)
    _emit(opts["output"], payload, "\n".join(lines))  # nothing blocks: the next step, or exit 0


def _fail(ctx: click.Context, message: str, status: int, **payload: Any) -> NoReturn:
    """A step's failure, named by its command: the install Job chains three steps in one pod, so its log
    must say which one ended it (the steps after it did not run)."""
    text = f"dynamo-hooks {ctx.info_name}: {message}"
    _emit(ctx.obj["output"], {"error": message, **payload}, text, err=True)
    sys.exit(status)


def _run_ensure(ctx: click.Context, action: Any) -> None:
    opts = ctx.obj
    try:
        cluster = connect(opts["kubeconfig"], opts["context"])
        result: EnsureResult = action(cluster)
    except HookError as exc:
        _fail(ctx, str(exc), EXIT_BLOCKED)
    except ClusterError as exc:
        _fail(ctx, f"Kubernetes API error: {exc}", EXIT_API)
    _emit(opts["output"], result.to_dict(), f"{result.secret}: {result.action.value} ({result.reason})")


@main.command("ensure-mpi-ssh-secret")
@click.option("--namespace", required=True, help="Namespace of the Secret (the release namespace).")
@click.option("--secret-name", required=True, help="dynamo-operator.dynamo.mpiRun.secretName.")
@click.pass_context
def ensure_mpi(ctx: click.Context, namespace: str, secret_name: str) -> None:
    """Create the MPI SSH keypair Secret if missing; never rotate an existing key."""
    _run_ensure(ctx, lambda cluster: ensure_mpi_ssh_secret(cluster, namespace, secret_name))


@main.command("ensure-webhook-certs")
@click.option("--namespace", required=True, help="Namespace of the Secret and the webhook Service.")
@click.option("--secret-name", default=DEFAULT_WEBHOOK_SECRET, show_default=True)
@click.option("--service-name", required=True, help="The webhook Service the certificate must name.")
@click.pass_context
def ensure_certs(ctx: click.Context, namespace: str, secret_name: str, service_name: str) -> None:
    """Issue a CA and serving certificate into the kubernetes.io/tls Secret the operator serves from;
    reuse them while valid (the operator's own renewal policy decides)."""
    _run_ensure(ctx, lambda cluster: ensure_webhook_certs(cluster, namespace, secret_name, service_name))


@main.command("uninstall-cleanup")
@click.option(
    "--phase",
    type=click.Choice(["before", "after"]),
    required=True,
    help="before: pre-delete (the webhook configurations go first); after: post-delete (what Helm does "
    "not own).",
)
@click.option("--release-namespace", required=True, help="Namespace of the Helm release being removed.")
@click.option("--release-name", required=True, help="Name of the Helm release being removed.")
@click.option("--deployment", default="", help="The operator Deployment (its pods held the leader Lease).")
@click.option("--target-namespace", default="", help="Namespace-restricted mode: the managed namespace.")
@click.option("--leader-election-id", default="dynamo.nvidia.com", show_default=True)
@click.option("--leader-election-namespace", default="kube-system", show_default=True)
@click.option("--secret", "secrets", multiple=True, help="A hook-made Secret to delete (repeatable).")
@click.option(
    "--webhook-configuration",
    "webhook_configurations",
    multiple=True,
    help="--phase before: <validatingwebhookconfigurations|mutatingwebhookconfigurations>/<name> to delete "
    "(repeatable; default: the release's, found by its labels).",
)
@click.pass_context
def uninstall_cleanup(
    ctx: click.Context,
    phase: str,
    release_namespace: str,
    release_name: str,
    deployment: str,
    target_namespace: str,
    leader_election_id: str,
    leader_election_namespace: str,
    secrets: tuple[str, ...],
    webhook_configurations: tuple[str, ...],
) -> None:
    """What a plain `helm uninstall` leaves (the chart's pre-delete / post-delete hook Jobs run this; the
    `helm dynamo uninstall` plugin runs the same steps from the user's machine)."""
    from . import uninstall as un

    opts = ctx.obj
    info = un.ReleaseInfo(
        name=release_name,
        namespace=release_namespace,
        restricted=bool(target_namespace),
        target_namespace=target_namespace,
        deployment=deployment,
        leader_election_id=leader_election_id,
        leader_election_namespace=leader_election_namespace,
        secrets=list(secrets),
        webhook_configurations=list(webhook_configurations),
    )
    report = un.Report()
    try:
        cluster = connect(opts["kubeconfig"], opts["context"])
        if phase == "before":
            un.remove_webhooks(cluster, info, report)
        else:
            un.after_helm_uninstall(cluster, info, report, keep_secrets=False, crds=False)
    except (ClusterError, un.UninstallError) as exc:
        _fail(ctx, str(exc), EXIT_API, done=report.lines)
    _emit(opts["output"], {"done": report.lines}, "\n".join(report.lines) or "nothing to clean up")


if __name__ == "__main__":  # pragma: no cover
    main()
