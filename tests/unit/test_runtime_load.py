"""The runtime under load and faults, without a cluster: caches that never sync stop the manager before any
worker starts; a silent watch is dropped and re-established at once; counters shared by threads add up."""

from __future__ import annotations

import sys
import threading
import time

import pytest
from dynamo_operator.runtime.atomic import AtomicCounter
from dynamo_operator.runtime.client import CONFIGMAPS, WatchSilent, WatchStream
from dynamo_operator.runtime.informer import ClientListWatcher, Informer
from dynamo_operator.runtime.manager import Manager
from dynamo_operator.runtime.settings import RuntimeSettings, RuntimeTunables
from kubernetes.client import ApiClient, Configuration
from support.fakewatch import cm, started
from support.poll import wait_for
from urllib3.exceptions import ReadTimeoutError


def _unreachable_api() -> ApiClient:
    """An apiserver address on loopback where nothing listens: every list fails, no cache ever syncs."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again at once: connecting is refused
    cfg = Configuration()
    cfg.host = f"http://127.0.0.1:{port}"
    return ApiClient(cfg)


def test_caches_that_never_sync_stop_the_manager_with_exit_code_1_and_no_worker_runs():
    tunables = RuntimeTunables(cache_sync_timeout=1.0, list_watch_backoff=(0.05, 0.1))
    mgr = Manager(RuntimeSettings(tunables=tunables), _unreachable_api())
    calls = []
    ctl = mgr.add_controller("never", CONFIGMAPS, lambda req: calls.append(req))
    code = []
    runner = threading.Thread(target=lambda: code.append(mgr.run(install_signal_handlers=False)), daemon=True)
    runner.start()
    runner.join(30)
    assert code == [1], "the manager must exit 1 when its caches do not sync"
    assert "caches to sync" in mgr.stop_reason and "configmaps" in mgr.stop_reason
    assert ctl.queue is None and not ctl.running and calls == []  # no worker ever started


def test_a_controller_added_while_leading_starts_only_on_synced_caches():
    tunables = RuntimeTunables(cache_sync_timeout=0.5, list_watch_backoff=(0.05, 0.1))
    mgr = Manager(RuntimeSettings(tunables=tunables), _unreachable_api())
    mgr._leading.set()  # as if this replica led already
    mgr._started = True
    ctl = mgr.add_controller("late", CONFIGMAPS, lambda req: None)
    wait_for(lambda: mgr.exit_code == 1, 20)
    assert ctl.queue is None
    mgr.stop()


class _SilentThenIdle:
    """List-watch source: the first watch delivers one event and then goes silent (``WatchSilent``, what
    ``WatchStream`` raises after the inactivity timeout); later watches deliver the next object and idle."""

    def __init__(self):
        self.watches = 0
        self.lists = 0
        self.closed = threading.Event()

    def list(self, transform=lambda o: o):
        self.lists += 1
        return [transform(cm("a", 1))], "1"

    def watch(self, rv):
        self.watches += 1
        first = self.watches == 1
        owner = self

        class W:
            def __iter__(self):
                if first:
                    yield {"type": "ADDED", "object": cm("b", 2)}
                    raise WatchSilent("no data on the watch for 55s")
                yield {"type": "ADDED", "object": cm("c", 3)}
                owner.closed.wait(30)

            def close(self):
                owner.closed.set()

        return W()


def test_a_silent_watch_is_re_established_at_once_from_its_resource_version():
    lw = _SilentThenIdle()
    inf = Informer(CONFIGMAPS, lw, backoff=(30.0, 30.0))  # a backoff would show as a 30 s stall
    rec = started(inf)
    try:
        wait_for(lambda: ("add", "c") in rec.events, 5, lambda: rec.events)
        assert inf.silent_watches == 1 and lw.lists == 1  # resumed, not relisted
        assert inf.resource_version == "3"
    finally:
        inf.stop()


def test_a_read_timeout_on_a_watch_stream_is_reported_as_silence():
    class Raw:
        def stream(self, amt=None, decode_content=True):
            yield b'{"type": "ADDED", "object": {"metadata": {"name": "x"}}}\n'
            raise ReadTimeoutError(None, "/api/v1/configmaps", "Read timed out.")

        def shutdown(self):
            pass

    stream = WatchStream(Raw(), silence=55)
    got = []
    with pytest.raises(WatchSilent, match="55"):
        for ev in stream:
            got.append(ev["object"]["metadata"]["name"])
    assert got == ["x"] and stream.closed


def test_default_watch_timeouts_notice_silence_within_a_minute():
    """The server ends a healthy watch before the client would call it silent, and silence is noticed in
    under a minute; a contradicting pair is refused."""
    t = RuntimeTunables()
    t.validate()
    assert t.watch_timeout[1] < t.watch_inactivity_timeout < 60
    lw = ClientListWatcher(None, CONFIGMAPS)
    assert (lw.watch_timeout, lw.inactivity_timeout) == (t.watch_timeout, t.watch_inactivity_timeout)
    with pytest.raises(ValueError, match="healthy watches"):
        RuntimeTunables(watch_timeout=(30, 60), watch_inactivity_timeout=55).validate()
    with pytest.raises(ValueError, match="healthy watches"):
        ClientListWatcher(None, CONFIGMAPS, watch_timeout=(5, 10), inactivity_timeout=10)


def test_counters_shared_by_threads_lose_no_increment():
    counter = AtomicCounter()
    threads, per_thread = 8, 20000
    start = threading.Barrier(threads)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:

        def work():
            start.wait()
            for _ in range(per_thread):
                counter.add()

        ts = [threading.Thread(target=work) for _ in range(threads)]
        t0 = time.monotonic()
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
    finally:
        sys.setswitchinterval(previous)
    assert counter.value == threads * per_thread, f"lost increments in {time.monotonic() - t0:.1f}s"


def test_the_manager_gives_its_caches_the_tunables():
    t = RuntimeTunables(watch_timeout=(3, 4), watch_inactivity_timeout=6, resync_period=99, request_timeout=7)
    mgr = Manager(RuntimeSettings(tunables=t), ApiClient())
    inf = mgr.informer(CONFIGMAPS)
    assert (inf.lw.watch_timeout, inf.lw.inactivity_timeout, inf.resync_period) == ((3, 4), 6, 99)
    assert mgr.client.request_timeout == 7 and inf.backoff == t.list_watch_backoff
