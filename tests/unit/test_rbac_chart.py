"""The chart's RBAC, rendered by the real `helm template` in both modes and the variants that change it:
structural promises that hold for every rule (the integration test tests/integration/test_rbac_cluster.py
proves on a live API server that each rule is used and enough).

Needs the pinned helm on PATH (`make pytest` puts .tools/bin there); no cluster.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from dynamo_operator.api.registry import KINDS
from dynamo_operator.controllers.sync import CHILD_TYPES
from dynamo_operator.labels import LABEL_MANAGED_BY, MANAGED_BY
from dynamo_operator.render import RenderContext, render_all
from dynamo_operator.render.context import INTEGRATION_GROUPS, INTEGRATION_KINDS
from dynamo_operator.render.etcdaccess import LABEL_ETCD_CLIENT
from dynamo_operator.render.mpisecret import LABEL_MPI_SSH
from dynamo_operator.render.natsaccess import LABEL_NATS_CLIENT
from dynamo_operator.sshkeys import MPI_SSH_KEYS
from support import yamlc

pytestmark = pytest.mark.tools  # helm template

REPO_ROOT = Path(__file__).resolve().parents[2]
CHART = REPO_ROOT / "charts" / "platform"
CI = {p.stem.removesuffix("-values"): p for p in sorted((CHART / "ci").glob("*-values.yaml"))}
VARIANTS = {
    "cluster-wide": [],
    "namespace-restricted": [],
    "restricted-other-target": [
        "dynamo-operator.namespaceRestriction.enabled=true",
        "dynamo-operator.namespaceRestriction.targetNamespace=tenant-a",
    ],
    "no-install-hooks": ["dynamo-operator.installHooks.enabled=false"],
    "cert-manager": ["dynamo-operator.webhook.certificateMode=cert-manager"],
    "keep-secrets": ["dynamo-operator.installHooks.keepSecretsOnUninstall=true"],
}
# The workloads' roles (planner, EPP, profiling Job, a graph's Kubernetes discovery) are granted to upstream
# Dynamo images, and the metrics reader to Prometheus: not the operator's nor the hooks'.
WORKLOAD_COMPONENTS = {"planner", "epp", "dgdr-profiling", "discovery"}
# Resources no code of ours calls (a grant comes back with the code that uses it).
NEVER = {
    "podgroups",
    "endpointslices",
    "queues",
    "horizontalpodautoscalers",
    "podcliques/scale",
    "podcliquescalinggroups/scale",
    "dynamoworkermetadatas",
    "pods/exec",
    "serviceaccounts/token",
    # the admission policy bounding the MPI Secret copies' create (mpi-secret-rbac.yaml) must stay out of
    # the operator's reach
    "validatingadmissionpolicies",
    "validatingadmissionpolicybindings",
}
MPI_SECRET = "mpi-run-ssh-secret"
ETCD_CLIENT_SECRET = "dynamo-etcd-client"  # etcdAuth.secretName's default (namespaceCertificate)
NATS_CLIENT_SECRET = "dynamo-nats-client"  # natsAuth.secretName's default (namespaceAccount)
CLIENT_SECRETS = {"etcd": ETCD_CLIENT_SECRET, "nats": NATS_CLIENT_SECRET}
OPERATOR_USER = "system:serviceaccount:dynamo-system:dp-dynamo-operator-controller-manager"


def _render(variant: str) -> list[dict]:
    helm = shutil.which("helm")
    if helm is None:
        pytest.fail("helm is not on PATH: run the tests through `make pytest` (it builds the pinned tools)")
    base = "namespace-restricted" if variant.startswith("restricted") else variant
    args = [helm, "template", "dp", str(CHART), "--namespace", "dynamo-system"]
    args += ["--values", str(CI.get(base, CI["cluster-wide"]))]
    for s in VARIANTS[variant]:
        args += ["--set", s]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True).stdout
    return [d for d in yamlc.load_all(out) if isinstance(d, dict) and d.get("kind")]


def _ours(docs: list[dict]) -> list[dict]:
    """The operator's and the hooks' Roles and ClusterRoles."""
    out = []
    for d in docs:
        labels = d["metadata"].get("labels") or {}
        if d["kind"] not in ("Role", "ClusterRole"):
            continue
        if labels.get("app.kubernetes.io/name") != "dynamo-operator":
            continue  # the Grove and Kai subcharts' own operators
        workload = labels.get("app.kubernetes.io/component") in WORKLOAD_COMPONENTS
        if workload or d["metadata"]["name"].endswith("-metrics-reader"):
            continue
        out.append(d)
    return out


def _cells(role: dict):
    for rule in role.get("rules") or []:
        for resource in rule.get("resources") or []:
            for verb in rule.get("verbs") or []:
                yield rule, resource, verb


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_no_wildcards_escalation_or_grants_without_a_caller(variant: str) -> None:
    roles = _ours(_render(variant))
    assert roles
    for role in roles:
        where = f"{role['kind']} {role['metadata']['name']}"
        for rule, resource, verb in _cells(role):
            assert "*" not in (rule.get("apiGroups") or []) + [resource, verb], (where, rule)
            assert verb not in ("escalate", "impersonate", "deletecollection"), (where, rule)
            assert resource not in NEVER, f"{where} grants {verb} on {resource}, which no code calls"
            if resource in ("clusterroles", "roles"):  # bind by name only (the roles it binds, never writes)
                assert verb == "bind" and rule.get("resourceNames"), (where, rule)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_secrets_leases_and_webhooks_by_name(variant: str) -> None:
    """Secrets: cluster-wide at most list/watch (the pull-secret index); every other Secret verb by name,
    in the release namespace; create without a name only for the operator when no install hook makes its
    Secret, or for the MPI Secret copies under their admission policy (those also update/delete by name
    elsewhere). Leases and webhook configurations: every write by name (a Lease create cannot be)."""
    docs = _render(variant)
    for role in _ours(docs):
        ns = role["metadata"].get("namespace")
        where = f"{role['kind']} {ns}/{role['metadata']['name']}"
        for rule, resource, verb in _cells(role):
            named = bool(rule.get("resourceNames"))
            copies, client = _is_mpi_copy_role(role), _client_access_service(role)
            if resource == "secrets" and not named:
                allowed = {"list", "watch"} | (
                    {"create"} if variant == "no-install-hooks" or copies or client else set()
                )
                assert verb in allowed, (where, rule)
                if verb == "create" and copies:
                    assert _mpi_copy_policy(docs), f"{where}: create on Secrets without the admission bound"
                elif verb == "create" and client:
                    assert _operator_policies(docs).get(f"{client}-access"), (
                        f"{where}: create on Secrets without the admission bound"
                    )
                elif verb == "create":
                    assert role["kind"] == "Role" and ns == "dynamo-system", where
            if resource == "secrets" and named and (copies or client):
                assert rule["resourceNames"] == [MPI_SECRET if copies else CLIENT_SECRETS[client]], (
                    where,
                    rule,
                )
                assert verb in ("list", "watch", "update", "delete"), (where, rule)
            elif resource == "secrets" and named:
                assert role["kind"] == "Role" and ns == "dynamo-system", where
            if resource == "leases" and not named:
                assert verb == "create" and role["kind"] == "Role", (where, rule)
            if resource.endswith("webhookconfigurations") and verb not in ("list", "watch"):
                assert named, (where, rule)
            if resource == "customresourcedefinitions" and verb not in ("list", "watch"):
                assert named and all(n.endswith(".nvidia.com") for n in rule["resourceNames"]), (where, rule)


def _is_mpi_copy_role(role: dict) -> bool:
    return role["metadata"]["name"].endswith("-mpi-ssh-copies")


def _client_access_service(role: dict) -> str:
    """ "etcd" / "nats" for the roles granting a service's per-namespace client Secrets, else ""."""
    name = role["metadata"]["name"]
    return next((svc for svc in CLIENT_SECRETS if name.endswith(f"-{svc}-access")), "")


def _mpi_copy_policy(docs: list[dict]) -> dict | None:
    """The ValidatingAdmissionPolicy bounding the operator's Secret writes, when a Deny binding binds it."""
    return _operator_policies(docs).get("mpi-ssh-copies")


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_mpi_secret_copies_are_bounded_by_an_admission_policy(variant: str) -> None:
    """Where the chart grants create on Secrets for the MPI copies, its policy matches the operator's
    Secret writes (create/update/delete; all but the webhook certificate's), fails closed, and admits only
    the copy: its name outside the release namespace, its labels (before an update too), Opaque, the MPI
    keys (render/mpisecret.py)."""
    docs = _render(variant)
    if not any(_is_mpi_copy_role(r) for r in _ours(docs)):
        assert variant == "namespace-restricted" and _mpi_copy_policy(docs) is None
        return
    policy = _mpi_copy_policy(docs)
    assert policy is not None
    spec = policy["spec"]
    assert spec["failurePolicy"] == "Fail"
    (rule,) = spec["matchConstraints"]["resourceRules"]
    assert rule["resources"] == ["secrets"] and set(rule["operations"]) == {"CREATE", "UPDATE", "DELETE"}
    assert spec["matchConditions"][0]["expression"] == f'request.userInfo.username == "{OPERATOR_USER}"'
    exceptions = [c["expression"] for c in spec["matchConditions"][1:]]
    # the etcd and NATS client Secrets' own policies (below)
    clients = [f'request.name != "{ETCD_CLIENT_SECRET}"', f'request.name != "{NATS_CLIENT_SECRET}"']
    if variant == "cert-manager":
        assert exceptions == clients
    else:
        assert exceptions == [
            *clients,
            '!(request.namespace == "dynamo-system" && request.name == "webhook-server-cert")',
        ]
    checks = " ".join(v["expression"] for v in spec["validations"])
    assert (
        f'variables.secret.metadata.name == "{MPI_SECRET}" && request.namespace != "dynamo-system"' in checks
    )
    assert "oldObject.metadata.labels" in checks and '"Opaque"' in checks
    assert f"[{', '.join(f'{k!r}' for k in MPI_SSH_KEYS)}]".replace("'", '"') in checks
    labels = {v["name"]: v["expression"] for v in spec["variables"]}["copyLabels"]
    assert f'"{LABEL_MPI_SSH}": "true"' in labels and f'"{LABEL_MANAGED_BY}": "{MANAGED_BY}"' in labels
    assert all(v.get("reason") == "Forbidden" for v in spec["validations"])


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize(
    ("svc", "label", "admin", "other"),
    [
        ("etcd", LABEL_ETCD_CLIENT, "dp-etcd-admin", NATS_CLIENT_SECRET),
        ("nats", LABEL_NATS_CLIENT, "dp-nats-admin", ETCD_CLIENT_SECRET),
    ],
)
def test_client_secrets_are_bounded_by_an_admission_policy(
    variant: str, svc: str, label: str, admin: str, other: str
) -> None:
    """The per-namespace etcd certificates (etcdAuth namespaceCertificate) and NATS certificates (natsAuth
    namespaceAccount), the defaults with the bundled etcd and NATS: create on Secrets is granted with a
    policy that matches every Secret write of the operator but the webhook certificate's, the MPI SSH
    Secrets' and the other service's client Secrets' (bounded elsewhere), fails closed and admits only
    kubernetes.io/tls Secrets of that name with the operator's labels (before an update too) and the keys
    ca.crt, tls.crt, tls.key; the admin Secret is read by name only."""
    docs = _render(variant)
    assert any(_client_access_service(r) == svc for r in _ours(docs)), variant
    spec = _operator_policies(docs)[f"{svc}-access"]["spec"]
    assert spec["failurePolicy"] == "Fail"
    conditions = [c["expression"] for c in spec["matchConditions"]]
    # every Secret write of the operator but its other Secrets' (a token Secret is refused here too,
    # also where no MPI policy is rendered)
    others = [f'request.name != "{MPI_SECRET}"'] if _mpi_copy_policy(docs) else []
    others.append(f'request.name != "{other}"')
    if variant != "cert-manager":
        others.append('!(request.namespace == "dynamo-system" && request.name == "webhook-server-cert")')
    assert conditions == [f'request.userInfo.username == "{OPERATOR_USER}"', *others]
    expected = f'variables.secret.metadata.name == "{CLIENT_SECRETS[svc]}"'
    assert spec["validations"][0]["expression"] == expected
    checks = " ".join(v["expression"] for v in spec["validations"])
    assert "oldObject.metadata.labels" in checks and '"kubernetes.io/tls"' in checks
    assert '["ca.crt", "tls.crt", "tls.key"]' in checks
    labels = {v["name"]: v["expression"] for v in spec["variables"]}["ours"]
    assert f'"{label}": "true"' in labels and f'"{LABEL_MANAGED_BY}": "{MANAGED_BY}"' in labels
    roles = [r for r in _ours(docs) if r["metadata"]["name"].endswith(f"-{svc}-admin")]
    rules = [rule for a in roles for rule in a["rules"]]
    assert rules[0] == {
        "apiGroups": [""],
        "resources": ["secrets"],
        "resourceNames": [admin],
        "verbs": ["get"],
    }
    if svc == "nats":  # and the accounts file NATS includes, by name
        assert rules[1:] == [
            {
                "apiGroups": [""],
                "resources": ["configmaps"],
                "resourceNames": ["dp-nats-accounts"],
                "verbs": ["get", "update"],
            }
        ]
    else:
        assert rules[1:] == []


def test_the_operator_holds_no_role_on_the_release_namespaces_mpi_secret() -> None:
    """The operator no longer reads the install hook's Secret (each graph namespace has keys of its own,
    issue 30): restricted to another namespace, nothing in the release namespace grants it that Secret."""
    for role in _ours(_render("restricted-other-target")):
        component = (role["metadata"].get("labels") or {}).get("app.kubernetes.io/component")
        if component in ("install-hooks", "uninstall-hooks"):
            continue  # the install hook makes that Secret
        if role["kind"] == "Role" and role["metadata"].get("namespace") == "dynamo-system":
            for rule, resource, _ in _cells(role):
                assert not (resource == "secrets" and MPI_SECRET in (rule.get("resourceNames") or [])), role


@pytest.mark.parametrize("variant", ["namespace-restricted", "restricted-other-target"])
def test_restricted_mode_is_roles_plus_name_limited_cluster_rules(variant: str) -> None:
    """Cluster-scoped grants of a restricted release: reviews (unnamed by nature), read-only lists of webhook
    configurations, and writes by name; everything namespaced is in a Role."""
    for role in _ours(_render(variant)):
        if role["kind"] != "ClusterRole":
            continue
        for rule, resource, verb in _cells(role):
            if resource in ("tokenreviews", "subjectaccessreviews"):
                assert verb == "create"
            elif verb in ("list", "watch"):
                assert resource.endswith("webhookconfigurations") or rule.get("resourceNames"), (role, rule)
            else:
                assert rule.get("resourceNames"), (role["metadata"]["name"], rule)


def test_hook_rbac_is_deleted_after_success_and_failure() -> None:
    for doc in _render("cluster-wide") + _render("namespace-restricted"):
        labels = doc["metadata"].get("labels") or {}
        if labels.get("app.kubernetes.io/component") not in ("install-hooks", "uninstall-hooks"):
            continue
        policy = (doc["metadata"].get("annotations") or {})["helm.sh/hook-delete-policy"]
        if doc["kind"] == "Job":
            assert "hook-failed" not in policy  # a failed Job stays for `kubectl logs`
        else:
            assert set(policy.split(",")) == {"before-hook-creation", "hook-succeeded", "hook-failed"}, doc


def test_uninstall_hook_kinds_are_the_api_registry_kinds() -> None:
    """The uninstall hook may update only Dynamo's kinds: the chart's list is the registry's."""
    text = (CHART / "components/operator/templates/uninstall-hooks.yaml").read_text()
    listed = re.search(r"\$kinds := list ((?:\"[a-z]+\" ?)+)", text)
    assert listed, "uninstall-hooks.yaml no longer defines $kinds"
    chart = listed.group(1).replace('"', "").split()
    registry = [k.plural for k in KINDS.values() if k.scope == "Namespaced" and k.finalizable]
    assert chart == registry


# -- the admission policies: what RBAC cannot say (admission-policies.yaml) ---------------------------------

# The operator's writes that the owned-writes policy does not bound, and what bounds them instead: a write
# grant on any other kind fails test_every_operator_write_is_bounded.
BOUNDED_ELSEWHERE = {
    (
        "nvidia.com",
        "dynamographdeployments",
    ): "users' graphs, patched in place (a hash annotation, adapters' replicas)",
    ("nvidia.com", "dynamographdeploymentrequests"): "users' requests: one annotation patched",
    ("nvidia.com", "dynamomodels"): "users' models: the cleanup finalizer patched",
    ("", "events"): "Events name their object; they change nothing else",
    ("", "pods"): "pod-labels policy: topology labels added to the workers that ask for them (cluster-wide)",
    ("", "secrets"): "the webhook certificate by name; the MPI copies by their own policy (mpi-ssh-copies)",
    ("coordination.k8s.io", "leases"): "update and delete by name; create in one namespace",
    ("authentication.k8s.io", "tokenreviews"): "a review changes nothing",
    ("authorization.k8s.io", "subjectaccessreviews"): "a review changes nothing",
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): "webhook-cabundle policy, by name",
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): "webhook-cabundle policy, by name",
    ("apiextensions.k8s.io", "customresourcedefinitions"): "crd-cabundle policy, by name",
}
WRITES = {"create", "update", "patch", "delete"}


def _bound_policies(docs: list[dict]) -> dict[str, dict]:
    policies = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ValidatingAdmissionPolicy"}
    out = {}
    for b in docs:
        if b["kind"] != "ValidatingAdmissionPolicyBinding" or b["spec"].get("validationActions") != ["Deny"]:
            continue
        policy = policies.get(b["spec"]["policyName"])
        if policy is not None and policy["spec"].get("failurePolicy") == "Fail":
            out[policy["metadata"]["name"]] = policy
    return out


def _operator_policies(docs: list[dict]) -> dict[str, dict]:
    """The operator's bound policies by their suffix (``owned-writes`` for ``<cluster>-owned-writes``)."""
    prefix = "dp-dynamo-operator-dynamo-system-"
    return {n.removeprefix(prefix): p for n, p in _bound_policies(docs).items() if n.startswith(prefix)}


def _policy_kinds(policy: dict) -> set[tuple[str, str]]:
    return {
        (group, resource)
        for rule in policy["spec"]["matchConstraints"]["resourceRules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }


def _operator_roles(docs: list[dict]) -> list[dict]:
    """The roles bound to the operator's ServiceAccount (not the hooks')."""
    bound = {
        (b["roleRef"]["kind"], b["roleRef"]["name"])
        for b in docs
        if b["kind"] in ("RoleBinding", "ClusterRoleBinding")
        and any(s.get("name") == OPERATOR_USER.rsplit(":", 1)[1] for s in b.get("subjects") or [])
    }
    return [r for r in _ours(docs) if (r["kind"], r["metadata"]["name"]) in bound]


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_operator_write_is_bounded(variant: str) -> None:
    """Every create, update, patch or delete the chart grants the operator is on a kind whose objects the
    owned-writes policy limits to the operator's own (labelled app.kubernetes.io/managed-by=dynamo-operator),
    or on one BOUNDED_ELSEWHERE says how else; subresources (status, finalizers) change no child."""
    docs = _render(variant)
    policies = _operator_policies(docs)
    owned = _policy_kinds(policies["owned-writes"])
    for role in _operator_roles(docs):
        for rule, resource, verb in _cells(role):
            if verb not in WRITES or "/" in resource:
                continue
            for group in rule["apiGroups"]:
                assert (group, resource) in owned or (group, resource) in BOUNDED_ELSEWHERE, (
                    f"{role['metadata']['name']} grants {verb} on {resource}.{group or 'core'}: neither the "
                    "owned-writes policy nor BOUNDED_ELSEWHERE bounds it"
                )
    if any(
        r for r in _operator_roles(docs) for _, res, v in _cells(r) if res == "rolebindings" and v in WRITES
    ):
        assert "rolebindings" in policies
    assert "webhook-cabundle" in policies and "discovery-writes" in policies
    cluster_wide = not variant.startswith("restricted") and variant != "namespace-restricted"
    assert ("crd-cabundle" in policies) == cluster_wide
    assert ("pod-labels" in policies) == cluster_wide
    assert ("hook-secrets" in policies) == (variant != "no-install-hooks")


def _plural(kind: str) -> str:
    low = kind.lower()
    return low[:-1] + "ies" if low.endswith("y") else low + ("es" if low.endswith("s") else "s")


def _assert_labelled_and_bounded(where: str, doc: dict, ctx: RenderContext, owned: set) -> set[str]:
    """Every object rendered of ``doc`` carries the operator's label and is of a kind ``owned`` covers (or a
    Secret: the MPI copies' policy); returns the kinds rendered."""
    doc["metadata"].setdefault("namespace", "work")  # as the API server fills it in
    kinds = set()
    for obj in render_all(doc, ctx):
        what = f"{where}: {obj['kind']} {obj['metadata']['name']}"
        assert (obj["metadata"].get("labels") or {}).get(LABEL_MANAGED_BY) == MANAGED_BY, what
        group = obj["apiVersion"].rpartition("/")[0]
        assert (group, _plural(obj["kind"])) in owned or obj["kind"] == "Secret", what
        kinds.add(obj["kind"])
    return kinds


def test_every_child_the_operator_renders_is_labelled_as_its_own() -> None:
    """The owned-writes policy refuses a create without the operator's label: every object ``render_all``
    makes of every example (with the chart's configuration and every integration detected) carries it, and
    its kind is one the policy covers (Secrets: the MPI copies' policy); so is every kind the controllers'
    Syncer writes (controllers/sync.py CHILD_TYPES)."""
    docs = _render("cluster-wide")
    owned = _policy_kinds(_operator_policies(docs)["owned-writes"])
    cm = next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("-config"))
    config = yaml.safe_load(cm["data"]["config.yaml"])
    every = frozenset(INTEGRATION_GROUPS) | frozenset(INTEGRATION_KINDS)
    seen = set()
    for detected in (every, every - {"grove"}):  # graphs on Grove, and on components
        ctx = RenderContext(operator_config=config, detected=detected)
        for path in sorted((REPO_ROOT / "examples").glob("*.yaml")):
            for doc in yamlc.load_all(path.read_text()):
                if isinstance(doc, dict) and str(doc.get("apiVersion", "")).startswith("nvidia.com/"):
                    seen |= _assert_labelled_and_bounded(path.name, doc, ctx, owned)
    assert {"Deployment", "Service", "ServiceAccount", "RoleBinding", "DynamoComponentDeployment"} <= seen, (
        seen
    )
    for ct in CHILD_TYPES.values():
        assert (ct.res.group, ct.res.plural) in owned, ct.res.kind


# -- the Grove and KAI subcharts' operators (charts/platform/components/{grove,kai-scheduler}) -------------

SUBCHART_OPERATORS = {"grove-operator": "dp-grove-operator", "kai-operator": "dp-kai-operator"}
# Writes that RBAC cannot limit by name, allowed to the subcharts' operators only under a Deny-bound policy.
UNNAMED_WRITES_NEED_A_POLICY = {
    ("", "secrets"),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
    ("apiextensions.k8s.io", "customresourcedefinitions"),
    ("rbac.authorization.k8s.io", "roles"),
    ("rbac.authorization.k8s.io", "rolebindings"),
}
OPERATION = {"create": "CREATE", "update": "UPDATE", "patch": "UPDATE", "delete": "DELETE"}


def _subchart_roles(docs: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for d in docs:
        name = (d["metadata"].get("labels") or {}).get("app.kubernetes.io/name")
        if d["kind"] in ("Role", "ClusterRole") and name in SUBCHART_OPERATORS:
            out.setdefault(name, []).append(d)
    return out


def _policy_bounds(docs: list[dict], user: str, group: str, resource: str, operation: str) -> bool:
    """A Deny-bound, fail-closed policy matching ``user``'s ``operation`` on the resource."""
    for policy in _bound_policies(docs).values():
        spec = policy["spec"]
        conditions = [c["expression"] for c in spec.get("matchConditions") or []]
        if f'request.userInfo.username == "{user}"' not in conditions:
            continue
        for rule in spec["matchConstraints"]["resourceRules"]:
            if (
                group in rule["apiGroups"]
                and resource in rule["resources"]
                and operation in rule["operations"]
            ):
                return True
    return False


def test_grove_and_kai_operators_are_scoped() -> None:
    """The subcharts' operators (both on in ci/cluster-wide-values.yaml): no wildcard, no escalate,
    impersonate or unnamed bind, no write of roles or bindings cluster-wide, no deletecollection of Secrets or
    accounts; a write RBAC cannot name (Secrets, webhook configurations, CRDs, Roles, RoleBindings) is either
    by name or bounded by an admission policy on that operator's account."""
    docs = _render("cluster-wide")
    roles = _subchart_roles(docs)
    assert set(roles) == set(SUBCHART_OPERATORS), roles.keys()
    for operator, roles_of in roles.items():
        user = f"system:serviceaccount:dynamo-system:{SUBCHART_OPERATORS[operator]}"
        for role in roles_of:
            where = f"{role['kind']} {role['metadata']['name']}"
            for rule, resource, verb in _cells(role):
                groups = rule.get("apiGroups") or []
                assert "*" not in [*groups, resource, verb], (where, rule)
                assert verb not in ("escalate", "impersonate"), (where, rule)
                assert verb != "bind" or rule.get("resourceNames"), (where, rule)
                assert resource not in ("clusterroles", "clusterrolebindings") or verb in (
                    "get",
                    "list",
                    "watch",
                )
                if verb == "deletecollection":
                    assert resource not in ("secrets", "serviceaccounts", "roles", "rolebindings"), (
                        where,
                        rule,
                    )
                for group in groups:
                    if (group, resource) not in UNNAMED_WRITES_NEED_A_POLICY or verb not in OPERATION:
                        continue
                    assert rule.get("resourceNames") or _policy_bounds(
                        docs, user, group, resource, OPERATION[verb]
                    ), f"{where}: unnamed {verb} on {resource} without an admission policy bounding it"
