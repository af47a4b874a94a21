"""Packaging facts: one version source, an SPDX licence with its text, declared dependency bounds."""

import importlib.metadata
import re
import tomllib
from pathlib import Path

import dynamo_operator
import yaml

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())

# Every file that states the platform's own version; each must say what dynamo_operator.__version__ says.
VERSIONED_YAML = {
    "plugin/plugin.yaml": "version",
    "charts/platform/Chart.yaml": "appVersion",
    "charts/platform/components/operator/Chart.yaml": "appVersion",
}


def test_the_version_is_written_once():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "dynamo_operator.__version__"}
    for path, key in VERSIONED_YAML.items():
        doc = yaml.safe_load((REPO / path).read_text())
        assert str(doc[key]) == dynamo_operator.__version__, (
            f"{path}: {key} is {doc[key]!r}, but dynamo_operator.__version__ (the one version source) is "
            f"{dynamo_operator.__version__!r}; change both together"
        )
    assert importlib.metadata.version("dynamo-platform") == dynamo_operator.__version__, "run `make venv`"


def test_license_is_an_spdx_expression_with_its_text():
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def _requirement(name: str) -> str:
    found = [r for r in PYPROJECT["project"]["dependencies"] if re.match(rf"{name}\b", r)]
    assert len(found) == 1, f"{name} is declared once in [project].dependencies"
    return found[0]


def test_dependencies_used_directly_are_declared_with_bounds():
    kubernetes = _requirement("kubernetes")
    assert "<" in kubernetes, "kubernetes needs an upper bound (the dynamic client uses its internals)"
    urllib3 = _requirement("urllib3")
    assert ">=" in urllib3 and "<" in urllib3


def test_test_and_lint_extras_are_separate_and_both_installed():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert set(extras) == {"test", "lint"}
    assert any(r.startswith("ruff") for r in extras["lint"])
    assert not any(r.startswith("ruff") for r in extras["test"])
    # both reach `make venv` through its hashed lock (tests/unit/test_dev_lock.py keeps the lock current)
    lock = (REPO / "requirements-dev.lock").read_text().splitlines()
    inputs = next(x for x in lock if x.startswith("# Inputs"))
    assert all(r in inputs.split(": ", 1)[1].split(", ") for r in extras["test"] + extras["lint"])
