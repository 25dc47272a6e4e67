"""What one poll of the runs list costs on a leaderboard-sized store, and what a poll costs when
nothing was committed (the `data_version` check that lets it skip the read).

Builds the same store as `scripts.bench_report` (MODELS x BENCHMARKS x REPEATS judged runs of
TURNS turns), opens it in the app (headless, as `arena-tui` opens it: the runs list is its first
screen), then times the runs list's read (every run row and its judgements, folded into pass
rates: Python work on the UI's loop), the same read when no judgement changed (the per-run tally
cache), and the no-change check. Prints numbers; asserts nothing.

    .venv/bin/python -m scripts.bench_runs_poll [--models 15] [--benchmarks 2] [--repeats 10] [--turns 37]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from arena_tui.app import ArenaApp
from arena_tui.screens.runs import RunsScreen
from scripts.bench_report import build, store_size_arguments


OPEN_TIMEOUT_S = 120.0


async def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    store_size_arguments(ap)
    ap.add_argument("--polls", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "arena.db"
        runs = await build(db, a.models, a.benchmarks, a.repeats, a.turns)
        app = ArenaApp(db)
        async with app.run_test(size=(120, 40)) as pilot:
            end = time.monotonic() + OPEN_TIMEOUT_S
            while not (isinstance(app.screen, RunsScreen) and app.screen.rows and app.store is not None):
                if time.monotonic() > end:
                    raise SystemExit(f"the runs list did not show the store's {runs} runs within {OPEN_TIMEOUT_S:.0f} s")
                await pilot.pause(0.05)
            screen, store = app.screen, app.store
            reads = []
            for _ in range(a.polls):
                screen._tallies.clear()  # every run's judgements read and tallied again
                reads += await timed(lambda: screen.read(store), 1)
            again = await timed(lambda: screen.read(store), a.polls)  # nothing changed since
            await store.data_version()
            checks = await timed(store.data_version, 50)
    print(f"runs {runs} ({a.models} models x {a.benchmarks} benchmarks x {a.repeats} repeats x {a.turns} turns)")
    print(f"first read (every run tallied)      median {statistics.median(reads):8.1f} ms  max {max(reads):8.1f} ms")
    print(f"read again (no judgement changed)   median {statistics.median(again):8.1f} ms  max {max(again):8.1f} ms")
    print(f"data_version (a poll, no commit)    median {statistics.median(checks):8.2f} ms  max {max(checks):8.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
