"""The node's own cgroup root: created before the kubelet starts, the only cgroups the teardown empties.

The kubelet (cgroupfs driver, ``cgroupRoot: /dynamo-node``) makes its ``kubepods`` tree under
``<hierarchy>/dynamo-node`` in every v1 hierarchy; the kubelet refuses a cgroup root that does not exist,
so it is made here first, in each hierarchy, with the cpuset of its parent (an empty ``cpuset.cpus``
would refuse every process). Everything the teardown kills or removes is found under that root, so another
node's ``kubepods`` at the top of a hierarchy is never read, let alone emptied (``foreign``).

Every function takes the cgroup mount point as an argument: the unit tier runs them on a fake tree.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from . import layout

CPUSET_FILES = ("cpuset.cpus", "cpuset.mems")


def hierarchies(root: Path = layout.CGROUP_ROOT) -> list[Path]:
    """Every mounted hierarchy under ``root`` (a directory holding ``cgroup.procs``)."""
    if not root.is_dir():
        return []
    return [h for h in sorted(root.iterdir()) if h.is_dir() and (h / "cgroup.procs").exists()]


def parents(root: Path = layout.CGROUP_ROOT) -> list[Path]:
    """Our cgroup root in every hierarchy where it exists."""
    return [h / layout.CGROUP_PARENT for h in hierarchies(root) if (h / layout.CGROUP_PARENT).is_dir()]


def create(root: Path = layout.CGROUP_ROOT) -> list[Path]:
    """Makes our cgroup root in every hierarchy (an existing one is kept); returns them."""
    made = []
    for hierarchy in hierarchies(root):
        parent = hierarchy / layout.CGROUP_PARENT
        parent.mkdir(exist_ok=True)
        for name in CPUSET_FILES:
            mine, theirs = parent / name, hierarchy / name
            if mine.exists() and theirs.exists() and not mine.read_text().strip():
                mine.write_text(theirs.read_text())
        made.append(parent)
    return made


def dirs(root: Path = layout.CGROUP_ROOT) -> list[Path]:
    """Every cgroup under our root, deepest first, the roots last: the order they can be removed in.

    The kubelet removes a pod's cgroup while this walks (a test reads the tree with pods coming and going), so
    a directory that vanishes between its listing and its reading is skipped (``os.walk`` ignores the error),
    where ``Path.rglob`` raised ``FileNotFoundError``.
    """
    found: list[Path] = []
    for parent in parents(root):
        below = [Path(top) / name for top, names, _ in os.walk(parent) for name in names]
        found += sorted(below, key=lambda p: -len(p.parts))
        found.append(parent)
    return found


def pids(root: Path = layout.CGROUP_ROOT) -> set[int]:
    """Every process in a cgroup under our root: the containers the node ran."""
    found: set[int] = set()
    for d in dirs(root):
        with contextlib.suppress(OSError, ValueError):
            found.update(int(x) for x in (d / "cgroup.procs").read_text().split())
    return found


def remove(root: Path = layout.CGROUP_ROOT) -> list[str]:
    """Removes our cgroups (they must be empty); returns what stayed, with why."""
    left = []
    for d in dirs(root):
        try:
            d.rmdir()
        except FileNotFoundError:
            continue
        except OSError as e:
            left.append(f"{d}: {e.strerror}")
    return left
