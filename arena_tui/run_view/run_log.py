"""A run's event log as its events come: one line for each thing worth saying (the run's and each
session's course, a turn's start and end, waits, overlaps, interruptions, retries, errors, a
judge's revision), worded once here; the event-log widget reads its `lines`. An overlap or an
interruption a turn's measurements show but no live event reported is said at the turn's end."""

from __future__ import annotations

from typing import Protocol

from arena_tui.spine.events import (
    GREETING_TURN, DuplexPlayed, ErrorEvent, Interruption, Judgement, Overlap, Reconnected, Retry, RunEnded, RunEvent,
    RunResumed, RunStarted, RunSuperseded, SessionOpened, SessionRotated, TurnEnded, TurnStarted, Waiting,
)
from arena_tui.spine.source import against
from arena_tui.spine.times import wall_ms

from ..timing import v2v_text
from .rows import LogLine, wait_text


class Told(Protocol):
    """What the log reads of its run to word a line: its timeline's speed, and what it ran against."""

    @property
    def speed(self) -> float | None: ...

    @property
    def source(self) -> str | None: ...


class RunLog:
    """The run's log `lines`, in arrival order."""

    def __init__(self, run: Told) -> None:
        self.run = run
        self.lines: list[LogLine] = []

    def add(self, t_ms: float, kind: str, text: str, turn: int | None = None) -> None:
        self.lines.append(LogLine(t_ms, kind, text, turn))

    def said(self, turn: int | None, kind: str) -> bool:
        """Whether a line of `kind` was said for the turn."""
        return any(ln.kind == kind and ln.turn == turn for ln in self.lines)

    def fold(self, ev: RunEvent) -> None:
        """One event, once the run's other parts have folded it (a run's start reads what it ran against)."""
        text = self._text(ev)
        if text is not None:
            self.add(ev.t_ms, ev.kind, text, ev.turn_index)

    def _text(self, ev: RunEvent) -> str | None:
        match ev:
            case RunStarted():
                sim = f" against {against(self.run.source)}" if self.run.source else ""
                faults = ev.recorded.fault_text
                extra = f" (faults: {faults})" if faults else ""
                return f"run started: {ev.benchmark}, {len(ev.turn_indices)} turns, {ev.model}{sim}{extra}"
            case RunResumed():
                return f"run resumed at turn {ev.from_turn}"
            case SessionOpened():
                return f"session {ev.session} opened" + (f": {ev.detail}" if ev.detail else "")
            case TurnStarted(turn_index=int(turn), attempt=0):
                return f"{'greeting' if turn == GREETING_TURN else f'turn {turn}'} started"
            case Waiting():
                return wait_text(ev.what, wall_ms(ev.deadline_t_ms - ev.t_ms, self.run.speed))
            case Overlap():
                return f"overlap {ev.duration_ms:.0f} ms ({ev.start_ms / 1000:.2f}s–{ev.end_ms / 1000:.2f}s)"
            case DuplexPlayed():
                return f"user speaks during the reply ({ev.cue.replace('_', ' ')}, {ev.at_ms:,.0f} ms in): “{ev.text}”"
            case Interruption():
                what = {"bot_truncated": "bot truncated", "bot_barge_in": "bot talked over the user"}.get(ev.cause, "user barged in")
                return f"interruption: {what}" + (f" ({ev.detail})" if ev.detail else "")
            case SessionRotated():
                r = ev.replayed
                replay = f"{r.strategy}: {r.messages} msgs, {r.tool_calls} tool calls, {r.chars} chars"
                if r.dropped_messages:
                    replay += f", {r.dropped_messages} dropped"
                return f"session rotated {ev.from_session}→{ev.to_session} ({ev.reason}); replayed {replay}"
            case Reconnected():
                return f"reconnected (session {ev.session}, attempt {ev.attempt}): {ev.reason}"
            case Retry():
                return f"retry {ev.attempt}: {ev.reason}"
            case ErrorEvent():
                return f"{'FATAL ' if ev.fatal else ''}{ev.where} error: {ev.message}"
            case TurnEnded():
                return self._turn_ended(ev)
            case Judgement(turn_index=int()):
                return _judged(ev)
            case RunEnded():
                return f"run {ev.status}" + (f": {ev.reason}" if ev.reason else "")
            case RunSuperseded():
                return (f"superseded by run {ev.by}, which re-ran it from scratch: this run counts nowhere"
                        + (f" ({ev.reason})" if ev.reason else ""))
        return None

    def _turn_ended(self, ev: TurnEnded) -> str:
        """What the turn's measurements show that no live event said (an overlap, an interruption), then its end."""
        res = ev.result
        seen = {ln.kind for ln in self.lines if ln.turn == res.turn_index}
        if res.overlap_ms > 0 and "overlap" not in seen:  # measured, but no overlap event came (the meters flag it too)
            self.add(ev.t_ms, "overlap", f"overlap {res.overlap_ms:.0f} ms in turn {res.turn_index} (from the turn's measurements)",
                     ev.turn_index)
        if res.interrupted and "interruption" not in seen:
            self.add(ev.t_ms, "interruption", f"interruption in turn {res.turn_index} (from the turn's measurements)",
                     ev.turn_index)
        label = "greeting" if res.turn_index == GREETING_TURN else f"turn {res.turn_index}"
        extra = f", v2v {v2v_text(res.latencies, self.run.speed)}" if res.latencies.voice_to_voice_ms is not None else ""
        return f"{label} ended: {res.status}{extra}" + (f" — {res.error}" if res.error else "")


def _judged(ev: Judgement) -> str | None:
    """A revision worth a line: an error, a person's verdict or withdrawal, a re-judgement."""
    if ev.error:
        return f"judge error on turn {ev.turn_index}: {ev.error}"
    if ev.review is not None:
        what = "withdrew their verdict" if ev.review.withdraw else \
            "gave a verdict: " + ", ".join(f"{d} {s.verdict}" for d, s in ev.scores.items())
        return f"turn {ev.turn_index}: {ev.review.by} {what} (rev {ev.revision})"
    if ev.revision > 1 or ev.phase == 2:
        return f"turn {ev.turn_index} re-judged (rev {ev.revision}{', ' + ev.rule if ev.rule else ''})"
    return None
