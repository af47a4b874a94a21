"""MPI over SSH for real: a TensorRT-LLM-shaped multinode graph on the LeaderWorkerSet pathway.

The operator rewrites the worker's ``python3 -m dynamo.trtllm`` launch (docs/multinode.md): the worker pod
runs ``sshd`` on the rendered port (2222) with the namespace's MPI SSH Secret (keys the operator generated
for this namespace: docs/storage.md), the leader pod runs ``mpirun -H <leader>,<worker>`` whose
``plm_rsh_args`` log in there with that Secret's key and pin its host key. Here that really happens: the
LWS controller (a real Pod) makes the two pods from the MPI engine image (``image/build.py mpi``: Debian's
OpenMPI, mpi4py and OpenSSH), the leader's ``mpirun`` reaches the worker's sshd, OpenMPI's ``orted`` starts
rank 1 there, and the ranks talk MPI over the pod network.

Stand-ins, said plainly: the engine (``stub/mpi_engine.py`` as ``dynamo.trtllm``, and
``stub/trtllm-llmapi-launch``, from a ConfigMap: each rank says where it runs and how it got there, then
the ranks ``allgather`` their host names over MPI) and the GPUs (``fake_gpus``: one ``nvidia.com/gpu`` a pod,
an extended resource the node advertises without having it; the operator needs the count for ``mpirun
-n``). Everything else is the operator's rendering, the LWS controller, the node DNS, OpenSSH and OpenMPI.

The negative controls: a key of another graph namespace (the Secret the operator made there) is refused by
this graph's sshd with the same ssh options the rendered ``mpirun`` uses (issue 30: per-namespace keys),
and that namespace's ``known_hosts`` does not accept this graph's worker (host keys are per namespace too).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from dynamo_operator.render.multinode import MPI_RSH_ARGS
from dynamo_operator.render.ports import TRTLLM_SSH_PORT
from realnode_helpers import (
    Platform,
    apply_with_stub,
    diagnosis,
    made_by_the_controller,
    main_log,
    operator_made_lws,
    pod_json,
    pod_ready,
    scratch_namespace,
    stub_graph,
)
from support import graphs
from support.poll import wait_for

STUB = Path(__file__).parent / "stub"
GRAPH = "trtllm-mn"
LWS_NAME = f"{GRAPH}-trtllmworker-0"
LEADER, WORKER = f"{LWS_NAME}-0", f"{LWS_NAME}-0-1"
SECRET = "mpi-run-ssh-secret"  # the chart's dynamo.mpiRun.secretName (mpi.sshSecretName)
KEYS_FOR = "nvidia.com/dynamo-mpi-ssh-keys-for"
PATH = "/stub/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def mpi_image() -> str:
    from dynamo_localcluster.realnode.node import built_image

    return built_image("mpi").ref


def trtllm_graph(replicas: int = 1) -> dict:
    """TensorRT-LLM over 2 nodes of 1 (fake) GPU, tensor parallel 2: ``mpirun -n 2`` across the pods."""
    worker = graphs.component(
        "TrtllmWorker",
        replicas=replicas,
        image=mpi_image(),
        command=["python3", "-m", "dynamo.trtllm"],
        args=["--model-path", "/models/tiny", "--tensor-parallel-size", "2"],
        gpus=1,
        nodes=2,
    )
    files = [
        {"key": "init", "path": "dynamo/__init__.py"},
        {"key": "init", "path": "dynamo/trtllm/__init__.py"},
        {"key": "main", "path": "dynamo/trtllm/__main__.py"},
        {"key": "launch", "path": "bin/trtllm-llmapi-launch", "mode": 0o755},
    ]
    # PATH puts the stub's trtllm-llmapi-launch first; the rendered mpirun forwards it (-x PATH) to rank 1
    return stub_graph(GRAPH, "trtllm", worker, files, env=[{"name": "PATH", "value": PATH}])


def ssh_secret(platform: Platform, ns: str) -> dict[str, bytes]:
    secret = json.loads(platform.kubectl("get", "secret", SECRET, "-n", ns, "-o", "json"))
    assert (secret["metadata"].get("annotations") or {}).get(KEYS_FOR) == ns, secret["metadata"]
    return {k: base64.b64decode(v) for k, v in secret["data"].items()}


def fingerprint(public_key: bytes) -> str:
    """OpenSSH's ``SHA256:`` fingerprint of a public key line (what sshd logs for an accepted key)."""
    blob = base64.b64decode(public_key.split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def exec_in(
    platform: Platform, ns: str, pod: str, script: str, stdin: bytes = b""
) -> subprocess.CompletedProcess:
    argv = ["kubectl", "exec", "-i", "-n", ns, pod, "-c", "main", "--", "bash", "-c", script]
    return subprocess.run(argv, env=platform.cluster.env, input=stdin, capture_output=True, timeout=120)


def start_mpi_graph(platform: Platform, ns: str) -> None:
    """The stub engine's ConfigMap and the graph (the operator makes the LeaderWorkerSet, its controller the
    pods; they schedule once the node advertises its fake GPUs: ``fake_gpus``)."""
    stub = {"init": "", "main": (STUB / "mpi_engine.py").read_text()}
    stub["launch"] = (STUB / "trtllm-llmapi-launch").read_text()
    apply_with_stub(platform, ns, trtllm_graph(), stub)


# started as soon as the platform is installed (conftest's ``platform``: realnode_helpers.start_ahead)
AHEAD = {"mpi": start_mpi_graph}


@pytest.fixture(scope="module")
def mpi_graph(platform: Platform, fake_gpus) -> Iterator[str]:
    """The graph deployed and its group formed: both pods Ready (the worker's sshd answers its TCP probe,
    the leader's rank 0 serves /health once every rank answered over MPI). Yields the namespace."""
    gen = scratch_namespace(platform, "mpi", start_mpi_graph)
    ns = next(gen)
    lws = operator_made_lws(platform, ns, LWS_NAME)

    def state() -> str:
        logs = f"leader:\n{main_log(platform, ns, LEADER)}\nworker:\n{main_log(platform, ns, WORKER)}"
        return f"{diagnosis(platform, ns)}\n{logs}"

    wait_for(
        lambda: all(pod_ready(pod_json(platform, ns, p)) for p in (LEADER, WORKER)),
        300,
        lambda: f"both pods Ready (the worker's sshd, the leader's ranks joined over MPI)\n{state()}",
        interval=1.0,
        retry_on=(Exception,),
    )
    made_by_the_controller(platform, ns, lws, (LEADER, WORKER))
    yield ns
    next(gen, None)


def rank_docs(log: str) -> list[dict]:
    """Every JSON document a rank printed, wherever it sits in the leader's log. ``mpirun`` forwards each
    rank's output as it arrives (rank 1's over the orted's connection), so one rank's line can land in the
    middle of another's or right before its newline (seen in CI: two documents on one line); documents are
    decoded where they start, not line by line."""
    decoder = json.JSONDecoder()
    docs = []
    for match in re.finditer(r'\{"rank"', log):
        try:
            doc, _ = decoder.raw_decode(log, match.start())
        except json.JSONDecodeError:
            continue  # cut by another rank's output: that rank's document is decoded where it starts
        docs.append(doc)
    return docs


def rank_lines(log: str) -> dict[int, dict]:
    """The stub's first document of each rank (where it runs and how it got there)."""
    ranks: dict[int, dict] = {}
    for doc in rank_docs(log):
        if "argv" in doc:
            ranks.setdefault(doc["rank"], doc)
    return ranks


def test_mpirun_reaches_the_worker_over_ssh_with_the_namespaces_key(platform, mpi_graph):
    ns = mpi_graph
    leader, worker = (pod_json(platform, ns, p) for p in (LEADER, WORKER))
    leader_ip, worker_ip = leader["status"]["podIP"], worker["status"]["podIP"]
    log = main_log(platform, ns, LEADER)
    ranks = rank_lines(log)
    print(f"the leader's mpirun output:\n{log}")  # rank 1's lines came from the worker pod
    assert sorted(ranks) == [0, 1], log
    # rank 1 ran in the worker pod, started by an orted that came in over ssh from the leader's address to
    # the rendered sshd port
    assert ranks[1]["host"] == WORKER and ranks[0]["host"] == LEADER, ranks
    client, _, server, port = ranks[1]["ssh"].split()
    assert (client, server, int(port)) == (leader_ip, worker_ip, TRTLLM_SSH_PORT), ranks[1]
    assert ranks[0]["ssh"] is None, ranks[0]  # rank 0 is mpirun's own, on the leader
    assert ranks[1]["argv"] == ["--model-path", "/models/tiny", "--tensor-parallel-size", "2"], ranks[1]
    # the ranks talked MPI (allgather over the pod network): each knows the other's host
    worlds = [doc for doc in rank_docs(log) if "world" in doc]
    assert {w["rank"] for w in worlds} == {0, 1} and all(w["world"] == [LEADER, WORKER] for w in worlds), log
    # the worker's sshd accepted exactly this namespace's key
    keys = ssh_secret(platform, ns)
    accepted = re.findall(
        r"Accepted publickey for root from (\S+) port \d+ ssh2: RSA (SHA256:\S+)",
        main_log(platform, ns, WORKER),
    )
    assert (leader_ip, fingerprint(keys["private.key.pub"])) in accepted, accepted


def test_a_key_from_another_namespace_is_refused_by_this_graphs_sshd(platform, mpi_graph, tmp_path):
    ns = mpi_graph
    gen = scratch_namespace(platform, "mpi-other")
    other = next(gen)
    try:
        # the same graph with no replicas: the operator makes the other namespace its own Secret, no pods
        path = tmp_path / "other.json"
        path.write_text(json.dumps(trtllm_graph(replicas=0)))
        platform.kubectl("apply", "-n", other, "-f", str(path))
        theirs = wait_for(
            lambda: ssh_secret(platform, other),
            60,
            f"the operator's {SECRET} in {other}",
            interval=1.0,
            retry_on=(Exception,),
        )
        ours = ssh_secret(platform, ns)
        assert theirs["private.key"] != ours["private.key"] and theirs["host.key"] != ours["host.key"]
        worker_host = f"{WORKER}.{LWS_NAME}.{ns}"
        own_key = "$HOME/.ssh/id_rsa"
        assert own_key in MPI_RSH_ARGS  # the rendered options, the key swapped for the other namespace's
        opts = (
            "-F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -o ConnectTimeout=10"
        )

        def ssh(rsh_args: str) -> subprocess.CompletedProcess:
            return exec_in(platform, ns, LEADER, f"ssh {opts} {rsh_args} {shlex.quote(worker_host)} hostname")

        # the same command with this namespace's key logs in (the control for the refusals below)
        ok = ssh(MPI_RSH_ARGS)
        assert ok.returncode == 0 and ok.stdout.decode().strip() == WORKER, ok
        # the other namespace's user key: refused by this graph's sshd
        put = exec_in(platform, ns, LEADER, "umask 077 && cat > /tmp/other.key", theirs["private.key"])
        assert put.returncode == 0, put
        refused = ssh(MPI_RSH_ARGS.replace(own_key, "/tmp/other.key"))
        print(f"ssh with {other}'s key: exit {refused.returncode}: {refused.stderr.decode().strip()}")
        assert refused.returncode == 255 and b"Permission denied (publickey)" in refused.stderr, refused
        # the other namespace's known_hosts: this graph's worker is not the host it pins
        put = exec_in(platform, ns, LEADER, "cat > /tmp/other_known_hosts", theirs["known_hosts"])
        assert put.returncode == 0, put
        known = "$HOME/.ssh/known_hosts"
        assert known in MPI_RSH_ARGS
        unknown = ssh(MPI_RSH_ARGS.replace(known, "/tmp/other_known_hosts"))
        assert unknown.returncode == 255 and b"Host key verification failed" in unknown.stderr, unknown
    finally:
        next(gen, None)
