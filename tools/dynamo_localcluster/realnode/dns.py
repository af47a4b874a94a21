"""The real node's cluster DNS: answers cluster names from the API server, and nothing else.

There is no CoreDNS image here (no registry), and pods must never query this machine's resolver (it would
forward out of the machine). This server listens on the node address (port 53/UDP, reachable only from the
bridge, see ``network``) and answers, from the API server:

- ``<service>.<namespace>.svc.<domain>``: the ClusterIP, or for a headless Service its ready endpoints;
- ``<hostname>.<subdomain>.<namespace>.svc.<domain>``: the pod with that hostname and subdomain (how a
  multinode worker finds its leader through a headless Service);
- ``<a-b-c-d>.<namespace>.pod.<domain>``: that address.

Other names in the cluster domain get NXDOMAIN; names outside it get REFUSED. Nothing is ever forwarded.

Usage: python -m dynamo_localcluster.realnode.dns --kubeconfig PATH [--listen ADDR:PORT]
"""

from __future__ import annotations

import argparse
import ipaddress
import socket
import struct
import sys

from . import layout

QTYPE_A, QTYPE_AAAA = 1, 28
NOERROR, NXDOMAIN, REFUSED = 0, 3, 5
TTL = 5


def argv(kubeconfig: str) -> list[str]:
    # The root path on the command line lets the teardown find this process by what it names.
    return [
        sys.executable,
        "-m",
        "dynamo_localcluster.realnode.dns",
        f"--kubeconfig={kubeconfig}",
        f"--listen={layout.NODE_IP}:{layout.DNS_PORT}",
        f"--node-root={layout.ROOT}",
    ]


def encode_name(name: str) -> bytes:
    return b"".join(bytes([len(p)]) + p.encode() for p in name.rstrip(".").split(".")) + b"\0"


def query(name: str, qtype: int = QTYPE_A, ident: int = 0x1234) -> bytes:
    return (
        struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + encode_name(name) + struct.pack("!HH", qtype, 1)
    )


def parse_question(packet: bytes) -> tuple[int, int, str, int, bytes]:
    """(id, flags, name, qtype, raw question) of a single-question query."""
    ident, flags, qdcount = struct.unpack("!HHH", packet[:6])
    if qdcount != 1:
        raise ValueError("one question expected")
    pos, labels = 12, []
    while packet[pos] != 0:
        length = packet[pos]
        labels.append(packet[pos + 1 : pos + 1 + length].decode("ascii", "replace"))
        pos += 1 + length
    qtype = struct.unpack("!H", packet[pos + 1 : pos + 3])[0]
    return ident, flags, ".".join(labels).lower(), qtype, packet[12 : pos + 5]


def response(ident: int, flags: int, question: bytes, rcode: int, ips: list[str]) -> bytes:
    head_flags = 0x8000 | (flags & 0x0100) | 0x0400 | rcode  # response, RD copied, authoritative
    head = struct.pack("!HHHHHH", ident, head_flags, 1, len(ips), 0, 0)
    answers = b"".join(struct.pack("!HHHIH", 0xC00C, QTYPE_A, 1, TTL, 4) + socket.inet_aton(ip) for ip in ips)
    return head + question + answers


def parse_answer(packet: bytes) -> tuple[int, list[str]]:
    """(rcode, A records) of a response to ``query`` (for the readiness check and tests)."""
    _, flags, _, ancount = struct.unpack("!HHHH", packet[:8])
    pos = 12
    while packet[pos] != 0:
        pos += 1 + packet[pos]
    pos += 5
    ips = []
    for _ in range(ancount):
        rtype, _, _, rdlen = struct.unpack("!HHIH", packet[pos + 2 : pos + 12])
        if rtype == QTYPE_A:
            ips.append(socket.inet_ntoa(packet[pos + 12 : pos + 12 + rdlen]))
        pos += 12 + rdlen
    return flags & 0xF, ips


def lookup(name: str, read) -> tuple[int, list[str]]:
    """(rcode, addresses) for ``name``; ``read(kind, namespace, name)`` reads from the API (None if
    absent)."""
    suffix = "." + layout.CLUSTER_DOMAIN
    if not name.endswith(suffix):
        return REFUSED, []
    parts = name[: -len(suffix)].split(".")
    if len(parts) == 3 and parts[2] == "pod":
        try:
            return NOERROR, [str(ipaddress.IPv4Address(parts[0].replace("-", ".")))]
        except ValueError:
            return NXDOMAIN, []
    if len(parts) == 3 and parts[2] == "svc":
        ip = read("service", parts[1], parts[0])
        if ip is None:
            return NXDOMAIN, []
        if ip != "None":
            return NOERROR, [ip]
        return NOERROR, read("endpoints", parts[1], parts[0]) or []
    if len(parts) == 4 and parts[3] == "svc":
        pod = read("pod-by-hostname", parts[2], f"{parts[0]}.{parts[1]}")
        return (NOERROR, [pod]) if pod else (NXDOMAIN, [])
    return NXDOMAIN, []


def api_reader(kubeconfig: str):
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException

    cfg = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    core = client.CoreV1Api(client.ApiClient(cfg))

    def read(kind: str, namespace: str, name: str):
        try:
            if kind == "service":  # the ClusterIP, "None" for a headless Service
                return core.read_namespaced_service(name, namespace).spec.cluster_ip or "None"
            if kind == "endpoints":
                pods = core.list_namespaced_pod(namespace).items
                svc = core.read_namespaced_service(name, namespace)
                selector = svc.spec.selector or {}
                return [p.status.pod_ip for p in pods if p.status.pod_ip and _selected(p, selector)]
            if kind == "pod-by-hostname":
                host, sub = name.split(".", 1)
                for p in core.list_namespaced_pod(namespace).items:
                    if p.spec.hostname == host and p.spec.subdomain == sub and p.status.pod_ip:
                        return p.status.pod_ip
                return None
        except ApiException as e:
            if e.status == 404:
                return None
            raise
        return None

    return read


def _selected(pod, selector: dict) -> bool:
    labels = pod.metadata.labels or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def serve(listen: str, read) -> None:
    host, port = listen.rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((host, int(port)))
    print(f"node DNS serving {layout.CLUSTER_DOMAIN} on {listen}", flush=True)
    while True:
        packet, peer = sock.recvfrom(4096)
        try:
            ident, flags, name, qtype, question = parse_question(packet)
        except (ValueError, IndexError, struct.error):
            continue
        try:
            rcode, ips = lookup(name, read)
        except Exception as e:  # an API hiccup: SERVFAIL, the client retries
            print(f"lookup {name} failed: {e}", flush=True)
            rcode, ips = 2, []
        if qtype != QTYPE_A:
            ips = []  # names exist for AAAA too, with no records (no IPv6 here)
        sock.sendto(response(ident, flags, question, rcode, ips), peer)


def answers(timeout: float = 1.0) -> bool:
    """Whether the node DNS answers the ``kubernetes`` Service with its ClusterIP."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        s.sendto(query(f"kubernetes.default.svc.{layout.CLUSTER_DOMAIN}"), (layout.NODE_IP, layout.DNS_PORT))
        rcode, ips = parse_answer(s.recv(4096))
    return rcode == NOERROR and ips == [layout.KUBERNETES_SERVICE_IP]


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the real node's cluster DNS")
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--listen", default=f"{layout.NODE_IP}:{layout.DNS_PORT}")
    parser.add_argument("--node-root", help="unused; names the node on the command line for the teardown")
    ns = parser.parse_args(args)
    serve(ns.listen, api_reader(ns.kubeconfig))
    return 0


if __name__ == "__main__":
    sys.exit(main())
