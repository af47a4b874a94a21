"""A de-duplicating, delaying, rate-limited work queue with client-go semantics
(k8s.io/client-go/util/workqueue).

* ``add``: an item already waiting is not added twice; an item being processed is marked dirty and re-queued
  when its worker calls ``done`` (so one key is never processed by two workers at once).
* ``add_after``: delayed add (``Result.requeue_after``, coalesced events); of several pending delays for one
  item the earliest wins. ``requeue=True`` marks a wake-up the reconciler asked for (a requeue or a retry):
  ``cancel_requeue`` drops it when a later pass of that item succeeded without asking again (it is moot:
  the reconciler said there is nothing left to do), unless an event's delayed add rides on the same wake-up.
  client-go keeps such wake-ups; after a burst of held-back status writes they woke thousands of finished
  objects half a minute later.
* ``add_rate_limited``: the delay comes from the rate limiter: per-item exponential backoff (5 ms doubling,
  capped at 1000 s) combined with an overall token bucket (10 qps, burst 100), whichever is longer, like
  client-go's ``DefaultControllerRateLimiter``; ``forget`` resets an item's backoff.
* ``shutdown``: wakes every waiting ``get`` (which then returns ``(None, True)``); with ``drain`` it waits for
  the items in flight to be ``done``.

Plain threads and a ``threading.Condition``: the kubernetes client is blocking, so asyncio would only add a
thread pool behind it.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, Protocol


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float: ...
    def forget(self, item: Hashable) -> None: ...
    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0):
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def when(self, item: Hashable) -> float:
        with self._lock:
            n = self._failures.get(item, 0)
            self._failures[item] = n + 1
        if n > 64:  # avoid float overflow
            return self.max_delay
        return min(self.base_delay * (2**n), self.max_delay)

    def forget(self, item: Hashable) -> None:
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        with self._lock:
            return self._failures.get(item, 0)


class BucketRateLimiter:
    """Token bucket over all items (golang.org/x/time/rate ``Reserve().Delay()``)."""

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Callable[[], float] = time.monotonic):
        self.qps = qps
        self.burst = burst
        self.clock = clock
        self._tokens = float(burst)
        self._last = clock()
        self._lock = threading.Lock()

    def when(self, item: Hashable) -> float:
        with self._lock:
            now = self.clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1
            if self._tokens >= 0:
                return 0.0
            return -self._tokens / self.qps

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    def __init__(self, *limiters: RateLimiter):
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        return max(lim.when(item) for lim in self.limiters)

    def forget(self, item: Hashable) -> None:
        for lim in self.limiters:
            lim.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(lim.num_requeues(item) for lim in self.limiters)


def default_controller_rate_limiter(
    base_delay: float = 0.005, max_delay: float = 1000.0, qps: float = 10.0, burst: int = 100
) -> MaxOfRateLimiter:
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(base_delay, max_delay), BucketRateLimiter(qps, burst)
    )


class QueueMetricsSink(Protocol):
    """What the queue reports; ``metrics.WorkQueueMetrics`` implements it with prometheus-client."""

    def add(self) -> None: ...
    def depth(self, n: int) -> None: ...
    def queue_latency(self, seconds: float) -> None: ...
    def work_duration(self, seconds: float) -> None: ...
    def retry(self) -> None: ...
    def set_in_flight(self, oldest_seconds: float, total_seconds: float) -> None: ...


class WorkQueue:
    def __init__(
        self,
        name: str = "",
        rate_limiter: RateLimiter | None = None,
        metrics: QueueMetricsSink | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.name = name
        self.rate_limiter = rate_limiter or default_controller_rate_limiter()
        self.metrics = metrics
        self.clock = clock
        lock = threading.Lock()
        self._cond = threading.Condition(lock)  # getters and draining shutdown wait here
        self._delay_cond = threading.Condition(lock)  # the delay thread waits here
        self._queue: deque[Hashable] = deque()
        self._dirty: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._added_at: dict[Hashable, float] = {}
        self._started_at: dict[Hashable, float] = {}
        self._shutting_down = False
        # delayed items: heap of (ready_at, seq, item) plus item -> ready_at for dedup
        self._waiting: list[tuple[float, int, Hashable]] = []
        self._waiting_at: dict[Hashable, float] = {}
        self._requeues: set[Hashable] = set()  # items whose pending delayed add only a reconciler asked for
        self._seq = itertools.count()
        self._delay_thread = threading.Thread(target=self._delay_loop, name=f"wq-delay-{name}", daemon=True)
        self._delay_thread.start()

    # -- core queue -----------------------------------------------------------------------------------------
    def add(self, item: Hashable) -> None:
        with self._cond:
            self._add_locked(item)

    def _add_locked(self, item: Hashable) -> None:
        if self._shutting_down or item in self._dirty:
            return
        if self.metrics:
            self.metrics.add()
        self._dirty.add(item)
        if item in self._processing:
            return
        self._added_at.setdefault(item, self.clock())
        self._queue.append(item)
        self._report_depth()
        self._cond.notify()

    def get(self, timeout: float | None = None) -> tuple[Any, bool]:
        """Block until an item is available; returns (item, shutdown). ``(None, False)`` on timeout."""
        deadline = None if timeout is None else self.clock() + timeout
        with self._cond:
            while not self._queue and not self._shutting_down:
                remaining = None if deadline is None else deadline - self.clock()
                if remaining is not None and remaining <= 0:
                    return None, False
                self._cond.wait(remaining)
            if not self._queue:
                return None, True
            item = self._queue.popleft()
            now = self.clock()
            if self.metrics and item in self._added_at:
                self.metrics.queue_latency(now - self._added_at[item])
            self._added_at.pop(item, None)
            self._started_at[item] = now
            self._processing.add(item)
            self._dirty.discard(item)
            self._report_depth()
            return item, False

    def done(self, item: Hashable) -> None:
        with self._cond:
            self._processing.discard(item)
            started = self._started_at.pop(item, None)
            if self.metrics and started is not None:
                self.metrics.work_duration(self.clock() - started)
            if item in self._dirty:
                self._added_at.setdefault(item, self.clock())
                self._queue.append(item)
                self._report_depth()
                self._cond.notify()
            self._cond.notify_all()  # wake a draining shutdown

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def shutdown(self, drain: bool = False, timeout: float = 10.0) -> bool:
        """Stop accepting items and wake all getters; with ``drain`` wait (bounded) for in-flight items."""
        with self._cond:
            self._shutting_down = True
            self._cond.notify_all()
            self._delay_cond.notify_all()
            if drain:
                deadline = self.clock() + timeout
                while self._processing:
                    remaining = deadline - self.clock()
                    if remaining <= 0:
                        return False
                    self._cond.wait(remaining)
        return True

    def _report_depth(self) -> None:
        if self.metrics:
            self.metrics.depth(len(self._queue))

    def in_flight(self) -> tuple[float, float]:
        """(longest running processor seconds, total unfinished work seconds)."""
        with self._cond:
            now = self.clock()
            ages = [now - t for t in self._started_at.values()]
        return (max(ages) if ages else 0.0, sum(ages))

    # -- delaying --------------------------------------------------------------------------------------------
    def add_after(self, item: Hashable, delay: float, requeue: bool = False) -> None:
        if delay <= 0:
            self.add(item)
            return
        with self._cond:
            if self._shutting_down:
                return
            ready = self.clock() + delay
            prev = self._waiting_at.get(item)
            if not requeue:
                self._requeues.discard(item)  # an event waits on this item's wake-up: never cancelled
            if prev is not None and prev <= ready:
                return
            if requeue and prev is None:
                self._requeues.add(item)
            self._waiting_at[item] = ready
            heapq.heappush(self._waiting, (ready, next(self._seq), item))
            self._delay_cond.notify()

    def cancel_requeue(self, item: Hashable) -> None:
        """Drop ``item``'s pending delayed add if only a reconciler asked for it (module docstring)."""
        with self._cond:
            if item in self._requeues:
                self._requeues.discard(item)
                self._waiting_at.pop(item, None)  # its heap entry is skipped when it comes due

    def _delay_loop(self) -> None:
        with self._cond:
            while not self._shutting_down:
                now = self.clock()
                while self._waiting and self._waiting[0][0] <= now:
                    ready, _, item = heapq.heappop(self._waiting)
                    if self._waiting_at.get(item) == ready:
                        del self._waiting_at[item]
                        self._requeues.discard(item)
                        self._add_locked(item)
                timeout = min(self._waiting[0][0] - now, 1.0) if self._waiting else 1.0
                self._delay_cond.wait(max(timeout, 0.0))

    # -- rate limiting ---------------------------------------------------------------------------------------
    def add_rate_limited(self, item: Hashable) -> None:
        if self.metrics:
            self.metrics.retry()
        self.add_after(item, self.rate_limiter.when(item), requeue=True)

    def forget(self, item: Hashable) -> None:
        self.rate_limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return self.rate_limiter.num_requeues(item)
