"""No image we name floats: every image the chart renders (defaults and both CI values files, Grove and
KAI included) and every image in the operator's defaults carries an explicit version, none is
``:latest``, and a digest (``<tag>@sha256:...``) given in any image value reaches the rendered object.

Needs the pinned helm on PATH (``make pytest``); no cluster."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from dynamo_operator.api.config import DEFAULTS, effective
from dynamo_operator.render import dgdr as rd
from support.chart import CHART, docs, template, warnings

pytestmark = pytest.mark.tools  # helm template

REPO_ROOT = Path(__file__).resolve().parents[2]
DIGEST = "sha256:" + "0123456789abcdef" * 4
# values whose text is an image reference (the operator reads them from its environment / configuration)
IMAGE_ENV = {"DYNAMO_INTERNAL_IMAGES_DEBUGGER"}
IMAGE_KEY = re.compile(r"image$", re.IGNORECASE)


def floating(ref: str) -> str | None:
    """Why ``ref`` floats (None when it is pinned): no tag, or the ``latest`` tag; a digest pins."""
    if "@sha256:" in ref:
        return None
    name = ref.rsplit("/", 1)[-1]
    if ":" not in name:
        return "no tag"
    return "the latest tag" if name.split(":", 1)[1] == "latest" else None


def _walk(node, path=""):
    """(path, value) of every ``image`` field, container env value naming an image, and the operator
    configuration's image settings, anywhere in a rendered document."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{path}.{key}"
            if isinstance(value, str) and (IMAGE_KEY.search(key) or path.endswith(".images")):
                yield here, value
            elif key == "env" and isinstance(value, list):
                for e in value:
                    if isinstance(e, dict) and e.get("name") in IMAGE_ENV:
                        yield f"{here}[{e['name']}]", e.get("value", "")
            elif key == "config.yaml" and isinstance(value, str):  # the OperatorConfiguration
                yield from _walk(yaml.safe_load(value), f"{here}")
            else:
                yield from _walk(value, here)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _walk(item, f"{path}[{i}]")


def rendered_images(tmp_path: Path, values: str | None, *sets: str) -> dict[str, str]:
    proc = template(tmp_path, values, *sets)
    assert proc.returncode == 0, proc.stderr
    assert not warnings(proc), warnings(proc)
    out = {}
    for d in docs(proc):
        where = f"{d['kind']}/{d['metadata']['name']}"
        for path, ref in _walk(d):
            out[f"{where}{path}"] = ref
    return out


@pytest.mark.parametrize(
    "values",
    [None, *sorted((CHART / "ci").glob("*-values.yaml"))],
    ids=lambda v: "defaults" if v is None else v.name,
)
def test_every_rendered_image_is_pinned(tmp_path, values):
    images = rendered_images(tmp_path, None if values is None else values.read_text())
    assert any("dynamo-operator" in ref for ref in images.values())
    assert any("etcd" in ref for ref in images.values()) and any("nats" in ref for ref in images.values())
    if values is not None and "cluster-wide" in values.name:  # Grove and KAI are on there
        assert any("grove" in ref for ref in images.values())
        assert any("kai-scheduler" in ref for ref in images.values())
    bad = {where: (ref, why) for where, ref in images.items() if (why := floating(ref))}
    assert not bad, bad
    assert not any("bitnami" in ref for ref in images.values()), "etcd is the etcd project's image"


def test_the_operator_defaults_name_no_floating_image():
    config = effective(None)
    found = dict(_walk(config))
    bad = {p: ref for p, ref in found.items() if floating(ref)}
    assert not bad, bad
    assert ".images.operator" in found and ".checkpoint.cleanupImage" in found  # the cleanup Jobs' image
    job = rd.profiling_job(
        {
            "metadata": {"name": "r", "namespace": "n"},
            "spec": {"profilingConfig": {"profilerImage": "nvcr.io/nvidia/ai-dynamo/dynamo-planner:0.6.0"}},
        }
    )
    copier = job["spec"]["template"]["spec"]["containers"][1]
    assert copier["image"] == DEFAULTS["images"]["operator"] and not floating(copier["image"])


def test_no_source_or_chart_names_a_latest_image():
    """A ``:latest`` image reference anywhere in what we ship (code, chart, examples) fails."""
    pattern = re.compile(r"[a-z0-9][a-z0-9./_-]*/[a-z0-9._-]+:latest\b")
    roots = ["operator", "hooks", "plugin", "charts", "examples"]
    hits = []
    for root in roots:
        for path in (REPO_ROOT / root).rglob("*"):
            if path.is_file() and path.suffix in {".py", ".yaml", ".yml", ".tpl", ".json", ".txt"}:
                for m in pattern.finditer(path.read_text(errors="replace")):
                    hits.append(f"{path.relative_to(REPO_ROOT)}: {m.group(0)}")
    assert not hits, hits


def test_a_digest_in_any_image_value_reaches_the_rendered_objects(tmp_path):
    sets = [
        f"dynamo-operator.controllerManager.manager.image.tag=0.1.0@{DIGEST}",
        f"etcd.image.tag=v3.5.21@{DIGEST}",
        f"nats.container.image.tag=2.10.21-alpine@{DIGEST}",
        f"grove.image.tag=v0.1.0-alpha.2@{DIGEST}",
        f"kai-scheduler.global.tag=v0.9.4@{DIGEST}",
        f"tests.image=busybox:1.37@{DIGEST}",
        f"dynamo-operator.checkpoint.cleanupImage=busybox:1.36@{DIGEST}",
        f"dynamo-operator.etcdAuth.proxyImage=quay.io/coreos/etcd:v3.5.21@{DIGEST}",
        f"nats.auth.reloader.image.tag=0.1.0@{DIGEST}",
        "grove.enabled=true",
        "kai-scheduler.enabled=true",
    ]
    images = rendered_images(tmp_path, None, *sets)
    assert images and all(ref.endswith("@" + DIGEST) for ref in images.values()), {
        w: r for w, r in images.items() if not r.endswith(DIGEST)
    }
    config_image = [r for w, r in images.items() if w.endswith("images.operator")]
    assert config_image == [f"ghcr.io/dynamo-platform/dynamo-operator:0.1.0@{DIGEST}"]
