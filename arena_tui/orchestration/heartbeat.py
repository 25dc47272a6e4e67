"""A campaign's pulse on the terminal: a line at least every `PROGRESS_S` of wall time.

Cell notices come when a run starts or ends; between them a campaign of long runs, or one whose
workers are slow to come up (Ray beside busy cores), printed nothing for minutes (98 s beside 6
CPU hogs, 154 s on Ray) while its turns advanced: that reads as a hang. Any notice resets the
wait, so a busy campaign prints no more than before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

#: the most wall time between two lines a campaign prints
PROGRESS_S = 10.0


class Heartbeat:
    """Wraps the campaign's `notice`; `run` says `state()` whenever nothing was said for `every_s`."""

    def __init__(self, notice: Callable[[str], None], state: Callable[[], Awaitable[str]],
                 every_s: float = PROGRESS_S) -> None:
        self._notice = notice
        self._state = state
        self.every_s = every_s
        self._last = time.monotonic()

    def notice(self, line: str) -> None:
        self._last = time.monotonic()
        self._notice(line)

    async def run(self) -> None:
        """Until cancelled."""
        while True:
            await asyncio.sleep(max(0.05, self._last + self.every_s - time.monotonic()))
            if time.monotonic() - self._last >= self.every_s:
                with contextlib.suppress(Exception):  # (a store read failing here: the campaign says so itself)
                    self.notice(await self._state())
                self._last = time.monotonic()  # (also when the read failed: try again a period later)
