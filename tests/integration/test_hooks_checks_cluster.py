"""Preflight checks, operator discovery, the secret hooks and the hook / plugin CLIs against a real
apiserver (the "api" profile: etcd + kube-apiserver with RBAC; nothing runs, so Nodes, StorageClasses,
CRDs and operator Deployments are plain API objects the tests create).

Denials come from RBAC itself: a ServiceAccount with a narrow Role, called with a token from the
TokenRequest API.  An unreachable API is a client pointed at a closed port.  Cluster-scoped objects get
unique names and are deleted afterwards; assertions on discovery look only at this module's namespaces.

What ``test_hooks_cluster.py`` / ``test_plugin_cluster.py`` already check on the "cluster" profile (the
conflict matrix through the hook's argv and through ``helm dynamo install``, a namespace-scope Lease
blocking until it expires, both secret hooks twice without a change, an existing SSH key kept, preflight
on a healthy cluster and with cert-manager mode missing its CRDs) is not repeated here.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import uuid
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from dynamo_hooks import cli as hooks_cli
from dynamo_hooks.chart import ChartInfo, CrdInfo
from dynamo_hooks.checks import REGISTRY, Severity, Status, run_checks
from dynamo_hooks.cluster import ClusterError, KubeCluster, collection_path, object_path
from dynamo_hooks.conflicts import NAMESPACE_SCOPE_LEASE, Source, discover, evaluate
from dynamo_hooks.preflight import PreflightInput, build_context
from dynamo_hooks.report import exit_code, to_text
from dynamo_hooks.secrets import Action, HookError, ensure_mpi_ssh_secret, ensure_webhook_certs
from dynamo_hooks.settings import InstallSettings, OperatorMode
from dynamo_operator.webhooks import certs as webhook_certs
from dynamo_operator.webhooks import service_hosts
from dynamo_plugin import cli as plugin_cli
from kubernetes import client as k8s
from support.rbac import service_account_user, wait_allowed

pytestmark = pytest.mark.api

CW = OperatorMode.CLUSTER_WIDE
NR = OperatorMode.NAMESPACE_RESTRICTED
DEPLOYMENTS = "/apis/apps/v1/namespaces/{ns}/deployments"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
CRDS = collection_path("apiextensions.k8s.io/v1", "customresourcedefinitions")
NODES = collection_path("v1", "nodes")
STORAGECLASSES = collection_path("storage.k8s.io/v1", "storageclasses")
CHART = ChartInfo(path=None, version="0.1.0", app_version="0.1.0")


# -- fixtures ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kube(api_cluster) -> KubeCluster:
    return KubeCluster(api_cluster.api_client())


@pytest.fixture(scope="module")
def cleanup(kube):
    """Paths of cluster-scoped objects to delete when the module ends."""
    paths: list[str] = []
    yield paths
    for path in reversed(paths):
        with contextlib.suppress(ClusterError):
            kube.delete(path)


def uid() -> str:
    return uuid.uuid4().hex[:8]


def make_namespace(kube, name: str) -> str:
    kube.create(collection_path("v1", "namespaces"), {"metadata": {"name": name}})
    return name


def drop_namespace(kube, name: str) -> None:
    """Delete the operator markers first: without a namespace controller nothing else would, and other
    tests' discovery sees every namespace."""
    for collection in (DEPLOYMENTS.format(ns=name), LEASES.format(ns=name)):
        with contextlib.suppress(ClusterError):
            for obj in kube.list(collection):
                kube.delete(f"{collection}/{obj['metadata']['name']}")
    with contextlib.suppress(ClusterError):
        kube.delete(object_path("v1", "namespaces", name))


@pytest.fixture
def ns(kube) -> str:
    name = make_namespace(kube, f"hk-{uid()}")
    yield name
    drop_namespace(kube, name)


def create(kube, cleanup, collection: str, body: dict) -> dict:
    out = kube.create(collection, body)
    cleanup.append(f"{collection}/{body['metadata']['name']}")
    return out


def operator_deployment(
    namespace: str, release: str, *, restricted: bool = False, annotate_mode: bool = True
) -> dict:
    """A Deployment shaped like the chart's operator Deployment (labels, Helm annotations, mode marker)."""
    labels = {
        "app.kubernetes.io/name": "dynamo-operator",
        "app.kubernetes.io/instance": release,
        "app.kubernetes.io/version": "0.1.0",
    }
    annotations = {"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace}
    args = ["--health-probe-bind-address=:8081"]
    if annotate_mode:
        annotations["nvidia.com/dynamo-operator-mode"] = (
            "namespace-restricted" if restricted else "cluster-wide"
        )
        if restricted:
            annotations["nvidia.com/dynamo-operator-target-namespace"] = namespace
    elif restricted:
        args.append(f"--restrictedNamespace={namespace}")
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": f"{release}-dynamo-operator-controller-manager",
            "labels": labels,
            "annotations": annotations,
        },
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app.kubernetes.io/instance": release}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "manager", "image": "dynamo-operator:0.1.0", "args": args}]},
            },
        },
    }


def lease(name: str, holder: str, *, renewed_seconds_ago: float = 1, duration: int = 30) -> dict:
    renew = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=renewed_seconds_ago)
    return {
        "metadata": {"name": name},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": duration,
            "renewTime": renew.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        },
    }


def crd(group: str, plural: str, versions: list[str], storage: str, stamp: str | None = None) -> dict:
    kind = plural.rstrip("s").capitalize()
    meta: dict = {"name": f"{plural}.{group}"}
    if stamp:
        meta["annotations"] = {"nvidia.com/dynamo-platform-version": stamp}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": meta,
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": v == storage,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
                for v in versions
            ],
        },
    }


def limited_cluster(api_cluster, kube, ns: str, rules: list[dict]) -> KubeCluster:
    """A KubeCluster acting as ServiceAccount ``ns/limited`` with ``rules`` in ``ns`` (nothing else)."""
    kube.create(collection_path("v1", "serviceaccounts", ns), {"metadata": {"name": "limited"}})
    rbac = "rbac.authorization.k8s.io/v1"
    kube.create(collection_path(rbac, "roles", ns), {"metadata": {"name": "limited"}, "rules": rules})
    kube.create(
        collection_path(rbac, "rolebindings", ns),
        {
            "metadata": {"name": "limited"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "limited"},
            "subjects": [{"kind": "ServiceAccount", "name": "limited", "namespace": ns}],
        },
    )
    review = kube.create(
        f"/api/v1/namespaces/{ns}/serviceaccounts/limited/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 600},
        },
    )
    base = api_cluster.api_client().configuration
    cfg = k8s.Configuration()
    cfg.host = base.host
    cfg.ssl_ca_cert = base.ssl_ca_cert
    cfg.verify_ssl = base.verify_ssl
    cfg.api_key = {"authorization": review["status"]["token"]}
    cfg.api_key_prefix = {"authorization": "Bearer"}
    return KubeCluster(k8s.ApiClient(cfg))


def unreachable_cluster() -> KubeCluster:
    cfg = k8s.Configuration()
    cfg.host = "https://127.0.0.1:1"
    cfg.verify_ssl = False
    return KubeCluster(k8s.ApiClient(cfg))


def run(kube, ns: str, *sets: str, chart: ChartInfo = CHART, only=None, **kw):
    ctx = build_context(
        PreflightInput("dynamo-platform", ns, set_values=list(sets), **kw), chart, cluster=kube
    )
    return ctx, run_checks(ctx, only=only)


def by_id(results, check_id):
    return [r for r in results if r.id == check_id]


# -- preflight checks ----------------------------------------------------------------------------------------


def test_healthy_cluster_passes_every_check(kube, ns):
    sc = {
        "metadata": {
            "name": f"std-{ns}",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "example.com/none",
    }
    node = {"metadata": {"name": f"gpu-{ns}"}, "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "8"}}}
    kube.create(STORAGECLASSES, sc)
    kube.create(NODES, node)
    try:
        ctx, results = run(kube, ns)
        assert exit_code(results) == 0, to_text(ctx, results)
        assert {r.id for r in results} == set(REGISTRY)
        reachable = by_id(results, "cluster.api-reachable")[0]
        assert kube.server_url() in reachable.found and kube.server_version()["gitVersion"] in reachable.found
        assert by_id(results, "nodes.gpu")[0].status is Status.PASS
    finally:
        kube.delete(f"{NODES}/gpu-{ns}")
        kube.delete(f"{STORAGECLASSES}/std-{ns}")


def test_unreachable_api_skips_cluster_checks():
    _, results = run(unreachable_cluster(), "dynamo-system")
    assert by_id(results, "cluster.api-reachable")[0].blocking
    assert "cannot reach the Kubernetes API" in by_id(results, "cluster.api-reachable")[0].found
    assert by_id(results, "operators.conflicts")[0].status is Status.SKIP
    assert exit_code(results) == 1


def test_kubernetes_version_out_of_range(kube, ns):
    chart = ChartInfo(path=None, version="0.1.0", kube_version=">=1.99.0-0")
    _, results = run(kube, ns, chart=chart, only={"cluster.kubernetes-version"})
    (r,) = results
    assert r.blocking and ">=1.99.0-0" in r.found and "default constraint" in r.found
    assert kube.server_version()["gitVersion"] in r.found


def test_conflict_blocks_with_reason_and_fix(kube, ns):
    other = make_namespace(kube, f"{ns}-other")
    try:
        kube.create(DEPLOYMENTS.format(ns=other), operator_deployment(other, "prod"))
        _, results = run(kube, ns, only={"operators.conflicts"})
        r = next(r for r in results if r.subject.startswith(f"Deployment {other}/"))
        assert (
            r.blocking
            and "Multiple cluster managers" in r.found
            and f"helm uninstall prod -n {other}" in r.fix
        )
        assert r.details["scenario"] == "cluster-wide/cluster-wide"
        _, restricted = run(
            kube, ns, "dynamo-operator.namespaceRestriction.enabled=true", only={"operators.conflicts"}
        )
        r = next(r for r in restricted if r.subject.startswith(f"Deployment {other}/"))
        assert "Cluster-wide already manages target namespace" in r.found
    finally:
        drop_namespace(kube, other)


def test_rbac_denials_are_listed(api_cluster, kube, ns):
    # may read its namespace, nothing else: no cluster roles, no CRDs (the chart's is not installed)
    limited = limited_cluster(api_cluster, kube, ns, [])
    group = f"rbac-{ns}.example.com"
    chart = ChartInfo(
        path=None,
        version="0.1.0",
        crds=(CrdInfo(f"widgets.{group}", ("v1",), "v1", "0.1.0"),),
    )
    # reading the namespace and the CRD is the admin's business here: give the limited caller just that
    rbac = "rbac.authorization.k8s.io/v1"
    name = f"read-{ns}"
    kube.create(
        collection_path(rbac, "clusterroles"),
        {
            "metadata": {"name": name},
            "rules": [
                {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
                {
                    "apiGroups": ["apiextensions.k8s.io"],
                    "resources": ["customresourcedefinitions"],
                    "verbs": ["get"],
                },
            ],
        },
    )
    kube.create(
        collection_path(rbac, "clusterrolebindings"),
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": "limited", "namespace": ns}],
        },
    )
    try:
        user = service_account_user(ns, "limited")
        wait_allowed(api_cluster.env, user, "get", f"namespaces/{ns}")
        wait_allowed(api_cluster.env, user, "get", "customresourcedefinitions.apiextensions.k8s.io")
        _, results = run(limited, ns, chart=chart, only={"rbac.install-permissions"})
        (r,) = results
        assert r.blocking and "clusterroles.rbac.authorization.k8s.io (cluster-scoped)" in r.found
        assert "customresourcedefinitions" in r.found
        _, admin = run(kube, ns, chart=chart, only={"rbac.install-permissions"})
        assert admin[0].status is Status.PASS
    finally:
        kube.delete(object_path(rbac, "clusterrolebindings", name))
        kube.delete(object_path(rbac, "clusterroles", name))


def test_missing_namespace_needs_create_namespace(kube):
    missing = f"nowhere-{uid()}"
    _, results = run(kube, missing, only={"rbac.install-permissions"})
    assert any(r.blocking and f"namespace {missing} does not exist" in r.found for r in results)
    _, ok = run(kube, missing, create_namespace=True, only={"rbac.install-permissions"})
    assert not any("does not exist" in r.found for r in ok)


@pytest.mark.parametrize(
    ("versions", "storage", "stamp", "severity", "word"),
    [
        (["v1alpha1"], "v1alpha1", None, Severity.WARNING, "older"),
        (["v1alpha1", "v1beta1", "v1"], "v1", None, Severity.ERROR, "newer"),
        (["v1alpha1", "v1beta1"], "v1alpha1", "0.3.0", Severity.ERROR, "newer"),
    ],
)
def test_crd_skew(kube, cleanup, ns, versions, storage, stamp, severity, word):
    group = f"skew-{ns}.example.com"
    create(kube, cleanup, CRDS, crd(group, "widgets", versions, storage, stamp))
    chart = ChartInfo(
        path=None,
        version="0.1.0",
        app_version="0.1.0",
        crds=(CrdInfo(f"widgets.{group}", ("v1alpha1", "v1beta1"), "v1alpha1", "0.1.0"),),
    )
    _, results = run(kube, ns, chart=chart, only={"crds.version-skew"})
    failing = [r for r in results if r.status is Status.FAIL]
    assert len(failing) == 1 and failing[0].severity is severity and word in failing[0].found


def test_cert_manager_mode_passes_once_its_api_is_served(kube, cleanup, ns):
    if kube.get(f"{CRDS}/certificates.cert-manager.io") is None:
        for plural in ("certificates", "issuers"):
            create(kube, cleanup, CRDS, crd("cert-manager.io", plural, ["v1"], "v1"))
    _, ok = run(kube, ns, "dynamo-operator.webhook.certManager.enabled=true", only={"webhook.cert-manager"})
    assert ok[0].status is Status.PASS


def test_storage_needs_a_default_class_or_a_named_one(kube, cleanup, ns):
    named = f"named-{ns}"
    create(kube, cleanup, STORAGECLASSES, {"metadata": {"name": named}, "provisioner": "example.com/none"})
    _, missing = run(kube, ns, f"etcd.persistence.storageClass=missing-{ns}", only={"storage.default-class"})
    assert missing[0].blocking and f"'missing-{ns}'" in missing[0].found
    _, found = run(kube, ns, f"etcd.persistence.storageClass={named}", only={"storage.default-class"})
    assert found[0].status is Status.PASS
    _, off = run(kube, ns, "etcd.persistence.enabled=false", only={"storage.default-class"})
    assert off[0].status is Status.SKIP
    defaults = [
        c
        for c in kube.list(STORAGECLASSES)
        if (c["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class")
        == "true"
    ]
    if not defaults:  # the shared apiserver has no default class right now
        _, none = run(kube, ns, only={"storage.default-class"})
        assert (
            none[0].blocking and "etcd" in none[0].found and "etcd.persistence.enabled=false" in none[0].fix
        )


def test_no_gpus_is_a_warning_only(kube, cleanup, ns):
    if any((n.get("status") or {}).get("allocatable", {}).get("nvidia.com/gpu") for n in kube.list(NODES)):
        pytest.skip("a GPU node from another test is registered on the shared apiserver")
    create(kube, cleanup, NODES, {"metadata": {"name": f"cpu-{ns}"}, "status": {"allocatable": {"cpu": "8"}}})
    _, results = run(kube, ns, only={"nodes.gpu"})
    (r,) = results
    assert r.status is Status.FAIL and r.severity is Severity.WARNING and exit_code(results) == 0


def test_orchestrator_apis(kube, cleanup, ns):
    _, results = run(kube, ns, "dynamo-operator.orchestrators.lws.enabled=true", only={"apis.orchestrators"})
    if kube.get(f"{CRDS}/leaderworkersets.leaderworkerset.x-k8s.io") is None:
        lws = next(r for r in results if r.subject == "lws")
        assert lws.blocking and "leaderworkersets.leaderworkerset.x-k8s.io" in lws.found
    if kube.get(f"{CRDS}/podcliquesets.grove.io") is None:
        create(kube, cleanup, CRDS, crd("grove.io", "podcliquesets", ["v1alpha1"], "v1alpha1"))
    _, results = run(kube, ns, "grove.enabled=true", only={"apis.orchestrators"})
    grove = next(r for r in results if r.subject == "grove")
    assert (
        grove.status is Status.FAIL
        and grove.severity is Severity.WARNING
        and "grove.enabled=false" in grove.fix
    )


# -- operator discovery --------------------------------------------------------------------------------------


def _mine(found, *namespaces):
    return [op for op in found.operators if op.namespace in namespaces or op.target_namespace in namespaces]


def test_discover_by_deployment_labels_and_modes(kube, ns):
    team = make_namespace(kube, f"{ns}-team")
    try:
        kube.create(DEPLOYMENTS.format(ns=ns), operator_deployment(ns, "prod"))
        kube.create(
            DEPLOYMENTS.format(ns=team),
            operator_deployment(team, "test", restricted=True, annotate_mode=False),
        )
        unrelated = operator_deployment(ns, "x")
        unrelated["metadata"]["labels"]["app.kubernetes.io/name"] = "something-else"
        kube.create(DEPLOYMENTS.format(ns=ns), unrelated)
        found = discover(kube, leader_election_id=f"id-{ns}", leader_election_namespace=ns)
        by_ns = {op.namespace: op for op in _mine(found, ns, team)}
        assert set(by_ns) == {ns, team}
        assert by_ns[ns].mode is CW and by_ns[ns].release_name == "prod"
        assert by_ns[team].mode is NR and by_ns[team].target_namespace == team
        assert by_ns[team].version == "0.1.0"
    finally:
        drop_namespace(kube, team)


def test_discover_namespace_scope_leases_live_and_expired(kube, ns):
    old = make_namespace(kube, f"{ns}-old")
    try:
        kube.create(LEASES.format(ns=ns), lease(NAMESPACE_SCOPE_LEASE, "op-pod-abc-0.2.0"))
        kube.create(
            LEASES.format(ns=old), lease(NAMESPACE_SCOPE_LEASE, "op-pod-x-0.1.0", renewed_seconds_ago=300)
        )
        found = discover(kube, leader_election_id=f"id-{ns}", leader_election_namespace=ns)
        mine = _mine(found, ns, old)
        assert [(op.mode, op.target_namespace, op.source) for op in mine] == [
            (NR, ns, Source.NAMESPACE_SCOPE_LEASE)
        ]
        assert mine[0].version == "0.2.0"
        assert any(old in m for m in found.stale_markers)
    finally:
        drop_namespace(kube, old)


def test_lease_marks_a_default_mode_deployment_as_restricted(kube, ns):
    kube.create(DEPLOYMENTS.format(ns=ns), operator_deployment(ns, "t", annotate_mode=False))
    kube.create(LEASES.format(ns=ns), lease(NAMESPACE_SCOPE_LEASE, "t-pod-0.1.0"))
    found = discover(kube, leader_election_id=f"id-{ns}", leader_election_namespace=ns)
    mine = _mine(found, ns)
    assert len(mine) == 1 and mine[0].mode is NR and mine[0].release_name == "t"


def test_leader_lease_reveals_an_unlabelled_cluster_wide_operator(kube, ns):
    kube.create(LEASES.format(ns=ns), lease(f"id-{ns}", "mystery-pod_1234"))
    found = discover(kube, leader_election_id=f"id-{ns}", leader_election_namespace=ns)
    leader = [op for op in found.operators if op.source is Source.LEADER_LEASE]
    assert [(op.mode, op.source) for op in leader] == [(CW, Source.LEADER_LEASE)]
    settings = InstallSettings.from_values({}, release_name="new", release_namespace=f"{ns}-new")
    assert not evaluate(leader, settings)[0].allowed


def test_leader_lease_held_by_a_known_deployment_is_not_counted_twice(kube, ns):
    kube.create(DEPLOYMENTS.format(ns=ns), operator_deployment(ns, "prod"))
    holder = "prod-dynamo-operator-controller-manager-5d9f-abcde_1234"
    kube.create(LEASES.format(ns=ns), lease(f"id-{ns}", holder))
    found = discover(kube, leader_election_id=f"id-{ns}", leader_election_namespace=ns)
    assert not [op for op in found.operators if op.source is Source.LEADER_LEASE]
    (mine,) = _mine(found, ns)
    assert mine.source is Source.DEPLOYMENT


def test_expired_leader_lease_is_ignored(kube, ns):
    kube.create(LEASES.format(ns=ns), lease(f"id-{ns}", "gone_1", renewed_seconds_ago=120, duration=15))
    found = discover(kube, leader_election_id=f"id-{ns}", leader_election_namespace=ns)
    assert not [op for op in found.operators if op.source is Source.LEADER_LEASE]


def test_forbidden_lists_become_limitations_not_crashes(api_cluster, kube, ns):
    limited = limited_cluster(api_cluster, kube, ns, [])
    found = discover(limited, leader_election_id=f"id-{ns}", leader_election_namespace=ns)
    assert found.operators == [] and len(found.limitations) == 4


# -- secret hooks --------------------------------------------------------------------------------------------


def secret_data(kube, ns: str, name: str) -> dict[str, bytes]:
    obj = kube.get(object_path("v1", "secrets", name, ns))
    return {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}


def test_mpi_secret_holds_a_working_key_pair(kube, ns):
    assert ensure_mpi_ssh_secret(kube, ns, "mpi").action is Action.CREATED
    keys = secret_data(kube, ns, "mpi")
    assert keys["private.key"].startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----")
    assert (
        keys["private.key.pub"].startswith(b"ssh-rsa ") and keys["authorized_keys"] == keys["private.key.pub"]
    )
    loaded = serialization.load_ssh_private_key(keys["private.key"], password=None)
    pub = loaded.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    assert keys["private.key.pub"].startswith(pub)


def test_mpi_secret_placeholder_gets_a_key_and_garbage_is_refused(kube, ns):
    secrets = collection_path("v1", "secrets", ns)
    kube.create(secrets, {"metadata": {"name": "empty"}, "type": "Opaque", "data": {}})
    assert ensure_mpi_ssh_secret(kube, ns, "empty").action is Action.UPDATED
    kube.create(
        secrets, {"metadata": {"name": "bad"}, "type": "Opaque", "data": {"private.key": "Z2FyYmFnZQ=="}}
    )
    with pytest.raises(HookError, match=rf"Secret {ns}/bad: field data.private.key .* delete secret bad"):
        ensure_mpi_ssh_secret(kube, ns, "bad")


def test_webhook_certs_renewed_for_new_names_and_near_expiry(kube, ns):
    svc = "dynamo-operator-webhook-service"
    first = ensure_webhook_certs(kube, ns, "webhook-server-cert", svc)
    assert first.action is Action.CREATED
    # another Service name: the SANs no longer match, so re-issued for the new name
    third = ensure_webhook_certs(kube, ns, "webhook-server-cert", "renamed-svc")
    assert third.action is Action.UPDATED and "lacks a required host name" in third.reason
    assert int(third.resource_version) > int(first.resource_version)
    # inside the operator's renewal window (90 days before a one-year serving cert expires): re-issued,
    # then stable
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=300)
    fourth = ensure_webhook_certs(kube, ns, "webhook-server-cert", "renamed-svc", now=later)
    assert fourth.action is Action.UPDATED and "renewal" in fourth.reason
    fifth = ensure_webhook_certs(kube, ns, "webhook-server-cert", "renamed-svc", now=later)
    assert fifth.action is Action.UNCHANGED and fifth.resource_version == fourth.resource_version
    # what the hook wrote is exactly what the operator would keep: its planner sees nothing to do
    secret = kube.get(object_path("v1", "secrets", "webhook-server-cert", ns))
    material = webhook_certs.Material.from_secret(secret)
    hosts = service_hosts("renamed-svc", ns)
    assert webhook_certs.plan(material, hosts, webhook_certs.CertPolicy(), now=later)[0] is None


def test_webhook_certs_replace_an_opaque_secret(kube, ns):
    kube.create(
        collection_path("v1", "secrets", ns), {"metadata": {"name": "w"}, "type": "Opaque", "data": {}}
    )
    assert ensure_webhook_certs(kube, ns, "w", "svc").action is Action.REPLACED  # type is immutable
    assert kube.get(object_path("v1", "secrets", "w", ns))["type"] == "kubernetes.io/tls"


def test_forbidden_write_names_the_fix(api_cluster, kube, ns):
    limited = limited_cluster(api_cluster, kube, ns, [])
    with pytest.raises(Exception, match="forbidden"):
        ensure_mpi_ssh_secret(limited, ns, "x")


# -- the hook and plugin CLIs --------------------------------------------------------------------------------


def hooks(*args: str):
    return CliRunner().invoke(hooks_cli.main, list(args))


def unreachable_kubeconfig(api_cluster, tmp_path: Path) -> str:
    doc = yaml.safe_load(Path(api_cluster.kubeconfig).read_text())
    for c in doc["clusters"]:
        c["cluster"]["server"] = "https://127.0.0.1:1"
    path = tmp_path / "unreachable.kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_check_conflicts_json(api_cluster, ns):
    out = hooks(
        "--kubeconfig", api_cluster.kubeconfig, "-o", "json", "check-conflicts",
        "--release-namespace", ns, "--release-name", "a",
    )  # fmt: skip
    doc = json.loads(out.output)
    assert [r["id"] for r in doc["results"]] == ["cluster.api-reachable", "operators.conflicts"]
    assert doc["results"][0]["status"] == "pass"


def test_unreachable_api_exits_3(api_cluster, tmp_path):
    kubeconfig = unreachable_kubeconfig(api_cluster, tmp_path)
    out = hooks(
        "--kubeconfig", kubeconfig, "check-conflicts", "--release-namespace", "ns", "--release-name", "a"
    )
    assert out.exit_code == 3 and "cannot reach the Kubernetes API" in out.output


def test_ensure_webhook_certs_json(api_cluster, ns):
    args = [
        "--kubeconfig", api_cluster.kubeconfig, "-o", "json", "ensure-webhook-certs", "--namespace", ns,
        "--secret-name", "webhook-server-cert", "--service-name", "dynamo-operator-webhook-service",
    ]  # fmt: skip
    first = json.loads(hooks(*args).output)
    second = json.loads(hooks(*args).output)
    assert first["action"] == "created" and second["action"] == "unchanged"
    assert first["resourceVersion"] == second["resourceVersion"]
    assert f"dynamo-operator-webhook-service.{ns}.svc.cluster.local" in first["dnsNames"]


def test_refused_repair_exits_1(api_cluster, kube, ns):
    kube.create(
        collection_path("v1", "secrets", ns), {"metadata": {"name": "bad"}, "data": {"private.key": "eA=="}}
    )
    out = hooks(
        "--kubeconfig",
        api_cluster.kubeconfig,
        "ensure-mpi-ssh-secret",
        "--namespace",
        ns,
        "--secret-name",
        "bad",
    )
    assert out.exit_code == 1 and "never rotated automatically" in out.output


@pytest.fixture
def helm_stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in `helm` binary that records its argv (install's hand-off), with `template` failing so
    preflight uses the chart's static resource list."""
    log = tmp_path / "helm.log"
    script = tmp_path / "helm"
    script.write_text(f'#!/bin/sh\n[ "$1" = template ] && exit 1\necho "$@" >> {log}\n')
    script.chmod(0o755)
    monkeypatch.setenv("HELM_BIN", str(script))
    monkeypatch.setenv("DYNAMO_CHART_DIR", "/nonexistent")  # chart defaults, whatever the checkout holds
    monkeypatch.delenv("HELM_NAMESPACE", raising=False)
    return log


def plugin(*args: str, env: dict | None = None):
    return CliRunner().invoke(plugin_cli.cli, list(args), env=env, prog_name="helm dynamo")


def test_plugin_install_runs_helm_after_preflight(api_cluster, kube, cleanup, ns, helm_stub):
    if not [
        c
        for c in kube.list(STORAGECLASSES)
        if (c["metadata"].get("annotations") or {}).get("storageclass.kubernetes.io/is-default-class")
        == "true"
    ]:
        create(
            kube,
            cleanup,
            STORAGECLASSES,
            {
                "metadata": {
                    "name": f"std-{ns}",
                    "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
                },
                "provisioner": "example.com/none",
            },
        )
    env = {"HELM_NAMESPACE": ns, "KUBECONFIG": api_cluster.kubeconfig}
    out = plugin("install", "dp", "./chart", "--wait", env=env)
    assert out.exit_code == 0, out.output
    assert helm_stub.read_text().split() == ["install", "dp", "./chart", "--wait", "--namespace", ns]


def test_plugin_install_blocked_never_calls_helm(api_cluster, tmp_path, helm_stub):
    env = {"KUBECONFIG": unreachable_kubeconfig(api_cluster, tmp_path)}
    out = plugin("install", "dp", "./chart", "-n", "dynamo-system", env=env)
    assert out.exit_code == 1 and "nothing was installed" in out.output
    assert not helm_stub.exists()
    doc = json.loads(
        plugin("check", "preflight", "-o", "json", env={**env, "HELM_NAMESPACE": "team-x"}).output
    )
    assert doc["release"]["namespace"] == "team-x"
