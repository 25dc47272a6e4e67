"""Admission control: how many sessions a worker process is given, from how late its loop runs.

A worker keeps pace with the audio clock only while its event loop gets back in time: the
pacers send a chunk every 20 ms of audio (1 ms of wall time at 20×). What one process can hold
depends on the machine it is on and what else runs there, so a fixed sessions-per-worker figure
either wastes a quiet machine or collapses a busy one (turns late, replies timed out into false
retries). Each worker therefore measures its own loop's lag (`LagProbe`, in the worker) and
reports it once a window; the executor's `Admission` per worker turns that into the number of
sessions it may hold and the speed a new run on it may use:

- busy windows (the loop held `BUSY_WORST_MS` at once, or late `BUSY_MEAN_MS` on average),
  `BUSY_WINDOWS` in a row (one stall, a run importing its provider, is no sign of a busy
  machine): one session fewer (never below one, at most once per `COOLDOWN_WINDOWS`); a worker
  down to one session and still busy for `SLOW_WINDOWS` halves the speed of its next runs
  (never below 1×: a real service runs at 1×, and a run records the speed it ran at);
- `CALM_WINDOWS` calm windows in a row while it holds all it may: the speed back up first,
  then one session more, never past what the campaign asked for.

Sessions already running are never taken away: the limit only decides what is admitted next.
Turns that lost pace anyway are flagged by the engine and re-run by the orchestrator.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from arena_tui.spine.settings import RunSettings

#: how often the probe wakes (wall s), and how many wakes make one reported window
PROBE_S = 0.02
WINDOW_S = 1.0
#: a window is busy when the loop came back this late once (wall ms) ... or this late on average
BUSY_WORST_MS = 60.0
BUSY_MEAN_MS = 8.0
#: ... and calm when it never came back later than this, nor on average
CALM_WORST_MS = 25.0
CALM_MEAN_MS = 3.0
BUSY_WINDOWS = 2
CALM_WINDOWS = 5
COOLDOWN_WINDOWS = 3
SLOW_WINDOWS = 3


@dataclass(frozen=True)
class Load:
    """One window of a worker loop's lag: the worst and the mean wall ms it came back late."""

    worst_ms: float
    mean_ms: float

    @property
    def busy(self) -> bool:
        return self.worst_ms >= BUSY_WORST_MS or self.mean_ms >= BUSY_MEAN_MS

    @property
    def calm(self) -> bool:
        return self.worst_ms < CALM_WORST_MS and self.mean_ms < CALM_MEAN_MS


async def probe_lag(report: Callable[[Load], None]) -> None:
    """Forever (until cancelled): sleep `PROBE_S` at a time and report each `WINDOW_S` of wall
    time's lag (a window of wall time: a held loop must not stretch its own window)."""
    while True:
        lags: list[float] = []
        end = time.monotonic() + WINDOW_S
        while not lags or time.monotonic() < end:
            t = time.monotonic()
            await asyncio.sleep(PROBE_S)
            lags.append(max(0.0, (time.monotonic() - t - PROBE_S) * 1000.0))
        report(Load(worst_ms=max(lags), mean_ms=sum(lags) / len(lags)))


class Admission:
    """One worker's session limit and speed cap, adjusted window by window (module docstring)."""

    def __init__(self, most: int, speed: float) -> None:
        self.most = most  # the campaign's sessions per worker: never more
        self.speed = speed  # the campaign's speed: never faster
        self.limit = most
        self.speed_cap = speed
        self.busy = False  # the last `BUSY_WINDOWS` windows were busy
        self.load: Load | None = None
        self._busy = 0
        self._calm = 0
        self._since_cut = COOLDOWN_WINDOWS
        self._slow = 0

    def observe(self, load: Load, sessions: int) -> bool:
        """Take one window's load with the sessions the worker holds; True when the limit or
        the speed cap changed."""
        before = (self.limit, self.speed_cap)
        self.load = load
        self._since_cut += 1
        self._busy = self._busy + 1 if load.busy else 0
        self.busy = self._busy >= BUSY_WINDOWS
        if self.busy:
            self._calm = 0
            if self.limit > 1 and self._since_cut >= COOLDOWN_WINDOWS:
                self.limit = max(1, min(self.limit, sessions) - 1)
                self._since_cut = 0
            self._slow = self._slow + 1 if self.limit == 1 and sessions == 1 else 0
            if self._slow >= SLOW_WINDOWS and self.speed_cap > 1.0:
                self.speed_cap = max(1.0, self.speed_cap / 2)
                self._slow = 0
        elif load.busy:
            self._calm = 0
        elif load.calm:
            self._slow = 0
            self._calm = self._calm + 1 if sessions >= self.limit else 0
            if self._calm >= CALM_WINDOWS:
                self._calm = 0
                if self.speed_cap < self.speed:
                    self.speed_cap = min(self.speed, self.speed_cap * 2)
                elif self.limit < self.most:
                    self.limit += 1
        else:
            self._calm = self._slow = 0
        return (self.limit, self.speed_cap) != before

    def speed_for(self, asked: float, resumed: bool) -> float:
        """The speed a run admitted now runs at: the cap, unless it continues a run (a run's
        timeline has one speed) or asked for less."""
        return asked if resumed else min(asked, self.speed_cap)

    def settings_for(self, settings: RunSettings, resumed: bool) -> RunSettings:
        """A job's settings as admitted now: its speed per `speed_for`."""
        speed = self.speed_for(settings.speed, resumed)
        return settings if speed == settings.speed else settings.model_copy(update={"speed": speed})


def pace_text(admissions: Iterable[Admission]) -> str:
    """What the campaign says about its pace, e.g. "pace: 2 sessions/worker, machine busy"."""
    ads = list(admissions)
    if not ads:
        return ""
    lo, hi = min(a.limit for a in ads), max(a.limit for a in ads)
    n = f"{lo}" if lo == hi else f"{lo}–{hi}"
    text = f"pace: {n} session{'' if hi == 1 else 's'}/worker"
    cap = min(a.speed_cap for a in ads)
    if cap < ads[0].speed:
        text += f", new runs at speed {cap:g} (asked {ads[0].speed:g})"
    if any(a.busy for a in ads):
        text += ", machine busy"
    return text
