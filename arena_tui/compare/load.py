"""Read stored runs and build the leaderboard without holding an event loop (the TUI's loader).

The store is read on the loop (aiosqlite); benchmark files are read and the figures (bootstrap
resamples) computed in a thread, so a screen that loads stays responsive.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena_tui.spine.benchmark import Benchmark

from arena_tui.spine.paths import data_dir as resolve_data_dir
from ..cost import Estimate
from ..store import Store
from ..verdicts import Tally
from .leaderboard import Leaderboard, build_leaderboard
from .stored import StoredRun, load_runs, run_tally
from .selection import Selection, select_runs


@dataclass
class Loaded:
    selection: Selection
    board: Leaderboard
    runs: list[StoredRun]
    unloadable: dict[str, str] = field(default_factory=dict)  # benchmark -> why its data is not at hand


def _benchmarks(names: Sequence[str], data_dir: Path | None) -> tuple[dict[str, Benchmark | None], dict[str, str]]:
    from benchmarks.loader import BenchmarkError  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a benchmark is read
    from benchmarks.registry import load_benchmark  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a benchmark is read

    found: dict[str, Benchmark | None] = {}
    why: dict[str, str] = {}
    for name in names:
        try:
            found[name] = load_benchmark(name, resolve_data_dir(data_dir))
        except (BenchmarkError, OSError, ValueError) as e:
            found[name], why[name] = None, str(e).splitlines()[0]
    return found, why


async def load_stored(
    store: Store, run_ids: Sequence[str], data_dir: Path | None,
    known: dict[str, Benchmark | None] | None = None,
) -> tuple[list[StoredRun], dict[str, str]]:
    """The runs with their benchmark data, and the benchmarks whose data could not be found.

    `known` (name -> benchmark, None when not found) is consulted first and filled in: a screen
    that polls reads each benchmark's files once, not on every refresh."""
    known = {} if known is None else known
    names = sorted({r.benchmark for r in await store.list_runs() if r.run_id in set(run_ids)} - set(known))
    found, why = await asyncio.to_thread(_benchmarks, names, data_dir)
    known.update(found)
    return await load_runs(store, run_ids, known.get), why


async def stored_tallies(
    store: Store, run_ids: Sequence[str], data_dir: Path | None,
    known: dict[str, Benchmark | None] | None = None,
) -> dict[str, Tally]:
    """run id -> its pass rates by the report's rule (`stored.run_tally`), benchmark data
    found as the report finds it (by name, from `data_dir` or the registry)."""
    return {k: tally for k, (tally, _, _) in (await stored_figures(store, run_ids, data_dir, known)).items()}


async def stored_figures(
    store: Store, run_ids: Sequence[str], data_dir: Path | None,
    known: dict[str, Benchmark | None] | None = None,
) -> dict[str, tuple[Tally, Estimate, Estimate]]:
    """run id -> its tally (`stored_tallies`), its cost and, apart, its judge's (`StoredRun.cost`)."""
    runs, _ = await load_stored(store, run_ids, data_dir, known)
    return {r.run_id: (run_tally(r), r.cost, r.judge_cost) for r in runs}


async def load_board(store: Store, targets: Sequence[str], data_dir: Path | None) -> Loaded:
    """Select (`select_runs`), read, and compute the leaderboard of `targets`."""
    sel = await select_runs(store, targets)
    runs, why = await load_stored(store, sel.run_ids, data_dir)
    board = await asyncio.to_thread(build_leaderboard, runs)
    return Loaded(sel, board, runs, why)
