"""containerd v2 for the real node: its configuration, its CNI network, its registry policy, image imports.

- Debian's runc (cgroupfs driver) runs the containers; the CRI plugin's ``restrict_oom_score_adj`` is on,
  because root here lacks CAP_SYS_RESOURCE and every sandbox with ``oom_score_adj=-998`` would fail.
- Network namespaces are mounted under containerd's state directory, so every mount the node makes is under
  ``layout.ROOT`` or ``layout.RUN`` and a teardown finds them by prefix.
- Registry: every host (``_default``) resolves to a loopback endpoint that refuses, so a pull that slips
through   (an image that was not imported) fails on 127.0.0.1 instead of asking a resolver or leaving the
machine.
- The sandbox (pause) image is this project's own (``tools/node/pause``), imported like every other image.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from . import layout

CNI_CONFIG_NAME = "10-dynamo-pods.conflist"


class RuntimeError_(RuntimeError):
    pass


def config_toml() -> str:
    cri = "io.containerd.cri.v1"
    return f"""# Written by dynamo_localcluster.realnode (the local real node); removed at teardown.
version = 3
root = "{layout.CONTAINERD_ROOT}"
state = "{layout.CONTAINERD_STATE}"

[grpc]
  address = "{layout.CONTAINERD_SOCKET}"

[ttrpc]
  address = "{layout.CONTAINERD_SOCKET}.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."{cri}.runtime"]
  enable_selinux = false
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true

[plugins."{cri}.runtime".containerd]
  default_runtime_name = "runc"

[plugins."{cri}.runtime".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins."{cri}.runtime".containerd.runtimes.runc.options]
  BinaryName = "{layout.RUNC}"
  SystemdCgroup = false

[plugins."{cri}.runtime".cni]
  bin_dirs = ["{layout.CNI_BIN_DIR}"]
  conf_dir = "{layout.CNI_CONF_DIR}"
  max_conf_num = 1

[plugins."{cri}.images"]
  snapshotter = "overlayfs"

[plugins."{cri}.images".pinned_images]
  sandbox = "{layout.PAUSE_IMAGE}"

[plugins."{cri}.images".registry]
  config_path = "{layout.REGISTRY_HOSTS_DIR}"

[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
"""


def cni_conflist() -> dict:
    """The pod network: the bridge, host-local addresses, and no route but the Service range via the gateway
    (no default route, no masquerade). Not ``isGateway``: the bridge has its address already, and the plugin
    would switch on forwarding for the whole machine (``ip_forward``) at every pod; the node switches it on
    for the bridge alone."""
    return {
        "cniVersion": "1.0.0",
        "name": "dynamo-pods",
        "plugins": [
            {
                "type": "bridge",
                "bridge": layout.BRIDGE,
                "isGateway": False,
                "isDefaultGateway": False,
                "ipMasq": False,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": str(layout.POD_CIDR), "gateway": layout.NODE_IP}]],
                    "routes": [{"dst": str(layout.SERVICE_CIDR), "gw": layout.NODE_IP}],
                    "dataDir": str(layout.CNI_DATA_DIR),
                },
            }
        ],
    }


def registry_hosts_toml() -> str:
    return (
        "# Every registry host resolves to a loopback endpoint that refuses: nothing is ever pulled.\n"
        f'server = "{layout.REFUSING_REGISTRY}"\n\n'
        f'[host."{layout.REFUSING_REGISTRY}"]\n'
        '  capabilities = ["pull", "resolve"]\n'
        "  skip_verify = true\n"
    )


def write_configs(conf_dir: Path) -> Path:
    """Writes containerd's config (returned), the CNI network and the registry policy."""
    for d in (layout.CONTAINERD_ROOT, layout.CONTAINERD_STATE, layout.CNI_CONF_DIR, layout.CNI_DATA_DIR):
        d.mkdir(parents=True, exist_ok=True)
    default_hosts = layout.REGISTRY_HOSTS_DIR / "_default"
    default_hosts.mkdir(parents=True, exist_ok=True)
    (default_hosts / "hosts.toml").write_text(registry_hosts_toml())
    (layout.CNI_CONF_DIR / CNI_CONFIG_NAME).write_text(json.dumps(cni_conflist(), indent=2) + "\n")
    config = conf_dir / "containerd.toml"
    config.write_text(config_toml())
    return config


def ctr(bin_dir: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    argv = [
        str(bin_dir / "ctr"),
        "--address",
        str(layout.CONTAINERD_SOCKET),
        "-n",
        layout.CONTAINERD_NAMESPACE,
    ]
    return subprocess.run([*argv, *args], capture_output=True, text=True, timeout=timeout)


def wait_ready(bin_dir: Path, alive, timeout: float = 60) -> None:
    """Until containerd answers on its socket (``alive`` is checked so a crash is reported at once)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError_("containerd exited while starting; see its log")
        if layout.CONTAINERD_SOCKET.exists() and ctr(bin_dir, "version", timeout=10).returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError_(f"containerd did not answer on {layout.CONTAINERD_SOCKET} within {timeout:.0f}s")


def import_image(bin_dir: Path, archive: Path, ref: str) -> float:
    """Imports an OCI archive (``oci-archive``) under ``ref``; returns the seconds it took. Nothing is pulled:
    the archive holds every blob."""
    started = time.monotonic()
    repo, _, _tag = ref.rpartition(":")
    r = ctr(bin_dir, "images", "import", "--base-name", repo, str(archive))
    if r.returncode != 0:
        raise RuntimeError_(f"importing {archive} as {ref} failed: {r.stderr.strip() or r.stdout.strip()}")
    if ref not in list_images(bin_dir):
        raise RuntimeError_(f"importing {archive} did not create {ref}; ctr said:\n{r.stdout}{r.stderr}")
    return time.monotonic() - started


def list_images(bin_dir: Path) -> list[str]:
    r = ctr(bin_dir, "images", "list", "-q")
    return r.stdout.split() if r.returncode == 0 else []
