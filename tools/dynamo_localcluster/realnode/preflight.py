"""Can this machine run the real node? One list of reasons, shared by the demo, the tests and ``make``.

The demo falls back to the kwok-only demo with the first reason; the real-node tests are skipped with it.
"""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

from ..cluster import REPO_ROOT
from . import foreign, layout, network, teardown

NODE_BINARIES = ("kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2", "ctr", "pause")
CNI_PLUGINS = ("bridge", "host-local", "loopback")
HOST_COMMANDS = ("ip", "iptables", "ip6tables", "iptables-save", "ip6tables-save")


def node_bin() -> Path:
    """Where the node's tools are: $DYNAMO_NODE_TOOLS_BIN, else .tools/node/bin (make node-tools)."""
    env = os.environ.get("DYNAMO_NODE_TOOLS_BIN")
    return Path(env) if env else REPO_ROOT / ".tools" / "node" / "bin"


def machine_problems() -> list[str]:
    """What the machine lacks (privilege, kernel features, Debian packages), each with what to do."""
    if platform.system() != "Linux":
        return ["not Linux"]
    if os.geteuid() != 0:
        return ["not running as root (the real node changes the network, mounts and cgroups of this machine)"]
    problems = []
    if not Path("/proc/sys/net/bridge").is_dir():
        problems.append("the kernel has no bridge netfilter (br_netfilter): pods could not reach Services")
    if "overlay" not in Path("/proc/filesystems").read_text():
        problems.append("the kernel has no overlay filesystem (containerd's snapshotter)")
    if not any((layout.CGROUP_ROOT / c).is_dir() for c in ("memory", "cgroup.controllers")):
        problems.append("no memory cgroup controller under /sys/fs/cgroup")
    missing = [c for c in HOST_COMMANDS if shutil.which(c) is None]
    missing += [str(layout.RUNC)] if not layout.RUNC.exists() else []
    missing += [f"CNI plugin {p}" for p in CNI_PLUGINS if not (layout.CNI_BIN_DIR / p).exists()]
    if missing:
        problems.append(f"missing {', '.join(missing)}: install Debian's packages with `make node-deps`")
    problems += foreign_problems()
    clashes = network.overlapping_routes()
    if clashes:
        problems.append(
            f"this machine already routes part of {layout.POD_CIDR} or {layout.SERVICE_CIDR} ({clashes[0]}); "
            "the real node would shadow it"
        )
    return problems


def foreign_problems() -> list[str]:
    """Another Kubernetes node on this machine (k3s, kubeadm, kind): its kubelet, pod cgroups or kube-proxy
    chains. The real node would share their names, so it does not start beside them (``foreign``)."""
    ours = teardown.State.load() is not None  # KUBE-* chains a killed node of ours left are cleared at start
    return foreign.reasons(
        foreign.node_agents(),
        foreign.kube_cgroups(),
        foreign.kube_chains(network.list_rules),
        ours_recorded=ours,
    )


def problems(need_binaries: bool = True) -> list[str]:
    found = machine_problems()
    if need_binaries and not found:
        missing = [b for b in NODE_BINARIES if not (node_bin() / b).exists()]
        if missing:
            found.append(f"node tools not built ({', '.join(missing)}): run `make node-tools`")
    return found


def reason() -> str | None:
    """The first reason this machine cannot run the real node, or None."""
    found = problems()
    return found[0] if found else None
