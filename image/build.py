"""Builds the project's OCI images with no container engine and no registry (``make image``).

A root filesystem from Debian's packages (``mmdebstrap``, from the Debian sources this machine's apt uses),
the Python wheels of a committed, hashed lock file installed into ``/opt/dynamo`` inside it, then packed as an
OCI image by ``umoci`` and copied to a ``docker-archive`` by ``skopeo`` (for ``docker load``, ``kind load`` or
``ctr images import``). Four recipes:

- ``operator``: the operator and the install hooks (not the local cluster or the plugin); its runtime
  configuration (user, entrypoint, command, env, ports, labels, working directory) is read from
  ``operator/Dockerfile``, so the Dockerfile (for people with Docker) and this build describe one image.
- ``runtime``: Dynamo's CPU runtime from PyPI (``ai-dynamo``: ``dynamo.frontend`` and the ``dynamo.mocker``
  engine), ``curl`` and ``jq`` for the frontend's readiness probe, and a tiny model generated at build time.
- ``mpi``: Debian's OpenMPI, mpi4py and OpenSSH, as root, no wheels: a TensorRT-LLM-shaped multinode image
  without the engine (``mpi_recipe``), for the real node's MPI-over-SSH test and its stub engine.
- ``helm-test``: ``sh``, ``wget`` and ``nc`` from Debian's packages, the chart's ``helm test`` pod on the real
  node (``helm_test_recipe``).

Reproducible: ``SOURCE_DATE_EPOCH`` is the last commit time of the recipe's inputs; every mtime is clamped to
it, .pyc files are hash-based (pip honours SOURCE_DATE_EPOCH) with a fixed hash seed, and the image config and
history carry it as their creation time, so two builds of one commit give the same manifest digest (what the
live Debian archive serves is the one input outside the commit: the installed package versions are recorded).

Builds are cached outside the repository (``~/.cache/dynamo-platform/images/<recipe>-<hash of inputs>``) and
linked at ``.tools/images/<recipe>``; ``--out DIR`` builds afresh into DIR instead (the reproducibility test).
The last line printed is the manifest digest, ``sha256:<64 hex>``.

Single-binary recipes pack one static program of ``make node-tools`` alone (``build_binary_image``): ``pause``
(the pods' sandbox, ``tools/node/pause``), and the services the real node runs, each built from its Go module
at the version of ``tools/node/pins.env``: ``nats`` and ``etcd`` (the bundled NATS and etcd; the chart keeps
naming the public images, the real-node profile sets these by values), ``lws`` (the LeaderWorkerSet
controller) and ``local-path-provisioner`` (the node's dynamic storage).

Usage: python image/build.py RECIPE [--out DIR] [--quiet]   (RECIPE: one of RECIPE_NAMES)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CACHE_ROOT = Path(
    os.environ.get("DYNAMO_IMAGE_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dynamo-platform"
)
LINKS = REPO / ".tools" / "images"
SUITE = "bookworm"
VENV = "/opt/dynamo"
DEBIAN_TOOLS = ("mmdebstrap", "umoci", "skopeo")
# Kept out of the image: documentation, manuals, translations (licence texts stay).
DPKG_EXCLUDES = (
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/locale/*",
    "path-exclude=/usr/share/lintian/*",
)


class BuildError(RuntimeError):
    """A build step failed; the message names the step and what to do."""


@dataclass(frozen=True)
class ImageConfig:
    """The OCI runtime configuration of an image (what a Dockerfile's final stage declares)."""

    user: str
    workdir: str
    entrypoint: list[str]
    cmd: list[str]
    env: dict[str, str]
    ports: list[str]
    labels: dict[str, str]


@dataclass(frozen=True)
class User:
    uid: int
    name: str
    home: str
    create_home: bool = False


@dataclass(frozen=True)
class Recipe:
    name: str
    repository: str
    tag: str
    packages: tuple[str, ...]
    lock: Path | None  # None: Debian's packages only (no virtualenv, no wheels)
    inputs: tuple[Path, ...]
    user: User | None  # None: the image runs as root, a user Debian already has
    own_wheel: bool = False
    model: bool = False
    docker_archive: bool = True
    extra_config: dict = field(default_factory=dict)
    finish: tuple[str, ...] = ()  # shell lines run last inside the root filesystem

    @property
    def ref(self) -> str:
        return f"{self.repository}:{self.tag}"


# ---- recipes --------------------------------------------------------------------------------------------


def chart_app_version() -> str:
    text = (REPO / "charts" / "platform" / "components" / "operator" / "Chart.yaml").read_text()
    match = re.search(r'^appVersion:\s*"?([^"\s]+)"?', text, re.M)
    if not match:
        raise BuildError("charts/platform/components/operator/Chart.yaml has no appVersion")
    return match.group(1)


def recipes() -> dict[str, Recipe]:
    runtime_env = {
        "PATH": f"{VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": "/home/dynamo",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
        "DYNAMO_MODEL_PATH": "/models/tiny",
    }
    return {
        "operator": Recipe(
            name="operator",
            repository="ghcr.io/dynamo-platform/dynamo-operator",
            tag=chart_app_version(),
            packages=("python3", "python3-venv", "ca-certificates"),
            lock=HERE / "operator" / "requirements.lock",
            inputs=(
                HERE / "build.py",
                HERE / "build.lock",
                HERE / "operator",
                REPO / "operator" / "Dockerfile",
                REPO / "operator" / "dynamo_operator",
                REPO / "hooks" / "dynamo_hooks",
                REPO / "pyproject.toml",
                REPO / "charts" / "platform" / "components" / "operator" / "Chart.yaml",
            ),
            user=User(65532, "dynamo", "/nonexistent"),
            own_wheel=True,
        ),
        "runtime": Recipe(
            name="runtime",
            repository="localhost/dynamo-platform/dynamo-runtime",
            tag="1.6.1-cpu",
            # libstdc++6: the tokenizers and ai-dynamo-runtime extensions link it.
            packages=("python3", "python3-venv", "ca-certificates", "libstdc++6", "curl", "jq"),
            lock=HERE / "runtime" / "requirements.lock",
            inputs=(HERE / "build.py", HERE / "runtime"),
            user=User(1000, "dynamo", "/home/dynamo", create_home=True),
            model=True,
            docker_archive=False,
            extra_config={
                "config": ImageConfig(
                    user="1000:1000",
                    workdir="/home/dynamo",
                    entrypoint=[],
                    cmd=["python3", "-m", "dynamo.frontend"],
                    env=runtime_env,
                    ports=["8000/tcp", "9090/tcp"],
                    labels={
                        "org.opencontainers.image.title": "dynamo-runtime",
                        "org.opencontainers.image.description": (
                            "NVIDIA Dynamo's CPU runtime (ai-dynamo: frontend and mocker engine) with a tiny "
                            "generated model, for the local real node"
                        ),
                        "org.opencontainers.image.licenses": "Apache-2.0",
                    },
                )
            },
        ),
        "mpi": mpi_recipe(),
        "helm-test": helm_test_recipe(),
    }


def mpi_recipe() -> Recipe:
    """A TensorRT-LLM-shaped engine image without the engine: what the operator's multinode launch needs
    of one (``render/multinode.py``): ``bash``, ``sshd`` on the rendered port as root, ``ssh`` and
    OpenMPI's ``mpirun``/``orted``, Python with mpi4py for a stub engine that really talks MPI. The sshd
    host keys Debian generates at install are removed (random, and unused: the rendered sshd uses the
    Secret's); PAM is off for sshd (its ``pam_loginuid`` needs CAP_AUDIT_CONTROL, which a pod lacks, and
    refuses every login without it), as engine images that run sshd in pods do."""
    return Recipe(
        name="mpi",
        repository="localhost/dynamo-platform/mpi-engine",
        tag="openmpi-4.1",
        packages=("python3", "python3-mpi4py", "openmpi-bin", "openssh-server", "openssh-client"),
        lock=None,
        inputs=(HERE / "build.py",),
        user=None,
        docker_archive=False,
        finish=(
            "rm -f /etc/ssh/ssh_host_*",
            "mkdir -p /etc/ssh/sshd_config.d",
            "echo 'UsePAM no' > /etc/ssh/sshd_config.d/00-container.conf",
        ),
        extra_config={
            "config": ImageConfig(
                user="0:0",
                workdir="/root",
                entrypoint=[],
                cmd=["/bin/bash"],
                env={
                    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "HOME": "/root",
                    "PYTHONUNBUFFERED": "1",
                },
                ports=["2222/tcp"],
                labels={
                    "org.opencontainers.image.title": "mpi-engine",
                    "org.opencontainers.image.description": (
                        "Debian's OpenMPI, mpi4py and OpenSSH: a TensorRT-LLM-shaped multinode engine image "
                        "without the engine, for the local real node"
                    ),
                },
            )
        },
    )


def helm_test_recipe() -> Recipe:
    """The chart's ``helm test`` pod on the real node (``tests.image``): a POSIX ``sh``, ``wget -qO-`` and
    ``nc -z -w``, the commands the chart's test runs with the public busybox image. Debian's packages, not
    Debian's static busybox: that one's ``nc`` is built without ``-z`` (it printed its usage and the helm
    test failed on it, whatever it checked)."""
    return Recipe(
        name="helm-test",
        repository="localhost/dynamo-platform/helm-test",
        tag="bookworm",
        packages=("wget", "netcat-openbsd"),
        lock=None,
        inputs=(HERE / "build.py",),
        user=None,
        docker_archive=False,
        extra_config={
            "config": ImageConfig(
                user="65534:65534",
                workdir="/",
                entrypoint=[],
                cmd=["/bin/sh"],
                env={"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
                ports=[],
                labels={
                    "org.opencontainers.image.title": "helm-test",
                    "org.opencontainers.image.description": (
                        "sh, wget and nc from Debian's packages: the platform chart's helm test pod on the "
                        "local real node"
                    ),
                },
            )
        },
    )


# ---- the Dockerfile as the source of the operator image's configuration ----------------------------------


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of every instruction, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    buf = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not buf and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        word, _, rest = buf.partition(" ")
        out.append((word.upper(), rest.strip()))
        buf = ""
    return out


def _pairs(args: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in shlex.split(args))


def dockerfile_config(path: Path) -> ImageConfig:
    """The runtime configuration the final stage of a Dockerfile declares (the subset this project uses)."""
    stages: list[list[tuple[str, str]]] = []
    for word, args in dockerfile_instructions(path.read_text()):
        if word == "FROM":
            stages.append([])
        elif stages:
            stages[-1].append((word, args))
    if not stages:
        raise BuildError(f"{path}: no FROM instruction")
    env: dict[str, str] = {}
    labels: dict[str, str] = {}
    ports: list[str] = []
    user = workdir = ""
    entrypoint: list[str] = []
    cmd: list[str] = []
    for word, args in stages[-1]:
        if word == "ENV":
            env.update(_pairs(args))
        elif word == "LABEL":
            labels.update(_pairs(args))
        elif word == "EXPOSE":
            ports += [p if "/" in p else f"{p}/tcp" for p in args.split()]
        elif word == "USER":
            user = args
        elif word == "WORKDIR":
            workdir = args
        elif word == "ENTRYPOINT":
            entrypoint = json.loads(args)
        elif word == "CMD":
            cmd = json.loads(args)
    if any("$" in v for v in env.values()):
        raise BuildError(f"{path}: ENV values must be literal (no $VAR) so both builds set the same value")
    return ImageConfig(user, workdir, entrypoint, cmd, env, ports, labels)


def recipe_config(recipe: Recipe) -> ImageConfig:
    if "config" in recipe.extra_config:
        return recipe.extra_config["config"]
    return dockerfile_config(REPO / "operator" / "Dockerfile")


# ---- inputs, cache key, epoch --------------------------------------------------------------------------


def _files(paths: tuple[Path, ...]) -> Iterator[Path]:
    for p in paths:
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc":
                    yield f
        elif p.exists():
            yield p


def debian_sources() -> str:
    """The deb822 sources of this machine's apt for the image's suite (never a host name of our own)."""
    stanzas = []
    for path in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", path.read_text()):
            fields = dict(
                line.split(":", 1)
                for line in stanza.splitlines()
                if ":" in line and not line.startswith(("#", " "))
            )
            fields = {k.strip(): v.strip() for k, v in fields.items()}
            suites = fields.get("Suites", "").split()
            if fields.get("Types", "").split()[:1] == ["deb"] and any(s.startswith(SUITE) for s in suites):
                wanted = ("Types", "URIs", "Suites", "Components", "Signed-By")
                keep = {k: fields[k] for k in wanted if k in fields}
                keep["Suites"] = " ".join(s for s in suites if s.startswith(SUITE))
                stanzas.append("\n".join(f"{k}: {v}" for k, v in keep.items()))
    legacy = Path("/etc/apt/sources.list")
    if not stanzas and legacy.exists():
        for line in legacy.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[0] == "deb" and parts[2].startswith(SUITE) and "[" not in parts[1]:
                components = " ".join(parts[3:])
                stanzas.append(f"Types: deb\nURIs: {parts[1]}\nSuites: {parts[2]}\nComponents: {components}")
    if not stanzas:
        raise BuildError(
            f"no Debian '{SUITE}' source in /etc/apt/sources.list(.d): the image is built from the "
            "packages of the Debian release this machine's apt uses; configure one there"
        )
    return "\n\n".join(stanzas) + "\n"


def cache_key(recipe: Recipe, epoch: int, sources: str) -> str:
    h = hashlib.sha256()
    h.update(f"{recipe.ref}\n{epoch}\n{' '.join(recipe.packages)}\n{sources}".encode())
    for f in _files(recipe.inputs):
        h.update(f"{f.relative_to(REPO)}\0".encode())
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:16]


def source_date_epoch(recipe: Recipe) -> int:
    """The last commit time of the recipe's inputs: stable across commits that do not touch them."""
    with contextlib.suppress(OSError, subprocess.CalledProcessError, ValueError):
        rel = [str(p.relative_to(REPO)) for p in recipe.inputs]
        out = subprocess.run(
            ["git", "log", "-1", "--format=%ct", "--", *rel],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if out:
            return int(out)
    return 315532800  # 1980-01-01: outside a git checkout, still fixed


def iso(epoch: int) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- the build -----------------------------------------------------------------------------------------


@dataclass
class Builder:
    recipe: Recipe
    out: Path
    epoch: int
    sources: str
    quiet: bool = False
    started: float = field(default_factory=time.monotonic)

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"[image {self.recipe.name} {time.monotonic() - self.started:5.0f}s] {text}", flush=True)

    def run(self, argv: list[str], what: str, env: dict[str, str] | None = None) -> str:
        r = subprocess.run(argv, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise BuildError(f"{what} failed (exit {r.returncode}): {shlex.join(argv)}\n{r.stdout}{r.stderr}")
        return r.stdout

    @property
    def layout(self) -> Path:
        return self.out / "oci"

    @property
    def bundle(self) -> Path:
        return self.out / "bundle"

    @property
    def payload(self) -> Path:
        return self.out / "payload"

    def image(self) -> str:
        return f"{self.layout}:{self.recipe.tag}"

    def build(self) -> dict:
        missing = [t for t in DEBIAN_TOOLS if shutil.which(t) is None]
        if missing:
            raise BuildError(f"missing {', '.join(missing)}: install Debian's packages with `make node-deps`")
        self.say(f"{self.recipe.ref}, SOURCE_DATE_EPOCH={self.epoch} ({iso(self.epoch)})")
        self.prepare_payload()
        self.run(["umoci", "init", "--layout", str(self.layout)], "umoci init")
        self.run(["umoci", "new", "--image", self.image()], "umoci new")
        self.run(["umoci", "unpack", "--image", self.image(), str(self.bundle)], "umoci unpack")
        self.rootfs()
        self.pack()
        meta = self.archives()
        shutil.rmtree(self.bundle)
        shutil.rmtree(self.payload)
        return meta

    # -- payload: wheels, our own wheel, the install script ------------------------------------------------
    def prepare_payload(self) -> None:
        self.payload.mkdir(parents=True)
        if self.recipe.lock is not None:
            wheels = self.payload / "wheels"
            wheels.mkdir()
            for name in fetch_wheels(self.recipe.lock, self):
                os.link(CACHE_ROOT / "wheels" / name, wheels / name)
            shutil.copy2(self.recipe.lock, self.payload / "requirements.lock")
        if self.recipe.own_wheel:
            build_own_wheel(self.payload / "own", self)
        if self.recipe.model:
            shutil.copy2(HERE / "runtime" / "make_model.py", self.payload / "make_model.py")
        (self.payload / "install.sh").write_text(install_script(self.recipe, self.epoch))

    # -- root filesystem -------------------------------------------------------------------------------------
    def rootfs(self) -> None:
        rootfs = self.bundle / "rootfs"
        debs = CACHE_ROOT / "debs"
        debs.mkdir(parents=True, exist_ok=True)
        sources = self.out / "debian.sources"
        sources.write_text(self.sources)
        argv = [
            "mmdebstrap",
            "--mode=root",
            "--variant=essential",
            "--format=directory",
            f"--include={','.join(self.recipe.packages)}",
            "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
            '--aptopt=APT::Install-Recommends "false"',
            *(f"--dpkgopt={o}" for o in DPKG_EXCLUDES),
            # Debian packages are cached between builds (the mmdebstrap manual's recipe).
            "--skip=essential/unlink",
            '--setup-hook=mkdir -p "$1"/var/cache/apt/archives',
            f"--setup-hook=sync-in {debs} /var/cache/apt/archives/",
            f"--customize-hook=sync-out /var/cache/apt/archives {debs}",
            '--customize-hook=mkdir -p "$1"/tmp/payload',
            f"--customize-hook=sync-in {self.payload} /tmp/payload",
            # A clean environment: nothing of the build machine's (pip settings, locale) leaks into the image.
            '--customize-hook=chroot "$1" /usr/bin/env -i /bin/sh /tmp/payload/install.sh',
            SUITE,
            str(rootfs),
            str(sources),
        ]
        # Only what the build needs: nothing of this machine's environment (pip or Python settings) leaks in.
        env = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/root",
            "SOURCE_DATE_EPOCH": str(self.epoch),
            "PYTHONHASHSEED": "0",
            "LC_ALL": "C.UTF-8",
        }
        lock = f" and {self.recipe.lock.relative_to(REPO)}" if self.recipe.lock else ""
        self.say(f"root filesystem: {', '.join(self.recipe.packages)}{lock}")
        self.run(argv, "mmdebstrap", env)
        finish_rootfs(rootfs, self.epoch)
        (self.out / "packages.txt").write_text(dpkg_versions(rootfs))
        self.say(f"root filesystem ready: {du(rootfs) / 1e6:.0f} MB")

    # -- OCI image -------------------------------------------------------------------------------------------
    def pack(self) -> None:
        created = iso(self.epoch)
        self.run(
            [
                "umoci",
                "repack",
                "--image",
                self.image(),
                f"--history.created={created}",
                "--history.created_by=image/build.py (mmdebstrap + pip --require-hashes)",
                str(self.bundle),
            ],
            "umoci repack",
        )
        cfg = recipe_config(self.recipe)
        argv = ["umoci", "config", "--image", self.image(), "--no-history", f"--created={created}"]
        argv += ["--architecture=amd64", "--os=linux", f"--config.user={cfg.user}"]
        argv += [f"--config.workingdir={cfg.workdir}"]
        argv += [f"--config.entrypoint={a}" for a in cfg.entrypoint]
        argv += [f"--config.cmd={a}" for a in cfg.cmd]
        argv += [f"--config.env={k}={v}" for k, v in cfg.env.items()]
        argv += [f"--config.exposedports={p}" for p in cfg.ports]
        argv += [f"--config.label={k}={v}" for k, v in cfg.labels.items()]
        self.run(argv, "umoci config")
        self.run(["umoci", "gc", "--layout", str(self.layout)], "umoci gc")

    def archives(self) -> dict:
        index = json.loads((self.layout / "index.json").read_text())
        manifest_desc = index["manifests"][0]
        digest = manifest_desc["digest"]
        manifest = json.loads(blob(self.layout, digest).read_text())
        compressed = manifest_desc["size"] + manifest["config"]["size"]
        compressed += sum(layer["size"] for layer in manifest["layers"])
        oci_tar = self.out / "image.oci.tar"
        deterministic_tar(self.layout, oci_tar, self.epoch)
        meta = {
            "recipe": self.recipe.name,
            "ref": self.recipe.ref,
            "digest": digest,
            "compressedBytes": compressed,
            "unpackedBytes": du(self.bundle / "rootfs"),
            "sourceDateEpoch": self.epoch,
            "ociArchive": oci_tar.name,
            "buildSeconds": round(time.monotonic() - self.started, 1),
        }
        if self.recipe.docker_archive:
            docker_tar = self.out / "image.docker.tar"
            self.run(
                [
                    "skopeo",
                    "--insecure-policy",
                    "copy",
                    "--quiet",
                    f"oci:{self.image()}",
                    f"docker-archive:{docker_tar}:{self.recipe.ref}",
                ],
                "skopeo copy to a docker-archive",
            )
            meta["dockerArchive"] = docker_tar.name
        (self.out / "image.json").write_text(json.dumps(meta, indent=2) + "\n")
        return meta


def blob(layout: Path, digest: str) -> Path:
    algo, hexdigest = digest.split(":", 1)
    return layout / "blobs" / algo / hexdigest


def du(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, f)).st_size
    return total


def fetch_wheels(lock: Path, b: Builder) -> list[str]:
    """Every wheel of ``lock`` in the shared wheel cache (downloaded once, hash-checked by pip)."""
    lines = lock.read_text().splitlines()
    names = [line[2:].strip() for line in lines if line.startswith("# ") and line.endswith(".whl")]
    cache = CACHE_ROOT / "wheels"
    cache.mkdir(parents=True, exist_ok=True)
    if not all((cache / n).exists() for n in names):
        b.say(f"downloading the wheels of {lock.relative_to(REPO)} into {cache}")
        b.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary=:all:",
                "--require-hashes",
                "-d",
                str(cache),
                "-r",
                str(lock),
            ],
            "pip download",
        )
    missing = [n for n in names if not (cache / n).exists()]
    if missing:
        raise BuildError(f"{lock}: pip did not download {missing}; regenerate the lock (make image-lock)")
    return names


def _package_version(root: Path) -> str:
    """``dynamo_operator.__version__`` (the project's one version source, pyproject's dynamic version),
    read as text: the build must not import the package."""
    text = (root / "operator" / "dynamo_operator" / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.MULTILINE)
    if not found:
        raise BuildError('operator/dynamo_operator/__init__.py: no __version__ = "..." line')
    return found.group(1)


def slim_pyproject(pyproject: Path) -> str:
    """pyproject.toml for a wheel of the operator and the hooks only (the image's contents)."""
    project = tomllib.loads(pyproject.read_text())["project"]
    version = project.get("version") or _package_version(pyproject.parent)
    lic = project["license"]  # an SPDX expression (PEP 639), or the older {text = ...} table
    license_line = (
        f"license = {json.dumps(lic)}"
        if isinstance(lic, str)
        else f"license = {{ text = {json.dumps(lic['text'])} }}"
    )
    inside = ("dynamo_operator", "dynamo_hooks")
    scripts = {k: v for k, v in project["scripts"].items() if v.split(".")[0] in inside}
    q = json.dumps
    lines = [
        "[build-system]",
        'requires = ["setuptools>=77", "wheel"]',
        'build-backend = "setuptools.build_meta"',
        "",
        "[project]",
        f"name = {q(project['name'])}",
        f"version = {q(version)}",
        f"description = {q(project['description'])}",
        f"requires-python = {q(project['requires-python'])}",
        license_line,
        f"dependencies = [{', '.join(q(d) for d in project['dependencies'])}]",
        "",
        "[project.scripts]",
        *(f"{k} = {q(v)}" for k, v in sorted(scripts.items())),
        "",
        "[tool.setuptools.packages.find]",
        'where = ["operator", "hooks"]',
        'include = ["dynamo_*"]',
        "",
        "[tool.setuptools.package-data]",
        '"*" = ["*.yaml", "*.json"]',
    ]
    return "\n".join(lines) + "\n"


def build_own_wheel(dest: Path, b: Builder) -> None:
    """The project's wheel with only the operator and hooks packages, built offline from the build lock."""
    names = fetch_wheels(HERE / "build.lock", b)
    env_dir = CACHE_ROOT / f"buildenv-{hashlib.sha256((HERE / 'build.lock').read_bytes()).hexdigest()[:12]}"
    py = env_dir / "bin" / "python"
    if not (env_dir / ".complete").exists():
        shutil.rmtree(env_dir, ignore_errors=True)
        b.run([sys.executable, "-m", "venv", str(env_dir)], "a venv for building the wheel")
        wheels = [str(CACHE_ROOT / "wheels" / n) for n in names]
        b.run([str(py), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", *wheels], "build tools")
        (env_dir / ".complete").touch()
    src = b.out / "wheel-src"
    for pkg in ("operator/dynamo_operator", "hooks/dynamo_hooks"):
        shutil.copytree(REPO / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (src / "pyproject.toml").write_text(slim_pyproject(REPO / "pyproject.toml"))
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(b.epoch), "PYTHONHASHSEED": "0"}
    pip_wheel = [str(py), "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    b.run(
        [*pip_wheel, "-w", str(dest), str(src)],
        "building the operator wheel",
        env,
    )
    shutil.rmtree(src)


def install_script(recipe: Recipe, epoch: int) -> str:
    """Runs inside the new root filesystem (chroot): the virtualenv, the locked wheels, the user."""
    lines = [
        "set -eu",
        "export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 PYTHONHASHSEED=0",
        f"export SOURCE_DATE_EPOCH={epoch} PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1",
    ]
    if recipe.lock is not None:
        lines += [
            f"python3 -m venv {VENV}",
            f"{VENV}/bin/pip install --quiet --no-index --no-deps --require-hashes "
            "--find-links /tmp/payload/wheels -r /tmp/payload/requirements.lock",
        ]
        if recipe.own_wheel:
            lines.append(f"{VENV}/bin/pip install --quiet --no-index --no-deps /tmp/payload/own/*.whl")
        lines.append(f"{VENV}/bin/pip uninstall --quiet --yes pip setuptools")
    if recipe.model:
        lines.append(f"RAYON_NUM_THREADS=1 {VENV}/bin/python /tmp/payload/make_model.py /models/tiny")
    u = recipe.user
    if u is not None:
        lines += [
            f"echo '{u.name}:x:{u.uid}:{u.uid}::{u.home}:/usr/sbin/nologin' >> /etc/passwd",
            f"echo '{u.name}:x:{u.uid}:' >> /etc/group",
        ]
        if u.create_home:
            lines.append(f"mkdir -p {u.home} && chown {u.uid}:{u.uid} {u.home}")
    lines += recipe.finish
    return "\n".join(lines) + "\n"


def finish_rootfs(rootfs: Path, epoch: int) -> None:
    """Drops what no image should carry (build payload, device nodes, apt sources, logs), then clamps every
    mtime to the epoch."""
    for rel in ("tmp", "dev", "var/log", "var/cache/apt", "var/lib/apt/lists", "etc/apt/sources.list.d"):
        d = rootfs / rel
        if d.is_dir():
            for child in d.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
    for rel in ("etc/apt/sources.list", "etc/machine-id.old"):
        with contextlib.suppress(FileNotFoundError):
            (rootfs / rel).unlink()
    for root, dirs, files in os.walk(rootfs, topdown=False):
        for name in [*files, *dirs, "."]:
            p = os.path.join(root, name)
            if os.lstat(p).st_mtime > epoch:
                os.utime(p, (epoch, epoch), follow_symlinks=False)


def dpkg_versions(rootfs: Path) -> str:
    """``package=version`` of every installed Debian package: the one input outside the commit."""
    out, name = [], None
    for line in (rootfs / "var/lib/dpkg/status").read_text().splitlines():
        if line.startswith("Package: "):
            name = line.split(": ", 1)[1]
        elif line.startswith("Version: ") and name:
            out.append(f"{name}={line.split(': ', 1)[1]}")
    return "\n".join(sorted(out)) + "\n"


def deterministic_tar(src: Path, dest: Path, epoch: int) -> None:
    """``src`` as a tar whose bytes depend only on the file contents (sorted, owner 0, mtime ``epoch``)."""
    paths = sorted(p for p in src.rglob("*"))
    with tarfile.open(dest, "w", format=tarfile.USTAR_FORMAT) as tar:
        for p in paths:
            info = tar.gettarinfo(str(p), arcname=str(p.relative_to(src)))
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = epoch
            info.mode = 0o755 if info.isdir() else 0o644
            if info.isfile():
                with open(p, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)


# ---- single-binary images: one static Go program from the node tools, no distribution ------------------

PAUSE_REF = "localhost/dynamo-platform/pause:3.10"
NODE_PINS = REPO / "tools" / "node" / "pins.env"


@dataclass(frozen=True)
class BinaryImage:
    """An image holding one static program of ``make node-tools`` (``.tools/node/bin/<binary>``) at ``path``,
    and an empty ``/tmp``: the pods' sandbox and the services the real node runs from their Go modules."""

    name: str
    ref: str
    binary: str
    path: str
    user: str
    entrypoint: tuple[str, ...]
    title: str
    env: tuple[str, ...] = ()
    ports: tuple[str, ...] = ()


def node_pins() -> dict[str, str]:
    """``tools/node/pins.env`` (the versions the wrapper modules build; the images are tagged with them)."""
    pairs = (line.split("=", 1) for line in NODE_PINS.read_text().splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs if not k.lstrip().startswith("#")}


def binary_images() -> dict[str, BinaryImage]:
    pins = node_pins()
    local = "localhost/dynamo-platform"
    path_env = ("PATH=/usr/local/bin:/usr/bin:/bin",)
    return {
        "pause": BinaryImage("pause", PAUSE_REF, "pause", "/pause", "65535:65535", ("/pause",), "pause"),
        # the chart's NATS runs `nats-server` from PATH; its etcd runs /usr/local/bin/etcd (as the
        # public images they stand in for)
        "nats": BinaryImage(
            "nats",
            f"{local}/nats:{pins['NATS_VERSION'].removeprefix('v')}",
            "nats-server",
            "/usr/local/bin/nats-server",
            "1000:1000",
            ("nats-server",),
            "NATS server",
            path_env,
            ("4222/tcp", "6222/tcp", "8222/tcp"),
        ),
        "etcd": BinaryImage(
            "etcd",
            f"{local}/etcd:{pins['ETCD_SERVICE_VERSION']}",
            "etcd",
            "/usr/local/bin/etcd",
            "1001:1001",
            ("/usr/local/bin/etcd",),
            "etcd",
            path_env,
            ("2379/tcp", "2380/tcp", "2381/tcp"),
        ),
        "lws": BinaryImage(
            "lws",
            f"{local}/lws-controller:{pins['LWS_VERSION']}",
            "lws-controller",
            "/manager",
            "65532:65532",
            ("/manager",),
            "LeaderWorkerSet controller",
        ),
        "local-path-provisioner": BinaryImage(
            "local-path-provisioner",
            f"{local}/local-path-provisioner:{pins['LOCAL_PATH_PROVISIONER_VERSION']}",
            "local-path-provisioner",
            "/usr/bin/local-path-provisioner",
            "0:0",
            ("/usr/bin/local-path-provisioner",),
            "local-path-provisioner",
        ),
    }


def node_binary(name: str) -> Path:
    path = REPO / ".tools" / "node" / "bin" / name
    if not path.exists():
        raise BuildError(f"no {path}: build the node tools first (make node-tools)")
    return path


def build_binary_image(spec: BinaryImage, out: Path, epoch: int) -> dict:
    """A one-program image: the binary, an empty /tmp (1777), the configuration of ``spec``; bit-identical
    from one binary (the binary is the only input besides this script)."""
    b = Builder(recipes()["operator"], out, epoch, "", quiet=True)
    layout, bundle = out / "oci", out / "bundle"
    image = f"{layout}:{spec.ref.rsplit(':', 1)[1]}"
    b.run(["umoci", "init", "--layout", str(layout)], "umoci init")
    b.run(["umoci", "new", "--image", image], "umoci new")
    b.run(["umoci", "unpack", "--image", image, str(bundle)], "umoci unpack")
    rootfs = bundle / "rootfs"
    target = rootfs / spec.path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(node_binary(spec.binary), target)
    if spec.name != "pause":
        (rootfs / "tmp").mkdir(mode=0o1777, exist_ok=True)
        (rootfs / "tmp").chmod(0o1777)
    finish_rootfs(rootfs, epoch)
    created = iso(epoch)
    b.run(["umoci", "repack", "--image", image, f"--history.created={created}", str(bundle)], "umoci repack")
    argv = ["umoci", "config", "--image", image, "--no-history", f"--created={created}"]
    argv += ["--architecture=amd64", "--os=linux", f"--config.user={spec.user}"]
    argv += [f"--config.entrypoint={a}" for a in spec.entrypoint]
    argv += [f"--config.env={e}" for e in spec.env]
    argv += [f"--config.exposedports={p}" for p in spec.ports]
    if spec.name != "pause":
        argv.append(f"--config.label=org.opencontainers.image.title={spec.title}")
    b.run(argv, "umoci config")
    b.run(["umoci", "gc", "--layout", str(layout)], "umoci gc")
    deterministic_tar(layout, out / "image.oci.tar", epoch)
    digest = json.loads((layout / "index.json").read_text())["manifests"][0]["digest"]
    meta = {"recipe": spec.name, "ref": spec.ref, "digest": digest, "ociArchive": "image.oci.tar"}
    meta["compressedBytes"] = (out / "image.oci.tar").stat().st_size
    meta["unpackedBytes"] = node_binary(spec.binary).stat().st_size
    meta["sourceDateEpoch"], meta["buildSeconds"] = epoch, 0.0
    shutil.rmtree(bundle)
    (out / "image.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


# ---- cache and entry point -----------------------------------------------------------------------------


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """One build of a recipe at a time on this machine (make test and make demo may both ask)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


RECIPE_NAMES = (
    "operator",
    "runtime",
    "mpi",
    "helm-test",
    "pause",
    "nats",
    "etcd",
    "lws",
    "local-path-provisioner",
)


def _plan(name: str, quiet: bool) -> tuple[str, Callable[[Path], dict]]:
    """(cache key, build function into a directory) of a recipe."""
    if name in binary_images():
        spec, epoch = binary_images()[name], 315532800
        key = hashlib.sha256(node_binary(spec.binary).read_bytes() + (HERE / "build.py").read_bytes())
        return key.hexdigest()[:16], lambda out: build_binary_image(spec, out, epoch)
    recipe = recipes()[name]
    epoch = source_date_epoch(recipe)
    sources = debian_sources()
    return cache_key(recipe, epoch, sources), lambda out: Builder(recipe, out, epoch, sources, quiet).build()


def prune(name: str, keep: Path, builds: int = 2) -> None:
    """Each new input hash is a new build of a few hundred MB: keep the newest ``builds`` of a recipe (another
    checkout may still link the previous one)."""
    done = [d for d in keep.parent.glob(f"{name}-*") if (d / "image.json").exists() and d != keep]
    for old in sorted(done, key=lambda d: d.stat().st_mtime, reverse=True)[builds - 1 :]:
        shutil.rmtree(old, ignore_errors=True)
    for stale in keep.parent.glob(f"{name}-*.partial"):  # interrupted builds (we hold the recipe's lock)
        shutil.rmtree(stale, ignore_errors=True)


def build(name: str, out: Path | None = None, quiet: bool = False) -> dict:
    key, run = _plan(name, quiet)
    if out is not None:
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        return run(out.resolve())
    final = CACHE_ROOT / "images" / f"{name}-{key}"
    with locked(CACHE_ROOT / "images" / f".{name}.lock"):
        if not (final / "image.json").exists():
            stage = final.with_name(final.name + ".partial")
            shutil.rmtree(stage, ignore_errors=True)
            stage.mkdir(parents=True)
            run(stage)
            shutil.rmtree(final, ignore_errors=True)
            stage.rename(final)
            prune(name, keep=final)
    LINKS.mkdir(parents=True, exist_ok=True)
    link = LINKS / name
    with contextlib.suppress(FileNotFoundError):
        link.unlink()
    link.symlink_to(final)
    return json.loads((final / "image.json").read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recipe", nargs="?", choices=RECIPE_NAMES)
    parser.add_argument("--out", type=Path, help="build afresh into this directory (no cache)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--slim-pyproject", action="store_true", help="print the operator wheel's pyproject.toml (Dockerfile)"
    )
    args = parser.parse_args(argv)
    if args.slim_pyproject:
        print(slim_pyproject(REPO / "pyproject.toml"), end="")
        return 0
    if not args.recipe:
        parser.error("name a recipe")
    try:
        meta = build(args.recipe, args.out, args.quiet)
    except BuildError as e:
        print(f"image build failed: {e}", file=sys.stderr)
        return 1
    where = args.out or LINKS / args.recipe
    print(
        f"{meta['ref']}: {meta['compressedBytes'] / 1e6:.1f} MB compressed, "
        f"{meta['unpackedBytes'] / 1e6:.0f} MB unpacked; built in {meta['buildSeconds']}s; in {where}"
    )
    print(meta["digest"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
