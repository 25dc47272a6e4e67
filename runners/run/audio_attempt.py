"""One attempt of one audio turn: what it produced (`Attempt`) and the `TurnResult` it becomes.

Kept apart from the turn loop (`audio.py`) because it is the loop's data, not its control: the
loop fills an Attempt from the provider's frames, its tools and its watchdog, `tracks.Tracks`
fills its `heard`, and what a finished, greeting or interrupted attempt is recorded as is read
off it here, in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena_tui.spine.events import EMPTY_RESPONSE, GREETING_TURN, Interval, TurnResult
from arena_tui.spine.benchmark import Turn

from arena_tui.spine.speech import TurnMeasures
from .base import AttemptBase, spoken_text
from .tracks import Heard


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
    provider_ttfb_ms: float | None = None
    heard: Heard = field(default_factory=Heard)  # its user and bot tracks

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

    # -- as recorded

    def result(self, turn: Turn, *, status: str, sentinel: str | None, retries: int, reconnects: int,
               session: int, user_speech: list[Interval], measured: TurnMeasures | None) -> TurnResult:
        """A turn that ran to its end (ok, empty, no reply, failed over)."""
        extra: dict[str, Any] = {"latencies": measured.latencies} if measured is not None else {}
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
            **extra,
        )

    def greeting_result(self, prompt: str, session: int) -> TurnResult:
        """The greeting is not a benchmark turn (never judged), but it has a reply, audio and an end."""
        return TurnResult(
            turn_index=GREETING_TURN,
            status="ok" if self.has_content() else "no_response",
            user_text=prompt,
            assistant_text=spoken_text(self.assistant_text),
            bot_speech=self.heard.bot_speech,
            session=session,
            tokens=self.tokens,
            error=self.error,
        )

    def interrupted_result(self, turn: Turn, session: int) -> TurnResult:
        """The run was stopped during this attempt: what it had so far."""
        return self._so_far(turn, session, "interrupted")

    def failed_result(self, turn: Turn, session: int, error: str, status: str = "error") -> TurnResult:
        """The run failed during this attempt (e.g. lost pace): what it had so far, and why."""
        return self._so_far(turn, session, status, error)

    def _so_far(self, turn: Turn, session: int, status: str, error: str | None = None) -> TurnResult:
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
