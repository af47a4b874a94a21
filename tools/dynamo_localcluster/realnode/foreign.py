"""What on this machine belongs to another Kubernetes node: never touched, and a reason not to start.

A developer's machine may already run k3s, kubeadm's kubelet, or kind (whose kubelets are processes of this
machine too). Their pods live in ``kubepods`` cgroups at the root of each hierarchy and their kube-proxy keeps
``KUBE-*`` chains in iptables: the very names our own kubelet and kube-proxy would use. Killing, removing or
flushing any of them would break that cluster, so the real node starts only where none of them exist, and its
teardown never touches them:

- our kubelet puts its pods under a cgroup root of our own (``layout.CGROUP_PARENT``), so a ``kubepods``
  cgroup anywhere else is someone else's;
- our processes name our directories (``layout.ROOT``, ``layout.RUN``) on their command lines, so a kubelet
  (or k3s, k0s, kubelite) that does not is someone else's;
- kube-proxy's and the kubelet's chain names are fixed in their code (``KUBE-``); a ``KUBE-*`` chain that
  exists while no node of ours has recorded its start (the state file) is someone else's.

Each function takes what it reads as arguments (a /proc, a cgroup root, iptables' rules), so the unit tier
checks them on a fake tree with foreign entries.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from pathlib import Path

from . import layout

# Process names (``/proc/<pid>/comm``) of a Kubernetes node agent: the kubelet and kube-proxy, and the
# distributions that run them inside one binary.
NODE_AGENTS = frozenset({"kubelet", "kube-proxy", "k3s", "k3s-server", "k3s-agent", "k0s", "kubelite"})
# What our own processes carry on their command lines (every path they use is under these).
OUR_MARKERS = (str(layout.ROOT), str(layout.RUN))


def _read(path: Path) -> str:
    with contextlib.suppress(OSError):
        return path.read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    return ""


def node_agents(proc: Path = Path("/proc")) -> list[tuple[int, str]]:
    """(pid, command line) of every kubelet-like process that is not our node's."""
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        comm = _read(entry / "comm")
        if comm not in NODE_AGENTS:
            continue
        cmd = _read(entry / "cmdline")
        # a dead one (a zombie: our own kubelet, just killed, until init reaps it) has no command line
        if cmd and not any(marker in cmd for marker in OUR_MARKERS):
            found.append((int(entry.name), cmd))
    return sorted(found)


def kube_cgroups(root: Path = layout.CGROUP_ROOT) -> list[Path]:
    """``kubepods`` cgroups at the top of every hierarchy: another node's pods (ours live under
    ``layout.CGROUP_PARENT``)."""
    found: list[Path] = []
    if not root.is_dir():
        return found
    for hierarchy in sorted(root.iterdir()):
        for name in layout.KUBE_CGROUPS:
            if (hierarchy / name).is_dir():
                found.append(hierarchy / name)
    return found


def kube_chains(list_rules: Callable[[str, str], str]) -> list[str]:
    """``<tool> -t <table> <chain>`` of every ``KUBE-*`` chain; ``list_rules(tool, table)`` returns what
    ``<tool> -w -t <table> -S`` prints ("" when the table cannot be read)."""
    found = []
    for tool in ("iptables", "ip6tables"):
        for table in layout.IPTABLES_TABLES:
            for line in list_rules(tool, table).splitlines():
                parts = line.split()
                if parts[:1] == ["-N"] and len(parts) > 1 and parts[1].startswith(layout.KUBE_CHAIN_PREFIX):
                    found.append(f"{tool} -t {table} {parts[1]}")
    return found


def reasons(
    agents: Iterable[tuple[int, str]], cgroups: Iterable[Path], chains: Iterable[str], ours_recorded: bool
) -> list[str]:
    """One line per kind of foreign thing, each saying what it is and that it stays untouched."""
    out = []
    agents, cgroups, chains = list(agents), list(cgroups), list(chains)
    if agents:
        pid, cmd = agents[0]
        out.append(
            f"another Kubernetes node runs on this machine (pid {pid}: {cmd[:80]}); the real node would "
            "share its cgroups and iptables chains, so it does not start beside it"
        )
    if cgroups:
        out.append(
            f"another node's pod cgroups exist ({cgroups[0]}); the real node does not start beside them "
            "(stop that cluster, or remove them if it is gone)"
        )
    if chains and not ours_recorded:
        out.append(
            f"another node's kube-proxy chains exist ({chains[0]}); the real node does not start beside "
            "them (stop that cluster, or remove them if it is gone)"
        )
    return out
