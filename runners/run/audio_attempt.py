"""One attempt of one audio turn: what it produced (`Attempt`) and the `TurnResult` it becomes.

Kept apart from the turn loop (`audio.py`) because it is the loop's data, not its control: the
loop fills an Attempt from the provider's frames, its tools and its watchdog, `tracks.Tracks`
fills its `heard`, and what a finished, greeting or interrupted attempt is recorded as is read
off it here, in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipecat.frames.frames import (
    Frame,
    InterimTranscriptionFrame,
    LLMContextFrame,
    LLMTextFrame,
    TranscriptionFrame,
)

from arena_tui.spine.events import TurnStatus
from arena_tui.spine.events import EMPTY_RESPONSE, GREETING_TURN, INFRA_ERROR, DuplexOutcome, Interval, TurnResult
from arena_tui.spine.benchmark import Turn

from arena_tui.spine.speech import TurnMeasures
from .attempt import AttemptBase, spoken_text
from .tracks import Heard


@dataclass
class Attempt(AttemptBase):
    """What one attempt of one audio turn produced (`AttemptBase` plus its audio and timeline)."""

    placed: Interval | None = None
    user_transcript: str | None = None
    responses_cancelled: int = 0
    last_response_end_ms: float | None = None
    last_tool_ms: float | None = None  # when a tool call was last answered
    last_text_ms: float | None = None  # when the reply's words last came (its transcript)
    reply_due: str | None = None  # a tool was answered and the model has not replied since (the tool's name)
    waiting_for: str | None = None  # what the last `waiting` event announced (one event per wait)
    provider_ttfb_ms: float | None = None
    heard: Heard = field(default_factory=Heard)  # its user and bot tracks
    #: a cascade's stage marks on our clock (`stage_frame`): stt_final, llm_asked, llm_first_token
    stage_marks: dict[str, float] = field(default_factory=dict)

    def responded(self) -> bool:
        """A reply ended (a cancelled one does not count), or bot audio or a call came."""
        return self.responses_ended > self.responses_cancelled or self.heard.first_bot_ms is not None or bool(self.tool_calls)

    def replied(self) -> None:
        """Something of a reply came (text, audio, a new response): nothing is due any more."""
        self.reply_due = None
        self.waiting_for = None

    def has_content(self) -> bool:
        """Speech, audio or a call; control tokens alone (e.g. Gemini's `<ctrl46>`) are empty."""
        return bool(spoken_text(self.assistant_text)) or self.heard.first_bot_ms is not None or bool(self.tool_calls)

    def stage_frame(self, frame: Frame, t_ms: float) -> None:
        """A cascade's stage reached, seen in the frames its parts push: the STT's final
        transcript (the last before the LLM is asked: a turn heard in pieces counts from its
        last), the context handed to the LLM (the user aggregator's turn end), the LLM's first
        text token."""
        marks = self.stage_marks
        if isinstance(frame, TranscriptionFrame) and not isinstance(frame, InterimTranscriptionFrame):
            if "llm_asked" not in marks:
                marks["stt_final"] = t_ms
        elif isinstance(frame, LLMContextFrame):
            if "stt_final" in marks:
                marks.setdefault("llm_asked", t_ms)
        elif isinstance(frame, LLMTextFrame) and frame.text and "llm_asked" in marks:
            marks.setdefault("llm_first_token", t_ms)

    def stages(self, user_speech: list[Interval]) -> dict[str, float]:
        """The turn's stage durations (`Latencies.stt_ms`, `turn_ms`, `llm_ms`, `tts_ms`), when
        every mark is there: user speech end → STT final → LLM asked → its first token → first
        bot audio played (they add up to the pipeline TTFB)."""
        m = self.stage_marks
        stt, asked, token, audio_ms = m.get("stt_final"), m.get("llm_asked"), m.get("llm_first_token"), self.heard.first_bot_ms
        if not user_speech or stt is None or asked is None or token is None or audio_ms is None:
            return {}
        return {"stt_ms": stt - user_speech[-1].end_ms, "turn_ms": asked - stt, "llm_ms": token - asked,
                "tts_ms": audio_ms - token}

    # -- as recorded

    def result(self, turn: Turn, *, status: TurnStatus, sentinel: str | None, retries: int, reconnects: int,
               session: int, user_speech: list[Interval], measured: TurnMeasures | None,
               duplex: list[DuplexOutcome] | None = None, agent_interruptions: int | None = None,
               early_start_ms: float | None = None) -> TurnResult:
        """A turn that ran to its end (ok, empty, no reply, failed over); `duplex`, `agent_interruptions`:
        what the bot did while the user spoke (`tracks.Tracks.duplex`)."""
        extra: dict[str, Any] = {}
        if measured is not None:
            extra["latencies"] = measured.latencies.model_copy(update=self.stages(user_speech))
        return TurnResult(
            turn_index=turn.turn_index,
            status=status,
            user_text=turn.input,
            user_transcript=self.user_transcript,
            assistant_text=EMPTY_RESPONSE if sentinel == EMPTY_RESPONSE else self.assistant_text.strip(),
            tool_calls=self.tool_calls,
            user_audio=self.placed,
            user_speech=user_speech,
            bot_speech=self.heard.bot_speech,
            overlap_ms=measured.overlap_ms if measured is not None else 0.0,
            interrupted=self.heard.interrupted,
            no_audio=bool(spoken_text(self.assistant_text)) and self.heard.first_bot_ms is None,
            retries=retries,
            reconnects=reconnects,
            session=session,
            tokens=self.tokens,
            sentinel=sentinel,
            error=self.error,
            duplex=duplex,
            agent_interruptions=agent_interruptions,
            early_start_ms=early_start_ms,
            **extra,
        )

    def greeting_result(self, prompt: str, session: int) -> TurnResult:
        """The greeting is not a benchmark turn (never judged), but it has a reply, audio and an end."""
        return TurnResult(
            turn_index=GREETING_TURN,
            status="ok" if self.has_content() else INFRA_ERROR if self.infra else "no_response",
            user_text=prompt,
            assistant_text=spoken_text(self.assistant_text),
            bot_speech=self.heard.bot_speech,
            session=session,
            tokens=self.tokens,
            error=self.infra or self.error,
        )

    def interrupted_result(self, turn: Turn, session: int) -> TurnResult:
        """The run was stopped during this attempt: what it had so far."""
        return self._so_far(turn, session, "interrupted")

    def failed_result(self, turn: Turn, session: int, error: str, status: TurnStatus = "error") -> TurnResult:
        """The run failed during this attempt (e.g. lost pace): what it had so far, and why."""
        return self._so_far(turn, session, status, error)

    def _so_far(self, turn: Turn, session: int, status: TurnStatus, error: str | None = None) -> TurnResult:
        return TurnResult(
            turn_index=turn.turn_index,
            status=status,
            user_text=turn.input,
            user_transcript=self.user_transcript,
            assistant_text=self.assistant_text.strip(),
            tool_calls=self.tool_calls,
            user_audio=self.placed,
            bot_speech=self.heard.bot_speech,
            interrupted=self.heard.interrupted,
            session=session,
            error=error,
        )
