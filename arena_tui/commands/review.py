"""`arena-tui review RUN --turn N DIMENSION=pass|fail … --reason "…"`: a person's verdict on a turn.

It is a new judgement revision with the reviewer (`--by`, else $USER) and the reason, and it wins
over the judge's verdict on those dimensions in every figure, also over a later judging, until
`--withdraw` takes it back (a further revision; its reason optional): `arena_tui.judge.human`, the rule
`arena_tui.verdicts.standing`. Prints the revision, what the turn counts now, and the run's summary.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from typing import Any

from arena_tui.spine.errors import CliError
from arena_tui.spine.paths import db_path
from ..judge import render_text, summarize
from ..judge.human import VERDICTS, ReviewError, default_reviewer, record_verdict, withdraw
from ..judge.locate import benchmark_of_run
from ..store import Store, StoreError
from ..verdicts import standing, tally
from .ids import resolve_run_id


def _verdict(raw: str) -> tuple[str, str]:
    dim, sep, verdict = raw.partition("=")
    if not sep or not dim or verdict not in VERDICTS:
        raise argparse.ArgumentTypeError(f"{raw!r} is not DIMENSION=pass or DIMENSION=fail")
    return dim, verdict


class _TurnAndVerdicts(argparse.Action):
    """`--turn N [DIMENSION=pass|fail …]`: the turn, and the verdicts written after it (argparse
    takes positionals only before the first option, so those after `--turn N` are read here)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: str | Sequence[Any] | None,
                 option_string: str | None = None) -> None:
        raw, *rest = [str(v) for v in values] if isinstance(values, list) else [str(values)]  # nargs='+': a list
        try:
            namespace.turn = int(raw)
            namespace.after_turn = [_verdict(v) for v in rest]
        except ValueError:
            raise argparse.ArgumentError(self, f"{raw!r} is not a turn index") from None
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentError(self, str(e)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN", help="run id (or a unique prefix of one)")
    parser.add_argument("verdicts", metavar="DIMENSION=pass|fail", nargs="*", type=_verdict,
                        help="the person's verdict on each dimension judged (e.g. kb_grounding=fail), before "
                             "or after --turn N")
    parser.add_argument("--turn", nargs="+", action=_TurnAndVerdicts, required=True, metavar=("N", "DIMENSION=pass|fail"),
                        help="the turn index")
    parser.set_defaults(after_turn=[])
    parser.add_argument("--reason", help="why: kept with the verdict and shown with it (required for a verdict; "
                        "optional with --withdraw)")
    parser.add_argument("--by", metavar="NAME", help="who reviews (default: $USER, else the login name)")
    parser.add_argument("--cause", action="append", default=[], metavar="CAUSE",
                        help="why the turn fails (repeatable; the list: docs/judging.md, \"Causes\")")
    parser.add_argument("--withdraw", action="store_true",
                        help="take back the person's verdicts on the turn: the judge's count again")


async def _main(args: argparse.Namespace) -> None:
    args.verdicts = [*args.verdicts, *args.after_turn]
    if args.withdraw and (args.verdicts or args.cause):
        raise CliError("--withdraw takes back the turn's verdicts: give no DIMENSION=… or --cause with it")
    if not args.withdraw and not args.verdicts:
        raise CliError("give at least one DIMENSION=pass|fail (or --withdraw)")
    given: dict[str, str] = {}
    for dim, verdict in args.verdicts:
        if given.setdefault(dim, verdict) != verdict:
            raise CliError(f"{dim}=pass and {dim}=fail both given: one verdict a dimension")
    by = args.by if args.by is not None else default_reviewer()
    async with await Store.open(db_path(args.db), create=False) as store:
        run_id = await resolve_run_id(store, args.run_id)
        try:
            benchmark = await benchmark_of_run(store, run_id, args.data)
        except LookupError:
            benchmark = None  # any dimension is taken, and no summary is printed
        try:
            if args.withdraw:
                j = await withdraw(store, run_id, args.turn, args.reason, by)
            else:
                j = await record_verdict(store, run_id, args.turn, dict(args.verdicts), args.reason, by,
                                         causes=args.cause, benchmark=benchmark)
        except ReviewError as e:
            raise CliError(str(e)) from None
        judgements = await store.judgements(run_id)
        results = await store.turn_results(run_id)
        run = await store.get_run(run_id)
    said = "withdrew the person's verdicts" if args.withdraw else " ".join(f"{d}={s.verdict}" for d, s in j.scores.items())
    print(f"turn {j.turn_index} r{j.revision} {j.judge}: {said} ({j.review.reason if j.review else ''})")
    counted = tally(judgements, {r.turn_index: r.status for r in results})  # the run's judge, as every figure's
    st = standing(judgements, judge=counted.judge).get(args.turn)
    if st is not None and st.judgement is not None:
        shown = " ".join(f"{d}={v}" + (" (person)" if d in st.human else "") for d, v in st.scores.items())
        print(f"turn {args.turn} counts: {shown}")
    if benchmark is not None and run is not None:
        print()
        print(render_text(summarize(benchmark, results, judgements, run.turn_indices or None)))


def run(args: argparse.Namespace) -> int:
    try:
        asyncio.run(_main(args))
    except StoreError as e:
        raise CliError(str(e)) from None
    return 0
