"""The hook Job argv contract where no cluster is involved: usage errors exit 2.

Exit statuses and output that involve the API (conflicts allowed / blocked, JSON, unreachable API, idempotent
ensure commands, refused repairs) run against a real apiserver in
``tests/integration/test_hooks_checks_cluster.py`` and ``tests/integration/test_hooks_cluster.py``."""

from click.testing import CliRunner
from dynamo_hooks import cli as hooks_cli


def invoke(*args: str):
    return CliRunner().invoke(hooks_cli.main, list(args))


def test_usage_error_exits_2() -> None:
    assert invoke("check-conflicts", "--release-name", "a").exit_code == 2
