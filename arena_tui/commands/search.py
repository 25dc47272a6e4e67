"""`arena-tui search "TEXT" [--run ID] [--dimension D] [--cause C]`: the turns that match, across runs.

TEXT is found, case-insensitively, in what the user said, the model's answer (its words and its
calls), the judge's reasons for the verdict that counts, and the turn's causes; "" matches every
turn the filters keep. Each turn is printed with its run, model, verdict, where it matched, its
causes and a snippet of the match (`arena_tui.compare.search`, whose texts and match the screens'
`/` use too); a turn of a run a re-run replaced is marked superseded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import asdict

from arena_tui.spine.causes import CAUSES
from arena_tui.spine.errors import CliError
from arena_tui.spine.ids import short_ids
from arena_tui.spine.paths import db_path
from arena_tui.spine.source import listed_model

from ..compare.search import search
from ..judge.causes import causes_text
from ..store import Store, StoreError
from ..verdicts import DIMENSIONS
from .ids import resolve_run_id


def _choice(known: Iterable[str], what: str) -> Callable[[str], str]:
    """An argparse type taking one of `known`, refusing anything else with the list."""
    known = list(known)

    def parse(raw: str) -> str:
        if raw not in known:
            raise argparse.ArgumentTypeError(f"unknown {what} {raw!r} ({what}s: {', '.join(known)})")
        return raw

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", metavar="TEXT", help='what to find (case-insensitive); "" for every turn the filters keep')
    parser.add_argument("--run", action="append", default=[], metavar="ID",
                        help="only this run (an id or a unique prefix; repeatable)")
    parser.add_argument("--dimension", type=_choice(DIMENSIONS, "dimension"), metavar="D",
                        help="only turns failing this dimension (and, of the judge's reasons, its own)")
    parser.add_argument("--cause", type=_choice(CAUSES, "cause"), metavar="C",
                        help="only turns given this cause (docs/judging.md, \"Causes\")")
    parser.add_argument("--limit", type=int, default=None, help="at most this many turns")
    parser.add_argument("--json", action="store_true", help="one JSON array of matching turns, for scripts")


async def _main(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        raise CliError(f"--limit must be 0 or more (got {args.limit})")
    async with await Store.open(db_path(args.db), create=False) as store:
        await store.mark_interrupted_stale()
        run_ids = [await resolve_run_id(store, raw) for raw in args.run] or None
        hits = await search(store, args.text, run_ids=run_ids, dimension=args.dimension, cause=args.cause,
                            limit=args.limit)
        searched = len(run_ids) if run_ids is not None else len(await store.list_runs())
    if args.json:
        print(json.dumps([asdict(h) for h in hits], indent=2, ensure_ascii=False))
        return 0
    short = short_ids(h.run_id for h in hits)
    for h in hits:
        where = ", ".join(h.where) or "-"
        causes = causes_text(h.causes) or "-"
        human = f" (person: {', '.join(h.human)})" if h.human else ""
        gone = f"  [superseded by {h.superseded_by}: counts nowhere]" if h.superseded_by else ""
        print(f"{short[h.run_id]}  turn {h.turn_index:<3} {listed_model(h.model, h.source, h.variants)} · {h.benchmark}  "
              f"{h.verdict_text}{human}  "
              f"matched in: {where}  causes: {causes}{gone}")
        print(f"    {h.snippet}")
    runs = len({h.run_id for h in hits})
    print(f"{len(hits)} turn{'s' * (len(hits) != 1)} in {runs} run{'s' * (runs != 1)} "
          f"(searched {searched} run{'s' * (searched != 1)})")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main(args))
    except StoreError as e:
        raise CliError(str(e)) from None
