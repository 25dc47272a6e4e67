"""What the engine waits on, as a run's events come: a `waiting` event names it and when the
watchdog gives up; the reply (its words, a call, audible bot audio) or the turn's course moving on
ends it. Live, the wait counts down on the wall clock."""

from __future__ import annotations

from typing import Protocol

from arena_tui.spine.events import Level, RunEvent, Waiting
from arena_tui.spine.times import wall_ms

from .rows import wait_text

# what ends a wait: the reply (its text, a call), or the turn's course moving on
WAIT_OVER = frozenset({"transcript_delta", "tool_call", "bot_speech_started", "retry", "turn_started", "turn_ended",
                       "run_ended", "session_rotated"})


class Clocked(Protocol):
    """What a wait reads of its run: how much faster than the wall its timeline ran, its wall clock."""

    @property
    def speed(self) -> float | None: ...

    def wall_now(self) -> float | None: ...


class Waits:
    """The wait under way (`waiting`, None when nothing is awaited) and when it was seen (wall clock)."""

    def __init__(self, run: Clocked) -> None:
        self.run = run
        self.waiting: Waiting | None = None
        self.since_wall: float | None = None

    def fold(self, ev: RunEvent) -> None:
        if self.waiting is not None and ev.kind in WAIT_OVER and getattr(ev, "role", "assistant") == "assistant":
            self.waiting = None
        match ev:
            case Level(source="bot") if ev.rms_dbfs > -60.0:
                self.waiting = None  # the bot is audible: the wait is over
            case Waiting():
                self.waiting, self.since_wall = ev, self.run.wall_now()

    def left_ms(self) -> float | None:
        """Wall-clock ms until the engine's watchdog gives up on what it waits on; None if not waiting."""
        w = self.waiting
        if w is None:
            return None
        left = wall_ms(w.deadline_t_ms - w.t_ms, self.run.speed)
        if self.since_wall is not None and (wall := self.run.wall_now()) is not None:
            left -= (wall - self.since_wall) * 1000.0
        return max(0.0, left)

    def line(self) -> str | None:
        left = self.left_ms()
        return None if left is None or self.waiting is None else wait_text(self.waiting.what, left)
