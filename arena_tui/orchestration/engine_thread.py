"""The run engine's own thread and event loop, so the monitor's loop is left to the screen.

A run is Pipecat pipelines, paced audio and (for the simulator) an in-process server: with a few
runs going they keep a loop busy most of the time, and on the app's loop every keypress and frame
waited behind them (scripts/bench_ui_pacing.py --keys 8: p95 0.5-1 s). Here every run of the
process shares one dedicated loop; its events reach the app's bus in order through
`ThreadPublisher`. Cancelling the awaiting side cancels the run and waits until it has ended (its
`run_ended(interrupted)` published), as cancelling a run on the app's own loop did.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def engine_loop() -> asyncio.AbstractEventLoop:
    """The engine's loop, started on first use in a daemon thread (it lives as long as the process)."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="arena-engine", daemon=True).start()
        return _loop


async def on_engine_loop(make: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """Run `make()` on the engine loop and return its result (or raise its error) here.

    Cancelled here, the run is cancelled there and awaited until it has finished.
    """
    engine, here = engine_loop(), asyncio.get_running_loop()
    done: asyncio.Future[asyncio.Task[Any]] = here.create_future()
    started: list[asyncio.Task[Any]] = []

    def settle(task: asyncio.Task[Any]) -> None:
        if not done.done():
            done.set_result(task)

    def report(task: asyncio.Task[Any]) -> None:
        try:
            here.call_soon_threadsafe(settle, task)
        except RuntimeError:  # the awaiting loop is gone (the app exited): nobody is waiting
            pass

    async def body() -> Any:  # `make()` itself then fails inside the task, reported like any error
        return await make()

    def start() -> None:
        task = engine.create_task(body())
        task.add_done_callback(report)
        started.append(task)

    engine.call_soon_threadsafe(start)
    try:
        task = await asyncio.shield(done)
    except asyncio.CancelledError:
        engine.call_soon_threadsafe(lambda: started[0].cancel())  # runs after `start` (FIFO)
        await done
        raise
    return task.result()  # its result, its error, or CancelledError
