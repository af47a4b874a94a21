"""The single-binary images of the bundled services (image/build.py ``binary_images``): one version per
service, named once in tools/node/pins.env. The wrapper module builds exactly that version, the image is
tagged with it, and the chart's default public image (what a user pulls) names the same release, so the real
node runs what the chart ships."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from support.imagebuild import image_build

REPO = Path(__file__).resolve().parents[2]
GOMOD = REPO / "tools" / "node" / "gomod"
COMPONENTS = REPO / "charts" / "platform" / "components"
REALNODE_VALUES = REPO / "tools" / "dynamo_localcluster" / "realnode" / "placement-values.yaml"

# recipe -> (wrapper module directory, the Go module it builds, the pin's key)
WRAPPERS = {
    "nats": ("nats", "github.com/nats-io/nats-server/v2", "NATS_VERSION"),
    "etcd": ("etcd", "go.etcd.io/etcd/server/v3", "ETCD_SERVICE_VERSION"),
    "lws": ("lws", "sigs.k8s.io/lws", "LWS_VERSION"),
    "local-path-provisioner": (
        "local-path-provisioner",
        "github.com/rancher/local-path-provisioner",
        "LOCAL_PATH_PROVISIONER_VERSION",
    ),
}


def required_version(go_mod: str, module: str) -> str:
    found = re.search(rf"^\s*{re.escape(module)} (v\S+)", go_mod, re.M)
    assert found, f"the wrapper does not require {module}"
    return found.group(1)


@pytest.mark.parametrize("recipe", sorted(WRAPPERS))
def test_each_wrapper_builds_its_pinned_version_and_the_image_carries_it(recipe):
    build = image_build()
    directory, module, pin = WRAPPERS[recipe]
    go_mod = (GOMOD / directory / "go.mod").read_text()
    version = build.node_pins()[pin]
    assert required_version(go_mod, module) == version
    assert re.search(r"^tool ", go_mod, re.M), "the wrapper names the package it builds with a tool directive"
    tag = build.binary_images()[recipe].ref.rsplit(":", 1)[1]
    assert tag in (version, version.removeprefix("v")), (tag, version)


def test_the_chart_defaults_name_the_same_releases_as_the_built_images():
    pins = image_build().node_pins()
    nats = yaml.safe_load((COMPONENTS / "nats" / "values.yaml").read_text())["container"]["image"]
    etcd = yaml.safe_load((COMPONENTS / "etcd" / "values.yaml").read_text())["image"]
    assert nats["repository"] == "nats"
    assert nats["tag"].split("-")[0] == pins["NATS_VERSION"].removeprefix("v")
    assert etcd["repository"] == "quay.io/coreos/etcd" and etcd["tag"] == pins["ETCD_SERVICE_VERSION"]


def test_the_real_node_profile_sets_the_built_images_by_values():
    images = image_build().binary_images()
    values = yaml.safe_load(REALNODE_VALUES.read_text())
    nats = values["nats"]["container"]["image"]
    etcd = values["etcd"]["image"]
    assert f"{nats['repository']}:{nats['tag']}" == images["nats"].ref
    assert f"{etcd['repository']}:{etcd['tag']}" == images["etcd"].ref
    # the graph pods' etcd grpc-proxy sidecar runs the same built etcd image
    assert values["dynamo-operator"]["etcdAuth"]["proxyImage"] == images["etcd"].ref
    assert nats["pullPolicy"] == etcd["pullPolicy"] == "Never"  # imported; nothing is pulled on this machine


def test_the_nats_reloader_runs_the_operator_image_the_chart_deploys():
    """The bundled NATS's accounts reloader (``dynamo-operator nats-reload``) names the operator image by
    default: the one the operator chart deploys (its appVersion) and ``image/build.py operator`` builds, so
    the real node runs it from the imported image (pull policy Never there)."""
    build = image_build()
    reloader = yaml.safe_load((COMPONENTS / "nats" / "values.yaml").read_text())["auth"]["reloader"]["image"]
    assert f"{reloader['repository']}:{reloader['tag']}" == build.recipes()["operator"].ref
    assert reloader["tag"] == build.chart_app_version()
    values = yaml.safe_load(REALNODE_VALUES.read_text())
    assert values["nats"]["auth"]["reloader"]["image"] == {"pullPolicy": "Never"}
