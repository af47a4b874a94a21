"""An in-memory `Cluster` for unit tests and for trying checks without an API server.

It keeps objects by REST path, assigns resourceVersions, enforces optimistic concurrency on replace, honours
simple label and field selectors, and answers access reviews from an allow/deny rule, which is everything the
checks and hooks rely on.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable
from typing import Any

from .cluster import ClusterError, Obj


class FakeCluster:
    def __init__(self, version: str = "v1.36.3") -> None:
        self.objects: dict[str, Obj] = {}
        self.version = version
        self.unreachable = False
        self.forbidden_paths: set[str] = set()
        self.allow: Callable[[Obj], bool] = lambda attrs: True
        self.discovery: dict[str, Obj] = {}
        self.writes = 0
        self._rv = 100

    # ---- helpers for tests
    def add(self, path: str, obj: Obj) -> Obj:
        """Store `obj` under its collection path (e.g. /apis/apps/v1/namespaces/ns/deployments)."""
        stored = copy.deepcopy(obj)
        meta = stored.setdefault("metadata", {})
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        self.objects[f"{path}/{meta['name']}"] = stored
        return stored

    def _check(self, path: str) -> None:
        if self.unreachable:
            raise ClusterError(0, "connection refused", path=path)
        if any(path.startswith(p) for p in self.forbidden_paths):
            raise ClusterError(403, f"forbidden: {path}", path=path)

    # ---- Cluster protocol
    def server_url(self) -> str:
        return "https://fake.invalid"

    def server_version(self) -> Obj:
        self._check("/version")
        return {"gitVersion": self.version}

    def list(
        self, path: str, *, label_selector: str | None = None, field_selector: str | None = None
    ) -> list[Obj]:
        self._check(path)
        # A cluster-wide collection (/apis/g/v/leases) also matches namespaced objects of that resource.
        parts = path.rstrip("/").split("/")
        resource = parts[-1]
        base = "/".join(parts[:-1])
        items = []
        for key, obj in self.objects.items():
            parent = key.rsplit("/", 1)[0]
            if (
                parent == path
                or (parent.startswith(base + "/namespaces/") and parent.endswith("/" + resource))
            ) and _matches(obj, label_selector, field_selector):
                items.append(copy.deepcopy(obj))
        return items

    def get(self, path: str) -> Obj | None:
        self._check(path)
        if path in self.discovery:
            return copy.deepcopy(self.discovery[path])
        obj = self.objects.get(path)
        return copy.deepcopy(obj) if obj is not None else None

    def create(self, path: str, body: Obj) -> Obj:
        self._check(path)
        name = body["metadata"]["name"]
        if f"{path}/{name}" in self.objects:
            raise ClusterError(409, f"{name} already exists", path=path)
        self.writes += 1
        return copy.deepcopy(self.add(path, body))

    def replace(self, path: str, body: Obj) -> Obj:
        self._check(path)
        current = self.objects.get(path)
        if current is None:
            raise ClusterError(404, "not found", path=path)
        sent_rv = (body.get("metadata") or {}).get("resourceVersion")
        if sent_rv and sent_rv != current["metadata"]["resourceVersion"]:
            raise ClusterError(409, "the object has been modified", path=path)
        if body.get("type", "Opaque") != current.get("type", "Opaque") and current.get("kind") == "Secret":
            raise ClusterError(422, "field is immutable: type", path=path)
        self.writes += 1
        return copy.deepcopy(self.add(path.rsplit("/", 1)[0], body))

    def delete(self, path: str) -> None:
        self._check(path)
        self.writes += 1
        self.objects.pop(path, None)

    def access_review(self, attributes: Obj) -> tuple[bool, str]:
        self._check("/apis/authorization.k8s.io")
        return self.allow(attributes), ""


def _matches(obj: Obj, label_selector: str | None, field_selector: str | None) -> bool:
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    for term in filter(None, (label_selector or "").split(",")):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    for term in filter(None, (field_selector or "").split(",")):
        key, _, value = term.partition("=")
        node: Any = obj
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node != value:
            return False
    return True


DEPLOYMENTS = "/apis/apps/v1/namespaces/{ns}/deployments"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"


def operator_deployment(
    namespace: str,
    release: str,
    *,
    restricted_namespace: str | None = None,
    annotate_mode: bool = True,
    version: str = "0.1.0",
) -> Obj:
    """A Deployment shaped like the chart's operator Deployment (labels, Helm annotations, mode marker)."""
    name = f"{release}-dynamo-operator-controller-manager"
    annotations = {"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace}
    args = ["--health-probe-bind-address=:8081"]
    if annotate_mode:
        annotations["nvidia.com/dynamo-operator-mode"] = (
            "namespace-restricted" if restricted_namespace else "cluster-wide"
        )
        if restricted_namespace:
            annotations["nvidia.com/dynamo-operator-target-namespace"] = restricted_namespace
    elif restricted_namespace:
        args.append(f"--restrictedNamespace={restricted_namespace}")
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/name": "dynamo-operator",
                "app.kubernetes.io/instance": release,
                "app.kubernetes.io/version": version,
            },
            "annotations": annotations,
        },
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "manager", "image": f"dynamo-operator:{version}", "args": args}]
                }
            }
        },
    }


def lease(
    namespace: str, name: str, holder: str, *, renewed_seconds_ago: float = 1, duration: int = 30
) -> Obj:
    """A coordination.k8s.io Lease renewed `renewed_seconds_ago` seconds ago."""
    renew = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=renewed_seconds_ago)
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": duration,
            "renewTime": renew.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        },
    }
