"""``dynamo-operator nats-reload``: the bundled NATS pod's config reloader (``render/natsaccess.py``).

The operator keeps one NATS account per graph namespace in a ConfigMap (``accounts.conf``) that the NATS
pod mounts and its ``nats.conf`` includes. The kubelet updates a mounted ConfigMap in place (an atomic
swap of the directory's ``..data`` link), but nats-server reads its configuration only at start and on
``SIGHUP``. This container, beside the server in a pod with a shared process namespace, reads the file
every ``--interval`` seconds and, when its content differs from what the server last loaded, sends the
server (its pid from ``pid_file`` of ``nats.conf``) ``SIGHUP``: accounts appear and go without a restart,
and the connections already open stay (nats-server's reload keeps them).

Both containers run as the same user, so no capability is needed to signal. A reload the server could not
take (no pid file yet, the process gone) is tried again on the next tick.

At start the reloader cannot know what the server loaded: the file may have changed between the server's
start and the reloader's first read (or while the reloader was restarting). So the first thing it does, once
the pid file names a live process, is one ``SIGHUP`` whatever the file holds; every later one follows a
change of content. A reload of an unchanged file is harmless (nats-server reports no changes). nats-server
installs its signal handler before it writes its pid file (``NewServer``, then ``Start``), so a pid read from
the file never meets a server that a ``SIGHUP`` would kill.
"""

from __future__ import annotations

import hashlib
import os
import signal
import threading
from pathlib import Path

import click

from dynamo_operator.runtime.log import get_logger, setup_logging

log = get_logger("nats-reload")


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _signal_server(pid_file: Path, reason: str, quiet: bool = False) -> bool:
    """``SIGHUP`` to the pid in ``pid_file``; False when there is no such server (yet).

    ``quiet``: the failure is expected (waiting for the server at start) and logged at debug level only.
    """
    try:
        pid = int(pid_file.read_text().strip())
        os.kill(pid, signal.SIGHUP)
    except (OSError, ValueError) as e:
        (log.debug if quiet else log.warning)(
            "could not signal nats-server", pid_file=str(pid_file), error=str(e)
        )
        return False
    log.info("sent SIGHUP to nats-server", pid=pid, reason=reason)
    return True


def watch(path: Path, pid_file: Path, interval: float, stop: threading.Event) -> None:
    """Until ``stop``: one ``SIGHUP`` once the server is found, then one after each change of ``path``."""
    loaded: str | None = None
    started = False
    # the server usually starts beside us: its pid file missing for a while is expected (debug level)
    log.info("waiting for nats-server, to reload it once at start", pid_file=str(pid_file))
    while True:
        now = _digest(path)  # read before signalling: a change after this read is seen on the next tick
        if not started:
            started = _signal_server(
                pid_file, "start: the file may have changed since the server read it", quiet=True
            )
            if started:
                loaded = now
        elif now is not None and now != loaded and _signal_server(pid_file, "the accounts file changed"):
            loaded = now
        if stop.wait(interval):
            return


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
@click.option(
    "--interval",
    default=2.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    help="seconds between two reads of the file",
)
def command(path: Path, pid_file: Path, interval: float) -> None:
    """Send nats-server SIGHUP whenever the mounted accounts file changes."""
    setup_logging()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    log.info("watching the accounts file", file=str(path), pid_file=str(pid_file), interval=interval)
    watch(path, pid_file, interval, stop)
