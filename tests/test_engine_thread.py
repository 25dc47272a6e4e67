"""Runs started from the app execute on the engine's own thread and loop (arena_tui.orchestration.engine_thread);
their events reach the app's bus on the app's loop, in order, and stopping a run waits for its end."""

from __future__ import annotations

import asyncio
import threading

import pytest

from arena_tui.orchestration.engine_thread import on_engine_loop
from arena_tui.spine.bus import EventBus, ThreadPublisher
from arena_tui.spine.events import ErrorEvent


def event(n: int) -> ErrorEvent:
    return ErrorEvent(run_id="r", t_ms=float(n), where="engine", message=f"e{n}")


async def test_events_published_on_the_engine_thread_arrive_on_the_bus_in_order() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    publisher = ThreadPublisher(bus, asyncio.get_running_loop())
    threads: set[str] = set()

    async def run() -> str:
        threads.add(threading.current_thread().name)
        for n in range(500):
            publisher.publish(event(n))
            if n % 50 == 0:
                await asyncio.sleep(0)  # bursts and pauses, as a run publishes
        return "done"

    assert await on_engine_loop(run) == "done"
    assert threads and threading.current_thread().name not in threads
    got: list[float] = []
    async with asyncio.timeout(10):
        while len(got) < 500:
            got += [e.t_ms for e in sub.drain()]
            await asyncio.sleep(0.01)
    assert got == [float(n) for n in range(500)]


async def test_an_engine_run_error_is_raised_to_the_caller() -> None:
    async def run() -> None:
        raise ValueError("no such turn")

    with pytest.raises(ValueError, match="no such turn"):
        await on_engine_loop(run)


async def test_cancelling_the_caller_stops_the_run_and_waits_for_its_last_event() -> None:
    """As a run on the app's loop did: the cancelled run publishes its end, and the caller's
    cancellation completes only after that, so the app's settle sees it."""
    bus = EventBus()
    sub = bus.subscribe()
    publisher = ThreadPublisher(bus, asyncio.get_running_loop())
    started = threading.Event()

    async def run() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            await asyncio.sleep(0.2)  # its shutdown takes a while
            publisher.publish(event(99))
            raise

    caller = asyncio.create_task(on_engine_loop(run))
    await asyncio.to_thread(started.wait, 10)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.sleep(0)  # the delivery was scheduled before the caller heard of the end
    assert [e.t_ms for e in sub.drain()] == [99.0]
