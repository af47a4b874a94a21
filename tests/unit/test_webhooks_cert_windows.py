"""No window in which a caller meets a certificate it does not trust (issue 22: the API server saw "x509:
certificate signed by unknown authority" for a conversion): the CA switch waits for every caller to carry
the new bundle for the overlap, a loader's stale read never undoes the leader's newer load, and a rotation
requested while a reconcile runs is not lost."""

from __future__ import annotations

import base64
import datetime as dt
import threading

from dynamo_operator.certsecret import Material, signed_by
from dynamo_operator.runtime.client import SECRETS
from dynamo_operator.webhooks.certs import CertManager, CertPolicy, TLSContextHolder, load_bundle
from support.fakecerts import HOSTS, FakeClient, crd, webhook_config

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
OVERLAP = dt.timedelta(minutes=5)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> dt.datetime:
        return self.now


def setup() -> tuple[FakeClient, CertManager, Clock]:
    fake = FakeClient()
    fake.objs[("validatingwebhookconfigurations", None, "ours")] = webhook_config(None, "ours", "op")
    fake.objs[("customresourcedefinitions", None, "dgdsa")] = crd("dgdsa")
    clock = Clock()
    cm = CertManager(
        client=fake,
        namespace="op",
        hosts=HOSTS,
        holder=TLSContextHolder(),
        policy=CertPolicy(ca_overlap=OVERLAP),
        clock=clock,
    )
    cm.reconcile()
    return fake, cm, clock


def served_ca_serial(cm: CertManager, fake: FakeClient) -> int:
    """The serial of the CA that signed the certificate being served."""
    m = Material.from_secret(fake.get(SECRETS, "webhook-server-cert", "op"))
    (issuer,) = [c for c in load_bundle(m.ca_crt) if signed_by(m.serving_cert(), c)]
    assert cm.holder.serial == m.serving_cert().serial_number
    return issuer.serial_number


def drop_crd_bundle(fake: FakeClient) -> None:
    """What a re-applied CRD (or a test's `kubectl replace`) does to the conversion's clientConfig."""
    cc = fake.objs[("customresourcedefinitions", None, "dgdsa")]["spec"]["conversion"]["webhook"][
        "clientConfig"
    ]
    cc.pop("caBundle", None)


def test_the_switch_to_a_new_ca_waits_until_every_caller_carried_the_bundle_for_the_overlap():
    fake, cm, clock = setup()
    old_ca = served_ca_serial(cm, fake)
    cm.rotate_ca()
    assert cm.reconcile().startswith("CA renewal: published")
    # a caller loses the bundle right after the injection (a CRD re-applied): the watch sees it
    drop_crd_bundle(fake)
    cm._kick_if_stale(fake.objs[("customresourcedefinitions", None, "dgdsa")])
    clock.now += OVERLAP + dt.timedelta(seconds=1)  # the Secret's overlap is over ...
    assert cm.reconcile().startswith("waiting until every caller")  # ... but not the caller's
    assert served_ca_serial(cm, fake) == old_ca
    crd_bundle = fake.objs[("customresourcedefinitions", None, "dgdsa")]["spec"]["conversion"]["webhook"]
    assert crd_bundle["clientConfig"]["caBundle"] == base64.b64encode(cm.bundle).decode()  # re-injected
    clock.now += OVERLAP - dt.timedelta(seconds=2)
    assert cm.reconcile().startswith("waiting until every caller")
    clock.now += dt.timedelta(seconds=2)
    assert cm.reconcile() == "CA renewal: serving certificate switched to the new CA"
    assert served_ca_serial(cm, fake) != old_ca


def test_a_forced_serving_rotation_during_the_overlap_waits_for_the_switch_too():
    fake, cm, clock = setup()
    old_ca = served_ca_serial(cm, fake)
    cm.rotate_ca()
    cm.reconcile()
    cm.rotate_serving()  # would be issued by the newest CA, which callers may not trust yet
    assert cm.reconcile().startswith("waiting until every caller")
    assert served_ca_serial(cm, fake) == old_ca
    clock.now += OVERLAP
    cm.reconcile()
    assert served_ca_serial(cm, fake) != old_ca


def test_a_stale_read_by_the_loader_never_replaces_the_leaders_newer_certificate():
    fake, leader, _ = setup()
    follower_reads = threading.Event()
    release = threading.Event()
    real_get = fake.get
    loader_thread: list[threading.Thread] = []

    def get(res, name, namespace=None):
        got = real_get(res, name, namespace)
        if threading.current_thread() in loader_thread:  # the loader's read: hold it, then let go
            follower_reads.set()
            release.wait(10)
        return got

    fake.get = get  # type: ignore[method-assign]
    loader = threading.Thread(target=leader.load)
    loader_thread.append(loader)
    loader.start()
    assert follower_reads.wait(10)  # the loader has read the Secret as it was
    leader.rotate_serving()
    rotating = threading.Thread(target=leader.reconcile)
    rotating.start()
    rotating.join(0.5)
    assert rotating.is_alive()  # the rotation waits for the loader's read-and-apply to finish
    release.set()
    loader.join(10)
    rotating.join(10)
    m = Material.from_secret(real_get(SECRETS, "webhook-server-cert", "op"))
    assert leader.holder.serial == m.serving_cert().serial_number  # the newest, not the stale read


def test_a_rotation_asked_for_while_a_reconcile_writes_is_not_lost():
    fake, cm, _ = setup()
    real_replace = fake.replace
    asked = []

    def replace(res, body, subresource=None):
        if res.plural == "secrets" and not asked:
            asked.append(True)
            cm.rotate_serving()  # another thread asks while this reconcile is writing
        return real_replace(res, body, subresource)

    fake.replace = replace  # type: ignore[method-assign]
    cm.rotate_serving()
    first = cm.holder.serial
    assert cm.reconcile() == "serving certificate rotation requested"
    second = cm.holder.serial
    assert cm.reconcile() == "serving certificate rotation requested"  # the second request is honoured
    assert len({first, second, cm.holder.serial}) == 3
    assert cm.reconcile() == "up to date"
