"""A headless run: the engine's run recorded by the store, its progress printed as it goes.

`arena-tui run --headless` and `arena-tui resume` print a first line (what runs, judged how,
recorded where; `live.headline`), a progress bar per finished turn, each turn's verdicts as the
judge returns them, and a per-turn and per-dimension summary at the end. The summary is of the
whole run as recorded (a resumed run's finished turns too), counted as the report counts it:
`judge.summary` (`arena_tui.verdicts`) for the verdicts, `arena_tui.timing` for latency. The run
itself is the engine's (`runners.engine.run_benchmark`) and the record is the store's, so a
headless run and a TUI run store exactly the same thing.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.bus import EventBus, Subscription
from arena_tui.spine.errors import CliError
from arena_tui.spine.events import LOST_PACE, RunEnded, TurnResult
from arena_tui.spine.ids import new_run_id
from arena_tui.spine.settings import RunSettings, SettingsError
from arena_tui.spine.times import wall_ms
from arena_tui.stop_signals import StopSignals
from arena_tui.store import Store, StoreError, StoreWriteError

from arena_tui.spine.duplex import FULL_DUPLEX_TURN
from arena_tui.spine.source import FULL_DUPLEX_LABEL

from ..compare.columns import cost_words
from ..compare.duplex import duplex_line, early_start_text, interrupted_text, outcome_text
from ..compare.stored import untrusted_turns
from ..cost import current_prices, judge_estimate, run_estimate
from ..judge import JudgeWorker, render_text, summarize
from ..judge.backends import JudgeBackend
from ..run_view import wait_text
from ..stats import median
from ..timing import (UNTRUSTED, UNTRUSTED_MARK, UntrustedTurns, barge_in_ms, barge_in_text, counted_latencies,
                      latency_caveat, latency_counts, latency_text, response_latency, v2v_values)
from ..verdicts import APART, NEVER_ANSWERED, NOT_PLAYED, apart_reason, apart_text, tally
from .live import JudgeChoice, run_source, verdict_line


@dataclass
class Recorded:
    """The whole run as the store has it once it ended (a resumed run's earlier turns too)."""

    results: list[Any]  # benchmark turns' latest rows, by turn
    judgements: list[Any] = field(default_factory=list)
    expected: list[int] = field(default_factory=list)  # the turns it set out to run
    untrusted: set[int] = field(default_factory=set)  # turns whose latencies are untrusted
    usage: list[Any] = field(default_factory=list)  # what its services said they used (`usage` events)
    judge_usage: dict[str, Any] = field(default_factory=dict)  # judge -> its requests' tokens


async def read_recorded(store: Store, run_id: str) -> Recorded | None:
    """What the store recorded of `run_id` (None: nothing, the run never started)."""
    run = await store.get_run(run_id)
    if run is None:
        return None
    results = [r for r in await store.turn_results(run_id) if r.turn_index >= 0]
    return Recorded(results, await store.judgements(run_id), list(run.turn_indices), await untrusted_turns(store, run_id),
                    await store.usage(run_id), await store.judge_usage(run_id))


def cost_line(recorded: Recorded, alias: str) -> str:
    """`cost $0.0370 [$0.0123 per passed turn; estimate, prices of …] · judge cost …` (the judge's apart)."""
    passed = tally(recorded.judgements, {r.turn_index: r.status for r in recorded.results}, recorded.expected or None).strict[0]
    cost, judge = run_estimate(alias, recorded.usage, current_prices()), judge_estimate(recorded.judge_usage, current_prices())
    return f"cost {cost_words(cost, passed).line} · judge cost {cost_words(judge, judge=True).line}"


#: a run to record instead of a new one (`resume`): started on the store and the bus it records
Start = Callable[[Store, EventBus], Awaitable[object]]


async def run_headless(bench: Benchmark, settings: RunSettings, db: str | os.PathLike[str], out: TextIO,
                       judge: JudgeChoice | None = None, *, start: Start | None = None, run_id: str | None = None,
                       total: int | None = None, preflighted: bool = False) -> int:
    """A run with its progress on `out`; `start(store, bus)`, when given, is the run `run_id` to record
    instead of a new one (`resume`, which judges the resumed turns itself): its id is said however it
    ends, a failed resume's included, never one no run has. `preflighted`: the caller ran the one
    preflight (`preflight.py`) just now, so the engine does not run it again."""
    from runners.engine import RunError, run_benchmark  # deferred: the engine (Pipecat, ~1 s) loads after `run`'s first line is out (the command imports this module)

    try:
        total = total if total is not None else len(settings.turns_of(bench))
    except SettingsError as e:
        raise CliError(str(e)) from None
    judge = judge or JudgeChoice("none", "", None)
    bus = EventBus()
    try:
        store = await Store.open(db)
    except StoreError as e:
        raise CliError(str(e)) from None
    recorder = store.start_recording(bus)
    progress = Progress(total, out, settings.speed, expected_calls={t.turn_index: len(t.expected_calls) for t in bench.turns})
    # a turn and its verdicts are shown once the store has committed them (a kill -9 after the line
    # keeps them), so a verdict never precedes its turn's line
    subs = [
        bus.subscribe(lambda e: e.kind in ("run_started", "run_ended", "session_rotated", "error", "waiting")),
        store.committed.subscribe(lambda e: e.kind in ("session_opened", "turn_started", "turn_ended", "judgement")),
    ]
    printers = [asyncio.create_task(progress.follow(sub)) for sub in subs]
    run_id = run_id or new_run_id()
    judging = start_judge(bench, judge, bus, run_id) if start is None else None
    status = 0
    failure: StoreError | None = None
    recorded: Recorded | None = None

    async def run_and_judge() -> None:
        await run_benchmark(bench, settings, bus, run_id=run_id, preflighted=preflighted)
        if judging is not None:
            await judging[1]  # the last verdicts and the cross-turn rules, before the summary

    with StopSignals() as stops:
        try:
            if start is not None:
                await store.run_while_writable(start(store, bus))
            else:
                await store.run_while_writable(run_and_judge())
        except RunError as e:  # one line: why the run could not start or failed (the run_ended reason)
            status = 2
            print(f"arena-tui: {e}", file=sys.stderr)
        except StoreWriteError as e:
            failure = e
        except asyncio.CancelledError:
            status = stops.exit_status()
        finally:
            stops.disarm()  # the run is over: a signal now must not cut the store's last flush short

            async def finish() -> None:
                nonlocal failure, recorded
                if judging is not None:  # a run that failed or was stopped: verdicts still pending are dropped
                    judging[1].cancel()
                    with _suppress():
                        await judging[1]
                    with _suppress():
                        await judging[2].aclose()
                try:
                    await store.flush()
                except StoreError as e:
                    failure = failure or e
                bus.close()
                with _suppress():
                    await recorder
                with _suppress():
                    recorded = await read_recorded(store, run_id)
                await store.close()
                await asyncio.gather(*printers)

            await to_the_end(finish())
    if failure is not None:
        raise CliError(str(failure))
    progress.summary(out, source=run_source(settings), recorded=recorded)
    if recorded is not None and recorded.results and (judge.make is not None or recorded.judgements):
        print("", file=out)
        print(render_text(summarize(bench, recorded.results, recorded.judgements, recorded.expected or None)), file=out)
    if progress.ended is not None:
        if recorded is not None:
            print(cost_line(recorded, settings.model), file=out)
        print(f"run {run_id} recorded in {db}", file=out)
        results = recorded.results if recorded else progress.results
        again = tally([], {r.turn_index: r.status for r in results}, recorded.expected if recorded else None).uncounted
        if again:  # what a resume plays again: every turn not the model's doing
            why = "; ".join(f"{APART[k]} {', '.join(map(str, again[k]))}" for k in APART if k in again)
            lost = " (this machine did not keep pace)" if LOST_PACE in again else ""
            print(f"turns in no figure: {why}{lost}; `arena-tui resume {run_id}` plays them", file=out)
    return status


async def to_the_end(aw: Awaitable[object]) -> None:
    """Await `aw` to its end even if this task is cancelled meanwhile (a stop signal that came in
    just as the run ended, before `StopSignals.disarm`): the cancel is taken back, the work goes on."""
    task = asyncio.ensure_future(aw)
    while True:
        try:
            await asyncio.shield(task)
            return
        except asyncio.CancelledError:
            if task.done():
                task.result()  # its own cancellation or error, not ours
                return
            me = asyncio.current_task()
            if me is not None:
                me.uncancel()


def start_judge(bench: Benchmark, judge: JudgeChoice, bus: EventBus,
                run_id: str) -> tuple[JudgeWorker, asyncio.Task[None], JudgeBackend] | None:
    """(worker, task, backend) judging this run live, or None with --judge none."""
    if judge.make is None:
        return None
    backend = judge.make()
    worker = JudgeWorker(bench, backend, bus, run_id)
    return worker, worker.start(), backend


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> bool:
        return kind is not None and not issubclass(kind, KeyboardInterrupt)


class CallCount:
    """Tool calls over the turns shown: what the specs expected, what matched, what was missed
    (expected, never matched) and what was made without being expected (duplicates apart)."""

    def __init__(self) -> None:
        self.expected = self.matched = self.missed = self.unexpected = self.duplicates = 0

    def add(self, expected: int, made: list[Any]) -> None:
        matched = sum(1 for c in made if c.status == "matched")
        dups = sum(1 for c in made if c.status == "duplicate_skipped")
        self.expected += expected
        self.matched += matched
        self.missed += max(expected - matched, 0)
        self.unexpected += len(made) - matched - dups
        self.duplicates += dups

    def __str__(self) -> str:
        dup = f", {self.duplicates} duplicate" if self.duplicates else ""
        return (f"expected {self.expected}: ✓{self.matched} matched, {self.missed} missed, "
                f"✗{self.unexpected} unexpected{dup}")


class Progress:
    """Prints a one-line progress bar per finished turn, then the summary table."""

    def __init__(self, total: int, out: TextIO, speed: float | None = 1.0, *,
                 expected_calls: dict[int, int] | None = None) -> None:
        self.total = total
        self.out = out
        self.results: list[TurnResult] = []
        self.notes: list[str] = []
        self.ended: RunEnded | None = None
        self.speed = speed  # of the run timeline (`arena_tui.timing`); run_started says for sure
        self.expected_calls = expected_calls or {}  # turn -> calls its spec expects
        self.untrusted = UntrustedTurns()  # turns whose latencies are untrusted, as the events come

    async def follow(self, sub: Subscription) -> None:
        async for ev in sub:
            if ev.kind in ("error", "turn_ended"):
                self.untrusted.see(ev.kind, ev.turn_index, getattr(ev, "where", None))
            if ev.kind == "turn_ended":
                if ev.result.turn_index < 0:  # the greeting is not a benchmark turn
                    self.notes.insert(0, f"greeting: {ev.result.status} {ev.result.assistant_text[:60]!r}")
                    continue
                self.results.append(ev.result)
                self._bar(ev.result)
            elif ev.kind == "session_rotated":
                self.notes.append(
                    f"turn {ev.turn_index}: session {ev.from_session}→{ev.to_session} ({ev.reason}; "
                    f"replayed {ev.replayed.messages} msgs, {ev.replayed.tool_calls} calls, {ev.replayed.chars} chars)"
                )
                print(f"    {self.notes[-1]}", file=self.out, flush=True)
            elif ev.kind == "error":  # said as it happens (Pipecat's own lines go to the log file)
                self.notes.append(f"error ({ev.where}): {ev.message}")
                print(f"    {self.notes[-1]}", file=self.out, flush=True)
            elif ev.kind == "run_started":
                self.speed = ev.timeline_speed
                if ev.recorded.full_duplex:  # how its turns are delimited, said before any of them
                    print(f"    {FULL_DUPLEX_LABEL}: {FULL_DUPLEX_TURN}", file=self.out, flush=True)
            elif ev.kind == "session_opened" and not self.results:  # the wait before the first turn says what it is
                print(f"    session {ev.session} open{f' ({ev.detail})' if ev.detail else ''}", file=self.out, flush=True)
            elif ev.kind == "turn_started":  # a CI log shows where a run is, not only where it was
                what = "greeting" if ev.turn_index is None or ev.turn_index < 0 else f"turn {ev.turn_index}"
                again = f" (retry {ev.attempt})" if ev.attempt else ""
                print(f"  {what} started{again}", file=self.out, flush=True)
            elif ev.kind == "waiting":  # one line when a wait starts; the watchdog's end is the turn's line
                print(f"    {wait_text(ev.what, wall_ms(ev.deadline_t_ms - ev.t_ms, self.speed))}", file=self.out, flush=True)
            elif ev.kind == "run_ended":
                self.ended = ev
            elif ev.kind == "judgement" and (ev.turn_index is None or ev.turn_index >= 0):
                print(f"    {verdict_line(ev)}", file=self.out, flush=True)

    def _bar(self, r: TurnResult) -> None:
        done = len(self.results)
        width = 30
        fill = int(width * done / max(1, self.total))
        print(f"[{'#' * fill}{'.' * (width - fill)}] {done}/{self.total}  turn {r.turn_index}: {r.status}", file=self.out, flush=True)

    def summary(self, out: TextIO, source: str | None, recorded: Recorded | None = None) -> None:
        """The per-turn table and the run's line; of the whole run as recorded when given (a resumed
        run's earlier turns too), else of the turns this process saw."""
        results = recorded.results if recorded is not None else self.results
        untrusted = recorded.untrusted if recorded is not None else self.untrusted.turns
        total = len(recorded.expected) if recorded is not None and recorded.expected else self.total
        if not results:  # still says how the run ended (a signal during the greeting: interrupted)
            print("no turns finished", file=out)
            self._ending(out)
            return
        print("", file=out)
        # each call by its whole name (a cut `✓check_re` names no tool): the column is as wide as its longest
        tools = {r.turn_index: " ".join(("✓" if c.status == "matched" else "✗") + c.name for c in r.tool_calls) or "-"
                 for r in results}
        tools_w = max(10, *(len(t) for t in tools.values()))
        head = f"{'turn':>4}  {'status':<14} {'v2v ms':>7} {'pipe ms':>7}  {'tools':<{tools_w}} flags"
        caveat = latency_caveat(self.speed)
        print(head + (f"   ({source.upper()})" if source else "")
              + (f"   ({caveat})" if caveat else ""), file=out)
        print("-" * len(head), file=out)
        calls = CallCount()
        for r in sorted(results, key=lambda r: r.turn_index):
            overlap = barge_in_ms(r.latencies)
            v2v = response_latency(r.latencies.voice_to_voice_ms)  # a barge-in is no latency
            pipe = response_latency(r.latencies.pipeline_ttfb_ms)
            counted = latency_counts(r.status, r.turn_index in untrusted)
            if apart_reason(r.status) is None:  # a turn the model never got expected nothing of it
                calls.add(self.expected_calls.get(r.turn_index, 0), r.tool_calls)
            flags = [barge_in_text(overlap)] if overlap is not None else []
            if r.turn_index in untrusted:
                flags.append(f"latency {UNTRUSTED}")
            if r.overlap_ms:
                flags.append(f"overlap {r.overlap_ms:.0f}ms")
            flags += [outcome_text(o) for o in r.duplex or []]  # (the header says when latency is sped up)
            if r.early_start_ms is not None:
                flags.append(early_start_text(r.early_start_ms))
            if (interrupted := interrupted_text(r)) is not None:
                flags.append(interrupted)
            if r.retries:
                flags.append(f"retries {r.retries}")
            if r.reconnects:
                flags.append(f"reconnects {r.reconnects}")
            if r.sentinel:
                flags.append(r.sentinel[:24])
            mark = "" if counted or v2v is None else UNTRUSTED_MARK  # in no latency figure
            print(
                f"{r.turn_index:>4}  {r.status:<14} {'barge-in' if overlap is not None else _ms(v2v) + mark:>7} "
                f"{_ms(pipe) + mark if pipe is not None else '-':>7}  {tools[r.turn_index]:<{tools_w}} {', '.join(flags)}".rstrip(),
                file=out,
            )
        statuses: dict[str, int] = {}
        for r in results:
            statuses[r.status] = statuses.get(r.status, 0) + 1
        # the turns in no figure by the one rule; not played: every planned turn without a row
        played = tally([], {r.turn_index: r.status for r in results})
        uncounted = {k: len(v) for k, v in played.uncounted.items()}
        done = len(results) - sum(uncounted.values())
        apart = apart_text({**uncounted, NOT_PLAYED: max(total - len(results), 0)})
        v2vs = v2v_values(results, untrusted)
        left_out = sum(1 for r in results if r.turn_index in untrusted and latency_counts(r.status))
        print("-" * len(head), file=out)
        print(
            f"turns {done}/{total} done: "
            + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()) if apart_reason(k) is None)
            + (f"; counted apart: {apart}" if apart else "")
            + f"; tool calls {calls}; median v2v {latency_text(median(v2vs), self.speed)}"
            + (f" over {len(v2vs)} turn(s), {left_out} untrusted left out" if left_out else ""),
            file=out,
        )
        if played.never_answered:  # its turns count, each the model's failure: most often a setup fault
            print(f"{NEVER_ANSWERED}: the model heard every turn it got and answered none", file=out)
        for line in (stage_line(counted_latencies(results, untrusted), self.speed), duplex_line(results, self.speed, untrusted)):
            if line:
                print(line, file=out)
        self._ending(out)

    def _ending(self, out: TextIO) -> None:
        """The notes (greeting, rotations, errors) and how the run ended."""
        for n in self.notes:
            print(n, file=out)
        if self.ended is not None:
            print(f"run {self.ended.status}{': ' + self.ended.reason if self.ended.reason else ''}", file=out)


#: a cascade's stages as the summary names them (`Latencies.stages`, in order)
STAGE_NAMES = {"stt": "STT", "turn": "turn", "llm": "LLM", "tts": "TTS"}


def stage_line(results: list[Any], speed: float | None) -> str | None:
    """A cascade's p50 per stage and voice-to-voice over the counted turns timed in every stage, on
    our clock, labelled not comparable at a speed other than 1 (`latency_caveat`); None without stages."""
    timed = [(r, stages) for r in counted_latencies(results) if (stages := r.latencies.stages()) is not None]
    if not timed:
        return None
    p50 = {k: median([stages[k] for _, stages in timed]) for k in STAGE_NAMES}
    v2v = median([response_latency(r.latencies.voice_to_voice_ms) for r, _ in timed])
    caveat = latency_caveat(speed)
    return (f"stages p50 on our clock ({len(timed)} turn(s)" + (f", {caveat}" if caveat else "") + "): "
            + ", ".join(f"{name} {latency_text(p50[k])}" for k, name in STAGE_NAMES.items())
            + f"; voice-to-voice {latency_text(v2v)}")


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}"
