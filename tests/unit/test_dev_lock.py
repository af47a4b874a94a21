"""The development environment installs from a hashed lock: it runs as root where the real node runs, so an
unpinned version range resolved at install time (what `make venv` did before) could bring any release of any
dependency onto the machine. The lock must cover pyproject.toml as it is now, and the Makefile must use it."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "requirements-dev.lock"


def _lock_module():
    spec = importlib.util.spec_from_file_location("image_lock", REPO / "image" / "lock.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pins() -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of every package the lock pins."""
    pins: dict[str, tuple[str, list[str]]] = {}
    current = None
    for line in LOCK.read_text().splitlines():
        if m := re.match(r"^([A-Za-z0-9_.-]+)==(\S+) \\$", line):
            current = canonicalize_name(m[1])
            pins[current] = (m[2], [])
        elif m := re.match(r"^\s+--hash=sha256:([0-9a-f]{64})( \\)?$", line):
            pins[current][1].append(m[1])
    return pins


def test_the_lock_was_made_from_pyproject_as_it_is():
    inputs = next(line for line in LOCK.read_text().splitlines() if line.startswith("# Inputs: "))
    assert inputs.removeprefix("# Inputs: ").split(", ") == _lock_module().dev_requirements(), (
        "pyproject.toml's requirements changed since requirements-dev.lock was made: run `make image-lock`"
    )


def test_every_requirement_is_pinned_by_a_version_it_allows_with_hashes():
    pins = _pins()
    for text in _lock_module().dev_requirements():
        req = Requirement(text)
        version, hashes = pins[canonicalize_name(req.name)]
        assert req.specifier.contains(version, prereleases=True), (text, version)
        assert hashes, f"{req.name} has no hash"
    assert all(hashes for _, hashes in pins.values())


def test_make_venv_installs_only_the_hashed_lock_and_the_project_itself():
    make = (REPO / "Makefile").read_text()
    recipe = make[make.index("$(STAMP): ") :].split("\n\n", 1)[0]
    installs = [line.strip() for line in recipe.splitlines() if "pip install" in line]
    assert installs == [
        "$(PY) -m pip install --quiet --require-hashes --no-deps -r requirements-dev.lock",
        "$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .",
    ]
    assert "requirements-dev.lock" in recipe.splitlines()[0]  # a changed lock re-installs the venv
    # and the project's own build backend is one the lock pins
    backend = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    for text in backend:
        req = Requirement(text)
        assert req.specifier.contains(_pins()[canonicalize_name(req.name)][0]), text
