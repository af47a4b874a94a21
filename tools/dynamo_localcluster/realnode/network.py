"""The pod network and the guard that enforces the network rule, and their removal.

The rule: traffic goes only to loopback or to our own pods on this machine's bridge. So the pods get a bridge
(``dynbr0``, the node's address is its gateway) with no default route, no masquerade, and only two routes:
their subnet and the Service range via the gateway. Forwarding is switched on for the bridge alone
(``net.ipv4.conf.dynbr0.forwarding``; the machine-wide ``ip_forward`` is left as it was, and the CNI bridge
plugin, which would set it, is not the gateway). Guard chains in iptables and ip6tables (filter table, jumped
to first from INPUT, FORWARD and OUTPUT) drop:

- anything forwarded from the bridge to another interface, or from another interface to the bridge;
- any packet for the pod or Service range leaving through an interface other than the bridge (a host-side
  mistake can never send one out of the machine);
- any packet for the bridge's addresses arriving on an interface other than the bridge or loopback (the API
  server, the kubelet and the DNS server listen on the node address, which must stay unreachable from
  outside);
- any connection from a pod to this machine but to the API server, the kubelet and the DNS server on the node
  address (``pod_ports``): a pod reaches no other listener of the host, whatever address it binds (TCP is
  answered with a reset, so a refused connection fails at once);
- IPv6 to and from the bridge altogether.
"""

from __future__ import annotations

import contextlib
import ipaddress
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path

from . import layout


class NetworkError(RuntimeError):
    pass


def _run(argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(argv, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise NetworkError(f"`{' '.join(argv)}` failed (exit {r.returncode}): {r.stderr.strip()}")
    return r


# ---- sysctls --------------------------------------------------------------------------------------------


def _sysctl_path(name: str) -> Path:
    return Path("/proc/sys") / name.replace(".", "/")


def read_sysctls() -> dict[str, str]:
    out = {}
    for name in layout.SYSCTLS:
        with contextlib.suppress(OSError):
            out[name] = _sysctl_path(name).read_text().strip()
    return out


def write_sysctl(name: str, value: str) -> None:
    _sysctl_path(name).write_text(f"{value}\n")


def restore_sysctls(saved: dict[str, str]) -> list[str]:
    """Writes back every saved value; returns the names that could not be restored."""
    failed = []
    for name, value in saved.items():
        try:
            if _sysctl_path(name).read_text().strip() != value:
                write_sysctl(name, value)
        except OSError:
            failed.append(name)
    return failed


# ---- bridge and routes ----------------------------------------------------------------------------------


def external_interfaces() -> list[str]:
    """Every interface but loopback and our bridge (and the veths the bridge owns)."""
    names = []
    for entry in sorted(Path("/sys/class/net").iterdir()):
        if entry.name in ("lo", layout.BRIDGE):
            continue
        master = entry / "master"
        if master.exists() and master.resolve().name == layout.BRIDGE:
            continue
        names.append(entry.name)
    return names


def bridge_exists() -> bool:
    return (Path("/sys/class/net") / layout.BRIDGE).exists()


def create_bridge() -> None:
    cidr = f"{layout.NODE_IP}/{layout.POD_CIDR.prefixlen}"
    _run(["ip", "link", "add", layout.BRIDGE, "type", "bridge"])
    with contextlib.suppress(OSError):  # no IPv6 on the pod network at all
        write_sysctl(f"net.ipv6.conf.{layout.BRIDGE}.disable_ipv6", "1")
    _run(["ip", "addr", "add", cidr, "dev", layout.BRIDGE])
    _run(["ip", "link", "set", layout.BRIDGE, "up"])
    # Forwarding on the bridge alone (pod -> ClusterIP -> pod is routed back out of it): gone with the bridge.
    write_sysctl(f"net.ipv4.conf.{layout.BRIDGE}.forwarding", "1")
    # Host traffic to a ClusterIP is routed to the bridge before kube-proxy rewrites it: never to a gateway.
    _run(["ip", "route", "add", str(layout.SERVICE_CIDR), "dev", layout.BRIDGE, "src", layout.NODE_IP])


def delete_bridge() -> None:
    if bridge_exists():
        _run(["ip", "link", "delete", layout.BRIDGE])


def overlapping_routes() -> list[str]:
    """Routes or addresses of this machine inside our ranges that are not ours: the node would shadow them."""
    clashes = []
    r = _run(["ip", "-4", "route", "show", "table", "all"], check=False)
    for line in r.stdout.splitlines():
        parts = line.split()
        if not parts or layout.BRIDGE in parts:
            continue
        dest = parts[0] if parts[0] not in ("local", "broadcast", "unicast") else parts[1]
        if dest == "default":
            continue
        with contextlib.suppress(ValueError):
            net = ipaddress.ip_network(dest, strict=False)
            if net.overlaps(layout.POD_CIDR) or net.overlaps(layout.SERVICE_CIDR):
                clashes.append(line.strip())
    return clashes


# ---- guard chains ---------------------------------------------------------------------------------------


# What a pod may reach on this machine (protocol, port on the node address), beside answers to connections
# the host opened (the kubelet's probes, the tests' requests): set once the control plane's ports are known.
PodPorts = Sequence[tuple[str, int]]


def pod_input_rules(pod_ports: PodPorts) -> list[list[str]]:
    """INPUT rules for packets from the bridge: answers, the allowed ports, then a refusal of the rest."""
    br = layout.BRIDGE
    rules = [["-i", br, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"]]
    for proto, port in sorted(set(pod_ports)):
        rules.append(["-i", br, "-d", layout.NODE_IP, "-p", proto, "--dport", str(port), "-j", "RETURN"])
    rules.append(["-i", br, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"])
    rules.append(["-i", br, "-j", "DROP"])
    return rules


def guard_rules(external: list[str], pod_ports: PodPorts = ()) -> dict[str, list[list[str]]]:
    """The v4 guard rules per hook chain (each rule an iptables argument list without -A CHAIN)."""
    br = layout.BRIDGE
    pods, services = str(layout.POD_CIDR), str(layout.SERVICE_CIDR)
    forward = [
        ["-i", br, "!", "-o", br, "-j", "DROP"],
        ["-o", br, "!", "-i", br, "-j", "DROP"],
    ]
    forward += [["-s", pods, "-o", ext, "-j", "DROP"] for ext in external]
    output = []
    for ext in external:
        output += [["-d", net, "-o", ext, "-j", "REJECT"] for net in (pods, services)]
    inputs = [["-i", "lo", "-j", "RETURN"], *pod_input_rules(pod_ports)]
    inputs += [["-d", pods, "-j", "DROP"], ["-d", services, "-j", "DROP"]]
    return {"INPUT": inputs, "FORWARD": forward, "OUTPUT": output}


def guard_rules_v6() -> dict[str, list[list[str]]]:
    br = layout.BRIDGE
    return {
        "INPUT": [["-i", br, "-j", "DROP"]],
        "FORWARD": [["-i", br, "-j", "DROP"], ["-o", br, "-j", "DROP"]],
    }


def install_guard(pod_ports: PodPorts = ()) -> None:
    """Creates (or rewrites) the guard chains and jumps to them first from INPUT, FORWARD and OUTPUT (v4 and
    v6). Before the control plane's ports are known, a pod may reach nothing on the host; the node's start
    calls it again with them."""
    v4 = guard_rules(external_interfaces(), pod_ports)
    for tool, rules in (("iptables", v4), ("ip6tables", guard_rules_v6())):
        for hook, chain in layout.GUARD_CHAINS.items():
            _run([tool, "-w", "-N", chain], check=False)
            _run([tool, "-w", "-F", chain])
            for rule in rules.get(hook, []):
                _run([tool, "-w", "-A", chain, *rule])
        ensure_guard_first(tool)


def ensure_guard_first(tool: str = "iptables") -> None:
    """(Re)puts the jump to each guard chain at position 1 of its hook chain: kube-proxy and the kubelet
    insert their own jumps at the top too, and no ACCEPT of theirs may come before our DROPs."""
    for hook, chain in layout.GUARD_CHAINS.items():
        while _run([tool, "-w", "-D", hook, "-j", chain], check=False).returncode == 0:
            pass
        _run([tool, "-w", "-I", hook, "1", "-j", chain])


def guard_is_first(tool: str = "iptables") -> bool:
    for hook, chain in layout.GUARD_CHAINS.items():
        lines = [line for line in _run([tool, "-w", "-S", hook]).stdout.splitlines() if line.startswith("-A")]
        if not lines or lines[0].split() != ["-A", hook, "-j", chain]:
            return False
    return True


# ---- removal of every chain we (or kube-proxy and the kubelet) made ---------------------------------------


def list_rules(tool: str, table: str) -> str:
    """What ``<tool> -t <table> -S`` prints ("" when the table cannot be read)."""
    r = _run([tool, "-w", "-t", table, "-S"], check=False)
    return r.stdout if r.returncode == 0 else ""


def _ours(chain: str, include_kube: bool) -> bool:
    return chain in layout.GUARD_CHAINS.values() or (
        include_kube and chain.startswith(layout.KUBE_CHAIN_PREFIX)
    )


def removal_plan(listing: str, include_kube: bool) -> tuple[list[list[str]], list[str]]:
    """From one table's ``-S`` listing: the deletions of every jump into our chains (as ``-D`` argument
    lists), and our chains themselves (to flush, then delete). Nothing else of the table is named."""
    jumps, chains = [], []
    for line in listing.splitlines():
        parts = shlex.split(line)  # comments are quoted
        if parts[:1] == ["-N"] and len(parts) > 1 and _ours(parts[1], include_kube):
            chains.append(parts[1])
        elif parts[:1] == ["-A"] and "-j" in parts and not _ours(parts[1], include_kube):
            target = parts[parts.index("-j") + 1]
            jumps += [["-D", *parts[1:]]] if _ours(target, include_kube) else []
    return jumps, chains


def remove_chains(include_kube: bool) -> list[str]:
    """Deletes every jump to, and then every one of, the guard chains and (``include_kube``: they are our
    kube-proxy's, see ``teardown``) the KUBE-* chains, in all tables, v4 and v6. Returns what could not be
    removed."""
    left = []
    for tool in ("iptables", "ip6tables"):
        for table in layout.IPTABLES_TABLES:
            jumps, ours = removal_plan(list_rules(tool, table), include_kube)
            for jump in jumps:
                _run([tool, "-w", "-t", table, *jump], check=False)
            for chain in ours:
                _run([tool, "-w", "-t", table, "-F", chain], check=False)
            for chain in ours:
                if _run([tool, "-w", "-t", table, "-X", chain], check=False).returncode != 0:
                    left.append(f"{tool} -t {table} {chain}")
    return left


def leftover_rules(include_kube: bool = True) -> list[str]:
    """Every iptables/ip6tables line still naming one of our chains (empty after a complete teardown)."""
    found = []
    for tool in ("iptables-save", "ip6tables-save"):
        r = _run([tool], check=False)
        for line in r.stdout.splitlines():
            kube = include_kube and layout.KUBE_CHAIN_PREFIX in line
            if kube or any(c in line for c in layout.GUARD_CHAINS.values()):
                found.append(f"{tool}: {line}")
    return found


# ---- the tables themselves ------------------------------------------------------------------------------


def nft_tables() -> list[str]:
    """``<family> <table>`` of every nftables table (what iptables-nft uses), or [] without nft."""
    import shutil

    if shutil.which("nft") is None:
        return []
    r = _run(["nft", "list", "tables"], check=False)
    return [
        line.removeprefix("table ").strip() for line in r.stdout.splitlines() if line.startswith("table ")
    ]


def remove_new_empty_tables(before: list[str]) -> list[str]:
    """Deletes the iptables tables (``ip``/``ip6`` filter, nat, mangle, raw) that did not exist before the
    node and hold no rule now, so iptables-save shows exactly what it showed before. Returns what stayed."""
    left = []
    for table in nft_tables():
        family, _, name = table.partition(" ")
        if table in before or family not in ("ip", "ip6") or name not in layout.IPTABLES_TABLES:
            continue
        tool = "iptables" if family == "ip" else "ip6tables"
        rules = _run([tool, "-w", "-t", name, "-S"], check=False).stdout.splitlines()
        if any(not line.startswith("-P ") for line in rules):
            left.append(f"{tool} -t {name} (not empty)")
            continue
        if _run(["nft", "delete", "table", family, name], check=False).returncode != 0:
            left.append(f"nft table {table}")
    return left
