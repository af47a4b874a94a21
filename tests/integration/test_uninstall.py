"""Uninstalling the platform with graphs present, through the real `helm dynamo uninstall` (the plugin,
installed with `helm plugin install`) against the local cluster.

The hard case is simulated on purpose: the operator is killed with SIGKILL (a node lost, an OOM kill), so
it releases nothing itself. Its admission webhooks then refuse every update of a Dynamo object (failure
policy Fail, nobody answering), its namespace-scope Lease marker stays, and the webhook and MPI SSH Secrets
the hooks and operator made are not Helm's. After `helm dynamo uninstall` none of that is left, graphs can
be edited and deleted again, and `--crds` removes the CRDs (and with them every Dynamo object).
"""

from __future__ import annotations

import contextlib
import json
import subprocess

import pytest
import yaml
from dynamo_operator.controllers import store
from dynamo_operator.webhooks.certs import CRDS
from kubernetes.client.exceptions import ApiException
from support import yamlc
from support.dgd import get, wait_successful
from support.helm import PLUGIN, helm, hooks
from support.poll import wait_for
from support.release import CHART, preserved_crds, release, run

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

EXAMPLE = CHART.parents[1] / "examples" / "vllm-agg.yaml"
GRAPH = "vllm-agg"
MARKER = "dynamo-operator-namespace-scope"
RESTRICTED = "dynamo-operator.namespaceRestriction.enabled=true"


@pytest.fixture(scope="module")
def plugin_env(kube_cluster, tmp_path_factory) -> dict[str, str]:
    env = dict(kube_cluster.env)
    env["HELM_PLUGINS"] = str(tmp_path_factory.mktemp("helm-plugins"))
    out = helm(env, "plugin", "install", str(PLUGIN), timeout=60)
    assert out.returncode == 0, out.stderr
    return env


def _webhook_configs(env: dict[str, str], namespace: str) -> list[str]:
    out = run(
        env,
        "kubectl",
        "get",
        "validatingwebhookconfigurations,mutatingwebhookconfigurations",
        "-l",
        f"nvidia.com/dynamo-operator-namespace={namespace}",
        "-o",
        "name",
    )
    return out.stdout.split()


def _annotate(env: dict[str, str], ns: str, value: str) -> subprocess.CompletedProcess:
    return run(
        env,
        "kubectl",
        "annotate",
        "--overwrite",
        "-n",
        ns,
        f"dynamographdeployments.nvidia.com/{GRAPH}",
        f"test/uninstall={value}",
        check=False,
    )


def _graph_then_operator_killed(rel, client) -> str:
    """A namespace-restricted release running a graph, whose operator is then SIGKILLed: nothing was
    released. Returns the namespace (the release's own, which it manages)."""
    env, ns = rel.env, rel.namespace
    rel.install(CHART, "--skip-crds")
    # what the pre-install hook Job does in a real cluster (kwok runs no containers)
    made = hooks(env, "ensure-mpi-ssh-secret", "--namespace", ns, "--secret-name", "mpi-run-ssh-secret")
    assert made.returncode == 0, made.stderr
    rel.start_operator()
    run(env, "kubectl", "apply", "-n", ns, "-f", str(EXAMPLE))
    wait_successful(client, ns, GRAPH, timeout=120)
    children = json.loads(run(env, "kubectl", "get", "deployments", "-n", ns, "-o", "json").stdout)["items"]
    assert any(d["metadata"].get("ownerReferences") for d in children)
    for secret in ("webhook-server-cert", "mpi-run-ssh-secret"):
        run(env, "kubectl", "get", "secret", "-n", ns, secret)
    rel.stop_operator(kill=True)
    run(env, "kubectl", "get", "lease", "-n", ns, MARKER)  # nobody released it
    return ns


def test_uninstall_after_the_operator_died_strands_nothing(
    kube_cluster, client, crds, plugin_env, tmp_path
) -> None:
    env = kube_cluster.env
    with release(kube_cluster, tmp_path, "un", RESTRICTED) as rel:
        ns = _graph_then_operator_killed(rel, client)
        assert len(_webhook_configs(env, ns)) == 2
        blocked = _annotate(env, ns, "before")
        assert blocked.returncode != 0 and "webhook" in blocked.stderr, blocked.stderr

        out = helm(plugin_env, "dynamo", "uninstall", rel.name, "-n", ns, timeout=400)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "first, so nothing blocks deletes" in out.stdout
        assert f"deleted Lease {ns}/{MARKER}" in out.stdout
        assert "CRDs kept" in out.stdout

        assert _webhook_configs(env, ns) == []
        assert run(env, "helm", "list", "-n", ns, "-q").stdout.strip() == ""
        assert run(env, "kubectl", "get", "lease", "-n", ns, MARKER, check=False).returncode != 0
        secrets = run(env, "kubectl", "get", "secrets", "-n", ns, "-o", "name").stdout.split()
        assert not {"secret/webhook-server-cert", "secret/mpi-run-ssh-secret"} & set(secrets), secrets
        # the graph is editable and deletable again, and its children go with it
        assert _annotate(env, ns, "after").returncode == 0
        dgd = get(client, store.DGD, GRAPH, ns)
        assert not [f for f in dgd["metadata"].get("finalizers") or [] if f.startswith("nvidia.com/")]
        run(
            env,
            "kubectl",
            "delete",
            "-n",
            ns,
            f"dynamographdeployments.nvidia.com/{GRAPH}",
            "--wait=true",
            "--timeout=120s",
        )
        wait_for(
            lambda: (
                not json.loads(run(env, "kubectl", "get", "deploy", "-n", ns, "-o", "json").stdout)["items"]
            ),
            120,
            "the graph's Deployments were not garbage-collected",
            interval=1.0,
        )

        again = helm(plugin_env, "dynamo", "uninstall", rel.name, "-n", ns, timeout=400)
        assert again.returncode == 0, again.stdout + again.stderr  # idempotent


FOREIGN_CRD = "clusterpolicies.nvidia.com"


def _foreign_crd() -> dict:
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


def _kubectl_with(env: dict[str, str], doc: dict, *args: str) -> subprocess.CompletedProcess:
    """``kubectl ARGS -f -`` with ``doc`` on stdin."""
    proc = subprocess.run(
        ["kubectl", *args, "-f", "-"],
        input=yaml.safe_dump(doc),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


@contextlib.contextmanager
def foreign_policy(env: dict[str, str]):
    """The foreign CRD and one object of it with a finalizer named like the operator's; yields the object
    as created, then removes both."""
    _kubectl_with(env, _foreign_crd(), "apply")
    run(env, "kubectl", "wait", "--for=condition=Established", f"crd/{FOREIGN_CRD}", "--timeout=60s")
    obj = {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy", "finalizers": ["nvidia.com/finalizer"]},
        "spec": {"driver": {"image": "nvcr.io/nvidia/driver"}},
    }
    created = json.loads(_kubectl_with(env, obj, "create", "-o", "json").stdout)
    try:
        yield created
    finally:
        run(
            env,
            "kubectl",
            "patch",
            f"{FOREIGN_CRD}/cluster-policy",
            "--type=merge",
            "-p",
            '{"metadata":{"finalizers":null}}',
            check=False,
        )
        run(env, "kubectl", "delete", "crd", FOREIGN_CRD, "--ignore-not-found", check=False)


def test_uninstall_keep_secrets_and_crds(kube_cluster, client, crds, plugin_env, tmp_path) -> None:
    """--keep-secrets keeps the hook Secrets; --crds removes Dynamo's CRDs and every Dynamo object (the
    session's CRDs are put back afterwards), and leaves another vendor's nvidia.com CRD and its object,
    finalizer included, exactly as they were."""
    env = kube_cluster.env
    with (
        preserved_crds(client) as saved,
        foreign_policy(env) as foreign,
        release(kube_cluster, tmp_path, "uncrd") as rel,
    ):
        rel.install(CHART, "--skip-crds")
        ns = rel.namespace
        rel.start_operator()
        run(env, "kubectl", "apply", "-n", ns, "-f", str(EXAMPLE))
        wait_successful(client, ns, GRAPH, timeout=120)
        rel.stop_operator()
        out = helm(
            plugin_env, "dynamo", "uninstall", rel.name, "-n", ns, "--crds", "--keep-secrets", timeout=400
        )
        assert out.returncode == 0, out.stdout + out.stderr
        assert f"kept Secret {ns}/webhook-server-cert (--keep-secrets)" in out.stdout
        run(env, "kubectl", "get", "secret", "-n", ns, "webhook-server-cert")
        for crd in saved:
            name = crd["metadata"]["name"]
            assert f"deleted CustomResourceDefinition {name}" in out.stdout
            with pytest.raises(ApiException) as gone:
                client.get(CRDS, name)
            assert gone.value.status == 404
        assert _webhook_configs(env, ns) == []
        assert FOREIGN_CRD not in out.stdout
        after = json.loads(run(env, "kubectl", "get", f"{FOREIGN_CRD}/cluster-policy", "-o", "json").stdout)
        assert after["metadata"]["resourceVersion"] == foreign["metadata"]["resourceVersion"]
        assert after["metadata"]["finalizers"] == ["nvidia.com/finalizer"]
        assert "deletionTimestamp" not in after["metadata"]


def _uninstall_hook_args(env: dict[str, str], name: str, ns: str) -> dict[str, list[str]]:
    """The argv of the release's pre-delete and post-delete Jobs, as Helm stored them."""
    out = run(env, "helm", "get", "hooks", name, "--namespace", ns)
    found = {}
    for doc in yamlc.load_all(out.stdout):
        if doc and doc.get("kind") == "Job":
            hook = doc["metadata"]["annotations"]["helm.sh/hook"]
            if hook in ("pre-delete", "post-delete"):
                found[hook] = doc["spec"]["template"]["spec"]["containers"][0]["args"]
    return found


def test_plain_helm_uninstall_hooks_strand_nothing(kube_cluster, client, crds, tmp_path) -> None:
    """A plain `helm uninstall`: the chart's pre-delete and post-delete Jobs do the same cleanup. kwok runs
    no containers, so their stored argv runs here, around `helm uninstall --no-hooks`, in Helm's order."""
    env = kube_cluster.env
    with release(kube_cluster, tmp_path, "unplain", RESTRICTED) as rel:
        ns = _graph_then_operator_killed(rel, client)
        args = _uninstall_hook_args(env, rel.name, ns)
        assert set(args) == {"pre-delete", "post-delete"}, args

        before = hooks(env, *args["pre-delete"])
        assert before.returncode == 0, before.stderr
        assert _webhook_configs(env, ns) == []
        assert _annotate(env, ns, "editable").returncode == 0  # nothing blocks edits any more
        run(
            env, "helm", "uninstall", rel.name, "--namespace", ns, "--no-hooks", "--wait", "--timeout", "300s"
        )
        after = hooks(env, *args["post-delete"])
        assert after.returncode == 0, after.stderr
        assert f"deleted Lease {ns}/{MARKER}" in after.stdout
        assert run(env, "kubectl", "get", "lease", "-n", ns, MARKER, check=False).returncode != 0
        secrets = run(env, "kubectl", "get", "secrets", "-n", ns, "-o", "name").stdout.split()
        assert not {"secret/webhook-server-cert", "secret/mpi-run-ssh-secret"} & set(secrets), secrets
