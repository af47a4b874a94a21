"""Serving-certificate and CA rotation while 100 admissions and 10 conversions per second flow: none may
fail (issue 22: the API server once saw "x509: certificate signed by unknown authority" for a conversion).

The webhook runs in this process (the operator's own ``setup_webhooks`` with a fast ``CertPolicy``) so the
test can order a rotation; the load comes from a process of its own (``loadgen.py``): dry-run DGD creates,
each of which the apiserver sends through the mutating and validating webhooks and converts to the storage
version through the conversion webhook, all over TLS with the CA bundle the certificate manager injected.
"""

from __future__ import annotations

import base64
import datetime as dt
from pathlib import Path

import pytest
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.runtime.settings import RuntimeSettings
from dynamo_operator.webhooks import CertPolicy, setup_webhooks
from dynamo_operator.webhooks.certs import CRDS, load_bundle
from loadgen import Load
from plane import DGD_BETA, OPNS, Plane, graph
from support.poll import wait_for

pytestmark = [pytest.mark.api, pytest.mark.slow]

RATE = 100.0  # admissions per second the load generator paces itself to
READ_RATE = 10.0  # conversions per second (reads of a stored DGD in the other version)
# What the load must at least reach for the run to mean anything: 100/s on an idle 2-core machine; a
# machine busy with other work (the apiserver, this webhook and the generator share its cores) gets less.
MIN_RATE = 25.0


def test_serving_and_ca_rotation_under_load_fail_no_admission(bare_plane: Plane, tmp_path: Path):
    plane = bare_plane
    mgr = Manager(
        RuntimeSettings(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            pod_namespace=OPNS,
        ),
        api_client=plane.cluster.api_client(),
    )
    policy = CertPolicy(check_interval=1.0, reload_interval=0.5, ca_overlap=dt.timedelta(seconds=4))
    port = plane.webhook_port
    wh = setup_webhooks(
        mgr,
        {"orchestrators": {"grove": {"enabled": False}}},
        host="127.0.0.1",
        port=port,
        url_base=f"https://127.0.0.1:{port}",
        policy=policy,
    )
    mgr.start()
    load = reads = None
    try:
        wait_for(plane.admission_works, 60, "admission never worked", interval=0.5)
        plane.client.request("POST", DGD_BETA.base_path("default"), body=graph("default", "stored"))
        load = Load(plane.cluster, tmp_path / "load.json", RATE)
        # conversions alone, as a v1beta1 client's reads of what is stored in v1alpha1
        reads = Load(plane.cluster, tmp_path / "reads.json", READ_RATE, threads=2, mode="read:default/stored")
        wait_for(lambda: load.count() >= 100 and reads.count() >= 20, 30, "the load never got going")
        serial = wh.tls.serial
        wh.certs.rotate_serving()
        wait_for(lambda: wh.tls.serial != serial, 30, "no new serving certificate")
        at = load.count()
        wait_for(lambda: load.count() >= at + 100, 30)
        serial = wh.tls.serial
        wh.certs.rotate_ca()
        wait_for(lambda: wh.tls.serial != serial, 60, "no serving certificate from the new CA")
        wait_for(lambda: len(load_bundle(wh.certs.bundle)) == 1, 60, "the old CA never dropped")
        at, read_at = load.count(), reads.count()
        wait_for(lambda: load.count() >= at + 200 and reads.count() >= read_at + 40, 30)
        got, read = load.finish(), reads.finish()
        # admissions and conversions share the machine's cores: the run means something if together they
        # reach MIN_RATE
        rate = (got["ok"] + got["failed"] + read["ok"] + read["failed"]) / max(got["seconds"], 1e-6)
        print(
            f"\n[fault] cert rotation (serving, then CA, old CA dropped) under load: admissions={got['ok']}, "
            f"failed={got['failed']}, requests={rate:.0f}/s over {got['seconds']:.1f}s; conversions "
            f"(v1beta1 reads)={read['ok']}, failed={read['failed']}"
        )
        assert got["failed"] == 0, got["failures"][:5]
        assert read["failed"] == 0, read["failures"][:5]
        assert rate >= MIN_RATE, f"only {rate:.0f} admissions and conversions/s reached"
    finally:
        for each in (load, reads):
            if each is not None and each.proc.poll() is None:
                each.finish()
        mgr.stop()
        mgr.wait(30)


def test_a_reapplied_crd_gets_the_bundle_back_at_once(bare_plane: Plane):
    """A CRD re-applied without the caBundle (a Helm upgrade, `kubectl apply -f crds/`, a GitOps sync)
    fails its conversions until the operator re-injects: before, at its next periodic check (up to a minute:
    measured 548-819 failed creates in a row); now at once, through the CRD watch. The periodic check stays
    at its default (a minute), so only the watch can make this pass."""
    plane = bare_plane
    mgr = Manager(
        RuntimeSettings(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            pod_namespace=OPNS,
        ),
        api_client=plane.cluster.api_client(),
    )
    port = plane.webhook_port
    wh = setup_webhooks(
        mgr,
        {"orchestrators": {"grove": {"enabled": False}}},
        host="127.0.0.1",
        port=port,
        url_base=f"https://127.0.0.1:{port}",
    )
    assert wh.certs.policy.check_interval >= 60
    mgr.start()
    try:
        wait_for(plane.admission_works, 60, "admission never worked", interval=0.5)
        name = "dynamographdeployments.nvidia.com"
        conversion = {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"url": f"https://127.0.0.1:{port}/convert"},
            },
        }
        plane.client.patch(
            CRDS, name, [{"op": "replace", "path": "/spec/conversion", "value": conversion}],
            patch_type="application/json-patch+json",
        )  # fmt: skip
        bundle = base64.b64encode(wh.certs.bundle).decode()

        def injected() -> bool:
            cc = plane.client.get(CRDS, name)["spec"]["conversion"]["webhook"]["clientConfig"]
            return cc.get("caBundle") == bundle

        wait_for(injected, 10, "the CRD never got the bundle back", interval=0.1)
        wait_for(plane.admission_works, 10, interval=0.2)
    finally:
        mgr.stop()
        mgr.wait(30)
