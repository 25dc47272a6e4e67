"""What the provider's frames mean for an audio run, as its service pushes them (`SessionBase`
taps them; only the current session's count): the reply's text and the user's transcript
published and kept on the attempt under way, its responses opened and closed, the provider's
TTFB (when it fits inside the attempt) and its tokens, a reply the provider ended cut short (a
truncation), and an error said once per session, with the infrastructure failure it shows."""

from __future__ import annotations

from types import EllipsisType
from typing import Protocol

from pipecat.frames.frames import (
    ErrorFrame,
    Frame,
    InterimTranscriptionFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    MetricsFrame,
    TranscriptionFrame,
    TTSTextFrame,
)
from pipecat.metrics.metrics import LLMUsageMetricsData, TTFBMetricsData

from arena_tui.spine.events import ErrorEvent, Interruption, RunEvent, TranscriptDelta
from arena_tui.spine.settings import RunSettings

from ..base import ProviderRunner
from .audio_attempt import Attempt
from .infra import infra_failure
from .session import Session


class FrameHost(Protocol):
    """What the frames are read against (`audio.AudioRun`): its session and attempt under way, its
    provider and settings, its clock, and its events."""

    provider: ProviderRunner
    config: RunSettings
    session: Session | None
    attempt: Attempt | None

    def now(self) -> float: ...

    def ev(self, cls: type, turn_index: int | None | EllipsisType = ..., **kw: object) -> RunEvent: ...

    def publish(self, event: RunEvent) -> None: ...


class ProviderFrames:
    """The provider's frames read for `run`. `transcript_turns`: whether Pipecat's response brackets
    are part of a turn (not for a full-duplex model: its are closed by the wall clock, `full_duplex`)."""

    def __init__(self, run: FrameHost, *, transcript_turns: bool = True) -> None:
        self.run = run
        self.transcript_turns = transcript_turns

    def on_llm_frame(self, session: Session, frame: Frame) -> None:
        run = self.run
        if session is not run.session:
            return
        if isinstance(frame, ErrorFrame):  # as the service pushes it: before its connection is seen gone
            self.on_provider_error(session, frame)
            return
        if not self.transcript_turns and isinstance(frame, LLMFullResponseStartFrame | LLMFullResponseEndFrame):
            return  # Pipecat's transcript turns, closed by the wall clock: no part of a turn (`full_duplex`)
        a = run.attempt
        if a is not None and run.provider.stage_timing:
            a.stage_frame(frame, run.now())  # a cascade's stages on our clock
        if isinstance(frame, TTSTextFrame):
            if frame.text:
                run.publish(run.ev(TranscriptDelta, role="assistant", text=frame.text))
                if a is not None:
                    a.assistant_text += frame.text
                    a.last_text_ms = run.now()
                    a.replied()
        elif isinstance(frame, TranscriptionFrame) and not isinstance(frame, InterimTranscriptionFrame):
            run.publish(run.ev(TranscriptDelta, role="user", text=frame.text, final=True))
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
                a.last_response_end_ms = run.now()
        elif isinstance(frame, MetricsFrame):
            for d in frame.data:
                if isinstance(d, TTFBMetricsData) and a is not None and a.provider_ttfb_ms is None and d.value > 0:
                    ttfb = d.value * 1000.0 * run.config.speed
                    # Pipecat's timer can span a silent attempt; a figure longer than this attempt is not this turn's.
                    if ttfb <= run.now() - a.started_ms:
                        a.provider_ttfb_ms = ttfb
                elif isinstance(d, LLMUsageMetricsData) and a is not None:
                    a.count_usage(d)

    def on_response_done(self, session: Session, status: str, why: str) -> None:
        """A provider reply that ended cut short (e.g. incomplete: max_output_tokens) is a truncation."""
        run = self.run
        if session is not run.session or status in ("completed", "in_progress"):
            return
        if status == "cancelled":
            if run.attempt is not None:
                run.attempt.responses_cancelled += 1
            return
        run.publish(run.ev(Interruption, cause="bot_truncated", detail=f"provider ended the reply {status}: {why}".strip()))
        if run.attempt is not None:
            run.attempt.heard.interrupted = True

    def on_session_event(self, session: Session, cls: type, /, **kw: object) -> None:
        """An event the runner saw inside its service (only the current session's count)."""
        run = self.run
        if session is run.session:
            run.publish(run.ev(cls, ..., **kw))  # (`...`: the current turn; `kw` are the event's own fields)

    def on_provider_error(self, session: Session, frame: ErrorFrame) -> None:
        run = self.run
        msg = str(frame.error)
        if msg in session.errors:  # a dead socket fails every send: report it once
            return
        session.errors.add(msg)
        run.publish(run.ev(ErrorEvent, where="provider", message=msg, fatal=bool(frame.fatal)))
        if session is run.session:
            session.failed = msg
            if session.infra is None:
                session.infra = infra_failure(frame, run.provider.endpoint(run.config))
            if run.attempt is not None:
                run.attempt.error = msg
