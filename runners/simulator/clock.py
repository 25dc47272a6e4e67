"""A session's AUDIO clock: ms of input audio received on it (samples / 24), and waits on it.

The only clock a simulated reply waits on, so what the simulator does (VAD edges, reply
delays, faults) lands at the same audio position however fast the client streams.
"""

from __future__ import annotations

import asyncio
import math

from .protocol import RATE


class AudioClock:
    """Counts the samples received; `until(ms)` resolves once that much audio is in."""

    def __init__(self) -> None:
        self.samples = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []

    @property
    def ms(self) -> float:
        return self.samples * 1000.0 / RATE

    def add(self, samples: int) -> None:
        """Count received samples; waiters wake only at `wake()`, once the input was handled."""
        self.samples += samples

    async def until(self, ms: float) -> None:
        """Wait until this much input audio has arrived on the session."""
        target = math.ceil(ms * RATE / 1000.0 - 1e-6)
        if self.samples >= target:
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((target, fut))
        await fut

    def wake(self) -> bool:
        """Resolve the waits the audio received so far satisfies; True if any woke."""
        keep, woke = [], False
        for target, fut in self._waiters:
            if self.samples >= target:
                if not fut.done():
                    fut.set_result(None)
                    woke = True
            else:
                keep.append((target, fut))
        self._waiters = keep
        return woke

    def cancel(self) -> None:
        """The session is ending: no wait on its audio will ever resolve."""
        for _, fut in self._waiters:
            if not fut.done():
                fut.cancel()
        self._waiters.clear()
