"""Measure how soon the CLI shows something: `arena-tui --help` (wall time of the whole process:
it reads the command registry alone, no command module), and `arena-tui run --headless`'s first
output line (the headline: benchmark, model, turns, judge, database) and first turn's progress line.

    .venv/bin/python -m scripts.bench_cli_start [--runs 5]

Each process is fresh; each run is on a throw-away database (demo_bench, simulator, turn 0, 20x).
Goals: --help within 0.2 s, the first line within 2 s. Numbers only: nothing here passes or fails.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def one(db: Path) -> tuple[float, float | None]:
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena_tui.cli", "--db", str(db), "run", "demo_bench", "--model", "sim",
         "--speed", "20", "--turns", "0", "--headless", "--judge", "heuristic"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = turn = None
    assert proc.stdout is not None
    for line in proc.stdout:
        now = time.monotonic() - t0
        if first is None:
            first = now
        if turn is None and "] 1/1" in line:
            turn = now
    proc.wait()
    assert first is not None, "no output at all"
    return first, turn


def help_s() -> float:
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "arena_tui.cli", "--help"], stdout=subprocess.DEVNULL, check=True)
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    n = ap.parse_args().runs
    helps = sorted(help_s() for _ in range(n))
    print(f"--help {n}: p50 {statistics.median(helps):.2f} s, max {helps[-1]:.2f} s (goal < 0.2 s)")
    with tempfile.TemporaryDirectory() as tmp:
        got = [one(Path(tmp) / f"r{i}.db") for i in range(n)]
    firsts = sorted(f for f, _ in got)
    turns = sorted(t for _, t in got if t is not None)
    print(f"runs {n}: first line p50 {statistics.median(firsts):.2f} s, max {firsts[-1]:.2f} s (goal < 2 s)")
    if turns:
        print(f"        first turn line p50 {statistics.median(turns):.2f} s, max {turns[-1]:.2f} s")


if __name__ == "__main__":
    main()
