"""The small slice of the Kubernetes API that preflight checks and install hooks use.

Why a protocol over plain dicts instead of the generated `kubernetes` models: the checks read a handful of
fields from many kinds (Deployments, Leases, CRDs, Nodes, Secrets) and must tolerate fields newer than the
client's models. `KubeCluster` talks REST through the `kubernetes` package's ApiClient (so kubeconfig,
in-cluster tokens and client certificates all work); tests run it against the real local control plane.
"""

from __future__ import annotations

import contextlib
import json
import os
import urllib.parse
from pathlib import Path
from typing import Any, Protocol

from dynamo_operator import __version__
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

Obj = dict[str, Any]

# One request must never hang an install hook: helm waits on the Job, the user waits on helm.
REQUEST_TIMEOUT_SECONDS = 15.0
# Like client-go's "<binary>/<version>": the API server's audit log tells the hooks' and the plugin's
# requests from helm's and kubectl's (tests/integration/test_rbac_cluster.py relies on it).
USER_AGENT = f"dynamo-hooks/{__version__}"
# CustomResourceDefinitions: their group/version and resource, as in collection_path / object_path
CRD_API = "apiextensions.k8s.io/v1"
CRDS = "customresourcedefinitions"


class ClusterError(Exception):
    """A failed API call, with the HTTP status (0 when the server was not reached at all)."""

    def __init__(self, status: int, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.path = path

    @property
    def unreachable(self) -> bool:
        return self.status == 0

    @property
    def forbidden(self) -> bool:
        return self.status in (401, 403)

    def __str__(self) -> str:
        where = f" ({self.path})" if self.path else ""
        code = f"HTTP {self.status}" if self.status else "connection failed"
        return f"{code}{where}: {self.message}"


class Cluster(Protocol):
    """What the checks and hooks need from a cluster; every object is the API's JSON as a dict."""

    def server_version(self) -> Obj: ...

    def server_url(self) -> str: ...

    def list(
        self, path: str, *, label_selector: str | None = None, field_selector: str | None = None
    ) -> list[Obj]: ...

    def get(self, path: str) -> Obj | None: ...

    def create(self, path: str, body: Obj) -> Obj: ...

    def apply(self, path: str, body: Obj, field_manager: str) -> tuple[Obj, bool]: ...

    def replace(self, path: str, body: Obj) -> Obj: ...

    def delete(self, path: str) -> None: ...

    def access_review(self, attributes: Obj) -> tuple[bool, str]: ...


class KubeCluster:
    """`Cluster` over a real API server, through a configured `kubernetes.client.ApiClient`."""

    def __init__(self, api_client: k8s_client.ApiClient) -> None:
        self.api_client = api_client
        api_client.user_agent = USER_AGENT

    def server_url(self) -> str:
        return str(self.api_client.configuration.host)

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Any:
        return self._exchange(method, path, query=query, body=body, content_type=content_type)[0]

    def _exchange(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> tuple[Any, int]:
        """(decoded answer, HTTP status) of one request; a ClusterError for anything but 2xx."""
        url = self.server_url().rstrip("/") + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {"Accept": "application/json", "Content-Type": content_type}
        # call_api, unlike the generated methods, sends none of the client's default headers
        headers["User-Agent"] = str(self.api_client.user_agent or USER_AGENT)
        # update_params_for_auth fills in the bearer token (in-cluster, token kubeconfigs); client
        # certificates are already part of the REST client's pool manager.
        self.api_client.update_params_for_auth(headers, [], ["BearerToken"], path, method, body)
        try:
            resp = self.api_client.call_api(
                method,
                url,
                header_params=headers,
                body=body,
                _request_timeout=REQUEST_TIMEOUT_SECONDS,
            )
            data = resp.read()
        except k8s_client.ApiException as exc:
            raise ClusterError(exc.status or 0, str(exc.reason or exc), path=path) from exc
        except Exception as exc:  # urllib3 connection errors, DNS, TLS: the server was not reached
            raise ClusterError(0, f"{type(exc).__name__}: {exc}", path=path) from exc
        if not 200 <= resp.status < 300:
            message = data.decode("utf-8", "replace") if data else resp.reason
            with contextlib.suppress(ValueError, AttributeError):
                message = json.loads(message).get("message", message)
            raise ClusterError(resp.status, str(message), path=path)
        return (json.loads(data) if data else {}), resp.status

    def server_version(self) -> Obj:
        return self._request("GET", "/version")

    def list(
        self, path: str, *, label_selector: str | None = None, field_selector: str | None = None
    ) -> list[Obj]:
        items: list[Obj] = []
        query: dict[str, str] = {"limit": "500"}
        if label_selector:
            query["labelSelector"] = label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        while True:
            page = self._request("GET", path, query=query)
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            query["continue"] = token

    def get(self, path: str) -> Obj | None:
        try:
            return self._request("GET", path)
        except ClusterError as exc:
            if exc.status == 404:
                return None
            raise

    def create(self, path: str, body: Obj) -> Obj:
        return self._request("POST", path, body=body)

    def apply(self, path: str, body: Obj, field_manager: str) -> tuple[Obj, bool]:
        """Server-side apply of ``body`` at its object path; (the object, whether it was created).

        Why apply to create: the API server authorizes an apply that creates with the verb create *and the
        object's name*, so RBAC can limit it with resourceNames, which a POST cannot be (a POST's name is
        not known at authorization). The hooks create their Secrets this way and may create no others."""
        obj, status = self._exchange(
            "PATCH",
            path,
            query={"fieldManager": field_manager},
            body=json.dumps(body),
            content_type="application/apply-patch+yaml",
        )
        return obj, status == 201

    def replace(self, path: str, body: Obj) -> Obj:
        return self._request("PUT", path, body=body)

    def delete(self, path: str) -> None:
        try:
            self._request("DELETE", path)
        except ClusterError as exc:
            if exc.status != 404:
                raise

    def access_review(self, attributes: Obj) -> tuple[bool, str]:
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        }
        status = self.create("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review).get(
            "status", {}
        )
        return bool(status.get("allowed")), str(status.get("reason") or status.get("evaluationError") or "")


def load_api_client(kubeconfig: str | None = None, context: str | None = None) -> k8s_client.ApiClient:
    """Build an ApiClient from a kubeconfig, or from the pod's service account inside a hook Job.

    The order mirrors kubectl: an explicit path, then $KUBECONFIG, then ~/.kube/config, then in-cluster.
    """
    path = kubeconfig or os.environ.get("KUBECONFIG") or ""
    if not path:
        home = Path.home() / ".kube" / "config"
        path = str(home) if home.is_file() else ""
    if path:
        # $KUBECONFIG may hold several files separated by ':'; the kubernetes package reads the first.
        first = path.split(os.pathsep)[0]
        return k8s_config.new_client_from_config(config_file=first, context=context or None)
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        configuration = k8s_client.Configuration()
        k8s_config.load_incluster_config(client_configuration=configuration)
        return k8s_client.ApiClient(configuration)
    raise ClusterError(
        0,
        "no kubeconfig found: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run inside a pod",
    )


def connect(kubeconfig: str | None = None, context: str | None = None) -> KubeCluster:
    """A `KubeCluster` for the given kubeconfig/context (see `load_api_client` for the lookup order)."""
    try:
        return KubeCluster(load_api_client(kubeconfig, context))
    except ClusterError:
        raise
    except Exception as exc:  # malformed kubeconfig, unknown context
        source = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
        in_context = f" (context {context})" if context else ""
        raise ClusterError(
            0,
            f"cannot load kubeconfig {source}{in_context}: {exc}; check it with `kubectl config view` and "
            "`kubectl config get-contexts`, or point --kubeconfig / KUBECONFIG at a working one",
        ) from exc


def collection_path(group_version: str, plural: str, namespace: str | None = None) -> str:
    """REST path of a collection: `collection_path("apps/v1", "deployments", "ns")`."""
    base = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    if namespace:
        return f"{base}/namespaces/{namespace}/{plural}"
    return f"{base}/{plural}"


def object_path(group_version: str, plural: str, name: str, namespace: str | None = None) -> str:
    """REST path of one object."""
    return f"{collection_path(group_version, plural, namespace)}/{urllib.parse.quote(name, safe='')}"
