"""What preflight needs to know about the chart being installed: kubeVersion, defaults and CRDs.

The chart lives in another part of the repository (charts/platform) and may be absent (hook Jobs run from the
operator image without it, or the chart may not have been written yet), so everything here degrades to
documented defaults instead of failing: a missing Chart.yaml means kubeVersion `>=1.30.0-0`, no default values
and no CRD comparison.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .values import Values, deep_merge, load_values_file

DEFAULT_KUBE_VERSION = ">=1.30.0-0"
CHART_NAME = "dynamo-platform"
# The annotation our generated CRDs carry to say which platform release wrote them. Upstream stamps
# `dynamo.nvidia.com/operator-version`; both are read.
CRD_VERSION_ANNOTATIONS = ("nvidia.com/dynamo-platform-version", "dynamo.nvidia.com/operator-version")

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class CrdInfo:
    """A CRD as shipped by the chart (or as found in the cluster)."""

    name: str
    served_versions: tuple[str, ...]
    storage_version: str | None
    platform_version: str | None

    @classmethod
    def from_object(cls, obj: dict[str, Any]) -> CrdInfo:
        spec = obj.get("spec") or {}
        versions = spec.get("versions") or []
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        stamp = next((annotations[k] for k in CRD_VERSION_ANNOTATIONS if annotations.get(k)), None)
        return cls(
            name=str((obj.get("metadata") or {}).get("name", "")),
            served_versions=tuple(str(v["name"]) for v in versions if v.get("served", True)),
            storage_version=next((str(v["name"]) for v in versions if v.get("storage")), None),
            platform_version=stamp,
        )


@dataclass(frozen=True)
class ChartInfo:
    """Chart metadata; `path` is None when no chart was found (defaults apply)."""

    path: Path | None
    name: str = CHART_NAME
    version: str | None = None
    app_version: str | None = None
    kube_version: str = DEFAULT_KUBE_VERSION
    kube_version_declared: bool = False
    default_values: Values = field(default_factory=dict)
    crds: tuple[CrdInfo, ...] = ()
    # CRD name -> the dependency condition (e.g. "grove.enabled") its subchart is installed under: Helm
    # installs a subchart's crds/ only when that subchart is enabled
    crd_conditions: dict[str, str] = field(default_factory=dict)

    def crds_installed_with(self, values: Values) -> tuple[CrdInfo, ...]:
        """The CRDs ``helm install`` with ``values`` would install (disabled subcharts' crds/ left out)."""
        return tuple(c for c in self.crds if _condition_holds(values, self.crd_conditions.get(c.name)))

    @property
    def platform_version(self) -> str | None:
        """The version CRDs are compared against: appVersion (the operator's) or the chart version."""
        return self.app_version or self.version


# libyaml when present: a chart's CRDs are megabytes of YAML (seconds with the pure-Python loader)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_LOADER)


def _subchart_dirs(chart_dir: Path, meta: dict[str, Any]) -> dict[str, Path]:
    """Values key → directory for each subchart (file:// dependencies and vendored charts/*)."""
    found: dict[str, Path] = {}
    for candidate in sorted((chart_dir / "charts").glob("*/Chart.yaml")):
        sub_meta = _read_yaml(candidate) or {}
        found[str(sub_meta.get("name", candidate.parent.name))] = candidate.parent
    for dep in meta.get("dependencies") or []:
        repo = str(dep.get("repository") or "")
        key = str(dep.get("alias") or dep.get("name"))
        if repo.startswith("file://"):
            target = (chart_dir / repo[len("file://") :]).resolve()
            if (target / "Chart.yaml").is_file():
                found[key] = target
        elif dep.get("name") in found and dep.get("alias"):
            found[key] = found.pop(str(dep["name"]))
    return found


def _chart_values(chart_dir: Path, meta: dict[str, Any]) -> Values:
    """Chart defaults including subchart defaults under their keys, as Helm coalesces them."""
    values = load_values_file(chart_dir / "values.yaml") if (chart_dir / "values.yaml").is_file() else {}
    for key, sub_dir in _subchart_dirs(chart_dir, meta).items():
        sub_file = sub_dir / "values.yaml"
        if sub_file.is_file():
            parent_part = values.get(key) if isinstance(values.get(key), dict) else {}
            values[key] = deep_merge(load_values_file(sub_file), parent_part)
    return values


def _condition_holds(values: Values, condition: str | None) -> bool:
    """Helm's dependency ``condition``: the first of its comma-separated paths that resolves to a boolean
    decides; none resolving (or no condition) means enabled."""
    for path in (condition or "").split(","):
        node: Any = values
        for part in path.strip().split(".") if path.strip() else []:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, bool):
            return node
    return True


def _chart_crds(chart_dir: Path, meta: dict[str, Any]) -> tuple[tuple[CrdInfo, ...], dict[str, str]]:
    conditions = {
        str(dep.get("alias") or dep.get("name")): str(dep["condition"])
        for dep in meta.get("dependencies") or []
        if dep.get("condition")
    }
    dirs: list[tuple[str | None, Path]] = [(None, chart_dir / "crds")]
    dirs += [(key, d / "crds") for key, d in _subchart_dirs(chart_dir, meta).items()]
    crds: dict[str, CrdInfo] = {}
    crd_conditions: dict[str, str] = {}
    for key, crd_dir in dirs:
        for path in sorted(crd_dir.glob("*.y*ml")) if crd_dir.is_dir() else []:
            for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_LOADER):
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    info = CrdInfo.from_object(doc)
                    crds[info.name] = info
                    if key is not None and key in conditions:
                        crd_conditions[info.name] = conditions[key]
    return tuple(crds[name] for name in sorted(crds)), crd_conditions


def load_chart(chart_dir: Path | None) -> ChartInfo:
    """Read Chart.yaml, values and CRDs; a missing directory gives the defaults."""
    if chart_dir is None or not (chart_dir / "Chart.yaml").is_file():
        return ChartInfo(path=None)
    meta = _read_yaml(chart_dir / "Chart.yaml") or {}
    declared = str(meta.get("kubeVersion") or "").strip()
    crds, crd_conditions = _chart_crds(chart_dir, meta)
    return ChartInfo(
        path=chart_dir,
        name=str(meta.get("name", CHART_NAME)),
        version=str(meta["version"]) if meta.get("version") is not None else None,
        app_version=str(meta["appVersion"]) if meta.get("appVersion") is not None else None,
        kube_version=declared or DEFAULT_KUBE_VERSION,
        kube_version_declared=bool(declared),
        default_values=_chart_values(chart_dir, meta),
        crds=crds,
        crd_conditions=crd_conditions,
    )


def default_chart_dir() -> Path | None:
    """$DYNAMO_CHART_DIR, else this checkout's charts/platform when it exists."""
    env = os.environ.get("DYNAMO_CHART_DIR")
    if env:
        return Path(env)
    candidate = REPO_ROOT / "charts" / "platform"
    return candidate if (candidate / "Chart.yaml").is_file() else None


def resolve_chart(reference: str | None) -> tuple[ChartInfo, tempfile.TemporaryDirectory[str] | None]:
    """A chart from a directory or a packaged .tgz; anything else (repo/chart, oci://) gives the defaults,
    since guessing that a remote reference matches this checkout's chart could compare against the wrong CRDs.

    Returns the temporary directory holding an unpacked archive so the caller controls its lifetime.
    """
    if reference is None:
        return load_chart(default_chart_dir()), None
    path = Path(reference)
    if path.is_dir():
        return load_chart(path), None
    if path.is_file() and path.name.endswith((".tgz", ".tar.gz")):
        tmp = tempfile.TemporaryDirectory(prefix="dynamo-chart-")
        with tarfile.open(fileobj=io.BytesIO(path.read_bytes()), mode="r:gz") as archive:
            archive.extractall(tmp.name, filter="data")
        roots = [p.parent for p in Path(tmp.name).glob("*/Chart.yaml")]
        return load_chart(roots[0] if roots else None), tmp
    return load_chart(None), None
