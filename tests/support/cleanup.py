"""What a test session may kill when it ends: the processes its tests started and left running.

Two kinds are found: every process below the pytest process (by parent pid), and every process whose
command line names one of the session's markers (its cluster directories, its basetemp) that started
after the session did: a component whose parent died is re-parented to init and is found only that way.

Never a process that started before the session, and never an ancestor: ``timeout 600 pytest
--basetemp=/x``, ``make pytest PYTEST_ARGS=--basetemp=/x`` or ``pytest --basetemp=/x | tee /x/log`` name
the basetemp too, and killing them kills the run that asked for the cleanup.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Proc:
    ppid: int
    started: float  # seconds since boot, as /proc/<pid>/stat counts them
    cmd: str


def process_table(proc: Path = PROC) -> dict[int, Proc]:
    """Every live (not zombie) process: its parent, start time and command line."""
    table: dict[int, Proc] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError):
            continue
        if fields[0] == "Z":
            continue
        # fields[0] is the state (field 3 of stat): field n is fields[n - 3]
        table[int(entry.name)] = Proc(int(fields[1]), int(fields[19]) / TICKS, cmd)
    return table


def uptime(proc: Path = PROC) -> float:
    """Seconds since boot: the clock of ``Proc.started``."""
    return float((proc / "uptime").read_text().split()[0])


def ancestors(pid: int, table: dict[int, Proc]) -> set[int]:
    found: set[int] = set()
    while pid in table and table[pid].ppid not in found and table[pid].ppid > 0:
        pid = table[pid].ppid
        found.add(pid)
    return found


def descendants(pid: int, table: dict[int, Proc]) -> set[int]:
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, info in table.items() if info.ppid in frontier} - found
        found |= frontier
    return found


def names(cmd: str, marker: str) -> bool:
    """Whether ``cmd`` names the path ``marker`` itself or a path below it: ``/tmp/pytest-1`` is not named by
    ``/tmp/pytest-12/x`` (another session's directory, which may be running beside this one)."""
    return re.search(re.escape(marker) + r"(?=$|[/\s])", cmd) is not None


def leftovers(me: int, markers: list[str], since: float, table: dict[int, Proc]) -> dict[int, str]:
    """The processes ``me``'s tests left running (pid -> command line); see the module docstring."""
    named = {
        pid
        for pid, info in table.items()
        if info.started >= since and any(names(info.cmd, m) for m in markers)
    }
    keep = ancestors(me, table) | {me}
    return {pid: table[pid].cmd for pid in (descendants(me, table) | named) - keep}
