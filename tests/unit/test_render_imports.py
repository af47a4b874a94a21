"""``dynamo-operator render`` loads only what rendering needs (issue 34, item 5: the CLI starts in under
0.3 s, measured by the benchmark's row 7). Seconds are the machine's; which modules load is the code's,
so this test counts those, in a fresh interpreter running the command as a user does."""

from __future__ import annotations

import json
import subprocess
import sys

from dynamo_localcluster.cluster import REPO_ROOT

# What rendering needs beside the standard library: the CLI, YAML, and pydantic (input is validated with
# the API models).
NEEDED = {
    "click",
    "yaml",
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "typing_extensions",
    "typing_inspection",
}
# Parts of the operator a render has no use for (the Kubernetes client alone is half a second of imports;
# the configuration's pydantic types are for ``--config``, the v1alpha1 models and the DGDR conversion for
# other inputs, the CRD generator and registry for ``make crds``).
UNNEEDED = (
    "dynamo_operator.runtime",
    "dynamo_operator.controllers",
    "dynamo_operator.webhooks",
    "dynamo_operator.copier",
    "dynamo_operator.settings",
    "dynamo_operator.pki",
    "dynamo_operator.api.config.types",
    "dynamo_operator.api.v1alpha1",
    "dynamo_operator.api.dgdr_conversion",
    "dynamo_operator.api.crdgen",
    "dynamo_operator.api.registry",
)
# The API models a DGD's render validates with: every other model stays unbuilt (``defer_build``), since
# building the validators of all of them was most of the API's import time.
BUILT = ["DynamoComponentDeployment", "DynamoGraphDeployment"]


def _render_in_fresh_interpreter(*args: str, report: str) -> tuple[str, list]:
    """Run ``dynamo-operator render ARGS`` as a user does, in a new interpreter; returns its stdout and the
    JSON that ``report`` (an expression evaluated after the render) gives."""
    code = (
        "import json, sys\n"
        "from dynamo_operator import cli\n"
        f"sys.argv = ['dynamo-operator', 'render', *{list(args)!r}]\n"
        "try:\n"
        "    cli.main()\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        f"print(json.dumps({report}), file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return out.stdout, json.loads(out.stderr.strip().splitlines()[-1])


def test_render_loads_only_what_rendering_needs():
    stdout, loaded = _render_in_fresh_interpreter(
        "-f", str(REPO_ROOT / "examples/vllm-agg.yaml"), report="sorted(sys.modules)"
    )
    assert "kind: Deployment" in stdout  # it rendered
    packages = {m.split(".")[0] for m in loaded if not m.startswith("_")} - set(sys.stdlib_module_names)
    assert packages - {"dynamo_operator", "cython_runtime"} <= NEEDED, sorted(packages - NEEDED)
    assert not [m for m in loaded if m.startswith(UNNEEDED)], [m for m in loaded if m.startswith(UNNEEDED)]
    assert "logging" not in loaded  # the operator's logging is for ``run``


def test_render_builds_only_the_models_it_validates_with():
    stdout, built = _render_in_fresh_interpreter(
        "-f",
        str(REPO_ROOT / "examples/vllm-agg.yaml"),
        report="sorted(n for n, v in vars(sys.modules['dynamo_operator.api.v1beta1.models']).items() "
        "if isinstance(v, type) and v.__dict__.get('__pydantic_complete__'))",
    )
    assert "kind: Deployment" in stdout
    assert built == BUILT


def test_a_configuration_file_loads_the_configuration_types(tmp_path):
    """The other side of keeping them out: with ``--config`` the file is validated with them."""
    config = tmp_path / "config.yaml"
    config.write_text("infrastructure:\n  natsAddress: nats://nats.dynamo:4222\n")
    _, loaded = _render_in_fresh_interpreter(
        "-f",
        str(REPO_ROOT / "examples/vllm-agg.yaml"),
        "--config",
        str(config),
        report="sorted(sys.modules)",
    )
    assert "dynamo_operator.api.config.types" in loaded
