"""Search time across stored runs (`arena-tui search`, `arena_tui.compare.search`).

Not a test: prints a table. Builds N stored conversation_bench runs (75 turns each, default 20)
through the real store's writer: each turn's result (the golden answer as the reply, the expected
calls made), a whole-run judgement per turn with a phase-2 revision on every fifth turn, a few
failed turns with the judge's causes, and one person's verdict. Then times, wall clock:
  - cold: the first search, which builds the index of every run (reads each run once);
  - warm: the same search again (the index is up to date: one SQL scan);
  - a phrase only some turns hold, a filter by dimension, a filter by cause;
  - one run changed (a new judgement): the search that re-reads it.
Each timing is the median of `--repeat` searches (the cold one is once, on a fresh copy each time).

    .venv/bin/python -m scripts.bench_search [--runs 20] [--repeat 5] [--data ../shared/audio-arena]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from arena_tui.compare.search import search
from arena_tui.judge.human import record_verdict
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.events import (DimensionScore, Judgement, Latencies, RunEnded, RunStarted, ToolCallRecord,
                                    TurnEnded, TurnResult)
from arena_tui.store import Store
from benchmarks.registry import load_benchmark
from scripts import shared_data

JUDGE = "anthropic:claude-opus-4-5"


def run_events(bench: Benchmark, run_id: str, k: int) -> list:
    """One run: every turn answered with its golden text and expected calls, judged as a whole run."""
    evs: list = [RunStarted(run_id=run_id, t_ms=0.0, benchmark=bench.name, model=f"model-{k % 4}", provider="openai",
                            turn_indices=[t.turn_index for t in bench.turns], speed=1.0,
                            benchmark_snapshot=bench.snapshot())]
    for t in bench.turns:
        i = t.turn_index
        calls = [ToolCallRecord(call_id=f"c{i}-{n}", name=c.name, args=dict(c.args), status="matched", response={"ok": True})
                 for n, c in enumerate(t.expected_calls)]
        answer = t.golden_text + (" Your table is booked." if (i + k) % 9 == 0 else "")
        result = TurnResult(turn_index=i, status="ok", user_text=t.input, assistant_text=answer, tool_calls=calls,
                            latencies=Latencies(voice_to_voice_ms=900.0 + i, pipeline_ttfb_ms=800.0))
        evs.append(TurnEnded(run_id=run_id, t_ms=1000.0 * (i + 1), turn_index=i, result=result))
    for t in bench.turns:
        i = t.turn_index
        fails = (i + k) % 11 == 0
        why = "the price quoted contradicts the knowledge base" if fails else "matches the golden answer's facts"
        scores = {d: DimensionScore(verdict="fail" if fails and d == "kb_grounding" else "pass", reasoning=why)
                  for d in t.dimensions}
        scores["turn_taking"] = DimensionScore(verdict="pass", reasoning="timing present, no overlap, no reconnect")
        j = Judgement(run_id=run_id, t_ms=80_000.0, turn_index=i, judge=JUDGE, revision=1, scope="run", scores=scores,
                      causes=["kb_contradiction"] if fails else [])
        evs.append(j)
        if i % 5 == 0:
            evs.append(j.model_copy(update={"revision": 2, "phase": 2, "rule": "realignment"}))
    evs.append(RunEnded(run_id=run_id, t_ms=90_000.0, status="completed"))
    return evs


async def build(db: Path, bench: Benchmark, runs: int) -> list[str]:
    ids = [f"{k:02d}{'0' * 30}"[:32] for k in range(runs)]
    async with await Store.open(db) as store:
        for k, run_id in enumerate(ids):
            for ev in run_events(bench, run_id, k):
                store.submit(ev)
            await store.flush()
        await record_verdict(store, ids[0], 1, {"instruction_following": "fail"}, "skipped the total", "bench",
                             causes=["partial_answer"], benchmark=bench)
    return ids


async def timed(db: Path, *args: object, **kwargs: object) -> tuple[float, int]:
    async with await Store.open(db) as store:
        t0 = time.perf_counter()
        hits = await search(store, *args, **kwargs)  # type: ignore[arg-type]
        return time.perf_counter() - t0, len(hits)


async def main(args: argparse.Namespace) -> None:
    bench = load_benchmark(Path(args.data) / "conversation_bench")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base.db"
        t0 = time.perf_counter()
        ids = await build(base, bench, args.runs)
        print(f"{args.runs} runs x {len(bench.turns)} turns recorded in {time.perf_counter() - t0:.1f} s "
              f"({base.stat().st_size / 1e6:.1f} MB)")
        cold = []
        for n in range(args.repeat):
            db = Path(tmp) / f"cold{n}.db"
            shutil.copy(base, db)
            cold.append(await timed(db, "booked"))
        db = Path(tmp) / "cold0.db"
        rows = [("cold: first search, builds the index", "booked", {}, cold)]
        for what, text, kw in [("warm: the same search", "booked", {}),
                               ("a phrase in the judge's reasons", "contradicts the knowledge base", {}),
                               ("--dimension kb_grounding", "price", {"dimension": "kb_grounding"}),
                               ("--cause kb_contradiction", "", {"cause": "kb_contradiction"}),
                               ("--run (one run)", "booked", {"run_ids": [ids[min(3, len(ids) - 1)]]})]:
            rows.append((what, text, kw, [await timed(db, text, **kw) for _ in range(args.repeat)]))
        changed = []
        for _ in range(args.repeat):
            async with await Store.open(db) as store:
                await record_verdict(store, ids[-1], 2, {"kb_grounding": "fail"}, "wrong date", "bench")
            changed.append(await timed(db, "booked"))
        rows.append(("one run changed: re-reads it", "booked", {}, changed))
    print(f"{'search':40} {'text':32} {'hits':>5} {'median s':>9} {'max s':>7}")
    for what, text, _, got in rows:
        secs = [s for s, _ in got]
        print(f"{what:40} {repr(text):32} {got[0][1]:>5} {statistics.median(secs):>9.3f} {max(secs):>7.3f}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--data", default=str(shared_data()))
    asyncio.run(main(p.parse_args()))
