"""Install hooks against the local cluster, run exactly as the chart's hook Jobs would run them.

kwok nodes never execute containers (a hook Job "completes" without running), so the hook command is run
here with the argv taken from the rendered chart, and blocking is asserted on its exit status and message.
"""

from __future__ import annotations

import subprocess

import pytest
import yaml
from dynamo_hooks import cli as hooks_cli
from kubernetes import client
from support import yamlc
from support.helm import CHART, ensure_namespace, hooks, skip_if_shared_cluster_has_operators

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def rendered_hook_job(cluster, release: str, namespace: str, *sets: str) -> list[str]:
    """The argv of the chart's one install-hook Job in `helm template` output: the contract with the chart."""
    cmd = ["helm", "template", release, str(CHART), "--namespace", namespace]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, env=cluster.env, capture_output=True, text=True, timeout=120, check=True).stdout
    (argv,) = [
        doc["spec"]["template"]["spec"]["containers"][0]["args"]
        for doc in yamlc.load_all(out)
        if doc and doc.get("kind") == "Job" and doc["metadata"]["name"].endswith("-install-hooks")
    ]
    return argv


def rendered_hook_args(cluster, release: str, namespace: str, *sets: str) -> dict[str, list[str]]:
    """The Job's chained argv cut into its steps, by command name (each runs alone as well)."""
    steps: dict[str, list[str]] = {}
    for arg in rendered_hook_job(cluster, release, namespace, *sets):
        if arg in hooks_cli.main.commands:
            current = steps[arg] = [arg]
        else:
            current.append(arg)
    return steps


def webhook_configuration(release: str, namespace: str, restricted: bool) -> dict:
    """What the chart's ValidatingWebhookConfiguration looks like to the conflict hook, which finds
    installed operators by it (its RBAC reads no Deployments)."""
    hook = {
        "name": "vdynamographdeployment-v1beta1.dynamo.nvidia.com",
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "clientConfig": {"url": "https://127.0.0.1:9/validate-nvidia-com-v1beta1-dynamographdeployment"},
        "rules": [
            {
                "apiGroups": ["nvidia.com"],
                "apiVersions": ["v1beta1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["dynamographdeployments"],
            }
        ],
        # a webhook nobody serves must not block the other tests' graphs; a restricted release's webhooks
        # select its namespace (as the chart's), a cluster-wide stand-in selects none
        "failurePolicy": "Ignore",
        "namespaceSelector": {
            "matchLabels": {"kubernetes.io/metadata.name": namespace}
            if restricted
            else {"test.dynamo.nvidia.com/selects": "nothing"}
        },
    }
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {
            "name": f"{release}-dynamo-operator-{namespace}-validating",
            "labels": {
                "app.kubernetes.io/name": "dynamo-operator",
                "app.kubernetes.io/instance": release,
                "nvidia.com/dynamo-operator-namespace": namespace,
            },
            "annotations": {
                "meta.helm.sh/release-name": release,
                "meta.helm.sh/release-namespace": namespace,
            },
        },
        "webhooks": [hook],
    }


def operator_deployment(api: client.ApiClient, release: str, namespace: str, restricted: bool) -> None:
    """What the chart's operator Deployment, config and webhook configuration look like, without helm
    (fast matrix setup)."""
    ensure_namespace(api, namespace)
    client.AdmissionregistrationV1Api(api).create_validating_webhook_configuration(
        webhook_configuration(release, namespace, restricted)
    )
    name = f"{release}-dynamo-operator-controller-manager"
    config = {"apiVersion": "operator.config.dynamo.nvidia.com/v1alpha1", "kind": "OperatorConfiguration"}
    if restricted:
        config["namespace"] = {"restricted": namespace}
    client.CoreV1Api(api).create_namespaced_config_map(
        namespace,
        client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name=f"{name}-config"), data={"config.yaml": yaml.safe_dump(config)}
        ),
    )
    labels = {"app.kubernetes.io/name": "dynamo-operator", "app.kubernetes.io/instance": release}
    client.AppsV1Api(api).create_namespaced_deployment(
        namespace,
        client.V1Deployment(
            metadata=client.V1ObjectMeta(
                name=name,
                labels=labels,
                annotations={
                    "meta.helm.sh/release-name": release,
                    "meta.helm.sh/release-namespace": namespace,
                },
            ),
            spec=client.V1DeploymentSpec(
                replicas=0,
                selector=client.V1LabelSelector(match_labels=labels),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels=labels),
                    spec=client.V1PodSpec(
                        containers=[client.V1Container(name="manager", image="dynamo-operator:0.1.0")],
                        volumes=[
                            client.V1Volume(
                                name="config",
                                config_map=client.V1ConfigMapVolumeSource(name=f"{name}-config"),
                            )
                        ],
                    ),
                ),
            ),
        ),
    )


def delete_operator(api: client.ApiClient, release: str, namespace: str) -> None:
    name = f"{release}-dynamo-operator-controller-manager"
    client.AppsV1Api(api).delete_namespaced_deployment(name, namespace)
    client.CoreV1Api(api).delete_namespaced_config_map(f"{name}-config", namespace)
    client.AdmissionregistrationV1Api(api).delete_validating_webhook_configuration(
        f"{release}-dynamo-operator-{namespace}-validating"
    )


def test_conflict_matrix_with_the_charts_argv(kube_cluster) -> None:
    api = kube_cluster.api_client()
    skip_if_shared_cluster_has_operators(kube_cluster)

    def check(release: str, ns: str, restricted: bool) -> subprocess.CompletedProcess[str]:
        sets = ["dynamo-operator.namespaceRestriction.enabled=true"] if restricted else []
        args = rendered_hook_args(kube_cluster, release, ns, *sets)["check-conflicts"]
        return hooks(kube_cluster.env, *args)

    # 1. none -> cluster-wide: allowed
    first = check("hm-a", "hm-a", restricted=False)
    assert first.returncode == 0, first.stderr
    assert "No other Dynamo operator" in first.stdout
    # 2. none -> namespace-restricted: allowed
    assert check("hm-r", "hm-r", restricted=True).returncode == 0

    operator_deployment(api, "hm-a", "hm-a", restricted=False)
    # An upgrade of the same release is not a conflict.
    assert check("hm-a", "hm-a", restricted=False).returncode == 0
    # 3. cluster-wide -> cluster-wide: blocked
    third = check("hm-b", "hm-b", restricted=False)
    assert third.returncode == 1 and "Multiple cluster managers" in third.stderr
    assert "helm uninstall hm-a -n hm-a" in third.stderr
    # 4. cluster-wide -> namespace-restricted: blocked
    fourth = check("hm-c", "hm-c", restricted=True)
    assert fourth.returncode == 1 and "Cluster-wide already manages target namespace" in fourth.stderr
    delete_operator(api, "hm-a", "hm-a")

    operator_deployment(api, "hm-c", "hm-c", restricted=True)
    # 5. namespace-restricted -> cluster-wide: blocked
    fifth = check("hm-d", "hm-d", restricted=False)
    assert fifth.returncode == 1 and "Would conflict with existing namespace operators" in fifth.stderr
    # 6. namespace-restricted A -> namespace-restricted B in another namespace: allowed
    sixth = check("hm-e", "hm-e", restricted=True)
    assert sixth.returncode == 0 and "Different scopes" in sixth.stdout
    delete_operator(api, "hm-c", "hm-c")


def test_the_charts_one_job_runs_its_steps_in_order_and_a_block_writes_no_secret(kube_cluster) -> None:
    """The install Job chains the steps in one pod: a conflict ends it before either Secret is written
    (nothing half-applied); without one, both are made, and a second run (a retried pod, an upgrade)
    changes neither."""
    api = kube_cluster.api_client()
    skip_if_shared_cluster_has_operators(kube_cluster)
    core = client.CoreV1Api(api)
    ensure_namespace(api, "hm-job")
    argv = rendered_hook_job(kube_cluster, "hm-job", "hm-job")
    assert [a for a in argv if a in hooks_cli.main.commands] == [
        "check-conflicts",
        "ensure-mpi-ssh-secret",
        "ensure-webhook-certs",
    ], argv

    def secrets() -> set[str]:
        return {s.metadata.name for s in core.list_namespaced_secret("hm-job").items}

    operator_deployment(api, "hm-other", "hm-other", restricted=False)
    try:
        blocked = hooks(kube_cluster.env, *argv)
        assert blocked.returncode == 1 and "Multiple cluster managers" in blocked.stderr, blocked.stderr
        assert not {"mpi-run-ssh-secret", "webhook-server-cert"} & secrets(), secrets()
    finally:
        delete_operator(api, "hm-other", "hm-other")
    first = hooks(kube_cluster.env, *argv)
    assert first.returncode == 0, first.stderr
    assert "mpi-run-ssh-secret: created" in first.stdout and "webhook-server-cert: created" in first.stdout
    before = {n: core.read_namespaced_secret(n, "hm-job").metadata.resource_version for n in secrets()}
    second = hooks(kube_cluster.env, *argv)
    assert second.returncode == 0 and second.stdout.count("unchanged") == 2, second.stdout
    after = {n: core.read_namespaced_secret(n, "hm-job").metadata.resource_version for n in secrets()}
    assert after == before


def test_the_hybrid_layout_installs_with_its_value(kube_cluster) -> None:
    """The operator overview's hybrid layout (one cluster-wide operator, a namespace-restricted one for its
    own namespace): blocked without ``namespaceRestriction.hybrid``, whose fix names it; allowed with it,
    in either order, with the chart's own argv."""
    api = kube_cluster.api_client()
    skip_if_shared_cluster_has_operators(kube_cluster)

    def check(release: str, ns: str, *sets: str) -> subprocess.CompletedProcess[str]:
        args = rendered_hook_args(kube_cluster, release, ns, *sets)["check-conflicts"]
        return hooks(kube_cluster.env, *args)

    restricted = "dynamo-operator.namespaceRestriction.enabled=true"
    hybrid = "dynamo-operator.namespaceRestriction.hybrid=true"
    operator_deployment(api, "hm-prod", "hm-prod", restricted=False)
    try:
        blocked = check("hm-test", "hm-test", restricted)
        assert blocked.returncode == 1 and "Cluster-wide already manages target namespace" in blocked.stderr
        assert "--set dynamo-operator.namespaceRestriction.hybrid=true" in blocked.stderr
        joined = check("hm-test", "hm-test", restricted, hybrid)
        assert joined.returncode == 0, joined.stderr
        assert "Hybrid layout" in joined.stdout
        assert "While Lease hm-test/dynamo-operator-namespace-scope is renewed" in joined.stdout
    finally:
        delete_operator(api, "hm-prod", "hm-prod")
    operator_deployment(api, "hm-test", "hm-test", restricted=True)
    try:  # the other order: the cluster-wide operator joins a restricted one
        assert check("hm-prod", "hm-prod").returncode == 1
        joined = check("hm-prod", "hm-prod", hybrid)
        assert joined.returncode == 0 and "Hybrid layout" in joined.stdout, joined.stderr
    finally:
        delete_operator(api, "hm-test", "hm-test")


def test_namespace_scope_lease_blocks_until_it_expires(kube_cluster) -> None:
    api = kube_cluster.api_client()
    ensure_namespace(api, "hm-lease")
    coordination = client.CoordinationV1Api(api)
    import datetime as dt

    def lease(renewed: dt.datetime) -> client.V1Lease:
        return client.V1Lease(
            metadata=client.V1ObjectMeta(name="dynamo-operator-namespace-scope"),
            spec=client.V1LeaseSpec(
                holder_identity="namespace-restricted-operator-pod-0.1.0",
                lease_duration_seconds=30,
                renew_time=renewed,
            ),
        )

    coordination.create_namespaced_lease("hm-lease", lease(dt.datetime.now(dt.UTC)))
    blocked = hooks(
        kube_cluster.env, "check-conflicts", "--release-namespace", "hm-cw", "--release-name", "hm-cw"
    )
    assert blocked.returncode == 1 and "Lease hm-lease/dynamo-operator-namespace-scope" in blocked.stderr
    coordination.patch_namespaced_lease(
        "dynamo-operator-namespace-scope",
        "hm-lease",
        {"spec": {"renewTime": (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)).isoformat()}},
    )
    allowed = hooks(
        kube_cluster.env, "check-conflicts", "--release-namespace", "hm-cw", "--release-name", "hm-cw"
    )
    assert allowed.returncode == 0 and "expired" in allowed.stdout
    coordination.delete_namespaced_lease("dynamo-operator-namespace-scope", "hm-lease")


def test_secret_hooks_twice_change_nothing(kube_cluster) -> None:
    api = kube_cluster.api_client()
    ensure_namespace(api, "hm-secrets")
    jobs = rendered_hook_args(kube_cluster, "hm-secrets", "hm-secrets")
    core = client.CoreV1Api(api)

    for name, secret in (
        ("ensure-mpi-ssh-secret", "mpi-run-ssh-secret"),
        ("ensure-webhook-certs", "webhook-server-cert"),
    ):
        first = hooks(kube_cluster.env, *jobs[name])
        assert first.returncode == 0 and "created" in first.stdout, first.stderr
        before = core.read_namespaced_secret(secret, "hm-secrets")
        second = hooks(kube_cluster.env, *jobs[name])
        assert second.returncode == 0 and "unchanged" in second.stdout
        after = core.read_namespaced_secret(secret, "hm-secrets")
        assert after.metadata.resource_version == before.metadata.resource_version
        assert after.data == before.data

    tls = core.read_namespaced_secret("webhook-server-cert", "hm-secrets")
    # the layout the operator keeps (it renews from ca.key), so the operator adopts what the hook wrote
    assert tls.type == "kubernetes.io/tls" and set(tls.data) == {"tls.crt", "tls.key", "ca.crt", "ca.key"}
    mpi = core.read_namespaced_secret("mpi-run-ssh-secret", "hm-secrets")
    assert set(mpi.data) == {
        "private.key",
        "private.key.pub",
        "authorized_keys",
        "host.key",
        "host.key.pub",
        "known_hosts",
    }
    _assert_host_key_pinned(mpi.data)


def _assert_host_key_pinned(data: dict) -> None:
    """host.key.pub is host.key's public half, and known_hosts pins exactly it for any host name."""
    import base64

    from dynamo_operator import sshkeys

    host = {k: base64.b64decode(data[k]) for k in ("host.key", "host.key.pub", "known_hosts")}
    derived = sshkeys.host_key_from_private(host["host.key"])
    assert derived.public_openssh == host["host.key.pub"]
    assert host["known_hosts"] == b"* " + host["host.key.pub"]
    assert host["host.key.pub"].startswith(b"ecdsa-sha2-nistp256 ")


def test_existing_ssh_key_is_kept(kube_cluster) -> None:
    import base64

    from dynamo_operator import sshkeys

    api = kube_cluster.api_client()
    ensure_namespace(api, "hm-keep")
    pair = sshkeys.generate_keypair(key_size=2048)
    core = client.CoreV1Api(api)
    core.create_namespaced_secret(
        "hm-keep",
        client.V1Secret(
            metadata=client.V1ObjectMeta(name="mpi-run-ssh-secret"),
            data={"private.key": base64.b64encode(pair.private_openssh).decode()},
        ),
    )
    out = hooks(
        kube_cluster.env,
        "ensure-mpi-ssh-secret",
        "--namespace",
        "hm-keep",
        "--secret-name",
        "mpi-run-ssh-secret",
    )
    assert out.returncode == 0 and "existing key kept" in out.stdout
    assert "added private.key.pub, authorized_keys, host.key, host.key.pub, known_hosts" in out.stdout
    stored = core.read_namespaced_secret("mpi-run-ssh-secret", "hm-keep").data
    assert base64.b64decode(stored["private.key"]) == pair.private_openssh
    assert base64.b64decode(stored["private.key.pub"]) == pair.public_openssh
    _assert_host_key_pinned(stored)
    again = hooks(
        kube_cluster.env,
        "ensure-mpi-ssh-secret",
        "--namespace",
        "hm-keep",
        "--secret-name",
        "mpi-run-ssh-secret",
    )
    assert again.returncode == 0 and "unchanged" in again.stdout
    assert core.read_namespaced_secret("mpi-run-ssh-secret", "hm-keep").data == stored  # nothing rotated


def test_a_secret_with_a_host_key_keeps_it_and_gets_its_known_hosts(kube_cluster) -> None:
    """A Secret from before host key pinning with its own host key (made by hand): the key is never
    replaced; only the missing public half and known_hosts line are added, from it."""
    import base64

    from dynamo_operator import sshkeys

    api = kube_cluster.api_client()
    ensure_namespace(api, "hm-host")
    pair, host = sshkeys.generate_keypair(key_size=2048), sshkeys.generate_host_key()
    data = {**pair.secret_data(), "host.key": host.private_openssh}
    core = client.CoreV1Api(api)
    core.create_namespaced_secret(
        "hm-host",
        client.V1Secret(
            metadata=client.V1ObjectMeta(name="mpi-run-ssh-secret"),
            data={k: base64.b64encode(v).decode() for k, v in data.items()},
        ),
    )
    out = hooks(
        kube_cluster.env,
        "ensure-mpi-ssh-secret",
        "--namespace",
        "hm-host",
        "--secret-name",
        "mpi-run-ssh-secret",
    )
    assert out.returncode == 0 and "existing key kept; added host.key.pub, known_hosts" in out.stdout
    stored = core.read_namespaced_secret("mpi-run-ssh-secret", "hm-host").data
    assert base64.b64decode(stored["host.key"]) == host.private_openssh
    assert base64.b64decode(stored["private.key"]) == pair.private_openssh
    assert base64.b64decode(stored["known_hosts"]) == sshkeys.known_hosts(host.public_openssh)
    _assert_host_key_pinned(stored)
