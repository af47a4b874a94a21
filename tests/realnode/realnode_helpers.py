"""Shared steps of the real-node tests: bounded waits, graphs, chat completions through a frontend Service."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from dynamo_localcluster.cluster import REPO_ROOT, LocalCluster
from dynamo_localcluster.demo import RELEASE
from dynamo_localcluster.realnode import layout
from support import graphs
from support.poll import wait_for

EXAMPLES = REPO_ROOT / "examples"
NAMESPACE = "dynamo-system"
OPERATOR_SELECTOR = "app.kubernetes.io/name=dynamo-operator,app.kubernetes.io/component=manager"
# how the real-node tests poll (support.poll.wait_for): a real process answers in seconds, not in tenths,
# and while it starts its port refuses connections, which counts as "not yet"
SLOW = {"interval": 1.0, "retry_on": (Exception,)}


@dataclass
class Platform:
    """The chart installed for real on the node: what the install did, for the tests to check."""

    cluster: LocalCluster
    install_seconds: float
    hook_jobs: dict[str, dict] = field(default_factory=dict)  # name -> last status seen during install

    def kubectl(self, *args: str, check: bool = True, timeout: float = 120, input: str | None = None) -> str:
        return kubectl(self.cluster, *args, check=check, timeout=timeout, input=input)


def kubectl(
    cluster: LocalCluster, *args: str, check: bool = True, timeout: float = 120, input: str | None = None
) -> str:
    r = subprocess.run(
        ["kubectl", *args], env=cluster.env, capture_output=True, text=True, timeout=timeout, input=input
    )
    if check and r.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed ({r.returncode}): {r.stderr}{r.stdout}")
    return r.stdout


# What a module starts ahead (its ``AHEAD`` values): example files, or a function that starts its graphs
# (and whatever they need first) in the namespace it is given.
Plan = Sequence[str] | Callable[["Platform", str], None]
# prefix -> the namespace ``start_ahead`` made for it and started graphs in, until a fixture takes it
_AHEAD: dict[str, str] = {}
# namespace -> when its graphs were started (time.monotonic()), for tests that report how long things took
STARTED: dict[str, float] = {}


def _new_namespace(platform: Platform, prefix: str) -> str:
    ns = f"{prefix}-{uuid.uuid4().hex[:6]}"
    platform.kubectl("create", "namespace", ns)
    return ns


def _start_plan(platform: Platform, ns: str, plan: Plan) -> None:
    STARTED[ns] = time.monotonic()
    if callable(plan):
        plan(platform, ns)
    else:
        start(platform, ns, *plan)


def scratch_namespace(platform: Platform, prefix: str, plan: Plan = ()) -> Iterator[str]:
    """A fresh namespace ``<prefix>-<random>`` for a fixture to yield: the one ``start_ahead`` made for
    ``prefix``, its graphs already starting, if any; else a new one, ``plan`` started in it now. Deleted
    (not waited for) after."""
    ns = _AHEAD.pop(prefix, None)
    if ns is None:
        ns = _new_namespace(platform, prefix)
        _start_plan(platform, ns, plan)
    yield ns
    platform.kubectl("delete", "namespace", ns, "--wait=false", check=False)


def start_ahead(platform: Platform, plans: dict[str, Plan]) -> None:
    """Starts graphs for modules that run later: ``{namespace prefix: plan}`` (a module's ``AHEAD``).

    Why: every graph takes its start-up (a frontend waits a minute for its first readiness probe: ``start``;
    a mocker worker, a checkpoint Job, an MPI group some tens of seconds); started together as soon as the
    platform is installed, the graphs of every module start side by side, while the modules before them
    run. The module's fixture gets the namespace from ``scratch_namespace`` and its tests wait for what
    they need (``deploy``: an unchanged re-apply, then the wait).
    """
    for prefix, plan in plans.items():
        assert prefix not in _AHEAD, f"two modules start graphs ahead under the prefix {prefix!r}"
        _AHEAD[prefix] = _new_namespace(platform, prefix)
        _start_plan(platform, _AHEAD[prefix], plan)


def drop_ahead(platform: Platform) -> None:
    """Deletes the namespaces ``start_ahead`` made that no fixture took (a module that did not run)."""
    while _AHEAD:
        _, ns = _AHEAD.popitem()
        platform.kubectl("delete", "namespace", ns, "--wait=false", check=False)


def apply_doc(platform: Platform, ns: str, doc: dict) -> None:
    """``kubectl apply`` of one object (a dict) in ``ns``."""
    platform.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(doc))


def platform_service_ip(platform: Platform, service: str) -> str:
    """The ClusterIP of a Service of the installed platform (this machine reaches it through kube-proxy)."""
    svc = json.loads(platform.kubectl("get", "svc", service, "-n", NAMESPACE, "-o", "json"))
    return svc["spec"]["clusterIP"]


def operator_pods(platform: Platform) -> list[dict]:
    return json.loads(
        platform.kubectl("get", "pods", "-n", NAMESPACE, "-l", OPERATOR_SELECTOR, "-o", "json")
    )["items"]


def example(name: str) -> dict:
    return yaml.safe_load((EXAMPLES / name).read_text())


def runtime_image() -> str:
    """The runtime image (``make images``) as the examples name it: the one reference tests deploy."""
    (worker,) = [c for c in example("mocker-agg.yaml")["spec"]["components"] if c["name"] == "MockerWorker"]
    (main,) = worker["podTemplate"]["spec"]["containers"]
    return main["image"]


def pod_ready(pod: dict) -> bool:
    """Ready by the kubelet's probes, and not on its way out (a terminating pod may still say Ready)."""
    if pod["metadata"].get("deletionTimestamp"):
        return False
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


def dgd_state(cluster: LocalCluster, namespace: str, name: str) -> dict:
    from kubernetes import client

    with cluster.api_client() as api:
        obj = client.CustomObjectsApi(api).get_namespaced_custom_object(
            "nvidia.com", "v1beta1", namespace, "dynamographdeployments", name
        )
    return obj.get("status") or {}


def service_url(cluster: LocalCluster, namespace: str, name: str, port: int) -> str:
    """``http://<ClusterIP>:<port>``: reached from this machine through kube-proxy's rules, like a pod
    would."""
    from kubernetes import client

    with cluster.api_client() as api:
        svc = client.CoreV1Api(api).read_namespaced_service(name, namespace)
    return f"http://{svc.spec.cluster_ip}:{port}"


def chat_completion(base_url: str, model: str = "tiny", content: str = "Hello!", max_tokens: int = 8) -> dict:
    body = {"model": model, "messages": [{"role": "user", "content": content}], "max_tokens": max_tokens}
    req = urllib.request.Request(
        f"{base_url}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def models(base_url: str) -> list[str]:
    with urllib.request.urlopen(f"{base_url}/v1/models", timeout=10) as r:
        return [m["id"] for m in json.loads(r.read()).get("data", [])]


def is_completion(doc: dict, model: str = "tiny") -> bool:
    choice = (doc.get("choices") or [{}])[0]
    usage = doc.get("usage") or {}
    return (
        doc.get("object") == "chat.completion"
        and doc.get("model") == model
        and choice.get("finish_reason") in ("length", "stop")
        and usage.get("completion_tokens", 0) > 0
        and usage.get("prompt_tokens", 0) > 0
    )


def save(path: Path, doc: dict) -> None:
    path.write_text(json.dumps(doc, indent=2))


def config_digest(image) -> str:
    """The config digest of a built image (what the CRI reports as a container's imageID)."""
    directory = image.archive.parent
    meta = json.loads((directory / "image.json").read_text())
    algo, digest = meta["digest"].split(":", 1)
    manifest = json.loads((directory / "oci" / "blobs" / algo / digest).read_text())
    return manifest["config"]["digest"]


# ---- graphs: deployed, diagnosed, asked -------------------------------------------------------------

# The frontend's default readiness probe starts after 60 s (seed 000) and runs every 60 s.
READY_TIMEOUT = float(os.environ.get("DYNAMO_REALNODE_READY_TIMEOUT", "360"))


def start(platform: Platform, ns: str, *examples: str) -> None:
    """Applies examples without waiting for them.

    Why: a graph's frontend is not Ready before its readiness probe's first run, 60 s after it starts (seed
    000), so a module whose tests each ``deploy`` a graph waits that minute once per graph; starting them
    all in its first fixture waits it once. ``deploy`` then re-applies (unchanged) and waits.
    """
    for name in examples:
        platform.kubectl("apply", "-n", ns, "-f", str(EXAMPLES / name))


def deploy(platform: Platform, ns: str, example: str) -> tuple[str, float]:
    """Applies an example; returns its name and the seconds until the DGD was ``successful`` (from this
    call: less than the graph's start-up when ``start`` applied it earlier)."""
    started = time.monotonic()
    start(platform, ns, example)
    name = example.removesuffix(".yaml")
    wait_for(
        lambda: dgd_state(platform.cluster, ns, name).get("state") == "successful",
        READY_TIMEOUT,
        lambda: f"{name} to become successful\n{diagnosis(platform, ns)}",
        **SLOW,
    )
    return name, time.monotonic() - started


def diagnosis(platform: Platform, ns: str) -> str:
    """The pods and the warnings the kubelet recorded (a failing probe names itself there)."""
    pods = platform.kubectl("get", "pods", "-n", ns, "-o", "wide", check=False)
    events = platform.kubectl(
        "get",
        "events",
        "-n",
        ns,
        "--field-selector",
        "type=Warning",
        "-o",
        "custom-columns=OBJECT:.involvedObject.name,REASON:.reason,MESSAGE:.message",
        check=False,
    )
    return f"{pods}\n{events}"


def main_env(pod: dict) -> dict[str, str]:
    """The literal environment of a pod's ``main`` container (the runtime's)."""
    (main,) = [c for c in pod["spec"]["containers"] if c["name"] == "main"]
    return {e["name"]: e.get("value", "") for e in main.get("env", [])}


def operator_log(platform: Platform, mentioning: str, tail: int = 40) -> str:
    """The operator pods' log lines that mention ``mentioning`` (a namespace, an object's name): why a child
    was not created is said there (a refused create names the admission webhook or policy)."""
    lines = []
    for pod in operator_pods(platform):
        name = pod["metadata"]["name"]
        log = platform.kubectl("logs", "-n", NAMESPACE, name, check=False)
        lines += [f"{name}: {line}" for line in log.splitlines() if mentioning in line]
    return "\n".join(lines[-tail:])


def pod_list(platform: Platform, ns: str, component: str, graph: str | None = None) -> list[dict]:
    selector = f"nvidia.com/dynamo-component={component}"
    if graph:
        selector += f",nvidia.com/dynamo-graph-deployment-name={graph}"
    return json.loads(platform.kubectl("get", "pods", "-n", ns, "-l", selector, "-o", "json"))["items"]


def first_completion(platform: Platform, ns: str, name: str) -> tuple[dict, str]:
    url = service_url(platform.cluster, ns, f"{name}-frontend", 8000)
    wait_for(lambda: "tiny" in models(url), 120, "the frontend to list the model", **SLOW)
    doc = wait_for(lambda: chat_completion(url), 60, "a chat completion", **SLOW)
    return doc, url


# ---- multinode graphs on the LeaderWorkerSet pathway ------------------------------------------------

LWS_RESOURCE = "leaderworkersets.leaderworkerset.x-k8s.io"
LWS_LABELS = "leaderworkerset.sigs.k8s.io"
REAL_NODE = {"nodeSelector": dict(layout.NODE_SELECTOR), "tolerations": [dict(layout.TOLERATION)]}


def stub_graph(
    name: str,
    backend: str,
    worker: dict,
    files: list[dict],
    env: Sequence[dict] = (),
    annotations: dict | None = None,
) -> dict:
    """A graph of one multinode ``worker`` on the real node (the LeaderWorkerSet pathway: no Grove) whose
    engine is a stub: ConfigMap ``stub-engine``'s ``files`` (its items) mounted at ``/stub``, first on
    PYTHONPATH, and ``env`` besides."""
    pod = worker["podTemplate"]["spec"]
    (main,) = pod["containers"]
    main["imagePullPolicy"] = "Never"
    main["env"] = [{"name": "PYTHONPATH", "value": "/stub"}, *env]
    main["volumeMounts"] = [{"name": "stub-engine", "mountPath": "/stub", "readOnly": True}]
    pod["volumes"] = [{"name": "stub-engine", "configMap": {"name": "stub-engine", "items": files}}]
    pod.update(REAL_NODE)
    metadata = {"annotations": {"nvidia.com/enable-grove": "false", **(annotations or {})}}
    return graphs.dgd(worker, name=name, namespace=None, metadata=metadata, backendFramework=backend)


def pod_json(platform: Platform, ns: str, name: str) -> dict:
    return json.loads(platform.kubectl("get", "pod", "-n", ns, name, "-o", "json"))


def main_log(platform: Platform, ns: str, name: str) -> str:
    return platform.kubectl("logs", "-n", ns, name, "-c", "main", check=False)


def apply_with_stub(platform: Platform, ns: str, graph: dict, stub: dict[str, str]) -> None:
    """ConfigMap ``stub-engine`` (a stub engine's files, mounted by the graph's pods) and ``graph``."""
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "stub-engine"}, "data": stub}
    for doc in (config_map, graph):
        apply_doc(platform, ns, doc)


def operator_made_lws(platform: Platform, ns: str, lws_name: str) -> dict:
    """The LeaderWorkerSet the operator created (the diagnosis names why not: a refused create is in the
    operator's log and the namespace's Events)."""
    return wait_for(
        lambda: json.loads(platform.kubectl("get", LWS_RESOURCE, "-n", ns, lws_name, "-o", "json")),
        120,
        lambda: (
            f"the operator to create LeaderWorkerSet {lws_name}\n{diagnosis(platform, ns)}\n"
            f"the operator's log:\n{operator_log(platform, ns)}"
        ),
        **SLOW,
    )


def made_by_the_controller(platform: Platform, ns: str, lws: dict, pods: tuple[str, ...]) -> None:
    """The pods are the LWS controller's, not anyone else's: labelled as it labels them, the leader's
    StatefulSet owned by the LeaderWorkerSet."""
    name = lws["metadata"]["name"]
    for pod in pods:
        labels = pod_json(platform, ns, pod)["metadata"]["labels"]
        assert labels[f"{LWS_LABELS}/name"] == name and labels[f"{LWS_LABELS}/group-index"] == "0", labels
    sets = json.loads(platform.kubectl("get", "statefulsets", "-n", ns, "-o", "json"))["items"]
    owners = {
        s["metadata"]["name"]: [o["uid"] for o in s["metadata"].get("ownerReferences", [])] for s in sets
    }
    assert lws["metadata"]["uid"] in owners.get(name, []), owners


# ---- the bundled NATS with per-namespace accounts (the chart's default) -------------------------------

NATS_CLIENT_SECRET = "dynamo-nats-client"  # natsAuth.secretName's default
NATS_SERVER_NAME = f"{RELEASE}-nats.{NAMESPACE}.svc.cluster.local"  # what NATS_SERVER names


def nats_client_tls(platform: Platform, ns: str, directory: Path) -> ssl.SSLContext:
    """A TLS context with the namespace's NATS certificate, from the Secret the operator wrote there: a
    client logged in with it is in the namespace's account."""
    secret = json.loads(platform.kubectl("get", "secret", NATS_CLIENT_SECRET, "-n", ns, "-o", "json"))
    assert secret["type"] == "kubernetes.io/tls", secret["type"]
    directory.mkdir(parents=True)
    for key in ("ca.crt", "tls.crt", "tls.key"):
        (directory / key).write_bytes(base64.b64decode(secret["data"][key]))
        (directory / key).chmod(0o600)
    ctx = ssl.create_default_context(cafile=str(directory / "ca.crt"))
    ctx.load_cert_chain(directory / "tls.crt", directory / "tls.key")
    return ctx


REPRODUCED = "reproduced.json"  # in a cached build's directory: a second build from scratch gave its digest
REPRODUCED_MAX_AGE = 24 * 3600  # seconds a record stands for: the mirror's packages are not in the key


def reproduced(image_dir: Path, now: float | None = None) -> dict | None:
    """The record a passing reproducibility test left in a cached operator build (same digest, younger than a
    day), else None. The cache directory is named by the hash of the build's inputs in the repository and of
    the apt sources (image/build.py ``cache_key``): a change to those is a new directory without a record.
    The package versions the Debian mirror serves are not in that hash, so a record expires after a day and
    the next run builds twice again: a mirror update that changes the image is still caught, daily."""
    try:
        meta = json.loads((image_dir / "image.json").read_text())
        record = json.loads((image_dir / REPRODUCED).read_text())
        at = time.mktime(time.strptime(record["at"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    except (OSError, ValueError, KeyError, TypeError):
        return None
    fresh = 0 <= (time.time() if now is None else now) - at < REPRODUCED_MAX_AGE
    return record if fresh and record.get("digest") == meta["digest"] else None
