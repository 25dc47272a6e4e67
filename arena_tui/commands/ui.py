"""`arena-tui` with no subcommand (or `arena-tui ui`): the runs list of the database.

Also home of `run_live`, which `run` and `demo` use to open the monitor on a run they start.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
from pathlib import Path

from arena_tui.spine import paths
from arena_tui.spine.errors import CliError
from arena_tui.spine.heap import settle_heaps_here
from arena_tui.spine.times import duration_text

from ..launcher import RunRequest
from ..orchestration.launch import EngineLauncher
from ..orchestration.live import JudgeChoice
from ..orchestration.logs import quiet_logs
from ..orchestration.run_pool import RunPool
from ..run_view import RunState
from ..store import Store, StoreError
from .ids import resolve_run_id


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--open", metavar="RUN_ID", help="open this run straight away (replay if stored; id or unique prefix)")


def locations(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """(database, data folder) from the global options, as one clear error when unusable."""
    try:
        db = paths.db_path(getattr(args, "db", None))
    except OSError as e:
        raise CliError(f"cannot use database location: {e}") from None
    data = paths.data_dir(getattr(args, "data", None))
    if data is not None and not data.is_dir():
        raise CliError(f"--data {data}: not a folder")
    _check_database(db)
    return db, data


def run(args: argparse.Namespace) -> int:
    from ..app import ArenaApp  # deferred: Textual loads only when the monitor opens (`run --headless` imports this module too)

    db, data = locations(args)
    quiet_logs(False, paths.log_path(db))  # a run started from the monitor imports Pipecat, which logs on stderr
    run_id = getattr(args, "open", None)
    if run_id:  # an id or a unique prefix, as every command takes it: one line and exit 2 before the screen
        run_id = _check_database(db, run_id)
    app = ArenaApp(db, data, open_run=run_id, launcher=EngineLauncher(RunPool()))
    settle_heaps_here()  # this process is the monitor now
    app.run()
    for state in app.left_interrupted:
        print(left_line(state, db, data))
    return 0


def left_line(state: RunState, db: Path, data: Path | None) -> str:
    """What quitting left of a run that was still streaming, and the command that continues it."""
    model = state.started.model if state.started is not None else "?"
    return (f"run {state.run_id} ({state.benchmark}, {model}) left interrupted at {state.turns_done}/"
            f"{state.turns_total} turns; continue it with: {resume_command(state.run_id, db, data)}")


def resume_command(run_id: str, db: Path, data: Path | None) -> str:
    """`arena-tui resume RUN_ID`, with --db (and --data) when they are not what it would use anyway."""
    argv = ["arena-tui", "resume", run_id]
    if Path(db) != paths.db_path(None):
        argv += ["--db", str(db)]
    if data is not None and data != paths.data_dir(None):
        argv += ["--data", str(data)]
    return shlex.join(argv)


def _check_database(db: object, run_id: str | None = None) -> str | None:
    """A database that cannot be opened is one line and exit 2 here, before the screen takes over;
    so is a `run_id` that names no stored run (or several). Returns the full id it names."""

    async def probe() -> str | None:
        store = await Store.open(db)  # type: ignore[arg-type]  # `db` is checked to exist above
        try:
            return await resolve_run_id(store, run_id) if run_id else None
        finally:
            await store.close()

    try:
        return asyncio.run(probe())
    except StoreError as e:
        raise CliError(str(e)) from None


def run_live(args: argparse.Namespace, launch: RunRequest, judge: JudgeChoice, *, db: Path | None = None) -> int:
    """Open the monitor on a new run (`launch`: its benchmark, settings and judge), exactly as the
    new-run dialog starts one; `judge` says how it is judged in the lines after the app exits.

    The app imports the engine itself (off its loop); what ran (and how long it took, wall clock)
    is printed after the app exits, then `launch.then` (what to do next: the monitor says it too
    when the run ends).
    """
    from ..app import ArenaApp  # deferred: Textual loads only when the monitor opens (`run --headless` imports this module too)

    where, data = locations(args)
    db = db or where
    app = ArenaApp(db, data, launch=launch, launcher=EngineLauncher(RunPool()))
    settle_heaps_here()  # this process is the monitor now
    app.run()
    for run_id, state in app.live.items():
        if state.started is None:
            print(f"run {run_id} did not start; nothing recorded")
            continue
        status = state.ended.status if state.ended is not None else "interrupted"
        took = duration_text(state.elapsed_ms())
        print(f"run {run_id} {status} in {took} (wall clock), judge {judge.label}, recorded in {db}")
    for state in app.left_interrupted:
        print(left_line(state, db, data))
    if launch.then:
        print(launch.then)
    return 0
