"""Serving-certificate and CA rotation while 100 admissions per second flow: none may fail.

The webhook runs in this process (the operator's own ``setup_webhooks`` with a fast ``CertPolicy``) so the
test can order a rotation; the load comes from a process of its own (``loadgen.py``): dry-run DGD creates,
each of which the apiserver sends through the mutating and validating webhooks and converts to the storage
version through the conversion webhook, all over TLS with the CA bundle the certificate manager injected.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import pytest
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.runtime.settings import RuntimeSettings
from dynamo_operator.webhooks import CertPolicy, setup_webhooks
from plane import OPNS, Plane
from support.poll import wait_for

pytestmark = [pytest.mark.api, pytest.mark.slow]

RATE = 100.0  # admissions per second the load generator paces itself to
# What the load must at least reach for the run to mean anything: 100/s on an idle 2-core machine; a
# machine busy with other work (the apiserver, this webhook and the generator share its cores) gets less.
MIN_RATE = 25.0
LOADGEN = Path(__file__).with_name("loadgen.py")
TESTS = Path(__file__).resolve().parents[1]  # the load process imports `support` from here


class Load:
    def __init__(self, plane: Plane, state: Path):
        self.state = state
        self.proc = subprocess.Popen(
            [sys.executable, str(LOADGEN), plane.cluster.kubeconfig, str(state), str(RATE), "8", "120"],
            env={**plane.cluster.env, "PYTHONPATH": str(TESTS)},
            stdout=subprocess.DEVNULL,
            stderr=open(state.with_suffix(".log"), "wb"),  # noqa: SIM115 - the child keeps it
        )

    def read(self) -> dict:
        with contextlib.suppress(OSError, ValueError):
            return json.loads(self.state.read_text())
        return {"ok": 0, "failed": 0, "failures": [], "seconds": 0.0}

    def count(self) -> int:
        got = self.read()
        return got["ok"] + got["failed"]

    def finish(self) -> dict:
        Path(str(self.state) + ".stop").touch()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        return self.read()


def test_serving_and_ca_rotation_under_load_fail_no_admission(bare_plane: Plane, tmp_path: Path):
    plane = bare_plane
    mgr = Manager(
        RuntimeSettings(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            pod_namespace=OPNS,
            config={"orchestrators": {"grove": {"enabled": False}}},
        ),
        api_client=plane.cluster.api_client(),
    )
    policy = CertPolicy(check_interval=1.0, reload_interval=0.5, ca_overlap=dt.timedelta(seconds=4))
    port = plane.webhook_port
    wh = setup_webhooks(mgr, host="127.0.0.1", port=port, url_base=f"https://127.0.0.1:{port}", policy=policy)
    mgr.start()
    load = None
    try:
        wait_for(plane.admission_works, 60, "admission never worked", interval=0.5)
        load = Load(plane, tmp_path / "load.json")
        wait_for(lambda: load.count() >= 100, 30, "the load never got going")
        serial = wh.tls.serial
        wh.certs.rotate_serving()
        wait_for(lambda: wh.tls.serial != serial, 30, "no new serving certificate")
        at = load.count()
        wait_for(lambda: load.count() >= at + 100, 30)
        serial = wh.tls.serial
        wh.certs.rotate_ca()
        wait_for(lambda: wh.tls.serial != serial, 60, "no serving certificate from the new CA")
        at = load.count()
        wait_for(lambda: load.count() >= at + 200, 30)
        got = load.finish()
        rate = (got["ok"] + got["failed"]) / max(got["seconds"], 1e-6)
        print(
            f"\n[fault] cert rotation (serving, then CA) under load: admissions={got['ok']}, "
            f"failed={got['failed']}, rate={rate:.0f}/s over {got['seconds']:.1f}s"
        )
        assert got["failed"] == 0, got["failures"][:5]
        assert rate >= MIN_RATE, f"only {rate:.0f} admissions/s reached"
    finally:
        if load is not None and load.proc.poll() is None:
            load.finish()
        mgr.stop()
        mgr.wait(30)
