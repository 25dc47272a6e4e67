"""Run a campaign: preflight every cell, then one run per cell through an executor, resumably.

The coordinator (this module, in the CLI or the TUI process) owns the bus, the one store
writer and the campaign rows; runs execute in an executor's workers. Before anything opens a
session, every (benchmark, model) pair is preflighted by the one preflight `arena-tui run` uses
(`preflight.py`: keys, packages, audio, benchmark validity, the provider's own limits):
all problems are reported at once and nothing starts unless `skip_unrunnable`.

A cell whose stored turn rows are complete is skipped; any other cell (never run, interrupted,
its worker lost) goes through `continue_cell`, the one place that decides how an unfinished run
goes on: an interrupted run is resumed in place (same run id, at its first unfinished turn,
the finished turns' history replayed), and the notice says so. A run that ended with turns our
machine lost pace on (`lost_pace`) is resumed the same way, up to `PACE_RERUNS` times: those
turns are a fact about the machine, not the model, and count only once played on pace.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena_tui.campaign import records
from arena_tui.campaign.snapshot import BenchmarkSnapshot, SnapshotError, snapshot
from arena_tui.campaign.spec import CampaignSpec, Cell, cell_parts
from arena_tui.spine.ids import new_run_id
from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import RunEnded, RunSuperseded
from arena_tui.spine.settings import RunSettings, SettingsError
from arena_tui.spine.times import duration_text
from arena_tui.store import Store, StoreError
from arena_tui.store.liveness import HEARTBEAT_S

from .executor import Executor, Job, JobOutcome, OnDone, OnLost
from .heartbeat import Heartbeat
from .preflight import preflight as run_preflight
from .provider_caps import Cap, ProviderCaps, caps_problems, caps_text, resolve, runs_at_once

if TYPE_CHECKING:
    from arena_tui.judge.backends import JudgeBackend
    from arena_tui.spine.benchmark import Benchmark

Notice = Callable[[str], None]


class CampaignBlocked(Exception):
    """Preflight found problems and `skip_unrunnable` was not given; `problems` lists them all."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(f"{len(problems)} problem(s) before the campaign could start")
        self.problems = problems


@dataclass
class CampaignCheck:
    """The preflight of every (benchmark, model) pair: the settings of each runnable one, built
    once here and handed to its runs, and the problems of the others, one line each."""

    settings: dict[tuple[str, str], RunSettings] = field(default_factory=dict)
    problems: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    caps: dict[str, Cap] = field(default_factory=dict)  # sessions at once per provider (`provider_caps.resolve`)
    cap_notes: list[str] = field(default_factory=list)  # a given cap that caps none of its providers


def preflight(spec: CampaignSpec, data_dir: Path | None) -> CampaignCheck:
    """Every cell pair through the one preflight `arena-tui run` and the new-run dialog use, each
    problem naming the pair and what to fix; and the campaign's provider caps (ValueError naming
    a cap on a provider the catalog does not know)."""
    out = CampaignCheck()
    out.caps, out.cap_notes = resolve(spec.models, spec.provider_caps)
    for bench in spec.cell_benchmarks():
        name, _ = cell_parts(bench)
        for model in spec.cell_models():
            try:
                settings = spec.cell_settings(bench, model)
            except SettingsError as e:
                problems = [str(e)]
            else:
                problems = run_preflight(name, settings, data_dir).problems + caps_problems(out.caps, settings)
                out.settings[(bench, model)] = settings
            if problems:
                out.problems[(bench, model)] = [f"{bench} × {model}: {p}" for p in problems]
    return out


@dataclass
class CampaignResult:
    campaign_id: str
    complete: list[str] = field(default_factory=list)  # run ids complete by their turn rows
    skipped: list[Cell] = field(default_factory=list)  # unrunnable cells
    already: int = 0  # cells complete before this invocation
    incomplete: list[Cell] = field(default_factory=list)


#: how often one cell's run is resumed to play again the turns our machine lost pace on
PACE_RERUNS = 3


async def continue_cell(store: Store, benchmark: Benchmark, previous_run: str | None) -> tuple[str, dict[str, Any] | None, str]:
    """How a cell goes on: (run id to run, the resume plan as JSON or None, what the notice says).

    The one place that decides it: no run yet, a fresh run; an interrupted run (kill -9, a lost
    worker, a quit) resumed in place at its first unfinished turn, same run id, the finished
    turns' history replayed (`arena_tui.orchestration.resume`); a run that cannot be resumed (never recorded
    anything, rehydrated) run afresh, and the notice says why (the run it replaces is then superseded:
    `run_campaign`'s submit)."""
    from .resume import ResumeError, plan_resume  # deferred: resume planning loads only when a cell is unfinished

    if previous_run is None:
        return new_run_id(), None, "started"
    if await store.get_run(previous_run) is None:
        return new_run_id(), None, f"started (run {previous_run} recorded nothing)"
    try:
        plan = await plan_resume(store, previous_run, benchmark)
    except ResumeError as e:
        return new_run_id(), None, f"re-run from scratch as a new run ({e})"
    resume = {"from_turn": plan.from_turn, "start_ms": plan.start_ms, "last_session": plan.last_session,
              "done": [r.model_dump(mode="json") for r in plan.done]}
    return previous_run, resume, f"resumed at turn {plan.from_turn} ({len(plan.done)} finished turn(s) replayed)"


def make_executor(spec: CampaignSpec, bus: EventBus, on_lost: OnLost, on_done: OnDone) -> Executor:
    if spec.executor == "ray":
        from .ray_executor import RayExecutor  # deferred: ray is the optional `ray` extra; imported only for --executor ray

        return RayExecutor(bus, on_lost=on_lost, on_done=on_done, address=spec.ray_address, workers=spec.workers,
                           run_cpus=1.0 / spec.per_worker, speed=spec.speed, most=len(spec.cells()),
                           warm=tuple(spec.models))
    from .local import LocalExecutor  # deferred: the process pool loads only when a campaign runs

    return LocalExecutor(bus, on_lost=on_lost, on_done=on_done, workers=spec.local_workers, per_worker=spec.per_worker,
                         speed=spec.speed, warm=tuple(spec.models))


async def run_campaign(store: Store, bus: EventBus, spec: CampaignSpec, *, campaign_id: str | None = None,
                       data_dir: Path | None = None, skip_unrunnable: bool = False, notice: Notice = print,
                       executor_factory: Callable[..., Executor] = make_executor,
                       on_executor: Callable[[Executor], None] | None = None,
                       judge: Callable[[], JudgeBackend] | None = None) -> CampaignResult:
    """Preflight, record the campaign, run every unfinished cell; `bus` must be recorded by `store`.

    `judge` builds a judge backend: each run is then judged live here, in the coordinator, as
    its turns arrive (a resumed run with its stored turns and verdicts as context), exactly as
    `arena-tui run` judges. Returns once every cell's run has ended and been judged (complete
    or not); cells are judged complete by their turn rows."""
    began = time.monotonic()
    try:
        checked = await asyncio.to_thread(preflight, spec, data_dir)
    except ValueError as e:  # a cap on a provider the catalog does not know
        raise CampaignBlocked([str(e)]) from None
    problems = checked.problems
    if problems and not skip_unrunnable:
        raise CampaignBlocked([p for ps in problems.values() for p in ps])
    campaign_id = campaign_id or await records.find_by_spec(store, spec) or new_run_id()[:12]
    await records.create(store, campaign_id, spec)
    result = CampaignResult(campaign_id)
    await store.mark_interrupted_stale()
    todo: list[tuple[Cell, str | None]] = []
    for row in await records.cells(store, campaign_id):
        if (row.cell.benchmark, row.cell.model) in problems:
            reason = "; ".join(problems[(row.cell.benchmark, row.cell.model)])
            await records.set_cell(store, campaign_id, row.cell, status="skipped", reason=reason)
            result.skipped.append(row.cell)
            notice(f"skipped {row.cell.label}: {reason}")
            continue
        state, _, _ = await records.cell_state(store, row.run_id)
        if state == "complete":
            result.already += 1
            await records.set_cell(store, campaign_id, row.cell, status="done")
        else:
            todo.append((row.cell, row.run_id))
    if not todo:
        return result
    for note in (spec.pace_warning, spec.workers_note, caps_text(checked.caps), *checked.cap_notes):
        if note:
            notice(note)
    spec = _workers_for_caps(spec, checked.caps, notice)

    benchmarks, snapshots = await asyncio.to_thread(_snapshots, {c.benchmark for c, _ in todo}, data_dir)
    events: asyncio.Queue[tuple[str, Job, Any]] = asyncio.Queue()
    by_run: dict[str, Cell] = {}
    executor = executor_factory(spec, bus, lambda j, r: events.put_nowait(("lost", j, r)),
                                lambda j, o: events.put_nowait(("done", j, o)))
    executor.caps = ProviderCaps({name: cap.most for name, cap in checked.caps.items()})
    judging: list[asyncio.Task[None]] = []
    pace_reruns: dict[Cell, int] = {}
    live: set[str] = set()  # the runs submitted and not yet ended
    idle = "starting the workers"  # what the campaign does while no run is under way

    async def progress() -> str:
        """Where the campaign stands, for the line said when nothing else was for a while."""
        head = f"after {duration_text((time.monotonic() - began) * 1000)}, " \
               f"{result.already + len(result.complete)}/{result.already + len(todo)} cell(s) complete"
        if not live:
            return f"{head}; {idle}"
        states = [await records.cell_state(store, run_id) for run_id in sorted(live)]
        running = sum(state == "running" for state, _, _ in states)
        capped = executor.held_back()
        waiting = sum(state == "missing" for state, _, _ in states) - capped
        return (f"{head}; {running} running, {sum(d for _, d, _ in states)}/{sum(t for _, _, t in states)} of their turns done"
                + (f"; {waiting} waiting for a worker" if waiting > 0 else "")
                + (f"; {capped} waiting for a provider's cap" if capped else ""))

    pulse = Heartbeat(notice, progress)
    notice = pulse.notice  # every line said resets the pulse's wait

    async def submit(cell: Cell, previous: str | None, why: str = "", *, speed: float | None = None) -> None:
        """Run the cell: `previous` continued (`continue_cell`), or, given a `speed`, replaced by a
        new run at that speed. A run replaced by another is marked superseded: it counts nowhere."""
        if speed is None:
            run_id, resume, how = await continue_cell(store, benchmarks[cell.benchmark], previous)
        else:
            run_id, resume, how = new_run_id(), None, "started"  # (`why` says at which speed)
        if previous is not None and run_id != previous:
            await _supersede(store, bus, previous, run_id, why or how)
        by_run[run_id] = cell
        live.add(run_id)
        if judge is not None:  # subscribed before the executor can publish the run's first event
            judging.append(await _judge_run(store, bus, benchmarks[cell.benchmark], judge, run_id, resumed=resume is not None))
        await records.set_cell(store, campaign_id, cell, status="queued", run_id=run_id, reason=why)
        notice(f"{cell.label}: run {run_id} {how}" + (f" ({why})" if why else ""))
        settings = checked.settings[(cell.benchmark, cell.model)]
        if speed is not None:
            settings = settings.model_copy(update={"speed": speed})
        executor.submit(Job(run_id, snapshots[cell.benchmark], settings, resume=resume, speed_fixed=speed is not None))

    beating = await _coordinate(store, campaign_id)  # queued cells are this process's to run
    pacing = _PaceReport(store, campaign_id, notice)
    executor.on_pace = pacing.changed
    executor.on_notice = notice  # (a Ray node lost, joined or refused)
    executor.expect([checked.settings[(c.benchmark, c.model)] for c, _ in todo], sum(s.size for s in snapshots.values()))
    ticking = asyncio.create_task(pulse.run(), name=f"campaign-{campaign_id}-progress")
    try:
        await executor.start()
        if on_executor is not None:
            on_executor(executor)
        for cell, previous in todo:
            await submit(cell, previous if previous else None)
        open_runs = len(todo)
        while open_runs:
            kind, job, detail = await events.get()
            open_runs -= 1
            live.discard(job.run_id)
            cell = by_run[job.run_id]
            if kind == "lost":  # no run_ended reached the bus: end it here, then go on elsewhere
                await store.flush()  # (its last events first: its end goes after them on its timeline)
                bus.publish(RunEnded(run_id=job.run_id, t_ms=await _timeline_end(store, job.run_id),
                                     status="interrupted", reason=f"worker lost: {detail}"))
                notice(f"{cell.label}: run {job.run_id} interrupted, worker lost ({detail}); resuming on another worker")
                await store.flush()
                await submit(cell, job.run_id, f"worker lost: {detail}")
                open_runs += 1
                continue
            await store.flush()
            state, done, total = await records.cell_state(store, job.run_id)
            outcome: JobOutcome = detail
            lost = await records.lost_pace_turns(store, job.run_id) if state != "complete" else []
            if lost and pace_reruns.get(cell, 0) < PACE_RERUNS:  # our machine's fault: play them again
                pace_reruns[cell] = pace_reruns.get(cell, 0) + 1
                why = (f"machine lost pace on turn(s) {', '.join(map(str, lost))}: re-run "
                       f"{pace_reruns[cell]}/{PACE_RERUNS}")
                ran = await store.get_run(job.run_id)
                speed = ran.speed if ran is not None and ran.speed else spec.speed
                slower = executor.new_run_speed(speed)
                if slower < speed:  # a run has one speed: resumed, it would lose pace at its own again
                    why += f", from scratch at speed {slower:g} (admission control: machine too busy for {speed:g})"
                    await submit(cell, job.run_id, why, speed=slower)
                else:
                    await submit(cell, job.run_id, why)
                open_runs += 1
                continue
            if state == "complete":
                result.complete.append(job.run_id)
                await records.set_cell(store, campaign_id, cell, status="done")
                notice(f"{cell.label}: run {job.run_id} complete ({done}/{total} turns)")
            else:
                result.incomplete.append(cell)
                why = outcome.message or state
                if lost:
                    why = f"machine lost pace on turn(s) {', '.join(map(str, lost))}, still after {PACE_RERUNS} re-runs"
                await records.set_cell(store, campaign_id, cell, status="pending", reason=why)
                notice(f"{cell.label}: run {job.run_id} {state} ({done}/{total} turns): {why}")
        idle = "judging the last turns"
        await asyncio.gather(*judging)
    finally:
        ticking.cancel()
        try:
            await executor.close()
            await _end_cancelled(store, bus, list(by_run))
            for task in judging:  # (only when stopped early: each run has ended, so each judge ends too)
                task.cancel()
            await asyncio.gather(*judging, return_exceptions=True)
        finally:
            await pacing.close()
            await _uncoordinate(store, campaign_id, beating)
    return result


def _workers_for_caps(spec: CampaignSpec, caps: dict[str, Cap], notice: Notice) -> CampaignSpec:
    """The spec the executor starts from: no more workers than the provider caps let runs run at
    once (each would load the engine to wait), said when the local pool starts fewer for it (Ray's
    count is its cluster's CPUs, known once joined: the start-up line says how many it started)."""
    bound = runs_at_once(caps, spec.models)
    would = spec.local_workers if spec.executor == "local" else spec.workers
    if bound is None or (would is not None and would <= bound):
        return spec
    if spec.executor == "local":
        notice(f"{bound} worker process(es), not {would}: the provider caps let no more runs run at once")
    return dataclasses.replace(spec, workers=bound)


class _PaceReport:
    """Admission control's word on the campaign row each time it changes (what `campaign show`
    and the TUI read), and as a notice at most every `PACE_NOTICE_S` (a machine near its limit
    flips between busy and calm windows; the notice does not scroll with every flip)."""

    def __init__(self, store: Store, campaign_id: str, notice: Notice) -> None:
        self.store, self.campaign_id, self.notice = store, campaign_id, notice
        self.told, self.told_at = "", 0.0
        self.writes: set[asyncio.Task[None]] = set()

    def changed(self, text: str) -> None:
        task = asyncio.get_running_loop().create_task(records.set_pace(self.store, self.campaign_id, text))
        self.writes.add(task)
        task.add_done_callback(self.writes.discard)
        now = time.monotonic()
        if text and text != self.told and now - self.told_at >= PACE_NOTICE_S:
            self.told, self.told_at = text, now
            self.notice(text)

    async def close(self) -> None:
        await asyncio.gather(*self.writes, return_exceptions=True)


#: the least wall time between two pace notices
PACE_NOTICE_S = 5.0


async def _coordinate(store: Store, campaign_id: str) -> asyncio.Task[None]:
    """Name this process on the campaign row and keep its heartbeat while it runs the campaign:
    once it is gone (kill -9 included), `campaign show|list` stop calling its queued cells queued."""
    await records.claim(store, campaign_id)

    async def heartbeat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            await records.beat(store, campaign_id)

    return asyncio.create_task(heartbeat(), name=f"campaign-{campaign_id}-heartbeat")


async def _uncoordinate(store: Store, campaign_id: str, beating: asyncio.Task[None]) -> None:
    beating.cancel()
    await asyncio.gather(beating, return_exceptions=True)  # (a failed write: the store says so itself)
    with contextlib.suppress(StoreError):
        await records.release(store, campaign_id)


async def _judge_run(store: Store, bus: EventBus, benchmark: Benchmark, judge: Callable[[], JudgeBackend], run_id: str,
                     *, resumed: bool) -> asyncio.Task[None]:
    from arena_tui.judge import JudgeWorker  # deferred: the judge loads only when a campaign is judged

    worker = JudgeWorker(benchmark, judge(), bus, run_id)
    run = await store.get_run(run_id) if resumed else None
    if run is not None:
        worker.seed(await store.turn_results(run_id), await store.judgements(run_id), run.recorded)
    return worker.start()


async def _supersede(store: Store, bus: EventBus, old: str, new: str, why: str) -> None:
    """`old` no longer counts: `new` runs its cell afresh (appended to old's log after its end)."""
    run = await store.get_run(old)
    if run is None:  # it recorded nothing: nothing to leave out
        return
    ends = await store.events(old, kinds=("run_ended",))
    bus.publish(RunSuperseded(run_id=old, t_ms=ends[-1][1].t_ms if ends else 0.0, by=new, reason=why))
    await store.flush()


async def _end_cancelled(store: Store, bus: EventBus, run_ids: list[str]) -> None:
    """Runs still `running` after close (a Ray task cancelled by force publishes no run_ended)."""
    await store.flush()
    for run_id in run_ids:
        run = await store.get_run(run_id)
        if run is not None and run.status == "running":
            bus.publish(RunEnded(run_id=run_id, t_ms=await _timeline_end(store, run_id), status="interrupted",
                                 reason="campaign stopped"))
    await store.flush()


async def _timeline_end(store: Store, run_id: str) -> float:
    from .resume import timeline_end  # deferred: resume planning loads only when a run is cut short

    return await timeline_end(store, run_id)


def _snapshots(names: set[str], data_dir: Path | None) -> tuple[dict[str, Any], dict[str, BenchmarkSnapshot]]:
    """The benchmarks (for resume planning here) and their snapshots (by value, for the workers)."""
    from benchmarks.registry import load_benchmark  # deferred: benchmark reading loads only when a campaign runs

    benchmarks, snaps = {}, {}
    for key in names:  # a cell's benchmark: its name, and whose recordings (`cell_parts`)
        name, speaker = cell_parts(key)
        try:
            benchmarks[key] = load_benchmark(name, data_dir, speaker=speaker)
            snaps[key] = snapshot(benchmarks[key])
        except SnapshotError as e:  # preflight checked the audio; it went missing since
            raise CampaignBlocked([str(e)]) from None
    return benchmarks, snaps
