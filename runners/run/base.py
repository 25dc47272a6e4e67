"""The run life every turn loop shares, written once: one clock, event stamping, and the run's
course (start the provider, open, every turn, cancel/failure, shutdown, `run_ended`), its session
numbers and the history it keeps. Beside it, one job each, each a collaborator the run holds or a
type it uses: `session_base.py` (one session's basics, `SessionBase`), `tool_calls.py` (a call
answered from the turn spec, `ToolAnswers`), `replays.py` (a session replaced with the history
replayed, `Replays`), `attempt.py` (what an attempt produced),
`history.py` (the history rule, a seeded start; the turns a run plays are
`RunSettings.turns_of`'s), `outcome.py` (what a turn's ending and a run's mean).

`audio.AudioRun` and `text.TextRun` supply only what differs: how a session opens, how a
turn is played and when it is over, and what a turn's record holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from datetime import timedelta
from types import EllipsisType
from typing import Any, Generic, TypeVar

from loguru import logger
from pipecat.frames.frames import Frame

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import (
    MODEL_ENDED_SESSION_EARLY, ErrorEvent, Event, RunEnded, RunEvent, RunResumed, RunStarted,
    SessionOpened, TurnEnded, TurnResult, TurnStatus, Usage, UsageReported, wall_now,
)
from arena_tui.spine.benchmark import Benchmark, Turn
from arena_tui.spine.settings import Rotation, RunSettings

from ..base import HistoryItem, ProviderRunner, RunError, SessionSpec
from ..rotation import History
from ..transports import RunClock
from .attempt import AttemptBase
from .history import Seed, remember_turn
from .outcome import failed_status, failure_message, run_failure, unanswered_run
from .session_base import SessionBase
from .replays import Replays
from .tool_calls import ToolAnswers


S = TypeVar("S", bound=SessionBase)
A = TypeVar("A", bound=AttemptBase)


class RunBase(ABC, Generic[S, A]):
    """What every turn loop shares; `S` is its session type, `A` its attempt type."""

    def __init__(
        self,
        benchmark: Benchmark,
        config: RunSettings,
        bus: EventBus,
        run_id: str,
        provider: ProviderRunner,
        on_session: Callable[[S], None] | None = None,
        seed: Seed | None = None,
        numbers: Iterator[int] | None = None,
    ) -> None:
        self.benchmark = benchmark
        self.config = config
        self.bus = bus
        self.run_id = run_id
        self.provider = provider
        self.start_ms = seed.start_ms if seed is not None else 0.0  # a seeded run's timeline goes on from there
        self.clock = self.run_clock()
        self.on_session = on_session  # instrumentation: sees each session as it opens
        self.history = History()
        self.seed = seed
        if seed is not None:  # later rotations replay the seeded turns too
            self.history.items = list(seed.history)
        self.rotation: Rotation = provider.rotation_policy(config, benchmark.system_prompt)
        self.session: S | None = None
        self.sessions = 0
        # session numbers (shared by a rehydrated run's turns); a resumption's go on after the stored ones
        self.numbers = numbers or itertools.count((seed.last_session if seed is not None else 0) + 1)
        self.attempt: A | None = None
        self.turn_index: int | None = None
        self.ended_by_model = False
        #: every turn's record, for the run's outcome (`unanswered_run`); a resumption's starts with the finished ones
        self.results: list[TurnResult] = list(seed.done) if seed is not None else []
        self.tools = ToolAnswers(self)  # its calls answered from the turn spec
        self.replays = Replays(self)  # its sessions replaced, with the history replayed

    @abstractmethod
    def run_clock(self) -> RunClock:
        """The run's one timeline, from `start_ms`."""

    # -- events

    def publish(self, event: RunEvent) -> None:
        self.bus.publish(event)

    def now(self) -> float:
        return self.clock.t_ms()

    def ev[E: Event](self, cls: type[E], turn_index: int | None | EllipsisType = ..., **kw: object) -> E:
        """An event of this run, stamped now (or at `t_ms=`) and for the current turn (or `turn_index`)."""
        ti = self.turn_index if isinstance(turn_index, EllipsisType) else turn_index
        t = kw.pop("t_ms", None)
        return cls(run_id=self.run_id, t_ms=self.now() if t is None else t, turn_index=ti, **kw)

    def public_config(self) -> dict[str, Any]:
        """The run's config as recorded in `run_started` (no secrets)."""
        return self.config.public()

    def publish_run_started(self, turns: list[Turn]) -> None:
        self.publish(
            RunStarted(
                run_id=self.run_id,
                t_ms=0.0,
                benchmark=self.benchmark.name,
                model=self.config.model,
                provider=self.provider.name,
                # a fake's or simulator's answers are not the model's; `ProviderRunner.start`
                # refuses such a run unless its endpoint is on loopback
                simulator=self.provider.uses_fake(self.config),
                turn_indices=[t.turn_index for t in turns],
                config={**self.public_config(), "labels": {"provider_ttfb_ms": self.provider.provider_ttfb_label()}},
                speed=self.clock.speed,  # the clock's: a text run keeps real time whatever --speed says
                wall_time=wall_now() - timedelta(milliseconds=self.now() / self.clock.speed),  # at t_ms 0
                benchmark_snapshot=self.benchmark.snapshot(),  # the run is judged by what it ran
            )
        )

    def session_number(self) -> int:
        return self.session.number if self.session else 0

    def next_session_number(self) -> int:
        self.sessions += 1
        return next(self.numbers)

    # -- tools

    def tool_settled(self, a: A) -> None:  # noqa: B027
        """A call of attempt `a` has been answered (or failed) (`tools`, `tool_calls.ToolAnswers`)."""

    # -- frames from the service

    @abstractmethod
    def on_llm_frame(self, session: S, frame: Frame) -> None:
        """A frame the session's service pushed (either way), as it pushed it."""

    def on_usage(self, usages: list[Usage]) -> None:
        """Usage reports as they came (any session's: a closing one's were spent too), on the turn under
        way; a reseller's (`ProviderRunner.price_scope`) naming its model as billed: `azure-openai/gpt-realtime`."""
        scope = self.provider.price_scope
        for usage in usages:
            if scope and usage.model:
                usage = usage.model_copy(update={"model": f"{scope}/{usage.model}"})
            self.publish(self.ev(UsageReported, usage=usage))

    def bill_session(self) -> None:
        if self.session is not None:
            self.session.bill()

    # -- turn records

    def remember(self, turn: Turn, status: TurnStatus, a: A) -> None:
        """Add a finished turn to the history (what a later session is replayed), by `replayable`."""
        remember_turn(self.history, turn.turn_index, turn.input, status, a.assistant_text.strip(), a.tool_calls)

    def ended_early(self, turn: Turn) -> TurnResult:
        """A turn after the model ended the session: recorded, never played."""
        result = TurnResult(
            turn_index=turn.turn_index,
            status="ended_early",
            user_text=turn.input,
            assistant_text=MODEL_ENDED_SESSION_EARLY,
            sentinel=MODEL_ENDED_SESSION_EARLY,
        )
        self.publish(self.ev(TurnEnded, turn_index=turn.turn_index, result=result))
        return result

    def spec(self, kickoff: str | None, history: list[HistoryItem] | None = None) -> SessionSpec:
        """What the provider gets to open one session (`kickoff` None: it is asked nothing)."""
        return SessionSpec(
            model=self.provider.resolve_model(self.config.model),
            system_prompt=self.benchmark.system_prompt,
            tools=self.benchmark.tools,
            history=history or [],
            kickoff=kickoff,
            sample_rate=self.config.sample_rate,
            config=self.config,
        )

    def session_opened(self, session: S, detail: str, t_ms: float | None = None) -> None:
        if self.on_session is not None:
            self.on_session(session)
        self.publish(self.ev(SessionOpened, t_ms=t_ms, session=session.number, detail=detail))

    # -- the run's life; subclasses supply check, opening, run_turn, interrupted_turn

    def check(self, turns: list[Turn]) -> None:  # noqa: B027
        """Refuse the run before anything is recorded (e.g. unreadable audio). Runs in a worker
        thread (`checked`)."""

    async def checked(self, turns: list[Turn]) -> None:
        """`check` in a worker thread: reading every turn's WAV (75 of them: 230 ms the first time
        in a process) must not hold the loop that other runs of the process pace their audio on."""
        await asyncio.to_thread(self.check, turns)

    @abstractmethod
    async def opening(self) -> None:
        """Open the first session (and settle its greeting)."""

    @abstractmethod
    async def run_turn(self, turn: Turn) -> TurnResult:
        """Play one turn to its end, retrying and rotating as needed; publishes its `turn_ended`."""

    @abstractmethod
    def interrupted_turn(self, turn: Turn) -> None:
        """Record the turn under way when the run is cancelled."""

    def failed_turn(self, turn: Turn, error: str, status: TurnStatus = "error") -> TurnResult | None:
        """Record the turn under way when the run fails (`failed_status`: `lost_pace` when our
        machine lost pace, `infra_error` when the run gave up on an infrastructure failure: facts
        about the machine or the service, never a verdict on the model); its record, if any."""
        return None

    def flush_conversation(self, turn_index: int | None) -> None:  # noqa: B027
        """Publish the conversation audio recorded so far (audio runs)."""

    async def execute(self, turns: list[Turn]) -> None:
        """Check, record the start (or the resumption), then drive the run."""
        await self.checked(turns)
        if self.seed is not None and self.seed.resumed_from is not None:
            self.publish_run_resumed(turns)
        else:
            self.publish_run_started(turns)
        await self.drive(turns)

    def publish_run_resumed(self, turns: list[Turn]) -> None:
        assert self.seed is not None and self.seed.resumed_from is not None
        _, summary = self.replays.seeded()
        self.publish(
            self.ev(
                RunResumed, turn_index=None, from_turn=self.seed.resumed_from,
                turns=[t.turn_index for t in turns], replayed_turns=self.seed.turns(), replayed=summary,
            )
        )

    async def drive(self, turns: list[Turn]) -> None:
        """Start the provider, the opening, then every turn. Cancelled: the turn under way is
        recorded as interrupted; failed: named; either way the run ends with `run_ended` and
        everything already recorded stays."""
        try:
            await self.provider.start(self.config, self.benchmark)
            await self.play(turns)
            self.turn_index = None
            self.flush_conversation(None)
            if (why := unanswered_run(self.results)) is not None:
                raise RunError(why)  # failed, as below: named once, then the end
            self.bill_session()
            self.publish(self.ev(RunEnded, status="completed", reason="model ended the session" if self.ended_by_model else "",
                                 wall_time=wall_now()))
        except asyncio.CancelledError:
            self.bill_session()
            self.publish(self.ev(RunEnded, turn_index=None, status="interrupted", reason="cancelled", wall_time=wall_now()))
            await asyncio.shield(self.shutdown())
            raise
        except Exception as e:  # in the provider's start or in a turn: named once, then the end
            if not isinstance(e, RunError):
                logger.exception("run failed")
            failure = run_failure(e, self.results)
            self.publish(self.ev(ErrorEvent, where="engine", message=failure_message(failure), fatal=True))
            self.bill_session()
            self.publish(self.ev(RunEnded, turn_index=None, status="failed", reason=str(failure), wall_time=wall_now()))
            await self.shutdown()
            if failure is e:
                raise
            raise failure from e
        await self.shutdown()

    async def play(self, turns: list[Turn]) -> None:
        """The opening, then every turn (a rehydrated run plays one turn per instance). Cancelled:
        the turn under way is recorded as interrupted; failed: recorded and named (`error`)."""
        current: Turn | None = None
        try:
            await self.opening()
            for turn in turns:
                current = turn
                if self.ended_by_model:
                    self.results.append(self.ended_early(turn))
                    continue
                result = await self.run_turn(turn)
                self.results.append(result)
                if result.status == "ended_session":
                    self.ended_by_model = True
        except asyncio.CancelledError:
            if current is not None:
                self.interrupted_turn(current)
            self.flush_conversation(None)
            raise
        except Exception as e:
            if current is not None and (failed := self.failed_turn(current, failure_message(e), failed_status(e))):
                self.results.append(failed)
            self.flush_conversation(None)
            raise

    async def shutdown(self) -> None:
        if self.session is not None:
            await self.session.close()
        with contextlib.suppress(Exception):
            await self.provider.stop()
