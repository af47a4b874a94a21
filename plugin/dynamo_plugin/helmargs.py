"""Read what preflight needs out of a `helm install` command line, without re-implementing helm.

`helm dynamo install` forwards its arguments to `helm install` untouched; it only needs the release name,
the chart, the namespace, the values inputs and `--create-namespace`. Flags that take a value are listed so
their values are not mistaken for the release name or the chart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# helm install flags (v3) that consume the following argument when written without '='.
VALUE_FLAGS = {
    "--namespace",
    "-n",
    "--values",
    "-f",
    "--set",
    "--set-string",
    "--set-file",
    "--set-json",
    "--set-literal",
    "--version",
    "--timeout",
    "--output",
    "-o",
    "--description",
    "--name-template",
    "--post-renderer",
    "--post-renderer-args",
    "--repo",
    "--username",
    "--password",
    "--ca-file",
    "--cert-file",
    "--key-file",
    "--keyring",
    "--kubeconfig",
    "--kube-context",
    "--kube-apiserver",
    "--kube-as-user",
    "--kube-as-group",
    "--kube-ca-file",
    "--kube-token",
    "--kube-tls-server-name",
    "--registry-config",
    "--repository-cache",
    "--repository-config",
    "--labels",
    "-l",
    "--dry-run",
    "--burst-limit",
    "--qps",
    "--hide-notes",
}
# Flags above whose value is optional (`--dry-run` alone is valid); only their `=value` form takes a value.
OPTIONAL_VALUE_FLAGS = {"--dry-run", "--hide-notes"}


class HelmArgsError(ValueError):
    """The helm install command line cannot be understood."""


@dataclass
class InstallArgs:
    release_name: str | None = None
    chart: str | None = None
    namespace: str | None = None
    values_files: list[str] = field(default_factory=list)
    set_values: list[str] = field(default_factory=list)
    set_string_values: list[str] = field(default_factory=list)
    create_namespace: bool = False
    generate_name: bool = False
    kubeconfig: str | None = None
    kube_context: str | None = None


def parse_install_args(argv: list[str]) -> InstallArgs:
    """Extract the release, chart, namespace and values from `helm install` arguments."""
    out = InstallArgs()
    positionals: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            positionals += argv[i + 1 :]
            break
        if not arg.startswith("-") or arg == "-":
            positionals.append(arg)
            i += 1
            continue
        name, eq, inline = arg.partition("=")
        if name in VALUE_FLAGS and not eq and name not in OPTIONAL_VALUE_FLAGS:
            if i + 1 >= len(argv):
                raise HelmArgsError(f"helm install flag {name} needs a value")
            value = argv[i + 1]
            i += 2
        elif eq:
            value = inline
            i += 1
        elif (
            name.startswith("-") and not name.startswith("--") and len(name) > 2 and name[:2] in ("-n", "-f")
        ):
            value = name[2:]  # -nfoo / -fvalues.yaml
            name = name[:2]
            i += 1
        else:
            value = ""
            i += 1
        if name in ("--namespace", "-n"):
            out.namespace = value
        elif name in ("--values", "-f"):
            out.values_files += [v for v in value.split(",") if v]
        elif name == "--set":
            out.set_values.append(value)
        elif name == "--set-string":
            out.set_string_values.append(value)
        elif name == "--create-namespace":
            out.create_namespace = value.lower() != "false"
        elif name in ("--generate-name", "-g"):
            out.generate_name = value.lower() != "false"
        elif name == "--kubeconfig":
            out.kubeconfig = value
        elif name == "--kube-context":
            out.kube_context = value
    if out.generate_name:
        if len(positionals) != 1:
            raise HelmArgsError("with --generate-name, helm install takes exactly one argument: the chart")
        out.chart = positionals[0]
    else:
        if len(positionals) != 2:
            raise HelmArgsError(
                f"helm install needs a release name and a chart (got {len(positionals)} argument(s): "
                f"{' '.join(positionals) or 'none'})"
            )
        out.release_name, out.chart = positionals
    return out
