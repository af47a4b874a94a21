"""Every environment variable the chart gives the operator's or the hooks' containers is read by our code:
a variable nothing reads looks like a setting to whoever reads the chart, and changing it does nothing."""

from __future__ import annotations

import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = REPO_ROOT / "charts" / "platform" / "components" / "operator" / "templates"
READERS = ("operator", "hooks", "plugin")
ENV_NAME = re.compile(r"^\s+- name: ([A-Z][A-Z0-9_]+)\s*$", re.M)


def _set_by_the_chart() -> dict[str, str]:
    return {
        name: path.name for path in TEMPLATES.glob("*.yaml") for name in ENV_NAME.findall(path.read_text())
    }


def _python_source() -> str:
    return "\n".join(p.read_text() for root in READERS for p in (REPO_ROOT / root).rglob("*.py"))


def test_the_chart_sets_the_variables_the_operator_reads():
    assert {"POD_NAME", "POD_NAMESPACE", "POD_IP"} <= set(_set_by_the_chart())


def test_every_variable_the_chart_sets_is_read():
    source = _python_source()
    unread = {
        name: template
        for name, template in _set_by_the_chart().items()
        if f'"{name}"' not in source and f"'{name}'" not in source
    }
    assert not unread, f"set by the chart, read by no code under {READERS} (remove or read them): {unread}"
