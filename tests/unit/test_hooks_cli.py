"""The hook Job argv contract where no cluster is involved: usage errors exit 2.

Exit statuses and output that involve the API (conflicts allowed / blocked, JSON, unreachable API, idempotent
ensure commands, refused repairs) run against a real apiserver in
``tests/integration/test_hooks_checks_cluster.py`` and ``tests/integration/test_hooks_cluster.py``."""

from click.testing import CliRunner
from dynamo_hooks import cli as hooks_cli
from dynamo_hooks.secrets import Action


def invoke(*args: str):
    return CliRunner().invoke(hooks_cli.main, list(args))


def test_usage_error_exits_2() -> None:
    assert invoke("check-conflicts", "--release-name", "a").exit_code == 2


def _record_steps(monkeypatch, fail: str = "") -> list[str]:
    """The two Secret steps recorded instead of run (``fail``: the one that raises the hooks' HookError);
    the API connection is not made."""
    ran: list[str] = []

    def step(name: str):
        def run(cluster, namespace, secret, *rest):
            ran.append(name)
            if name == fail:
                raise hooks_cli.HookError(f"{secret} cannot be written")
            return hooks_cli.EnsureResult(f"Secret {namespace}/{secret}", Action.CREATED, "made")

        return run

    monkeypatch.setattr(hooks_cli, "connect", lambda *a: object())
    monkeypatch.setattr(hooks_cli, "ensure_mpi_ssh_secret", step("mpi"))
    monkeypatch.setattr(hooks_cli, "ensure_webhook_certs", step("certs"))
    return ran


MPI = ("ensure-mpi-ssh-secret", "--namespace", "ns", "--secret-name", "mpi")
CERTS = ("ensure-webhook-certs", "--namespace", "ns", "--secret-name", "tls", "--service-name", "svc")


def test_the_chained_steps_run_in_order(monkeypatch) -> None:
    """The chart's install Job runs every step in one pod, in the order of its argv."""
    ran = _record_steps(monkeypatch)
    result = invoke(*CERTS, *MPI)
    assert result.exit_code == 0, result.output
    assert ran == ["certs", "mpi"]
    assert "Secret ns/tls: created" in result.output and "Secret ns/mpi: created" in result.output


def test_a_usage_error_in_any_step_runs_no_step(monkeypatch) -> None:
    """Every step's arguments are parsed before the first runs: a bad argv writes nothing."""
    ran = _record_steps(monkeypatch)
    result = invoke(*MPI, "ensure-webhook-certs", "--namespace", "ns")  # no --service-name
    assert result.exit_code == 2 and ran == [], (result.output, ran)


def test_the_first_failing_step_ends_the_run(monkeypatch) -> None:
    """A step that fails ends the Job with its status; the steps after it do not run."""
    ran = _record_steps(monkeypatch, fail="mpi")
    result = invoke(*MPI, *CERTS)
    assert result.exit_code == 1 and ran == ["mpi"], (result.output, ran)
    # the Job's log names the step that ended it (three steps share one pod)
    assert "dynamo-hooks ensure-mpi-ssh-secret: mpi cannot be written" in result.output
