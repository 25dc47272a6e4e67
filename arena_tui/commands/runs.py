"""`arena-tui runs`: the recorded runs as a table (or JSON for scripts).

Progress counts the turns that ran to their end; the strict pass and the turns counted apart
(`2 not played · 1 stopped`) are each run's tally by the one rule (`compare.stored.run_tally`,
`arena_tui.verdicts`), `no answer` for a run in which no turn of the model's got one; the duration
is the time it ran (`RunRow.active_s`: a resumed run's idle time left out); its cost and, apart, its
judge's are estimates by `arena_tui.cost` (the line under the table says of which prices; `--json`
gives each run's as numbers with their notes, `compare.costs.cost_fields`, as run_results.csv
does). A run a
campaign's re-run replaced says `superseded`, as the runs list does: it counts nowhere."""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import UTC, datetime

from arena_tui.spine.errors import CliError
from arena_tui.spine.paths import db_path
from arena_tui.spine.source import listed_model
from arena_tui.spine.times import duration_text, when_text

from ..compare.columns import cost_text
from ..compare.costs import cost_fields, cost_note
from ..compare.stored import load_runs, run_tally
from ..cost import Estimate
from ..store import RunRow, Store, StoreError
from ..verdicts import NEVER_ANSWERED, NO_ANSWER, Tally


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="one JSON array of runs, for scripts (with each run's cost and judge cost: numbers and notes)")
    parser.add_argument("--status", help="only runs with this status (running, completed, interrupted, failed)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many runs, newest first")
    parser.add_argument(
        "--delete", nargs="+", metavar="RUN_ID", help="delete these runs and all they recorded (then `db vacuum`)"
    )


async def _delete(args: argparse.Namespace) -> list[str]:
    async with await Store.open(db_path(args.db), create=False) as store:
        await store.mark_interrupted_stale()
        runs = {r.run_id: r for r in await store.list_runs()}
        unknown = [r for r in args.delete if r not in runs]
        if unknown:
            raise CliError(f"{store.path}: no run {', '.join(unknown)} (see `arena-tui runs`)")
        live = [r for r in args.delete if runs[r].status == "running"]
        if live:
            raise CliError(f"run {', '.join(live)} is still recording; stop it first")
        for run_id in args.delete:
            await store.delete_run(run_id)
    return list(args.delete)


Costs = dict[str, tuple[Estimate, Estimate]]  # run id -> (the model's cost, the judge's)


async def _load(args: argparse.Namespace) -> tuple[list[RunRow], dict[str, Tally], Costs]:
    if args.limit is not None and args.limit < 0:
        raise CliError(f"--limit must be 0 or more (got {args.limit})")
    async with await Store.open(db_path(args.db), create=False) as store:
        # Nothing is recording in this process, so a 'running' run whose recorder is gone is not running.
        await store.mark_interrupted_stale()
        rows = await store.list_runs()
        if args.status:
            rows = [r for r in rows if r.status == args.status]
        if args.limit is not None:
            rows = rows[: args.limit]
        tallies, costs = {}, {}
        for r in rows:  # one run read at a time: a big store is never held whole
            (stored,) = await load_runs(store, [r.run_id])
            tallies[r.run_id] = run_tally(stored)
            costs[r.run_id] = (stored.cost, stored.judge_cost)
    return rows, tallies, costs


def _figures(run: RunRow, tally: Tally | None) -> tuple[str, str]:
    """(strict pass, turns counted apart) as the table says them."""
    if tally is None:
        return "-", ""
    live = run.status == "running"
    passed, n = tally.strict
    strict = NO_ANSWER if not tally.scored and not live else f"{passed}/{n}" if n else "-"
    if tally.human and n:  # some verdict it counts is a person's (`arena-tui review`), not the judge's
        strict += f" ✎{tally.human_verdicts}"
    if tally.never_answered and not live:  # counted, each turn failed; said beside the figure
        strict += f" {NEVER_ANSWERED}"
    return strict, tally.apart_text(live=live)


def _cost(cost: Estimate | None, passes: int | None = None) -> str:
    """A cost cell (`compare.columns.cost_text`); `-` when not read."""
    return "-" if cost is None else cost_text(cost, passes)


def format_table(rows: list[RunRow], tallies: dict[str, Tally] | None = None, now: datetime | None = None,
                 costs: Costs | None = None) -> str:
    """Plain-text table; the model column says a simulator's runs and how a run's input differed
    from the default (`RunRow.variants`); the cost columns when a run recorded usage or a judge's
    request, and under the table what those costs are."""
    now = now or datetime.now(UTC)
    priced = any(c.reports for pair in (costs or {}).values() for c in pair)  # the cost columns, when a run has one
    header = ("ID", "BENCHMARK", "MODEL", "STATUS", "PROGRESS", "STRICT PASS", "STARTED", "DURATION", "COUNTED APART",
              *(("COST", "JUDGE COST") if priced else ()))
    table = [header]
    for r in rows:
        model = listed_model(r.model, r.source, r.variants)
        tally = (tallies or {}).get(r.run_id)
        strict, apart = _figures(r, tally)
        cost, judge = (costs or {}).get(r.run_id, (None, None))
        table.append(
            (
                r.run_id,
                r.benchmark or "?",
                model or "?",
                f"{r.status} superseded" if r.superseded_by else r.status,
                f"{r.turns_done}/{r.turns_total}",
                strict,
                when_text(r.started_at),
                duration_text(r.active_s(now) * 1000),
                apart,
                *((_cost(cost, tally.strict[0] if tally is not None else None), _cost(judge)) if priced else ()),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
    note = cost_note([c for pair in (costs or {}).values() for c in pair])
    return "\n".join([*lines, *([note] if note else [])])


def run(args: argparse.Namespace) -> int:
    if args.delete:
        try:
            deleted = asyncio.run(_delete(args))
        except StoreError as e:
            raise CliError(str(e)) from None
        print(f"deleted {len(deleted)} run(s): {', '.join(deleted)}")
        return 0
    try:
        rows, tallies, costs = asyncio.run(_load(args))
    except StoreError as e:
        raise CliError(str(e)) from None
    except OSError as e:  # e.g. the database folder cannot be created
        raise CliError(f"{e.filename or args.db}: {e.strerror or e}") from None
    if args.json:
        print(json.dumps([{**r.model_dump(mode="json"), **cost_fields(*costs[r.run_id], tallies[r.run_id].strict[0])}
                          for r in rows], indent=2))
    elif not rows:
        print(f"no runs recorded in {db_path(args.db)}")
    else:
        print(format_table(rows, tallies, costs=costs))
        if any(t.human for t in tallies.values()):
            print("✎N: N verdicts the strict pass counts are a person's (arena-tui review), not the judge's")
        if replaced := [(r.run_id, by) for r in rows if (by := r.superseded_by)]:
            print("superseded: a campaign's re-run replaced it, it counts nowhere ("
                  + ", ".join(f"{run_id[:8]} by {by[:8]}" for run_id, by in replaced) + ")")
    return 0
