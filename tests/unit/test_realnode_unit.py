"""Pure parts of the real node: the network rule as rules, the pod network, the registry policy, the node
DNS's answers, the state file. The node itself runs in the real-node tier (tests/realnode)."""

from __future__ import annotations

import ipaddress
import json
import socket

from dynamo_localcluster.realnode import dns, kubelet, layout, network, runtime, teardown
from dynamo_localcluster.realnode import node as node_mod


def test_the_guard_drops_everything_but_bridge_traffic():
    rules = network.guard_rules(["eth0"])
    br = layout.BRIDGE
    assert ["-i", br, "!", "-o", br, "-j", "DROP"] in rules["FORWARD"]
    assert ["-o", br, "!", "-i", br, "-j", "DROP"] in rules["FORWARD"]
    assert ["-s", str(layout.POD_CIDR), "-o", "eth0", "-j", "DROP"] in rules["FORWARD"]
    for net in (layout.POD_CIDR, layout.SERVICE_CIDR):
        assert ["-d", str(net), "-o", "eth0", "-j", "REJECT"] in rules["OUTPUT"]
    # the node address (API server, kubelet, DNS) answers only loopback and the bridge
    assert rules["INPUT"][0] == ["-i", "lo", "-j", "RETURN"]
    assert ["-d", str(layout.POD_CIDR), "-j", "DROP"] in rules["INPUT"]
    assert network.guard_rules_v6()["FORWARD"] == [["-i", br, "-j", "DROP"], ["-o", br, "-j", "DROP"]]


def test_a_pod_reaches_only_the_api_server_kubelet_and_dns_of_the_host():
    """Before this rule the bridge's INPUT was one RETURN: a pod reached every listener of the host (sshd on
    0.0.0.0:22, a developer's database) through the node address."""
    br = layout.BRIDGE
    pod_ports = node_mod.pod_ports(6443, 10250)
    inputs = network.guard_rules(["eth0"], pod_ports)["INPUT"]
    from_bridge = [r for r in inputs if r[:2] == ["-i", br]]
    assert ["-i", br, "-j", "RETURN"] not in inputs
    allowed = [(r[5], int(r[7])) for r in from_bridge if r[-1] == "RETURN" and "--dport" in r]
    assert allowed == [("tcp", 6443), ("tcp", 10250), ("udp", layout.DNS_PORT)]
    assert all(r[3] == layout.NODE_IP for r in from_bridge if "--dport" in r)
    # answers to what the host opened (probes, the tests' requests) pass; everything else is refused last
    assert from_bridge[0][2:] == ["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"]
    assert from_bridge[-2:] == [
        ["-i", br, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"],
        ["-i", br, "-j", "DROP"],
    ]
    # before the control plane's ports are known: answers only
    early = [r for r in network.guard_rules(["eth0"])["INPUT"] if r[:2] == ["-i", br]]
    assert not [r for r in early if "--dport" in r] and early[-1] == ["-i", br, "-j", "DROP"]


def test_forwarding_is_the_bridges_alone(monkeypatch):
    """The CNI bridge plugin as gateway writes ip_forward=1 (machine-wide) at every pod; the node asks it not
    to, and switches forwarding on for its bridge alone (the real-node tier reads ip_forward back)."""
    (bridge,) = runtime.cni_conflist()["plugins"]
    assert bridge["isGateway"] is False
    ran, written = [], {}
    monkeypatch.setattr(network, "_run", lambda argv, check=True: ran.append(argv))
    monkeypatch.setattr(network, "write_sysctl", lambda name, value: written.__setitem__(name, value))
    network.create_bridge()
    assert written == {
        f"net.ipv6.conf.{layout.BRIDGE}.disable_ipv6": "1",
        f"net.ipv4.conf.{layout.BRIDGE}.forwarding": "1",
    }
    assert ["ip", "link", "add", layout.BRIDGE, "type", "bridge"] in ran


def test_pods_get_no_way_out():
    conf = runtime.cni_conflist()
    (bridge,) = conf["plugins"]
    assert bridge["ipMasq"] is False and bridge["isDefaultGateway"] is False
    routes = bridge["ipam"]["routes"]
    assert routes == [{"dst": str(layout.SERVICE_CIDR), "gw": layout.NODE_IP}]  # no 0.0.0.0/0
    assert ipaddress.ip_address(layout.NODE_IP) in layout.POD_CIDR


def test_every_registry_resolves_to_a_refusing_loopback_endpoint():
    hosts = runtime.registry_hosts_toml()
    assert 'server = "https://127.0.0.1:1"' in hosts
    toml = runtime.config_toml()
    assert "restrict_oom_score_adj = true" in toml and "netns_mounts_under_state_dir = true" in toml
    assert f'sandbox = "{layout.PAUSE_IMAGE}"' in toml


def test_kube_proxy_never_opens_node_ports_outside_the_bridge():
    cfg = kubelet.kube_proxy_config(layout.ROOT / "kc", {"kube-proxy-healthz": 1, "kube-proxy-metrics": 2})
    assert cfg["nodePortAddresses"] == [f"{layout.NODE_IP}/32"]
    assert cfg["oomScoreAdj"] == 0 and cfg["conntrack"]["maxPerCore"] == 0
    assert cfg["healthzBindAddress"].startswith("127.0.0.1:")


def test_the_kubelet_registers_tainted_on_the_bridge_address():
    cfg = kubelet.kubelet_config(
        layout.ROOT / "ca", (layout.ROOT / "c", layout.ROOT / "k"), _ports(), layout.ROOT
    )
    assert cfg["address"] == layout.NODE_IP and cfg["registerWithTaints"] == [layout.TAINT]
    assert cfg["clusterDNS"] == [layout.NODE_IP] and cfg["failCgroupV1"] is False
    assert cfg["imageGCHighThresholdPercent"] == 100  # imported images are never collected


def _ports() -> dict[str, int]:
    return {"kubelet": 10250, "kubelet-healthz": 10248}


def _reader(objects: dict):
    def read(kind: str, namespace: str, name: str):
        return objects.get((kind, namespace, name))

    return read


def test_dns_answers_cluster_names_only():
    read = _reader(
        {
            ("service", "ns", "web"): "10.86.0.7",
            ("service", "ns", "headless"): "None",
            ("endpoints", "ns", "headless"): ["10.85.0.4", "10.85.0.5"],
            ("pod-by-hostname", "ns", "leader.group"): "10.85.0.9",
        }
    )
    assert dns.lookup("web.ns.svc.cluster.local", read) == (dns.NOERROR, ["10.86.0.7"])
    assert dns.lookup("headless.ns.svc.cluster.local", read) == (dns.NOERROR, ["10.85.0.4", "10.85.0.5"])
    assert dns.lookup("leader.group.ns.svc.cluster.local", read) == (dns.NOERROR, ["10.85.0.9"])
    assert dns.lookup("10-85-0-3.ns.pod.cluster.local", read) == (dns.NOERROR, ["10.85.0.3"])
    assert dns.lookup("nope.ns.svc.cluster.local", read) == (dns.NXDOMAIN, [])
    # nothing outside the cluster domain is ever answered, let alone forwarded
    assert dns.lookup("example.com", read) == (dns.REFUSED, [])


def test_dns_wire_format_round_trip():
    q = dns.query("web.ns.svc.cluster.local")
    ident, flags, name, qtype, question = dns.parse_question(q)
    assert (name, qtype) == ("web.ns.svc.cluster.local", dns.QTYPE_A)
    answer = dns.response(ident, flags, question, dns.NOERROR, ["10.86.0.7"])
    assert dns.parse_answer(answer) == (dns.NOERROR, ["10.86.0.7"])
    assert socket.inet_aton("10.86.0.7") in answer


def test_state_round_trip(tmp_path, monkeypatch):
    monkeypatch.setattr(layout, "STATE_FILE", tmp_path / "state.json")
    state = teardown.State(
        owner_pid=1, owner_start="42", sysctls={"kernel.panic": "1"}, nft_tables=["ip nat"]
    )
    state.save()
    again = teardown.State.load()
    assert again == state
    assert json.loads(layout.STATE_FILE.read_text())["sysctls"] == {"kernel.panic": "1"}
    # the owner (pid 1, another start time) is not this process: a start would clear its node
    assert not again.owner_alive() or teardown.process_start(1) == "42"
