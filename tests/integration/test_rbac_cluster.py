"""Least privilege, proven on a real API server: the operator, each hook and the plugin run under exactly
the chart's RBAC, the API server's audit log records every request they make, and

* every call each of them makes is allowed (a refused call is a missing grant, or a code path that should
  not exist);
* every (API group, resource, verb) cell of every rule the chart binds to them was used at least once
  (``ALLOWED_UNUSED`` lists, with the reason, the few that a short test cannot exercise; a ``list`` the
  informers make only where the apiserver cannot stream their initial state counts as used by the stream,
  ``_streamed``); a grant added later without code that calls it fails here;
* a list of forbidden probes (read a Secret in kube-system, mint a token Secret, delete a kube-system Lease
  or an unrelated webhook configuration, update a foreign nvidia.com object, bind cluster-admin) is denied
  to each identity.

The operator runs as a local process with a token of its ServiceAccount (TokenRequest, as a pod gets), in
both modes, through a realistic lifecycle of every kind it reconciles; the hooks run the argv of the chart's
hook Jobs with their ServiceAccounts' tokens, with the hook RBAC the chart renders applied for the length of
the hook phase, as Helm does. kwok runs no containers, so the work the profiler, a checkpoint or a worker
would do is done by the test as the user. The plugin runs as the user (an administrator); its writes are
told apart by its User-Agent, and every one of them must hit a Dynamo object.

The cluster is this module's own (the audit log and the OwnerReferencesPermissionEnforcement admission
plugin, which checks the operator's ``*/finalizers`` grants, are API server flags).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from dynamo_hooks.cluster import KubeCluster, connect, load_api_client
from dynamo_localcluster.cluster import REPO_ROOT, LocalCluster, free_port, sweep
from dynamo_operator.api.registry import KINDS
from dynamo_operator.certsecret import CA_KEY, ca_configmap_name
from dynamo_operator.controllers.lifecycle import DYNAMO_MODELS, FINALIZER
from dynamo_operator.labels import LABEL_MANAGED_BY, MANAGED_BY
from dynamo_operator.render import etcdaccess as ea
from dynamo_operator.runtime.client import (
    CONFIGMAPS,
    DEPLOYMENTS,
    NAMESPACES,
    PODS,
    ROLEBINDINGS,
    SECRETS,
    SERVICEACCOUNTS,
    ResourceClient,
    custom,
)
from dynamo_operator.webhooks.certs import CRDS, VALIDATING
from kubernetes.client.exceptions import ApiException
from support import chartetcd, lifecycle, rbac
from support.crds import install_crds, install_integration_crds, install_third_party_crds, serve_crds
from support.lifecycle import run
from support.poll import wait_for
from support.processes import OperatorProcess, http_get, spawn_operator
from support.release import LOCAL_VALUES

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

CHART = REPO_ROOT / "charts" / "platform"
CLUSTER_ROOT = REPO_ROOT / ".cache" / "test-clusters"
PROBE_AGENT = "rbac-probe/1"
FOREIGN_CRD = "clusterpolicies.nvidia.com"
FOREIGN = custom("nvidia.com", "v1", "clusterpolicies", "ClusterPolicy", namespaced=False)
DEPLOYMENT_SPEC = {
    "selector": {"matchLabels": {"app": "probe"}},
    "template": {
        "metadata": {"labels": {"app": "probe"}},
        "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]},
    },
}
WEBHOOK_SECRET = "webhook-server-cert"
ETCD_CLIENT_SECRET = "dynamo-etcd-client"  # etcdAuth.secretName's default

# (identity, API group, resource, verb) -> why a short test cannot exercise it. Anything else unused fails.
ALLOWED_UNUSED = {
    **{
        ("operator", "nvidia.com", f"{plural}/finalizers", "update"): (
            "checked by the OwnerReferencesPermissionEnforcement admission plugin (on here) when a child "
            "with blockOwnerDeletion is created: an authorization check inside the create, which the audit "
            "log does not record as a request; the lifecycle's child creates passing with the plugin on is "
            "the proof"
        )
        for plural in (
            "dynamographdeployments",
            "dynamocomponentdeployments",
            "dynamographdeploymentrequests",
            "dynamocheckpoints",
        )
    },
    **{
        ("operator", group, resource, "get"): (
            "controllers/sync.py Syncer.sync and lifecycle.get_or_none read one object directly when the "
            "informer has not seen it yet: a create answered 409 by an object outside the label-selected "
            "cache, or a Job just created; timing-dependent, not reproducible on demand"
        )
        for group, resource in (  # every kind the operator also caches: its gets are cache misses
            ("nvidia.com", "dynamographdeployments"),
            ("nvidia.com", "dynamocomponentdeployments"),
            ("apps", "deployments"),
            ("", "services"),
            ("", "configmaps"),
            ("", "serviceaccounts"),
            ("rbac.authorization.k8s.io", "rolebindings"),
            ("batch", "jobs"),
            ("grove.io", "podcliquesets"),
            ("leaderworkerset.x-k8s.io", "leaderworkersets"),
            ("networking.k8s.io", "ingresses"),
            ("networking.istio.io", "virtualservices"),
            ("inference.networking.k8s.io", "inferencepools"),
            ("networking.istio.io", "destinationrules"),
            ("resource.k8s.io", "resourceclaimtemplates"),
            ("networking.k8s.io", "networkpolicies"),
        )
    },
    ("operator", "rbac.authorization.k8s.io", "rolebindings", "update"): (
        "controllers/sync.py _update writes a RoleBinding back when it drifted or lacks the graph's owner "
        "reference (an operator before this one owned the discovery binding per component); namespace-"
        "restricted, the only binding is the graph's discovery one, created once with its one owner"
    ),
    ("operator", "", "serviceaccounts", "update"): (
        "namespace-restricted, the planner and EPP accounts are the chart's, used as they are (no owner "
        "reference: controllers/sync.py is_foreign); an update is for one of the operator's own accounts "
        "that drifted, or to drop an owner reference an earlier operator added to the chart's (the admission "
        "policy's one exception, proven under it by test_restricted_shared_accounts.py)"
    ),
    ("operator", "", "events", "list"): (
        "controllers/checkpoint.py reads the FailedCreate Events of a checkpoint Job that has had no pod "
        "for checkpoint_stall_seconds (60 s), which the lifecycle does not wait out; the real-node tier "
        "proves it under the chart's role (tests/realnode/test_checkpoint.py: upstream's TensorRT-LLM "
        "snapshot-restore recipe names a RuntimeClass this cluster lacks, the checkpoint reports the refusal)"
    ),
    ("operator", "inference.networking.k8s.io", "inferencepools", "delete"): (
        "Syncer.prune of a graph's InferencePool when its EPP component is removed: admission refuses that "
        "(a graph's components are fixed at creation), a cluster without the operator's webhooks allows it; "
        "test_gms_epp_cluster.py proves the prune under the chart's role"
    ),
    ("uninstall-hooks", "nvidia.com", "podsnapshots", "update"): (
        "the uninstall hook takes the operator's finalizer off PodSnapshots an earlier operator left (same "
        "code path as every other kind, exercised on them); this operator refuses their creation at "
        "admission, so the lifecycle cannot leave one (webhooks/validation/podsnapshot.py)"
    ),
    ("operator", "networking.istio.io", "destinationrules", "delete"): (
        "Syncer.prune of the EPP DestinationRules when serviceMesh is turned off in the configuration (an "
        "operator restart); test_gms_epp_cluster.py proves it under the chart's role"
    ),
    ("operator", "nvidia.com", "dynamocomponentdeployments", "delete"): (
        "Syncer.prune of a graph's DCDs when it moves onto Grove (the move off Grove, its PodCliqueSet "
        "pruned, is exercised); the move onto Grove stops today on an ownership conflict between the "
        "graph's Services and its DCDs' before the prune is reached (an operator bug, reported)"
    ),
    **{
        ("operator", group, resource, "delete"): (
            "Syncer.prune of a component's workload when it switches between a Deployment and a "
            "LeaderWorkerSet: the admission rules refuse that switch, so only an object admitted while the "
            "webhook was off reaches it"
        )
        for group, resource in (("apps", "deployments"), ("leaderworkerset.x-k8s.io", "leaderworkersets"))
    },
    **{
        ("operator", group, resource, "delete"): (
            "Syncer.release deletes the shared planner/EPP ServiceAccount (and RoleBinding) when the last "
            "component using it stops rendering it (its type changes): the admission rules keep component "
            "types and the set of components fixed (a graph's deletion leaves it to the garbage collector)"
        )
        for group, resource in (("", "serviceaccounts"), ("rbac.authorization.k8s.io", "rolebindings"))
    },
    ("operator", "", "secrets", "delete"): (
        "controllers/mpisecret.py MPISecretSync._release deletes a namespace's MPI SSH Secret when the last "
        "graph of its namespace stops running multinode TensorRT-LLM components: the admission rules forbid "
        "switching a component between single-node and multinode (and keep the backend and the component "
        "types), so only a graph admitted while the webhook was off reaches it "
        "(test_exposure_storage_cluster.py exercises it under the chart's RBAC and admission policy)"
    ),
    ("operator", "networking.k8s.io", "networkpolicies", "delete"): (
        "controllers/netpol.py prunes a graph's sshd NetworkPolicy when it stops running multinode "
        "TensorRT-LLM components: the admission rules forbid that switch (as for the MPI SSH Secret's "
        "delete above); a graph's deletion leaves the policy to the garbage collector"
    ),
    ("operator", "rbac.authorization.k8s.io", "clusterroles", "bind"): (
        "the API server's RBAC escalation check when a RoleBinding to the planner/EPP/profiling/discovery "
        "ClusterRole is written: an authorization check inside that create, not a request of its own (a "
        "graph's discovery RoleBinding, render/discovery.py, is created in the cluster-wide lifecycle)"
    ),
    ("operator", "rbac.authorization.k8s.io", "roles", "bind"): (
        "namespace-restricted: the API server's RBAC escalation check when a graph's discovery RoleBinding "
        "to the chart's discovery Role is written (an authorization check inside that create; "
        "lifecycle.discovery_identity checks the binding exists in the restricted lifecycle)"
    ),
}


@dataclass(frozen=True)
class Identity:
    label: str  # "operator", "install-hooks", "uninstall-hooks": the key of ALLOWED_UNUSED
    namespace: str
    name: str

    @property
    def user(self) -> str:
        return rbac.service_account_user(self.namespace, self.name)


@dataclass
class ChartRelease:
    """One release of the chart on the audit cluster, rendered once: what it grants is what it installs."""

    cluster: LocalCluster
    workdir: Path
    name: str
    sets: list[str]
    namespace: str = ""
    webhook_port: int = field(default_factory=free_port)
    docs: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.namespace = self.namespace or f"{self.name}-ns"
        self.docs = rbac.render(self.cluster.env, CHART, self.name, self.namespace, *self.helm_args())

    @property
    def fullname(self) -> str:
        return f"{self.name}-dynamo-operator"

    @property
    def url_base(self) -> str:
        return f"https://127.0.0.1:{self.webhook_port}"

    def helm_args(self) -> list[str]:
        values = self.workdir / f"{self.name}-values.yaml"
        values.write_text(yaml.safe_dump(LOCAL_VALUES))
        args = ["--values", str(values), "--set", f"dynamo-operator.webhook.clientConfigURL={self.url_base}"]
        for s in self.sets:
            args += ["--set", s]
        return args

    def identity(self, label: str) -> Identity:
        sa = {"operator": "controller-manager"}.get(label, label)
        return Identity(label, self.namespace, f"{self.fullname}-{sa}")

    def hook_docs(self, component: str, kinds: tuple[str, ...]) -> list[dict]:
        return [
            d
            for d in self.docs
            if (d["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == component
            and d["kind"] in kinds
        ]

    def hook_argv(self, component: str, hook: str | None = None) -> list[list[str]]:
        """The argv of the chart's hook Jobs of ``component`` (in weight order; ``hook``: one event)."""
        jobs = [
            j
            for j in self.hook_docs(component, ("Job",))
            if hook is None or j["metadata"]["annotations"]["helm.sh/hook"] == hook
        ]
        jobs.sort(key=lambda j: int(j["metadata"]["annotations"]["helm.sh/hook-weight"]))
        return [j["spec"]["template"]["spec"]["containers"][0]["args"] for j in jobs]


# -- commands ------------------------------------------------------------------------------------------------


def kubectl_apply(env: dict[str, str], docs: list[dict]) -> None:
    run(env, "kubectl", "apply", "-f", "-", stdin=yaml.safe_dump_all(docs))


def kubectl_delete(env: dict[str, str], docs: list[dict]) -> None:
    run(
        env,
        "kubectl",
        "delete",
        "--ignore-not-found",
        "--wait=false",
        "-f",
        "-",
        stdin=yaml.safe_dump_all(docs),
    )


def as_identity(rel: ChartRelease, who: Identity) -> dict[str, str]:
    """An environment whose KUBECONFIG authenticates as ``who`` (its ServiceAccount must exist)."""
    path = rel.workdir / f"{who.name}.kubeconfig"
    rbac.token_kubeconfig(rel.cluster.env, rel.cluster.kubeconfig, who.namespace, who.name, path)
    return {**rel.cluster.env, "KUBECONFIG": str(path)}


POLICY_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")


def _policies_observed(env: dict[str, str], names: list[str]) -> bool:
    """The API server has compiled these ValidatingAdmissionPolicies (their status names their generation)."""
    for name in names:
        out = run(env, "kubectl", "get", "validatingadmissionpolicy", name, "-o", "json", check=False)
        if out.returncode:
            return False
        doc = json.loads(out.stdout)
        if (doc.get("status") or {}).get("observedGeneration") != doc["metadata"]["generation"]:
            return False
    return True


@contextlib.contextmanager
def hook_phase(rel: ChartRelease, component: str) -> Iterator[dict[str, str]]:
    """The hook ServiceAccount, RBAC and admission policies the chart renders for ``component``, for the
    length of the block, in Helm's order (the policies' lower weight first: in force before the grant), as
    Helm creates them before the hook Jobs and deletes them after; yields its environment."""
    policies = rel.hook_docs(component, POLICY_KINDS)
    docs = rel.hook_docs(component, ("ServiceAccount", *rbac.RBAC_KINDS))
    env = rel.cluster.env
    if policies:
        kubectl_apply(env, policies)
        names = [d["metadata"]["name"] for d in policies if d["kind"] == "ValidatingAdmissionPolicy"]
        wait_for(lambda: _policies_observed(env, names), 30, f"policies {names} never observed")
    kubectl_apply(env, docs)
    try:
        yield as_identity(rel, rel.identity(component))
    finally:
        kubectl_delete(env, docs + policies)


def run_hooks(env: dict[str, str], argvs: list[list[str]]) -> list[str]:
    outputs = []
    for argv in argvs:
        done = run(env, "dynamo-hooks", *argv, check=False, timeout=180)
        assert done.returncode == 0, f"dynamo-hooks {' '.join(argv)}:\n{done.stdout}\n{done.stderr}"
        outputs.append(done.stdout)
    return outputs


# -- the foreign CRD and the probes' targets -----------------------------------------------------------------


def foreign_crd() -> dict:
    """A stand-in for the NVIDIA GPU Operator's ClusterPolicy: another vendor's *.nvidia.com kind."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": FOREIGN_CRD},
        "spec": {
            "group": "nvidia.com",
            "names": {"kind": "ClusterPolicy", "plural": "clusterpolicies", "singular": "clusterpolicy"},
            "scope": "Cluster",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


def install_probe_targets(cluster: LocalCluster) -> None:
    """What the probes aim at: a kube-system Secret and Lease, a policy engine's webhook configuration and
    a foreign nvidia.com object carrying a finalizer of the same name as the operator's."""
    client = ResourceClient(cluster.api_client())
    kube = KubeCluster(cluster.api_client())
    kube.api_client.user_agent = "rbac-test-setup/1"  # not the plugin's: the audit checks tell them apart
    kube.create("/api/v1/namespaces/kube-system/secrets", {"metadata": {"name": "probe-secret"}, "data": {}})
    kube.create(
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
        {"metadata": {"name": "kube-scheduler"}, "spec": {"holderIdentity": "scheduler-0"}},
    )
    kube.create(
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        {"metadata": {"name": "policy-engine"}, "webhooks": []},
    )
    kube.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", foreign_crd())
    wait_for(lambda: _listable(client, FOREIGN), 60, interval=0.3)
    client.create(
        FOREIGN,
        {
            "metadata": {"name": "cluster-policy", "finalizers": [FINALIZER]},
            "spec": {"driver": {"image": "nvcr.io/nvidia/driver"}},
        },
    )


def _listable(client: ResourceClient, res) -> bool:
    try:
        client.list(res, limit=1)
        return True
    except ApiException:
        return False


def probe(env: dict[str, str], release_ns: str, operator_sa: str) -> dict[str, int]:
    """HTTP status of each forbidden request made with this environment's identity."""
    cluster = connect(env["KUBECONFIG"])
    cluster.api_client.user_agent = PROBE_AGENT
    token_secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "probe-token",
            "annotations": {"kubernetes.io/service-account.name": operator_sa},
        },
        "type": "kubernetes.io/service-account-token",
    }
    admin_binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "probe-admin"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": operator_sa, "namespace": release_ns}],
    }
    attempts = {
        "get Secret kube-system/probe-secret": lambda: cluster.get(
            "/api/v1/namespaces/kube-system/secrets/probe-secret"
        ),
        "list Secrets in kube-system": lambda: cluster.list("/api/v1/namespaces/kube-system/secrets"),
        "create a service-account-token Secret": lambda: cluster.create(
            f"/api/v1/namespaces/{release_ns}/secrets", token_secret
        ),
        "delete Lease kube-system/kube-scheduler": lambda: cluster.delete(
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
        ),
        "update Lease kube-system/kube-scheduler": lambda: cluster.replace(
            "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler",
            {"metadata": {"name": "kube-scheduler"}, "spec": {"holderIdentity": "probe"}},
        ),
        "delete ValidatingWebhookConfiguration policy-engine": lambda: cluster.delete(
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/policy-engine"
        ),
        f"update {FOREIGN_CRD} cluster-policy": lambda: cluster.replace(
            "/apis/nvidia.com/v1/clusterpolicies/cluster-policy",
            {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"}},
        ),
        "bind cluster-admin": lambda: cluster.create(
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/{release_ns}/rolebindings", admin_binding
        ),
    }
    out = {}
    for what, attempt in attempts.items():
        try:
            attempt()
            out[what] = 200
        except Exception as exc:  # ClusterError
            out[what] = getattr(exc, "status", 0)
    return out


# -- what the grants allow and the admission policies refuse (admission-policies.yaml) -----------------------


@dataclass(frozen=True)
class Refusal:
    """A probe's answer: its HTTP status and message, and whether RBAC alone would have let it through."""

    status: int
    message: str
    granted: bool


def _can(env: dict[str, str], user: str, verb: str, target: str, ns: str | None) -> bool:
    where = ["-n", ns] if ns else []
    done = run(env, "kubectl", "auth", "can-i", verb, target, *where, f"--as={user}", check=False)
    return done.stdout.strip() == "yes"


def _attempt(attempt, granted: bool) -> Refusal:
    try:
        attempt()
    except ApiException as exc:
        return Refusal(exc.status, str(exc.body or exc.reason), granted)
    except Exception as exc:  # ClusterError
        return Refusal(getattr(exc, "status", 0), str(exc), granted)
    return Refusal(200, "", granted)


def operator_probes(rel: ChartRelease, env: dict[str, str]) -> dict[str, Refusal]:
    """Writes the operator's RBAC allows (``granted``, asked of the authorizer) and the admission policies
    refuse: objects that are not its children, a binding to another account, a webhook configuration or
    CRD changed beyond the CA bundle. Made with the operator's token (``env``)."""
    admin = rel.cluster.env
    ns, user = rel.namespace, rel.identity("operator").user
    run(admin, "kubectl", "create", "configmap", "-n", ns, "probe-config", "--from-literal=a=1", check=False)
    run(admin, "kubectl", "create", "serviceaccount", "-n", ns, "probe-sa", check=False)
    api = load_api_client(env["KUBECONFIG"])
    api.user_agent = PROBE_AGENT
    client = ResourceClient(api)
    restricted = any("namespaceRestriction.enabled=true" in s for s in rel.sets)
    role = (
        {"kind": "Role", "name": f"{rel.fullname}-discovery"}
        if restricted
        else {"kind": "ClusterRole", "name": f"{rel.fullname}-{ns}-planner"}
    )
    binding = {
        "metadata": {"name": "default", "labels": {LABEL_MANAGED_BY: MANAGED_BY}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", **role},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}],
    }
    validating = f"{rel.fullname}-{ns}-validating"
    deployment = {"metadata": {"name": "probe"}, "spec": DEPLOYMENT_SPEC}

    def edit_config() -> None:
        cm = client.get(CONFIGMAPS, "probe-config", ns)
        cm["data"] = {"a": "2"}
        client.replace(CONFIGMAPS, cm)

    def fail_open() -> None:  # read by a list: the operator lists its configurations, updates them by name
        items, _ = client.list_all(VALIDATING)
        (cfg,) = [c for c in items if c["metadata"]["name"] == validating]
        cfg["webhooks"][0]["failurePolicy"] = "Ignore"
        client.replace(VALIDATING, cfg)

    redirect = {"spec": {"conversion": {"webhook": {"clientConfig": {"url": "https://127.0.0.1:1/convert"}}}}}
    spec = {"automountServiceAccountToken": False, "containers": [{"name": "c", "image": "probe"}]}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe-pod"}, "spec": spec}
    run(admin, "kubectl", "apply", "-n", ns, "-f", "-", stdin=json.dumps(pod))
    relabel = {"metadata": {"labels": {"nvidia.com/dynamo-topology.zone": "z1"}}}
    probes = {
        f"update ConfigMap {ns}/probe-config (not the operator's)": (
            edit_config,
            ("update", "configmaps/probe-config", ns),
        ),
        f"delete ServiceAccount {ns}/probe-sa (not the operator's)": (
            lambda: client.delete(SERVICEACCOUNTS, "probe-sa", ns),
            ("delete", "serviceaccounts/probe-sa", ns),
        ),
        "create an unlabelled Deployment in kube-system": (
            lambda: client.create(DEPLOYMENTS, deployment, "kube-system"),
            ("create", "deployments", "kube-system"),
        ),
        f"bind {role['kind']} {role['name']} to ServiceAccount {ns}/default": (
            lambda: client.create(ROLEBINDINGS, binding, ns),
            ("create", "rolebindings", ns),
        ),
        f"make {validating} fail open": (
            fail_open,
            ("update", f"validatingwebhookconfigurations/{validating}", None),
        ),
        "redirect the conversion webhook of dynamographdeployments.nvidia.com": (
            lambda: client.patch(CRDS, "dynamographdeployments.nvidia.com", redirect),
            ("patch", "customresourcedefinitions/dynamographdeployments.nvidia.com", None),
        ),
        f"label pod {ns}/probe-pod, whose graph asked for no topology labels": (
            lambda: client.patch(PODS, "probe-pod", relabel, ns),
            ("patch", "pods/probe-pod", ns),
        ),
    }
    return {what: _attempt(attempt, _can(admin, user, *ask)) for what, (attempt, ask) in probes.items()}


def etcd_secret_probes(rel: ChartRelease, env: dict[str, str]) -> dict[str, Refusal]:
    """With per-namespace etcd access (its create on Secrets granted): Secrets the <cluster>-etcd-access
    policy refuses the operator: of another name (where no MPI policy is rendered, this policy alone bounds
    the create), a token Secret of the etcd client's name, one with a key beyond the certificate's."""
    if not _etcd_access_rendered(rel):
        return {}
    ns, user = rel.namespace, rel.identity("operator").user
    api = load_api_client(env["KUBECONFIG"])
    api.user_agent = PROBE_AGENT
    client = ResourceClient(api)
    labels = {LABEL_MANAGED_BY: MANAGED_BY, ea.LABEL_ETCD_CLIENT: "true"}
    pem = base64.b64encode(b"not a certificate").decode()
    secrets = {
        "create Secret probe-opaque (neither the etcd client's nor an MPI SSH Secret)": {
            "metadata": {"name": "probe-opaque", "labels": labels},
            "type": "Opaque",
        },
        f"create a service-account-token Secret named {ETCD_CLIENT_SECRET}": {
            "metadata": {
                "name": ETCD_CLIENT_SECRET,
                "labels": labels,
                "annotations": {"kubernetes.io/service-account.name": rel.identity("operator").name},
            },
            "type": "kubernetes.io/service-account-token",
        },
        f"create {ETCD_CLIENT_SECRET} with a key beyond the certificate's": {
            "metadata": {"name": ETCD_CLIENT_SECRET, "labels": labels},
            "type": "kubernetes.io/tls",
            "data": {"tls.crt": pem, "tls.key": pem, "password": pem},
        },
    }
    granted = _can(rel.cluster.env, user, "create", "secrets", ns)
    return {
        what: _attempt(lambda body=body: client.create(SECRETS, body, ns), granted)
        for what, body in secrets.items()
    }


def _etcd_access_rendered(rel: ChartRelease) -> bool:
    return any(d["metadata"]["name"] == f"{rel.fullname}-etcd-admin" for d in rel.docs if d["kind"] == "Role")


@contextlib.contextmanager
def chart_etcd(rel: ChartRelease) -> Iterator[chartetcd.Served | None]:
    """With per-namespace etcd access rendered (the chart's default): the release's etcd on loopback, as its
    StatefulSet is rendered, with the server Secret `helm install` made (kwok runs no containers), for the
    operator to administer with the admin Secret of the same install. None otherwise."""
    if not _etcd_access_rendered(rel):
        yield None
        return
    (sts,) = [
        d for d in rel.docs if d["kind"] == "StatefulSet" and d["metadata"]["name"] == f"{rel.name}-etcd"
    ]
    client = ResourceClient(rel.cluster.api_client())
    server = client.get(SECRETS, f"{rel.name}-etcd-server-tls", rel.namespace)
    with chartetcd.serve(sts, server["data"], rel.workdir / "etcd") as served:
        yield served


def assert_refused_by_policy(results: dict[str, Refusal], policy_prefix: str) -> None:
    """Each probe answered 403; where RBAC grants it, the refusal is a ValidatingAdmissionPolicy's."""
    wrong = {w: r for w, r in results.items() if r.status != 403}
    assert not wrong, f"probes not refused: {wrong}"
    unbounded = {
        w: r.message[:300]
        for w, r in results.items()
        if r.granted and f"ValidatingAdmissionPolicy '{policy_prefix}" not in r.message
    }
    assert not unbounded, f"granted by RBAC and not refused by an admission policy: {unbounded}"


def hook_secret_probe(rel: ChartRelease, hook_env: dict[str, str]) -> Refusal:
    """With the install hook's grants in place (delete and create of its MPI Secret by name), its Secret
    deleted and re-created as a service-account-token Secret for the operator's account: the policy
    <cluster>-hook-secrets refuses the create. The original is put back."""
    admin = KubeCluster(rel.cluster.api_client())
    admin.api_client.user_agent = "rbac-test-setup/1"  # not the plugin's: the audit checks tell them apart
    hook = connect(hook_env["KUBECONFIG"])
    hook.api_client.user_agent = PROBE_AGENT
    path = f"/api/v1/namespaces/{rel.namespace}/secrets/mpi-run-ssh-secret"
    original = admin.get(path)
    assert original is not None
    hook.delete(path)
    token = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "mpi-run-ssh-secret",
            "namespace": rel.namespace,
            "annotations": {"kubernetes.io/service-account.name": rel.identity("operator").name},
        },
        "type": "kubernetes.io/service-account-token",
    }
    try:
        return _attempt(lambda: hook.apply(path, token, field_manager="probe"), granted=True)
    finally:
        keep = {k: original[k] for k in ("apiVersion", "kind", "type", "data") if k in original}
        md = original["metadata"]
        keep["metadata"] = {k: md[k] for k in ("name", "namespace", "labels", "annotations") if k in md}
        admin.create(f"/api/v1/namespaces/{rel.namespace}/secrets", keep)


def discovery_probes(env: dict[str, str], client: ResourceClient, ns: str) -> dict[str, Refusal]:
    """One graph's pod, with its own pod-bound token (what the Dynamo runtime runs with), publishing as
    another graph's pod: creating that pod's DynamoWorkerMetadata, and overwriting the one it published
    itself. The discovery Role grants both in the namespace; <cluster>-discovery-writes refuses them."""
    mine = lifecycle.graph_pod(client, ns, "vllm-planner-k8s-service-discovery")
    theirs = lifecycle.graph_pod(client, ns, "second-planner-k8s-service-discovery")
    as_theirs = lifecycle.pod_env(env, ns, "second-planner-k8s-service-discovery", theirs["metadata"]["name"])
    as_mine = lifecycle.pod_env(env, ns, "vllm-planner-k8s-service-discovery", mine["metadata"]["name"])
    run(
        as_theirs,
        "kubectl",
        "create",
        "--validate=false",
        "-n",
        ns,
        "-f",
        "-",
        stdin=json.dumps(lifecycle.worker_metadata(theirs)),
    )
    spoof = connect(as_mine["KUBECONFIG"])
    base = f"/apis/nvidia.com/v1alpha1/namespaces/{ns}/dynamoworkermetadatas"
    theirs_name = theirs["metadata"]["name"]
    published = connect(as_theirs["KUBECONFIG"]).get(f"{base}/{theirs_name}")
    forged = {**published, "spec": {"data": {"endpoints": {"forged": {}}}}}
    forged["metadata"] = {
        **published["metadata"],
        "ownerReferences": lifecycle.worker_metadata(mine)["metadata"]["ownerReferences"],
    }
    probes = {
        "publish another graph's pod's DynamoWorkerMetadata": lambda: spoof.create(
            base,
            {**lifecycle.worker_metadata(theirs, f"{theirs_name}-main"), "apiVersion": "nvidia.com/v1alpha1"},
        ),
        "overwrite another graph's pod's DynamoWorkerMetadata": lambda: spoof.replace(
            f"{base}/{theirs_name}", forged
        ),
    }
    try:
        return {what: _attempt(attempt, granted=True) for what, attempt in probes.items()}
    finally:
        run(as_theirs, "kubectl", "delete", "dynamoworkermetadatas", "-n", ns, theirs_name)


# -- the operator under its ServiceAccount -------------------------------------------------------------------


@dataclass
class _Kubeconfig:
    """What ``spawn_operator`` needs of a cluster: the kubeconfig the process authenticates with."""

    kubeconfig: str
    env: dict[str, str]


def operator_config(rel: ChartRelease, extra: dict, infrastructure: dict | None = None) -> Path:
    """The OperatorConfiguration the chart installed (its ConfigMap), plus ``extra`` (e.g. checkpointing,
    which the chart does not configure) and ``infrastructure`` (merged into its section: an address the
    local operator reaches)."""
    out = run(
        rel.cluster.env,
        "kubectl",
        "get",
        "configmap",
        "-n",
        rel.namespace,
        f"{rel.fullname}-config",
        "-o",
        "json",
    )
    doc = yaml.safe_load(json.loads(out.stdout)["data"]["config.yaml"])
    doc.update(extra)
    doc["infrastructure"] = {**(doc.get("infrastructure") or {}), **(infrastructure or {})}
    path = rel.workdir / f"{rel.name}-operator-config.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def pod_env(rel: ChartRelease) -> dict[str, str]:
    """The environment the chart's Deployment gives the operator container (downward API included)."""
    deployment = next(
        d
        for d in rel.docs
        if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-controller-manager")
    )
    pod = deployment["spec"]["template"]["spec"]
    fields = {
        "metadata.name": f"{deployment['metadata']['name']}-local-{uuid.uuid4().hex[:5]}",
        "metadata.namespace": rel.namespace,
        "spec.serviceAccountName": pod["serviceAccountName"],
        "status.podIP": "127.0.0.1",  # a local process: its "pod IP" is loopback
    }
    out = {}
    for var in pod["containers"][0].get("env") or []:
        ref = (var.get("valueFrom") or {}).get("fieldRef", {}).get("fieldPath")
        out[var["name"]] = fields[ref] if ref else str(var.get("value", ""))
    return out


def start_operator(rel: ChartRelease, config: Path, metrics_port: int) -> OperatorProcess:
    """``dynamo-operator run`` with the chart's configuration, as its ServiceAccount, leader election on
    (its identity names the chart's Deployment, as a pod's would), metrics served securely."""
    env = as_identity(rel, rel.identity("operator")) | pod_env(rel)
    log = rel.workdir / f"{rel.name}-operator-{uuid.uuid4().hex[:6]}.log"
    proc = spawn_operator(
        _Kubeconfig(env["KUBECONFIG"], env),
        log,
        "--config",
        str(config),
        "--webhook-host=127.0.0.1",
        f"--webhook-port={rel.webhook_port}",
        f"--webhook-url-base={rel.url_base}",
        "--metrics-secure",
        f"--metrics-service-bind-address=127.0.0.1:{metrics_port}",
        metrics=True,
        env=env,
    )
    proc.wait_ready(timeout=120)
    return proc


def scrape_metrics(rel: ChartRelease, metrics_port: int) -> None:
    """A Prometheus bound to the chart's metrics-reader ClusterRole scrapes the secure listener: the operator
    authenticates the token (TokenReview) and authorizes the path (SubjectAccessReview)."""
    env = rel.cluster.env
    run(env, "kubectl", "create", "serviceaccount", "-n", rel.namespace, "prometheus")
    role = f"{rel.fullname}-{rel.namespace}-metrics-reader"
    run(
        env,
        "kubectl",
        "create",
        "clusterrolebinding",
        f"{rel.name}-scrape",
        f"--clusterrole={role}",
        f"--serviceaccount={rel.namespace}:prometheus",
    )
    token = run(env, "kubectl", "create", "token", "-n", rel.namespace, "prometheus").stdout.strip()
    url = f"https://127.0.0.1:{metrics_port}/metrics"
    wait_for(lambda: http_get(url, token)[0] == 200, 30, lambda: http_get(url, token))
    run(env, "kubectl", "delete", "clusterrolebinding", f"{rel.name}-scrape")


# -- the proof -----------------------------------------------------------------------------------------------


def audit_calls(cluster: LocalCluster, who: Identity) -> list[rbac.Call]:
    """``who``'s requests, except the probes (made on purpose to be refused)."""
    return [c for c in rbac.calls(cluster.audit_events(), [who.user]) if c.user_agent != PROBE_AGENT]


def privilege_problems(rel: ChartRelease, who: Identity) -> list[str]:
    """What breaks least privilege for ``who``: refused calls, and granted cells no call used (unless
    ALLOWED_UNUSED says why a short test cannot use them)."""
    made = audit_calls(rel.cluster, who)
    if not made:
        return [f"{who.label}: the audit log has no request of {who.user}"]
    grants = rbac.grants_of(rel.docs, who.namespace, who.name)
    if not grants:
        return [f"{who.label}: the chart binds nothing to {who.user}"]
    problems = [f"{who.label} was refused: {c}" for c in rbac.refused(made)]
    problems += [
        f"{who.label} is granted, never used (remove it, or say in ALLOWED_UNUSED why): {g}"
        for g in rbac.unused(grants, made)
        if (who.label, g.group, g.resource, g.verb) not in ALLOWED_UNUSED and not _streamed(g, made)
    ]
    return problems


def _streamed(grant: rbac.Grant, made: list[rbac.Call]) -> bool:
    """A ``list`` the informers make only where the apiserver cannot stream their initial state: this one
    streamed it (a watch with ``sendInitialEvents``, runtime/informer.py) in the grant's scope."""
    if grant.verb != "list":
        return False
    as_watch = dataclasses.replace(grant, verb="watch")
    return any(c.allowed and "sendInitialEvents=true" in c.uri and rbac.covers(as_watch, c) for c in made)


def assert_least_privilege(
    rel: ChartRelease, labels=("operator", "install-hooks", "uninstall-hooks")
) -> None:
    """Every call allowed; every granted cell used (the audit log is kept in the test's directory)."""
    (rel.workdir / "audit.log").write_bytes(rel.cluster.audit_log.read_bytes())
    problems = [p for label in labels for p in privilege_problems(rel, rel.identity(label))]
    assert not problems, "\n".join(problems)


def assert_probes_denied(results: dict[str, int], who: Identity, known: frozenset[str] = frozenset()) -> None:
    """Each forbidden probe answered 403 (``known``: allowed on purpose, a documented residual risk)."""
    allowed = {what: code for what, code in results.items() if code != 403 and what not in known}
    assert not allowed, f"forbidden probes not denied to {who.label}: {allowed}"
    for what in known:
        assert results[what] == 200, f"{what}: expected the documented residual ({results[what]})"


# -- fixtures ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def audit_cluster() -> Iterator[LocalCluster]:
    """This module's control plane: every ServiceAccount request audited, owner-reference permission
    enforcement on, the Dynamo CRDs, the vendored Grove/Kai/LWS CRDs and the probes' targets."""
    directory = CLUSTER_ROOT / f"rbac-{os.getpid()}"
    cluster = LocalCluster(
        directory,
        profile="cluster",
        nodes=2,
        audit=True,
        audit_policy=rbac.AUDIT_POLICY,
        apiserver_args=("--enable-admission-plugins=OwnerReferencesPermissionEnforcement",),
    )
    cluster.start()
    try:
        install_crds(cluster)
        install_third_party_crds(cluster)
        install_integration_crds(cluster)
        install_probe_targets(cluster)
        yield cluster
    finally:
        cluster.stop()
        leaked = sweep(directory)
        assert not leaked, f"processes left running after the RBAC cluster stopped: {leaked}"


@pytest.fixture(scope="module")
def plugin_env(audit_cluster, tmp_path_factory) -> dict[str, str]:
    env = dict(audit_cluster.env)
    env["HELM_PLUGINS"] = str(tmp_path_factory.mktemp("helm-plugins"))
    run(env, "helm", "plugin", "install", str(REPO_ROOT / "plugin"), timeout=60)
    return env


# -- one release, start to end -------------------------------------------------------------------------------


def install_with_hooks(rel: ChartRelease) -> None:
    """The pre-install phase as Helm runs it, the hooks as their ServiceAccount; then `helm install` (whose
    own hook Jobs complete on kwok without running). A stale Opaque webhook Secret makes the certificate
    hook re-create it with the right type (its delete by name); an empty MPI Secret (a GitOps placeholder)
    gets its first key (its update)."""
    env = rel.cluster.env
    run(env, "kubectl", "create", "namespace", rel.namespace)
    run(
        env,
        "kubectl",
        "create",
        "secret",
        "generic",
        "-n",
        rel.namespace,
        "webhook-server-cert",
        "--from-literal=stale=1",
    )
    run(env, "kubectl", "create", "secret", "generic", "-n", rel.namespace, "mpi-run-ssh-secret")
    with hook_phase(rel, "install-hooks") as hook_env:
        outputs = "\n".join(run_hooks(hook_env, rel.hook_argv("install-hooks")))
        assert "webhook-server-cert: replaced" in outputs and "mpi-run-ssh-secret: updated" in outputs, (
            outputs
        )
        who = rel.identity("install-hooks")
        assert_probes_denied(probe(hook_env, rel.namespace, rel.identity("operator").name), who)
        refusal = hook_secret_probe(rel, hook_env)
        assert_refused_by_policy(
            {"re-create mpi-run-ssh-secret as a service-account-token Secret": refusal},
            f"{rel.fullname}-{rel.namespace}-hook-secrets",
        )
    assert_ca_published(rel)
    run(
        env,
        "helm",
        "install",
        rel.name,
        str(CHART),
        "--namespace",
        rel.namespace,
        "--skip-crds",
        "--wait",
        "--timeout",
        "300s",
        *rel.helm_args(),
    )


def uninstall_with_hooks(rel: ChartRelease) -> list[str]:
    """`helm uninstall` as Helm runs it: pre-delete Job, the release's objects, post-delete Job, the hooks
    as their ServiceAccount; returns what the hooks reported."""
    with hook_phase(rel, "uninstall-hooks") as hook_env:
        out = run_hooks(hook_env, rel.hook_argv("uninstall-hooks", "pre-delete"))
        run(
            rel.cluster.env,
            "helm",
            "uninstall",
            rel.name,
            "--namespace",
            rel.namespace,
            "--no-hooks",
            "--wait",
            "--timeout",
            "300s",
        )
        out += run_hooks(hook_env, rel.hook_argv("uninstall-hooks", "post-delete"))
        who = rel.identity("uninstall-hooks")
        assert_probes_denied(probe(hook_env, rel.namespace, rel.identity("operator").name), who)
    return out


def assert_ca_published(rel: ChartRelease) -> None:
    """The webhook CA bundle alone in <secret>-ca, equal to the Secret's ca.crt, owned by the Secret."""
    client = ResourceClient(rel.cluster.api_client())
    secret = client.get(SECRETS, WEBHOOK_SECRET, rel.namespace)

    def published() -> dict | None:
        return lifecycle.get_or_none(client, CONFIGMAPS, ca_configmap_name(WEBHOOK_SECRET), rel.namespace)

    want = base64.b64decode(secret["data"][CA_KEY]).decode()
    wait_for(lambda: (published() or {}).get("data") == {CA_KEY: want}, 60, published)
    (owner,) = published()["metadata"]["ownerReferences"]
    assert owner["uid"] == secret["metadata"]["uid"], owner


def operator_lifetime(rel: ChartRelease, ns: str, *, known: frozenset[str] = frozenset()) -> None:
    """The operator as its ServiceAccount through the whole lifecycle, its metrics scraped, the probes
    denied (those its grants allow, by the admission policies); then SIGTERM (it releases its Leases). The
    CA ConfigMap deleted before it starts is published again by it."""
    with chart_etcd(rel) as etcd:
        extra = {"checkpoint": {"enabled": True}, **lifecycle.SERVICE_MESH}
        infrastructure = {"etcdAddress": etcd.address} if etcd else {}
        _operator_lifetime(rel, ns, operator_config(rel, extra, infrastructure), etcd, known)


def _operator_lifetime(
    rel: ChartRelease, ns: str, config: Path, etcd: chartetcd.Served | None, known: frozenset[str]
) -> None:
    metrics = free_port()
    run(
        rel.cluster.env,
        "kubectl",
        "delete",
        "configmap",
        "-n",
        rel.namespace,
        ca_configmap_name(WEBHOOK_SECRET),
    )
    proc = start_operator(rel, config, metrics)
    try:
        cluster_wide = not any("namespaceRestriction.enabled=true" in s for s in rel.sets)
        client = ResourceClient(rel.cluster.api_client())
        lifecycle.exercise(
            rel.cluster.env, client, ns, cluster_wide=cluster_wide, mpi_secret_namespace=rel.namespace
        )
        if etcd is not None:
            lifecycle.graphs_on_etcd(rel.cluster.env, client, ns)
        assert_ca_published(rel)
        scrape_metrics(rel, metrics)
        env = as_identity(rel, rel.identity("operator"))
        assert_probes_denied(
            probe(env, rel.namespace, rel.identity("operator").name), rel.identity("operator"), known
        )
        probes = {**operator_probes(rel, env), **etcd_secret_probes(rel, env)}
        assert_refused_by_policy(probes, f"{rel.fullname}-{rel.namespace}-")
        assert_refused_by_policy(
            discovery_probes(rel.cluster.env, client, ns), f"{rel.fullname}-{rel.namespace}-discovery-writes"
        )
    except BaseException:
        print(proc.log_tail(6000))
        raise
    finally:
        assert proc.stop() == 0, proc.log_tail()


def _hook_rbac_left(env: dict[str, str], release: str) -> list[str]:
    """The hook ServiceAccounts and RBAC of a release still in the cluster."""
    found = []
    for kinds in ("serviceaccounts,roles,rolebindings", "clusterroles,clusterrolebindings"):
        out = run(
            env, "kubectl", "get", kinds, "-A", "-l", f"app.kubernetes.io/instance={release}", "-o", "json"
        )
        for item in json.loads(out.stdout)["items"]:
            component = (item["metadata"].get("labels") or {}).get("app.kubernetes.io/component", "")
            if component.endswith("-hooks"):
                found.append(
                    f"{item['kind']} {item['metadata'].get('namespace', '')}/{item['metadata']['name']}"
                )
    return found


def test_failed_hooks_leave_no_rbac_behind(audit_cluster, tmp_path) -> None:
    """A hook Job that fails (here: unschedulable, past its deadline) takes its ServiceAccount and RBAC with
    it, on upgrade and on uninstall; the failed Job itself stays for `kubectl logs`."""
    env = audit_cluster.env
    rel = ChartRelease(audit_cluster, tmp_path, "rbfail", [])
    run(
        env,
        "helm",
        "install",
        rel.name,
        str(CHART),
        "-n",
        rel.namespace,
        "--create-namespace",
        "--skip-crds",
        "--wait",
        "--timeout",
        "300s",
        *rel.helm_args(),
    )
    assert _hook_rbac_left(env, rel.name) == []
    failing = [
        "--set-string",
        "dynamo-operator.controllerManager.nodeSelector.dynamo-test/nowhere=true",
        "--set",
        "dynamo-operator.installHooks.activeDeadlineSeconds=2",
        "--set",
        "dynamo-operator.installHooks.backoffLimit=0",
    ]
    up = run(
        env,
        "helm",
        "upgrade",
        rel.name,
        str(CHART),
        "-n",
        rel.namespace,
        "--wait",
        "--timeout",
        "120s",
        *rel.helm_args(),
        *failing,
        check=False,
    )
    assert up.returncode != 0 and "pre-upgrade" in up.stderr, up.stderr
    assert _hook_rbac_left(env, rel.name) == []
    jobs = json.loads(run(env, "kubectl", "get", "jobs", "-n", rel.namespace, "-o", "json").stdout)["items"]
    assert any(j["metadata"]["name"].endswith("-install-hooks") for j in jobs), "the failed Job was deleted"
    down = run(
        env, "helm", "uninstall", rel.name, "-n", rel.namespace, "--wait", "--timeout", "120s", check=False
    )
    assert down.returncode != 0 and "uninstall-webhooks-first failed" in down.stderr, (
        down.stdout + down.stderr
    )
    assert _hook_rbac_left(env, rel.name) == []
    run(env, "helm", "uninstall", rel.name, "-n", rel.namespace, "--no-hooks", "--wait", "--timeout", "120s")
    run(env, "kubectl", "delete", "namespace", rel.namespace, "--wait=false")


def test_platform_runs_under_enforced_restricted_pod_security(audit_cluster, tmp_path) -> None:
    """The chart's own pods (operator, hook Jobs, NATS, etcd, Grove, Kai) are admitted in a namespace that
    enforces the restricted Pod Security Standard, and none draws a warning."""
    env = audit_cluster.env
    rel = ChartRelease(audit_cluster, tmp_path, "rbpsa", ["grove.enabled=true", "kai-scheduler.enabled=true"])
    run(env, "kubectl", "create", "namespace", rel.namespace)
    run(
        env,
        "kubectl",
        "label",
        "namespace",
        rel.namespace,
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/warn=restricted",
    )
    try:
        done = run(
            env,
            "helm",
            "install",
            rel.name,
            str(CHART),
            "-n",
            rel.namespace,
            "--skip-crds",
            "--wait",
            "--timeout",
            "300s",
            *rel.helm_args(),
            "--set",
            "dynamo-operator.controllerManager.replicas=1",
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "PodSecurity" not in done.stderr, done.stderr
        pods = json.loads(run(env, "kubectl", "get", "pods", "-n", rel.namespace, "-o", "json").stdout)[
            "items"
        ]
        names = " ".join(p["metadata"]["name"] for p in pods)
        for part in ("dynamo-operator-controller-manager", "grove-operator", "kai-operator", "etcd", "nats"):
            assert part in names, f"no {part} pod admitted: {names}"
    finally:
        run(
            env,
            "helm",
            "uninstall",
            rel.name,
            "-n",
            rel.namespace,
            "--wait",
            "--timeout",
            "300s",
            check=False,
        )
        run(env, "kubectl", "delete", "namespace", rel.namespace, "--wait=false", check=False)


def test_namespace_restricted_runs_under_exactly_the_charts_rbac(audit_cluster, tmp_path) -> None:
    """Restricted mode (charts/platform/ci/namespace-restricted-values.yaml): the hooks and the operator
    make only allowed calls, use every grant, and the probes are denied."""
    rel = ChartRelease(audit_cluster, tmp_path, "rbns", ["dynamo-operator.namespaceRestriction.enabled=true"])
    conversion = serve_crds(audit_cluster)  # the restricted operator leaves conversion to someone else
    next(conversion)
    try:
        install_with_hooks(rel)
        operator_lifetime(rel, rel.namespace)
        # killed (a lost node): its namespace-scope marker and leader Lease stay for the uninstall hook
        proc = start_operator(rel, operator_config(rel, {}), free_port())
        proc.reap()
        out = "\n".join(uninstall_with_hooks(rel))
        assert f"Lease {rel.namespace}/dynamo-operator-namespace-scope" in out, out
        assert f"released finalizer {FINALIZER} of dynamocheckpoints" in out, out
    except BaseException:
        # a release left behind would fail the next test's conflict check (a restricted operator's webhook):
        # the failure stays this test's own
        run(rel.cluster.env, "helm", "uninstall", rel.name, "-n", rel.namespace, "--no-hooks", check=False)
        raise
    finally:
        with contextlib.suppress(StopIteration):
            next(conversion)
        # its graphs outlive the stopped operator and hold 7 of the kwok nodes' 16 GPUs (the cluster-wide
        # test waits for them to be free)
        with contextlib.suppress(ApiException):
            ResourceClient(rel.cluster.api_client()).delete(NAMESPACES, rel.namespace)
    assert_least_privilege(rel)


def _plugin_writes(cluster: LocalCluster) -> list[dict]:
    """Writes the plugin made as the user (its User-Agent is dynamo-hooks/<version>)."""
    return [
        e
        for e in cluster.audit_events()
        if e.get("stage") == "ResponseComplete"
        and str(e.get("userAgent", "")).startswith("dynamo-hooks/")
        and not (e.get("user") or {}).get("username", "").startswith("system:serviceaccount:")
        and e.get("verb") in ("create", "update", "patch", "delete", "deletecollection")
    ]


def _dynamo_target(event: dict, rel: ChartRelease) -> bool:
    """Whether a write hit a Dynamo object: a Dynamo kind, a Dynamo CRD, or this release's own objects."""
    ref = event.get("objectRef") or {}
    plurals = {k.plural for k in KINDS.values()}
    if ref.get("apiGroup") == "nvidia.com":
        return ref.get("resource") in plurals
    if ref.get("resource") == "customresourcedefinitions":
        return ref.get("name") in {k.crd_name for k in KINDS.values()}
    if ref.get("resource", "").endswith("webhookconfigurations"):
        return ref.get("name", "").startswith(f"{rel.fullname}-{rel.namespace}-")
    return False


def test_cluster_wide_runs_under_exactly_the_charts_rbac(audit_cluster, plugin_env, tmp_path) -> None:
    """Cluster-wide mode (charts/platform/ci/cluster-wide-values.yaml, Grove and Kai included): the hooks
    and the operator make only allowed calls and use every grant; the probes are denied (the operator may
    list Secrets in every namespace: the pull-secret index, a documented residual risk). Then `helm dynamo
    uninstall --crds` removes Dynamo's CRDs and touches nothing else of nvidia.com."""
    client = ResourceClient(audit_cluster.api_client())
    ci = yaml.safe_load((CHART / "ci" / "cluster-wide-values.yaml").read_text())
    sets = ["grove.enabled=true", "kai-scheduler.enabled=true"]
    assert ci["grove"]["enabled"] and ci["kai-scheduler"]["enabled"]
    rel = ChartRelease(audit_cluster, tmp_path, "rbcw", sets)
    work = "rbac-work"
    install_with_hooks(rel)
    client.create(NAMESPACES, {"metadata": {"name": work}})
    # the lifecycle's checkpoint step needs 4 GPUs at once (the held worker, its next revision, the capture
    # and cleanup Jobs): an earlier test's graphs, still being deleted, left 2 free on a busy CI run
    wait_for(
        lambda: not lifecycle.gpus_held(client), 120, lambda: f"GPUs held: {lifecycle.gpus_held(client)}"
    )
    operator_lifetime(rel, work, known=frozenset({"list Secrets in kube-system"}))
    out = "\n".join(uninstall_with_hooks(rel))
    assert "deleted Lease kube-system/dynamo.nvidia.com (unheld)" in out, out
    assert_least_privilege(rel)

    foreign = client.get(FOREIGN, "cluster-policy")
    lora = client.get(DYNAMO_MODELS, "lora", work)
    lora["metadata"]["finalizers"] = [FINALIZER]  # left behind again, for the plugin to release
    client.replace(DYNAMO_MODELS, lora)
    done = run(
        plugin_env, "helm", "dynamo", "uninstall", rel.name, "-n", rel.namespace, "--crds", check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"released finalizer {FINALIZER} of dynamomodels {work}/lora" in done.stdout, done.stdout
    for info in KINDS.values():
        assert (
            lifecycle.get_or_none(
                client,
                CRDS,
                info.crd_name,
            )
            is None
        )
    after = client.get(FOREIGN, "cluster-policy")
    assert after["metadata"]["resourceVersion"] == foreign["metadata"]["resourceVersion"]
    assert after["metadata"]["finalizers"] == [FINALIZER] and "deletionTimestamp" not in after["metadata"]
    assert lifecycle.get_or_none(client, CRDS, FOREIGN_CRD)
    strays = [e["requestURI"] for e in _plugin_writes(audit_cluster) if not _dynamo_target(e, rel)]
    assert not strays, f"the plugin wrote to objects that are not Dynamo's: {strays}"
