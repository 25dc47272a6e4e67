"""RSS per turn of one long headless run: does a run's memory grow with its length?

Not a test: prints numbers. Runs `arena-tui run BENCH --model sim --headless` (the real engine,
the real simulator, the real store and judge, as a user starts it) in a subprocess with its own
database, samples the RSS of that process and its children every 0.1 s, and prints the RSS at
each turn's end (read from the database), then the growth per turn over the run's second half
(least squares): a run that holds what it no longer needs grows by about the same every turn.
`--tracemalloc N` also has the run print, at its end, the N call sites whose allocations grew
most between its 10th turn and its end (Python's tracemalloc, in the run's own process).

    .venv/bin/python -m scripts.bench_rss_turns [--bench conversation_bench] [--data DIR] [--speed 8] [--tracemalloc 15]
        [--turns 0-3]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from scripts import shared_data

REPO = Path(__file__).resolve().parent.parent

# Imported in the run's process by `sitecustomize` when --tracemalloc is given: a snapshot after
# the 10th turn ended (its row committed) and one at exit, compared by line.
_TRACE = """
import atexit, os, sqlite3, threading, time, tracemalloc
tracemalloc.start(int(os.environ.get("ARENA_BENCH_TRACE_DEPTH", "8")))
_db, _n, _first = os.environ["ARENA_TUI_DB"], int(os.environ["ARENA_BENCH_TRACE"]), []
def _watch():
    while not _first:
        time.sleep(0.2)
        try:
            with sqlite3.connect(f"file:{_db}?mode=ro", uri=True) as c:
                done = c.execute("SELECT COUNT(DISTINCT turn_index) FROM turns WHERE turn_index >= 0").fetchone()[0]
        except sqlite3.Error:
            continue
        if done >= 10:
            _first.append(tracemalloc.take_snapshot())
threading.Thread(target=_watch, daemon=True).start()
def _report():
    if not _first:
        return
    stats = tracemalloc.take_snapshot().compare_to(_first[0], "traceback")
    print("tracemalloc: growth from turn 10 to the end", flush=True)
    for s in stats[:_n]:
        print(f"  {s.size_diff / 2**20:+8.2f} MB {s.count_diff:+8d} blocks", flush=True)
        for line in s.traceback.format()[-6:]:
            print(f"      {line}", flush=True)
atexit.register(_report)
"""


def rss_mb(root: int) -> float:
    """RSS of `root` and every process below it (from /proc), MB."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmRSS:"))
            total += int(line.split()[1]) / 1024
        except (OSError, StopIteration):
            continue
    return total


def turns_done(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            return c.execute("SELECT COUNT(DISTINCT turn_index) FROM turns WHERE turn_index >= 0").fetchone()[0]
    except sqlite3.Error:
        return 0


def slope(points: list[tuple[int, float]]) -> float:
    n = len(points)
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", default="conversation_bench")
    ap.add_argument("--data", default=str(shared_data()),
                    help="folder holding the benchmark (default: the shared Audio Arena data)")
    ap.add_argument("--speed", type=float, default=8.0)
    ap.add_argument("--judge", default="heuristic")
    ap.add_argument("--tracemalloc", type=int, default=0, metavar="N")
    ap.add_argument("--turns", default=None, help="these turns only, as `run --turns` takes them (default: all)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-rss-") as tmp:
        db = Path(tmp) / "arena.db"
        env = {**os.environ, "ARENA_TUI_DB": str(db), "HOME": tmp, "TMPDIR": tmp}
        if args.tracemalloc:
            (Path(tmp) / "sitecustomize.py").write_text(_TRACE)
            env.update(ARENA_BENCH_TRACE=str(args.tracemalloc),
                       PYTHONPATH=os.pathsep.join([tmp, env.get("PYTHONPATH", "")]).rstrip(os.pathsep))
        cmd = [sys.executable, "-m", "arena_tui.cli", "--data", args.data, "run", args.bench, "--model", "sim", "--speed", str(args.speed),
               "--headless", "--judge", args.judge, *(["--turns", args.turns] if args.turns else [])]
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        per_turn: list[tuple[int, float]] = []
        peak, last = 0.0, -1
        while proc.poll() is None:
            now = rss_mb(proc.pid)
            peak = max(peak, now)
            done = turns_done(db)
            if done != last:
                per_turn.append((done, now))
                last = done
            time.sleep(0.1)
        out = proc.stdout.read() if proc.stdout else ""
        wall = time.monotonic() - t0
    print(f"{args.bench} × sim at speed {args.speed:g}, judge {args.judge}: exit {proc.returncode}, {wall:.0f} s wall, "
          f"peak RSS {peak:.0f} MB")
    print("turns done  RSS MB")
    for done, mb in per_turn:
        print(f"{done:>10}  {mb:6.0f}")
    late = [(d, mb) for d, mb in per_turn if d >= (per_turn[-1][0] // 2 if per_turn else 0)]
    if len(late) >= 2:
        print(f"growth over the second half: {slope(late):+.2f} MB per turn")
    if args.tracemalloc or proc.returncode:
        tail = out.splitlines()
        start = next((i for i, ln in enumerate(tail) if ln.startswith("tracemalloc:")), max(0, len(tail) - 40))
        print("\n".join(tail[start:]))
    return 1 if proc.returncode else 0  # a run that failed measured nothing worth reading


if __name__ == "__main__":
    sys.exit(main())
