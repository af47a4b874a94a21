"""Pure parts of the local control plane manager: certificates, ports, state, process checks."""

from __future__ import annotations

import ipaddress
import subprocess
import sys

from cryptography import x509
from dynamo_localcluster import pki
from dynamo_localcluster.cluster import LocalCluster, _pid_alive, free_port, leftover_processes
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


def test_free_port_is_bindable_on_loopback():
    port = free_port()
    assert 1024 < port < 65536


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
