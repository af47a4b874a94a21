"""A real node changes machine-wide state; a crash of whoever started it must not leave any of it behind.

Runs first in the tier (before the session's node exists: one node per machine): a node started by a child
process, which is then SIGKILLed. Either the reaper tears the node down, or, when the reaper is killed too,
the next start does. Checked the way an operator would check: processes, mounts, the bridge, iptables,
cgroups (``teardown.leftovers``) and the sysctls from before.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from dynamo_localcluster.realnode import network, teardown
from dynamo_localcluster.realnode.node import RealNode
from realnode_helpers import SLOW
from support.poll import wait_for

OWNER = """
import sys, time
from pathlib import Path
from dynamo_localcluster.cluster import LocalCluster
cluster = LocalCluster(Path(sys.argv[1]), profile="node", nodes=1)
cluster.start(timeout=300)
print("UP", flush=True)
time.sleep(3600)
"""


def _start_owner(directory: Path, log: Path) -> subprocess.Popen:
    out = open(log, "w")  # noqa: SIM115 - the child owns it
    proc = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(directory)], stdout=out, stderr=subprocess.STDOUT, text=True
    )
    out.close()
    wait_for(
        lambda: "UP" in log.read_text() or proc.poll() is not None, 360, "the owner's node to come up", **SLOW
    )
    assert proc.poll() is None, log.read_text()[-3000:]
    return proc


def _clear_earlier_mess() -> None:
    """A run killed before this session (its reaper killed too) left a node and its changed sysctls; the
    values from before are the ones its state file recorded, so clear that first (what every start does),
    then read the machine's own values."""
    if teardown.leftovers():
        assert teardown.teardown() == []


def test_a_killed_owner_is_cleaned_up_by_the_reaper(tmp_path):
    _clear_earlier_mess()
    before = network.read_sysctls()
    owner = _start_owner(tmp_path / "cluster", tmp_path / "owner.log")
    state = teardown.State.load()
    assert state is not None and state.owner_pid == owner.pid and state.reaper_pid
    assert network.bridge_exists() and network.guard_is_first("iptables")
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait(10)
    wait_for(
        lambda: not teardown.leftovers(), 120, "the reaper to tear the node down", **{**SLOW, "interval": 0.5}
    )
    assert network.read_sysctls() == before
    # the reaper exits once done (a zombie until init reaps it: not alive)
    wait_for(
        lambda: not teardown._alive(state.reaper_pid), 30, "the reaper to exit", **{**SLOW, "interval": 0.2}
    )


def test_a_start_clears_what_a_killed_run_left(tmp_path):
    _clear_earlier_mess()
    before = network.read_sysctls()
    owner = _start_owner(tmp_path / "cluster", tmp_path / "owner.log")
    state = teardown.State.load()
    assert state is not None and state.reaper_pid
    os.kill(state.reaper_pid, signal.SIGKILL)  # no reaper: the mess stays until the next start
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait(10)
    left = teardown.leftovers()
    assert any("bridge" in x for x in left) and any("state file" in x for x in left), left
    # The first step of every start (LocalCluster.start calls it before anything else): clear, then set up.
    node = RealNode(tmp_path / "next")
    try:
        node.prepare()
        assert node.cleared, "the start found nothing to clear"
        assert any("bridge" in x for x in node.cleared)
    finally:
        assert node.finish() == []
    assert teardown.leftovers() == []
    assert network.read_sysctls() == before


FOREIGN_CHAIN = "KUBE-FOREIGN-TEST"  # the name another node's kube-proxy would give, made by this test


def _foreign_node(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """Another node's traces, as k3s or kubeadm leave them: a process named ``kubelet``, a ``kubepods`` pod
    cgroup at the top of the memory hierarchy, a ``KUBE-*`` chain jumped to from INPUT. Made by this test,
    and removed by it alone."""
    fake = tmp_path / "bin" / "kubelet"
    fake.parent.mkdir()
    fake.write_bytes(Path("/bin/sleep").read_bytes())
    fake.chmod(0o755)
    agent = subprocess.Popen([str(fake), "600"])
    pods = Path("/sys/fs/cgroup/memory/kubepods")
    pods.mkdir()
    subprocess.run(["iptables", "-w", "-N", FOREIGN_CHAIN], check=True)
    subprocess.run(["iptables", "-w", "-A", "INPUT", "-j", FOREIGN_CHAIN], check=True)
    return agent, pods


def _remove_foreign_node(agent: subprocess.Popen, pods: Path) -> None:
    agent.kill()
    agent.wait(10)
    pods.rmdir()
    subprocess.run(["iptables", "-w", "-D", "INPUT", "-j", FOREIGN_CHAIN], check=False)
    subprocess.run(["iptables", "-w", "-X", FOREIGN_CHAIN], check=False)


def test_beside_another_node_it_refuses_to_start_and_its_cleanup_touches_nothing_of_it(tmp_path):
    """Before: every start tore down first, killing every process in any ``kubepods`` cgroup and deleting
    every ``KUBE-*`` chain, with no check for another kubelet: `make demo` broke a k3s on the same machine."""
    from dynamo_localcluster.cluster import REPO_ROOT
    from dynamo_localcluster.realnode.node import NodeError

    _clear_earlier_mess()
    agent, pods = _foreign_node(tmp_path)
    try:
        check = subprocess.run(
            [str(REPO_ROOT / ".venv" / "bin" / "dynamo-localcluster"), "node-check", "--machine"],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 1, check.stderr
        said = check.stderr.strip().splitlines()
        assert any(f"pid {agent.pid}" in line for line in said), said
        assert any(str(pods) in line for line in said) and any(FOREIGN_CHAIN in line for line in said), said
        with pytest.raises(NodeError, match="another Kubernetes node runs on this machine"):
            RealNode(tmp_path / "refused").prepare()
        assert teardown.State.load() is None and not network.bridge_exists()  # nothing was set up
        teardown.teardown()  # what `dynamo-localcluster node-clean` runs: none of it is ours
        assert agent.poll() is None and pods.is_dir()
        rules = subprocess.run(["iptables", "-w", "-S", "INPUT"], capture_output=True, text=True).stdout
        assert f"-A INPUT -j {FOREIGN_CHAIN}" in rules
    finally:
        _remove_foreign_node(agent, pods)
