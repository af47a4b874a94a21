"""Pure parts of the local control plane manager: certificates, ports, state, process checks."""

from __future__ import annotations

import ipaddress
import os
import random
import socket
import subprocess
import sys

import pytest
from cryptography import x509
from dynamo_localcluster import cluster as cluster_mod
from dynamo_localcluster import pki
from dynamo_localcluster.cluster import (
    LISTEN_PORTS,
    LocalCluster,
    _ephemeral_low,
    _pid_alive,
    free_port,
    leftover_processes,
)
from support.poll import wait_for


def test_pki_serving_cert_names_loopback_and_admin_is_master(tmp_path):
    p = pki.generate(tmp_path / "pki")
    srv = x509.load_pem_x509_certificate(p.serving_crt.read_bytes())
    san = srv.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in san.get_values_for_type(x509.IPAddress)
    assert "kubernetes.default.svc" in san.get_values_for_type(x509.DNSName)
    adm = x509.load_pem_x509_certificate(p.admin_crt.read_bytes())
    assert "O=system:masters" in adm.subject.rfc4514_string()
    assert adm.issuer == srv.issuer
    assert oct(p.admin_key.stat().st_mode & 0o777) == "0o600"


@pytest.fixture(autouse=True)
def _own_port_reservations(monkeypatch, tmp_path):
    """This module's picks are recorded in a directory of its own: the run's shared one would keep its
    fifty test picks from the integration processes for a quarter of an hour."""
    monkeypatch.setattr(cluster_mod, "PORT_RESERVATIONS", tmp_path / "port-reservations")


def test_free_port_is_bindable_on_loopback_and_below_the_ephemeral_range():
    """Outgoing connections take their local ports from the ephemeral range: a listener's port must not
    be one of those, or a busy suite's clients take it between the pick and the component's bind."""
    low = _ephemeral_low()
    ports = {free_port() for _ in range(50)}
    assert all(LISTEN_PORTS[0] <= p < low for p in ports), sorted(ports)
    assert len(ports) > 40  # picked at random, not one fixed port
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports.pop()))


def test_free_port_never_returns_a_port_someone_listens_on(monkeypatch):
    """The only port of the range is taken: every pick is refused by its bind, and the fallback (the
    kernel's choice) is used rather than handing out the busy port."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        monkeypatch.setattr(cluster_mod, "LISTEN_PORTS", (busy - 1, busy))
        monkeypatch.setattr(cluster_mod, "_ephemeral_low", lambda: busy + 1)
        tried: list[int] = []
        monkeypatch.setattr(random.SystemRandom, "randint", lambda self, a, b: tried.append(busy) or busy)
        port = free_port()
        assert port != busy and len(tried) == 200, (port, len(tried))


def test_a_picked_port_is_not_picked_again_until_its_reservation_expires(monkeypatch, tmp_path):
    """A picked port is bound by its user later (seconds, sometimes a minute): a second picker, in this
    process or another of the run, must not get it meanwhile even though nothing listens on it yet. With a
    range of two free ports, the second pick gets the other one and the third the kernel's fallback; once
    a reservation is older than ``RESERVE_SECONDS`` its port may be picked again."""
    with socket.socket() as a, socket.socket() as b:
        a.bind(("127.0.0.1", 0))
        b.bind(("127.0.0.1", 0))
        pair = sorted((a.getsockname()[1], b.getsockname()[1]))
    monkeypatch.setattr(cluster_mod, "PORT_RESERVATIONS", tmp_path / "ports")
    monkeypatch.setattr(cluster_mod, "LISTEN_PORTS", tuple(pair))
    monkeypatch.setattr(cluster_mod, "_ephemeral_low", lambda: pair[1] + 1)
    cycle = iter(pair * 200)
    monkeypatch.setattr(random.SystemRandom, "randint", lambda self, lo, hi: next(cycle))
    first, second, third = free_port(), free_port(), free_port()
    assert [first, second] == pair and third not in pair, (first, second, third)
    old = cluster_mod.time.time() - cluster_mod.RESERVE_SECONDS - 1
    os.utime(tmp_path / "ports" / str(first), (old, old))
    cycle = iter(pair * 200)
    assert free_port() == first  # its reservation expired; the other one still holds


def test_the_ephemeral_range_is_read_with_a_fallback(tmp_path):
    f = tmp_path / "range"
    f.write_text("40000\t60999\n")
    assert _ephemeral_low(str(f)) == 40000
    assert _ephemeral_low(str(tmp_path / "missing")) == 32768


def test_state_round_trip_and_stop_kills_process_group(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    cluster = LocalCluster(tmp_path, profile="api", tie_to_parent=False)
    from dynamo_localcluster.cluster import Component

    cluster.components = [Component("sleeper", [], tmp_path / "x.log", pid=proc.pid)]
    cluster.ports = {"apiserver": 1}
    cluster._save_state()
    again = LocalCluster.from_state(tmp_path)
    assert again is not None and again.components[0].pid == proc.pid
    assert again.components[0].alive()
    again.stop()
    proc.wait(5)
    assert not _pid_alive(proc.pid)
    assert LocalCluster.from_state(tmp_path) is None


def test_leftover_processes_finds_by_marker(tmp_path):
    marker = str(tmp_path / "marker-dir")
    proc = subprocess.Popen([sys.executable, "-c", "import time,sys; time.sleep(30)", marker])
    try:
        # Right after fork the child still shows the parent's command line until it execs: poll, bounded.
        wait_for(
            lambda: any(pid == proc.pid for pid, _ in leftover_processes(marker)),
            10,
            "the sleeper naming the marker",
            interval=0.05,
        )
    finally:
        proc.kill()
        proc.wait()
    assert not any(pid == proc.pid for pid, _ in leftover_processes(marker))
