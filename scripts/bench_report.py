"""How long a leaderboard report takes and how much memory it needs, on a leaderboard-sized store.

Builds MODELS x BENCHMARKS x REPEATS judged runs of TURNS turns in a temporary SQLite store (through
the real Store), then times reading + computing the leaderboard and writing every report file.
Prints numbers; asserts nothing.

    .venv/bin/python -m scripts.bench_report [--models 15] [--benchmarks 2] [--repeats 10] [--turns 37]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import resource
import tempfile
import time
from pathlib import Path


from arena_tui.compare.leaderboard import build_leaderboard  # noqa: E402
from arena_tui.compare.stored import load_runs  # noqa: E402
from arena_tui.compare.pairwise import gap_families  # noqa: E402
from arena_tui.compare.report import select_runs, write_report  # noqa: E402
from arena_tui.spine.events import DimensionScore, Judgement, Latencies, RunEnded, RunStarted, TurnEnded, TurnResult  # noqa: E402
from arena_tui.store import Store  # noqa: E402

DIMS = ["kb_grounding", "instruction_following", "tool_use_correct", "turn_taking"]


async def build(path: Path, models: int, benchmarks: int, repeats: int, turns: int) -> int:
    rng = random.Random(1)
    n = 0
    async with await Store.open(path) as store:
        for m in range(models):
            skill = 0.6 + 0.35 * m / max(models - 1, 1)
            for b in range(benchmarks):
                for r in range(repeats):
                    rid = f"m{m:02d}b{b}r{r:02d}"
                    store.submit(RunStarted(run_id=rid, t_ms=0, benchmark=f"bench_{b}", model=f"model-{m:02d}",
                                            provider="openai", turn_indices=list(range(turns)),
                                            config={"speed": 1.0}))  # fmt: skip
                    for t in range(turns):
                        lat = Latencies(voice_to_voice_ms=rng.lognormvariate(7.0, 0.35),
                                        leading_silence_ms=rng.uniform(50, 400))  # fmt: skip
                        res = TurnResult(turn_index=t, status="ok", user_text=f"turn {t}", latencies=lat)
                        store.submit(TurnEnded(run_id=rid, t_ms=t * 1000.0, turn_index=t, result=res))
                        scores = {d: DimensionScore(verdict="pass" if rng.random() < skill else "fail") for d in DIMS}
                        store.submit(Judgement(run_id=rid, t_ms=t * 1000.0 + 1, turn_index=t, judge="openai:x",
                                               scores=scores))  # fmt: skip
                    store.submit(RunEnded(run_id=rid, t_ms=turns * 1000.0, status="completed"))
                    n += 1
            await store.flush()
    return n


def store_size_arguments(ap: argparse.ArgumentParser) -> None:
    """The size of the store `build` makes (also used by scripts.bench_runs_poll)."""
    ap.add_argument("--models", type=int, default=15)
    ap.add_argument("--benchmarks", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--turns", type=int, default=37)


async def main() -> None:
    ap = argparse.ArgumentParser()
    store_size_arguments(ap)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "arena.db"
        t0 = time.perf_counter()
        runs = await build(db, a.models, a.benchmarks, a.repeats, a.turns)
        t1 = time.perf_counter()
        async with await Store.open(db) as store:
            sel = await select_runs(store, ["all"])
            stored = await load_runs(store, sel.run_ids)
        t2 = time.perf_counter()
        board = build_leaderboard(stored)
        t3 = time.perf_counter()
        families = gap_families(board)  # what write_report computes first: timed on its own here
        pairs = sum(len(f.pairs) for f in families.values())
        tg = time.perf_counter() - t3
        t3 = time.perf_counter()
        write_report(board, sel, Path(tmp) / "report")
        t4 = time.perf_counter()
        html_kb = (Path(tmp) / "report" / "report.html").stat().st_size / 1024
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"runs {runs} ({a.models} models x {a.benchmarks} benchmarks x {a.repeats} repeats x {a.turns} turns)")
    print(f"build store   {t1 - t0:7.2f} s")
    print(f"read runs     {t2 - t1:7.2f} s")
    print(f"leaderboard   {t3 - t2:7.2f} s  ({len(board.rows)} rows, bootstrap 2000 x 2 per row)")
    print(f"gaps          {tg:7.2f} s  ({pairs} pairs of rows, paired bootstrap 2000 per figure)")
    print(f"write files   {t4 - t3:7.2f} s  (report.html {html_kb:.0f} KiB; the gaps again included)")
    print(f"peak RSS      {rss_mb:7.0f} MiB")


if __name__ == "__main__":
    asyncio.run(main())
