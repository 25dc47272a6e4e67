"""Runners for campaign tests (the executors' `runner=` hook), run inside real worker processes."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

WEDGED_MARK = "ARENA_TEST_WEDGED_MARK"  # a file the wedged runner writes its pid to


async def wedged(benchmark: Any, config: Any, bus: Any, run_id: str, resume: Any = None) -> dict:
    """A run whose event loop never gets back (as one caught in a frame chain that never yields,
    issue 23): it blocks the worker's loop, which can then no longer act on a "stop"."""
    Path(os.environ[WEDGED_MARK]).write_text(str(os.getpid()))
    time.sleep(3600)
    return {}


_active = 0  # runs of `loop_holder` running now in this worker process


async def loop_holder(benchmark: Any, config: Any, bus: Any, run_id: str, resume: Any = None) -> dict:
    """A run that keeps its worker's loop late, as a process past its pace budget does: for
    6 s (long enough for admission control to cut twice) it holds the loop 100 ms out of every 150 ms. Returns how many runs the worker held
    when this one started, and the speed it was given."""
    import asyncio

    global _active
    _active += 1
    try:
        started_beside = _active
        until = time.monotonic() + 6.0
        while time.monotonic() < until:
            time.sleep(0.1)
            await asyncio.sleep(0.05)
        return {"active": started_beside, "speed": config.speed}
    finally:
        _active -= 1
