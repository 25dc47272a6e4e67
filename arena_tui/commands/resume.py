"""`arena-tui resume RUN`: continue an interrupted run at its first unfinished turn.

The finished turns come from the stored turn rows; their history is replayed into a new
session through the provider's replay path, and the run goes on under the same id, recorded
and shown as a headless run is (`run`'s progress and summary: resume always runs headless, and
says so on stderr unless `--headless` says it). See `arena_tui.orchestration.resume`.

Before any session opens it says where they connect (`endpoint: …`): the provider's own endpoint,
or the one the run was recorded with here, or what `--base-url`/`--service` say now. An imported
run's endpoint, service class and arguments are provenance only (docs/architecture.md, "Trust
boundary"): the line names them as not used.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from arena_tui.spine import paths
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.errors import CliError
from arena_tui.spine.judges import KINDS_OR_NONE
from arena_tui.spine.settings import RunSettings, SettingsError

from ..judge import make_backend
from ..judge.backends import JudgeBackend, PermanentError
from ..judge.choice import pick_judge
from ..orchestration.headless import run_headless
from ..orchestration.logs import quiet_logs
from ..orchestration.preflight import preflight
from ..orchestration.resume import ResumeError, ResumePlan, endpoint_line, plan_resume, replayed_text, resume_starter
from ..store import Store, StoreError, require_database
from .ids import resolve_run_id

JUDGES = ("recorded", *KINDS_OR_NONE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN", help="the run to resume: id or unique prefix (see `arena-tui runs`)")
    parser.add_argument(
        "--judge", choices=JUDGES, default="recorded",
        help="judge for the resumed turns (default: the one the run was judged with; none if it was not judged)",
    )
    parser.add_argument("--headless", action="store_true",
                        help="progress and a summary on stdout: how resume always runs (the monitor shows the run "
                        "from the database: arena-tui)")
    parser.add_argument("--base-url", help="connect to this endpoint (default: the provider's own; a run recorded here "
                        "with --base-url keeps it, an imported run's is never used)")
    parser.add_argument("--service", metavar="package.module:Class",
                        help="run the resumed turns with this Pipecat service class of yours (an imported run's is never "
                        "used: pass it again)")
    parser.add_argument("--service-arg", action="append", default=[], metavar="KEY=VALUE",
                        help="a constructor argument of --service's class (repeatable; env:NAME reads a variable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show Pipecat's debug log on stderr")


def run(args: argparse.Namespace) -> int:
    db = paths.db_path(args.db)
    try:
        require_database(db)  # before the log file beside it: a mistyped --db creates no folder
    except StoreError as e:
        raise CliError(str(e)) from None
    quiet_logs(getattr(args, "verbose", False), paths.log_path(db))
    bench, plan, settings, typed, judge = asyncio.run(_prepare(args, db))  # args.run_id: the full id from here on
    if not args.headless:  # said as `run` says it when it goes headless by itself
        print("arena-tui: resume runs headless (progress and a summary on stdout; pass --headless to say so)",
              file=sys.stderr)
    print(f"resuming run {plan.run_id} at turn {plan.from_turn}: {replayed_text([r.turn_index for r in plan.done])}, "
          f"{len(plan.turns)} to play", flush=True)
    print(_endpoint(plan, settings, typed), flush=True)  # where a key may go: said before any session opens
    return asyncio.run(
        run_headless(bench, settings, db, sys.stdout, start=resume_starter(plan.run_id, bench, settings, judge),
                     run_id=plan.run_id, total=len(plan.turns))
    )


def _aimed(args: argparse.Namespace, settings: RunSettings) -> tuple[RunSettings, bool]:
    """The run's settings connected where this command's flags say (whether any was given)."""
    typed = bool(args.base_url or args.service or args.service_arg)
    try:
        return settings.aimed(base_url=args.base_url, service=args.service, service_args=args.service_arg), typed
    except SettingsError as e:
        raise CliError(str(e)) from None


def _endpoint(plan: ResumePlan, settings: RunSettings, typed: bool) -> str:
    try:
        return endpoint_line(plan, settings, typed=typed)
    except ResumeError as e:
        raise CliError(str(e)) from None


async def _prepare(args: argparse.Namespace, db: Path) -> tuple[Benchmark, ResumePlan, RunSettings, bool, JudgeBackend | None]:
    """The benchmark, the resume plan, the settings it runs with (as recorded, connected where the
    flags say; whether they said) and the judge backend, or a CliError naming what is wrong. The
    run is checked by the one preflight every run gets (`orchestration.preflight`: the benchmark
    loaded with the run's speaker, its turns and faults, its audio, the provider's keys, packages
    and limits), after what only a resume can be refused for (complete, still recording)."""

    try:
        async with await Store.open(db, create=False) as store:
            args.run_id = await resolve_run_id(store, args.run_id)
            row = await store.get_run(args.run_id)
            assert row is not None
            try:
                settings, typed = _aimed(args, row.recorded.settings())
            except SettingsError as e:
                raise CliError(f"run {args.run_id}: its recorded settings cannot be used: {e}") from None
            checked = await asyncio.to_thread(preflight, row.benchmark, settings, paths.data_dir(args.data), data=args.data)
            if checked.benchmark is None:
                raise CliError(f"run {args.run_id}: {checked.refusal}")
            try:
                plan = await plan_resume(store, args.run_id, checked.benchmark)
            except ResumeError as e:
                raise CliError(str(e)) from None
            if checked.problems:
                raise CliError(f"run {args.run_id}: {checked.refusal}")
            names = sorted({j.judge for j in await store.judgements(args.run_id)})
    except StoreError as e:
        raise CliError(str(e)) from None
    return checked.benchmark, plan, settings, typed, _judge(args.judge, names)


def _judge(choice: str, recorded: list[str]) -> JudgeBackend | None:
    """The backend for `--judge` (`recorded`: the run's own judge, none if it was not judged)."""

    pick = pick_judge(choice, recorded)
    if pick.kind == "none":
        return None
    kind = pick.kind if choice == "recorded" else choice
    try:
        return make_backend(kind, pick.model)
    except PermanentError as e:
        raise CliError(f"judge {kind}: {e} (use --judge to choose another, or --judge none)") from None
