"""Streaming judge: scores each turn as its `turn_ended` arrives, then applies phase 2; when the
run completes, judges it again as a whole (`whole_run`): that revision replaces the live scores,
which are provisional until then (`Judgement.scope` "live"). A rehydrated run's turns are judged
in isolation, each with the golden turns before it as its history: final as they arrive.

Judging never blocks the run: the worker is one more bus subscriber, judges at most
`concurrency` turns at once (in order of arrival: asyncio's semaphore is FIFO), and
publishes `judgement` events that the store records and the UI shows.

TokenUsage on a judgement: `input_tokens` counts every prompt token, `cached_input_tokens`
the part the provider served from its prompt cache.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from arena_tui.spine.benchmark import Benchmark

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import DimensionScore, Judgement, JudgeScope, RunEvent, TurnResult
from arena_tui.spine.recorded import RecordedRun
from ..verdicts import ANY, APART, LLM_DIMENSIONS, TURN_TAKING, apart_reason, counts, newest_revisions, standing
from .backends import JudgeBackend, JudgeRequest, RetryPolicy, judge_with_retries
from .phase2 import Alignment, apply_rules
from .prompt import PromptBuilder
from .rubric import JUDGE_VERSION, dimensions_for, turn_taking
from .schema import JudgeOutput, judgement_flags
from .summary import RunSummary, summarize
from .locate import benchmark_of_run
from .whole_run import judge_run, left_out

if TYPE_CHECKING:
    from arena_tui.store import Store


async def judge_turn(
    benchmark: Benchmark,
    result: TurnResult,
    earlier: Iterable[TurnResult],
    backend: JudgeBackend,
    *,
    run_id: str,
    revision: int = 1,
    audio: bool = True,
    t_ms: float = 0.0,
    policy: RetryPolicy | None = None,
    builder: PromptBuilder | None = None,
    scope: JudgeScope = "turn",
) -> Judgement:
    """Phase-1 judgement of one turn; a failure becomes a Judgement with `error`, never an exception.

    Its history: the `earlier` turns as they ran, or (scope "isolated": a rehydrated run) the
    golden turns before it, which its session was seeded with."""
    common: dict[str, Any] = dict(
        run_id=run_id, t_ms=t_ms, turn_index=result.turn_index, judge=backend.name,
        revision=revision, phase=1, heuristic=backend.heuristic, judge_version=JUDGE_VERSION, scope=scope,
    )
    try:
        turn = benchmark.turn(result.turn_index)
    except KeyError:
        return Judgement(**common, error=f"judge_error: turn {result.turn_index} is not in benchmark {benchmark.name}")
    dims = dimensions_for(turn, audio=audio)
    coded: dict[str, DimensionScore] = {TURN_TAKING: turn_taking(result)} if audio else {}
    builder = builder or PromptBuilder(benchmark)
    isolated = scope == "isolated"
    earlier = [] if isolated else sorted((r for r in earlier if r.turn_index < result.turn_index),
                                         key=lambda r: r.turn_index)
    history = builder.golden_history(result.turn_index) if isolated else builder.history(earlier)
    request = JudgeRequest(
        prefix=builder.prefix, history=history,
        target=builder.target(turn, result, dims, coded.get(TURN_TAKING), isolated=isolated),
        turn=turn, result=result, benchmark=benchmark, dimensions=dims, earlier=earlier,
    )
    try:
        outcome = await judge_with_retries(backend, request, policy)
    except Exception as e:  # a bug in a backend must not lose the turn either
        return Judgement(**common, scores=coded, error=f"judge_error: {type(e).__name__}: {e}")
    if outcome.reply is None:
        return Judgement(**common, scores=coded, usage=outcome.usage, error=outcome.error)
    out = outcome.reply.output
    assert isinstance(out, JudgeOutput)  # what a one-turn request asks for (`JudgeRequest.output`'s default)
    scores = {
        d: DimensionScore(verdict=getattr(out.scores, d).verdict, reasoning=getattr(out.scores, d).reasoning)
        for d in dims
        if d in LLM_DIMENSIONS
    }
    if (error := left_out(turn, result, scores)) is not None:  # "na" where the turn is judged: no verdict
        return Judgement(**common, scores=coded, usage=outcome.usage, error=error)
    scores.update(coded)
    return Judgement(**common, scores=scores, usage=outcome.usage, **judgement_flags(out, heuristic=backend.heuristic))


class JudgeWorker:
    """Subscribes at construction (so nothing published later is missed); `start()` runs it."""

    def __init__(
        self,
        benchmark: Benchmark,
        backend: JudgeBackend,
        bus: EventBus,
        run_id: str,
        *,
        audio: bool = True,
        concurrency: int = 2,
        policy: RetryPolicy | None = None,
        phase2: bool = True,
        whole_run: bool = True,
        run_policy: RetryPolicy | None = None,
    ) -> None:
        self.benchmark, self.backend, self.bus, self.run_id = benchmark, backend, bus, run_id
        self.audio, self.policy, self.phase2 = audio, policy, phase2
        self.whole_run, self.run_policy = whole_run, run_policy  # judge a completed run again as a whole
        self.cross_turn = True  # phase 2 realigns calls across turns (not for rehydrated runs)
        self.builder = PromptBuilder(benchmark)
        self.results: dict[int, TurnResult] = {}
        self.expected: list[int] | None = None  # the turns the run set out to run (run_started)
        self.judgements: list[Judgement] = []
        self.alignment: Alignment | None = None
        self._revision: dict[int, int] = {}
        self._run_revision = 0  # the whole run's own judgements (turn_index None)
        self._seen: set[tuple[int, int]] = set()
        self._sem = asyncio.Semaphore(max(1, concurrency))
        self._tasks: set[asyncio.Task[Judgement]] = set()
        self._last_t_ms = 0.0
        self._sub = bus.subscribe(
            accept=lambda e: e.run_id == run_id and e.kind in ("run_started", "turn_ended", "judgement", "run_ended")
        )
        self._task: asyncio.Task[None] | None = None

    def start(self) -> asyncio.Task[None]:
        self._task = asyncio.create_task(self.run(), name=f"judge:{self.run_id}")
        return self._task

    async def run(self) -> None:
        try:
            async for ev in self._sub:
                self._last_t_ms = max(self._last_t_ms, ev.t_ms)
                if ev.kind == "run_started":
                    self.configure(ev.recorded)
                    self.expected = list(ev.turn_indices)
                elif ev.kind == "turn_ended":
                    self._on_turn(ev)
                elif ev.kind == "judgement":
                    self._record(ev)
                elif ev.kind == "run_ended":
                    await self.wait()
                    if self.phase2:
                        await self.run_phase2()
                    if ev.status == "completed" and self.whole_run and self.cross_turn:
                        await self.judge_whole_run()
                    return
            await self.wait()  # bus closed without run_ended: still finish what arrived
        finally:
            self._sub.close()

    def configure(self, run: RecordedRun) -> None:
        """What the run's recorded settings say about judging it: text runs and rehydrated runs
        have no turn-taking to score; rehydrated turns get no cross-turn realignment."""
        if not run.judges_turn_taking:
            self.audio = False
        if run.rehydrated:
            self.cross_turn = False

    def seed(self, results: Iterable[TurnResult], judgements: Iterable[Judgement], run: RecordedRun) -> None:
        """A resumed run: the turns and verdicts already stored are this worker's context (earlier
        turns for the judge, the whole run for phase 2, revision numbers to continue from)."""
        self.configure(run)
        for r in results:
            if r.turn_index >= 0:
                self.results[r.turn_index] = r
        for j in judgements:
            self._record(j)

    def _on_turn(self, ev: RunEvent) -> None:
        result: TurnResult = ev.result  # type: ignore[union-attr]  # called for turn_ended events only
        if result.turn_index < 0:
            return  # the greeting is not a benchmark turn
        self.results[result.turn_index] = result
        if not counts(result.status):
            return  # not the model's doing (stopped, lost pace, infra failure…): no verdict to give
        earlier = [r for r in self.results.values() if r.turn_index < result.turn_index]
        task = asyncio.create_task(self._judge(result, earlier, ev.t_ms))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _judge(self, result: TurnResult, earlier: list[TurnResult], t_ms: float) -> Judgement:
        async with self._sem:
            j = await judge_turn(
                self.benchmark, result, earlier, self.backend, run_id=self.run_id, audio=self.audio,
                t_ms=t_ms, policy=self.policy, builder=self.builder,
                scope="live" if self.cross_turn else "isolated",
            )
        return self._publish(j)

    async def judge_whole_run(self) -> list[Judgement]:
        """The completed run in one request: its judgements become each turn's next revision, then
        the code rules check them (`run_phase2`). A failed request leaves the live scores standing
        (provisional), each turn showing the error."""
        await self.wait()
        revisions: dict[int | None, int] = {i: n for i, n in self._revision.items()}  # (a dict's keys are invariant)
        revisions[None] = self._run_revision
        out = await judge_run(
            self.benchmark, self.results.values(), self.backend, run_id=self.run_id, revisions=revisions,
            audio=self.audio, t_ms=self._last_t_ms, policy=self.run_policy, builder=self.builder,
        )
        published = [self._publish(j) for j in out]
        return published + (await self.run_phase2() if self.phase2 else [])

    def _publish(self, j: Judgement) -> Judgement:
        """Revisions are numbered at publish time so concurrent judgings never collide."""
        if j.turn_index is None:  # the whole run's own judgement (usage, notes)
            self._run_revision += 1
            j = j.model_copy(update={"revision": self._run_revision})
        else:
            j = j.model_copy(update={"revision": self._revision.get(j.turn_index, 0) + 1})
            self._record(j)
        self.bus.publish(j)
        return j

    def _record(self, j: Judgement) -> None:
        if j.turn_index is None:
            self._run_revision = max(self._run_revision, j.revision)
            return
        if (j.turn_index, j.revision) in self._seen:
            return
        self._seen.add((j.turn_index, j.revision))
        self._revision[j.turn_index] = max(self._revision.get(j.turn_index, 0), j.revision)
        self.judgements.append(j)

    async def wait(self) -> None:
        """Until every turn that has arrived is judged."""
        while True:
            # Drop finished tasks here rather than trusting their done callbacks: those run only on
            # a later loop iteration, and gathering already-done tasks completes WITHOUT yielding,
            # so `while self._tasks: await gather(...)` could spin forever and freeze the app.
            for t in [t for t in self._tasks if t.done()]:
                self._tasks.discard(t)
                if not t.cancelled():
                    t.exception()  # mark retrieved; a judging error is the task's own business
            if not self._tasks:
                return
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def run_phase2(self) -> list[Judgement]:
        """Apply the cross-turn rules now (also callable before the run ends)."""
        await self.wait()
        new, self.alignment = apply_rules(
            self.benchmark, self.results.values(), self.judgements, t_ms=self._last_t_ms, cross_turn=self.cross_turn
        )
        return [self._publish(j) for j in new]

    def summary(self) -> RunSummary:
        return summarize(self.benchmark, self.results.values(), self.judgements, self.expected)

    def latest(self) -> dict[int, Judgement]:
        """turn -> the judgement that counts (`arena_tui.verdicts`), else its newest error."""
        return {i: st.shown for i, st in standing(self.judgements).items()}




async def reapply_rules(store: Store, run_id: str, benchmark: Benchmark) -> list[Judgement]:
    """The code rules (phase 2) applied again over a stored run's verdicts, recorded: after a
    revision phase 2 has not seen (a majority of repeated judgings, `agreement.judge_repeatedly`)."""
    run = await store.get_run(run_id)
    results = [r for r in await store.turn_results(run_id) if r.turn_index >= 0]
    judgements = list(await store.judgements(run_id))
    t_ms = await store.last_t_ms(run_id)
    new, _ = apply_rules(benchmark, results, judgements, t_ms=t_ms, cross_turn=run is None or not run.recorded.rehydrated)
    for j in new:
        store.submit(j)
    await store.flush()
    return new


async def rejudge_turn(
    store: Store,
    run_id: str,
    turn_index: int | None,
    backend: JudgeBackend,
    *,
    benchmark: Benchmark | None = None,
    bus: EventBus | None = None,
    phase2: bool = True,
    policy: RetryPolicy | None = None,
    run_policy: RetryPolicy | None = None,
    concurrency: int = 2,
) -> Judgement | list[Judgement]:
    """Re-judge one turn (or, with turn_index=None, every turn) of a stored run.

    One turn: the per-turn prompt with the run before it as history (scope "turn"). Every turn:
    the whole-run judgement, one request (scope "run"); a rehydrated run's turns each in
    isolation instead, the golden turns before it as history (scope "isolated"), as the reference
    judges them. New revisions supersede, old ones stay. With a bus (the TUI's, which the store
    records) the judgements are published; without one they are submitted to the store directly.
    Returns the turn's newest revision afterwards, errored or not, so the caller sees what this
    judging did (a list, one per turn, for a whole run); the verdict that counts is
    `arena_tui.verdicts.standing`.
    """
    run = await store.get_run(run_id)
    if run is None:
        raise LookupError(f"no run {run_id!r} in the database")
    if benchmark is None:
        benchmark = await benchmark_of_run(store, run_id)
    results = sorted(
        (r for r in await store.turn_results(run_id) if r.turn_index >= 0),  # no greeting
        key=lambda r: r.turn_index,
    )
    by_index = {r.turn_index: r for r in results}
    targets = sorted(i for i, r in by_index.items() if counts(r.status)) if turn_index is None else [turn_index]
    if turn_index is not None and turn_index not in by_index:
        have = f"{min(by_index)}..{max(by_index)}" if by_index else "none"
        raise LookupError(f"run {run_id}: no turn {turn_index} (recorded turns: {have})")
    if turn_index is not None and (why := apart_reason(by_index[turn_index].status)) is not None:
        raise LookupError(f"run {run_id}: turn {turn_index} is {APART[why]}: no verdict on the model, never judged")
    judgements: list[Judgement] = list(await store.judgements(run_id))
    t_ms = await store.last_t_ms(run_id)  # on the run's timeline, after what it judges
    recorded = run.recorded
    rehydrated = recorded.rehydrated
    audio = recorded.judges_turn_taking and (
        any(r.user_audio is not None or r.bot_speech for r in results) or any(TURN_TAKING in j.scores for j in judgements)
    )
    revision: dict[int | None, int] = newest_revisions(judgements)
    revision.setdefault(None, 0)
    builder = PromptBuilder(benchmark)

    async def emit(j: Judgement) -> None:
        if bus is not None:
            bus.publish(j)
        else:
            store.submit(j)
        judgements.append(j)
        revision[j.turn_index] = j.revision

    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(idx: int) -> None:
        async with sem:
            j = await judge_turn(
                benchmark, by_index[idx], results, backend, run_id=run_id, revision=revision.get(idx, 0) + 1,
                audio=audio, t_ms=t_ms, policy=policy, builder=builder, scope="isolated" if rehydrated else "turn",
            )
        await emit(j)

    if turn_index is None and not rehydrated:
        for j in await judge_run(benchmark, results, backend, run_id=run_id, revisions=revision, audio=audio,
                                 t_ms=t_ms, policy=run_policy, builder=builder):
            await emit(j)
    else:
        await asyncio.gather(*(one(idx) for idx in targets))
    if phase2:
        new, _ = apply_rules(benchmark, results, judgements, t_ms=t_ms, cross_turn=not rehydrated)
        for j in new:
            await emit(j)
    await store.flush()
    now = {t: st.newest for t, st in standing(judgements, judge=ANY).items()}  # what this judging did
    if turn_index is None:
        return [now[i] for i in targets if i in now]
    return now[turn_index]
