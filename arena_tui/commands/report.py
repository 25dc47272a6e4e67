"""`arena-tui report RUNS… DIR`: comparison CSVs, summary.md and a self-contained report.html.

A run's benchmark (its turns' dimensions and categories) comes from the data folders by name,
else from the snapshot recorded with its newest run (as `judge` reads it): a report of a copied
database, or without `--data`, works. Only a benchmark found in neither is said, in one line."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from arena_tui.spine.errors import CliError
from arena_tui.spine.paths import db_path

from ..campaign.records import campaign_runs
from ..compare.report import build_report
from ..judge.locate import find_benchmark
from ..store import Store, StoreError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("targets", nargs="+", metavar="TARGET", help="campaign ids, run ids, benchmark names or `all`")
    parser.add_argument("dest", metavar="DIR", help="folder to write the report files into (created)")
    parser.add_argument("--baseline", metavar="ROW", help="pairwise.csv compares each row with this one (a row's name as "
                        "model_summary.csv's model_name, or a unique part of it) instead of every two rows")


async def _main(args: argparse.Namespace) -> int:
    unloadable: list[str] = []

    async with await Store.open(db_path(args.db), create=False) as store:
        await store.mark_interrupted_stale()
        recorded = await _recorded_benchmarks(store)

        def benchmark_for(name: str):
            try:
                return find_benchmark(name, args.data)
            except LookupError:
                if name in recorded:
                    return recorded[name]
                unloadable.append(name)  # still reportable: see the note printed below
                return None

        try:
            sel, board, paths = await build_report(store, args.targets, args.dest, benchmark_for,
                                                   expand=lambda raw: campaign_runs(store, raw), baseline=args.baseline)
        except LookupError as e:
            raise CliError(str(e)) from None
    print(f"{len(board.runs)} runs, {len(board.models)} models, {len(board.benchmarks)} benchmarks")
    for run_id, why in sel.skipped.items():
        print(f"skipped {run_id}: {why}")
    for run_id, why in board.unscored.items():
        print(f"not scored {run_id}: {why}")
    if unloadable:
        print(f"benchmark data not found for {', '.join(sorted(unloadable))} (no data folder has it and its runs "
              "recorded none): its turns are shown without categories (pass --data)")
    for p in paths:
        print(p)
    return 0


async def _recorded_benchmarks(store: Store) -> dict[str, Any]:
    """Benchmark name → the snapshot recorded with its newest run that has one."""
    out: dict[str, Any] = {}
    for row in await store.list_runs():  # newest first
        if row.benchmark in out:
            continue
        try:
            snapshot = await store.stored_benchmark(row.run_id)
        except StoreError:  # a damaged snapshot: an older run's may do
            continue
        if snapshot is not None:
            out[row.benchmark] = snapshot
    return out


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main(args))
    except (StoreError, OSError) as e:
        raise CliError(str(e)) from None
