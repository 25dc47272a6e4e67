"""A campaign beside CPU hogs: what admission control chose, and whether any turn went wrong.

Not a test: prints a table. The same campaign (`arena-tui campaign run`, as a user starts it,
in a subprocess with its own database) runs with 0, 2 and 4 processes spinning on the CPU
beside it. Columns: wall seconds, the executor's start-up seconds (Ray's `ray start-up` line;
`-` for the local pool), cells complete, the sessions per worker admission control went down to
(from its `pace:` notices; `-` when it never had to say anything), the lowest speed it gave new
runs, turns re-run because our machine lost pace on them, and turns wrong: a finished turn
whose reply is not its own turn's or whose verdict is not pass (the goal is 0). Wall-clock only.

    .venv/bin/python -m scripts.bench_hogs [--hogs 0,2,4] [--repeats 4] [--speed 8] [--concurrency N] [--executor ray]
        [--turns 0-1]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from arena_tui.store import Store
from arena_tui.verdicts import row_passes, standing
from benchmarks.registry import load_benchmark
from runners.simulator.voice import spoken_text

PACE = re.compile(r"pace: (\d+)(?:–(\d+))? sessions?/worker(?:, new runs at speed ([\d.]+))?")


async def turns(db: Path) -> tuple[int, int, int]:
    """(turns right, turns lost pace at the end, turns wrong) over every run in the database."""
    bench = load_benchmark("demo_bench")
    store = await Store.open(db)
    right = lost = wrong = 0
    try:
        for run in await store.list_runs():
            judged = standing(await store.judgements(run.run_id))
            for r in await store.turn_results(run.run_id):
                if r.turn_index < 0:
                    continue
                if r.status == "lost_pace":
                    lost += 1
                    continue
                st = judged.get(r.turn_index)
                ok = (r.status == "ok" and r.assistant_text.strip() == spoken_text(bench.turn(r.turn_index).golden_text)
                      and st is not None and st.judgement is not None and row_passes(st.scores))
                right, wrong = right + ok, wrong + (not ok)
                if not ok:  # what went wrong, to look into
                    print(f"  wrong: run {run.run_id[:8]} turn {r.turn_index}: {r.status} {r.error or ''} "
                          f"{r.assistant_text[:80]!r} {st.scores if st else 'unjudged'}", flush=True)
    finally:
        await store.close()
    return right, lost, wrong


@contextlib.contextmanager
def cpu_hogs(n: int) -> Iterator[None]:
    """`n` processes spinning on the CPU at this process's priority for as long as the block runs."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def one(hogs: int, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory(prefix="arena-hogs-") as tmp:
        db = Path(tmp) / "arena.db"
        env = {**os.environ, "ARENA_TUI_DB": str(db), "HOME": tmp, "TMPDIR": tmp}
        cmd = [sys.executable, "-m", "arena_tui.cli", "campaign", "run", "--bench", "demo_bench", "--model", "sim",
               "--repeats", str(args.repeats), "--speed", str(args.speed), "--judge", "heuristic",
               "--executor", args.executor]
        if args.concurrency:
            cmd += ["--concurrency", str(args.concurrency)]
        if args.turns:
            cmd += ["--turns", args.turns]
        t0 = time.monotonic()
        with cpu_hogs(hogs):
            out = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True, timeout=3600).stdout
        wall = time.monotonic() - t0
        paces = [m for m in PACE.finditer(out)]
        least = min((int(m.group(1)) for m in paces), default=None)
        slowest = min((float(m.group(3)) for m in paces if m.group(3)), default=None)
        startup = re.search(r"ray start-up ([\d.]+) s", out)
        cells = re.search(r"(\d+)/(\d+) cells complete", out)
        reruns = sum(len(t.split(",")) for t in re.findall(r"machine lost pace on turn\(s\) ([\d, ]+): re-run", out))
        right, lost, wrong = asyncio.run(turns(db))
    return {"hogs": hogs, "wall": wall, "startup": float(startup[1]) if startup else None,
            "cells": f"{cells[1]}/{cells[2]}" if cells else "?", "least": least, "slowest": slowest, "reruns": reruns, "right": right,
            "lost": lost, "wrong": wrong}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hogs", default="0,2,4")
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--speed", type=float, default=8.0)
    ap.add_argument("--concurrency", type=int, default=None, help="sessions per worker asked (default: from the speed)")
    ap.add_argument("--executor", choices=["local", "ray"], default="local")
    ap.add_argument("--turns", default=None, help="turn subset, e.g. 0-1 (default: all)")
    args = ap.parse_args()
    print(f"demo_bench{' turns ' + args.turns if args.turns else ''} × sim × {args.repeats}, speed {args.speed:g}, {os.cpu_count()} cores, executor {args.executor}")
    print(f"{'hogs':>4}  {'wall s':>7}  {'start s':>7}  {'cells':>5}  {'sessions/worker':>15}  {'speed':>5}  {'re-run':>6}  {'right':>5}  "
          f"{'lost':>4}  {'wrong':>5}")
    for hogs in (int(h) for h in args.hogs.split(",")):
        r = one(hogs, args)
        start = f"{r['startup']:.0f}" if r["startup"] is not None else "-"
        print(f"{r['hogs']:>4}  {r['wall']:>7.0f}  {start:>7}  {r['cells']:>5}  {r['least'] if r['least'] is not None else '-':>15}  "
              f"{r['slowest'] if r['slowest'] is not None else '-':>5}  {r['reruns']:>6}  {r['right']:>5}  "
              f"{r['lost']:>4}  {r['wrong']:>5}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
