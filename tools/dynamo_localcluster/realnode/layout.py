"""Where the real node lives on this machine: names, address ranges, directories, the state file.

One real node per machine at a time, so these are fixed, machine-wide names (the teardown of a killed run
must find them without any record of that run). Every path the node writes is under ``ROOT`` or ``RUN``, so
every mount it leaves behind is found by prefix.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

NODE_NAME = "dynamo-node"
# Workloads meant for the real node tolerate this taint and select this label; everything else (every example
# naming an nvcr.io image) lands on kwok's fake GPU nodes, so no pull is ever attempted.
NODE_LABEL = "dynamo-platform.dev/real-node"
TAINT = {"key": NODE_LABEL, "value": "true", "effect": "NoSchedule"}
TOLERATION = {"key": NODE_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
NODE_SELECTOR = {NODE_LABEL: "true"}

BRIDGE = "dynbr0"
# Pods and the bridge (its first address is the gateway, the node's IP, and where the API server, the kubelet
# and the cluster DNS listen for pods); Services. Neither range is routed anywhere but to the bridge.
POD_CIDR = ipaddress.ip_network("10.85.0.0/24")
SERVICE_CIDR = ipaddress.ip_network("10.86.0.0/24")
NODE_IP = str(POD_CIDR.network_address + 1)
KUBERNETES_SERVICE_IP = str(SERVICE_CIDR.network_address + 1)
DNS_PORT = 53
CLUSTER_DOMAIN = "cluster.local"

# Guard chains (iptables and ip6tables, filter table) that enforce the network rule.
GUARD_CHAINS = {
    "INPUT": "DYNAMO-NODE-INPUT",
    "FORWARD": "DYNAMO-NODE-FORWARD",
    "OUTPUT": "DYNAMO-NODE-OUTPUT",
}
# Chains created by kube-proxy and the kubelet: their names are fixed in those programs' code, so they cannot
# carry a prefix of ours. The node starts only where none exist (``foreign``) and records its start in the
# state file, so the ones its teardown removes are the ones its own kube-proxy and kubelet made.
KUBE_CHAIN_PREFIX = "KUBE-"
IPTABLES_TABLES = ("filter", "nat", "mangle", "raw")

ROOT = Path("/var/lib/dynamo-platform/realnode")  # containerd's root, the kubelet's root, CNI state
RUN = Path("/run/dynamo-platform/realnode")  # containerd's state (sockets, task bundles, netns mounts)
STATE_FILE = Path("/var/lib/dynamo-platform/realnode-state.json")
LOCK_FILE = Path("/var/lib/dynamo-platform/realnode.lock")

CONTAINERD_ROOT = ROOT / "containerd"
CONTAINERD_STATE = RUN / "containerd"
CONTAINERD_SOCKET = RUN / "containerd.sock"
CONTAINERD_NAMESPACE = "k8s.io"
KUBELET_ROOT = ROOT / "kubelet"
CNI_CONF_DIR = ROOT / "cni" / "net.d"
CNI_DATA_DIR = ROOT / "cni" / "networks"
REGISTRY_HOSTS_DIR = ROOT / "registry-hosts"
CNI_BIN_DIR = Path("/usr/lib/cni")
RUNC = Path("/usr/sbin/runc")
# A pull that slips through goes here and is refused on loopback, never to a resolver or a registry.
REFUSING_REGISTRY = "https://127.0.0.1:1"

# cgroups (cgroupfs driver, cgroup v1 hierarchies): our kubelet's pods live under a cgroup root of our own in
# every hierarchy (its ``cgroupRoot``), never in the machine-wide ``kubepods`` another node would use.
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PARENT = "dynamo-node"
KUBE_CGROUPS = ("kubepods", "kubepods.slice")  # another node's pods, at the top of a hierarchy

# Machine-wide settings the kubelet or kube-proxy change; saved before and restored after. The pod network
# itself changes none: forwarding is switched on for the bridge alone (``net.ipv4.conf.dynbr0.forwarding``,
# gone with the bridge); ``ip_forward`` is kept here in case anything else sets it while the node runs.
SYSCTLS = (
    "net.ipv4.ip_forward",
    "net.ipv4.conf.all.route_localnet",
    "net.bridge.bridge-nf-call-iptables",
    "net.bridge.bridge-nf-call-ip6tables",
    "vm.overcommit_memory",
    "vm.panic_on_oom",
    "kernel.panic",
    "kernel.panic_on_oops",
    "kernel.keys.root_maxkeys",
    "kernel.keys.root_maxbytes",
)

# Images the node always needs, by reference (imported into containerd; nothing is ever pulled).
PAUSE_IMAGE = "localhost/dynamo-platform/pause:3.10"
