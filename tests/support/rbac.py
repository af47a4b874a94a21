"""Proving least privilege from the API server's audit log.

The chart's RBAC is rendered (``helm template``) and expanded into grants: one (namespace scope, API group,
resource, verb, resource names) per rule cell, for the ServiceAccount a binding names. The audit log (every
request of every ServiceAccount, at Metadata level) gives the calls each identity made, with the
authorizer's decision. ``unused`` is every grant no call used; ``refused`` every call the authorizer denied.
A grant is used by a call when the call is inside it: same group, resource (``name/subresource``) and
verb, in its namespace (a ClusterRole bound cluster-wide covers all), and one of its resource names when
it has any (a list or watch names its object through the ``metadata.name`` field selector).

``wait_allowed`` waits for a grant just made to take effect, before a test acts on it.
"""

from __future__ import annotations

import dataclasses
import subprocess
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

from support import yamlc

# Every request a ServiceAccount makes, and every write anybody makes (the plugin runs as the user; its
# requests are told apart by its User-Agent, dynamo-hooks/<version>).
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "Metadata", "userGroups": ["system:serviceaccounts"]},
        {"level": "Metadata", "verbs": ["create", "update", "patch", "delete", "deletecollection"]},
        {"level": "None"},
    ],
}
RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


@dataclass(frozen=True)
class Grant:
    """One cell of one rule: what a role lets its subjects do, where."""

    role: str  # "ClusterRole/<name>" or "Role/<namespace>/<name>"
    namespace: str | None  # None: every namespace and cluster-scoped objects (a ClusterRoleBinding)
    group: str
    resource: str
    verb: str
    names: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        names = f" named {list(self.names)}" if self.names else ""
        group = self.group or "core"
        return f"{self.verb} {self.resource}.{group}{names}{where} ({self.role})"


@dataclass(frozen=True)
class Call:
    """One request, as the audit log recorded it."""

    user: str
    user_agent: str
    verb: str
    group: str
    resource: str
    namespace: str
    name: str
    code: int
    allowed: bool
    uri: str

    def __str__(self) -> str:
        return f"{self.verb} {self.uri} -> {self.code} ({self.user}, {self.user_agent})"


def service_account_user(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


def wait_allowed(env: dict[str, str], user: str, *request: str, timeout: float = 30.0) -> None:
    """Until the API server's authorizer lets ``user`` make ``request`` (``kubectl auth can-i``'s arguments:
    verb, resource or URL, flags). It authorizes from caches of roles and bindings, so a binding just created
    allows its subject a moment later, not at once: a test that acts at once sees a 403 now and then."""
    from support.poll import wait_for

    def allowed() -> bool:
        argv = ["kubectl", "auth", "can-i", *request, f"--as={user}"]
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
        return r.stdout.strip() == "yes"

    wait_for(allowed, timeout, f"{user} allowed to {' '.join(request)}")


def render(env: dict[str, str], chart: Path, release: str, namespace: str, *args: str) -> list[dict]:
    """`helm template` of the chart, hooks included, as the documents an install would create."""
    cmd = ["helm", "template", release, str(chart), "--namespace", namespace, *args]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=True).stdout
    return [d for d in yamlc.load_all(out) if isinstance(d, dict) and d.get("kind")]


def _role_key(kind: str, name: str, namespace: str | None) -> str:
    return f"{kind}/{namespace}/{name}" if kind == "Role" else f"{kind}/{name}"


def grants_of(docs: Iterable[dict], sa_namespace: str, sa_name: str) -> list[Grant]:
    """Every grant the rendered bindings give the ServiceAccount (roles from the same render)."""
    docs = list(docs)
    roles = {
        _role_key(d["kind"], d["metadata"]["name"], d["metadata"].get("namespace")): d
        for d in docs
        if d["kind"] in ("Role", "ClusterRole")
    }
    out: list[Grant] = []
    for b in (d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        subjects = b.get("subjects") or []
        if not any(
            s.get("kind") == "ServiceAccount"
            and s.get("name") == sa_name
            and s.get("namespace") == sa_namespace
            for s in subjects
        ):
            continue
        scope = b["metadata"].get("namespace") if b["kind"] == "RoleBinding" else None
        ref = b["roleRef"]
        key = _role_key(ref["kind"], ref["name"], scope)
        role = roles.get(key)
        assert role is not None, f"{b['kind']} {b['metadata']['name']} binds {key}, which the chart lacks"
        for rule in role.get("rules") or []:
            for group in rule.get("apiGroups") or []:
                for resource in rule.get("resources") or []:
                    for verb in rule.get("verbs") or []:
                        names = tuple(rule.get("resourceNames") or ())
                        out.append(Grant(key, scope, group, resource, verb, names))
    return out


def roles_of(docs: Iterable[dict]) -> list[str]:
    """Every Role and ClusterRole the render contains, as ``_role_key`` names them."""
    return [
        _role_key(d["kind"], d["metadata"]["name"], d["metadata"].get("namespace"))
        for d in docs
        if d["kind"] in ("Role", "ClusterRole")
    ]


def _name_of(event: dict) -> str:
    ref = event.get("objectRef") or {}
    if ref.get("name"):
        return str(ref["name"])
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(event.get("requestURI", "")).query)
    for selector in query.get("fieldSelector", []):
        for term in selector.split(","):
            key, _, value = term.partition("=")
            if key == "metadata.name":
                return value.lstrip("=")
    return ""


def calls(events: Iterable[dict], users: Iterable[str]) -> list[Call]:
    """Resource requests of these users (non-resource URLs such as /version and discovery are public)."""
    wanted = set(users)
    out = []
    for e in events:
        user = (e.get("user") or {}).get("username", "")
        ref = e.get("objectRef")
        if user not in wanted or not ref or e.get("stage") not in ("ResponseComplete", "ResponseStarted"):
            continue
        resource = ref.get("resource", "")
        if ref.get("subresource"):
            resource += "/" + ref["subresource"]
        decision = (e.get("annotations") or {}).get("authorization.k8s.io/decision", "")
        call = Call(
            user=user,
            user_agent=e.get("userAgent", ""),
            verb=e.get("verb", ""),
            group=ref.get("apiGroup", ""),
            resource=resource,
            namespace=ref.get("namespace", ""),
            name=_name_of(e),
            code=int((e.get("responseStatus") or {}).get("code") or 0),
            allowed=decision == "allow",
            uri=e.get("requestURI", ""),
        )
        out.append(call)
        if call.verb == "patch" and call.code == 201:
            # a server-side apply that created its object: the API server authorized it as a create too
            # (with the object's name), inside the request, which the audit log records as the patch alone
            out.append(dataclasses.replace(call, verb="create"))
    return out


def covers(grant: Grant, call: Call) -> bool:
    if (grant.group, grant.resource, grant.verb) != (call.group, call.resource, call.verb):
        return False
    if grant.namespace is not None and grant.namespace != call.namespace:
        return False
    return not grant.names or call.name in grant.names


def unused(grants: Iterable[Grant], used_by: Iterable[Call]) -> list[Grant]:
    """Grants no allowed call falls inside."""
    allowed = [c for c in used_by if c.allowed]
    return [g for g in grants if not any(covers(g, c) for c in allowed)]


def refused(made: Iterable[Call]) -> list[Call]:
    return [c for c in made if not c.allowed]


def token_kubeconfig(
    env: dict[str, str], admin_kubeconfig: str, namespace: str, sa: str, path: Path, pod: str | None = None
) -> Path:
    """A kubeconfig that authenticates as the ServiceAccount (a TokenRequest token, as a pod gets; bound to
    the Pod ``pod`` when given, so the API server names that pod in the request's user info, as it does for a
    pod's projected token)."""
    bound = ["--bound-object-kind=Pod", f"--bound-object-name={pod}"] if pod else []
    token = subprocess.run(
        ["kubectl", "create", "token", sa, "-n", namespace, "--duration=2h", *bound],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    admin = yaml.safe_load(Path(admin_kubeconfig).read_text())
    cluster = admin["clusters"][0]["cluster"]
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "local", "cluster": cluster}],
                "users": [{"name": sa, "user": {"token": token}}],
                "contexts": [
                    {"name": sa, "context": {"cluster": "local", "user": sa, "namespace": namespace}}
                ],
                "current-context": sa,
            }
        )
    )
    path.chmod(0o600)
    return path
