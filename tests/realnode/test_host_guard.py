"""What a pod on the real node can reach of the machine it runs on, and what the node changed machine-wide.

The node runs as root on a developer's machine: its pods must not reach the host's other listeners (sshd, a
database, this session's own services) through the bridge address, its containers live under a cgroup root
of the node's own, and the machine's forwarding setting is left as it was.
"""

from __future__ import annotations

import socket
import threading
import uuid
from pathlib import Path

from dynamo_localcluster.cluster import free_port
from dynamo_localcluster.realnode import cgroups, foreign, layout, teardown
from realnode_helpers import SLOW
from support.poll import wait_for

PROBE = """
import socket, sys
for port in sys.argv[1:]:
    s = socket.socket()
    s.settimeout(4)
    try:
        s.connect(("{ip}", int(port)))
        print(port, "open")
    except ConnectionRefusedError:
        print(port, "refused")
    except OSError as e:
        print(port, "failed", type(e).__name__)
    finally:
        s.close()
"""


def _listen_on_the_node_address() -> tuple[socket.socket, int]:
    """A host listener on the bridge address, as any service bound to 0.0.0.0 would also be there."""
    port = free_port(layout.NODE_IP)
    srv = socket.create_server((layout.NODE_IP, port))

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return srv, port


def _probe_from_a_pod(node, image: str, ports: list[int]) -> dict[int, str]:
    from kubernetes import client

    name = f"host-guard-{uuid.uuid4().hex[:6]}"
    command = ["python3", "-c", PROBE.format(ip=layout.NODE_IP), *map(str, ports)]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": layout.NODE_SELECTOR,
            "tolerations": [layout.TOLERATION],
            "containers": [{"name": "c", "image": image, "imagePullPolicy": "Never", "command": command}],
        },
    }
    with node.api_client() as api:
        core = client.CoreV1Api(api)
        core.create_namespaced_pod("default", pod)
        try:
            wait_for(
                lambda: core.read_namespaced_pod(name, "default").status.phase == "Succeeded",
                120,
                "the probe pod to finish",
                **SLOW,
            )
            out = core.read_namespaced_pod_log(name, "default")
        finally:
            core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
    return {int(line.split()[0]): line.split(None, 1)[1] for line in out.strip().splitlines()}


def test_a_pod_reaches_the_api_server_and_no_other_listener_of_the_host(node, built_images):
    """Before the guard's pod rules, the bridge's INPUT was a plain RETURN: the probe's own listener (and
    sshd on port 22, where one runs) answered a pod. The host reaches the listener, the pod does not."""
    srv, port = _listen_on_the_node_address()
    try:
        with socket.create_connection((layout.NODE_IP, port), timeout=3):
            pass  # it is up, and answers anyone who may reach it
        etcd, apiserver = node.ports["etcd"], node.ports["apiserver"]
        seen = _probe_from_a_pod(node, built_images["operator"].ref, [apiserver, port, 22, etcd])
    finally:
        srv.close()
    assert seen == {apiserver: "open", port: "refused", 22: "refused", etcd: "refused"}, seen


PF_EXITING = 0x4  # include/linux/sched.h: set when a process starts to exit, before it leaves its cgroups


def _exiting(pid: int) -> bool:
    """The process has ended, is a zombie, or is on its way out (``PF_EXITING`` in /proc/<pid>/stat's flags):
    cgroup v1 moves an exiting task to the root cgroup, so such a process says nothing about the node's."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces and parentheses
    return fields[0] in ("Z", "X") or bool(int(fields[6]) & PF_EXITING)


def test_containers_live_under_the_nodes_own_cgroup_root_and_forwarding_is_the_bridges(platform):
    """The kubelet's pods once lived in the machine-wide ``kubepods`` cgroups, where another node's pods live
    too; and the pod network switched on ``ip_forward`` for every interface. The operator's pods run now."""
    roots = layout.CGROUP_ROOT
    assert foreign.kube_cgroups(roots) == []  # nothing at the top of a hierarchy: the node made none there
    pids = cgroups.pids()
    assert pids, "no container process under the node's own cgroup root while the operator's pods run"
    checked = 0
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except (FileNotFoundError, ProcessLookupError):
            continue  # ended since the listing (a probe's exec, a shell of a pod's command): nothing to check
        memory = next(line.split(":", 2)[2] for line in lines if line.split(":")[1] == "memory")
        if not memory.startswith(f"/{layout.CGROUP_PARENT}/kubepods/") and _exiting(pid):
            continue  # an exiting process is moved to the root cgroup before it ends: CI saw "/" once
        assert memory.startswith(f"/{layout.CGROUP_PARENT}/kubepods/"), (pid, memory)
        checked += 1
    assert checked, f"every container process listed ({sorted(pids)}) ended before its cgroup was read"
    state = teardown.State.load()
    assert state is not None
    before = state.sysctls["net.ipv4.ip_forward"]
    assert Path("/proc/sys/net/ipv4/ip_forward").read_text().strip() == before
    assert Path(f"/proc/sys/net/ipv4/conf/{layout.BRIDGE}/forwarding").read_text().strip() == "1"
