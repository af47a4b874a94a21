"""Fixtures of the fault suite: a fresh control plane per test (faults restart its etcd and apiserver, and
a stale leader's writes are judged from its audit log, so nothing may be shared with other tests)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from plane import Plane, running_plane


@pytest.fixture
def plane(tmp_path: Path) -> Iterator[Plane]:
    """etcd + kube-apiserver (audit log on), the CRDs, and the admission/conversion webhook served by a
    ``dynamo-operator run --no-default-controllers`` process of its own (so it can be dropped alone)."""
    with running_plane(tmp_path) as p:
        yield p


@pytest.fixture
def stop_event() -> Iterator[threading.Event]:
    """Set at teardown: background helpers (the replica supervisor) stop with the test."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def bare_plane(tmp_path: Path) -> Iterator[Plane]:
    """The plane without the webhook process: the test serves admission itself on ``webhook_port``."""
    with running_plane(tmp_path, webhook=False) as p:
        yield p
