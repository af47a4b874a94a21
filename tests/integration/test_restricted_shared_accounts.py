"""Namespace-restricted, the chart creates ``planner-serviceaccount`` and ``epp-serviceaccount`` in the
target namespace (components/operator/templates/workload-rbac.yaml, labelled as Helm's). The operator renders
them too; it uses the chart's as they are (``controllers/sync.py is_foreign``). Before, it added an owner
reference per component using them, and the garbage collector (this profile runs kube-controller-manager)
deleted the chart's object with the last graph: a chart object destroyed by the operator.

* a graph with a planner runs as the chart's account, which gets no owner reference and keeps Helm's labels;
  deleting the graph (foreground: its components are gone when the graph is) leaves the account, same uid;
* the admission policy bounding the operator's writes (``<cluster>-owned-writes``) lets its identity update
  these two accounts only to drop owner references (what an earlier operator left), never relabel or delete
  them: probed by impersonating the chart's operator account, with RBAC granting it the verbs, so what
  refuses is the policy.
"""

from __future__ import annotations

import contextlib
import copy
import subprocess

import pytest
import yaml
from dynamo_localcluster.cluster import REPO_ROOT
from dynamo_operator.controllers import store
from dynamo_operator.runtime.client import CONFIGMAPS, DEPLOYMENTS, SERVICEACCOUNTS, ResourceClient
from kubernetes.client.exceptions import ApiException
from support import graphs
from support.dgd import apply_dgd, get
from support.operator import Operator
from support.poll import stays, wait_for
from support.rbac import render

pytestmark = pytest.mark.cluster

NS_PREFIX = "rsa"
RELEASE = "dp"
WAIT = 60.0
HELM = {"meta.helm.sh/release-name": RELEASE}  # what `helm install` adds to every object of a release


def chart_docs(kube_cluster, ns: str) -> list[dict]:
    """The restricted chart as `helm template` renders it for a release installed in ``ns``."""
    chart = REPO_ROOT / "charts" / "platform"
    return render(
        kube_cluster.env, chart, RELEASE, ns, "--set", "dynamo-operator.namespaceRestriction.enabled=true"
    )


def install_accounts(client: ResourceClient, docs: list[dict], ns: str) -> dict[str, dict]:
    """The chart's two shared accounts, created as Helm would (its annotations added)."""
    out = {}
    for name in ("planner-serviceaccount", "epp-serviceaccount"):
        (sa,) = [d for d in docs if d["kind"] == "ServiceAccount" and d["metadata"]["name"] == name]
        sa = copy.deepcopy(sa)
        sa["metadata"]["annotations"] = {**HELM, "meta.helm.sh/release-namespace": ns}
        out[name] = client.create(SERVICEACCOUNTS, sa, ns)
    return out


def planner_account(client: ResourceClient, ns: str) -> dict:
    return (get(client, SERVICEACCOUNTS, "planner-serviceaccount", ns) or {}).get("metadata") or {}


def kubectl(kube_cluster, docs: list[dict], *args: str) -> None:
    text = yaml.safe_dump_all(docs)
    p = subprocess.run(
        ["kubectl", *args, "-f", "-"],
        input=text,
        env=kube_cluster.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr


def test_the_charts_planner_account_survives_its_graph(kube_cluster, client, ns) -> None:
    accounts = install_accounts(client, chart_docs(kube_cluster, ns), ns)
    chart_sa = accounts["planner-serviceaccount"]
    dgd = graphs.dgd(graphs.component("Planner", "planner"), name="g", namespace=ns)
    with Operator(kube_cluster, {"namespace": {"restricted": ns}}, restricted_namespace=ns):
        apply_dgd(client, dgd)
        deploy = wait_for(lambda: get(client, DEPLOYMENTS, "g-planner", ns), WAIT, "the planner's Deployment")
        assert deploy["spec"]["template"]["spec"]["serviceAccountName"] == "planner-serviceaccount"

        def untouched() -> bool:
            md = planner_account(client, ns)
            return (
                md.get("uid") == chart_sa["metadata"]["uid"]
                and not md.get("ownerReferences")
                and md.get("labels") == chart_sa["metadata"]["labels"]
            )

        stays(untouched, 3, lambda: f"the chart's account as Helm made it: {planner_account(client, ns)}")
        client.delete(store.DGD, "g", ns, propagation="Foreground")
        wait_for(
            lambda: get(client, store.DGD, "g", ns) is None, WAIT, "the graph deleted, its components first"
        )
        assert get(client, store.DCD, "g-planner", ns) is None
    stays(untouched, 3, "the chart's account still there after the graph (the garbage collector runs here)")


def test_the_policy_lets_the_operator_only_drop_owner_references_of_the_charts_accounts(
    kube_cluster, client, ns
) -> None:
    docs = chart_docs(kube_cluster, ns)
    policy = [
        d
        for d in docs
        if d["kind"].startswith("ValidatingAdmissionPolicy")
        and d["metadata"]["name"].endswith("-owned-writes")
    ]
    assert len(policy) == 2, [d["metadata"]["name"] for d in policy]
    (operator_sa,) = [
        d
        for d in docs
        if d["kind"] == "ServiceAccount" and d["metadata"]["name"].endswith("-controller-manager")
    ]
    user = f"system:serviceaccount:{ns}:{operator_sa['metadata']['name']}"
    grant = [  # the verbs by RBAC, so that what refuses below is the admission policy
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "probe", "namespace": ns},
            "rules": [
                {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["get", "update", "delete"]}
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "probe", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "probe"},
            "subjects": [
                {"kind": "ServiceAccount", "name": operator_sa["metadata"]["name"], "namespace": ns}
            ],
        },
    ]
    kubectl(kube_cluster, policy + grant, "apply")
    try:
        _probe(kube_cluster, client, docs, ns, user)
    finally:
        with contextlib.suppress(AssertionError):
            kubectl(kube_cluster, policy, "delete", "--ignore-not-found")


def enforced(client: ResourceClient, as_operator: ResourceClient, ns: str) -> bool:
    """The policy takes a moment to be enforced once created: a canary account of nobody's, deleted as the
    operator, is refused once it is (and made again while it is not)."""
    if get(client, SERVICEACCOUNTS, "canary", ns) is None:
        client.create(SERVICEACCOUNTS, {"metadata": {"name": "canary", "namespace": ns}}, ns)
    try:
        as_operator.delete(SERVICEACCOUNTS, "canary", ns)
    except ApiException as e:
        return "owned-writes" in str(e.body)
    return False


def _probe(kube_cluster, client, docs: list[dict], ns: str, user: str) -> None:
    sa = install_accounts(client, docs, ns)["planner-serviceaccount"]
    # an owner that exists (the garbage collector deletes at once what references a missing one)
    owners = [
        client.create(CONFIGMAPS, {"metadata": {"name": f"owner-{i}", "namespace": ns}}, ns) for i in (1, 2)
    ]
    refs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": o["metadata"]["name"], "uid": o["metadata"]["uid"]}
        for o in owners
    ]
    sa["metadata"]["ownerReferences"] = [refs[0]]
    sa = client.replace(SERVICEACCOUNTS, sa)  # as an operator before this one left it (as the admin)
    api = kube_cluster.api_client()
    api.set_default_header("Impersonate-User", user)
    as_operator = ResourceClient(api)

    def refused(body: dict | None) -> str:
        try:
            if body is None:
                as_operator.delete(SERVICEACCOUNTS, "planner-serviceaccount", ns)
            else:
                as_operator.replace(SERVICEACCOUNTS, body)
        except ApiException as e:
            return f"{e.status} {e.body}"
        return ""

    relabel = copy.deepcopy(sa)
    relabel["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "dynamo-operator"
    wait_for(lambda: enforced(client, as_operator, ns), 30, "the owned-writes policy enforced")
    assert "owned-writes" in refused(relabel), "the chart's account relabelled as the operator"
    assert "owned-writes" in refused(None), "the chart's account deleted as the operator"
    more = copy.deepcopy(sa)
    more["metadata"]["ownerReferences"].append(refs[1])
    assert "owned-writes" in refused(more), "an owner reference added as the operator"
    dropped = copy.deepcopy(sa)
    dropped["metadata"]["ownerReferences"] = []
    assert refused(dropped) == "", "dropping the earlier operator's reference"
    after = get(client, SERVICEACCOUNTS, "planner-serviceaccount", ns)
    assert (
        not after["metadata"].get("ownerReferences")
        and after["metadata"]["labels"] == sa["metadata"]["labels"]
    )
