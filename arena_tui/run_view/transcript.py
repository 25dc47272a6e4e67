"""A run's transcript as its events come: the user's and the model's words (a line grows with its
deltas until it is final), each call and its answer, a retry's marker with what it cut off, a
truncated reply marked cut, a sentinel's line. `RunState` folds events into it; the transcript
widget reads its `lines`."""

from __future__ import annotations

from typing import Any, Protocol

from arena_tui.spine.events import (
    GREETING_TURN, Interruption, Retry, RunEnded, RunEvent, SpeechBoundary, ToolAnswered, ToolCalled, TranscriptDelta,
    TurnEnded, TurnStarted,
)

from .rows import TranscriptLine


class Attempts(Protocol):
    """What the transcript reads of the turn table (`table.TurnTable`), as it stood before the event."""

    def attempt(self, turn: int | None) -> int: ...

    def greeting_running(self) -> bool: ...


class Transcript:
    """The run's transcript `lines`, in time order."""

    def __init__(self, turns: Attempts) -> None:
        self.turns = turns
        self.lines: list[TranscriptLine] = []
        self.user_spoke_ms: dict[tuple[int | None, int], float] = {}  # (turn, attempt) -> user speech start

    def fold(self, ev: RunEvent) -> None:
        """One event; fold it before the turn table does (a turn's start reads whether the greeting was still running)."""
        match ev:
            case TurnStarted(turn_index=int(turn)):
                if turn != GREETING_TURN and self.turns.greeting_running():
                    self.final(GREETING_TURN)  # the greeting has no turn_ended: it is over when turn 0 starts
                if ev.attempt > 0:
                    self._new_attempt(turn, ev.attempt, ev.t_ms, None)
            case SpeechBoundary(kind="user_speech_started"):
                self.user_spoke_ms.setdefault((ev.turn_index, self.turns.attempt(ev.turn_index)), ev.t_ms)
            case TranscriptDelta():
                self._delta(ev)
            case ToolCalled():
                dup = " (duplicate)" if ev.is_duplicate else ""
                self.lines.append(TranscriptLine(ev.t_ms, ev.turn_index, "tool", f"{ev.name}({_args(ev.args)}){dup}", True))
            case ToolAnswered():
                self.lines.append(TranscriptLine(ev.t_ms, ev.turn_index, "result", f"{ev.name} → {ev.status}", True))
            case Interruption(cause="bot_truncated"):  # the reply ended incomplete; its text still streams with its audio
                self._cut(ev.turn_index, "truncated", "assistant", close=False)
            case Retry():
                self._new_attempt(ev.turn_index, ev.attempt, ev.t_ms, ev.reason)
            case TurnEnded():
                res = ev.result
                if res.sentinel:
                    self.lines.append(TranscriptLine(ev.t_ms, res.turn_index, "sentinel", res.sentinel, True))
                self.final(res.turn_index)
            case RunEnded():
                for ln in self.lines:
                    ln.final = True

    def final(self, turn: int | None) -> None:
        for ln in self.lines:
            if ln.turn == turn:
                ln.final = True

    def _delta(self, ev: TranscriptDelta) -> None:
        last = next((ln for ln in reversed(self.lines) if ln.role == ev.role and ln.turn == ev.turn_index), None)
        if last is not None and not last.final:
            last.text += ev.text
            last.final = ev.final
            return
        attempt = self.turns.attempt(ev.turn_index)
        # the user's words arrive once they are transcribed, often after the reply began: the line
        # belongs where the user started speaking, before the reply and the turn's tool calls
        t = self.user_spoke_ms.get((ev.turn_index, attempt), ev.t_ms) if ev.role == "user" else ev.t_ms
        at = len(self.lines)
        while at and self.lines[at - 1].t_ms > t:
            at -= 1
        self.lines.insert(at, TranscriptLine(t, ev.turn_index, ev.role, ev.text, ev.final, attempt))

    def _cut(self, turn: int | None, why: str, role: str | None = None, close: bool = True) -> None:
        """Mark the turn's unfinished lines as cut off; closed, later text starts a line of its own."""
        for ln in self.lines:
            if ln.turn == turn and not ln.final and ln.role in ("user", "assistant") and role in (None, ln.role):
                ln.cut = ln.cut or why
                ln.final = close

    def _new_attempt(self, turn: int | None, attempt: int, t_ms: float, reason: str | None) -> None:
        """A retry: what the last attempt said is cut off, and a marker separates the attempts."""
        for ln in self.lines:
            if ln.role == "attempt" and ln.turn == turn and ln.attempt == attempt:
                return  # the retry event already marked it (turn_started follows it)
        self._cut(turn, reason or "retried")
        label = f"attempt {attempt + 1} (retry {attempt}" + (f": {reason})" if reason else ")")
        self.lines.append(TranscriptLine(t_ms, turn, "attempt", label, True, attempt))


def _args(args: dict[str, Any]) -> str:
    s = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return s if len(s) <= 80 else s[:77] + "…"
