"""Killing the leading operator pod: a successor takes the Lease over (the standby, or the replacement pod
the Deployment starts: it can be up before the dead leader's Lease expires, and then the two race for it,
as leader election allows), graphs created before and during the handover are reconciled, and nothing is
lost (every graph converges) or duplicated (exactly the rendered children, none rewritten by the
successor)."""

from __future__ import annotations

import json
import re
import subprocess
import time
import uuid

from dynamo_localcluster.graphs import graph
from realnode_helpers import NAMESPACE, SLOW, dgd_state, operator_pods, pod_ready
from support.poll import wait_for

LEASE = ("dynamo.nvidia.com", "kube-system")


def _holder(platform) -> str:
    lease = json.loads(platform.kubectl("get", "lease", LEASE[0], "-n", LEASE[1], "-o", "json"))
    return lease["spec"].get("holderIdentity") or ""


def _leader_pod(platform) -> str:
    holder = _holder(platform)
    names = [p["metadata"]["name"] for p in operator_pods(platform) if p["metadata"]["name"] in holder]
    assert len(names) == 1, (holder, names)
    return names[0]


def _successor(platform, killed: str) -> str | None:
    """The operator pod now holding the Lease, if it is a live one other than ``killed``."""
    holder = _holder(platform)
    live = [
        p["metadata"]["name"] for p in operator_pods(platform) if not p["metadata"].get("deletionTimestamp")
    ]
    return next((n for n in live if n != killed and n in holder), None)


def _apply(platform, ns: str, name: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["kubectl", "apply", "-f", "-"],
        input=json.dumps(graph(name, ns)),
        env=platform.cluster.env,
        capture_output=True,
        text=True,
    )


# How the API server words a webhook call the dead endpoint reset: an admission webhook's ("failed calling
# webhook ...") or, when the write needs a conversion between the served and the stored version, the
# conversion webhook's ("conversion webhook for nvidia.com/v1alpha1, Kind=... failed: Post ...: connection
# reset by peer"; seen in a make test run, 2026-12-04).
DEAD_ENDPOINT = re.compile(r"failed calling webhook|conversion webhook for \S+, Kind=\w+ failed: Post ")


def _dead_endpoint(stderr: str) -> bool:
    return bool(DEAD_ENDPOINT.search(stderr))


def _apply_through_handover(platform, ns: str, name: str, within: float = 30) -> int:
    """Applies while the killed pod may still be the Service's endpoint: until kube-proxy has dropped it,
    a webhook call routed to it is reset (failurePolicy Fail: the API server refuses the write). A client
    retries that, as controllers do; any other refusal, or no success within ``within`` seconds, fails.
    Returns the number of calls the dead endpoint refused."""
    deadline = time.monotonic() + within
    refused = 0
    while (r := _apply(platform, ns, name)).returncode != 0:
        assert _dead_endpoint(r.stderr), r.stderr  # any other refusal fails at once
        refused += 1
        assert time.monotonic() < deadline, f"{name} not admitted {within:.0f}s after the kill: {r.stderr}"
        time.sleep(0.5)  # not a wait: pacing between bounded re-applies (the loop's deadline bounds it)
    return refused


def _children(platform, ns: str) -> dict[str, str]:
    """(kind/name) -> resourceVersion of every Deployment, Service and DCD in the namespace."""
    items = json.loads(platform.kubectl("get", "deploy,svc,dcd", "-n", ns, "-o", "json"))["items"]
    return {f"{o['kind']}/{o['metadata']['name']}": o["metadata"]["resourceVersion"] for o in items}


def test_killing_the_leader_pod_hands_over_without_losing_or_duplicating(platform):
    ns = f"failover-{uuid.uuid4().hex[:6]}"
    platform.kubectl("create", "namespace", ns)
    try:
        r = _apply(platform, ns, "before")
        assert r.returncode == 0, r.stderr
        wait_for(
            lambda: dgd_state(platform.cluster, ns, "before").get("state") == "successful",
            120,
            "before",
            **SLOW,
        )
        settled = _children(platform, ns)
        leader = _leader_pod(platform)
        killed_at = time.monotonic()
        platform.kubectl("delete", "pod", leader, "-n", NAMESPACE, "--grace-period=0", "--force")
        refused = _apply_through_handover(platform, ns, "during")  # the standby serves admission meanwhile
        successor = wait_for(
            lambda: _successor(platform, leader),
            90,
            lambda: f"a live operator pod but {leader} to hold the Lease (holder: {_holder(platform)!r})",
            **{**SLOW, "interval": 0.5},
        )
        took_over = time.monotonic() - killed_at
        wait_for(
            lambda: dgd_state(platform.cluster, ns, "during").get("state") == "successful",
            120,
            "during",
            **SLOW,
        )
        after = _children(platform, ns)
        # nothing duplicated: each graph has exactly its three components' DCD, Deployment and Service
        for g in ("before", "during"):
            for kind in ("DynamoComponentDeployment", "Deployment", "Service"):
                assert len([k for k in after if k.startswith(f"{kind}/{g}-")]) == 3, (kind, g, sorted(after))
        # the successor found the first graph converged and wrote none of its children again
        assert {k: v for k, v in after.items() if k in settled} == settled
        # the Deployment replaced the killed pod: two replicas again, both Ready through their probes
        wait_for(
            lambda: len([p for p in operator_pods(platform) if pod_ready(p)]) == 2,
            180,
            "a replacement operator pod",
            **SLOW,
        )
        print(
            f"lease handed to {successor} {took_over:.1f}s after the kill; {refused} call(s) hit the dead pod"
        )
    finally:
        platform.kubectl("delete", "namespace", ns, "--wait=false", check=False)
