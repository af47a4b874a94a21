"""`helm dynamo install` reads release, chart, namespace and values out of helm install arguments."""

import pytest
from dynamo_plugin.helmargs import HelmArgsError, parse_install_args


def test_full_command_line() -> None:
    args = parse_install_args(
        [
            "dynamo-platform",
            "./charts/platform",
            "-n",
            "dynamo-system",
            "--create-namespace",
            "-f",
            "a.yaml,b.yaml",
            "--values=c.yaml",
            "--set",
            "nats.enabled=false",
            "--set-string",
            "x=1",
            "--timeout",
            "5m",
            "--wait",
            "--kube-context",
            "kind",
        ]
    )
    assert (args.release_name, args.chart, args.namespace) == (
        "dynamo-platform",
        "./charts/platform",
        "dynamo-system",
    )
    assert args.values_files == ["a.yaml", "b.yaml", "c.yaml"]
    assert args.set_values == ["nats.enabled=false"] and args.set_string_values == ["x=1"]
    assert args.create_namespace and args.kube_context == "kind"


def test_generate_name_and_flags_before_positionals() -> None:
    args = parse_install_args(["--namespace=ns", "--generate-name", "--dry-run", "chart.tgz"])
    assert args.chart == "chart.tgz" and args.release_name is None and args.namespace == "ns"


@pytest.mark.parametrize("argv", [[], ["only-one"], ["a", "b", "c"], ["a", "b", "--set"]])
def test_bad_command_lines(argv: list[str]) -> None:
    with pytest.raises(HelmArgsError):
        parse_install_args(argv)
