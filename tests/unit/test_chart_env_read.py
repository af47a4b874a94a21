"""Every environment variable the chart gives the operator's or the hooks' containers is read by our code:
a variable nothing reads looks like a setting to whoever reads the chart, and changing it does nothing."""

from __future__ import annotations

import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = REPO_ROOT / "charts" / "platform" / "components" / "operator" / "templates"
READERS = ("operator", "hooks", "plugin")
ENV_NAME = re.compile(r"^\s+- name: ([A-Z][A-Z0-9_]+)\s*$", re.M)
READS = re.compile(r"environ|getenv|envvar=")


def _set_by_the_chart() -> dict[str, str]:
    return {
        name: path.name for path in TEMPLATES.glob("*.yaml") for name in ENV_NAME.findall(path.read_text())
    }


def _env_reads() -> str:
    """The lines of our code that read the environment (``os.environ``, ``os.getenv``, a click ``envvar``):
    a name merely quoted elsewhere (a label, a pod's env the renderer writes) is not a read."""
    lines = (
        line
        for root in READERS
        for path in (REPO_ROOT / root).rglob("*.py")
        for line in path.read_text().splitlines()
    )
    return "\n".join(line for line in lines if READS.search(line))


def test_the_chart_sets_the_variables_the_operator_reads():
    assert {"POD_NAME", "POD_NAMESPACE", "POD_IP"} <= set(_set_by_the_chart())


def test_every_variable_the_chart_sets_is_read():
    source = _env_reads()
    unread = {
        name: template
        for name, template in _set_by_the_chart().items()
        if f'"{name}"' not in source and f"'{name}'" not in source
    }
    assert not unread, f"set by the chart, read by no code under {READERS} (remove or read them): {unread}"
