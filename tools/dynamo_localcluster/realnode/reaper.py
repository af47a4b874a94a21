"""Watches the owner of a real node and tears the node down when the owner dies.

Started by the owner (the test session) in a session of its own, so a ``kill -9`` of the test run, which takes
the control plane with it (its components die with their parent), does not leave containerd's shims, the
containers, the mounts, the bridge or the iptables chains behind either.

Usage: python -m dynamo_localcluster.realnode.reaper --owner PID
"""

from __future__ import annotations

import argparse
import fcntl
import os
import select
import sys
import time

from . import layout, teardown


def wait_for_exit(pid: int) -> None:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while not poller.poll(60_000):
        pass
    os.close(fd)


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="tear the real node down when its owner dies")
    parser.add_argument("--owner", type=int, required=True)
    ns = parser.parse_args(args)
    start = teardown.process_start(ns.owner)
    wait_for_exit(ns.owner)
    with open(layout.LOCK_FILE, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = teardown.State.load()
        if state is None or state.owner_pid != ns.owner or state.owner_start != start:
            print(f"owner {ns.owner} exited; its node is already gone", flush=True)
            return 0
        began = time.monotonic()
        left = teardown.teardown(state)
    took = time.monotonic() - began
    print(f"owner {ns.owner} exited; node torn down in {took:.1f}s; left: {left or 'nothing'}", flush=True)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
