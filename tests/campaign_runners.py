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


async def stalls_at_speed_8(benchmark: Any, config: Any, bus: Any, run_id: str, resume: Any = None) -> dict:
    """The engine, but a run at 8x has its loop held 0.7 s in its first user clip (a machine too
    busy for 8x): that turn is lost_pace. At any other speed the engine runs as it is."""
    from arena_tui.orchestration.worker import run_engine
    from runners.transports import PacedInput

    take = PacedInput._take_chunk
    stalled: list[float] = []

    def stall_once(self: PacedInput, t_ms: float) -> bytes:
        pcm = take(self, t_ms)
        if config.speed == 8.0 and self._clips and self._clips[0].start_ms is not None and not stalled:
            stalled.append(t_ms)
            time.sleep(0.7)
        return pcm

    PacedInput._take_chunk = stall_once  # this worker process only
    try:
        return await run_engine(benchmark, config, bus, run_id, resume)
    finally:
        PacedInput._take_chunk = take


async def loaded_modules(benchmark: Any, config: Any, bus: Any, run_id: str, resume: Any = None) -> dict:
    """Whether the worker had its provider's Pipecat service loaded before its first run began."""
    import sys

    return {"openai_service": "pipecat.services.openai.realtime.llm" in sys.modules}


DIE_ONCE_MARK = "ARENA_TEST_DIE_ONCE"  # a file: the first run to see it missing creates it and dies


async def dies_once_after_a_turn(benchmark: Any, config: Any, bus: Any, run_id: str, resume: Any = None) -> dict:
    """The engine, but the first such run (of all the campaign's workers) SIGKILLs its own worker
    process once its first benchmark turn has ended and had time to reach the coordinator: a
    worker lost mid-run, as a killed process or a lost node is."""
    import asyncio
    import signal

    from arena_tui.orchestration.worker import run_engine
    from arena_tui.spine.events import TurnEnded

    mark = Path(os.environ[DIE_ONCE_MARK])

    async def die() -> None:
        async for _ in bus.subscribe(lambda e: isinstance(e, TurnEnded) and e.turn_index >= 0):
            try:
                mark.open("x").close()
            except FileExistsError:
                return
            await asyncio.sleep(0.5)  # (its events batched and sent)
            os.kill(os.getpid(), signal.SIGKILL)

    killer = asyncio.get_running_loop().create_task(die())
    try:
        return await run_engine(benchmark, config, bus, run_id, resume)
    finally:
        killer.cancel()
