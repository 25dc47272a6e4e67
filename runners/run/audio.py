"""The audio turn loop: paced file input → the provider's Pipecat session → paced null output.

It runs a benchmark's turns in order on ONE monotonic timeline (AUDIO time, scaled by
`--speed`), decides when a turn is over, notices a dead or silent session, rotates to a new
session with the history replayed, and measures levels, speech, latency and overlap on our
own clock. The run life (tools, events, history, rotation bookkeeping) is `base.RunBase`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pipecat.frames.frames import (
    ErrorFrame,
    Frame,
    InterimTranscriptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    MetricsFrame,
    TranscriptionFrame,
    TTSTextFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.metrics.metrics import LLMUsageMetricsData, TTFBMetricsData
from pipecat.processors.frame_processor import FrameDirection

from arena_tui.spine import audio
from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import (
    EMPTY_RESPONSE,
    GREETING_TURN,
    AudioChunk,
    ErrorEvent,
    Interruption,
    Interval,
    Level,
    Overlap,
    Retry,
    SpeechBoundary,
    Waiting,
    TranscriptDelta,
    TurnEnded,
    TurnResult,
    TurnStarted,
)
from arena_tui.spine.benchmark import Benchmark, Turn

from ..base import HistoryItem, ProviderRunner, RunError
from ..config import RunConfig
from ..rotation import rotation_due
from ..timeline import (
    ConversationRecorder,
    LevelMeter,
    LiveOverlaps,
    SpeechDetector,
    measure_turn,
    speech_intervals,
)
from ..tools import ToolResolver
from ..transports import RunClock
from .base import CONTINUE_PROMPT, AttemptBase, RunBase, Seed, spoken_text, turn_status
from .session import Session


@dataclass
class Attempt(AttemptBase):
    """What one attempt of one audio turn produced (`AttemptBase` plus its audio and timeline)."""

    placed: Interval | None = None
    user_transcript: str | None = None
    responses_cancelled: int = 0
    last_response_end_ms: float | None = None
    last_tool_ms: float | None = None  # when a tool call was last answered
    reply_due: str | None = None  # a tool was answered and the model has not replied since (the tool's name)
    waiting_for: str | None = None  # what the last `waiting` event announced (one event per wait)
    first_bot_ms: float | None = None
    last_bot_ms: float | None = None
    bot_pcm: bytearray = field(default_factory=bytearray)
    user_pcm: bytearray = field(default_factory=bytearray)
    bot_speech: list[Interval] = field(default_factory=list)
    bot_speech_open: float | None = None
    user_bounds: list[tuple[float, str]] | None = None  # VAD boundaries of the WAV, placed when it starts
    user_speech_rel: list[Interval] = field(default_factory=list)  # VAD intervals within the WAV
    provider_ttfb_ms: float | None = None
    live_overlaps: LiveOverlaps | None = None  # set when the attempt starts
    interrupted: bool = False

    def responded(self) -> bool:
        """A reply ended (a cancelled one does not count), or bot audio or a call came."""
        return self.responses_ended > self.responses_cancelled or self.first_bot_ms is not None or bool(self.tool_calls)

    def replied(self) -> None:
        """Something of a reply came (text, audio, a new response): nothing is due any more."""
        self.reply_due = None
        self.waiting_for = None

    def has_content(self) -> bool:
        """Speech, audio or a call; control tokens alone (e.g. Gemini's `<ctrl46>`) are empty."""
        return bool(spoken_text(self.assistant_text)) or self.first_bot_ms is not None or bool(self.tool_calls)


class AudioRun(RunBase[Session, Attempt]):
    """The audio turn loop: each turn's WAV paced into the session, the reply played out on the same clock."""

    def __init__(
        self,
        benchmark: Benchmark,
        config: RunConfig,
        bus: EventBus,
        run_id: str,
        provider: ProviderRunner,
        on_session: Callable[[Session], None] | None = None,
        seed: Seed | None = None,
        numbers: Iterator[int] | None = None,
    ) -> None:
        start_ms = seed.start_ms if seed is not None else 0.0
        super().__init__(
            benchmark, config, bus, run_id, provider, RunClock(config.speed, start_ms), on_session, seed, numbers
        )
        self.rate = config.sample_rate
        self.recorder = ConversationRecorder(self.rate, start_ms=start_ms)
        # sessions side by side (rehydrated turns at once) make no one conversation track
        self.conversation = not (config.mode == "rehydrated" and config.parallel > 1)
        self.user_meter = LevelMeter("user", block_ms=config.level_block_ms, sample_rate=self.rate)
        self.bot_meter = LevelMeter("bot", block_ms=config.level_block_ms, sample_rate=self.rate)
        self.bot_detector = SpeechDetector(self.rate)
        self._speech_cache: dict[int, list[Interval]] = {}
        self._audio_cache: dict[int, bytes] = {}

    # -- the run's life

    def check(self, turns: list[Turn]) -> None:
        for t in turns:  # unreadable audio is an error before anything starts
            self.user_audio(t)

    async def opening(self) -> None:
        g = self.config.greeting
        if self.seed is not None:  # resumed / rehydrated: the history replayed, no greeting turn
            items, _ = self.seeded_replay()
            kickoff = CONTINUE_PROMPT if items or not g.enabled else g.prompt
            await self.open_session(kickoff, items, detail=self.seed_detail())
            await self.handshake(None)
            return
        await self.open_session(g.prompt if g.enabled else CONTINUE_PROMPT, detail="initial")
        self.turn_index = GREETING_TURN
        self.publish(self.ev(TurnStarted, attempt=0, input_text=g.prompt))
        self.finish_greeting(await self.handshake(GREETING_TURN), g.prompt)

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
            a.replied()
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
                    a.replied()
        elif isinstance(frame, TranscriptionFrame) and not isinstance(frame, InterimTranscriptionFrame):
            self.publish(self.ev(TranscriptDelta, role="user", text=frame.text, final=True))
            if a is not None:
                a.user_transcript = ((a.user_transcript or "") + " " + frame.text).strip()
        elif isinstance(frame, LLMFullResponseStartFrame):
            if a is not None:
                a.response_active = True
                a.responses_started += 1
                a.replied()
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
                    a.count_usage(d)

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
                speech_intervals(pcm, self.rate, offset_ms=0, method=self.config.vad_method)
            )
        return self._speech_cache[turn.turn_index]

    # -- sessions

    async def open_session(self, kickoff: str, history: list[HistoryItem] | None = None, detail: str = "") -> Session:
        session = Session(self, self.next_session_number(), self.spec(kickoff, history))
        self.session = session
        await session.open()
        # t_ms of session_opened is where the session's input audio starts (its audio time 0).
        assert session.input is not None and session.input.start_ms is not None
        self.session_opened(session, detail, t_ms=session.input.start_ms)
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
        """The end-of-turn rule: transcript flushed and `quiet_ms` with no bot audio, and no reply
        still due after a tool answer (a model answers a tool result: that reply belongs to this
        turn however long it takes, up to the watchdog; a call that ends the session owes none)."""
        if a.response_active or a.pending_tools > 0 or (s.output is not None and s.output.busy()):
            return False
        if a.reply_due is not None and not a.ends_session:
            return False
        last = max(since, a.last_bot_ms or 0.0, a.last_response_end_ms or 0.0, a.last_tool_ms or 0.0)
        return now - last >= self.config.end_of_turn.quiet_ms

    def tool_settled(self, a: Attempt) -> None:
        # the answer after a tool result is still to come (some providers end no response first)
        a.last_tool_ms = self.now()
        if a.pending_tools == 0 and a.tool_calls:
            a.reply_due = a.tool_calls[-1].name

    def announce_wait(self, a: Attempt, what: str, deadline: float) -> None:
        """Say once per wait what the engine is waiting on and when it gives up (`waiting`)."""
        if a.waiting_for != what:
            a.waiting_for = what
            self.publish(self.ev(Waiting, what=what, deadline_t_ms=deadline))

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
        s = self.session
        assert s is not None and s.input is not None
        a = Attempt(
            turn_index=turn.turn_index,
            number=number,
            started_ms=self.now(),
            resolver=ToolResolver(turn),
            live_overlaps=LiveOverlaps(),
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
                if a.reply_due is not None and a.has_content():
                    return a, "ok"  # the calls were made; the reply after them never came
                return a, ("empty" if a.responded() else "no_response")
            if deadline is not None and not out_active:
                self._announce_overdue(a, turn, now, deadline)

    def _announce_overdue(self, a: Attempt, turn: Turn, now: float, deadline: float) -> None:
        """Past the usual end-of-turn window with nothing to show: the watchdog is what ends it."""
        quiet = self.config.end_of_turn.quiet_ms
        assert a.placed is not None
        if a.reply_due is not None and a.last_tool_ms is not None and now - a.last_tool_ms >= quiet:
            self.announce_wait(a, f"the reply after {a.reply_due}", deadline)
        elif not a.responded() and now - a.placed.end_ms >= quiet:
            self.announce_wait(a, f"a reply to turn {turn.turn_index}", deadline)

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
            m = measure_turn(a.placed, user_speech, a.first_bot_ms, a.bot_speech, a.provider_ttfb_ms)
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
            session=self.session_number(),
            tokens=a.tokens,
            sentinel=sentinel,
            error=a.error,
            **({"latencies": latencies} if latencies is not None else {}),
        )
        self.publish_audio(turn.turn_index, a)
        self.publish(self.ev(TurnEnded, result=result))
        self.remember(turn, status, a)
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
            session=self.session_number(),
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
        if stereo and self.conversation:
            self.publish(
                self.ev(AudioChunk, turn_index=turn_index, track="conversation", sample_rate=self.rate, channels=2, start_ms=start, pcm=stereo)
            )

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
            session=self.session_number(),
        )
        self.publish(self.ev(TurnEnded, turn_index=turn.turn_index, result=result))


