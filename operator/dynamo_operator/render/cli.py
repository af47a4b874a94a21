"""``dynamo-operator render``: print every object the operator would create, offline.

What admission would warn about (a field accepted with no effect, ``render/notices.py``) goes to stderr as
``Warning: <source>: <Kind ns/name>: <path>: <why>``; the YAML on stdout stays clean for ``kubectl apply``.

Registered on the ``dynamo-operator`` group by the lead as ``render_command``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import yaml

from dynamo_operator.api.config import ConfigError, load_operator_config

from . import RenderContext, RenderError, build_index, notices, ours, render_all
from .context import INTEGRATION_GROUPS, INTEGRATION_KINDS
from .errors import object_ref

# Plain scalars Go's YAML 1.1 decoders (kubectl, sigs.k8s.io/yaml) read as booleans but PyYAML writes
# unquoted: `value: n` (NIXL_TELEMETRY_ENABLE) would reach the apiserver as false and be refused.
_YAML11_BOOLS = frozenset({"y", "yes", "n", "no", "on", "off", "true", "false"})


class _KubeDumper(yaml.SafeDumper):
    """Safe YAML that kubectl reads back exactly as rendered."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if data.lower() in _YAML11_BOOLS:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="'")
    return dumper.represent_str(data)


_KubeDumper.add_representer(str, _represent_str)


def dump_yaml(docs: list[dict]) -> str:
    """A YAML stream of ``docs`` for ``kubectl apply -f -``."""
    return yaml.dump_all(docs, Dumper=_KubeDumper, sort_keys=False, default_flow_style=False)


def _load_stream(source: str) -> list[tuple[str, dict]]:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text()
    except OSError as exc:
        raise click.ClickException(f"{source}: {exc.strerror or exc}") from exc
    docs = []
    try:
        for i, doc in enumerate(yaml.safe_load_all(text)):
            if doc is None:
                continue
            docs.append((f"{source}#{i}", doc))
    except yaml.YAMLError as exc:
        raise click.ClickException(f"{source}: not valid YAML: {exc}") from exc
    return docs


def load_config(path: str | None) -> Any:
    """The OperatorConfiguration (validated, defaulted); None when no file is given."""
    if path is None:
        return None
    try:
        return load_operator_config(path)
    except (OSError, ConfigError) as exc:
        raise click.ClickException(f"operator configuration {path}: {exc}") from exc


@click.command("render")
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    required=True,
    help="YAML stream of DGDs / DCDs (v1alpha1 or v1beta1); - for stdin.",
)
@click.option(
    "--config", "config_path", type=click.Path(exists=True, dir_okay=False), help="OperatorConfiguration."
)
@click.option("--namespace", "-n", default=None, help="Namespace for objects that do not name one [default].")
@click.option(
    "--pull-secrets",
    type=click.Path(exists=True, dir_okay=False),
    help="YAML stream of Secrets to index for image pull secret discovery (stands in for the cluster).",
)
@click.option(
    "--checkpoints",
    type=click.Path(exists=True, dir_okay=False),
    help="YAML stream of DynamoCheckpoints (with their status) standing in for the cluster's: the IDs "
    "checkpointRef restores and the readiness WaitForCheckpoint waits for. Without it every checkpoint "
    "reads as not created yet.",
)
@click.option("--operator-version", default=None, help="Version stamped on children [the package version].")
@click.option(
    "--detected",
    "detected",
    multiple=True,
    type=click.Choice(sorted({*INTEGRATION_GROUPS, *INTEGRATION_KINDS})),
    help="Render as if the cluster served this integration's API (repeatable), e.g. --detected grove for "
    "the PodCliqueSet pathway, --detected lws for LeaderWorkerSets, --detected dra for GPU memory service "
    "claims, --detected inferencePool for an EPP's InferencePool, --detected istio for its DestinationRule "
    "(and VirtualServices; istioVirtualService / istioDestinationRule for one kind of the two); "
    "the configuration's key (orchestrators.<name>.enabled, dra.enabled, serviceMesh.enabled) in --config "
    "overrides it either way.",
)
def render_command(
    files: tuple[str, ...],
    config_path: str | None,
    namespace: str | None,
    pull_secrets: str | None,
    checkpoints: str | None,
    operator_version: str | None,
    detected: tuple[str, ...],
) -> None:
    """Print, as a YAML stream, every object the operator would create for the input, recursively."""
    from dynamo_operator import __version__

    index = build_index(doc for _, doc in _load_stream(pull_secrets)) if pull_secrets else None
    kwargs: dict[str, Any] = {"operator_config": load_config(config_path)}
    if index is not None:
        kwargs["pull_secrets"] = index
    kwargs["operator_version"] = operator_version or __version__
    kwargs["detected"] = frozenset(detected)
    if checkpoints:
        kwargs["checkpoints"] = {
            doc["metadata"]["name"]: doc
            for _, doc in _load_stream(checkpoints)
            if isinstance(doc, dict)
            and doc.get("kind") == "DynamoCheckpoint"
            and (doc.get("metadata") or {}).get("name")
        }
    ctx = RenderContext(**kwargs)
    out: list[dict] = []
    for source in files:
        for where, doc in _load_stream(source):
            if isinstance(doc, dict):
                meta = doc.setdefault("metadata", {}) if isinstance(doc.get("metadata", {}), dict) else None
                if meta is not None and not meta.get("namespace"):
                    meta["namespace"] = namespace or "default"
            if isinstance(doc, dict) and not ours(doc):  # the user's own ConfigMap, Secret...: kubectl's
                click.echo(f"{where}: {object_ref(doc)}: not an nvidia.com object, applied as is", err=True)
                continue
            try:
                out.extend(render_all(doc, ctx))
            except RenderError as exc:
                raise click.ClickException(f"{where}: {exc}") from exc
            except Exception as exc:  # a bug, but still name the object
                ref = object_ref(doc) if isinstance(doc, dict) else where
                raise click.ClickException(f"{where}: {ref}: cannot render: {exc}") from exc
            for text in notices.warnings(doc):  # what admission says too (kubectl: "Warning: ...")
                click.echo(f"Warning: {where}: {object_ref(doc)}: {text}", err=True)
    click.echo(dump_yaml(out), nl=False)


__all__ = ["dump_yaml", "render_command"]
