"""Multinode launch rewriting: exact commands, env, ports and probes per backend x role x pathway, flag
dedupe and conflicts, and the shapes that cannot launch (the same rules admission reports).

Expected commands and messages are spelled out whole, so some literals run past the line limit.
"""

# ruff: noqa: E501

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from dynamo_operator import sshkeys
from dynamo_operator.render import RenderContext, RenderError
from dynamo_operator.render.info import component_info
from dynamo_operator.render.multinode import (
    grove_addressing,
    grove_clique_names,
    launch_problems,
    lws_addressing,
)
from dynamo_operator.render.pod import build_pod_template
from dynamo_operator.webhooks.validation import validate

CTX = RenderContext(operator_config={"mpi": {"sshSecretName": "mpi-ssh"}})
GPU8 = {"limits": {"nvidia.com/gpu": "8"}}
GROVE_LEADER = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-vllmworker-ldr-0.$(GROVE_HEADLESS_SERVICE)"
PROBES = {"livenessProbe", "readinessProbe", "startupProbe"}


def dcd(backend="vllm", nodes=2, ctype="worker", annotations=None, **main) -> dict:
    container = {"name": "main", "image": "img", **main}
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": "g-vllmworker",
            "namespace": "ns",
            "labels": {"nvidia.com/dynamo-graph-deployment-name": "g"},
            "annotations": annotations or {},
        },
        "spec": {
            "name": "VllmWorker",
            "type": ctype,
            "backendFramework": backend,
            "multinode": {"nodeCount": nodes},
            "podTemplate": {"spec": {"containers": [container]}},
        },
    }


def vllm(*args, annotations=None, nodes=2, **main) -> dict:
    return dcd(
        "vllm", nodes, annotations=annotations, command=["python3", "-m", "dynamo.vllm"], args=list(args),
        resources=GPU8, **main,
    )  # fmt: skip


def pod_spec(d: dict, role: str, pathway: str = "lws") -> dict:
    addr = lws_addressing() if pathway == "lws" else grove_addressing(d["spec"]["name"])
    return build_pod_template(component_info(d), CTX, role, addr)["spec"]


def container(d: dict, role: str, pathway: str = "lws") -> dict:
    return pod_spec(d, role, pathway)["containers"][0]


def launch(c: dict) -> list[str]:
    return [*c.get("command", []), *c.get("args", [])]


def port_names(c: dict) -> list[str]:
    return [p["name"] for p in c.get("ports", [])]


# ---------------------------------------------------------------------------------------------- addressing


def test_addressing_per_pathway():
    assert grove_clique_names("VllmWorker") == ("vllmworker-ldr", "vllmworker-wkr")
    g = grove_addressing("VllmWorker")
    assert (g.pathway, g.leader_host, g.node_rank, g.rank_needs_shell) == (
        "grove", GROVE_LEADER, "$((GROVE_PCLQ_POD_INDEX + 1))", True,
    )  # fmt: skip
    assert g.hosts(3) == [
        GROVE_LEADER,
        "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-vllmworker-wkr-0.$(GROVE_HEADLESS_SERVICE)",
        "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-vllmworker-wkr-1.$(GROVE_HEADLESS_SERVICE)",
    ]
    a = lws_addressing()
    assert (a.pathway, a.leader_host, a.node_rank, a.rank_needs_shell, a.needs_dns_wait) == (
        "lws", "$(LWS_LEADER_ADDRESS)", "$(LWS_WORKER_INDEX)", False, True,
    )  # fmt: skip
    assert a.hosts(2) == ["$(LWS_LEADER_ADDRESS)", "${LWS_LEADER_ADDRESS%%.*}-1.${LWS_LEADER_ADDRESS#*.}"]


def test_build_pod_template_defaults_to_lws_addressing():
    d = dcd("sglang", command=["python3", "-m", "dynamo.sglang"])
    pod = build_pod_template(component_info(d), CTX, "worker")
    assert pod == build_pod_template(component_info(d), CTX, "worker", lws_addressing())


# ---------------------------------------------------------------------------------------------- vLLM


@pytest.mark.parametrize(
    ("pathway", "leader_host"), [("lws", "$(LWS_LEADER_ADDRESS)"), ("grove", GROVE_LEADER)]
)
def test_vllm_ray_leader_runs_head_then_vllm_workers_join(pathway, leader_host):
    d = vllm("--model", "m", "--tensor-parallel-size", "16")
    leader, worker = container(d, "leader", pathway), container(d, "worker", pathway)
    assert launch(leader) == [
        "/bin/sh",
        "-c",
        "ray start --head --port=6379 && exec python3 -m dynamo.vllm --model m --tensor-parallel-size 16 "
        "--distributed-executor-backend ray",
    ]
    assert launch(worker) == ["/bin/sh", "-c", f"exec ray start --address={leader_host}:6379 --block"]
    assert port_names(leader) == ["system", "nixl", "ray-head"]
    assert {"name": "ray-head", "containerPort": 6379, "protocol": "TCP"} in leader["ports"]
    assert port_names(worker) == ["system", "nixl"]
    assert set(leader) >= PROBES and not PROBES & set(worker)
    env = {e["name"] for e in leader["env"]}
    assert "VLLM_NIXL_SIDE_CHANNEL_HOST" not in env  # Ray: no side-channel host


def test_vllm_ray_leader_keeps_a_user_executor_flag_once():
    d = vllm("--tensor-parallel-size", "16", "--distributed-executor-backend", "ray")
    script = container(d, "leader")["args"][0]
    assert script.count("--distributed-executor-backend") == 1
    assert script.endswith("--tensor-parallel-size 16 --distributed-executor-backend ray")


def test_vllm_mp_flags_per_role_and_pathway():
    mp = {"nvidia.com/vllm-distributed-executor-backend": "mp"}
    d = vllm("--tensor-parallel-size", "16", annotations=mp)
    common = ["--distributed-executor-backend", "mp", "--nnodes", "2"]
    assert launch(container(d, "leader")) == [
        "python3", "-m", "dynamo.vllm", "--tensor-parallel-size", "16", *common,
        "--master-addr", "$(LWS_LEADER_ADDRESS)", "--master-port", "29500", "--node-rank", "0",
    ]  # fmt: skip
    # LWS ranks are plain $(VAR) references the kubelet expands: no shell
    assert launch(container(d, "worker")) == [
        "python3", "-m", "dynamo.vllm", "--tensor-parallel-size", "16", *common,
        "--master-addr", "$(LWS_LEADER_ADDRESS)", "--master-port", "29500",
        "--node-rank", "$(LWS_WORKER_INDEX)", "--headless",
    ]  # fmt: skip
    # Grove ranks are shell arithmetic: the worker runs under sh -c
    assert launch(container(d, "worker", "grove")) == [
        "/bin/sh",
        "-c",
        "exec python3 -m dynamo.vllm --tensor-parallel-size 16 --distributed-executor-backend mp --nnodes 2 "
        f"--master-addr {GROVE_LEADER} --master-port 29500 --node-rank $((GROVE_PCLQ_POD_INDEX + 1)) --headless",
    ]
    leader = container(d, "leader", "grove")
    assert port_names(leader) == ["system", "nixl", "dist-init"]
    side = {
        "name": "VLLM_NIXL_SIDE_CHANNEL_HOST",
        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}},
    }
    for c in (leader, container(d, "worker", "grove")):
        assert side in c["env"]


@pytest.mark.parametrize("pathway", ["lws", "grove"])
def test_vllm_data_parallel_flags(pathway):
    d = vllm("--tensor-parallel-size", "2", "--data-parallel-size", "8")
    leader_host = "$(LWS_LEADER_ADDRESS)" if pathway == "lws" else GROVE_LEADER
    rank = "LWS_WORKER_INDEX" if pathway == "lws" else "GROVE_PCLQ_POD_INDEX + 1"
    tail = f"--data-parallel-address {leader_host} --data-parallel-rpc-port 13445"
    leader, worker = container(d, "leader", pathway), container(d, "worker", pathway)
    assert launch(leader) == [
        "python3", "-m", "dynamo.vllm", "--tensor-parallel-size", "2", "--data-parallel-size", "8",
        "--data-parallel-hybrid-lb", "--data-parallel-size-local", "4", "--data-parallel-start-rank", "0",
        *tail.split(),
    ]  # fmt: skip
    assert launch(worker) == [
        "/bin/sh",
        "-c",
        "exec python3 -m dynamo.vllm --tensor-parallel-size 2 --data-parallel-size 8 --data-parallel-hybrid-lb "
        f"--data-parallel-size-local 4 --data-parallel-start-rank $(( 4 * ({rank}) )) {tail}",
    ]
    assert port_names(leader) == ["system", "nixl", "dp-rpc"]
    assert set(leader) >= PROBES and not PROBES & set(worker)


@pytest.mark.parametrize("pathway", ["lws", "grove"])
@pytest.mark.parametrize(
    "args", [("--tensor-parallel-size", "4"), ("-tp", "2", "--data-parallel-size", "4"), ("--model", "m")]
)
def test_vllm_that_fits_one_node_runs_as_written_on_every_node(pathway, args):
    """Upstream's rule when TP x PP x DP <= a node's GPUs: no distributed flag is added, each node runs the
    launch as written (its own engine); the multinode probe rules still apply (workers lose theirs)."""
    d = vllm(*args)
    leader, worker = container(d, "leader", pathway), container(d, "worker", pathway)
    assert launch(leader) == launch(worker) == ["python3", "-m", "dynamo.vllm", *args]
    assert port_names(leader) == port_names(worker) == ["system", "nixl"]
    assert set(leader) >= PROBES and not PROBES & set(worker)
    assert launch_problems(d["spec"], 2, "vllm", {}) == []
    assert validate("DynamoComponentDeployment", "v1beta1", d).errors == []


def test_vllm_that_fits_one_node_needs_no_explicit_command():
    """Nothing is rewritten, so the image's entrypoint may run the engine (upstream accepts that too)."""
    d = dcd("vllm", args=["--model", "m", "--tensor-parallel-size", "4"], resources=GPU8)
    leader, worker = container(d, "leader"), container(d, "worker")
    assert (
        "command" not in leader
        and leader["args"] == worker["args"] == d["spec"]["podTemplate"]["spec"]["containers"][0]["args"]
    )
    assert validate("DynamoComponentDeployment", "v1beta1", d).errors == []


# ---------------------------------------------------------------------------------------------- SGLang


def test_sglang_exec_form_per_pathway():
    d = dcd("sglang", command=["python3", "-m", "dynamo.sglang"], args=["--model", "m"])
    assert launch(container(d, "leader")) == [
        "python3", "-m", "dynamo.sglang", "--model", "m",
        "--dist-init-addr", "$(LWS_LEADER_ADDRESS):29500", "--nnodes", "2", "--node-rank", "0",
    ]  # fmt: skip
    assert launch(container(d, "worker")) == [
        "python3", "-m", "dynamo.sglang", "--model", "m",
        "--dist-init-addr", "$(LWS_LEADER_ADDRESS):29500", "--nnodes", "2", "--node-rank", "$(LWS_WORKER_INDEX)",
    ]  # fmt: skip
    g = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-vllmworker-ldr-0.$(GROVE_HEADLESS_SERVICE)"
    assert launch(container(d, "worker", "grove")) == [
        "/bin/sh",
        "-c",
        f"exec python3 -m dynamo.sglang --model m --dist-init-addr {g}:29500 --nnodes 2 "
        "--node-rank $((GROVE_PCLQ_POD_INDEX + 1))",
    ]
    leader = container(d, "leader", "grove")
    assert port_names(leader) == ["system", "nixl", "dist-init"]
    assert set(leader) >= PROBES and not PROBES & set(container(d, "worker", "grove"))


def test_sglang_shell_form_gets_flags_before_shell_operators():
    script = "cd /w && python3 -m dynamo.sglang --model 'a b' | tee /tmp/log"
    d = dcd("sglang", command=["sh", "-c"], args=[script])
    assert launch(container(d, "worker")) == [
        "sh",
        "-c",
        "cd /w && python3 -m dynamo.sglang --model 'a b' --dist-init-addr $(LWS_LEADER_ADDRESS):29500 "
        "--nnodes 2 --node-rank $(LWS_WORKER_INDEX) | tee /tmp/log",
    ]


def test_user_flag_with_the_same_value_is_kept_once():
    d = dcd("sglang", command=["python3", "-m", "dynamo.sglang"], args=["--nnodes=2"])
    assert launch(container(d, "leader")) == [
        "python3", "-m", "dynamo.sglang", "--nnodes=2",
        "--dist-init-addr", "$(LWS_LEADER_ADDRESS):29500", "--node-rank", "0",
    ]  # fmt: skip


# ---------------------------------------------------------------------------------------------- TRT-LLM

SSH_SETUP = (
    "mkdir -p $HOME/.ssh && chmod 700 $HOME/.ssh && cp /ssh-pk/private.key $HOME/.ssh/id_rsa && "
    "cp /ssh-pk/private.key.pub $HOME/.ssh/id_rsa.pub && cp /ssh-pk/private.key.pub $HOME/.ssh/authorized_keys "
    "&& chmod 600 $HOME/.ssh/id_rsa $HOME/.ssh/authorized_keys && { cat /ssh-pk/known_hosts 2>/dev/null; echo; "
    "printf '* %s\\n' \"$(cat /ssh-pk/private.key.pub)\"; } > $HOME/.ssh/known_hosts"
)


def trtllm(**main) -> dict:
    return dcd(
        "trtllm", command=["python3", "-m", "dynamo.trtllm"], args=["--model", "m"], resources=GPU8, **main
    )


def test_trtllm_worker_runs_sshd_with_tcp_readiness():
    c = container(trtllm(), "worker", "grove")
    assert launch(c) == [
        "/bin/sh",
        "-c",
        f"{SSH_SETUP} && (mkdir -p /run/sshd 2>/dev/null || true) && (cp /ssh-pk/host.key $HOME/.ssh/host_key "
        "2>/dev/null || cp /ssh-pk/private.key $HOME/.ssh/host_key) && chmod 600 $HOME/.ssh/host_key && "
        "exec /usr/sbin/sshd -D -e -p 2222 -h $HOME/.ssh/host_key -o StrictModes=yes "
        "-o PasswordAuthentication=no -o AuthorizedKeysFile=$HOME/.ssh/authorized_keys "
        "-o PidFile=$HOME/.ssh/sshd.pid",
    ]
    assert c["readinessProbe"] == {
        "tcpSocket": {"port": 2222}, "initialDelaySeconds": 20, "periodSeconds": 20, "timeoutSeconds": 5,
        "failureThreshold": 10,
    }  # fmt: skip
    assert "livenessProbe" not in c and "startupProbe" not in c
    assert {"name": "ssh", "containerPort": 2222, "protocol": "TCP"} in c["ports"]
    assert {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "1"} in c["env"]
    assert {"name": "mpi-ssh", "mountPath": "/ssh-pk"} in c["volumeMounts"]
    (vol,) = [v for v in pod_spec(trtllm(), "worker", "grove")["volumes"] if v["name"] == "mpi-ssh"]
    # the Secret mpi.sshSecretName names, owner read only (not 0644)
    assert vol["secret"] == {"secretName": CTX.config("mpi", "sshSecretName"), "defaultMode": 0o400}


def test_trtllm_leader_runs_mpirun_over_ssh_grove():
    c = container(trtllm(env=[{"name": "MY_VAR", "value": "1"}]), "leader", "grove")
    script = c["args"][0]
    assert c["command"] == ["/bin/sh", "-c"]
    hosts = f"{GROVE_LEADER}:8,$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-vllmworker-wkr-0.$(GROVE_HEADLESS_SERVICE):8"
    assert script.startswith(
        f"{SSH_SETUP} && exec mpirun --allow-run-as-root -n 16 -H {hosts} --mca pml ob1 --mca plm_rsh_args "
        '"-p 2222 -i $HOME/.ssh/id_rsa -o StrictHostKeyChecking=yes -o UserKnownHostsFile=$HOME/.ssh/known_hosts '
        '-o GlobalKnownHostsFile=/dev/null -o CheckHostIP=no" -x '
    )
    assert script.endswith(" bash -c 'trtllm-llmapi-launch python3 -m dynamo.trtllm --model m'")
    forwarded = re.findall(r"-x (\S+)", script)
    assert forwarded == sorted(forwarded)
    assert {"MY_VAR", "DYN_NAMESPACE", "OMPI_MCA_orte_keep_fqdn_hostnames", "HF_TOKEN", "PATH"} <= set(
        forwarded
    )
    assert "getent" not in script  # Grove: no DNS wait
    assert set(c) >= PROBES and port_names(c) == ["system", "nixl"]


# ------------------------------------------------------------------ the rendered shell really does that


def _kubelet_expand(text: str, env: dict) -> str:
    """The kubelet's $(VAR) expansion of command/args: defined variables only, everything else verbatim."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), text)


def _run(c: dict, env: dict, tmp_path, stubs: tuple[str, ...]) -> str:
    """Run the container's launch under the real /bin/sh with ``stubs`` that print their argv."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in stubs:
        stub = bin_dir / name
        stub.write_text('#!/bin/sh\nprintf "%s\\n" "$(basename "$0")" "$@" >> "$STUB_LOG"\n')
        stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "argv.log"
    full = {**env, "PATH": f"{bin_dir}:{os.environ['PATH']}", "HOME": str(tmp_path), "STUB_LOG": str(log)}
    argv = [_kubelet_expand(w, env) for w in launch(c)]
    subprocess.run(argv, env=full, check=True, timeout=30, capture_output=True)
    return log.read_text()


def test_grove_data_parallel_worker_start_rank_is_computed_by_the_shell(tmp_path):
    d = vllm("--tensor-parallel-size", "2", "--data-parallel-size", "12", nodes=3)
    grove_env = {
        "GROVE_PCSG_NAME": "g-0-vllmworker", "GROVE_PCSG_INDEX": "0", "GROVE_PCLQ_POD_INDEX": "1",
        "GROVE_HEADLESS_SERVICE": "g-0.ns.svc.cluster.local",
    }  # fmt: skip
    argv = _run(container(d, "worker", "grove"), grove_env, tmp_path, ("python3",)).split("\n")
    assert argv[argv.index("--data-parallel-start-rank") + 1] == "8"  # 4 local ranks x node rank 2
    assert (
        argv[argv.index("--data-parallel-address") + 1]
        == "g-0-vllmworker-0-vllmworker-ldr-0.g-0.ns.svc.cluster.local"
    )


def test_lws_trtllm_leader_waits_for_worker_dns_and_lists_every_host(tmp_path):
    lws_env = {"LWS_LEADER_ADDRESS": "g-vllmworker-0-0.g-vllmworker-0.ns", "LWS_WORKER_INDEX": "0"}
    c = container(trtllm(), "leader")
    out = _run(c, lws_env, tmp_path, ("cp", "chmod", "getent", "mpirun")).split("\n")
    assert out[out.index("getent") + 1 : out.index("getent") + 3] == [
        "hosts",
        "g-vllmworker-0-0-1.g-vllmworker-0.ns",
    ]
    mpirun = out[out.index("mpirun") + 1 :]
    assert (
        mpirun[mpirun.index("-H") + 1]
        == "g-vllmworker-0-0.g-vllmworker-0.ns:8,g-vllmworker-0-0-1.g-vllmworker-0.ns:8"
    )
    assert mpirun[mpirun.index("-n") + 1] == "16"
    # the original launch reaches bash -c as one word; the log ends with a newline
    assert mpirun[-4:] == ["bash", "-c", "trtllm-llmapi-launch python3 -m dynamo.trtllm --model m", ""]


def _mounted_secret(tmp_path, data: dict[str, bytes]):
    """The MPI Secret as the kubelet mounts it: one file per key, mode 0400."""
    keys = tmp_path / "ssh-pk"
    keys.mkdir()
    for name, value in data.items():
        (keys / name).write_bytes(value)
        (keys / name).chmod(0o400)
    return keys


def _run_sshd_setup(tmp_path, keys) -> tuple[Path, list[str]]:
    """The worker's launch for real (cp, chmod, cat, printf) against ``keys``, with a stub sshd."""
    home, stub, log = tmp_path / "home", tmp_path / "sshd", tmp_path / "sshd.argv"
    home.mkdir()
    stub.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$STUB_LOG"\n')
    stub.chmod(0o700)
    script = launch(container(trtllm(), "worker"))[2].replace("/ssh-pk", str(keys))
    script = script.replace("/usr/sbin/sshd", str(stub)).replace("mkdir -p /run/sshd", "true")
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "STUB_LOG": str(log)}
    subprocess.run(["/bin/sh", "-c", script], env=env, check=True, timeout=30, capture_output=True)
    return home / ".ssh", log.read_text().splitlines()


def _pinned(known_hosts: Path, host: str) -> list[str]:
    """The keys OpenSSH's own lookup finds in ``known_hosts`` for ``host`` (ssh-keygen -F)."""
    out = subprocess.run(
        ["ssh-keygen", "-F", host, "-f", str(known_hosts)], capture_output=True, text=True, timeout=30
    )
    return [" ".join(line.split()[1:3]) for line in out.stdout.splitlines() if not line.startswith("#")]


def _key(public_line: bytes) -> str:
    return " ".join(public_line.decode().split()[:2])


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")
def test_worker_sshd_serves_the_secrets_host_key_and_known_hosts_pins_it(tmp_path):
    """With the install hook's Secret: sshd's host key is the Secret's, StrictModes is on, and the
    known_hosts every pod writes accepts that key (and the user key) for a worker on port 2222, no other."""
    pair, host = sshkeys.generate_keypair(key_size=2048), sshkeys.generate_host_key()
    keys = _mounted_secret(tmp_path, {**pair.secret_data(), **host.secret_data()})
    ssh_dir, argv = _run_sshd_setup(tmp_path, keys)
    assert (ssh_dir / "host_key").read_bytes() == host.private_openssh
    assert stat.S_IMODE((ssh_dir / "host_key").stat().st_mode) == 0o600
    assert stat.S_IMODE((ssh_dir / "id_rsa").stat().st_mode) == 0o600
    assert argv[argv.index("-h") + 1] == str(ssh_dir / "host_key")
    assert "StrictModes=yes" in argv and "PasswordAuthentication=no" in argv
    found = _pinned(ssh_dir / "known_hosts", "[g-vllmworker-0-0-1.g-vllmworker-0.ns]:2222")
    assert sorted(found) == sorted([_key(host.public_openssh), _key(pair.public_openssh)])
    other = sshkeys.generate_host_key()
    assert _key(other.public_openssh) not in found


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")
def test_a_secret_without_a_host_key_pins_the_user_key(tmp_path):
    """A Secret in upstream's layout (private.key and private.key.pub only) still works, still pinned:
    the worker serves the user key as its host key and known_hosts holds exactly that key."""
    pair = sshkeys.generate_keypair(key_size=2048)
    keys = _mounted_secret(
        tmp_path, {sshkeys.PRIVATE_KEY: pair.private_openssh, sshkeys.PUBLIC_KEY: pair.public_openssh}
    )
    ssh_dir, _ = _run_sshd_setup(tmp_path, keys)
    assert (ssh_dir / "host_key").read_bytes() == pair.private_openssh
    assert _pinned(ssh_dir / "known_hosts", "[any-worker.ns]:2222") == [_key(pair.public_openssh)]


def _openssh_accepts(signer_key: Path, trusted: Path, tmp_path: Path) -> bool:
    """OpenSSH's own public key check (``ssh-keygen -Y sign`` / ``-Y verify``): a signature by
    ``signer_key`` verifies against ``trusted`` (an authorized_keys or known_hosts file, each line a key
    with a principal pattern in front: what sshd and ssh match a peer's key against)."""
    message = tmp_path / "challenge"
    message.write_bytes(b"mpi ssh challenge")
    signature = Path(f"{message}.sig")
    signature.unlink(missing_ok=True)
    subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-f", str(signer_key), "-n", "mpi", str(message)],
        check=True, capture_output=True, timeout=30,
    )  # fmt: skip
    allowed = tmp_path / "allowed_signers"
    lines = [ln.split(None, 1)[1] if ln.startswith("* ") else ln for ln in trusted.read_text().splitlines()]
    allowed.write_text("".join(f"* {ln}\n" for ln in lines if ln.strip()))
    verify = [
        "ssh-keygen",
        "-Y",
        "verify",
        "-f",
        str(allowed),
        "-I",
        "worker",
        "-n",
        "mpi",
        "-s",
        str(signature),
    ]
    with message.open("rb") as stdin:
        return subprocess.run(verify, stdin=stdin, capture_output=True, timeout=30).returncode == 0


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")
def test_one_namespaces_mpi_keys_are_refused_by_another_namespaces_workers(tmp_path):
    """Two namespaces' Secrets as the operator makes them (``sshkeys.complete_keys``), each set up by the
    worker's launch script for real: namespace B's sshd (its authorized_keys) refuses A's user key, and A's
    leader (its known_hosts) refuses B's host key; each accepts its own. Stand-in: OpenSSH's signature check
    (``ssh-keygen -Y``) in place of an sshd handshake, since this machine has no sshd (openssh-server is not
    installed); the handshake between pods is the real-node MPI test's."""
    dirs = {}
    for ns in ("a", "b"):
        data, made = sshkeys.complete_keys({})
        assert made == [sshkeys.PRIVATE_KEY, sshkeys.HOST_KEY]
        (tmp_path / ns).mkdir()
        dirs[ns], _ = _run_sshd_setup(tmp_path / ns, _mounted_secret(tmp_path / ns, data))
    a, b = dirs["a"], dirs["b"]
    assert _openssh_accepts(b / "id_rsa", b / "authorized_keys", tmp_path)  # B's own leader logs in
    assert not _openssh_accepts(a / "id_rsa", b / "authorized_keys", tmp_path)  # A's key: refused by B
    assert _openssh_accepts(b / "host_key", b / "known_hosts", tmp_path)  # B's worker, pinned by B
    assert not _openssh_accepts(b / "host_key", a / "known_hosts", tmp_path)  # ... not by A's leader
    assert not _openssh_accepts(a / "host_key", b / "known_hosts", tmp_path)


# ---------------------------------------------------------------------------------------------- conflicts


CONFLICTS = [
    (
        dcd("sglang", command=["python3", "-m", "dynamo.sglang"], args=["--nnodes", "3"]),
        "spec.podTemplate.spec.containers[main].args: conflicts with the multinode launch, which needs "
        "--nnodes 2 (multinode.nodeCount is 2) (have --nnodes 3); fix: remove --nnodes or set it to 2",
    ),
    (
        dcd("sglang", command=["python3", "-m", "dynamo.sglang"], args=["--node-rank", "0"]),
        "spec.podTemplate.spec.containers[main].args: --node-rank is set by the operator on each node of a "
        "multinode component (leader address and node rank differ per pod and pathway) (have --node-rank 0); "
        "fix: remove --node-rank from the command",
    ),
    (
        vllm("--tensor-parallel-size", "16", "--distributed-executor-backend", "mp"),
        "spec.podTemplate.spec.containers[main].args: conflicts with the multinode launch, which needs "
        "--distributed-executor-backend ray (the executor comes from the annotation "
        "nvidia.com/vllm-distributed-executor-backend (ray unless it says mp)) (have "
        "--distributed-executor-backend mp); fix: remove --distributed-executor-backend or set it to ray",
    ),
    (
        vllm("--tensor-parallel-size", "2", "--data-parallel-size", "6"),
        "spec.podTemplate.spec.containers[main].args: data-parallel-size 6 does not fill 2 nodes of 4 "
        "data-parallel ranks each (8 GPUs / tensor x pipeline parallel 2) (have --data-parallel-size 6); "
        "fix: set --data-parallel-size to 8",
    ),
    (
        vllm("--tensor-parallel-size", "8", "--pipeline-parallel-size", "4"),
        "spec.podTemplate.spec.containers[main].args: tensor-parallel-size x pipeline-parallel-size = 32 needs "
        "more GPUs than 2 nodes x 8 GPUs (have --tensor-parallel-size 8 --pipeline-parallel-size 4); fix: raise "
        "multinode.nodeCount to 4 or lower the parallel sizes",
    ),
]

IMPOSSIBLE = [
    (
        dcd("vllm", command=["python3", "-m", "dynamo.vllm"], args=["--tensor-parallel-size", "16"]),
        "spec.podTemplate.spec.containers[main].resources: multinode vLLM needs the GPU count of one node to "
        "choose between the tensor/pipeline-parallel and data-parallel launch; fix: set "
        "resources.limits[nvidia.com/gpu] on the main container",
    ),
    (
        dcd("trtllm", command=["python3", "-m", "dynamo.trtllm"]),
        "spec.podTemplate.spec.containers[main].resources: multinode TensorRT-LLM needs the GPU count of one "
        "node to start one MPI rank per GPU (mpirun -n); fix: set resources.limits[nvidia.com/gpu] on the main "
        "container",
    ),
    (
        dcd("sglang", args=["--model", "m"]),
        "spec.podTemplate.spec.containers[main].command: a multinode component needs an explicit command: the "
        "operator adds the distributed launch flags to it (the image's entrypoint is unknown to it); fix: set "
        "command, e.g. [python3, -m, dynamo.vllm], and keep the engine flags in args",
    ),
    (
        dcd("sglang", command=["/entrypoint.sh"]),
        "spec.podTemplate.spec.containers[main].command: the operator can add distributed launch flags only to "
        "a python command or a `sh -c` script, not to '/entrypoint.sh'; fix: use command [python3, -m, "
        "dynamo.<backend>], or [sh, -c] with the python invocation in the script",
    ),
    (
        dcd("sglang", command=["sh", "-c"], args=["exec /run.sh"]),
        "spec.podTemplate.spec.containers[main].args: the shell script does not run `python3 -m "
        "dynamo.<vllm|sglang|trtllm>`, so the operator cannot tell where to add the distributed launch flags; "
        "fix: run the backend as `python3 -m dynamo.<backend> ...` in the script, or use command [python3, -m, "
        "dynamo.<backend>]",
    ),
    (
        dcd("sglang", ctype="frontend", command=["python3", "-m", "dynamo.frontend"]),
        "spec.multinode: only worker, prefill and decode components run across nodes (this one is frontend); "
        "fix: remove multinode, or set type to worker, prefill or decode",
    ),
    (
        dcd(None, command=["python3", "-m", "mytool"]),
        "spec.multinode: the backend is unknown, so the operator cannot tell how to launch it across nodes; "
        "fix: set backendFramework (vllm, sglang or trtllm), or run python3 -m dynamo.<backend>",
    ),
]


@pytest.mark.parametrize(("obj", "message"), CONFLICTS + IMPOSSIBLE)
def test_render_and_admission_report_the_same_problem(obj, message):
    with pytest.raises(RenderError) as err:
        container(obj, "leader")
    assert str(err.value) == f"DynamoComponentDeployment ns/g-vllmworker: {message}"
    # admission says the same thing about the same field, in apimachinery form
    path, _, rest = message.partition(": ")
    detail = re.sub(r" \(have [^)]*(\([^)]*\))?[^)]*\)(?=; fix:)", "", rest).replace("; fix: ", "; ")
    res = validate("DynamoComponentDeployment", "v1beta1", obj)
    assert len(res.errors) == 1, [str(e) for e in res.errors]
    got = res.errors[0]
    assert got.field == path.replace("[main]", "[0]")
    assert got.detail == detail


def test_backend_detected_from_the_command_when_not_declared():
    d = dcd(None, command=["python3", "-m", "dynamo.sglang"])
    assert "--dist-init-addr" in launch(container(d, "leader"))
    assert launch_problems(d["spec"], 2, None, {}) == []


def test_single_node_role_main_is_not_rewritten():
    d = dcd("sglang", nodes=1, command=["python3", "-m", "dynamo.sglang"], args=["--model", "m"])
    del d["spec"]["multinode"]
    c = build_pod_template(component_info(d), CTX, "main")["spec"]["containers"][0]
    assert launch(c) == ["python3", "-m", "dynamo.sglang", "--model", "m"]
    assert port_names(c) == ["system", "nixl"]


def test_vllm_short_parallel_flags_count():
    # TP 8 on 8 GPUs leaves one data-parallel rank per node, so DP 4 needs 4 nodes
    d = vllm("-tp", "8", "-dp=4")
    with pytest.raises(
        RenderError, match=r"data-parallel-size 4 does not fill 2 nodes of 1 data-parallel ranks"
    ):
        container(d, "leader")
    ok = vllm("-tp", "8", "-dp", "2")
    assert "--data-parallel-start-rank" in launch(container(ok, "worker"))


def test_render_cli_prints_the_admission_message(tmp_path):
    """``dynamo-operator render`` refuses the shape with the message admission gives."""
    import yaml
    from click.testing import CliRunner
    from dynamo_operator.render.cli import render_command

    dgd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {
            "backendFramework": "sglang",
            "components": [
                {
                    "name": "Worker",
                    "type": "worker",
                    "multinode": {"nodeCount": 2},
                    "podTemplate": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "main",
                                    "image": "img",
                                    "command": ["python3", "-m", "dynamo.sglang"],
                                    "args": ["--nnodes", "3"],
                                }
                            ]
                        }
                    },
                }
            ],
        },
    }
    (tmp_path / "dgd.yaml").write_text(yaml.safe_dump(dgd))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"orchestrators": {"lws": {"enabled": True}}}))
    result = CliRunner().invoke(
        render_command, ["-f", str(tmp_path / "dgd.yaml"), "--config", str(tmp_path / "config.yaml")]
    )
    assert result.exit_code != 0
    assert (
        "spec.podTemplate.spec.containers[main].args: conflicts with the multinode launch, which needs --nnodes 2 "
        "(multinode.nodeCount is 2) (have --nnodes 3); fix: remove --nnodes or set it to 2"
    ) in result.output
    admission = validate("DynamoGraphDeployment", "v1beta1", dgd).errors
    assert [e.detail for e in admission] == [
        "conflicts with the multinode launch, which needs --nnodes 2 (multinode.nodeCount is 2); remove --nnodes "
        "or set it to 2"
    ]


def test_shell_form_leaders_keep_the_script_around_the_backend():
    script = "cd /w && python3 -m dynamo.vllm --tensor-parallel-size 16 2>&1 | tee log"
    d = dcd("vllm", command=["bash", "-lc"], args=[script], resources=GPU8)
    assert launch(container(d, "leader")) == [
        "/bin/sh",
        "-c",
        "ray start --head --port=6379 || exit 1\n"
        "cd /w && python3 -m dynamo.vllm --tensor-parallel-size 16 --distributed-executor-backend ray 2>&1 | tee log",
    ]
    t = dcd("trtllm", command=["sh", "-c", "cd /w && python3 -m dynamo.trtllm --model 'a b'"], resources=GPU8)
    assert container(t, "leader", "grove")["args"][0].endswith(
        """ bash -c 'cd /w && trtllm-llmapi-launch python3 -m dynamo.trtllm --model '"'"'a b'"'"''"""
    )


def test_flags_go_before_redirections(tmp_path):
    d = dcd("sglang", command=["sh", "-c"], args=["python3 -m dynamo.sglang --model m>/dev/null 2>&1"])
    c = container(d, "leader")
    assert c["args"] == [
        "python3 -m dynamo.sglang --model m --dist-init-addr $(LWS_LEADER_ADDRESS):29500 --nnodes 2 --node-rank 0 >/dev/null 2>&1"
    ]
    argv = _run(c, {"LWS_LEADER_ADDRESS": "g-0.g.ns"}, tmp_path, ("python3",)).split("\n")
    assert argv == [
        "python3", "-m", "dynamo.sglang", "--model", "m",
        "--dist-init-addr", "g-0.g.ns:29500", "--nnodes", "2", "--node-rank", "0", "",
    ]  # fmt: skip
