"""``dynamo-operator``: the operator process (``run``) and offline tools.

``run`` flags override the OperatorConfiguration file (``--config``); flags not given leave the file's value.
Hidden flags exist for tests and development (short leases, extra controller setup hooks).
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from dynamo_operator.runtime.manager import Manager
    from dynamo_operator.settings import OperatorSettings


class _Commands(click.Group):
    """The group, with the offline tools imported only when named: ``render`` must start in well under a
    second, and the profiling copier alone pulls in the Kubernetes client (half a second of imports)."""

    LAZY = {
        "render": ("dynamo_operator.render.cli", "render_command"),
        "publish-profiling-output": ("dynamo_operator.copier", "command"),  # the DGDR Job's output-copier
        "etcd-tunnel": ("dynamo_operator.etcdtunnel", "command"),  # graph pods: TLS to etcd (etcdAuth)
        "nats-reload": ("dynamo_operator.natsreload", "command"),  # the NATS pod: accounts file -> SIGHUP
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.LAZY})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY and name not in self.commands:
            module, attr = self.LAZY[name]
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dynamo-platform", prog_name="dynamo-operator")
def main() -> None:
    """NVIDIA Dynamo Kubernetes operator."""


# ------------------------------------------------------------------------------------------------------------
# run
# ------------------------------------------------------------------------------------------------------------


def _load_setup(spec: str) -> Callable:
    mod, _, fn = spec.partition(":")
    return getattr(importlib.import_module(mod), fn or "setup")


# ``run`` flags that override runtime settings of the same name (None: not given)
_RUNTIME_FLAGS = (
    "kubeconfig",
    "health_probe_bind_address",
    "metrics_bind_address",
    "metrics_service_bind_address",
    "metrics_secure",
    "metrics_cert_dir",
    "leader_elect",
    "leader_election_id",
    "leader_election_namespace",
    "operator_version",
    "log_level",
    "lease_duration",
    "renew_deadline",
    "retry_period",
    "scope_lease_duration",
    "scope_lease_renew_interval",
)


def _settings(opts: dict[str, Any]) -> OperatorSettings:
    """The configuration file, overridden by the flags given."""
    from dynamo_operator.settings import load_config, settings_from_config
    from dynamo_operator.tunables import Tunables

    tunables = Tunables()
    if opts["cache_sync_timeout"] is not None:
        runtime = dataclasses.replace(tunables.runtime, cache_sync_timeout=opts["cache_sync_timeout"])
        tunables = dataclasses.replace(tunables, runtime=runtime)
    return settings_from_config(
        load_config(opts["config_path"]),
        tunables,
        restricted_namespace=opts["restricted"],
        **{k: opts[k] for k in _RUNTIME_FLAGS},
    )


def _manager(settings: OperatorSettings, opts: dict[str, Any]) -> Manager:
    """A Manager with the product's controllers and webhooks (unless told otherwise) and extra setups."""
    from dynamo_operator.runtime.manager import Manager

    mgr = Manager(settings.runtime)
    defaults = not opts["no_default_controllers"]
    if defaults:
        from dynamo_operator.controllers import setup

        setup(mgr, settings.config, settings.tunables)
    if opts["webhooks"] if opts["webhooks"] is not None else defaults:
        from dynamo_operator.webhooks import setup_webhooks

        setup_webhooks(
            mgr,
            settings.config,
            host=opts["webhook_host"],
            port=opts["webhook_port"],
            cert_dir=opts["webhook_cert_dir"],
            url_base=opts["webhook_url_base"],
            tunables=settings.tunables.webhooks,
        )
    for spec in opts["setups"]:
        _load_setup(spec)(mgr)
    return mgr


@main.command()
@click.option(
    "--kubeconfig", envvar="KUBECONFIG", default=None, help="Kubeconfig path (default: in-cluster)."
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="OperatorConfiguration file.",
)
@click.option(
    "--health-probe-bind-address", default=None, help="Health probes address, e.g. :8081 (0 disables)."
)
@click.option("--metrics-bind-address", default=None, help="Metrics address, e.g. :8080 (0 disables).")
@click.option(
    "--metrics-service-bind-address",
    default=None,
    help="Also serve metrics here for the metrics Service (the chart: :8443), secured as below; the "
    "--metrics-bind-address listener then serves plain HTTP and must be on loopback (127.0.0.1:8080).",
)
@click.option(
    "--metrics-secure/--metrics-insecure",
    default=None,
    help="HTTPS + TokenReview/SubjectAccessReview (default) or plain HTTP.",
)
@click.option("--metrics-cert-dir", default=None, help="Directory with tls.crt/tls.key for metrics.")
@click.option("--leader-elect/--no-leader-elect", default=None, help="Leader election on a Lease.")
@click.option("--leader-election-id", default=None)
@click.option("--leader-election-namespace", default=None)
@click.option(
    "--namespace-restricted",
    "restricted",
    default=None,
    metavar="NS",
    help="Namespace-restricted mode (deprecated; development and testing only).",
)
@click.option(
    "--operator-version", default=None, help="Version in the namespace-scope marker's holder identity."
)
@click.option("--log-level", default=None, type=click.Choice(["debug", "info", "warn", "error"]))
@click.option("--leader-elect-lease-duration", "lease_duration", type=float, default=None, hidden=True)
@click.option("--leader-elect-renew-deadline", "renew_deadline", type=float, default=None, hidden=True)
@click.option("--leader-elect-retry-period", "retry_period", type=float, default=None, hidden=True)
@click.option("--scope-lease-duration", type=float, default=None, hidden=True)
@click.option("--scope-lease-renew-interval", type=float, default=None, hidden=True)
@click.option(
    "--cache-sync-timeout",
    type=float,
    default=None,
    hidden=True,
    help="Seconds the caches may take to sync before the process exits 1 (tests).",
)
@click.option(
    "--setup",
    "setups",
    multiple=True,
    hidden=True,
    help="module:function called with the Manager (extra controllers, tests).",
)
@click.option("--no-default-controllers", is_flag=True, hidden=True)
@click.option(
    "--webhooks/--no-webhooks",
    "webhooks",
    default=None,
    help="Admission/conversion webhook server (default: on, unless --no-default-controllers).",
)
@click.option("--webhook-host", default=None, help="Webhook bind host (config server.webhook.host).")
@click.option("--webhook-port", type=int, default=None, help="Webhook port (config server.webhook.port).")
@click.option("--webhook-cert-dir", default=None, help="Webhook certificate directory (manual mode).")
@click.option(
    "--webhook-url-base",
    default=None,
    help="https://HOST:PORT the API server uses to reach the webhook by URL (local runs); added to the "
    "serving certificate's SANs.",
)
def run(**opts: Any) -> None:
    """Run the operator: caches, controllers (on the leader), health and metrics servers."""
    from dynamo_operator.runtime.log import get_logger, setup_logging

    setup_logging("info", "json")
    log = get_logger("setup")
    try:
        settings = _settings(opts)
    except Exception as e:
        log.error("invalid configuration", error=str(e), config=opts["config_path"])
        sys.exit(2)
    setup_logging(settings.runtime.log_level, settings.runtime.log_format)
    try:
        mgr = _manager(settings, opts)
    except Exception as e:
        log.error("setup failed", error=str(e))
        sys.exit(1)
    from dynamo_operator.api.registry import build_models

    build_models()
    code = mgr.run()
    log.info("exiting", exitCode=code, reason=mgr.stop_reason or None)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
