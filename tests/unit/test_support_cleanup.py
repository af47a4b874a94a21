"""The session's cleanup kills what the tests left running, and never the run itself: not its own
ancestors (``timeout 600 pytest --basetemp=/x`` names the basetemp too), not a process older than the
session (``... | tee /x/log``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from support.cleanup import Proc, leftovers

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent


def test_leftovers_are_descendants_and_late_marker_holders_but_no_ancestor_nor_older_process():
    marker = "/tmp/basetemp-x"
    table = {
        1: Proc(0, 0.0, "init"),
        10: Proc(1, 5.0, f"timeout 600 pytest --basetemp={marker}"),  # an ancestor naming the marker
        11: Proc(10, 5.1, f"python -m pytest --basetemp={marker}"),  # the session itself
        12: Proc(11, 20.0, "kube-apiserver --etcd-servers=..."),  # a child a test started
        13: Proc(12, 21.0, "etcd"),  # and its child
        14: Proc(9, 5.0, f"tee {marker}/log"),  # a sibling in the pipeline, older than the session
        15: Proc(1, 22.0, f"python worker.py {marker}/pytest-0/test_x0"),  # re-parented to init
        16: Proc(1, 22.0, "unrelated"),
        17: Proc(
            1, 22.0, f"etcd --data-dir {marker}2/etcd"
        ),  # another session's basetemp-x2, beside this one
        18: Proc(1, 22.0, f"python worker.py {marker}"),  # the marker itself, last on the line
    }
    assert sorted(leftovers(11, [marker], since=10.0, table=table)) == [12, 13, 15, 18]


def test_a_run_under_timeout_with_a_basetemp_survives_its_cleanup_and_kills_the_leak(tmp_path: Path):
    """The real thing: ``timeout 120 pytest --basetemp=...`` (the conftest's hooks loaded as a plugin)
    with one test that leaves a re-parented process behind naming its tmp_path."""
    pidfile = tmp_path / "leaked.pid"
    test = tmp_path / "test_leak.py"
    test.write_text(
        textwrap.dedent(f"""
        import subprocess, sys

        def test_leaves_a_process_behind(tmp_path):
            # the middle process exits at once: the sleeper is re-parented (found by its marker only)
            subprocess.run([sys.executable, "-c", "import subprocess, sys; print(subprocess.Popen("
                            "[sys.executable, '-c', 'import time; time.sleep(60)', sys.argv[1]]).pid)",
                            str(tmp_path)], stdout=open({str(pidfile)!r}, "w"), check=True)
        """)
    )
    basetemp = tmp_path / "basetemp"
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    argv = ["timeout", "120", sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider"]
    argv += ["--rootdir", str(tmp_path), "-c", os.devnull, f"--basetemp={basetemp}", "-q", str(test)]
    run = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    out = run.stdout + run.stderr
    # before the fix `timeout` itself was SIGKILLed (returncode -9); now pytest reports the leak and fails
    assert run.returncode == 1, out
    assert "1 process(es) started by the tests were still running" in out, out
    leaked = int(pidfile.read_text())
    assert not Path(f"/proc/{leaked}").exists() or "Z" in Path(f"/proc/{leaked}/stat").read_text().split()[2]
