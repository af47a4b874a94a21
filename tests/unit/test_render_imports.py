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
# Parts of the operator a render has no use for (the Kubernetes client alone is half a second of imports).
UNNEEDED = (
    "dynamo_operator.runtime",
    "dynamo_operator.controllers",
    "dynamo_operator.webhooks",
    "dynamo_operator.copier",
)


def test_render_loads_only_what_rendering_needs():
    code = (
        "import json, sys\n"
        "from dynamo_operator import cli\n"
        f"sys.argv = ['dynamo-operator', 'render', '-f', {str(REPO_ROOT / 'examples/vllm-agg.yaml')!r}]\n"
        "try:\n"
        "    cli.main()\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert "kind: Deployment" in out.stdout  # it rendered
    loaded = json.loads(out.stderr.strip().splitlines()[-1])
    packages = {m.split(".")[0] for m in loaded if not m.startswith("_")} - set(sys.stdlib_module_names)
    assert packages - {"dynamo_operator", "cython_runtime"} <= NEEDED, sorted(packages - NEEDED)
    assert not [m for m in loaded if m.startswith(UNNEEDED)], [m for m in loaded if m.startswith(UNNEEDED)]
    assert "logging" not in loaded  # the operator's logging is for ``run``
