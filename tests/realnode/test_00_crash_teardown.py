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
