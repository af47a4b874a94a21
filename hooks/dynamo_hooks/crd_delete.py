"""Deleting CustomResourceDefinitions so that they go in seconds, not minutes.

The API server builds a CRD's instance storage, and its watch cache, lazily: on the first request for
the CRD's objects. When nobody asked for them before the CRD is deleted (Helm installs a chart's
``crds/`` and nothing lists them), the first request is the CRD finalizer's own list, made while that
cache is still starting. The list is refused ("could not list instances: storage is (re)initializing",
condition Terminating=True, reason InstanceDeletionFailed) and the finalizer retries on a per-CRD
exponential back-off that only a change to the CRD cuts short. On a fresh local control plane the CRD,
and its API group in discovery, stayed for minutes (measured: more than 200 s; a client's list of the
same objects answered at once meanwhile).

So ``delete_crds`` (1) asks for each CRD's objects until its cache answers before deleting it, which
avoids the refusal, and (2) touches an annotation of any CRD still terminating with
InstanceDeletionFailed, which re-queues its finalizer at once (the stalled CRD above then went in 0.1 s).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .cluster import CRD_API, CRDS, Cluster, ClusterError, Obj, collection_path, object_path

# A selector nothing carries: the API server must answer it from the watch cache (a plain limited list
# would be passed through to etcd while the cache starts), and the answer is empty and cheap.
PROBE_SELECTOR = "nvidia.com/dynamo-crd-storage-probe=none"
RETRY_ANNOTATION = "nvidia.com/dynamo-crd-finalizer-retry"
STALLED_REASON = "InstanceDeletionFailed"
NUDGE_INTERVAL_SECONDS = 5.0
POLL_SECONDS = 0.5


def storage_version(crd: Obj) -> str:
    return next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))


def instances_path(crd: Obj) -> str:
    """The cluster-wide collection of a CRD's objects, at its storage version."""
    return collection_path(f"{crd['spec']['group']}/{storage_version(crd)}", crd["spec"]["names"]["plural"])


def warm_storage(cluster: Cluster, crds: list[Obj], timeout: float = 30.0) -> list[str]:
    """Ask for each CRD's objects until its watch cache answers; returns the names that never did
    (deletion still works for them, only perhaps slowly). 429/503 mean "cache starting": retry."""
    deadline = time.monotonic() + timeout
    cold: list[str] = []
    for crd in crds:
        while True:
            try:
                cluster.list(instances_path(crd), label_selector=PROBE_SELECTOR)
                break
            except ClusterError as exc:
                if exc.status == 404:  # gone already, or not served: nothing to warm
                    break
                if exc.status not in (429, 503) or time.monotonic() >= deadline:
                    cold.append(crd["metadata"]["name"])
                    break
                time.sleep(0.2)
    return cold


def stalled(crd: Obj) -> bool:
    """Deleting, and its finalizer's last attempt to list its objects failed (it is now backing off)."""
    if not crd.get("metadata", {}).get("deletionTimestamp"):
        return False
    return any(
        c.get("type") == "Terminating" and c.get("status") == "True" and c.get("reason") == STALLED_REASON
        for c in (crd.get("status") or {}).get("conditions") or []
    )


def nudge(cluster: Cluster, crd: Obj, now: Callable[[], float] = time.time, attempts: int = 10) -> bool:
    """Change an annotation of a stalled CRD: any change besides its Terminating condition re-queues the
    finalizer without its back-off. The API server rewrites a terminating CRD's conditions meanwhile (each
    failed retry of its finalizer, at first every few milliseconds), so a conflict re-reads and tries again:
    three attempts lost that race on a busy machine, ten have room while the finalizer's back-off grows. A CRD
    already gone is fine: the next poll sees it."""
    path = object_path(CRD_API, CRDS, crd["metadata"]["name"])
    for _ in range(attempts):
        crd["metadata"].setdefault("annotations", {})[RETRY_ANNOTATION] = f"{now():.3f}"
        try:
            cluster.replace(path, crd)
            return True
        except ClusterError as exc:
            if exc.status != 409:
                if exc.status == 404:
                    return False
                raise
        fresh = cluster.get(path)
        if fresh is None:
            return False
        crd = fresh
    return False


def delete_crds(
    cluster: Cluster,
    names: list[str],
    timeout: float = 120.0,
    *,
    log: Callable[[str], None] | None = None,
) -> list[str]:
    """Delete the named CRDs (absent ones are skipped) and wait until they are gone; returns those still
    present after ``timeout``, for the caller to report with their conditions."""
    present = [c for c in (cluster.get(object_path(CRD_API, CRDS, n)) for n in names) if c]
    cold = warm_storage(cluster, present, timeout=min(30.0, timeout / 2))
    if cold and log:
        log(f"watch cache of {', '.join(cold)} did not answer; deleting anyway")
    for crd in present:
        cluster.delete(object_path(CRD_API, CRDS, crd["metadata"]["name"]))
    left = [c["metadata"]["name"] for c in present]
    deadline = time.monotonic() + timeout
    next_nudge = time.monotonic() + NUDGE_INTERVAL_SECONDS
    while left:
        live = [c for c in (cluster.get(object_path(CRD_API, CRDS, n)) for n in left) if c]
        left = [c["metadata"]["name"] for c in live]
        if not left or time.monotonic() >= deadline:
            break
        if time.monotonic() >= next_nudge:
            for crd in filter(stalled, live):
                if nudge(cluster, crd) and log:
                    log(f"CRD {crd['metadata']['name']}: finalizer stalled ({STALLED_REASON}); re-queued it")
            next_nudge = time.monotonic() + NUDGE_INTERVAL_SECONDS
        time.sleep(POLL_SECONDS)
    return left


def describe_left(cluster: Cluster, names: list[str]) -> str:
    """Each remaining CRD with its Terminating condition: what a user needs to see why it stays."""
    parts = []
    for name in names:
        crd = cluster.get(object_path(CRD_API, CRDS, name)) or {}
        term = next(
            (c for c in (crd.get("status") or {}).get("conditions") or [] if c.get("type") == "Terminating"),
            None,
        )
        why = f"{term.get('reason')}: {term.get('message')}" if term else "no Terminating condition yet"
        parts.append(f"{name} ({why})")
    return "; ".join(parts)
