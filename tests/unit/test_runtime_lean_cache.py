"""The performance changes the benchmark called for, as pure behaviour: the informer's lean cache and the
life of ``RecentWrites`` entries."""

from __future__ import annotations

import json

from dynamo_operator.controllers.sync import RecentWrites
from dynamo_operator.runtime.informer import compact


def _deployment(name: str, rv: str) -> dict:
    return json.loads(
        json.dumps(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": name,
                    "namespace": "ns",
                    "resourceVersion": rv,
                    "managedFields": [{"manager": "kube-controller-manager", "fieldsV1": {"f:status": {}}}],
                },
                "spec": {"template": {"spec": {"containers": [{"terminationMessagePath": "/dev/x" * 40}]}}},
            }
        )
    )


def test_compact_drops_managed_fields_and_shares_keys_across_objects():
    a, b = compact(_deployment("a", "1")), compact(_deployment("b", "2"))
    assert "managedFields" not in a["metadata"]
    assert a["spec"]["template"] == b["spec"]["template"]
    key_a = next(iter(a["spec"]["template"]["spec"]["containers"][0]))
    key_b = next(iter(b["spec"]["template"]["spec"]["containers"][0]))
    assert key_a is key_b  # one string object, not one per decoded document
    assert a["metadata"]["namespace"] is b["metadata"]["namespace"]


def test_recent_write_entry_lives_until_the_cache_shows_the_write():
    recent = RecentWrites()
    before, after = _deployment("a", "1"), _deployment("a", "2")
    recent.remember(before, after)
    recent.observe(_deployment("a", "1"))  # the cache still delivers the version the write replaced
    assert recent.resolve(before) is after
    recent.observe(_deployment("a", "2"))  # the write arrived: the entry goes, no resolve needed
    assert len(recent._items) == 0
    assert recent.resolve(before) is before
