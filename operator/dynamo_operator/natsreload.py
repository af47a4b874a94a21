"""``dynamo-operator nats-reload``: the bundled NATS pod's config reloader (``render/natsaccess.py``).

The operator keeps one NATS account per graph namespace in a ConfigMap (``accounts.conf``) that the NATS
pod mounts and its ``nats.conf`` includes. The kubelet updates a mounted ConfigMap in place (an atomic
swap of the directory's ``..data`` link), but nats-server reads its configuration only at start and on
``SIGHUP``. This container, beside the server in a pod with a shared process namespace, reads the file
every ``--interval`` seconds and, when its content differs from what the server last loaded, sends the
server (its pid from ``pid_file`` of ``nats.conf``) ``SIGHUP``: accounts appear and go without a restart,
and the connections already open stay (nats-server's reload keeps them).

Both containers run as the same user, so no capability is needed to signal. A reload the server could not
take (no pid file yet, the process gone) is tried again on the next tick; a server that starts after a
change reads the new file itself.
"""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import threading
from pathlib import Path

import click

log = logging.getLogger("dynamo.nats-reload")


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _signal_server(pid_file: Path) -> bool:
    """``SIGHUP`` to the pid in ``pid_file``; False when there is no such server (yet)."""
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, signal.SIGHUP)
    except (OSError, ValueError) as e:
        log.warning("could not signal nats-server (%s): %s", pid_file, e)
        return False
    log.info("sent SIGHUP to nats-server (pid %d): the accounts file changed", pid)
    return True


def watch(path: Path, pid_file: Path, interval: float, stop: threading.Event) -> None:
    """Until ``stop``: ``SIGHUP`` the server after each change of ``path``'s content."""
    loaded = _digest(path)  # what the server read when it started (it starts from the same volume)
    while not stop.wait(interval):
        now = _digest(path)
        if now is not None and now != loaded and _signal_server(pid_file):
            loaded = now


@click.command("nats-reload")
@click.option(
    "--file",
    "path",
    default="/etc/nats-config/accounts.conf",
    show_default=True,
    type=click.Path(path_type=Path),
    help="the mounted file whose change reloads the server",
)
@click.option(
    "--pid-file",
    default="/var/run/nats/nats.pid",
    show_default=True,
    type=click.Path(path_type=Path),
    help="nats-server's pid_file",
)
@click.option("--interval", default=2.0, show_default=True, help="seconds between two reads of the file")
def command(path: Path, pid_file: Path, interval: float) -> None:
    """Send nats-server SIGHUP whenever the mounted accounts file changes."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    log.info("watching %s (nats-server pid in %s)", path, pid_file)
    watch(path, pid_file, interval, stop)
