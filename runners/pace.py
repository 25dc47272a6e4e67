"""Whether this process keeps pace with the run's audio clock: the one home of the pace rules.

The paced input (`transports.PacedInput`) sends each 20 ms chunk against an absolute deadline
on the run's clock and reports how late (wall ms) it went out. Two rules read that:

- a turn whose user audio went out `PACE_LOST_MS` late or more is flagged (`run/audio.py`
  `check_pace` publishes the `pacing` notice): its timing is not what a listener heard;
- the run has LOST PACE when the input is behind its schedule by more than the `RunSettings.pace`
  bound, `max(max_lag_ms, min_wall_ms × speed)` ms of audio: the audio we place on the timeline
  no longer went out anywhere near where the timeline says, and every later figure would be
  fiction. `PaceKeeper.check` (called on every tick of the run's clock) then raises `LostPace`,
  so the run ends `failed` with the reason "lost pace: …" instead of running on (or, as before
  the catch-up yielded, hanging with the pacer holding the loop).
"""

from __future__ import annotations
from arena_tui.spine.settings import Pace

from .base import RunError

#: input chunks this late (wall ms) mean the process did not keep pace with the audio clock in that turn
PACE_LOST_MS = 100.0
#: a chunk of the user's audio this late (wall ms), a provider may have heard a pause the user never made: the turn itself is
#: no measurement of the model (`lost_pace`, played again by a resume). Between the two, only its
#: latencies are untrusted (the `pacing` notice keeps the run out of latency figures).
TURN_INVALID_MS = 500.0


class LostPace(RunError):
    """The run's input fell further behind the audio clock than its pace bound allows."""


class PaceKeeper:
    """Follows the input's lateness on one run's clock and says when the run has lost pace."""

    def __init__(self, speed: float, pace: Pace | None = None) -> None:
        self.speed = speed
        self.pace = pace
        self.worst_lag_ms = 0.0  # the most the input was behind, in ms of AUDIO
        self.lost: str | None = None  # the reason, once the bound was passed

    def bound_ms(self) -> float | None:
        """The lag (ms of audio) past which the run has lost pace; None: no bound."""
        if self.pace is None:
            return None
        return max(self.pace.max_lag_ms, self.pace.min_wall_ms * self.speed)

    def note(self, late_wall_ms: float) -> None:
        """A chunk went out `late_wall_ms` after its deadline."""
        lag = late_wall_ms * self.speed
        self.worst_lag_ms = max(self.worst_lag_ms, lag)
        bound = self.bound_ms()
        if self.lost is None and bound is not None and lag > bound:
            self.lost = (
                f"lost pace: user audio went out {lag / 1000:,.1f} s of audio ({late_wall_ms / 1000:,.1f} s wall) "
                f"behind its schedule, past the bound of {bound / 1000:,.1f} s (RunSettings pace): this machine did "
                "not keep up with the audio clock"
            )

    def check(self) -> None:
        """Raise `LostPace` once the bound was passed."""
        if self.lost is not None:
            raise LostPace(self.lost)
