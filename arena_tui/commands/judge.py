"""`arena-tui judge RUN`: re-judge a stored run (the whole-run judgement: one request) or one turn
(`--turn N`: the per-turn prompt with the run before it); new revisions supersede, old ones stay.
`--repeat N` judges it N times and records each turn's majority verdict with how many judgings
gave it (`judge/agreement.py`)."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from arena_tui.spine.errors import CliError
from ..judge import PermanentError, limits, render_text, summarize
from ..judge.agreement import judge_repeatedly, run_agreement
from ..judge.locate import benchmark_of_run
from ..judge.options import add_judge_arguments, backend_from_args
from ..judge.worker import reapply_rules, rejudge_turn
from arena_tui.spine.paths import db_path
from ..store import Store, StoreError
from ..verdicts import ANY, standing
from .ids import resolve_run_id
from ..orchestration.live import verdict_line

MAX_REPEAT = 20  # judging costs the run's prompt each time: a bound on time and money


def _repeat(raw: str) -> int:
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_REPEAT:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number of judgings from 1 to {MAX_REPEAT}")
    return n


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN", help="run id (or a unique prefix of one)")
    parser.add_argument("--turn", type=int, help="re-judge only this turn index (the per-turn prompt, with the turns "
                                                 "before it; without --turn the whole run goes in one request, or in consecutive "
                                                 "parts when it cannot fit the judge model)")
    parser.add_argument("--no-phase2", action="store_true", help="skip the cross-turn rules")
    parser.add_argument("--json", action="store_true", help="print the run summary as JSON")
    parser.add_argument("--repeat", type=_repeat, default=1, metavar="N",
                        help="judge N times and keep each turn's majority verdict, with the judge's agreement "
                             "(the share of judgings that gave it); an odd N avoids ties, which go to fail")
    add_judge_arguments(parser)


async def _main(args: argparse.Namespace) -> int:
    try:
        backend = backend_from_args(args)
        policy, run_policy = limits.from_args(args), limits.run_from_args(args)
    except PermanentError as e:
        raise CliError(str(e)) from None
    if args.repeat > 1 and backend.heuristic:
        await backend.aclose()
        raise CliError("--repeat needs an LLM judge: the heuristic judge gives the same verdicts every time")
    try:
        async with await Store.open(db_path(args.db), create=False) as store:
            run_id = await resolve_run_id(store, args.run_id)
            run = await store.get_run(run_id)
            assert run is not None
            try:
                benchmark = await benchmark_of_run(store, run_id, args.data)

                def judging() -> Any:  # one whole judging of the run (or of its turn)
                    return rejudge_turn(store, run_id, args.turn, backend, benchmark=benchmark,
                                        phase2=not args.no_phase2, concurrency=args.judge_concurrency,
                                        policy=policy, run_policy=run_policy)

                # stops at the first write the file refuses
                def rules() -> Any:  # the code rules again, over the majorities
                    return reapply_rules(store, run_id, benchmark)

                if args.repeat > 1:
                    await store.run_while_writable(judge_repeatedly(store, run_id, args.repeat, judging,
                                                                    reapply=None if args.no_phase2 else rules))
                    now = standing(await store.judgements(run_id), judge=ANY)
                    out = [now[t].newest for t in sorted(now) if args.turn is None or t == args.turn]
                else:
                    out = await store.run_while_writable(judging())
            except LookupError as e:
                raise CliError(str(e.args[0] if e.args else e)) from None
            results = await store.turn_results(run_id)
            judgements = await store.judgements(run_id)
    except StoreError as e:
        raise CliError(str(e)) from None
    finally:
        await backend.aclose()
    summary = summarize(benchmark, results, judgements, run.turn_indices or None)
    latest = out if isinstance(out, list) else [out]
    status = 1 if any(j.error for j in latest) else 0  # a turn that could not be judged is a failure
    agreement = run_agreement(judgements) if args.repeat > 1 else None
    if args.json:
        doc = json.loads(summary.model_dump_json())
        if agreement is not None:
            doc["judge_agreement"] = {"rate": agreement.rate, "agree": agreement.agree, "verdicts": agreement.verdicts,
                                      "turns": agreement.turns, "judgings": args.repeat}  # fmt: skip
        print(json.dumps(doc, indent=2))
        return status
    whole = [j for j in judgements if j.turn_index is None and args.turn is None][-1:]
    for j in whole + latest:  # the whole-run request's own line (its tokens or its error) first
        print(verdict_line(j, heuristic=backend.heuristic))
        if j.turn_index is None and j.notes:
            print("\n".join(f"  judge's notes: {line}" for line in j.notes.splitlines()))
    print()
    print(render_text(summary))
    if agreement is not None:
        print(f"judge agreement {agreement.text()}: the majority verdict counts (docs/judging.md)")
    return status


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))
