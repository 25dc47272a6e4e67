"""How honest the gap between two rows is: how often two rows drawn from one setting are called "not
distinguishable" (goal >= 95 %), and how often the 95 % interval covers a known true difference.

Part 1, the statistics module (`arena_tui.stats.paired.paired_gap`, what every surface calls) on
simulated verdict tables, TRIALS seeded trials per line, printed as a Markdown table (docs/reports.md
quotes it). A setting is a benchmark of TURNS turns, each with its own pass probability (Beta(6, 1.5):
most turns easy, a few hard, drawn afresh each trial), and a seeded fault plan per run: each turn
faulted with probability q fails; with `cascade` c (each of CASCADES: 0, 0.5, 0.8 by default), a
failed turn also fails the next with probability c (a missed call cascading: turns of one run are
not independent; at 0.8 the paired difference's lag-1 autocorrelation is about 0.55). Same setting:
q = 0.1 on both sides. Known difference: q = 0.05 against q = 0.30, the truth the expected pass
rates' difference (exact without cascade, from 20,000 simulated runs with it); "called real" is the
power to see it. Beside it, a bootstrap over runs alone (the textbook "resample conversations"), to
show why the product resamples turns and runs.

Part 2, the wiring: real runs of demo_bench against the simulator with seeded `wrong_call` plans
(a wrong or unexpected call fails its turn, no retry; every other turn passes), judged by the
offline heuristic, recorded in a temporary store and compared by `arena_tui.compare.gap.pair_gap`
(the pairing and the method the screens and the report use): SIM_TRIALS pairs of single runs of
one setting (q = 0.2), and SIM_KNOWN pairs of rows of two repeats at q = 0.1 and q = 0.6 (true
B − A = −50 points). Slow: each run takes ~9 s at 20x.

Prints numbers; asserts nothing.

    .venv/bin/python -m scripts.bench_gap [--trials 200] [--turns 30] [--repeats 1,2,3,5] [--cascades 0,0.5,0.8]
                                          [--sim-trials 10] [--sim-known 3]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from arena_tui.stats.paired import Verdict, paired_gap


def setting(rng: np.random.Generator, turns: int) -> np.ndarray:
    """Each turn's pass probability without faults."""
    return rng.beta(6.0, 1.5, size=turns)


def runs(rng: np.random.Generator, base: np.ndarray, q: float, cascade: float, n: int) -> np.ndarray:
    """n runs × turns of pass (True) / fail, a seeded fault plan each."""
    ok = (rng.random((n, base.size)) < base) & ~(rng.random((n, base.size)) < q)
    if cascade:
        spill = rng.random((n, base.size)) < cascade
        for t in range(1, base.size):
            ok[:, t] &= ok[:, t - 1] | ~spill[:, t]
    return ok


def truth(base: np.ndarray, qa: float, qb: float, cascade: float, rng: np.random.Generator) -> float:
    if not cascade:
        return float(base.mean() * ((1 - qb) - (1 - qa)))
    return float(runs(rng, base, qb, cascade, 20_000).mean() - runs(rng, base, qa, cascade, 20_000).mean())


def table(x: np.ndarray) -> list[list[Verdict]]:
    return [[bool(v) for v in row] for row in x]


def runs_only(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, resamples: int = 2000) -> tuple[float, float]:
    """The bootstrap over runs alone: each side's runs resampled, the turns fixed."""
    ra, rb = a.mean(axis=1), b.mean(axis=1)
    da = ra[rng.integers(0, ra.size, (resamples, ra.size))].mean(axis=1)
    db = rb[rng.integers(0, rb.size, (resamples, rb.size))].mean(axis=1)
    lo, hi = np.quantile(db - da, [0.025, 0.975])
    return float(lo), float(hi)


def part1(trials: int, turns: int, repeats: list[int], cascades: list[float]) -> None:
    """One line per (repeats, cascade), as a Markdown table. `counted as` is what the method made of the
    turns' correlation, on average over the known-difference trials: one run a side, the effective turns
    the test counts (of `turns`); repeats, the turns the bootstrap draws together."""
    print(f"part 1: the statistics module on simulated verdict tables; {trials} seeded trials per line, {turns} turns\n")
    print("| repeats | cascade | method | same setting: not distinguishable | known gap: covered | known gap: called real "
          "| counted as | runs-only bootstrap: not dist. / covered |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    for m in repeats:
        for cascade in cascades:
            same = covered = real = naive_same = naive_cov = 0
            counted = 0.0
            method = ""
            for trial in range(trials):
                rng = np.random.default_rng(trial)
                base = setting(rng, turns)
                a, b = runs(rng, base, 0.1, cascade, m), runs(rng, base, 0.1, cascade, m)
                g = paired_gap(table(a), table(b))
                assert g is not None
                method = g.method
                same += not g.distinguishable()
                if m > 1:
                    lo, hi = runs_only(a, b, rng)
                    naive_same += lo <= 0 <= hi
                a, b = runs(rng, base, 0.05, cascade, m), runs(rng, base, 0.30, cascade, m)
                true = truth(base, 0.05, 0.30, cascade, rng)
                g = paired_gap(table(a), table(b))
                assert g is not None
                covered += g.ci[0] <= true <= g.ci[1]
                real += g.distinguishable()
                counted += g.effective if g.effective is not None else g.block
                if m > 1:
                    lo, hi = runs_only(a, b, rng)
                    naive_cov += lo <= true <= hi
            naive = f"{naive_same / trials:.1%} / {naive_cov / trials:.1%}" if m > 1 else "–"
            mean = counted / trials
            shown = f"{mean:.1f} of {turns} turns" if m == 1 else f"blocks of {mean:.1f} turns"
            print(f"| {m} | {cascade:.1f} | {method} | {same / trials:.1%} | {covered / trials:.1%} | {real / trials:.1%} "
                  f"| {shown} | {naive} |", flush=True)


async def simulate(store, run_id: str, faults: str) -> str:  # noqa: ANN001
    """Record one run; '' when it completed, else why the engine gave up (its turns so far stay recorded:
    the ones it never played pair nothing, as on every surface)."""
    from arena_tui.judge import JudgeWorker  # deferred: part 2 only (the judge, the engine)
    from arena_tui.judge.heuristic import HeuristicJudge  # deferred: part 2 only
    from arena_tui.spine.bus import EventBus  # deferred: part 2 only
    from arena_tui.spine.settings import RunSettings  # deferred: part 2 only
    from benchmarks.registry import load_benchmark  # deferred: part 2 only
    from runners.base import RunError  # deferred: part 2 only (Pipecat)
    from runners.engine import run_benchmark  # deferred: part 2 only (Pipecat)
    from runners.simulator import SimulatorServer  # deferred: part 2 only (Pipecat)

    demo = load_benchmark("demo_bench")
    sim = SimulatorServer(demo, faults=faults or None)
    url = await sim.start()
    try:
        bus = EventBus()
        recording = store.start_recording(bus)
        judging = JudgeWorker(demo, HeuristicJudge(), bus, run_id).start()
        config = RunSettings(model="sim", base_url=url, speed=20.0, faults=faults or None, greeting={"enabled": False},
                             watchdog={"extra_ms": 4000, "min_wall_ms": 3000})
        why = ""
        try:
            await run_benchmark(demo, config, bus, run_id)
        except RunError as e:
            why = str(e)
        await judging
        bus.close()
        await recording
        return why
    finally:
        await sim.stop()


def plan(rng: random.Random, q: float, turns: int = 10) -> str:
    return ",".join(f"{t}:wrong_call*" for t in range(turns) if rng.random() < q)


async def part2(trials: int, known: int) -> None:
    from loguru import logger  # deferred: part 2 only (Pipecat logs every frame at DEBUG)

    from arena_tui.compare.gap import Side, pair_gap  # deferred: part 2 only
    from arena_tui.compare.stored import load_runs  # deferred: part 2 only
    from arena_tui.store import Store  # deferred: part 2 only
    from benchmarks.registry import load_benchmark  # deferred: part 2 only

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    print("\npart 2: real simulator runs of demo_bench (10 turns, 20x, heuristic judge), compared by compare.gap")
    rng = random.Random(0)
    same = called = covered = 0
    gave_up: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        async with await Store.open(Path(tmp) / "arena.db") as store:
            for i in range(trials):
                ids = {f"s{i}a": plan(rng, 0.2), f"s{i}b": plan(rng, 0.2)}
                for run_id, faults in ids.items():
                    if why := await simulate(store, run_id, faults):
                        gave_up.append(f"{run_id}: {why}")
                await store.flush()
                a, b = await load_runs(store, list(ids), lambda name: load_benchmark(name))
                g = pair_gap(Side("A", "demo_bench", (a,)), Side("B", "demo_bench", (b,))).strict
                same += g is not None and not g.distinguishable()
                print(f"  same setting {i + 1}/{trials}: {g.method if g else '–'}: B − A = "
                      f"{100 * g.difference if g else float('nan'):+.0f} pts, p {g.p if g else float('nan'):.2f}", flush=True)
            for i in range(known):
                ids = {f"k{i}a{r}": plan(rng, 0.1) for r in range(2)} | {f"k{i}b{r}": plan(rng, 0.6) for r in range(2)}
                for run_id, faults in ids.items():
                    if why := await simulate(store, run_id, faults):
                        gave_up.append(f"{run_id}: {why}")
                await store.flush()
                got = await load_runs(store, list(ids), lambda name: load_benchmark(name))
                g = pair_gap(Side("A", "demo_bench", tuple(got[:2])), Side("B", "demo_bench", tuple(got[2:]))).strict
                assert g is not None
                covered += g.ci[0] <= -0.5 <= g.ci[1]
                called += g.distinguishable()
                print(f"  known −50 pts {i + 1}/{known}: {g.method}: B − A = {100 * g.difference:+.0f} pts "
                      f"[{100 * g.ci[0]:+.0f}, {100 * g.ci[1]:+.0f}]", flush=True)
    print(f"same setting, one run a side: {same}/{trials} not distinguishable")
    if known:
        print(f"known difference, two repeats a side: interval covered it {covered}/{known}, called real {called}/{known}")
    for line in gave_up:
        print(f"  the engine gave up on {line} (its unplayed turns pair nothing)")
    print(f"({time.perf_counter() - started:.0f} s of real runs)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=200, help="seeded trials per line of part 1 (0: part 2 only)")
    ap.add_argument("--turns", type=int, default=30)
    ap.add_argument("--repeats", default="1,2,3,5", help="runs a side, one line each (comma-separated)")
    ap.add_argument("--cascades", default="0,0.5,0.8",
                    help="chances that a failed turn also fails the next, one line each (comma-separated)")
    ap.add_argument("--sim-trials", type=int, default=10, help="pairs of real single runs of one setting (0: none)")
    ap.add_argument("--sim-known", type=int, default=3, help="pairs of real two-repeat rows with a known gap (0: none)")
    a = ap.parse_args()
    t0 = time.perf_counter()
    if a.trials:
        part1(a.trials, a.turns, [int(x) for x in a.repeats.split(",")], [float(x) for x in a.cascades.split(",")])
        print(f"({time.perf_counter() - t0:.0f} s)")
    if a.sim_trials or a.sim_known:
        asyncio.run(part2(a.sim_trials, a.sim_known))


if __name__ == "__main__":
    main()
