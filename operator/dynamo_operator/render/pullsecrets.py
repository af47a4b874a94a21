"""Image pull secret discovery: an index of dockerconfigjson Secrets by registry host (pure).

The operator's cache of those Secrets keeps no credential: ``lean_secret`` reduces each to its name and
the registry hosts it authenticates against, and ``build_index`` reads either shape. Before, every
dockerconfigjson Secret of the cluster sat decoded in the operator's memory (issue 30). The discovery can
be turned off (``security.workloads.imagePullSecretDiscovery: false``; Helm
``dynamo-operator.imagePullSecretDiscovery.enabled``): then no Secret is read and the chart grants no list.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

DOCKERCONFIGJSON = "kubernetes.io/dockerconfigjson"
DOCKER_HUB = "docker.io"
_DOCKER_HUB_ALIASES = {"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"}


def normalize_registry(server: str) -> str:
    """Registry host of an ``auths`` key: scheme and path dropped, lowercased, Docker Hub aliases folded."""
    host = server.strip()
    if "://" in host:
        host = host.split("://", 1)[1]
    host = host.split("/", 1)[0].lower()
    return DOCKER_HUB if host in _DOCKER_HUB_ALIASES else host


def image_host(image: str) -> str:
    """Registry host of an image reference; Docker Hub for bare names (``ubuntu``, ``library/ubuntu``)."""
    ref = image.strip()
    first, sep, _ = ref.partition("/")
    if not sep:
        return DOCKER_HUB
    if "." in first or ":" in first or first == "localhost":
        return normalize_registry(first)
    return DOCKER_HUB


def registries_of_secret(secret: dict) -> list[str]:
    """Registry hosts a dockerconfigjson Secret authenticates against (raises ValueError when malformed)."""
    data = secret.get("data") or {}
    raw = data.get(".dockerconfigjson")
    if raw is None:
        text = (secret.get("stringData") or {}).get(".dockerconfigjson")
        if text is None:
            return []
    else:
        try:
            text = base64.b64decode(raw, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise ValueError(f"invalid base64 in .dockerconfigjson: {exc}") from exc
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON in .dockerconfigjson: {exc}") from exc
    auths = doc.get("auths") if isinstance(doc, dict) else None
    if not isinstance(auths, dict):
        return []
    return sorted({normalize_registry(k) for k in auths})


# the registry hosts of a cached Secret (no ``data``); None when its .dockerconfigjson is malformed
HOSTS = "\x00registries"


def lean_secret(secret: dict) -> dict:
    """A dockerconfigjson Secret as the discovery cache keeps it: name, type and registry hosts."""
    md = secret.get("metadata") or {}
    try:
        hosts: list[str] | None = registries_of_secret(secret)
    except ValueError:
        hosts = None
    keep = ("name", "namespace", "uid", "resourceVersion")
    return {
        "apiVersion": secret.get("apiVersion", "v1"),
        "kind": secret.get("kind", "Secret"),
        "metadata": {k: md[k] for k in keep if k in md},
        "type": secret.get("type"),
        HOSTS: hosts,
    }


def _hosts(secret: dict) -> list[str]:
    if HOSTS in secret:
        if secret[HOSTS] is None:
            raise ValueError("malformed .dockerconfigjson")
        return secret[HOSTS]
    return registries_of_secret(secret)


@dataclass(frozen=True)
class PullSecretIndex:
    """namespace -> registry host -> sorted secret names."""

    by_namespace: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)

    def lookup(self, namespace: str, image: str) -> tuple[str, ...]:
        return tuple(self.by_namespace.get(namespace, {}).get(image_host(image), ()))


def build_index(secrets: Iterable[dict]) -> PullSecretIndex:
    """Index the ``kubernetes.io/dockerconfigjson`` Secrets among ``secrets`` (others are ignored), whole
    or as ``lean_secret`` keeps them.

    A malformed dockerconfigjson Secret is skipped (it cannot authenticate anything anyway).
    """
    index: dict[str, dict[str, set[str]]] = {}
    for secret in secrets:
        if secret.get("type") != DOCKERCONFIGJSON:
            continue
        meta = secret.get("metadata") or {}
        ns, name = meta.get("namespace", ""), meta.get("name")
        if not name:
            continue
        try:
            hosts = _hosts(secret)
        except ValueError:
            continue
        for host in hosts:
            index.setdefault(ns, {}).setdefault(host, set()).add(name)
    return PullSecretIndex(
        {ns: {h: tuple(sorted(names)) for h, names in hosts.items()} for ns, hosts in index.items()}
    )


def discover_pull_secrets(pod_spec: dict, namespace: str, index: PullSecretIndex) -> list[dict]:
    """``imagePullSecrets`` for a pod spec: user entries first, then discovered ones, unique by name."""
    result = [dict(s) for s in pod_spec.get("imagePullSecrets") or []]
    seen = {s.get("name") for s in result}
    for key in ("initContainers", "containers"):
        for container in pod_spec.get(key) or []:
            image = container.get("image")
            if not image:
                continue
            for name in index.lookup(namespace, image):
                if name not in seen:
                    seen.add(name)
                    result.append({"name": name})
    return result
