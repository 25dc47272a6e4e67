"""What the provider's frames mean for an audio run, as its service pushes them (`SessionBase`
taps them; only the current session's count): the reply's text and the user's transcript
published and kept on the attempt under way, its responses opened and closed, the provider's
TTFB (when it fits inside the attempt) and its tokens, a reply the provider ended cut short (a
truncation), and an error said once per session, with the infrastructure failure it shows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

from arena_tui.spine.events import ErrorEvent, Event, Interruption, RunEvent, TranscriptDelta
from arena_tui.spine.settings import RunSettings

from ..base import ProviderRunner
from .audio_attempt import Attempt
from .infra import infra_failure
from .session import Session

if TYPE_CHECKING:
    from types import EllipsisType


class ProviderFrames:
    """A part of `audio.AudioRun`: it reads the run's `session`, `attempt`, `provider`, `config`,
    `now`, `publish` and `ev`."""

    # what it reads of the run (`RunBase`)
    session: Session | None
    attempt: Attempt | None
    provider: ProviderRunner
    config: RunSettings

    if TYPE_CHECKING:  # the run's own (declared here, defined by `RunBase`)
        def now(self) -> float: ...

        def publish(self, event: RunEvent) -> None: ...

        def ev[E: Event](self, cls: type[E], turn_index: int | None | EllipsisType = ..., **kw: Any) -> E: ...

    def on_llm_frame(self, session: Session, frame: Frame) -> None:
        if session is not self.session:
            return
        if isinstance(frame, ErrorFrame):  # as the service pushes it: before its connection is seen gone
            self.on_provider_error(session, frame)
            return
        a = self.attempt
        if a is not None and self.provider.stage_timing:
            a.stage_frame(frame, self.now())  # a cascade's stages on our clock
        if isinstance(frame, TTSTextFrame):
            if frame.text:
                self.publish(self.ev(TranscriptDelta, role="assistant", text=frame.text))
                if a is not None:
                    a.assistant_text += frame.text
                    a.last_text_ms = self.now()
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
            self.attempt.heard.interrupted = True

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
            if session.infra is None:
                session.infra = infra_failure(frame, self.provider.endpoint(self.config))
            if self.attempt is not None:
                self.attempt.error = msg
