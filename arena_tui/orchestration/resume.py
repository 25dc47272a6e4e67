"""Resuming an interrupted run: the store-facing half (the engine's half is `runners.engine`'s
`resume=` seed, which never sees the store).

What is finished is read from the stored turn rows, never from the run's status: a run cut by
kill -9, a lost worker or a quit continues at its first planned turn without a finished row,
in a new session given the finished turns' history (the rotation's replay path), under the
same run id, judged by the same kind of judge with the finished turns as its context.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import TurnResult, unfinished
from arena_tui.spine.recorded import RecordedRun
from arena_tui.spine.settings import RunSettings, SettingsError
from arena_tui.spine.urls import endpoint_label
from runners.rotation import turn_span

from ..judge import JudgeWorker
from ..judge.backends import JudgeBackend

if TYPE_CHECKING:
    from arena_tui.spine.benchmark import Benchmark
    from arena_tui.store import Store
    from runners.base import ProviderRunner

#: kinds whose t_ms bound a stored run's timeline (the resumed run continues after them)
_TIMELINE_KINDS = ("run_started", "run_resumed", "turn_started", "turn_ended", "run_ended")


class ResumeError(Exception):
    """The run cannot be resumed (unknown, still recording, complete, another benchmark): one line."""


@dataclass(frozen=True)
class ResumePlan:
    run_id: str
    from_turn: int
    turns: list[int]  # the turns the resumption plays (from `from_turn` on, in the run's order)
    done: list[TurnResult]  # the finished turns before `from_turn` (their history is replayed)
    start_ms: float  # where the run's timeline goes on
    settings: RunSettings  # the run's recorded settings, read back (an imported run's connection is not)
    last_session: int = 0  # the highest session number stored: the resumption's first is the next
    imported: bool = False  # the run came from a file (`arena-tui import`): its connection is provenance
    named: str = ""  # what its file named for its connection, said (`spine.provenance.provenance_text`)


async def unfinished_turns(store: Store, run_id: str, benchmark: Benchmark | None = None) -> list[int]:
    """The run's planned turns without a finished stored row, in the run's order. The plan is
    the run's recorded turn list (or, when it recorded none, every turn of `benchmark`)."""
    run = await store.get_run(run_id)
    if run is None:
        raise ResumeError(f"{store.path}: no run {run_id} (see `arena-tui runs`)")
    planned = list(run.turn_indices) or ([t.turn_index for t in benchmark.turns] if benchmark is not None else [])
    return unfinished(planned, {r.turn_index: r for r in await store.turn_results(run_id)})


async def plan_resume(store: Store, run_id: str, benchmark: Benchmark) -> ResumePlan:
    """What resuming `run_id` would play and replay; ResumeError when there is nothing to do."""
    await store.mark_interrupted_stale()  # a dead recorder's 'running' run is interrupted
    run = await store.get_run(run_id)
    if run is None:
        raise ResumeError(f"{store.path}: no run {run_id} (see `arena-tui runs`)")
    if run.benchmark != benchmark.name:
        raise ResumeError(f"run {run_id} is of benchmark {run.benchmark!r}, not {benchmark.name!r}")
    if run.status == "running":
        raise ResumeError(f"run {run_id} is still recording (pid {run.pid} on {run.host}); stop it first")
    try:
        settings = run.recorded.settings()
    except SettingsError as e:
        raise ResumeError(f"run {run_id}: its recorded settings cannot be used: {e}") from None
    if settings.mode == "rehydrated":
        raise ResumeError(f"run {run_id} is a rehydrated run: its turns are independent, re-run them instead")
    unfinished = await unfinished_turns(store, run_id, benchmark)
    if not unfinished:
        raise ResumeError(f"run {run_id} is complete: every planned turn has a finished row")
    planned = list(run.turn_indices) or [t.turn_index for t in benchmark.turns]
    start = planned.index(unfinished[0])
    rows = {r.turn_index: r for r in await store.turn_results(run_id)}
    done = [rows[i] for i in planned[:start]]
    ends = [ev.t_ms for _, ev in await store.events(run_id, kinds=_TIMELINE_KINDS)]
    sessions = [getattr(ev, "session", 0) for _, ev in await store.events(run_id, kinds=("session_opened",))]
    sessions += [r.session for r in rows.values()]
    return ResumePlan(
        run_id=run_id, from_turn=unfinished[0], turns=planned[start:], done=done,
        start_ms=max(ends, default=0.0) + 1.0, settings=settings, last_session=max(sessions, default=0),
        imported=run.recorded.imported, named=run.recorded.provenance,
    )


async def timeline_end(store: Store, run_id: str) -> float:
    """Where the run's recorded timeline stands: its latest stored event's t_ms. An end the
    coordinator records for a run whose worker could not end it (lost, or cancelled by force) goes
    there, on the run's own timeline (audio time), never on the coordinator's wall clock: so the
    run's events stay in order, and its resumption continues after them."""
    rows = await store.read_rows("SELECT MAX(t_ms) FROM events WHERE run_id=?", (run_id,))
    return float(rows[0][0]) if rows and rows[0][0] is not None else 0.0


def endpoint_line(plan: ResumePlan, settings: RunSettings, *, typed: bool) -> str:
    """Where the resumed run's sessions will connect, said before any does, and what an imported
    run's file named that is not used. `typed`: the user gave --base-url/--service for this
    resume. Loads the run's provider (a `--service` class is imported: one the user typed, or
    recorded by a run of this installation); ResumeError when there is none."""
    from runners.engine import RunError, runner_for  # deferred: the engine (Pipecat, ~1 s) loads only when a run is actually resumed

    ignored = (f"; not used: the {'imported run' if plan.imported else 'run'}'s {plan.named} (a run folder never "
               "chooses where a key goes or what is imported; pass --base-url or --service to choose)") if plan.named else ""
    try:
        runner = runner_for(settings.model, settings.service)
    except RunError as e:
        raise ResumeError(f"run {plan.run_id}: {e}{ignored}") from None
    if runner.uses_fake(settings) and not settings.base_url:
        where = f"{runner.name}'s local {'simulator' if runner.simulated else 'fake'} on 127.0.0.1, started for the run"
    else:
        url = runner.endpoint(settings)
        why = "as typed" if typed else ("as the run recorded it" if settings.base_url or settings.service else
                                        f"{runner.name}'s own")
        where = f"{endpoint_label(url)} ({why})" if url else f"the service class's own default ({settings.service})"
    return f"endpoint: {where}{ignored}"


async def resume_run(
    store: Store,
    run_id: str,
    bus: EventBus,
    *,
    benchmark: Benchmark,
    settings: RunSettings | None = None,
    judge: JudgeBackend | None = None,
    provider: ProviderRunner | None = None,
    preflighted: bool = False,
) -> str:
    """Resume the interrupted run `run_id` on `bus` (which `store` records) and wait for its end.

    `settings` replace the recorded ones (default: the recorded ones); `judge` (a
    judge backend) judges the resumed turns with the finished ones as context, and phase 2
    then runs over the whole run; `provider` and `preflighted` as in `run_benchmark`. Returns the run id.
    """
    from runners.engine import Seed, history_from_results, run_benchmark  # deferred: the engine (Pipecat, ~1 s) loads only when a run is actually resumed

    plan = await plan_resume(store, run_id, benchmark)
    cfg = settings if settings is not None else plan.settings
    seed = Seed(
        history=history_from_results(plan.done), start_ms=plan.start_ms, resumed_from=plan.from_turn,
        detail=f"resumed at turn {plan.from_turn}", done=plan.done, last_session=plan.last_session,
    )
    judging = None
    if judge is not None:

        worker = JudgeWorker(benchmark, judge, bus, run_id)
        run = await store.get_run(run_id)  # its record as stored: what the judge reads of a run (`judge.worker.configure`)
        worker.seed(await store.turn_results(run_id), await store.judgements(run_id), run.recorded if run is not None else RecordedRun.of({}))
        judging = worker.start()
    try:
        await run_benchmark(benchmark, cfg, bus, run_id, provider=provider, resume=seed, preflighted=preflighted)
    except BaseException:
        if judging is not None:  # the run may have ended before publishing its end: do not wait for it
            judging.cancel()
            await asyncio.gather(judging, return_exceptions=True)
        raise
    if judging is not None:
        await judging
    return run_id


def replayed_text(turns: list[int]) -> str:
    """The finished turns a resumption replays, counted and named ("1 finished turn replayed
    (turn 0)"): a bare list read "replayed: 0" as none."""

    if not turns:
        return "no finished turn to replay"
    n = len(turns)
    return f"{n} finished turn{'s' if n != 1 else ''} replayed ({turn_span(turns)})"


def resume_starter(run_id: str, bench: Benchmark, settings: RunSettings,
                   judge: JudgeBackend | None) -> Callable[[Store, EventBus], Awaitable[str]]:
    """`headless.run_headless`'s `start`: resume `run_id` on the bus the store records; a run
    that changed since it was planned (another process took it) is a RunError, one line."""
    async def start(store: Store, bus: EventBus) -> str:
        from runners.engine import RunError  # deferred: the engine (Pipecat, ~1 s) loads only when a run is actually resumed

        try:
            return await resume_run(store, run_id, bus, benchmark=bench, settings=settings, judge=judge, preflighted=True)
        except ResumeError as e:  # the run changed since it was planned (another process took it)
            raise RunError(str(e)) from None

    return start
