"""`arena-tui report RUNS… DIR`: comparison CSVs, summary.md and a self-contained report.html."""

from __future__ import annotations

import argparse
import asyncio

from arena_tui.spine.errors import CliError
from arena_tui.spine.paths import db_path
from ..store import Store, StoreError
from ..judge.locate import find_benchmark

NAME = "report"
HELP = "compare runs: run_results/model_summary/metric_summary CSVs, summary.md, report.html"
DESCRIPTION = (
    "Write a comparison report of stored runs into DIR. Each target is a campaign id (all its runs), "
    "a run id (or a unique prefix of either), a benchmark name (all its runs) or `all`. Runs still "
    "recording are skipped."
)
ORDER = 55


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("targets", nargs="+", metavar="TARGET", help="campaign ids, run ids, benchmark names or `all`")
    parser.add_argument("dest", metavar="DIR", help="folder to write the report files into (created)")


async def _main(args: argparse.Namespace) -> int:
    from ..campaign.records import campaign_runs  # deferred: campaigns load only for `report` (--help imports every command module)
    from ..compare.report import build_report  # deferred: the report renderer (numpy, SVG) loads only for `report`
    unloadable: dict[str, str] = {}

    def benchmark_for(name: str):
        try:
            return find_benchmark(name, args.data)
        except LookupError as e:  # still reportable: see the note printed below
            unloadable[name] = str(e).splitlines()[0]
            return None

    async with await Store.open(db_path(args.db)) as store:
        await store.mark_interrupted_stale()
        try:
            sel, board, paths = await build_report(store, args.targets, args.dest, benchmark_for,
                                                   expand=lambda raw: campaign_runs(store, raw))
        except LookupError as e:
            raise CliError(str(e)) from None
    print(f"{len(board.runs)} runs, {len(board.models)} models, {len(board.benchmarks)} benchmarks")
    for run_id, why in sel.skipped.items():
        print(f"skipped {run_id}: {why}")
    for run_id, why in board.unscored.items():
        print(f"not scored {run_id}: {why}")
    for name, why in sorted(unloadable.items()):
        print(f"benchmark data not found for {name} ({why}): it has no categories (pass --data)")
    for p in paths:
        print(p)
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main(args))
    except (StoreError, OSError) as e:
        raise CliError(str(e)) from None
