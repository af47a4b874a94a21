"""The runtime's answers to a broken connection and to caches that never sync, on a real kube-apiserver.

* A watch whose connection goes silent without closing (a NAT or proxy that drops it) is noticed by its
  inactivity timeout and re-established from its resourceVersion: a TCP proxy on 127.0.0.1 between the
  operator's client and the apiserver stops forwarding the watch connection's bytes, and the informer must
  still see an object created afterwards, with no relist.
* ``dynamo-operator run`` whose caches cannot sync within ``--cache-sync-timeout`` exits 1 and says which.

Every wait is bounded; the proxy binds 127.0.0.1 and dials only the local apiserver.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from dynamo_operator.runtime.client import CONFIGMAPS, NAMESPACES, ResourceClient
from dynamo_operator.runtime.informer import ClientListWatcher, Informer
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from support.poll import wait_for
from support.processes import spawn_operator

pytestmark = pytest.mark.api


class _Link:
    """One proxied connection: two pumps, which forward until the link is frozen (then hold every byte
    back, leaving both sockets open) or closed."""

    def __init__(self, downstream: socket.socket, upstream: socket.socket):
        self.sockets = (downstream, upstream)
        self.frozen = threading.Event()
        self.closed = threading.Event()
        for src, dst in ((downstream, upstream), (upstream, downstream)):
            threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while not self.closed.is_set():
                if self.frozen.is_set():
                    self.closed.wait(0.2)  # silence: read nothing, send nothing, close nothing
                    continue
                ready, _, _ = select.select([src], [], [], 0.2)
                if not ready or self.frozen.is_set():
                    continue
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            if not self.frozen.is_set():
                self.close()

    def close(self) -> None:
        self.closed.set()
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.close()


class BlackholeProxy:
    """A TCP proxy on 127.0.0.1 to ``target_port``; ``freeze_open()`` blackholes every connection open now
    (later connections are forwarded normally)."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.links: list[_Link] = []
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                down, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            up.settimeout(None)
            self.links.append(_Link(down, up))

    def open_links(self) -> list[_Link]:
        return [link for link in self.links if not link.closed.is_set()]

    def freeze_open(self) -> int:
        frozen = self.open_links()
        for link in frozen:
            link.frozen.set()
        return len(frozen)

    def close(self) -> None:
        self._stop.set()
        self.listener.close()
        for link in self.links:
            link.close()


@contextlib.contextmanager
def proxied_client(api_cluster) -> Iterator[tuple[ResourceClient, BlackholeProxy]]:
    """A ResourceClient (the operator's client) that reaches the apiserver only through a BlackholeProxy."""
    proxy = BlackholeProxy(api_cluster.ports["apiserver"])
    cfg = k8s.Configuration()
    k8s_config.load_kube_config(config_file=api_cluster.kubeconfig, client_configuration=cfg)
    cfg.host = f"https://127.0.0.1:{proxy.port}"  # the certificate names 127.0.0.1: TLS still verifies
    try:
        yield ResourceClient(k8s.ApiClient(cfg)), proxy
    finally:
        proxy.close()


@pytest.fixture
def namespace(api_cluster) -> Iterator[str]:
    direct = ResourceClient(api_cluster.api_client())
    name = f"silent-{uuid.uuid4().hex[:8]}"
    direct.create(NAMESPACES, {"metadata": {"name": name}})
    yield name
    with contextlib.suppress(Exception):
        direct.delete(NAMESPACES, name)


def test_a_blackholed_watch_is_re_established_within_its_inactivity_timeout(api_cluster, namespace):
    direct = ResourceClient(api_cluster.api_client())
    # short server-side watches and silence limit keep the test short; the defaults (30-45 s, 55 s) bound
    # the same detection under a minute (tests/unit/test_runtime_load.py holds them to that)
    inactivity = 6.0
    with proxied_client(api_cluster) as (client, proxy):
        lw = ClientListWatcher(
            client, CONFIGMAPS, namespace, watch_timeout=(3, 4), inactivity_timeout=inactivity
        )
        inf = Informer(CONFIGMAPS, lw)
        inf.start()
        try:
            assert inf.wait_for_sync(30)
            direct.create(CONFIGMAPS, {"metadata": {"name": "before", "namespace": namespace}})
            wait_for(lambda: inf.store.get(namespace, "before") is not None, 15)
            links_before = len(proxy.links)
            assert proxy.freeze_open() >= 1  # the watch's connection, held open and silent from now on
            frozen_at = time.monotonic()
            direct.create(CONFIGMAPS, {"metadata": {"name": "after", "namespace": namespace}})
            # the frozen watch would never deliver it; a re-established one must, one silence limit later
            wait_for(
                lambda: inf.store.get(namespace, "after") is not None,
                3 * inactivity + 15,
                lambda: (
                    f"the blackholed watch was not replaced (silent watches noticed: {inf.silent_watches})"
                ),
            )
            took = time.monotonic() - frozen_at
            assert inf.silent_watches >= 1, "the new object arrived without the silence being noticed?"
            assert inf.relists == 1, "a silent watch resumes from its resourceVersion, it does not relist"
            assert len(proxy.links) > links_before, "a new connection replaced the frozen one"
            print(f"silent watch replaced {took:.1f}s after the freeze (inactivity timeout {inactivity}s)")
        finally:
            inf.stop()


def test_operator_exits_1_when_its_caches_do_not_sync(api_cluster, tmp_path):
    proc = spawn_operator(
        api_cluster,
        tmp_path / "unsyncable.log",
        "--no-default-controllers",
        "--setup",
        "dynamo_operator.runtime.testing:setup_unsyncable",
        "--cache-sync-timeout",
        "3",
        metrics=False,
    )
    try:
        code = proc.wait(60)
    finally:
        proc.reap()
    log = proc.log_tail(6000)
    assert code == 1, f"exit code {code}, expected 1:\n{log}"
    assert "caches to sync" in log and "widgets.unserved.runtime-test.dynamo.nvidia.com" in log, log
    assert "starting workers" not in log, f"a worker started on an unsynced cache:\n{log}"
