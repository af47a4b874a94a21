"""Work queue: de-duplication, delays, rate limiting, shutdown; controller requeue/error semantics."""

from __future__ import annotations

import threading
import time

import pytest
from dynamo_operator.runtime.client import ResourceDescriptor
from dynamo_operator.runtime.controller import Request, owner_requests
from dynamo_operator.runtime.metrics import OperatorMetrics
from dynamo_operator.runtime.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    WorkQueue,
)
from support.poll import stays, wait_for


@pytest.fixture
def q():
    wq = WorkQueue("test")
    yield wq
    wq.shutdown()


def test_dedup_while_waiting(q):
    q.add("a")
    q.add("a")
    q.add("b")
    assert len(q) == 2
    assert q.get(timeout=1) == ("a", False)
    assert q.get(timeout=1) == ("b", False)
    assert q.get(timeout=0.05) == (None, False)


def test_item_added_while_processing_is_requeued_once_after_done(q):
    q.add("a")
    item, _ = q.get(timeout=1)
    q.add("a")
    q.add("a")
    assert len(q) == 0  # never handed to a second worker while in flight
    q.done(item)
    assert len(q) == 1
    assert q.get(timeout=1) == ("a", False)
    q.done("a")
    assert len(q) == 0


def test_add_after_delays_and_earliest_wins(q):
    q.add_after("x", 0.3)
    q.add_after("x", 0.1)
    assert q.get(timeout=0.02) == (None, False)
    t0 = time.monotonic()
    assert q.get(timeout=2) == ("x", False)
    assert 0.05 <= time.monotonic() - t0 < 0.28
    q.done("x")
    # the later (0.3s) deadline was superseded: no second delivery
    assert q.get(timeout=0.4) == (None, False)


def test_a_moot_requeue_is_cancelled_but_an_events_delayed_add_is_not(q):
    q.add_after("x", 0.2, requeue=True)
    q.cancel_requeue("x")  # a later pass of x succeeded: the wake-up it asked for is moot
    assert q.get(timeout=0.4) == (None, False)
    # an event coalesced onto the same item rides on the (earlier) requeue's wake-up: that stays
    q.add_after("y", 0.1, requeue=True)
    q.add_after("y", 0.3)
    q.cancel_requeue("y")
    assert q.get(timeout=1) == ("y", False)
    q.done("y")
    # and an event's own delayed add is never cancelled
    q.add_after("z", 0.1)
    q.add_after("z", 0.3, requeue=True)
    q.cancel_requeue("z")
    assert q.get(timeout=1) == ("z", False)
    q.done("z")


def test_controller_success_cancels_its_own_earlier_requeue():
    from dynamo_operator.runtime.controller import Controller, Result

    results = iter([Result(requeue_after=0.3), Result()])
    seen: list[float] = []

    def reconcile(req):
        seen.append(time.monotonic())
        return next(results, Result())

    class NoEvents:  # requests come from the test alone
        def add_event_handler(self, **handlers):
            pass

    ctl = Controller("t", ResourceDescriptor("", "v1", "things", "Thing"), NoEvents(), reconcile)
    ctl.start()
    try:
        ctl.enqueue(Request("ns", "a"))
        wait_for(lambda: len(seen) == 1, 5)
        ctl.enqueue(Request("ns", "a"))  # an event: this pass succeeds, so the 0.3 s wake-up is moot
        wait_for(lambda: len(seen) == 2, 5)
        stays(lambda: len(seen) == 2, 0.6, "no wake-up 0.3 s after the successful pass")
    finally:
        ctl.stop()


def test_exponential_backoff_and_forget():
    rl = ItemExponentialFailureRateLimiter(base_delay=0.005, max_delay=0.05)
    assert [rl.when("a") for _ in range(5)] == [0.005, 0.01, 0.02, 0.04, 0.05]
    assert rl.num_requeues("a") == 5
    assert rl.when("b") == 0.005  # per item
    rl.forget("a")
    assert rl.num_requeues("a") == 0
    assert rl.when("a") == 0.005


def test_bucket_limiter_burst_then_qps():
    now = [0.0]
    b = BucketRateLimiter(qps=10, burst=3, clock=lambda: now[0])
    assert [b.when(i) for i in range(3)] == [0.0, 0.0, 0.0]
    assert b.when(3) == pytest.approx(0.1)
    assert b.when(4) == pytest.approx(0.2)
    now[0] = 10.0
    assert b.when(5) == 0.0


def test_max_of_limiters():
    m = MaxOfRateLimiter(ItemExponentialFailureRateLimiter(1.0, 100), BucketRateLimiter(10, 100))
    assert m.when("a") == 1.0
    assert m.when("a") == 2.0
    m.forget("a")
    assert m.num_requeues("a") == 0


def test_add_rate_limited_uses_backoff(q):
    q.rate_limiter = ItemExponentialFailureRateLimiter(0.05, 1)
    q.add_rate_limited("r")
    assert q.get(timeout=0.01) == (None, False)
    assert q.get(timeout=1) == ("r", False)
    assert q.num_requeues("r") == 1


def test_shutdown_wakes_getters_and_rejects_adds():
    reads = []  # the getter reads the clock under the queue's lock, just before it waits (and so lets go)
    wq = WorkQueue("s", clock=lambda: reads.append(1) or time.monotonic())
    out = []
    t = threading.Thread(target=lambda: out.append(wq.get(timeout=30)))
    t.start()
    wait_for(lambda: len(reads) >= 2, 5, "the getter about to wait")
    wq.shutdown()  # takes the lock, so only once the getter waits
    t.join(2)
    assert not t.is_alive()
    assert out == [(None, True)]
    wq.add("late")
    assert len(wq) == 0


def test_shutdown_drain_waits_for_in_flight():
    wq = WorkQueue("d")
    wq.add("a")
    item, _ = wq.get(timeout=1)
    threading.Timer(0.1, wq.done, args=(item,)).start()
    t0 = time.monotonic()
    assert wq.shutdown(drain=True, timeout=2)
    assert time.monotonic() - t0 >= 0.08
    wq2 = WorkQueue("d2")
    wq2.add("b")
    wq2.get(timeout=1)
    assert wq2.shutdown(drain=True, timeout=0.1) is False  # bounded


def test_queue_metrics_recorded():
    m = OperatorMetrics()
    wq = WorkQueue("metered", metrics=m.queue("metered"))
    wq.add("a")
    wq.add("b")
    assert m.registry.get_sample_value("workqueue_depth", {"name": "metered"}) == 2
    item, _ = wq.get(timeout=1)
    wq.done(item)
    wq.add_rate_limited("c")
    assert m.registry.get_sample_value("workqueue_adds_total", {"name": "metered"}) >= 2
    assert m.registry.get_sample_value("workqueue_retries_total", {"name": "metered"}) == 1
    assert m.registry.get_sample_value("workqueue_queue_duration_seconds_count", {"name": "metered"}) == 1
    assert m.registry.get_sample_value("workqueue_work_duration_seconds_count", {"name": "metered"}) == 1
    wq.shutdown()


# -- owner mapping (pure) ------------------------------------------------------------------------------------


def test_owner_requests_match_group_and_kind_only():
    dgd = ResourceDescriptor("nvidia.com", "v1beta1", "dynamographdeployments", "DynamoGraphDeployment")
    child = {
        "metadata": {
            "namespace": "ns",
            "name": "c",
            "ownerReferences": [
                {
                    "apiVersion": "nvidia.com/v1alpha1",
                    "kind": "DynamoGraphDeployment",
                    "name": "g",
                    "controller": True,
                },
                {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "name": "h"},
                {
                    "apiVersion": "other.io/v1",
                    "kind": "DynamoGraphDeployment",
                    "name": "x",
                    "controller": True,
                },
            ],
        }
    }
    assert owner_requests(dgd, child) == [Request("ns", "g")]
