"""A Ray cluster the campaign starts for itself: no dashboard, and nothing left after a kill -9.

Real processes: `arena-tui campaign run --executor ray` in a subprocess, in a fresh TMPDIR and
HOME, starting its own one-node cluster on 127.0.0.1. Its processes are found by a mark in their
environment (every process it starts inherits it). Once a run is under way: no dashboard process
runs (nor Ray's API server or autoscaler monitor); the coordinator is killed with SIGKILL, and
every process of its cluster (the raylet's agents too, which once lived 61 s) must be gone within
the bound, its session folder with them.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from . import processes
from .conftest import REPO_ROOT
from .test_campaign_coordinator_death import _running_runs
from .test_campaign_executors import CHILD_MARK, marked_alive, short_tempdir

GONE_BOUND_S = 15.0  # generous: the measured time is printed


def test_a_cluster_the_campaign_started_dies_with_its_coordinator_and_leaves_no_session(tmp_path: Path) -> None:
    tmp, home, token = Path(short_tempdir("rk")), tmp_path / "home", uuid.uuid4().hex
    home.mkdir()
    db = tmp_path / "arena.db"
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_TMPDIR")}
    env.update(TMPDIR=str(tmp), HOME=str(home), ARENA_TUI_DB=str(db), **{CHILD_MARK: token})
    out = (tmp_path / "coordinator.out").open("w")
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "arena_tui.cli", "campaign", "run", "--executor", "ray", "--bench", "demo_bench",
         "--model", "sim", "--speed", "1", "--turns", "0-3", "--no-greeting", "--judge", "none"],
        env=env, stdout=out, stderr=subprocess.STDOUT, cwd=REPO_ROOT)
    try:
        t0 = time.monotonic()
        while _running_runs(db) < 1:  # (a liveness bound, not a timing check)
            assert coordinator.poll() is None, (tmp_path / "coordinator.out").read_text()
            assert time.monotonic() - t0 < 240, "no run under way within 240 s"
            time.sleep(0.2)
        # the raylet starts its agents on its own time: wait for them (a bound, not a timing check), so
        # the kill below is shown to take them too
        while True:
            # setproctitle may write over a process's environment (the agents' `ray::…` titles), so the
            # cluster is what carries our mark and everything those processes started
            marked = marked_alive(token)
            every = processes.all_procs()
            cluster = list({q.pid: q for p in marked for q in [p, *processes.descendants(p.pid, every)]
                            if q.pid != coordinator.pid}.values())
            names = [p.cmd for p in cluster]
            if any("raylet" in n for n in names) and any(n.startswith("ray::DashboardAgent") for n in names):
                break
            assert time.monotonic() - t0 < 240, f"the raylet's agents did not start within 240 s: {names}"
            time.sleep(0.2)
        sessions = [p for p in (tmp / "ray").iterdir() if p.name.startswith("session_2")]
        assert len(sessions) == 1, sessions
        extras = [str(p) for p in cluster if "dashboard/dashboard.py" in p.cmd or "autoscaler/_private/monitor.py" in p.cmd]
        assert not extras, extras  # the docs say a cluster we start runs without a dashboard (nor a monitor)
        os.kill(coordinator.pid, signal.SIGKILL)
        coordinator.wait(10)
        waited, left = processes.wait_gone([p.pid for p in cluster], GONE_BOUND_S)
        print(f"\nRay cluster ({len(cluster)} processes) gone {waited:.2f} s after kill -9 of its coordinator")
        assert not left, [str(processes.read(pid)) for pid in left]
        assert not sessions[0].exists() and not (tmp / "ray" / "session_latest").exists(), list((tmp / "ray").iterdir())
    finally:
        out.close()
        if coordinator.poll() is None:
            coordinator.kill()
            coordinator.wait()
        processes.kill([p.pid for p in marked_alive(token)])
        shutil.rmtree(tmp, ignore_errors=True)
