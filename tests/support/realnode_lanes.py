"""The real-node tier in two lanes: two pytest processes on the one node (``make test-realnode``).

Why: once the platform is installed, the tier mostly waits on real containers (a probe's period, a graph's
start-up, the HPA's sync), one test at a time, while the rest of the machine has finished its own work. The
``owner`` lane starts the node, runs what must come before the platform (the crash modules, ``ct install``),
installs the platform and runs its share of the modules; the ``guest`` lane attaches to that node once it
runs (its tests that need only the node run while ``ct install`` waits on its releases) and, once the
platform is installed, runs the other share beside the owner's. The modules that disturb what every graph uses
(``EXCLUSIVE``: deleting the NATS and etcd pods, killing the leading operator pod) run in the owner lane after
the guest has finished. The owner stops the node only after the guest has ended. Without
``DYNAMO_REALNODE_LANE`` a run is one lane with every module (``pytest tests/realnode -k ...``).

The lanes meet through files in ``DYNAMO_REALNODE_SHARE`` (the Makefile empties it first):

- ``owner.pid``, ``guest.pid``: who runs, so that neither waits for a process that is gone;
- ``node.json``: the node's directory, once it runs: the guest's tests that need only the node start
  (they run while the owner's ``ct install`` waits on its releases);
- ``platform.json``: the install's seconds, once the platform is installed: the guest's other tests start;
- ``owner.ended``: the owner's session ended (before ``platform.json``, the node or the install failed);
- ``guest.done``: the guest's session ended (its namespaces deleted).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from support.poll import wait_for

OWNER, GUEST = "owner", "guest"
# The guest's modules. Every other module runs in the owner lane: a new module lands there.
GUEST_MODULES = (
    "test_storage_claims",
    "test_image",
    "test_host_guard",
    "test_multinode",
    "test_mpi",
    "test_nats_namespaces",
    "test_scaling",
)
# Owner modules that run only once the guest has ended: they delete the NATS and etcd pods every graph uses
# or kill the leading operator pod, which would stall or break the guest's graphs mid-test.
EXCLUSIVE = ("test_bundled_graphs", "test_failover", "test_services")
# How long a lane waits for the other: the owner's setup (crash modules, node, ct install, platform) takes
# four to five minutes on 2 cores, and a loaded machine twice that.
WAIT_SECONDS = 1500.0


def lane() -> str:
    """``owner``, ``guest``, or ``""`` (one lane: every module)."""
    value = os.environ.get("DYNAMO_REALNODE_LANE", "")
    if value not in ("", OWNER, GUEST):
        raise ValueError(f"DYNAMO_REALNODE_LANE must be {OWNER!r} or {GUEST!r}, not {value!r}")
    if value and not os.environ.get("DYNAMO_REALNODE_SHARE"):
        raise ValueError("DYNAMO_REALNODE_LANE needs DYNAMO_REALNODE_SHARE (the directory the lanes share)")
    return value


def runs_in(module: str, which: str) -> bool:
    """Whether ``module`` (a file's stem) runs in lane ``which``."""
    if which == GUEST:
        return module in GUEST_MODULES
    if which == OWNER:
        return module not in GUEST_MODULES
    return True


def share() -> Path:
    return Path(os.environ["DYNAMO_REALNODE_SHARE"])


def _alive(pid_file: Path) -> bool:
    try:
        os.kill(int(pid_file.read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


def started(which: str) -> None:
    (share() / f"{which}.pid").write_text(str(os.getpid()))


def _announce(name: str, doc: dict) -> None:
    tmp = share() / f"{name}.tmp"
    tmp.write_text(json.dumps(doc))
    tmp.rename(share() / name)


def announce_node(cluster_dir: Path) -> None:
    _announce("node.json", {"cluster_dir": str(cluster_dir)})


def announce_platform(install_seconds: float) -> None:
    _announce("platform.json", {"install_seconds": install_seconds})


def ended(which: str) -> None:
    """This lane's session ended (called at its end, whatever happened)."""
    (share() / (f"{OWNER}.ended" if which == OWNER else f"{GUEST}.done")).touch()


def wait_for_node() -> dict:
    """The guest's first wait: the owner's ``node.json``."""
    return _wait_for_owner("node.json", "start the node")


def wait_for_platform() -> dict:
    """The guest's second wait: the owner's ``platform.json``."""
    return _wait_for_owner("platform.json", "install the platform")


def _wait_for_owner(name: str, what: str) -> dict:
    """A file the owner writes; a failure names why the owner gave none."""
    path, pid = share() / name, share() / "owner.pid"

    def state() -> str | None:
        if path.exists():
            return "ready"
        if (share() / "owner.ended").exists():
            return "ended"
        if pid.exists() and not _alive(pid):
            return "gone"
        return None

    got = wait_for(state, WAIT_SECONDS, f"the owner lane to {what}", interval=1.0)
    if got != "ready":
        raise AssertionError(
            f"the owner lane {'ended' if got == 'ended' else 'died'} before it could {what} "
            "(its output says why): the guest lane cannot run its tests"
        )
    return json.loads(path.read_text())


def wait_for_guest() -> None:
    """The owner's wait, before its exclusive modules and before it stops the node: the guest's end. A guest
    that never started (its pid file absent after a minute) or died is not waited for."""
    done, pid = share() / "guest.done", share() / "guest.pid"
    since = time.monotonic()

    def over() -> bool:
        if done.exists():
            return True
        if pid.exists():
            return not _alive(pid)
        return time.monotonic() - since > 60

    wait_for(over, WAIT_SECONDS, "the guest lane to end", interval=1.0)
