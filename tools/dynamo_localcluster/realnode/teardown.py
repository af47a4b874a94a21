"""Complete removal of a real node, callable at any time, from any state, by anyone; and nothing else.

A node changes machine-wide state: processes (containerd, its shims and every container escape the process
tree of whoever started them), mounts (overlay root filesystems, shm, secrets, network namespaces, the
kubelet's own bind mount), the bridge, iptables chains, cgroups and sysctls. ``teardown()`` removes all of it
by what it is (our fixed names and path prefixes, see ``layout``), not by a record of one run, so a crash or a
``kill -9`` of the test run is cleaned up just as well: by the reaper that watched the owner, or by the next
start, which always runs a teardown first. The state file adds what cannot be rediscovered: the sysctl values
from before the first start, and that a node of ours started at all.

What is not ours is never touched, even when it looks the same (``foreign``): only processes naming our
directories and containers in our own cgroup root are killed, only that cgroup root is removed, and the
``KUBE-*`` chains (whose names kube-proxy fixes) are removed only when the state file says our node started
on a machine that had none, and no other node's kubelet runs now.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import cgroups, foreign, layout, network

MNT_DETACH = 2


@dataclass
class State:
    """What a running node recorded: who owns it, its sysctls from before, its processes."""

    owner_pid: int | None = None
    owner_start: str | None = None
    detached: bool = False
    cluster_dir: str = ""
    sysctls: dict[str, str] = field(default_factory=dict)
    nft_tables: list[str] = field(default_factory=list)  # the nftables tables from before the first start
    pids: dict[str, int] = field(default_factory=dict)
    reaper_pid: int | None = None

    def save(self) -> None:
        layout.STATE_FILE.parent.mkdir(parents=True, exist_ok=True)
        tmp = layout.STATE_FILE.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.__dict__, indent=2))
        tmp.rename(layout.STATE_FILE)

    @classmethod
    def load(cls) -> State | None:
        try:
            return cls(**json.loads(layout.STATE_FILE.read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def owner_alive(self) -> bool:
        if self.detached:
            return any(_alive(pid) for pid in self.pids.values())
        return self.owner_pid is not None and process_start(self.owner_pid) == self.owner_start


def process_start(pid: int) -> str | None:
    """The start time of ``pid`` (clock ticks since boot): with the pid, it names one process for good."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


# ---- processes -----------------------------------------------------------------------------------------


def node_processes() -> list[tuple[int, str]]:
    """containerd, its shims, the kubelet, kube-proxy and the node DNS: every process naming our paths."""
    markers = (str(layout.RUN), str(layout.ROOT), str(layout.CONTAINERD_SOCKET))
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != me:
            cmd = _cmdline(int(entry.name))
            if any(m in cmd for m in markers) and "realnode.reaper" not in cmd:
                found.append((int(entry.name), cmd.strip()))
    return found


def kill_all(timeout: float = 15.0) -> list[str]:
    """SIGKILLs the node's processes (kubelet first, so nothing is restarted) and every container process
    until none is left; returns what survived."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        procs = node_processes()
        kubelets = [pid for pid, cmd in procs if "kubelet" in cmd.split(" ", 1)[0]]
        targets = kubelets or [pid for pid, _ in procs]
        targets += sorted(cgroups.pids())
        if not targets:
            return []
        for pid in targets:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    return [f"pid {pid}: {cmd[:120]}" for pid, cmd in node_processes()] + [
        f"container pid {pid}" for pid in sorted(cgroups.pids())
    ]


# ---- mounts, cgroups, files ----------------------------------------------------------------------------


def node_mounts() -> list[str]:
    """Mount points under our directories, deepest first."""
    prefixes = (str(layout.ROOT), str(layout.RUN))
    points = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            point = line.split()[4].replace("\\040", " ")
            if point.startswith(prefixes):
                points.append(point)
    return sorted(set(points), key=lambda p: (-p.count("/"), p))


def unmount_all() -> list[str]:
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    for _ in range(5):
        points = node_mounts()
        if not points:
            return []
        for point in points:
            libc.umount2(point.encode(), MNT_DETACH)
    return node_mounts()


def remove_files() -> list[str]:
    left = []
    for d in (layout.ROOT, layout.RUN):
        shutil.rmtree(d, ignore_errors=True)
        if d.exists():
            left.append(str(d))
    with contextlib.suppress(OSError):  # /run/dynamo-platform, when nothing else is in it
        layout.RUN.parent.rmdir()
    return left


# ---- the whole teardown --------------------------------------------------------------------------------


def teardown(state: State | None = None) -> list[str]:
    """Removes everything a real node may have left. Returns what could not be removed (empty: clean).

    Order: processes (the kubelet first), mounts, iptables chains, bridge, cgroups, directories, then the
    sysctls saved before the first start, and the state file last (only when everything else is gone, so a
    failed teardown is retried by the next start with the original sysctl values)."""
    state = state or State.load()
    problems = kill_all()
    problems += [f"mount {m}" for m in unmount_all()]
    problems += _remove_chains(state)
    if state is not None:
        problems += network.remove_new_empty_tables(state.nft_tables)
    try:
        network.delete_bridge()
    except network.NetworkError as e:
        problems.append(str(e))
    problems += cgroups.remove()
    problems += remove_files()
    if state is not None:
        problems += [f"sysctl {n}" for n in network.restore_sysctls(state.sysctls)]
    if not problems:
        with contextlib.suppress(FileNotFoundError):
            layout.STATE_FILE.unlink()
    return problems


def _remove_chains(state: State | None) -> list[str]:
    """Our guard chains always; the ``KUBE-*`` chains only when they are our kube-proxy's and kubelet's:
    a node of ours started (it refuses to start beside such chains) and no other node's agent runs now,
    whose chains would carry the same names. Chains left for that reason are reported, so the state file
    stays and the next start (which refuses beside that agent) or ``node-clean`` tries again."""
    others = foreign.node_agents() if state is not None else []
    left = network.remove_chains(include_kube=state is not None and not others)
    if others:
        pid, cmd = others[0]
        left.append(f"KUBE-* chains: another node's agent runs (pid {pid}: {cmd[:60]}); none was touched")
    return left


def leftovers(include_kube: bool = True) -> list[str]:
    """What a complete teardown leaves: nothing. The tests' and the demo's proof, by the same checks an
    operator would run (pgrep, mount, ip link, iptables-save). ``include_kube=False`` leaves the ``KUBE-*``
    chains out (another node's, when no node of ours started)."""
    found = [f"process {pid}: {cmd[:120]}" for pid, cmd in node_processes()]
    found += [f"container process {pid}" for pid in cgroups.pids()]
    found += [f"mount {m}" for m in node_mounts()]
    if network.bridge_exists():
        found.append(f"bridge {layout.BRIDGE}")
    found += network.leftover_rules(include_kube=include_kube)
    found += [f"cgroup {d}" for d in cgroups.dirs()]
    if layout.STATE_FILE.exists():
        found.append(f"state file {layout.STATE_FILE}")
    return found
