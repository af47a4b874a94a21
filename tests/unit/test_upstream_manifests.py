"""Upstream Dynamo's own manifests work unchanged: each file under tests/fixtures/upstream/ (its examples and
recipes, copied byte for byte below a header naming its source path and commit) is admitted by our
validating webhook's rules, rendered by ``render_all`` (what ``dynamo-operator render`` and the controllers
call) without error, and keeps what its author wrote: every image, command and argument of every container
reaches a rendered workload's pod template. A manifest we must refuse would be listed in ``REFUSED`` with
why; today there is none.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from dynamo_operator.render import RenderContext, render_all
from dynamo_operator.webhooks.validation import Context, validate
from support import yamlc

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "upstream"
FILES = sorted(FIXTURES.glob("*.yaml"))
SOURCE = re.compile(r"^# source: github\.com/ai-dynamo/dynamo \S+\.yaml @ [0-9a-f]{40}$", re.M)
# file name -> why it must be refused (and the admission message fragment); empty: all are admitted
REFUSED: dict[str, tuple[str, str]] = {}
# what the platform chart configures (the MPI SSH Secret TRT-LLM's multinode launch mounts); the
# multinode ones render on the LeaderWorkerSet pathway (a cluster without Grove)
CONFIG = {"mpi": {"sshSecretName": "mpi-run-ssh-secret", "sshSecretNamespace": "dynamo-system"}}
CTX = RenderContext(operator_config=CONFIG, detected=frozenset({"lws"}))
WORKLOAD_KINDS = ("Deployment", "LeaderWorkerSet", "PodCliqueSet")


def ours(path: Path) -> list[dict]:
    """The nvidia.com objects of a fixture (a ConfigMap beside the graph is the user's), namespaced as
    ``kubectl apply -n`` would."""
    out = []
    for doc in yamlc.load_all(path.read_text()):
        if isinstance(doc, dict) and str(doc.get("apiVersion", "")).startswith("nvidia.com/"):
            doc.setdefault("metadata", {}).setdefault("namespace", "team")
            out.append(doc)
    return out


def test_there_are_upstream_manifests_of_each_backend_and_both_versions():
    text = " ".join(p.read_text() for p in FILES)
    assert len(FILES) >= 10
    for backend in ("vllm", "sglang", "trtllm", "mocker"):
        assert any(backend in p.name for p in FILES), backend
    assert "nvidia.com/v1alpha1" in text and "nvidia.com/v1beta1" in text


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_provenance_is_kept(path: Path):
    assert SOURCE.search(path.read_text()), (
        f"{path.name}: no '# source: github.com/ai-dynamo/dynamo ...' line"
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_admitted_by_our_validation(path: Path):
    docs = ours(path)
    assert docs, path.name
    for doc in docs:
        version = doc["apiVersion"].split("/")[1]
        result = validate(doc["kind"], version, copy.deepcopy(doc), None, Context(operation="CREATE"))
        errors = " ".join(str(e) for e in result.errors)
        if path.name in REFUSED:
            assert REFUSED[path.name][1] in errors, errors
        else:
            assert not result.errors, f"{path.name}: {errors}"


def _containers(obj: dict) -> list[dict]:
    """Every container of a rendered workload's pod templates (Deployment, LWS leader/worker, cliques)."""
    found: list[dict] = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("containers"), list):
                found.extend(c for c in node["containers"] if isinstance(c, dict))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(obj)
    return found


def _written(doc: dict) -> list[dict]:
    """The containers the author wrote (v1alpha1 mainContainer / v1beta1 podTemplate containers)."""
    spec = doc.get("spec") or {}
    comps = list((spec.get("services") or {}).values()) + list(spec.get("components") or [])
    out = []
    for comp in comps:
        main = ((comp.get("extraPodSpec") or {}).get("mainContainer")) or {}
        out += [main] if main else []
        out += ((comp.get("podTemplate") or {}).get("spec") or {}).get("containers") or []
    return out


@pytest.mark.parametrize("path", [p for p in FILES if p.name not in REFUSED], ids=lambda p: p.name)
def test_rendered_keeping_images_commands_and_args(path: Path):
    for doc in ours(path):
        out = render_all(copy.deepcopy(doc), CTX)
        workloads = [o for o in out if o["kind"] in WORKLOAD_KINDS]
        assert workloads, f"{path.name}: no workload rendered ({sorted({o['kind'] for o in out})})"
        rendered = [c for w in workloads for c in _containers(w)]
        images = {c.get("image") for c in rendered}
        for written in _written(doc):
            if written.get("image"):
                assert written["image"] in images, (path.name, written["image"])
            for key in ("command", "args"):
                if written.get(key):
                    have = [" ".join((c.get("command") or []) + (c.get("args") or [])) for c in rendered]
                    want = " ".join(written[key])
                    # a multinode launch wraps the author's command in a shell line (mpirun, ray): kept inside
                    assert any(want in h for h in have), (path.name, key, want)


def test_the_render_command_previews_them_all(tmp_path):
    """``dynamo-operator render -f`` itself (one run over every file, the user's ConfigMaps included)."""
    config = tmp_path / "operator-config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    files = [a for p in FILES if p.name not in REFUSED for a in ("-f", str(p))]
    exe = Path(sys.executable).parent / "dynamo-operator"
    run = subprocess.run(
        [str(exe), "render", *files, "--config", str(config), "--detected", "lws", "-n", "team"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "nvidia-config: not an nvidia.com object, applied as is" in run.stderr  # the user's ConfigMap
    kinds = {d["kind"] for d in yamlc.load_all(run.stdout) if d}
    assert {"DynamoComponentDeployment", "Deployment", "LeaderWorkerSet", "Service"} <= kinds, kinds
