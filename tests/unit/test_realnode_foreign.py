"""The real node beside another Kubernetes node on the same machine (k3s, kubeadm, kind): it refuses to start,
and its teardown touches only what it made. On a fake /proc, cgroup tree and iptables rule set holding foreign
entries; the real-node tier runs the same code on the machine itself."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dynamo_localcluster.realnode import cgroups, foreign, layout, network, teardown

FOREIGN_KUBELET = "/usr/bin/kubelet --root-dir=/var/lib/kubelet --config=/var/lib/kubelet/config.yaml"
OUR_KUBELET = f"/x/kubelet --root-dir={layout.KUBELET_ROOT} --config={layout.ROOT}/config/kubelet.yaml"


def _proc(tmp_path: Path, processes: dict[int, tuple[str, str]]) -> Path:
    proc = tmp_path / "proc"
    for pid, (comm, cmd) in processes.items():
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "comm").write_text(comm + "\n")
        (proc / str(pid) / "cmdline").write_bytes(cmd.replace(" ", "\0").encode() + b"\0")
    (proc / "self").mkdir()
    return proc


def test_another_nodes_agents_are_found_and_ours_are_not(tmp_path):
    proc = _proc(
        tmp_path,
        {
            10: ("kubelet", FOREIGN_KUBELET),
            11: ("k3s-server", "/usr/local/bin/k3s server"),
            20: ("kubelet", OUR_KUBELET),
            21: ("kube-proxy", f"/x/kube-proxy --config={layout.ROOT}/config/kube-proxy.yaml"),
            30: ("bash", "bash -c kubelet"),  # a name on a command line is not an agent
            40: ("kubelet", ""),  # a zombie (ours, just killed): no command line, nothing to share
        },
    )
    assert foreign.node_agents(proc) == [(10, FOREIGN_KUBELET), (11, "/usr/local/bin/k3s server")]


def _cgroup_tree(tmp_path: Path) -> Path:
    root = tmp_path / "cgroup"
    for hierarchy in ("memory", "cpuset", "pids"):
        (root / hierarchy).mkdir(parents=True)
        (root / hierarchy / "cgroup.procs").write_text("1\n")
    (root / "cpuset" / "cpuset.cpus").write_text("0-1\n")
    (root / "cpuset" / "cpuset.mems").write_text("0\n")
    (root / "unified").mkdir()  # an empty mount point: no cgroup.procs, not a hierarchy
    # another node's pods (k3s, kubeadm): kubepods at the top of the hierarchies, with a running container
    (root / "memory" / "kubepods" / "burstable" / "podX").mkdir(parents=True)
    (root / "memory" / "kubepods" / "burstable" / "podX" / "cgroup.procs").write_text("4242\n")
    (root / "pids" / "kubepods.slice").mkdir()
    return root


def test_our_cgroup_root_is_made_with_its_parents_cpuset_and_is_all_the_teardown_sees(tmp_path):
    root = _cgroup_tree(tmp_path)
    assert cgroups.parents(root) == [] and cgroups.pids(root) == set()
    made = cgroups.create(root)
    assert made == [root / h / layout.CGROUP_PARENT for h in ("cpuset", "memory", "pids")]
    (root / "cpuset" / layout.CGROUP_PARENT / "cpuset.cpus").write_text("")  # as the kernel makes it
    cgroups.create(root)  # again: kept, and the empty cpuset filled from its parent
    assert (root / "cpuset" / layout.CGROUP_PARENT / "cpuset.cpus").read_text() == "0-1\n"
    pod = root / "memory" / layout.CGROUP_PARENT / "kubepods" / "besteffort" / "podY"
    pod.mkdir(parents=True)
    (pod / "cgroup.procs").write_text("777\n")
    assert cgroups.pids(root) == {777}  # never 4242, the other node's container
    found = cgroups.dirs(root)
    assert found.index(pod) < found.index(root / "memory" / layout.CGROUP_PARENT)  # children first
    assert all(layout.CGROUP_PARENT in d.parts for d in found)
    assert foreign.kube_cgroups(root) == [root / "memory" / "kubepods", root / "pids" / "kubepods.slice"]


def test_a_pod_cgroup_removed_during_the_walk_is_skipped(tmp_path, monkeypatch):
    """The kubelet removes a pod's cgroup while a test reads the tree: the walk raised FileNotFoundError."""
    root = _cgroup_tree(tmp_path)
    cgroups.create(root)
    qos = root / "memory" / layout.CGROUP_PARENT / "kubepods" / "besteffort"
    gone, kept = qos / "podGone", qos / "podKept"
    for pod in (gone, kept):
        (pod / "ctr").mkdir(parents=True)
    (kept / "ctr" / "cgroup.procs").write_text("778\n")
    real_scandir = os.scandir

    def scandir(path):  # listed by its parent, removed before it is read: as the kubelet does
        if Path(path) == gone:
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    assert cgroups.pids(root) == {778}
    found = cgroups.dirs(root)
    assert kept / "ctr" in found and gone in found and gone / "ctr" not in found


FILTER_WITH_FOREIGN = """-P INPUT ACCEPT
-N KUBE-FIREWALL
-N KUBE-SERVICES
-N DYNAMO-NODE-INPUT
-N CUSTOM
-A INPUT -j DYNAMO-NODE-INPUT
-A INPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A INPUT -j KUBE-FIREWALL
-A CUSTOM -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.43.0.1/32 -j KUBE-FIREWALL
"""


def test_without_a_start_of_ours_the_kube_chains_are_someone_elses_and_stay():
    jumps, chains = network.removal_plan(FILTER_WITH_FOREIGN, include_kube=False)
    assert chains == ["DYNAMO-NODE-INPUT"] and jumps == [["-D", "INPUT", "-j", "DYNAMO-NODE-INPUT"]]
    jumps, chains = network.removal_plan(FILTER_WITH_FOREIGN, include_kube=True)
    assert chains == ["KUBE-FIREWALL", "KUBE-SERVICES", "DYNAMO-NODE-INPUT"]
    assert ["-D", "CUSTOM", "-j", "KUBE-SERVICES"] in jumps and len(jumps) == 4


def test_foreign_chains_are_found_in_every_table_v4_and_v6():
    listings = {("iptables", "filter"): FILTER_WITH_FOREIGN, ("ip6tables", "nat"): "-N KUBE-POSTROUTING\n"}
    chains = foreign.kube_chains(lambda tool, table: listings.get((tool, table), ""))
    assert chains == [
        "iptables -t filter KUBE-FIREWALL",
        "iptables -t filter KUBE-SERVICES",
        "ip6tables -t nat KUBE-POSTROUTING",
    ]


def test_one_line_says_why_the_node_does_not_start():
    agent = [(10, FOREIGN_KUBELET)]
    lines = foreign.reasons(
        agent, [Path("/sys/fs/cgroup/memory/kubepods")], ["iptables -t nat KUBE-X"], False
    )
    assert len(lines) == 3 and "pid 10" in lines[0] and "kubepods" in lines[1] and "KUBE-X" in lines[2]
    assert all("\n" not in line for line in lines)
    # KUBE-* chains a killed node of ours left (its state file is there) are cleared by the next start
    assert foreign.reasons([], [], ["iptables -t nat KUBE-X"], ours_recorded=True) == []


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """The teardown's view of a machine where another node runs (its chains, agent and pods) and no node of
    ours ever started: every command it would run is recorded instead, and every file it would remove is a
    file of the test's own (a first version removed this machine's real state file)."""
    ran: list[list[str]] = []
    monkeypatch.setattr(layout, "STATE_FILE", tmp_path / "state.json")
    monkeypatch.setattr(layout, "ROOT", tmp_path / "root")
    monkeypatch.setattr(layout, "RUN", tmp_path / "run")
    monkeypatch.setattr(layout, "CGROUP_ROOT", tmp_path / "cgroup")
    monkeypatch.setattr(network, "_run", _fake_iptables(ran))
    monkeypatch.setattr(network, "bridge_exists", lambda: False)
    monkeypatch.setattr(network, "nft_tables", lambda: [])
    monkeypatch.setattr(foreign, "node_agents", lambda proc=None: [(10, FOREIGN_KUBELET)])
    monkeypatch.setattr(cgroups, "dirs", lambda root=None: [])
    monkeypatch.setattr(cgroups, "pids", lambda root=None: set())
    monkeypatch.setattr(network, "restore_sysctls", lambda saved: [])
    monkeypatch.setattr(teardown, "node_processes", lambda: [])
    monkeypatch.setattr(teardown, "node_mounts", lambda: [])
    monkeypatch.setattr(teardown, "remove_files", lambda: [])
    return ran


def _fake_iptables(ran: list[list[str]]):
    class Done:
        returncode, stdout, stderr = 0, "", ""

    def run(argv, check=True):
        ran.append(argv)
        done = Done()
        if argv[-1] == "-S" and argv[:1] == ["iptables"] and argv[3] == "filter":
            done.stdout = FILTER_WITH_FOREIGN
        return done

    return run


def test_a_teardown_without_a_start_of_ours_touches_none_of_another_nodes_chains(machine):
    assert teardown.teardown() == []
    writes = [argv for argv in machine if argv[-1] != "-S"]
    assert writes and all("DYNAMO-NODE-INPUT" in argv for argv in writes), writes


def test_a_teardown_after_our_start_leaves_the_chains_while_another_agent_runs(machine):
    left = teardown.teardown(teardown.State(owner_pid=1))
    assert len(left) == 1 and "another node's agent runs (pid 10" in left[0]
    assert not [argv for argv in machine if any(a.startswith("KUBE-") for a in argv[4:])]
