"""The real-node tier's two lanes (``support.realnode_lanes``): which modules each runs, and how each waits
for the other without ever waiting for a process that is gone."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import realnode_lanes as lanes

REALNODE = Path(__file__).resolve().parents[1] / "realnode"


def _modules() -> set[str]:
    return {p.stem for p in REALNODE.glob("test_*.py")}


def test_every_module_runs_in_exactly_one_lane_and_the_named_ones_exist():
    modules = _modules()
    # a renamed module would move to the owner lane unseen: every name the lanes give is a module
    assert set(lanes.GUEST_MODULES) <= modules and set(lanes.EXCLUSIVE) <= modules
    for m in modules:
        assert lanes.runs_in(m, lanes.OWNER) != lanes.runs_in(m, lanes.GUEST), m
        assert lanes.runs_in(m, "")
    # the exclusive modules wait for the guest's end, so they must not be the guest's
    assert all(lanes.runs_in(m, lanes.OWNER) for m in lanes.EXCLUSIVE)
    # what must come before the platform, or tear nodes down, is the owner's
    assert all(lanes.runs_in(m, lanes.OWNER) for m in ("test_00_crash_teardown", "test_01_ct_install"))


@pytest.fixture
def share(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("DYNAMO_REALNODE_SHARE", str(tmp_path))
    monkeypatch.setattr(lanes, "WAIT_SECONDS", 1.0)
    return tmp_path


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_lane_is_owner_or_guest_and_needs_its_share(monkeypatch, share):
    monkeypatch.setenv("DYNAMO_REALNODE_LANE", "guest")
    assert lanes.lane() == lanes.GUEST
    monkeypatch.setenv("DYNAMO_REALNODE_LANE", "second")
    with pytest.raises(ValueError, match="must be 'owner' or 'guest'"):
        lanes.lane()
    monkeypatch.setenv("DYNAMO_REALNODE_LANE", "owner")
    monkeypatch.delenv("DYNAMO_REALNODE_SHARE")
    with pytest.raises(ValueError, match="DYNAMO_REALNODE_SHARE"):
        lanes.lane()


def test_the_guest_gets_the_owners_node_then_its_platform(share):
    lanes.announce_node(Path("/x/node-1"))
    assert lanes.wait_for_node() == {"cluster_dir": "/x/node-1"}
    lanes.announce_platform(36.5)
    assert lanes.wait_for_platform() == {"install_seconds": 36.5}
    assert not list(share.glob("*.tmp"))


def test_the_guest_stops_waiting_when_the_owner_ended_or_died_before_its_platform(share):
    lanes.ended(lanes.OWNER)
    with pytest.raises(AssertionError, match="owner lane ended before it could install the platform"):
        lanes.wait_for_platform()
    (share / "owner.ended").unlink()
    (share / "owner.pid").write_text(str(_dead_pid()))
    with pytest.raises(AssertionError, match="owner lane died before it could start the node"):
        lanes.wait_for_node()


def test_the_guest_waits_while_the_owner_lives(share):
    lanes.started(lanes.OWNER)  # this process: alive, and no platform comes
    with pytest.raises(AssertionError, match="waiting for the owner lane to install"):
        lanes.wait_for_platform()


def test_the_owner_waits_for_the_guests_end_not_for_a_dead_guest(share):
    lanes.started(lanes.GUEST)  # alive: the owner waits
    with pytest.raises(AssertionError, match="waiting for the guest lane to end"):
        lanes.wait_for_guest()
    lanes.ended(lanes.GUEST)
    lanes.wait_for_guest()  # done: at once
    (share / "guest.done").unlink()
    (share / "guest.pid").write_text(str(_dead_pid()))
    lanes.wait_for_guest()  # died without its mark: not waited for
    assert json.dumps(sorted(p.name for p in share.iterdir())) == '["guest.pid"]'
