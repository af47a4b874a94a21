"""Stand-in for ``python3 -m dynamo.trtllm`` under a multinode TensorRT-LLM leader's rendered ``mpirun`` on
the real node (no GPU, no TensorRT-LLM): mounted from a ConfigMap over the MPI engine image (PYTHONPATH,
forwarded to every rank by the rendered ``-x PYTHONPATH``), started once per MPI rank, rank 0 in the leader's
pod and rank 1 in the worker's, where OpenMPI's ``orted`` came through the worker's sshd. Each rank prints
one JSON line (its rank, the world size, its host, its arguments and ``SSH_CONNECTION``: how its ``orted``
reached it), then the ranks exchange their host names over MPI (mpi4py's ``allgather``, through the ``pml``
the rendered ``mpirun`` chose: TCP between the pods). Rank 0 then serves the leader's probes (``/live``,
``/health``) on ``DYN_SYSTEM_PORT``; the other ranks stay (``mpirun`` ends the job when one exits).
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import sys
import threading


def say(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def serve_probes() -> None:
    class Probes(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path in ("/live", "/health") else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    port = int(os.environ.get("DYN_SYSTEM_PORT", "9090"))
    http.server.ThreadingHTTPServer(("0.0.0.0", port), Probes).serve_forever()


def main() -> None:
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    host = socket.gethostname()
    say(rank=rank, size=size, host=host, argv=sys.argv[1:], ssh=os.environ.get("SSH_CONNECTION"))
    from mpi4py import MPI  # MPI_Init: the ranks wire up through the rendered mpirun's pml

    world = MPI.COMM_WORLD.allgather(host)
    say(rank=rank, world=world)
    if rank == 0:
        serve_probes()
    threading.Event().wait()  # a rank stays while the job lives


main()
