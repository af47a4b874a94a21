"""Regenerates the hashed lock files the images install from (``make image-lock``).

Each lock pins every wheel (the whole dependency closure) to one version and its sha256, resolved by pip for
CPython 3.11 on manylinux x86_64: the interpreter and platform of the images (Debian bookworm's python3),
which is also this machine's. The images then install with ``pip install --no-index --no-deps
--require-hashes``, so a build never resolves anything and a changed or substituted wheel fails the build.

- ``image/build.lock``: setuptools and wheel, to build the project's own wheel without build isolation.
- ``image/operator/requirements.lock``: the operator's runtime dependencies (pyproject.toml ``dependencies``).
- ``requirements-dev.lock``: the development environment (``make venv``: the project's dependencies, its
  ``test`` and ``lint`` extras, pip, setuptools and wheel). It runs as root where the real node runs, so it
  installs like the images, ``--require-hashes``. Resolved here, but each pinned version lists the sha256 of
  every file PyPI serves for it, so Python 3.12 and 3.13 machines find their own wheels in it.
- ``image/runtime/requirements.lock``: Dynamo's CPU runtime (``ai-dynamo`` with the frontend and the mocker).
  ``ai-dynamo`` 1.6.1 requires ``aisimulate``, whose PyPI release is a stub that downloads the real wheel from
  another index at build time; neither it nor the engines are needed by the frontend and the mocker, so the
  two ``ai-dynamo`` wheels are locked without their requirements and their CPU requirements are locked
  explicitly.

Usage: python image/lock.py [build|operator|runtime|dev ...]
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import tempfile
import tomllib
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

BUILD_REQUIREMENTS = ["setuptools>=69,<81", "wheel>=0.43"]
DYNAMO_VERSION = "1.6.1"
# ai-dynamo's core requirements minus aisimulate (see the module docstring), plus uvloop, which
# dynamo.mocker imports at start.
RUNTIME_REQUIREMENTS = [
    "aiohttp>=3.14.3,<4.0",
    "certifi>=2026.10.19",
    "kubernetes>=32.0.1,<33.0.0",
    "msgspec>=0.19.0",
    "prometheus-client>=0.23.1,<1.0",
    "pyzmq>=26.0.0",
    "redis>=6.2.0,<9.0.0",
    "tqdm>=4.0.0",
    "transformers>=4.56.0",
    "typing-extensions>=4.10.0",
    "zstandard>=0.23.0,<1.0",
    "uvloop",
]
RUNTIME_NO_DEPS = [f"ai-dynamo=={DYNAMO_VERSION}", f"ai-dynamo-runtime=={DYNAMO_VERSION}"]


DEV_LOCK = REPO / "requirements-dev.lock"
DEV_TOOLS = ["pip", "setuptools>=77", "wheel"]  # setuptools 77: the build backend pyproject.toml names


def operator_requirements() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return list(project["dependencies"])


def dev_requirements() -> list[str]:
    """What ``make venv`` installs: the dependencies, the test and lint extras, and the build tools."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return [*project["dependencies"], *extras["test"], *extras["lint"], *DEV_TOOLS]


def every_file_hash(name: str, version: str) -> list[str]:
    """The sha256 of every file PyPI serves for one release (wheels for each Python and platform), from its
    simple index (the JSON form, PEP 691)."""
    req = urllib.request.Request(
        f"https://pypi.org/simple/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        files = json.loads(r.read())["files"]
    return sorted({f["hashes"]["sha256"] for f in files if _file_version(f["filename"]) == version})


def _file_version(filename: str) -> str | None:
    """The version a distribution file carries: ``name-ver-tags.whl`` (names escape "-" as "_"), or an
    sdist's ``name-ver.tar.gz``."""
    if filename.endswith(".whl"):
        return filename.split("-")[1]
    for suffix in (".tar.gz", ".zip"):
        if filename.endswith(suffix):
            return filename.removesuffix(suffix).rsplit("-", 1)[-1]
    return None


def resolve(requirements: list[str], no_deps: bool = False) -> list[dict]:
    """pip's resolution report for ``requirements``: one entry per wheel it would install."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        argv = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--dry-run",
            "--ignore-installed",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            f"--report={report}",
            *(["--no-deps"] if no_deps else []),
            *requirements,
        ]
        subprocess.run(argv, check=True)
        return json.loads(report.read_text())["install"]


def lock_lines(entries: list[dict], every_file: bool = False) -> list[str]:
    lines = []
    for e in sorted(entries, key=lambda e: e["metadata"]["name"].lower()):
        name, version = e["metadata"]["name"], e["metadata"]["version"]
        info = e["download_info"]
        digest = (info.get("archive_info") or {}).get("hashes", {}).get("sha256")
        if not digest:
            raise SystemExit(f"lock: pip reported no sha256 for {name} {version} ({info.get('url')})")
        digests = every_file_hash(name, version) if every_file else [digest]
        if digest not in digests:
            raise SystemExit(f"lock: PyPI does not list the file pip chose for {name} {version}")
        wheel = info["url"].rsplit("/", 1)[-1]
        lines += [f"# {wheel}", f"{name}=={version} \\"]
        lines += [f"    --hash=sha256:{d} \\" for d in digests[:-1]] + [f"    --hash=sha256:{digests[-1]}"]
    return lines


HEADER = {
    "image": [
        "# Generated by image/lock.py (make image-lock): every wheel, pinned with its sha256, for",
        "# CPython 3.11 on manylinux x86_64. Installed with pip --no-index --no-deps --require-hashes;",
        "# do not edit by hand.",
    ],
    "dev": [
        "# Generated by image/lock.py (make image-lock): the development environment (make venv), every",
        "# package pinned, with the sha256 of each file PyPI serves for that version (any CPython 3.11+).",
        "# Installed with pip --require-hashes --no-deps; do not edit by hand.",
    ],
}


def write(path: Path, sources: list[str], entries: list[dict], kind: str = "image") -> None:
    header = [*HEADER[kind], f"# Inputs: {', '.join(sources)}"]
    path.write_text("\n".join([*header, *lock_lines(entries, every_file=kind == "dev")]) + "\n")
    print(f"{path.relative_to(REPO)}: {len(entries)} wheels")


def main(argv: list[str]) -> int:
    if sys.version_info[:2] != (3, 11) or platform.machine() != "x86_64":
        print("lock: run with CPython 3.11 on x86_64 Linux (the images' platform)", file=sys.stderr)
        return 2
    targets = argv[1:] or ["build", "operator", "runtime", "dev"]
    for target in targets:
        if target == "build":
            write(HERE / "build.lock", BUILD_REQUIREMENTS, resolve(BUILD_REQUIREMENTS))
        elif target == "operator":
            reqs = operator_requirements()
            write(HERE / "operator" / "requirements.lock", reqs, resolve(reqs))
        elif target == "runtime":
            entries = resolve(RUNTIME_REQUIREMENTS) + resolve(RUNTIME_NO_DEPS, no_deps=True)
            write(HERE / "runtime" / "requirements.lock", RUNTIME_REQUIREMENTS + RUNTIME_NO_DEPS, entries)
        elif target == "dev":
            reqs = dev_requirements()
            write(DEV_LOCK, reqs, resolve(reqs), kind="dev")
        else:
            print(f"lock: unknown target {target!r} (build, operator, runtime, dev)", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
