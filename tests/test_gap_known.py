"""A known true difference, through the real engine: the simulator plays demo_bench with seeded fault
plans (each turn of each repeat gets a `wrong_call` with probability q: a call with one argument
changed, or an unexpected call on a turn that expects none, which fails the turn without a retry;
every other turn it answers with the golden answer, which passes), judged by the offline heuristic. Row A's repeats have q = 0.1, row B's
q = 0.6: the true strict pass rates are 0.9 and 0.4, B − A = −50 points. The gap's interval
(`compare.gap`, the two-stage paired bootstrap over turn blocks and runs) covers it, and calls it real.
How often it covers it over many seeds, and how often two rows of one setting are called different,
is scripts/bench_gap.py's to measure (a fixed seed here: one draw, checked)."""

from __future__ import annotations

import random
from pathlib import Path

from arena_tui.compare.gap import Side, pair_gap
from arena_tui.compare.stored import load_runs
from arena_tui.stats.paired import BOOTSTRAP, MCNEMAR
from arena_tui.store import Store
from benchmarks.registry import load_benchmark
from scripts.bench_gap import plan, simulate  # the benchmark's own recording of a seeded run (one home)

Q_A, Q_B = 0.1, 0.6
TRUE_GAP = (1 - Q_B) - (1 - Q_A)  # -0.5
SEED = 0  # the first seed: its plans fault 0+0 of A's 20 turns and 4+5 of B's (expected 2 and 12)


async def test_the_interval_covers_a_known_difference_of_seeded_faults(tmp_path: Path, quiet_pipecat) -> None:
    rng = random.Random(SEED)
    plans = {f"a{i}": plan(rng, Q_A) for i in range(2)} | {f"b{i}": plan(rng, Q_B) for i in range(2)}
    async with await Store.open(tmp_path / "arena.db") as store:
        for run_id, faults in plans.items():
            assert await simulate(store, run_id, faults) == "", run_id  # the run completed
        await store.flush()
        runs = {r.run_id: r for r in await load_runs(store, list(plans), lambda name: load_benchmark(name))}
    for run_id, run in runs.items():  # the simulator did what the truth assumes: a faulted turn fails, no other
        faulted = {int(item.split(":")[0]) for item in plans[run_id].split(",") if item}
        statuses = {t: r.status for t, r in run.results.items()}
        assert {t for t, ok in run.tally.rows.items() if not ok} == faulted & set(run.tally.rows), (
            run_id, plans[run_id], run.tally.rows, statuses, run.tally.apart)
    a = Side("A: q=0.1", "demo_bench", (runs["a0"], runs["a1"]))
    b = Side("B: q=0.6", "demo_bench", (runs["b0"], runs["b1"]))
    g = pair_gap(a, b).strict
    assert g is not None and g.method == BOOTSTRAP and g.runs == (2, 2)
    assert g.ci[0] <= TRUE_GAP <= g.ci[1], (g, plans)
    assert g.distinguishable(), (g, plans)
    # one run a side: McNemar's exact test and Newcombe's interval on effective turns cover it too
    one = pair_gap(Side("A", "demo_bench", (runs["a0"],)), Side("B", "demo_bench", (runs["b0"],))).strict
    assert one is not None and one.method == MCNEMAR and one.ci[0] <= TRUE_GAP <= one.ci[1], one
