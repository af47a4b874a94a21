"""Stand-in for ``python3 -m dynamo.sglang`` and ``python3 -m dynamo.vllm`` on the real node (no GPU, no
engine): mounted from a ConfigMap over the runtime image's ``dynamo`` package (PYTHONPATH) as both modules,
it runs the launch the operator rewrote for a multinode component and forms the group as the engine's
distributed init does: SGLang's ``--dist-init-addr host:port --nnodes N --node-rank R``, or vLLM's
multiprocessing executor across nodes (``--master-addr host --master-port P --nnodes N --node-rank R``,
``--headless`` on the workers). Rank 0 listens on the rendezvous port and serves the worker probes' ``/live``
and ``/health`` on ``DYN_SYSTEM_PORT`` (healthy once every other rank joined); every other rank resolves the
leader's address, connects, and says its rank. It prints its arguments first (one JSON line) so the test can
compare them with the rendering.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import socket
import sys
import threading
import time

JOIN_TIMEOUT = 180.0  # a rank without its leader after this long exits (the pod restarts)


def parse() -> tuple[str, int, int, int]:
    """(leader host, rendezvous port, nnodes, node rank) from SGLang's or vLLM's flags."""
    p = argparse.ArgumentParser(prog="dynamo engine (stub)")
    p.add_argument("--dist-init-addr")  # SGLang
    p.add_argument("--master-addr")  # vLLM, mp executor
    p.add_argument("--master-port", type=int)
    p.add_argument("--distributed-executor-backend")
    p.add_argument("--nnodes", type=int, required=True)
    p.add_argument("--node-rank", type=int, required=True)
    args, _ = p.parse_known_args()
    if args.dist_init_addr:
        host, _, port = args.dist_init_addr.rpartition(":")
        return host, int(port), args.nnodes, args.node_rank
    if args.distributed_executor_backend != "mp" or not args.master_addr or not args.master_port:
        p.error("neither --dist-init-addr nor the mp executor's --master-addr/--master-port")
    return args.master_addr, args.master_port, args.nnodes, args.node_rank


def serve_health(joined: set[int], expected: int) -> None:
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            ok = self.path == "/live" or (self.path == "/health" and len(joined) >= expected)
            self.send_response(200 if ok else 503)
            self.end_headers()
            self.wfile.write(json.dumps({"joined": sorted(joined)}).encode())

        def log_message(self, *args: object) -> None:
            pass

    port = int(os.environ.get("DYN_SYSTEM_PORT", "9090"))
    http.server.ThreadingHTTPServer(("0.0.0.0", port), Health).serve_forever()


def lead(port: int, nnodes: int) -> None:
    joined: set[int] = set()
    threading.Thread(target=serve_health, args=(joined, nnodes - 1), daemon=True).start()
    server = socket.create_server(("0.0.0.0", port))
    print(f"rank 0 listening on :{port} for {nnodes - 1} rank(s)", flush=True)
    held = []
    while True:
        conn, peer = server.accept()
        rank = int(conn.makefile().readline().split()[1])  # "rank <n>"
        conn.sendall(b"welcome\n")
        held.append(conn)
        joined.add(rank)
        print(f"rank {rank} joined from {peer[0]}", flush=True)


def follow(host: str, port: int, rank: int) -> None:
    deadline = time.monotonic() + JOIN_TIMEOUT
    while True:
        try:
            conn = socket.create_connection((host, port), timeout=5)
            break
        except OSError as e:
            if time.monotonic() > deadline:
                print(f"rank {rank}: no leader at {host}:{port}: {e}", flush=True)
                sys.exit(1)
            time.sleep(1)  # not a wait: the engine retrying a leader not up yet (JOIN_TIMEOUT)
    conn.sendall(f"rank {rank}\n".encode())
    reply = conn.makefile().readline().strip()
    print(f"rank {rank} joined leader {host}:{port} ({reply})", flush=True)
    conn.settimeout(None)
    conn.recv(1)  # held while the leader lives
    print(f"rank {rank}: the leader went away", flush=True)
    sys.exit(1)


def main() -> None:
    print(json.dumps({"argv": sys.argv[1:]}), flush=True)
    host, port, nnodes, rank = parse()
    if rank == 0:
        lead(port, nnodes)
    else:
        follow(host, port, rank)


main()
