"""``dynamo-operator nats-reload``'s signalling (``natsreload.watch``), with ``os.kill`` recorded instead of
sent: the server found late gets one ``SIGHUP`` whatever the file holds (a change made before the reloader's
first read is loaded), then one per change of content and none while the content stays. The real server's
side is tests/integration/test_nats_access.py."""

from __future__ import annotations

import json
import logging
import signal
import threading
from pathlib import Path

import pytest
from dynamo_operator import natsreload
from dynamo_operator.runtime.log import JSONFormatter
from support.poll import stays, wait_for


@pytest.fixture
def kills(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(natsreload.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    return sent


def test_one_sighup_when_the_server_is_found_then_one_per_change(tmp_path: Path, kills: list) -> None:
    accounts, pid_file = tmp_path / "accounts.conf", tmp_path / "nats.pid"
    accounts.write_text("accounts { A: {} }")
    stop = threading.Event()
    thread = threading.Thread(target=natsreload.watch, args=(accounts, pid_file, 0.02, stop), daemon=True)
    thread.start()
    try:
        stays(lambda: kills == [], 0.2, "no signal while there is no pid file")
        pid_file.write_text("4242\n")  # the server writes its pid file: the file has not changed since
        wait_for(lambda: kills == [(4242, signal.SIGHUP)], 5, lambda: f"one SIGHUP at start: {kills}")
        stays(lambda: len(kills) == 1, 0.2, "no second SIGHUP while the content stays")
        accounts.write_text("accounts { A: {}, B: {} }")
        wait_for(lambda: len(kills) == 2, 5, lambda: f"a SIGHUP for the change: {kills}")
        stays(lambda: len(kills) == 2, 0.2, "one SIGHUP per change")
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive()


def test_a_lost_signal_after_start_is_sent_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A change the server could not take (its process gone) is signalled again on the next tick."""
    accounts, pid_file = tmp_path / "accounts.conf", tmp_path / "nats.pid"
    accounts.write_text("a")
    pid_file.write_text("7")
    sent: list[int] = []
    gone: set[int] = set()  # processes that exited: a signal to one fails, as the kernel's does

    def kill(pid: int, sig: int) -> None:
        if pid in gone:
            raise ProcessLookupError(3, "No such process")
        sent.append(pid)

    monkeypatch.setattr(natsreload.os, "kill", kill)
    stop = threading.Event()
    thread = threading.Thread(target=natsreload.watch, args=(accounts, pid_file, 0.02, stop), daemon=True)
    thread.start()
    try:
        wait_for(lambda: sent == [7], 5, "the start-up SIGHUP")
        # The server exits, then its successor writes its pid. The signal fails for the dead pid only: a
        # global "failing" switch let a retry that had read pid 7 reach it once the switch was off.
        gone.add(7)
        accounts.write_text("b")
        stays(lambda: sent == [7], 0.2, "nothing delivered while the server is gone")
        pid_file.write_text("8")
        wait_for(lambda: sent == [7, 8], 5, lambda: f"the change signalled to the new server: {sent}")
    finally:
        stop.set()
        thread.join(5)


def test_it_logs_through_the_operator_structured_logging(
    tmp_path: Path, kills: list, caplog: pytest.LogCaptureFixture
) -> None:
    """One JSON line per event, with key/values (``runtime.log``), like the operator's other commands."""
    (tmp_path / "nats.pid").write_text("99")
    stop = threading.Event()
    stop.set()  # one pass
    with caplog.at_level(logging.INFO, logger="nats-reload"):
        natsreload.watch(tmp_path / "accounts.conf", tmp_path / "nats.pid", 0.01, stop)
    lines = [json.loads(JSONFormatter().format(r)) for r in caplog.records if r.name == "nats-reload"]
    sent = [line for line in lines if line["msg"] == "sent SIGHUP to nats-server"]
    assert sent and sent[0]["pid"] == 99 and sent[0]["reason"].startswith("start"), lines
