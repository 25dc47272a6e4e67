"""Where in each chunk period this process's pacers send: one grid per process, spread across processes.

Every session paces its input on its own 20 ms schedule, and each wake-up of a process costs the
kernel's switch and a round of the event loop before any chunk moves. Sessions that started at
random moments wake their process at random moments: six sessions in a worker woke it six times a
period, and on a busy 2-core machine each wake could wait for a core. The pacers of one process
share a grid instead (a session's timeline may start anywhere, so it starts on the next grid
instant, less than one period of extra silence before its preroll): their deadlines coincide, one
timer wake serves them all (`runners.transports.DeadlineTimer`). Processes put their grids at
different phases (`set_phase`: a pool gives worker k of n the phase k/n), so their wakes fall
apart rather than on the same instant on both cores.
"""

from __future__ import annotations

import math
import os

#: consecutive process ids spread evenly around the period when no pool set a phase (golden ratio)
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0

_phase: float | None = None


def set_phase(fraction: float) -> None:
    """This process's pacers send at `fraction` (0-1) of each period (a pool's worker k of n: k/n)."""
    global _phase
    _phase = fraction % 1.0


def phase() -> float:
    """This process's phase: as set, else drawn from its pid (distinct processes, distinct phases)."""
    return _phase if _phase is not None else (os.getpid() * _GOLDEN) % 1.0


def next_tick(now: float, period_s: float) -> float:
    """The first instant at or after `now` (monotonic seconds) on this process's grid of `period_s`."""
    origin = phase() * period_s
    return origin + math.ceil((now - origin) / period_s) * period_s
