"""One engine for every provider: paced file input → Pipecat S2S service → paced null output.

It runs a benchmark's turns in order on ONE monotonic timeline (AUDIO time, scaled by
`--speed`), answers tool calls from the turn spec, decides when a turn is over, notices a
dead or silent session, rotates to a new session with the history replayed, and reports
everything as `arena_tui.events` on the bus. Nothing else is its output: the store, the
UI and the judge are subscribers.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from loguru import logger
from pipecat.frames.frames import (
    ErrorFrame,
    Frame,
    InterimTranscriptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMRunFrame,
    MetricsFrame,
    TranscriptionFrame,
    TTSTextFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.metrics.metrics import LLMUsageMetricsData, TTFBMetricsData
from pipecat.observers.base_observer import BaseObserver, FramePushed
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
)
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.llm_service import FunctionCallParams
from pipecat.workers.runner import WorkerRunner

from arena_tui.events import (
    EMPTY_RESPONSE,
    GREETING_TURN,
    MODEL_ENDED_SESSION,
    MODEL_ENDED_SESSION_EARLY,
    AudioChunk,
    ErrorEvent,
    Interruption,
    Interval,
    Level,
    Overlap,
    Reconnected,
    Retry,
    RunEnded,
    RunEvent,
    RunStarted,
    SessionOpened,
    SessionRotated,
    SpeechBoundary,
    ToolAnswered,
    ToolCalled,
    ToolCallRecord,
    TranscriptDelta,
    TurnEnded,
    TurnResult,
    TurnStarted,
)
from benchmarks.model import Benchmark, Turn

from .base import HistoryItem, ProviderRunner, SessionSpec, get_runner
from .config import Rotation, RunConfig
from .rotation import History, rotation_due, select_replay
from .transports import PacedInput, PacedOutput, RunClock

CONTINUE_PROMPT = "Please continue our conversation."
_CONTROL_TOKEN = re.compile(r"<[A-Za-z_]*\d*>|<\|[^|>]*\|>")


def spoken_text(text: str) -> str:
    """Assistant text without control tokens."""
    return _CONTROL_TOKEN.sub("", text).strip()


def turn_status(outcome: str, ends_session: bool) -> tuple[str, str | None]:
    """(TurnResult status, sentinel) for how a turn's last attempt ended (both turn loops)."""
    if ends_session:
        return "ended_session", MODEL_ENDED_SESSION
    if outcome == "ok":
        return "ok", None
    return ("empty_response" if outcome == "empty" else "no_response"), EMPTY_RESPONSE


class RunError(Exception):
    """The run cannot start or go on (bad config, missing key, unreadable audio); names what to fix."""


# ---------------------------------------------------------------------------- per-turn state


@dataclass
class Attempt:
    """What one attempt of one turn produced; a retry starts a fresh one."""

    turn_index: int
    number: int
    started_ms: float
    resolver: Any = None
    placed: Interval | None = None
    assistant_text: str = ""
    user_transcript: str | None = None
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    pending_tools: int = 0
    responses_started: int = 0
    responses_ended: int = 0
    responses_cancelled: int = 0
    response_active: bool = False
    last_response_end_ms: float | None = None
    last_tool_ms: float | None = None  # when a tool call was last answered
    first_bot_ms: float | None = None
    last_bot_ms: float | None = None
    bot_pcm: bytearray = field(default_factory=bytearray)
    user_pcm: bytearray = field(default_factory=bytearray)
    bot_speech: list[Interval] = field(default_factory=list)
    bot_speech_open: float | None = None
    user_bounds: list[tuple[float, str]] | None = None  # VAD boundaries of the WAV, placed when it starts
    user_speech_rel: list[Interval] = field(default_factory=list)  # VAD intervals within the WAV
    provider_ttfb_ms: float | None = None
    live_overlaps: Any = None  # timeline.LiveOverlaps, set when the attempt starts
    tokens: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False
    ends_session: bool = False
    error: str | None = None

    def responded(self) -> bool:
        """A reply ended (a cancelled one does not count), or bot audio or a call came."""
        return self.responses_ended > self.responses_cancelled or self.first_bot_ms is not None or bool(self.tool_calls)

    def has_content(self) -> bool:
        """Speech, audio or a call; control tokens alone (e.g. Gemini's `<ctrl46>`) are empty."""
        return bool(spoken_text(self.assistant_text)) or self.first_bot_ms is not None or bool(self.tool_calls)


# ---------------------------------------------------------------------------- session


class _Tap(BaseObserver):
    """Sees every frame the LLM service pushes (both directions) and hands it to the run."""

    def __init__(self, run: "_Run", session: "Session") -> None:
        super().__init__()
        self.run = run
        self.session = session

    async def on_push_frame(self, data: FramePushed) -> None:
        if data.source is self.session.llm:
            self.run.on_llm_frame(self.session, data.frame, data.direction)


class SessionBase:
    """One provider session in one Pipecat pipeline (audio here, text in `text_engine`)."""

    def __init__(self, run: Any, number: int, spec: SessionSpec) -> None:
        self.run = run
        self.number = number
        self.spec = spec
        self.opened_ms = run.now()
        self.replayed_chars = sum(i.chars() for i in spec.history)
        self.history_from = len(run.history.items)  # later turns are in this session's context too
        self.llm: Any = None
        self._runner: WorkerRunner | None = None
        self._task: asyncio.Task | None = None

    def context_chars(self) -> int:
        """The conversation this session holds: what it was replayed plus the turns since
        (not the whole run's history: after a trimmed replay that would rotate every turn)."""
        return self.replayed_chars + sum(i.chars() for i in self.run.history.items[self.history_from :])

    async def close(self) -> None:
        if self._runner is not None:
            with contextlib.suppress(Exception):
                await self._runner.cancel("session closed")
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._task, timeout=10.0)


class Session(SessionBase):
    """One provider connection inside one Pipecat pipeline, with its own paced ends."""

    def __init__(self, run: "_Run", number: int, spec: SessionSpec) -> None:
        super().__init__(run, number, spec)
        self.failed: str | None = None
        self.errors: set[str] = set()
        self.input: PacedInput | None = None
        self.output: PacedOutput | None = None

    async def open(self) -> None:
        run = self.run
        self.llm = run.provider.build_service(self.spec)
        # A synchronous tool (the handler answers at once from the turn spec). Registering it
        # with cancel_on_interruption=False would make Pipecat treat it as an async tool: it
        # appends its ASYNC TOOLS text to the benchmark's prompt, Gemini declares it NON_BLOCKING
        # and Ultravox sends a placeholder result.
        self.llm.register_function(None, run.handle_tool_call, cancel_on_interruption=True)
        run.provider.observe_responses(self.llm, lambda status, why: run.on_response_done(self, status, why))
        run.provider.observe_session(self.llm, lambda cls, **kw: run.on_session_event(self, cls, **kw))
        context = LLMContext(
            [{"role": "user", "content": self.spec.kickoff}],
            run.provider.tools(self.spec.tools),
        )
        pair = LLMContextAggregatorPair(context)
        self.input = PacedInput(
            run.clock,
            sample_rate=run.rate,
            chunk_ms=run.config.chunk_ms,
            preroll_ms=run.config.preroll_ms,
            on_user_chunk=run.on_user_chunk,
        )
        self.output = PacedOutput(
            run.clock, sample_rate=run.rate, on_bot_audio=run.on_bot_audio, on_interruption=run.on_truncated
        )
        pipeline = Pipeline([self.input, pair.user(), self.llm, self.output, pair.assistant()])
        worker = PipelineWorker(
            pipeline,
            params=PipelineParams(
                audio_in_sample_rate=run.rate,
                audio_out_sample_rate=run.rate,
                enable_metrics=True,
                enable_usage_metrics=True,
            ),
            observers=[_Tap(run, self)],
            idle_timeout_secs=None,
            enable_rtvi=False,
            enable_turn_tracking=False,
        )

        @worker.event_handler("on_pipeline_error")
        async def _on_error(_worker: Any, frame: ErrorFrame) -> None:
            run.on_provider_error(self, frame)

        self._runner = WorkerRunner(handle_sigint=False)
        await self._runner.add_workers(worker)
        await worker.queue_frames([LLMRunFrame()])
        self._task = asyncio.create_task(self._runner.run(), name=f"session-{self.number}")
        started = asyncio.create_task(self.input.started.wait())
        done, _ = await asyncio.wait({started, self._task}, timeout=30.0, return_when=asyncio.FIRST_COMPLETED)
        if started not in done:
            started.cancel()
            raise RunError(f"session {self.number}: the pipeline did not start")

    def alive(self) -> bool:
        return (
            self.failed is None
            and self._task is not None
            and not self._task.done()
            and self.run.provider.is_alive(self.llm)
        )

    async def close(self) -> None:
        if self.input is not None:
            self.input.clear()
        await super().close()


# ---------------------------------------------------------------------------- the run


UNPLANNED = ("disconnect", "error", "timeout")  # rotation reasons that are failures, not policy


class RunBase:
    """What every turn loop shares: one clock, event stamping, and answering tool calls
    from the turn spec (audio engine here, text in `text_engine`)."""

    run_id: str
    bus: Any
    clock: RunClock
    config: RunConfig
    benchmark: Benchmark
    provider: ProviderRunner
    session: Any
    history: History
    rotation: Rotation
    reconnects: int
    failing: int
    turn_index: int | None
    attempt: Any
    ended_by_model: bool

    def publish(self, event: RunEvent) -> None:
        self.bus.publish(event)

    def now(self) -> float:
        return self.clock.t_ms()

    def ev(self, cls: type, turn_index: int | None = ..., **kw: Any) -> RunEvent:  # type: ignore[assignment]
        ti = self.turn_index if turn_index is ... else turn_index
        t = kw.pop("t_ms", None)
        return cls(run_id=self.run_id, t_ms=self.now() if t is None else t, turn_index=ti, **kw)

    async def handle_tool_call(self, params: FunctionCallParams) -> None:
        """Answer with THIS call's scripted payload (the reference sent the previous one)."""
        from .tools import Resolution, not_available_payload

        a = self.attempt
        args = dict(params.arguments or {})
        t = self.now()
        if a is not None:
            a.pending_tools += 1
        try:
            if a is None or a.resolver is None:
                res = Resolution(status="not_available", response=not_available_payload())
            else:
                res = a.resolver.resolve(params.function_name, args)
            record = res.record(params.tool_call_id, params.function_name, args, t_ms=t)
            self.publish(
                self.ev(ToolCalled, t_ms=t, call_id=record.call_id, name=record.name, args=args, is_duplicate=record.is_duplicate)
            )
            if a is not None:
                a.tool_calls.append(record)
                if res.ends_session:
                    a.ends_session = True
            await params.result_callback(res.response)
            self.publish(
                self.ev(ToolAnswered, call_id=record.call_id, name=record.name, status=record.status, response=res.response)
            )
        finally:
            if a is not None:
                a.pending_tools -= 1
                self.tool_settled(a)

    def tool_settled(self, a: Any) -> None:  # noqa: B027
        """A call of attempt `a` has been answered (or failed)."""

    # -- the run's life (both loops); subclasses supply run_turn, ended_early, interrupted_turn

    def flush_conversation(self, turn_index: int | None) -> None:  # noqa: B027
        """Publish the conversation audio recorded so far (audio runs)."""

    def failed_turn(self, turn: Turn, error: str) -> None:  # noqa: B027
        """Record the turn under way when the run fails (text runs)."""

    async def drive(self, turns: list[Turn], opening: Callable[[], Awaitable[None]]) -> None:
        """Start the provider, `opening` (first session, greeting), then every turn. Cancelled:
        the turn under way is recorded as interrupted; failed: named; either way the run ends
        with `run_ended` and everything already recorded stays."""
        current: Turn | None = None
        try:
            await self.provider.start(self.config, self.benchmark)
            await opening()
            for turn in turns:
                current = turn
                if self.ended_by_model:
                    self.ended_early(turn)
                    continue
                result = await self.run_turn(turn)
                if result.status == "ended_session":
                    self.ended_by_model = True
            current = None
            self.turn_index = None
            self.flush_conversation(None)
            self.publish(self.ev(RunEnded, status="completed", reason="model ended the session" if self.ended_by_model else ""))
        except asyncio.CancelledError:
            if current is not None:
                self.interrupted_turn(current)
            self.flush_conversation(None)
            self.publish(self.ev(RunEnded, turn_index=None, status="interrupted", reason="cancelled"))
            await asyncio.shield(self.shutdown())
            raise
        except Exception as e:
            message = str(e) if isinstance(e, RunError) else f"{type(e).__name__}: {e}"
            if not isinstance(e, RunError):
                logger.exception("run failed")
            if current is not None:
                self.failed_turn(current, message)
            self.publish(self.ev(ErrorEvent, where="engine", message=message, fatal=True))
            self.flush_conversation(None)
            self.publish(self.ev(RunEnded, turn_index=None, status="failed", reason=str(e)))
            await self.shutdown()
            raise
        await self.shutdown()

    async def replace_session(
        self, reason: str, why: str, open_new: Callable[[list[HistoryItem], str], Awaitable[Any]]
    ) -> Any:
        """Close the session, open a new one with the history replayed (cut to the budget, drops
        announced), and report the rotation. Unplanned reasons count towards giving up."""
        old = self.session
        from_n = old.number if old else 0
        if old is not None:
            await old.close()
        self.reconnects += 1
        if reason in UNPLANNED:
            self.failing += 1  # consecutive unplanned reconnects without a finished turn
            if self.failing > self.rotation.max_reconnects:
                raise RunError(f"turn {self.turn_index}: gave up after {self.failing - 1} reconnects in a row ({reason}: {why})")
        items, summary = select_replay(self.history.items, self.rotation.history_budget_chars, self.provider.replay_strategy())
        if summary.dropped_messages:
            summary = summary.model_copy(
                update={"note": f"{summary.dropped_messages} older message(s) left out: over the replay budget of "
                        f"{self.rotation.history_budget_chars:,} chars"}
            )
            self.publish(self.ev(ErrorEvent, where="engine", message=f"rotation: {summary.note}", fatal=False))
        session = await open_new(items, f"rotation ({reason})")
        self.publish(self.ev(SessionRotated, reason=reason, from_session=from_n, to_session=session.number, replayed=summary))
        self.publish(self.ev(Reconnected, session=session.number, reason=reason, attempt=self.reconnects))
        return session

    async def shutdown(self) -> None:
        if self.session is not None:
            await self.session.close()
        with contextlib.suppress(Exception):
            await self.provider.stop()


class _Run(RunBase):
    def __init__(self, benchmark: Benchmark, config: RunConfig, bus: Any, run_id: str, provider: ProviderRunner) -> None:
        from . import timeline as tl

        self.tl = tl
        self.benchmark = benchmark
        self.config = config
        self.bus = bus
        self.run_id = run_id
        self.provider = provider
        self.rate = config.sample_rate
        self.clock = RunClock(config.speed)
        self.recorder = tl.ConversationRecorder(self.rate)
        self.user_meter = tl.LevelMeter("user", block_ms=config.level_block_ms, sample_rate=self.rate)
        self.bot_meter = tl.LevelMeter("bot", block_ms=config.level_block_ms, sample_rate=self.rate)
        self.bot_detector = tl.SpeechDetector(self.rate)
        self.history = History()
        self.rotation = provider.rotation_policy(config, benchmark.system_prompt)
        self.session: Session | None = None
        self.sessions = 0
        self.reconnects = 0
        self.failing = 0
        self.on_session: Callable[[Session], None] | None = None
        self.attempt: Attempt | None = None
        self.turn_index: int | None = None
        self.ended_by_model = False
        self._speech_cache: dict[int, list[Interval]] = {}
        self._audio_cache: dict[int, bytes] = {}

    # -- callbacks from the transports (called at PLAYED / scheduled time)

    def on_user_chunk(self, pcm: bytes, t_ms: float) -> None:
        for t, rms, peak in self.user_meter.feed(pcm, t_ms):
            self.publish(self.ev(Level, t_ms=t, source="user", rms_dbfs=rms, peak_dbfs=peak, block_ms=self.config.level_block_ms))
        self.recorder.add("user", pcm, t_ms)
        a = self.attempt
        if a is not None:
            a.user_pcm.extend(pcm)
            if a.user_bounds is None:  # the clip starts here: place its speech on the timeline
                a.user_bounds = sorted(
                    [(t_ms + i.start_ms, "user_speech_started") for i in a.user_speech_rel]
                    + [(t_ms + i.end_ms, "user_speech_stopped") for i in a.user_speech_rel]
                )
            self._emit_user_bounds(a, t_ms + len(pcm) / 2 / self.rate * 1000.0)

    def _emit_user_bounds(self, a: Attempt, until_ms: float) -> None:
        while a.user_bounds and a.user_bounds[0][0] <= until_ms:
            t, kind = a.user_bounds.pop(0)
            self.publish(self.ev(SpeechBoundary, t_ms=t, kind=kind, origin="vad"))
            self._overlaps(a, "user", kind == "user_speech_started", t)

    def _overlaps(self, a: Attempt | None, who: str, started: bool | None, t: float) -> None:
        """Feed a speech boundary to the live overlap tracker and report what became certain
        (started=None closes both sides: the turn is over)."""
        if a is None or a.live_overlaps is None:
            return
        found = a.live_overlaps.close(t) if started is None else a.live_overlaps.boundary(who, started, t)
        for ov, cause in found:
            self.publish(self.ev(Interruption, t_ms=ov.start_ms, cause=cause, detail=f"{ov.duration_ms:.0f} ms overlap"))
            self.publish(self.ev(Overlap, t_ms=ov.end_ms, start_ms=ov.start_ms, end_ms=ov.end_ms))
            a.interrupted = True

    def on_bot_audio(self, pcm: bytes, t_ms: float) -> None:
        a = self.attempt
        for t, rms, peak in self.bot_meter.feed(pcm, t_ms):
            self.publish(self.ev(Level, t_ms=t, source="bot", rms_dbfs=rms, peak_dbfs=peak, block_ms=self.config.level_block_ms))
        self.recorder.add("bot", pcm, t_ms)
        dur = len(pcm) / 2 / self.rate * 1000.0
        for kind, t in self.bot_detector.feed(pcm, t_ms):
            self._bot_boundary(kind, t)
        if a is not None:
            if a.first_bot_ms is None:
                a.first_bot_ms = t_ms
            a.last_bot_ms = t_ms + dur
            a.bot_pcm.extend(pcm)

    def _bot_boundary(self, kind: str, t: float) -> None:
        a = self.attempt
        if kind == "start":
            self.publish(self.ev(SpeechBoundary, t_ms=t, kind="bot_speech_started"))
            if a is not None:
                a.bot_speech_open = t
        else:
            self.publish(self.ev(SpeechBoundary, t_ms=t, kind="bot_speech_stopped"))
            if a is not None and a.bot_speech_open is not None:
                a.bot_speech.append(Interval(start_ms=a.bot_speech_open, end_ms=t))
                a.bot_speech_open = None
        self._overlaps(a, "bot", kind == "start", t)

    def on_truncated(self, t_ms: float, pending_ms: float) -> None:
        self.publish(
            self.ev(Interruption, t_ms=t_ms, cause="bot_truncated", detail=f"{pending_ms:.0f} ms of bot audio not played")
        )
        if self.attempt is not None:
            self.attempt.interrupted = True

    # -- frames from the LLM service

    def on_llm_frame(self, session: Session, frame: Frame, direction: FrameDirection) -> None:
        if session is not self.session:
            return
        a = self.attempt
        if isinstance(frame, TTSTextFrame):
            if frame.text:
                self.publish(self.ev(TranscriptDelta, role="assistant", text=frame.text))
                if a is not None:
                    a.assistant_text += frame.text
        elif isinstance(frame, TranscriptionFrame) and not isinstance(frame, InterimTranscriptionFrame):
            self.publish(self.ev(TranscriptDelta, role="user", text=frame.text, final=True))
            if a is not None:
                a.user_transcript = ((a.user_transcript or "") + " " + frame.text).strip()
        elif isinstance(frame, LLMFullResponseStartFrame):
            if a is not None:
                a.response_active = True
                a.responses_started += 1
        elif isinstance(frame, LLMFullResponseEndFrame):
            if a is not None:
                a.response_active = False
                a.responses_ended += 1
                a.last_response_end_ms = self.now()
        elif isinstance(frame, MetricsFrame):
            for d in frame.data:
                if isinstance(d, TTFBMetricsData) and a is not None and a.provider_ttfb_ms is None and d.value > 0:
                    ttfb = d.value * 1000.0 * self.config.speed
                    # Pipecat's timer can span a silent attempt; a figure longer than this attempt is not this turn's.
                    if ttfb <= self.now() - a.started_ms:
                        a.provider_ttfb_ms = ttfb
                elif isinstance(d, LLMUsageMetricsData) and a is not None:
                    u = d.value
                    for key, val in (
                        ("input_tokens", u.prompt_tokens),
                        ("output_tokens", u.completion_tokens),
                        ("cached_input_tokens", u.cache_read_input_tokens),
                    ):
                        if val:
                            a.tokens[key] = a.tokens.get(key, 0) + int(val)

    def on_response_done(self, session: Session, status: str, why: str) -> None:
        """A provider reply that ended cut short (e.g. incomplete: max_output_tokens) is a truncation."""
        if session is not self.session or status in ("completed", "in_progress"):
            return
        if status == "cancelled":
            if self.attempt is not None:
                self.attempt.responses_cancelled += 1
            return
        self.publish(self.ev(Interruption, cause="bot_truncated", detail=f"provider ended the reply {status}: {why}".strip()))
        if self.attempt is not None:
            self.attempt.interrupted = True

    def on_session_event(self, session: Session, cls: type, /, **kw: Any) -> None:
        """An event the runner saw inside its service (only the current session's count)."""
        if session is self.session:
            self.publish(self.ev(cls, **kw))

    def on_provider_error(self, session: Session, frame: ErrorFrame) -> None:
        msg = str(frame.error)
        if msg in session.errors:  # a dead socket fails every send: report it once
            return
        session.errors.add(msg)
        self.publish(self.ev(ErrorEvent, where="provider", message=msg, fatal=bool(frame.fatal)))
        if session is self.session:
            session.failed = msg
            if self.attempt is not None:
                self.attempt.error = msg

    # -- audio of the benchmark

    def user_audio(self, turn: Turn) -> bytes:
        if turn.turn_index not in self._audio_cache:
            from arena_tui import audio

            path = self.benchmark.audio_path(turn)
            if path is None or not path.exists():
                raise RunError(f"{self.benchmark.name} turn {turn.turn_index}: audio file {path} not found")
            try:
                pcm = audio.load_pcm16_bytes(path, self.rate, benchmark=self.benchmark.name, turn=turn.turn_index)
            except audio.AudioError as e:
                raise RunError(str(e)) from None
            self._audio_cache[turn.turn_index] = pcm
        return self._audio_cache[turn.turn_index]

    def user_speech(self, turn: Turn, pcm: bytes) -> list[Interval]:
        if turn.turn_index not in self._speech_cache:
            self._speech_cache[turn.turn_index] = list(
                self.tl.speech_intervals(pcm, self.rate, offset_ms=0, method=self.config.vad_method)
            )
        return self._speech_cache[turn.turn_index]

    # -- sessions

    def spec(self, kickoff: str, history: list | None = None) -> SessionSpec:
        return SessionSpec(
            model=self.provider.resolve_model(self.config.model),
            system_prompt=self.benchmark.system_prompt,
            tools=self.benchmark.tools,
            history=history or [],
            kickoff=kickoff,
            sample_rate=self.rate,
            config=self.config,
        )

    async def open_session(self, kickoff: str, history: list | None = None, detail: str = "") -> Session:
        self.sessions += 1
        session = Session(self, self.sessions, self.spec(kickoff, history))
        self.session = session
        await session.open()
        if self.on_session is not None:
            self.on_session(session)
        # t_ms of session_opened is where the session's input audio starts (its audio time 0).
        assert session.input is not None and session.input.start_ms is not None
        self.publish(self.ev(SessionOpened, t_ms=session.input.start_ms, session=session.number, detail=detail))
        return session

    async def rotate(self, reason: str) -> None:
        """Replace the current session, replaying the history, then settle its kickoff response."""
        old = self.session
        why = old.failed if old is not None and old.failed else "connection closed"
        await self.replace_session(reason, why, lambda items, detail: self.open_session(CONTINUE_PROMPT, items, detail=detail))
        await self.handshake(self.turn_index)

    async def ensure_session(self) -> None:
        s = self.session
        if s is None:
            return
        if not s.alive():
            await self.rotate("error" if s.failed else "disconnect")
            return
        reason = rotation_due(self.rotation, self.now() - s.opened_ms, len(self.benchmark.system_prompt) + s.context_chars())
        if reason:
            await self.rotate(reason)

    async def handshake(self, turn_index: int | None) -> Attempt:
        """Wait out a session's kickoff response (the greeting, or the post-rotation reply)."""
        g = self.config.greeting
        prev = self.attempt
        a = Attempt(turn_index=turn_index if turn_index is not None else GREETING_TURN, number=0, started_ms=self.now())
        self.attempt = a
        try:
            floor = self.config.watchdog.min_wall_ms * self.config.speed  # provider compute is wall-clock bound
            start_by = self.now() + max(g.start_timeout_ms, floor)
            finish_by = self.now() + max(g.finish_timeout_ms, floor)
            while True:
                await self.clock.sleep(20)
                now = self.now()
                self._advance_detector(now)
                s = self.session
                if s is None or not s.alive():
                    break
                if not a.responded() and not a.response_active and now >= start_by:
                    break
                if now >= finish_by:
                    break
                if a.responded() and self._quiet(a, s, now, since=a.started_ms):
                    await self.clock.sleep(self.config.end_of_turn.drain_ms)
                    break
            self._close_bot_speech(a)
        finally:
            self.attempt = prev
        return a

    # -- turns

    def _quiet(self, a: Attempt, s: Session, now: float, since: float) -> bool:
        """The end-of-turn rule: transcript flushed and `quiet_ms` with no bot audio."""
        if a.response_active or a.pending_tools > 0 or (s.output is not None and s.output.busy()):
            return False
        last = max(since, a.last_bot_ms or 0.0, a.last_response_end_ms or 0.0, a.last_tool_ms or 0.0)
        return now - last >= self.config.end_of_turn.quiet_ms

    def tool_settled(self, a: Attempt) -> None:
        # the answer after a tool result is still to come (some providers end no response first)
        a.last_tool_ms = self.now()

    def _advance_detector(self, now: float) -> None:
        s = self.session
        if s is not None and s.output is not None and s.output.busy():
            return
        for kind, t in self.bot_detector.advance(now):
            self._bot_boundary(kind, t)

    def _close_bot_speech(self, a: Attempt) -> None:
        for kind, t in self.bot_detector.flush(self.now()):
            self._bot_boundary(kind, t)
        if a.bot_speech_open is not None:
            a.bot_speech.append(Interval(start_ms=a.bot_speech_open, end_ms=self.now()))
            a.bot_speech_open = None

    async def run_attempt(self, turn: Turn, number: int, pcm: bytes) -> tuple[Attempt, str]:
        """Play the turn's audio once and wait for the end of the turn; returns (attempt, outcome)."""
        from .tools import ToolResolver

        s = self.session
        assert s is not None and s.input is not None
        a = Attempt(
            turn_index=turn.turn_index,
            number=number,
            started_ms=self.now(),
            resolver=ToolResolver(turn),
            live_overlaps=self.tl.LiveOverlaps(),
        )
        a.user_speech_rel = self.user_speech(turn, pcm)
        self.attempt = a
        dur_ms = len(pcm) / 2 / self.rate * 1000.0
        self.publish(self.ev(TurnStarted, attempt=number, input_text=turn.input, user_audio_ms=dur_ms))
        fut = s.input.play(pcm, self.turn_marks(a.user_speech_rel, dur_ms))
        deadline: float | None = None
        cfg = self.config
        while True:
            await self.clock.sleep(20)
            now = self.now()
            self._advance_detector(now)
            if not s.alive():
                return a, "dead"
            if a.placed is None and fut.done() and not fut.cancelled():
                a.placed = fut.result()
                # At high speed, keep a floor in WALL time: a provider's own compute does not speed up.
                extra = max(cfg.watchdog.extra_ms, cfg.watchdog.min_wall_ms * cfg.speed)
                deadline = a.placed.start_ms + dur_ms + extra
            if a.placed is None:
                continue
            out_active = a.response_active or a.pending_tools > 0 or (s.output is not None and s.output.busy())
            if out_active and deadline is not None:
                deadline = max(deadline, now + cfg.end_of_turn.quiet_ms)
            if a.responded() and self._quiet(a, s, now, since=a.placed.end_ms):
                await self.clock.sleep(cfg.end_of_turn.drain_ms)
                self._close_bot_speech(a)
                return a, ("ok" if a.has_content() else "empty")
            if deadline is not None and now >= deadline and not out_active:
                self._close_bot_speech(a)
                return a, ("empty" if a.responded() else "no_response")

    def turn_marks(self, speech: list[Interval], dur_ms: float) -> list:
        """User-speaking brackets around the clip's speech, for runners that take client-side turns."""
        if not self.provider.turn_frames:
            return []
        start = speech[0].start_ms if speech else 0.0
        stop = speech[-1].end_ms if speech else dur_ms
        return [(start, UserStartedSpeakingFrame), (stop, UserStoppedSpeakingFrame)]

    async def run_turn(self, turn: Turn) -> TurnResult:
        self.turn_index = turn.turn_index
        pcm = self.user_audio(turn)
        retries = 0
        reconnects_before = self.reconnects
        outcome = "no_response"
        a: Attempt | None = None
        wd = self.config.watchdog
        for number in range(wd.max_retries + 1):
            await self.ensure_session()
            if number > 0:
                retries = number
                self.publish(self.ev(Retry, attempt=number, reason=outcome))
                await self.clock.sleep(wd.backoff_ms)
                await self.ensure_session()
            a, outcome = await self.run_attempt(turn, number, pcm)
            if outcome == "dead":
                # Never replay the turn into a dead session: rotate first, then retry.
                await self.ensure_session()
                outcome = "no_response" if not a.has_content() else "disconnect"
                continue
            if outcome == "ok":
                self.failing = 0
                break
        assert a is not None
        return self.finish_turn(turn, a, outcome, retries, self.reconnects - reconnects_before, pcm)

    def finish_turn(
        self, turn: Turn, a: Attempt, outcome: str, retries: int, reconnects: int, pcm: bytes
    ) -> TurnResult:
        status, sentinel = turn_status(outcome, a.ends_session)
        assistant_text = EMPTY_RESPONSE if sentinel == EMPTY_RESPONSE else a.assistant_text.strip()
        user_speech: list[Interval] = []
        latencies = None
        overlap_ms = 0.0
        if a.placed is not None:
            off = a.placed.start_ms
            user_speech = [Interval(start_ms=i.start_ms + off, end_ms=i.end_ms + off) for i in self.user_speech(turn, pcm)]
            m = self.tl.measure_turn(a.placed, user_speech, a.first_bot_ms, a.bot_speech, a.provider_ttfb_ms)
            latencies = m.latencies
            overlap_ms = m.overlap_ms
            self._emit_user_bounds(a, float("inf"))
            self._overlaps(a, "", None, self.now())  # the rest of the live report (same intervals as m.overlaps)
        result = TurnResult(
            turn_index=turn.turn_index,
            status=status,
            user_text=turn.input,
            user_transcript=a.user_transcript,
            assistant_text=assistant_text,
            tool_calls=a.tool_calls,
            user_audio=a.placed,
            user_speech=user_speech,
            bot_speech=a.bot_speech,
            overlap_ms=overlap_ms,
            interrupted=a.interrupted,
            no_audio=bool(spoken_text(a.assistant_text)) and a.first_bot_ms is None,
            retries=retries,
            reconnects=reconnects,
            session=self.session.number if self.session else 0,
            tokens=a.tokens,
            sentinel=sentinel,
            error=a.error,
            **({"latencies": latencies} if latencies is not None else {}),
        )
        self.publish_audio(turn.turn_index, a)
        self.publish(self.ev(TurnEnded, result=result))
        if status != "no_response" and status != "empty_response":
            self.history.add_turn(turn.turn_index, turn.input, a.assistant_text.strip(), a.tool_calls)
        else:
            self.history.add_turn(turn.turn_index, turn.input, "", [])
        return result

    def finish_greeting(self, a: Attempt, prompt: str) -> None:
        """The greeting is not a benchmark turn (never judged), but it has a reply, audio and an end."""
        text = spoken_text(a.assistant_text)
        result = TurnResult(
            turn_index=GREETING_TURN,
            status="ok" if a.has_content() else "no_response",
            user_text=prompt,
            assistant_text=text,
            bot_speech=a.bot_speech,
            session=self.session.number if self.session else 0,
            tokens=a.tokens,
            error=a.error,
        )
        self.publish_audio(GREETING_TURN, a)
        self.publish(self.ev(TurnEnded, turn_index=GREETING_TURN, result=result))

    def publish_audio(self, turn_index: int, a: Attempt) -> None:
        if a.user_pcm:
            start = a.placed.start_ms if a.placed else a.started_ms
            self.publish(self.ev(AudioChunk, track="user", sample_rate=self.rate, start_ms=start, pcm=bytes(a.user_pcm)))
        if a.bot_pcm:
            self.publish(
                self.ev(AudioChunk, track="bot", sample_rate=self.rate, start_ms=a.first_bot_ms or 0.0, pcm=bytes(a.bot_pcm))
            )
        self.flush_conversation(turn_index)

    def flush_conversation(self, turn_index: int | None) -> None:
        start, stereo = self.recorder.take_slice(self.now())
        if stereo:
            self.publish(
                self.ev(AudioChunk, turn_index=turn_index, track="conversation", sample_rate=self.rate, channels=2, start_ms=start, pcm=stereo)
            )

    def ended_early(self, turn: Turn) -> TurnResult:
        result = TurnResult(
            turn_index=turn.turn_index,
            status="ended_early",
            user_text=turn.input,
            assistant_text=MODEL_ENDED_SESSION_EARLY,
            sentinel=MODEL_ENDED_SESSION_EARLY,
        )
        self.publish(self.ev(TurnEnded, turn_index=turn.turn_index, result=result))
        return result

    def interrupted_turn(self, turn: Turn) -> None:
        a = self.attempt
        if a is None or a.turn_index != turn.turn_index:
            return
        self._close_bot_speech(a)
        self.publish_audio(turn.turn_index, a)
        result = TurnResult(
            turn_index=turn.turn_index,
            status="interrupted",
            user_text=turn.input,
            user_transcript=a.user_transcript,
            assistant_text=a.assistant_text.strip(),
            tool_calls=a.tool_calls,
            user_audio=a.placed,
            bot_speech=a.bot_speech,
            interrupted=a.interrupted,
            session=self.session.number if self.session else 0,
        )
        self.publish(self.ev(TurnEnded, turn_index=turn.turn_index, result=result))


def select_turns(benchmark: Benchmark, turns: list[int] | None) -> list[Turn]:
    if turns is None:
        return list(benchmark.turns)
    known = {t.turn_index for t in benchmark.turns}
    missing = [i for i in turns if i not in known]
    if missing:
        raise RunError(
            f"{benchmark.name}: no turn(s) {', '.join(map(str, missing))} (turns are "
            f"{min(known)}-{max(known)})"
        )
    return [t for t in benchmark.turns if t.turn_index in set(turns)]


async def run_benchmark(
    benchmark: Benchmark,
    config: RunConfig,
    bus: Any,
    run_id: str | None = None,
    *,
    on_session: Callable[[Session], None] | None = None,
    provider: ProviderRunner | None = None,
) -> str:
    """Run `benchmark` under `config`, publishing every event on `bus`; returns the run id.

    Cancelling the task stops the run cleanly: the turn under way is recorded as
    `interrupted`, its audio is flushed, and `run_ended(status="interrupted")` is published.
    `on_session` sees each session as it opens (instrumentation: scripts/bench_pacing.py).
    `provider` is a runner instance to use instead of the one registered for `config.model`
    (tests keep it to inspect its fake).
    """
    run_id = run_id or uuid.uuid4().hex
    if provider is None:
        try:
            provider = get_runner(config.model)
        except ValueError as e:
            raise RunError(str(e)) from None
    problems = provider.preflight(config)
    if problems:
        raise RunError("; ".join(problems))
    try:
        config.check_benchmark(benchmark)
    except ValueError as e:
        raise RunError(str(e)) from None
    if getattr(provider, "mode", "audio") == "text":
        from .text_engine import run_text_benchmark

        return await run_text_benchmark(benchmark, config, bus, run_id, provider)
    turns = select_turns(benchmark, config.turns)
    run = _Run(benchmark, config, bus, run_id, provider)
    run.on_session = on_session
    for t in turns:  # unreadable audio is an error before anything starts
        run.user_audio(t)
    run.publish(
        RunStarted(
            run_id=run_id,
            t_ms=0.0,
            benchmark=benchmark.name,
            model=config.model,
            provider=provider.name,
            simulator=provider.simulated or config.fake,
            turn_indices=[t.turn_index for t in turns],
            config={**config.public(), "labels": {"provider_ttfb_ms": provider.provider_ttfb_label()}},
        )
    )

    async def opening() -> None:
        await run.open_session(config.greeting.prompt if config.greeting.enabled else CONTINUE_PROMPT, detail="initial")
        run.turn_index = GREETING_TURN
        run.publish(run.ev(TurnStarted, attempt=0, input_text=config.greeting.prompt))
        run.finish_greeting(await run.handshake(GREETING_TURN), config.greeting.prompt)

    await run.drive(turns, opening)
    return run_id
