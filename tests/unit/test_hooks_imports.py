"""The hook Job's entry point stays small (issue 22): making a Secret must not load the operator's webhooks,
controllers and renderer. Counted in a fresh interpreter, the way the Job starts."""

from __future__ import annotations

import json
import subprocess
import sys

MAX_OPERATOR_MODULES = 20


def test_the_hook_entry_point_loads_at_most_20_operator_modules():
    code = (
        "import json, sys\n"
        "from dynamo_hooks import cli, secrets\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'dynamo_operator')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = json.loads(out.stdout)
    assert len(loaded) <= MAX_OPERATOR_MODULES, loaded
    heavy = [m for m in loaded if m.split(".")[1:2] in (["webhooks"], ["controllers"], ["render"])]
    assert not heavy, heavy
    assert "dynamo_operator.certsecret" in loaded  # the shared certificate planner, and nothing around it
